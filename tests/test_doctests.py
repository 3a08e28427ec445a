"""The examples in the public API's docstrings run, and give what they say."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = (
    "spanscore.api",
    "spanscore.stages.scores",
    "spanscore.io.reading",
    "spanscore.errors",
    "spanscore",
    "spanscore.analysis.significance",
    "spanscore.analysis.breakdown",
    "spanscore.analysis.llm_classes",
    "spanscore.stages.scoring",
    "spanscore.comparison",
    "spanscore.programs.samples",
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.IGNORE_EXCEPTION_DETAIL)
    assert result.failed == 0


def test_there_are_examples() -> None:
    found = sum(doctest.testmod(importlib.import_module(n)).attempted for n in MODULES)
    assert found >= 5
