"""Model files: a zip archive holding ``spanscore-model.json`` (format, version, kind, labels,
training settings) and the tagger's own weights (``model.crfsuite`` or ``model.pt``).

No pickle of spanscore objects is involved: the JSON says what the weights are, and a file from a
newer format version is refused with a message rather than misread. Files are written through a
temporary file in the same folder and ``os.replace``, so an interrupted training run never leaves
half a model behind.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from ... import __version__
from ...errors import InputError
from ...io.files import atomic_output
from .progress import Progress

MODEL_FORMAT = "spanscore-tagger"
MODEL_FORMAT_VERSION = 1
META_NAME = "spanscore-model.json"
KINDS = ("crf", "flair")


class Tagger(Protocol):
    """A trained tagger: labels for sentences of tokens."""

    kind: str
    meta: dict[str, Any]

    def predict(
        self, sentences: Sequence[Sequence[str]], progress: Progress | None = None
    ) -> list[list[str]]: ...


def write_model(path: str | Path, meta: Mapping[str, Any], members: Mapping[str, bytes | Path]) -> Path:
    """Write a model archive atomically; ``members`` maps names to bytes or to files to copy in."""
    full = {
        "format": MODEL_FORMAT,
        "format_version": MODEL_FORMAT_VERSION,
        "created_by": f"spanscore {__version__}",
        **meta,
    }
    target = Path(path)
    with atomic_output(target) as handle, zipfile.ZipFile(handle, "w") as zf:
        zf.writestr(META_NAME, json.dumps(full, indent=2, sort_keys=True), compress_type=zipfile.ZIP_DEFLATED)
        for name, value in members.items():
            if isinstance(value, Path):
                # Weights of neural models barely compress; storing them keeps saving fast.
                zf.write(value, name, compress_type=zipfile.ZIP_STORED)
            else:
                zf.writestr(name, value, compress_type=zipfile.ZIP_DEFLATED)
    return target


def read_meta(path: str | Path) -> dict[str, Any]:
    """The JSON header of a model file, checked for format and version."""
    name = str(path)
    try:
        with zipfile.ZipFile(path) as zf:
            raw = zf.read(META_NAME)
    except FileNotFoundError:
        raise InputError("no such model file", path=name) from None
    except IsADirectoryError:
        raise InputError("is a directory, not a model file", path=name) from None
    except (zipfile.BadZipFile, KeyError):
        raise InputError("not a spanscore model file (make one with spanscore train)", path=name) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", path=name) from None
    try:
        meta = json.loads(raw)
    except ValueError:
        raise InputError(f"{META_NAME} is not valid JSON", path=name) from None
    if not isinstance(meta, dict) or meta.get("format") != MODEL_FORMAT:
        raise InputError("not a spanscore model file (make one with spanscore train)", path=name)
    version = meta.get("format_version")
    if not isinstance(version, int) or version < 1:
        raise InputError(f"bad model format version {version!r}", path=name)
    if version > MODEL_FORMAT_VERSION:
        raise InputError(
            f"model format version {version} was written by a newer spanscore ({meta.get('created_by')});"
            f" this one reads version {MODEL_FORMAT_VERSION}: upgrade spanscore",
            path=name,
        )
    if meta.get("kind") not in KINDS:
        raise InputError(f"unknown tagger kind {meta.get('kind')!r}: expected one of {', '.join(KINDS)}", path=name)
    return meta


def read_member(path: str | Path, member: str) -> bytes:
    try:
        with zipfile.ZipFile(path) as zf:
            return zf.read(member)
    except KeyError:
        raise InputError(f"model file has no {member}: it is incomplete", path=str(path)) from None
