"""--by reads document fields as the reader reads the file: past a header line (HIPE), in the
file's encoding (CoNLL-2002's latin-1), past a byte order mark."""

from __future__ import annotations

import re
from pathlib import Path

import spanscore

HIPE = Path(__file__).parent / "data" / "real" / "datasets" / "hipe2022-ajmc" / "HIPE-2022-v2.1-ajmc-dev-en.tsv"


def test_hipe_documents_grouped_by_their_id_past_the_header() -> None:
    ids = re.findall(r"^# hipe2022:document_id = (\S+)$", HIPE.read_text(encoding="utf-8"), flags=re.M)
    assert len(ids) == 4  # independent of spanscore: the file's own comment lines
    reading = spanscore.Reading(header=True, label_column=1)
    report = spanscore.evaluate(reference=HIPE, predicted=HIPE, reading=reading, by="hipe2022:document_id")
    assert report.breakdown is not None
    assert [g["value"] for g in report.breakdown["groups"]] == ids


def test_a_latin1_file_with_a_bom_and_fields_grouped_in_its_encoding(tmp_path: Path) -> None:
    text = "# source = diario\nLa DA B-LOC\nCoruña NC I-LOC\n\n# source = agencia\nEFE NC B-ORG\n\n"
    path = tmp_path / "esp.conll"
    path.write_bytes(text.encode("latin-1"))
    reading = spanscore.Reading(encoding="latin-1")
    report = spanscore.evaluate(reference=path, predicted=path, reading=reading, by="source")
    assert report.breakdown is not None
    assert [g["value"] for g in report.breakdown["groups"]] == ["diario", "agencia"]
    bom = tmp_path / "bom.conll"
    bom.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    report = spanscore.evaluate(reference=bom, predicted=bom, by="source")
    assert report.breakdown is not None
    assert [g["value"] for g in report.breakdown["groups"]] == ["diario", "agencia"]
