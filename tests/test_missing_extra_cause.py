"""An optional extra whose modules are installed but fail to import is named as such, with the
import's own error, not as missing: advice to install it would send the user the wrong way."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from spanscore.errors import MissingExtra, OptionError
from spanscore.runtime.optional import require

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"


def test_a_module_not_found_is_missing() -> None:
    err = MissingExtra.of(ModuleNotFoundError("No module named 'dask'", name="dask"), "--engine dask", "dask")
    assert str(err) == "--engine dask needs: pip install 'spanscore[dask]'"
    assert err.failure == ""


def test_an_installed_module_that_fails_to_import_is_named_with_its_error() -> None:
    exc = ImportError("cannot import name 'Client' from partially initialized module 'distributed'\n(most likely...)")
    err = MissingExtra.of(exc, "--engine dask", "dask")
    assert isinstance(err, OptionError)
    text = str(err)
    assert "\n" not in text
    assert "installed but fails to import" in text
    named = "ImportError: cannot import name 'Client' from partially initialized module 'distributed' (most likely...)"
    assert named in text
    assert "pip install --force-reinstall 'spanscore[dask]'" in text
    assert "needs: pip install" not in text


def test_a_long_import_error_is_cut() -> None:
    err = MissingExtra.of(ImportError("x" * 1000), "the review tool", "review")
    assert len(str(err)) < 400
    assert err.failure.endswith("...")


@pytest.mark.parametrize("failure", ["", "ImportError: boom"])
def test_the_error_pickles_with_its_cause(failure: str) -> None:
    err = MissingExtra("--engine dask", "dask", failure)
    back = pickle.loads(pickle.dumps(err))
    assert (back.what, back.extra, back.failure, str(back)) == (err.what, err.extra, err.failure, str(err))


def _broken_package(tmp_path: Path, name: str) -> Path:
    package = tmp_path / name
    package.mkdir()
    (package / "__init__.py").write_text(f"raise ImportError('this build of {name} is broken')\n")
    return tmp_path


def test_require_names_a_broken_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(_broken_package(tmp_path, "spanscore_broken_extra")))
    with pytest.raises(MissingExtra, match=r"installed but fails to import \(ImportError: this build of"):
        require("spanscore_broken_extra", what="a test", extra="test")
    with pytest.raises(MissingExtra, match=r"^a test needs: pip install 'spanscore\[test\]'$"):
        require("spanscore_no_such_module_here", what="a test", extra="test")


def test_the_command_line_names_a_broken_dask_in_one_line(tmp_path: Path) -> None:
    """``--engine dask`` with a ``distributed`` that raises as it is imported: exit 2, one line
    that names the import's error (the old message said to install the extra, which is there)."""
    fake = _broken_package(tmp_path, "distributed")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(fake), str(ROOT / "src")])}
    proc = subprocess.run(
        [sys.executable, "-m", "spanscore.cli.main", "evaluate", str(DATA / "small.gold.conll"),
         str(DATA / "small.pred.conll"), "--engine", "dask", "--json"],
        capture_output=True, text=True, env=env, timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "fails to import (ImportError: this build of distributed is broken)" in lines[0]
    assert "Traceback" not in proc.stderr and proc.stdout == ""
