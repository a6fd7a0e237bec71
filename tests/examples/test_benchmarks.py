"""The benchmark scripts run (their timings are never asserted): a broken harness should
fail here, not on the day a GPU is lent to run it."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def test_device_comparison_runs_on_a_second_device(monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(BENCH))
    sys.modules.pop("devices", None)
    import devices  # noqa: PLC0415

    table = devices.main(["--device", "array_api_strict:device1", "--quick"])
    assert set(table) == {("tiny", "user"), ("tiny", "module")}
    assert all(tc > 0 and td > 0 for tc, td in table.values())
    assert "array_api_strict:device1" in capsys.readouterr().out


def test_the_hand_written_attention_computes_the_output_and_gradients_of_the_module(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))
    sys.modules.pop("attention", None)
    import attention  # noqa: PLC0415
    import numpy as np  # noqa: PLC0415

    from tinygrad_attn import Tensor  # noqa: PLC0415

    a = attention.make_inputs(2, 5, 8)
    ref = attention.mha_numpy(a, 2)
    mha = attention.module_class()(8, 2)
    for n, lin in zip("qkvo", (mha.q_proj, mha.k_proj, mha.v_proj, mha.out_proj)):
        lin.weight.data[...] = Tensor(a[f"W{n}"])  # (a tensor: PyTorch takes no array here)
        lin.bias.data[...] = Tensor(a[f"b{n}"])
    x = Tensor(a["x"], requires_grad=True)
    y = mha(x, is_causal=True)
    np.testing.assert_allclose(ref["y"], y.detach().numpy(), rtol=1e-5, atol=1e-6)
    y.backward(Tensor(a["gy"]))
    np.testing.assert_allclose(ref["x"], x.grad.detach().numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(ref["Wq"], mha.q_proj.weight.grad.detach().numpy(), rtol=1e-4, atol=1e-5)


# -- tga.compile's benchmark ---------------------------------------------------------------
@pytest.mark.slow
def test_the_compile_benchmark_runs_one_scenario(monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(BENCH))
    sys.modules.pop("compile", None)
    import compile as compile_bench  # noqa: PLC0415

    table = compile_bench.main(quick=True, only=("mha",))
    assert set(table["mha"]) == {"eager", "trace", "replay", "lines"} and all(v > 0 for v in table["mha"].values())
    assert "trace/eager" in capsys.readouterr().out


# -- the GPT step: ours and PyTorch's start from the same weights and the same loss -------
@pytest.mark.slow
def test_the_gpt_benchmark_compares_the_same_loss_with_pytorch(monkeypatch):
    """Its context and vocabulary are both 64, so (B, T, V) logits fit PyTorch's (N, C, d)
    layout as well: the step must say which axis holds the classes, as PyTorch's does."""
    pytest.importorskip("torch")
    monkeypatch.syspath_prepend(str(BENCH))
    sys.modules.pop("gpt", None)
    import gpt  # noqa: PLC0415

    ours, model, _ = gpt.setup(with_model=True)
    theirs, _, _ = gpt.torch_setup(gpt.torch_weights(model), with_model=True)
    for _ in range(2):  # the first loss, and the one after an AdamW update on each side
        assert float(ours().item()) == pytest.approx(float(theirs().item()), rel=1e-4)


@pytest.mark.slow
def test_the_gpt_benchmark_times_the_update_where_the_step_calls_it(monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(BENCH))
    sys.modules.pop("gpt", None)
    import gpt  # noqa: PLC0415

    # (what the helpers report, not how fast: no timing is compared with another or a bound)
    med = gpt.op_times(steps=2)
    assert {"AdamW update (in the step)", "AdamW update (again, alone)", "whole step"} <= med.keys()
    assert all(math.isfinite(v) and v >= 0 for v in med.values())
    floor = gpt.memory_floor(rounds=1)
    out = capsys.readouterr().out
    assert math.isfinite(floor) and "GB/s" in out and "AdamW update (in the step)" in out


# -- tinygrad's op tests: the classifier reads a reviewed list and refuses what is not on it
def _classify(tmp_path, monkeypatch, results: str, listed: str) -> int:
    (tmp_path / "results.tsv").write_text(results)
    (tmp_path / "classification.csv").write_text("id,category,reason\n" + listed)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(BENCH / "tinygrad_op_tests"))
    sys.modules.pop("classify", None)
    import classify  # noqa: PLC0415

    return classify.main()


def test_tinygrad_classifier_leaves_out_only_the_listed_tinygrad_tests(tmp_path, monkeypatch, capsys):
    results = "T::a\tpass\t\nT::b\tfail\tboom\nT::c\tfail\tint32\nT::d\tskip\t\n"
    listed = "T::b,ours,a bug of ours\nT::c,x-int32,asserts int32\n"
    assert _classify(tmp_path, monkeypatch, results, listed) == 0
    assert "passed 1 / (3 - 1) = 50.0%" in capsys.readouterr().out


def test_tinygrad_classifier_fails_loudly_on_an_unlisted_failure(tmp_path, monkeypatch, capsys):
    results = "T::a\tpass\t\nT::b\tfail\tnew failure\n"
    assert _classify(tmp_path, monkeypatch, results, "") == 1
    assert "T::b: new failure" in capsys.readouterr().err
    with pytest.raises(SystemExit, match="unknown category"):
        _classify(tmp_path, monkeypatch, results, "T::b,maybe,unsure\n")


@pytest.mark.slow  # (it times real runs: seconds, the full suite's)
def test_the_replay_cost_benchmark_runs(monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(BENCH))
    sys.modules.pop("replay", None)
    import replay  # noqa: PLC0415

    us = replay.one_op(rounds=3, inner=5)
    assert set(us) == {"numpy", "eager", "compiled", "guard alone"} and all(v > 0 for v in us.values())
    table = replay.mha(("tiny",), rounds=3)
    assert {"numpy", "eager", "compiled", "unfused"} <= set(table["tiny"])
    assert "eager / compiled" in capsys.readouterr().out


@pytest.mark.slow  # (it times real runs: seconds, the full suite's)
def test_the_replay_benchmarks_training_step_updates_as_the_hand_written_one(monkeypatch):
    """``replay.py --step``: the compiled step gives the hand-written NumPy step's weights after
    a few updates (its times mean something), and the timing runs."""
    monkeypatch.syspath_prepend(str(BENCH))
    sys.modules.pop("replay", None)
    import attention  # noqa: PLC0415
    import replay  # noqa: PLC0415

    monkeypatch.setattr(replay, "LR", 0.01)
    b, t, d, h = attention.SIZES["tiny"]
    a = attention.make_inputs(b, t, d)
    by_hand, compiled = replay.step_numpy(a, h), replay.step_compiled(a, h)
    for _ in range(3):
        by_hand()
        compiled()
    assert compiled.compiled.program is not None  # (replayed, not run eagerly)
    for n in attention.WEIGHTS:
        np.testing.assert_allclose(compiled.weights[n].detach().numpy(), by_hand.weights[n], rtol=1e-5, atol=1e-6)
    assert replay.training_step(("tiny",), rounds=2)["tiny"]["compiled"] > 0
