"""Engines: one path from a source to counts, whatever runs the chunks.

A source (``io.sources``) plans parts and reads one part into spans; ``PartCounter`` reads
and counts a part (``stages.parts.count_part``); an engine maps it over the plan and hands the
results back in plan order, and ``run`` folds them. ``LocalEngine`` (``engines.local``) counts in
this process or in forked worker processes; ``engines.dask_engine.DaskEngine`` on a Dask cluster
(the optional extra ``dask``, imported only when that engine runs). This package is their face:
``make_engine`` is the one place an engine is chosen by name.
"""

from __future__ import annotations

import importlib

from ..errors import OptionError
from .local import ENGINES, Engine, LocalEngine, Numbered, PartCounter, Progress, SinkEngine, default_jobs, run


def make_engine(name: str = "local", *, jobs: int = 1, scheduler: str | None = None, workers: int = 2) -> Engine:
    """An engine by name: ``local`` (``jobs`` processes) or ``dask`` (``scheduler``, or a local
    cluster of ``workers`` processes)."""
    if name == "local":
        return LocalEngine(jobs)
    if name == "dask":
        module = importlib.import_module("spanscore.engines.dask_engine")
        engine: Engine = module.DaskEngine(scheduler=scheduler, n_workers=workers)
        return engine
    raise OptionError(f"unknown engine {name!r}: use one of {', '.join(ENGINES)}")


__all__ = [
    "ENGINES",
    "Engine",
    "LocalEngine",
    "Numbered",
    "PartCounter",
    "Progress",
    "SinkEngine",
    "default_jobs",
    "make_engine",
    "run",
]
