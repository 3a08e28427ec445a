"""Opening a model file of either kind: above the kinds, so that neither imports the other."""

from __future__ import annotations

from pathlib import Path

from .model import Tagger, read_meta


def load_model(path: str | Path) -> Tagger:
    """Open a model file written by ``spanscore train``."""
    meta = read_meta(path)
    if meta["kind"] == "crf":
        from .crf import CrfTagger  # each kind's heavy dependency only where it is used

        return CrfTagger.from_file(path, meta)
    from .flair_tagger import FlairTagger

    return FlairTagger.from_file(path, meta)
