"""The benchmark scripts run (their timings are never asserted): a broken harness should
fail here, not on the day a GPU is lent to run it."""

from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"


def test_device_comparison_runs_on_a_second_device(monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(BENCH))
    sys.modules.pop("devices", None)
    import devices  # noqa: PLC0415

    table = devices.main(["--device", "array_api_strict:device1", "--quick"])
    assert set(table) == {("tiny", "user"), ("tiny", "module")}
    assert all(tc > 0 and td > 0 for tc, td in table.values())
    assert "array_api_strict:device1" in capsys.readouterr().out
