"""spanscore transform: the BTC @-mention correction and type edits, byte for byte."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from spanscore.cli.main import cli
from spanscore.errors import InputError, OptionError
from spanscore.io.files import atomic_output
from spanscore.io.reading import Reading
from spanscore.programs.transform import transform_bytes, transform_file

SPLITS = ("train.txt", "dev.txt", "test.txt")


def uncorrect(data: bytes) -> tuple[bytes, int]:
    """Undo the BTC correction: the I-X right after an ``@`` tagged B-X goes back to B-X."""
    lines = data.split(b"\n")
    undone = 0
    for k in range(1, len(lines)):
        prev, line = lines[k - 1].split(b"\t"), lines[k].split(b"\t")
        at_b = len(prev) == 2 and prev[0] == b"@" and prev[1].startswith(b"B-")
        if at_b and len(line) == 2 and line[1] == b"I-" + prev[1][2:]:
            lines[k] = line[0] + b"\t" + prev[1]
            undone += 1
    return b"\n".join(lines), undone


@pytest.mark.parametrize("name", SPLITS)
def test_btc_is_already_corrected(btc: Path, name: str) -> None:
    data = (btc / name).read_bytes()
    result = transform_bytes(data, merge_at_mentions=True)
    assert result.merged == 0
    assert result.data == data


@pytest.mark.parametrize("name", SPLITS)
def test_btc_round_trip_through_the_cli(btc: Path, tmp_path: Path, name: str) -> None:
    original = (btc / name).read_bytes()
    broken, undone = uncorrect(original)
    assert undone > 500 and broken != original
    src, out = tmp_path / f"uncorrected-{name}", tmp_path / f"restored-{name}"
    src.write_bytes(broken)
    res = CliRunner().invoke(cli, ["transform", str(src), "-o", str(out), "--merge-at-mentions"])
    assert res.exit_code == 0, res.output
    assert f"merged {undone} @-mentions" in res.output
    assert out.read_bytes() == original
    # Running it again changes nothing.
    res = CliRunner().invoke(cli, ["transform", str(out), "-o", str(out), "--merge-at-mentions"])
    assert res.exit_code == 0 and out.read_bytes() == original


def test_other_bytes_are_kept() -> None:
    # BOM, CRLF, comments, -DOCSTART-, a middle column and a missing final newline.
    data = (
        "\ufeff-DOCSTART- -X- O\r\n\r\n# id = 1\r\n@  NN   B-PER\r\nbob  NNP  B-PER\r\nsays VBZ O\r\n\r\n"
        "@ NN B-ORG\r\nacme NNP I-ORG\r\n\r\n@ NN B-LOC\r\nparis NNP B-PER"
    ).encode()
    result = transform_bytes(data, merge_at_mentions=True)
    assert result.merged == 1 and result.changed == 1
    assert result.data == data.replace(b"bob  NNP  B-PER", b"bob  NNP  I-PER")


def test_merge_needs_the_same_type_and_sentence() -> None:
    data = b"@\tB-PER\n\nbob\tB-PER\n\n@\tB-PER\nacme\tB-ORG\n\nx\tO\n@\tI-PER\nbob\tB-PER\n"
    assert transform_bytes(data, merge_at_mentions=True).data == data


def test_type_edits() -> None:
    data = b"a\tB-PER\nb\tI-PER\nc\tB-ORG\nd\tB-LOC\ne\tO\n"
    renamed = transform_bytes(data, type_map={"ORG": "PER"})
    assert renamed.data == b"a\tB-PER\nb\tI-PER\nc\tB-PER\nd\tB-LOC\ne\tO\n"
    assert renamed.renamed == 1
    removed = transform_bytes(data, remove_types=["PER"])
    assert removed.data == b"a\tO\nb\tO\nc\tB-ORG\nd\tB-LOC\ne\tO\n"
    assert removed.removed == 2
    kept = transform_bytes(data, keep_types=["LOC"])
    assert kept.data == b"a\tO\nb\tO\nc\tO\nd\tB-LOC\ne\tO\n"
    dropped = transform_bytes(data, type_map={"LOC": "O"})
    assert dropped.data == b"a\tB-PER\nb\tI-PER\nc\tB-ORG\nd\tO\ne\tO\n"


def test_a_rename_never_joins_touching_mentions() -> None:
    # IOB1: I-A I-B are two mentions; renaming both to C needs a B- to keep them apart.
    data = b"x I-A\ny I-B\nz O\n"
    out = transform_bytes(data, type_map={"A": "C", "B": "C"}, reading=Reading(labels="IOB1")).data
    assert out == b"x I-C\ny B-C\nz O\n"


def test_cli_type_options(tmp_path: Path) -> None:
    src = tmp_path / "in.txt"
    src.write_bytes(b"a\tB-PER\nb\tB-ORG\n\nc\tB-LOC\n")
    out = tmp_path / "out.txt"
    res = CliRunner().invoke(
        cli, ["transform", str(src), "-o", str(out), "--type-map", "ORG=GROUP", "--remove-types", "LOC"]
    )
    assert res.exit_code == 0, res.output
    assert out.read_bytes() == b"a\tB-PER\nb\tB-GROUP\n\nc\tO\n"
    res = CliRunner().invoke(cli, ["transform", str(src), "-o", "-", "--keep-types", "PER"])
    assert res.exit_code == 0 and res.stdout_bytes == b"a\tB-PER\nb\tO\n\nc\tO\n"


def test_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="one column"):
        transform_bytes(b"a\nb\n", merge_at_mentions=True)
    with pytest.raises(OptionError, match="BIO"):
        transform_bytes(b"a\tS-PER\n", merge_at_mentions=True, reading=Reading(labels="BIOES"))
    with pytest.raises(InputError, match="unknown label"):
        transform_bytes(b"a\tPER\n", merge_at_mentions=True)
    with pytest.raises(InputError, match="no such file"):
        transform_file(tmp_path / "missing.txt", tmp_path / "out.txt", merge_at_mentions=True)
    res = CliRunner().invoke(cli, ["transform", str(tmp_path / "x"), "-o", str(tmp_path / "y")])
    assert res.exit_code == 2 and "nothing to do" in res.output


def test_atomic_output_leaves_nothing_half_written(tmp_path: Path) -> None:
    target = tmp_path / "model.bin"
    target.write_bytes(b"old")
    with pytest.raises(KeyboardInterrupt), atomic_output(target) as handle:
        handle.write(b"new but unfinished")
        raise KeyboardInterrupt
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["model.bin"]
