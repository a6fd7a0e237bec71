"""PyTorch's ``torch.utils.tensorboard``: a ``SummaryWriter`` of scalars and text.

The events are written through the ``tensorboard`` package's own event-file writer (as
PyTorch's are), so TensorBoard reads them as it reads PyTorch's; without that package the
import fails as PyTorch's does. Scripts mostly log losses:

>>> from tinygrad_attn.utils.tensorboard import SummaryWriter  # doctest: +SKIP
>>> with SummaryWriter("runs/demo") as w:  # doctest: +SKIP
...     w.add_scalar("Loss/train", loss, step)
"""

from __future__ import annotations

import os
import socket
import time
from datetime import datetime
from typing import Any

try:
    from tensorboard.compat.proto import event_pb2, summary_pb2, tensor_pb2, tensor_shape_pb2
    from tensorboard.summary.writer.event_file_writer import EventFileWriter
except ImportError as e:  # PyTorch's module needs the same package
    raise ImportError("TensorBoard logging requires TensorBoard version 1.15 or above (pip install tensorboard)") from e

__all__ = ["SummaryWriter"]


def _number(value: Any, what: str) -> float:
    """A logged value as a Python float: a number, or a one-element tensor or array."""
    if hasattr(value, "item"):
        if getattr(value, "numel", lambda: getattr(value, "size", 1))() != 1:  # PyTorch asserts it
            raise AssertionError(
                f"SummaryWriter.{what}: a scalar must have one element, got shape {tuple(value.shape)}"
            )
        value = value.item()
    return float(value)


class SummaryWriter:
    """Writes events for TensorBoard under ``log_dir`` (default ``runs/<date>_<host><comment>``)."""

    def __init__(self, log_dir: str | None = None, comment: str = "", purge_step: int | None = None,
                 max_queue: int = 10, flush_secs: int = 120, filename_suffix: str = "") -> None:  # fmt: skip
        if not log_dir:
            stamp = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", f"{stamp}_{socket.gethostname()}{comment}")
        self.log_dir = str(log_dir)
        self.purge_step = purge_step
        self._writer = EventFileWriter(self.log_dir, max_queue, flush_secs, filename_suffix)
        if purge_step is not None:  # TensorBoard drops the events at or after this step
            self._add(event_pb2.Event(step=purge_step, session_log=event_pb2.SessionLog(status=1)), None)

    def get_logdir(self) -> str:
        return self.log_dir

    def _add(self, event: Any, walltime: float | None) -> None:
        event.wall_time = time.time() if walltime is None else walltime
        self._writer.add_event(event)

    def _summary(self, value: Any, global_step: int | None, walltime: float | None) -> None:
        event = event_pb2.Event(summary=summary_pb2.Summary(value=[value]))
        if global_step is not None:
            event.step = int(global_step)
        self._add(event, walltime)

    def add_scalar(self, tag: str, scalar_value: Any, global_step: int | None = None, walltime: float | None = None,
                   new_style: bool = False, double_precision: bool = False) -> None:  # fmt: skip
        """One scalar (a number or a one-element tensor) at ``global_step``."""
        x = _number(scalar_value, "add_scalar")
        if not new_style:
            value = summary_pb2.Summary.Value(tag=tag, simple_value=x)
        else:  # the tensor field, with the scalars plugin named, as PyTorch writes it
            meta = summary_pb2.SummaryMetadata(
                plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="scalars")
            )
            dtype = "DT_DOUBLE" if double_precision else "DT_FLOAT"
            tensor = tensor_pb2.TensorProto(dtype=dtype)
            (tensor.double_val if double_precision else tensor.float_val).append(x)
            value = summary_pb2.Summary.Value(tag=tag, tensor=tensor, metadata=meta)
        self._summary(value, global_step, walltime)

    def add_scalars(self, main_tag: str, tag_scalar_dict: dict, global_step: int | None = None,
                    walltime: float | None = None) -> None:  # fmt: skip
        """Several scalars under ``main_tag``: one run folder each, as PyTorch writes them."""
        walltime = time.time() if walltime is None else walltime
        subs = self.__dict__.setdefault("_subwriters", {})
        for tag, v in tag_scalar_dict.items():
            folder = os.path.join(self.log_dir, f"{main_tag}_{tag}".replace("/", "_"))
            if folder not in subs:
                subs[folder] = SummaryWriter(folder)
            subs[folder].add_scalar(main_tag, v, global_step, walltime)

    def add_text(self, tag: str, text_string: str, global_step: int | None = None,
                 walltime: float | None = None) -> None:  # fmt: skip
        """A string for TensorBoard's text tab."""
        meta = summary_pb2.SummaryMetadata(plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="text"))
        shape = tensor_shape_pb2.TensorShapeProto(dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=1)])
        tensor = tensor_pb2.TensorProto(dtype="DT_STRING", string_val=[text_string.encode()], tensor_shape=shape)
        self._summary(summary_pb2.Summary.Value(tag=tag + "/text_summary", metadata=meta, tensor=tensor), global_step,
                      walltime)  # fmt: skip

    def __getattr__(self, name: str) -> Any:
        if name.startswith("add_"):  # images, histograms, graphs, embeddings ...: not written here
            raise NotImplementedError(f"SummaryWriter.{name} is not available in tinygrad_attn (add_scalar, "
                                      "add_scalars and add_text are)")  # fmt: skip
        raise AttributeError(f"'SummaryWriter' object has no attribute {name!r}")

    def flush(self) -> None:
        self._writer.flush()
        for w in self.__dict__.get("_subwriters", {}).values():
            w.flush()

    def close(self) -> None:
        self._writer.close()
        for w in self.__dict__.get("_subwriters", {}).values():
            w.close()

    def __enter__(self) -> SummaryWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
