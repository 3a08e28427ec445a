"""Progress reports from long-running library code: the library calls back, the CLI draws bars."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class ProgressEvent:
    """``done`` of ``total`` units of one stage; ``total`` is None when it is not known."""

    stage: str  # stable key: "data", "features", "train", "predict", "evaluate", "report"
    done: int
    total: int | None
    description: str  # what a progress bar shows
    info: str = ""  # the latest figures (loss, dev F1...), for display only


Progress = Callable[[ProgressEvent], None]


def notify(
    progress: Progress | None, stage: str, done: int, total: int | None, description: str, info: str = ""
) -> None:
    if progress is not None:
        progress(ProgressEvent(stage, done, total, description, info))
