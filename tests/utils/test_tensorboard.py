"""``tga.utils.tensorboard.SummaryWriter`` against PyTorch's: both write event files, which
TensorBoard's own reader reads back; the tags, steps and values must be the same."""

from __future__ import annotations

import numpy as np
import pytest

import tinygrad_attn as tga

pytest.importorskip("tensorboard")
torch = pytest.importorskip("torch")
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402
from torch.utils.tensorboard import SummaryWriter as TorchWriter  # noqa: E402

from tinygrad_attn.utils.tensorboard import SummaryWriter  # noqa: E402


def _log(writer_cls, lib, folder, new_style):
    rng = np.random.default_rng(0)
    with writer_cls(str(folder)) as w:
        for step in range(5):
            loss = lib.tensor(rng.normal(), dtype=lib.float64)
            w.add_scalar("Loss/train", loss, step, walltime=100.0 + step, new_style=new_style)
            w.add_scalar("lr", 0.1 / (step + 1), step, walltime=100.0 + step, new_style=new_style)
        w.add_scalar("plain", np.float32(2.5), 7, walltime=200.0, new_style=new_style)
        w.add_text("note", "hello tensorboard", 3, walltime=201.0)
    acc = EventAccumulator(str(folder))
    acc.Reload()
    return acc


@pytest.mark.parametrize("new_style", [False, True])
def test_scalars_and_text_read_back_as_pytorchs(tmp_path, new_style):
    ours = _log(SummaryWriter, tga, tmp_path / "ours", new_style)
    theirs = _log(TorchWriter, torch, tmp_path / "theirs", new_style)
    assert ours.Tags()["scalars"] == theirs.Tags()["scalars"]
    assert sorted(ours.Tags()["tensors"]) == sorted(theirs.Tags()["tensors"])
    for tag in theirs.Tags()["scalars"]:
        got = [(e.step, e.wall_time, e.value) for e in ours.Scalars(tag)]
        want = [(e.step, e.wall_time, e.value) for e in theirs.Scalars(tag)]
        assert got == want, tag
    for tag in theirs.Tags()["tensors"]:
        got = [(e.step, e.tensor_proto.SerializeToString()) for e in ours.Tensors(tag)]
        want = [(e.step, e.tensor_proto.SerializeToString()) for e in theirs.Tensors(tag)]
        assert got == want, tag


def test_scalars_of_several_elements_and_other_summaries_are_refused(tmp_path):
    w = SummaryWriter(str(tmp_path))
    with pytest.raises(AssertionError, match="add_scalar.*one element.*\\(2,\\)"):
        w.add_scalar("x", tga.ones(2), 0)
    with pytest.raises(AssertionError):  # PyTorch's class for the same call
        TorchWriter(str(tmp_path / "t")).add_scalar("x", torch.ones(2), 0)
    with pytest.raises(NotImplementedError, match="add_histogram"):
        w.add_histogram("h", tga.ones(3), 0)
    w.close()


def test_default_log_dir_is_runs_date_host_comment(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    w = SummaryWriter(comment="_lr0.1")
    t = TorchWriter(comment="_lr0.1")
    assert w.get_logdir().startswith("runs/") and w.get_logdir().endswith("_lr0.1")
    assert w.get_logdir().split("_")[-2] == t.get_logdir().split("_")[-2]  # the host's name
    w.close()
    t.close()
