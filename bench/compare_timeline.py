#!/usr/bin/env python3
"""``bench/report_timeline.py``'s wall timeline of one ``spanscore compare`` run, with the spans of
``compare``'s own steps too: the side-by-side pass, each system's report finished, each system's
state out of the joint histogram, the paired tests (families made and queued, each batch scored,
this thread waiting on a block) and the JSON (a script, not a test).

    python bench/compare_timeline.py [--out FILE.tsv] [--all] [--baseline SRC] -- compare GOLD A B --json
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType

sys.path.insert(0, str(Path(__file__).resolve().parent))

import report_timeline as rt


def _patch_significance(m: ModuleType) -> None:
    rt._wrap(m, "compare_histograms", "paired tests")
    rt._wrap(m, "_queue_batch", "families made, blocks queued")
    rt._wrap(m, "_compare_batch", "a batch scored")
    rt._wrap(m._Blocks, "result", "a block's result (waits or draws)")
    rt._wrap(m._Block, "run", "draw a block")


def _patch_api(m: ModuleType) -> None:
    rt._wrap(m, "compare", "the library's compare")
    rt._wrap(m, "_finished", "a system's report finished")
    rt._wrap(m, "_keep_state", "each system's state")
    rt._wrap(m, "_compared_groups", "compared groups")


rt.PATCHES.update(
    {
        "spanscore.analysis.significance": _patch_significance,
        "spanscore.api": _patch_api,
        "spanscore.engines.paired": lambda m: rt._wrap(m, "run_paired", "side-by-side pass"),
        "spanscore.analysis.buckets": lambda m: (
            rt._wrap(m, "run_grouped", "side-by-side pass (groups)"),
            rt._wrap(m, "compare_groupings", "groupings compared"),
        ),
        "spanscore.comparison": lambda m: rt._wrap(m.Comparison, "to_dict", "the comparison as a dict"),
        "spanscore.cli.compare": lambda m: None,
    }
)
rt.TIMED_IMPORTS |= {
    "spanscore.cli.compare",
    "spanscore.analysis.significance",
    "spanscore.comparison",
    "spanscore.analysis.buckets",
    "spanscore.engines.paired",
}
rt.__file__ = __file__  # the child runs this script, with these patches

if __name__ == "__main__":
    rt.main()
