"""Label Studio's JSON export: a list of tasks, each with ``data`` (the text), ``annotations`` and
``predictions`` whose ``result`` items of type ``labels`` are mentions.

What each version writes is read: the JSON export of Label Studio 1.x (a list of tasks); a file
holding one task (an object, as cloud storage and Label Studio before 1.0 keep them); and a folder
of such files (the ``completions`` folder of a Label Studio 0.x project, where a task's
annotations are its ``completions``). A JSON-MIN or CSV export has no offsets of every annotation
with its annotator: it is refused, naming the JSON export.

One side is read: ``source="annotations"`` takes each task's first annotation that was not
cancelled (or the first by ``annotator``, matched against ``completed_by``: a user id, or the id
or e-mail of a ``completed_by`` object; an annotator who annotated no task is refused, naming
those present); ``source="predictions"`` takes the prediction of ``model_version`` (which may be
left out when the file holds one version only). A task without
such an annotation or prediction is left out and counted ("tasks without annotation" or "...
prediction"), and so is the other side's copy of it; so are annotations and predictions passed
over, other result types (relations, choices...) and, with ``from_name``, labels of other tags
(a ``from_name`` that no labels result has is refused, naming the tags present).
An annotation or prediction without a ``result`` list is an error (every export has one). A
result with several labels is one mention per label. The document id is the task's ``id`` (its
file's name in a folder, its position in the list, when it has none); the text is
``data[text_key]``.

Where a result repeats its ``text``, it must be the text at its offsets. Label Studio counted
offsets in UTF-16 code units before it counted characters: a result whose text matches only that
reading is read so, and listed in ``ReadNotes.misaligned``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from ...errors import InputError, OptionError, shorten
from ..document import Document, Span
from ..files import atomic_output
from ._base import Ids, ReadNotes, check_span, json_id, load_json, make_doc, name_list, no_surrogates, writable

SOURCES = ("annotations", "predictions")
_TASKS = "a JSON list of tasks (Label Studio's JSON export)"


def read(
    path: str | Path,
    *,
    source: str = "annotations",
    annotator: str | int | None = None,
    model_version: str | int | None = None,
    text_key: str = "text",
    from_name: str | None = None,
) -> tuple[list[Document], ReadNotes]:
    name = str(path)
    if not isinstance(source, str) or source not in SOURCES:
        raise OptionError(f"label-studio: source must be annotations or predictions, not {source!r}")
    for key, value in (("text_key", text_key), ("from_name", from_name)):
        if value is not None and not isinstance(value, str):
            raise OptionError(f"label-studio: {key} is the name of a field or tag (text), not {value!r}")
    if isinstance(model_version, int) and not isinstance(model_version, bool):
        model_version = str(model_version)  # the file's versions are compared as text
    if model_version is not None and not isinstance(model_version, str):
        raise OptionError(f"label-studio: model_version is a version's name (text), not {model_version!r}")
    if source == "annotations" and model_version is not None:
        raise OptionError("label-studio: model_version chooses among predictions: pass source='predictions'")
    if source == "predictions" and annotator is not None:
        raise OptionError("label-studio: annotator chooses among annotations: leave it out with source='predictions'")
    tasks = list(_tasks(Path(path)))
    if source == "predictions":
        model_version = _version([task for _, _, task, _ in tasks], model_version, name)
    notes = ReadNotes()
    ids = Ids()
    docs = []
    if annotator is not None:
        _check_annotator(annotator, [task for _, _, task, _ in tasks], name)
    for file, k, task, default_id in tasks:
        where = f"task {k + 1}"
        if isinstance(task, dict) and "id" in task:
            where += f" (id {task['id']!r})" if len(repr(task["id"])) <= 40 else f" (id {shorten(str(task['id']), 40)})"

        def fail(what: str, where: str = where, file: str = file) -> InputError:
            return InputError(f"{where}: {what}", path=file)

        if not isinstance(task, dict):
            raise fail("a task must be a JSON object")
        doc_id = task.get("id", default_id)
        if not isinstance(doc_id, str | int) or isinstance(doc_id, bool):
            raise fail("the task id must be a string or an integer")
        data = task.get("data")
        text = data.get(text_key) if isinstance(data, dict) else None
        if not isinstance(text, str):
            if data is None and _json_min(task):
                raise fail(
                    "this is Label Studio's JSON-MIN export, which keeps one annotation of each task without its"
                    " annotator: export the project as JSON"
                )
            keys = ", ".join(map(repr, data)) if isinstance(data, dict) else "none"
            raise fail(f"data has no text {text_key!r} (its keys: {keys}; choose one with text_key=)")
        no_surrogates(text, "the text", fail)
        if source == "annotations":
            results = _annotation(task, annotator, notes, fail)
        else:
            results = _prediction(task, model_version, notes, fail)
        if results is None:
            notes.left_out.add(str(doc_id))
            continue
        ids.add(str(doc_id), where, fail)
        spans = _spans(results, text, from_name, notes, fail, {"file": file, "id": str(doc_id)})
        docs.append(make_doc(str(doc_id), text, spans))
    others = [key[len("labels of ") :] for key in notes.skipped if key.startswith("labels of ")]
    if from_name is not None and others and not any(d.spans for d in docs):
        raise OptionError(
            f"{name}: from_name={from_name!r} names no labels tag of the file; its labels come from {name_list(others)}"
        )
    return docs, notes


def _tasks(path: Path) -> Iterator[tuple[str, int, Any, str | int]]:
    """(file, index, task, default id) of each task: of the list, the one task of a file, or each
    file of a folder (a Label Studio 0.x ``completions`` folder), in the order of their names'
    numbers."""
    if path.is_dir():
        files = [p for p in path.iterdir() if p.suffix.lower() == ".json" and not p.name.startswith(".")]
        if not files:
            raise InputError(
                "no .json files: expected Label Studio's JSON export, or a folder of task files", path=str(path)
            )
        files.sort(key=lambda p: (0, int(p.stem), "") if p.stem.isdigit() else (1, 0, p.name))
        k = 0
        for file in files:
            for _, _, task, _ in _tasks_of(file, "one task (a JSON object) per file"):
                yield str(file), k, task, file.stem
                k += 1
        return
    yield from _tasks_of(path, _TASKS)


def _tasks_of(path: Path, expected: str) -> Iterator[tuple[str, int, Any, str | int]]:
    data = load_json(path, expected)
    if isinstance(data, dict) and ("data" in data or "completions" in data or "annotations" in data):
        data = [data]  # one task: a task file of Label Studio 0.x or of cloud storage
    if not isinstance(data, list):
        raise InputError(f"expected {expected}", path=str(path))
    for k, task in enumerate(data):
        yield str(path), k, task, k


def _json_min(task: dict[str, Any]) -> bool:
    return "annotation_id" in task or "annotator" in task


def _version(tasks: list[Any], wanted: str | None, name: str) -> str:
    present: dict[str, None] = {}
    for task in tasks:
        for prediction in (task.get("predictions") or []) if isinstance(task, dict) else []:
            if isinstance(prediction, dict):
                present[_model(prediction)] = None
    versions = ", ".join(map(repr, present)) or "none"
    if wanted is None:
        if len(present) == 1:
            return next(iter(present))
        if not present:
            raise OptionError(f"{name}: the file holds no predictions (read its annotations: source=annotations)")
        raise OptionError(f"{name}: predictions of several model versions ({versions}): choose one with model_version=")
    if wanted not in present:
        raise OptionError(f"{name}: no predictions of model version {wanted!r} (the file has {versions})")
    return wanted


def _model(prediction: dict[str, Any]) -> str:
    version = prediction.get("model_version")
    return "" if version is None else str(version)


def _annotation(task: dict[str, Any], annotator: str | int | None, notes: ReadNotes, fail: Any) -> list[Any] | None:
    annotations = task.get("annotations", task.get("completions")) or []  # "completions" before Label Studio 1.0
    if not isinstance(annotations, list):
        raise fail("annotations must be a list")
    chosen = None
    for annotation in annotations:
        if not isinstance(annotation, dict):
            raise fail("an annotation must be a JSON object")
        if annotation.get("was_cancelled"):
            notes.skip("cancelled annotations")
        elif chosen is None and (annotator is None or _by(annotation, annotator)):
            chosen = annotation
        else:
            notes.skip("other annotations")
    if chosen is None:
        notes.skip("tasks without annotation")
        return None
    return _results(chosen, "annotation", annotations.index(chosen), fail)


def _check_annotator(annotator: Any, tasks: list[Any], name: str) -> None:
    """An ``annotator`` that annotated no task is refused, naming the annotators the file has:
    read as it is, every task would be left out and nothing scored without saying why."""
    if not isinstance(annotator, str | int) or isinstance(annotator, bool):
        raise OptionError(f"label-studio: annotator is a user id or e-mail, not {annotator!r}")
    present: dict[str, None] = {}
    for task in tasks:
        annotations = task.get("annotations", task.get("completions")) if isinstance(task, dict) else None
        for annotation in annotations if isinstance(annotations, list) else []:
            if not isinstance(annotation, dict) or annotation.get("was_cancelled"):
                continue
            if _by(annotation, annotator):
                return
            for who in _who(annotation):
                present[who] = None
    have = f"those present: {name_list(present)}" if present else "no annotation names its annotator (completed_by)"
    tasks_ = f"{len(tasks)} task" + ("s" if len(tasks) != 1 else "")
    raise OptionError(f"{name}: annotator={annotator!r} annotated none of the file's {tasks_}; {have}")


def _who(annotation: dict[str, Any]) -> list[str]:
    """How ``annotator=`` can name an annotation's annotator: the user id, and the e-mail."""
    who = annotation.get("completed_by")
    names = [who.get("id"), who.get("email")] if isinstance(who, dict) else [who]
    return [str(n) for n in names if n is not None]


def _by(annotation: dict[str, Any], annotator: str | int) -> bool:
    return str(annotator) in _who(annotation)


def _prediction(task: dict[str, Any], version: str | None, notes: ReadNotes, fail: Any) -> list[Any] | None:
    predictions = task.get("predictions") or []
    if not isinstance(predictions, list):
        raise fail("predictions must be a list")
    chosen = [p for p in predictions if isinstance(p, dict) and _model(p) == version]
    notes.skip("other predictions", len(predictions) - len(chosen))
    if not chosen:
        notes.skip("tasks without prediction")
        return None
    if len(chosen) > 1:
        raise fail(f"{len(chosen)} predictions of model version {version!r}: which one is meant is ambiguous")
    return _results(chosen[0], "prediction", predictions.index(chosen[0]), fail)


def _results(side: dict[str, Any], what: str, k: int, fail: Any) -> list[Any]:
    if "result" not in side:
        # Read as no mentions, it would score a document whose mentions are somewhere else.
        keys = ", ".join(map(repr, side)) or "none"
        raise fail(f'{what} {k + 1} has no "result" (its keys: {shorten(keys, 80)}): not a Label Studio export?')
    results = side["result"]
    if not isinstance(results, list):
        raise fail("result must be a list")
    return results


def _spans(
    results: list[Any], text: str, from_name: str | None, notes: ReadNotes, fail: Any, where: dict[str, str]
) -> list[Span]:
    spans: list[Span] = []
    for k, item in enumerate(results):
        if not isinstance(item, dict):
            raise fail(f"result {k} must be a JSON object")
        kind = item.get("type")
        if kind != "labels":
            notes.skip("relations" if kind == "relation" else f"{kind} results")
            continue
        if from_name is not None and item.get("from_name") != from_name:
            notes.skip(f"labels of {item.get('from_name')}")
            continue
        what = f"result {k}" + (f" (id {shorten(str(item['id']), 20)})" if "id" in item else "")
        value = item.get("value")
        if not isinstance(value, dict) or not isinstance(value.get("labels"), list):
            raise fail(f'{what}: value must be an object with "start", "end" and "labels"')
        start, end = value.get("start"), value.get("end")
        shown = value.get("text")
        if isinstance(shown, str) and type(start) is int and type(end) is int and text[start:end] != shown:
            counted = _from_utf16(text, start, end)
            if counted is None or text[counted[0] : counted[1]] != shown:
                raise fail(
                    f"{what}: its text {shorten(shown, 40)} is not the text at {start}..{end}"
                    f" ({shorten(text[start:end], 40)})"
                )
            notes.misaligned.append(
                {
                    **where,
                    "start": counted[0],
                    "end": counted[1],
                    "what": f"{what}: offsets {start}..{end} count UTF-16 code units: read as characters"
                    f" {counted[0]}..{counted[1]}",
                }
            )
            start, end = counted
        for label in value["labels"]:
            spans.append(check_span(start, end, label, text, what, fail))
    return spans


def _from_utf16(text: str, start: int, end: int) -> tuple[int, int] | None:
    """The character offsets of UTF-16 code unit offsets, where both fall between characters."""
    if text.isascii():
        return None
    at: dict[int, int] = {}
    unit = 0
    for index, char in enumerate(text):
        at[unit] = index
        unit += 2 if ord(char) > 0xFFFF else 1
    at[unit] = len(text)
    if start in at and end in at and (at[start], at[end]) != (start, end):
        return at[start], at[end]
    return None


def write(
    docs: Iterable[Document],
    path: str | Path,
    *,
    source: str = "annotations",
    model_version: str = "spanscore",
    annotator: str | int | None = None,
    text_key: str = "text",
    from_name: str = "label",
    to_name: str = "text",
    drop_fragments: bool = False,
) -> None:
    """A JSON list of tasks, each document's mentions as one annotation (``completed_by``:
    ``annotator``) or one prediction of ``model_version``; offsets count characters."""
    if source not in SOURCES:
        raise OptionError(f"label-studio: source must be annotations or predictions, not {source!r}")
    checked = writable(docs, "label-studio", drop_fragments=drop_fragments)
    tasks = []
    for doc in checked:
        result = [
            {
                "id": f"s{k + 1}",
                "from_name": from_name,
                "to_name": to_name,
                "type": "labels",
                "value": {"start": start, "end": end, "text": doc.text[start:end], "labels": [label]},
            }
            for k, (start, end, label) in enumerate(doc.spans)
        ]
        task: dict[str, Any] = {
            "id": json_id(doc.id),
            "data": {text_key: doc.text},
            "annotations": [],
            "predictions": [],
        }
        if source == "annotations":
            annotation: dict[str, Any] = {"result": result, "was_cancelled": False, "ground_truth": False}
            if annotator is not None:
                annotation["completed_by"] = annotator
            task["annotations"].append(annotation)
        else:
            task["predictions"].append({"model_version": model_version, "result": result})
        tasks.append(task)
    with atomic_output(path) as handle:
        handle.write(json.dumps(tasks, ensure_ascii=False, indent=1).encode("utf-8") + b"\n")
