"""bench/intervals_bench.py's summary of interleaved rounds: each command's ratio is the median
of its rounds' ratios to the same side's plain count of the same round, so a load that slows one
round slows both the command and the plain count it is divided by."""

from __future__ import annotations

import importlib.util
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench" / "intervals_bench.py"


def load_bench():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("intervals_bench", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_ratios_are_medians_of_each_rounds_ratio_to_the_same_sides_plain_count() -> None:
    bench = load_bench()
    base = " [baseline]"
    plain_of = {"plain" + base: "plain" + base, "plain": "plain", "ci" + base: "plain" + base, "ci": "plain"}

    def one(plains: tuple[float, float], ci_base: tuple[float, float, int], ci: tuple[float, float, int]) -> dict:  # type: ignore[type-arg]
        return {"plain" + base: (*plains, 40), "plain": (*plains, 40), "ci" + base: ci_base, "ci": ci}

    # The second round ran under a load that doubled every time; the baseline's command costs 3x
    # its plain count in two rounds of three, this checkout's 2x (the best time over the best
    # plain time would say 3.33x and 2.22x, the median over the median 3.6x and 2.4x).
    rounds = [
        one((1.0, 0.5), (3.0, 1.5, 50), (2.0, 1.0, 60)),
        one((2.0, 1.0), (6.0, 3.0, 70), (4.0, 2.0, 60)),
        one((0.9, 0.45), (3.6, 1.8, 60), (2.4, 1.2, 55)),
    ]
    rows = bench.summarise(rounds, plain_of)
    best, ratio, cpu, cpu_ratio, peak, median, median_cpu = rows["ci [baseline]"]
    assert (best, cpu, peak, median, median_cpu) == (3.0, 1.5, 70, 3.6, 1.8)
    assert abs(ratio - 3.0) < 1e-12 and abs(cpu_ratio - 3.0) < 1e-12
    best, ratio, cpu, cpu_ratio, peak, median, median_cpu = rows["ci"]
    assert (best, cpu, peak, median, median_cpu) == (2.0, 1.0, 60, 2.4, 1.2)
    assert abs(ratio - 2.0) < 1e-12 and abs(cpu_ratio - 2.0) < 1e-12
    assert rows["plain"][1] == rows["plain [baseline]"][3] == 1.0
