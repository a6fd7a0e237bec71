"""``tga.amp``: PyTorch's automatic mixed precision, ``autocast`` and ``GradScaler``.

- ``autocast(device_type, dtype=None, enabled=True)``: with ``enabled=False`` the block runs as
  written (the usual ``enabled=use_amp`` switch); on ``"cuda"`` without a usable CUDA device it
  warns and disables itself, as PyTorch's does. On the CPU an enabled block runs PyTorch's CPU
  autocast (``engine/autocast.py``: matrix products and convolutions in bfloat16, or the
  ``dtype`` given (float16), losses and factorizations in float32); bfloat16 needs ml_dtypes
  (``pip install tinygrad_attn[bfloat16]``). An enabled CUDA block is not implemented: it raises a
  ``NotImplementedError`` naming it when entered (convert the model instead: ``model.half()``).
- ``GradScaler``: PyTorch's loss scaling (scale the loss, unscale the gradients, skip a step
  whose gradients are not finite, grow or back off the scale), and a pass-through when disabled
  (on ``"cuda"`` without a usable CUDA device it warns and disables itself, as PyTorch's does).

>>> scaler = tga.amp.GradScaler("cuda", enabled=False)  # doctest: +SKIP
>>> scaler.scale(loss).backward(); scaler.step(opt); scaler.update()  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import types
from collections.abc import Iterable
from typing import Any

from ..engine import autocast as _cast
from ..engine.switches import active_tracer, no_grad
from ..engine.warn import warn as _user_warn
from ..tensors._tensor import Tensor
from .backend import is_available

__all__ = [
    "autocast", "GradScaler", "is_autocast_available", "is_autocast_enabled", "set_autocast_enabled",
    "get_autocast_dtype", "set_autocast_dtype", "is_autocast_cpu_enabled", "set_autocast_cpu_enabled",
    "get_autocast_cpu_dtype", "set_autocast_cpu_dtype", "get_autocast_gpu_dtype", "set_autocast_gpu_dtype",
    "is_autocast_cache_enabled", "set_autocast_cache_enabled", "clear_autocast_cache",
    "autocast_increment_nesting", "autocast_decrement_nesting", "is_autocast_ipu_enabled", "set_autocast_ipu_enabled",
    "get_autocast_ipu_dtype", "set_autocast_ipu_dtype", "is_autocast_xla_enabled", "set_autocast_xla_enabled",
    "get_autocast_xla_dtype", "set_autocast_xla_dtype",
]  # fmt: skip

_DEVICE_TYPES = ("cpu", "cuda")

# PyTorch's autocast state, per device type: the lower-precision dtype an enabled block would use
# (PyTorch's defaults), whether the weight cache is on and how deep autocast blocks nest. Only the
# CPU's runs enabled (engine/autocast.py's BLOCK holds its dtype while it does).
_DEVICE_STRINGS = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia",
                   "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")  # fmt: skip
_NO_AUTOCAST = ("mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "lazy", "vulkan", "meta")
_autocast_dtype: dict[str, Any] = {}
_autocast_state: dict[str, Any] = {"cache": True, "nesting": 0}


def _autocast_device(device_type: Any, what: str) -> str:
    if not isinstance(device_type, str):
        raise TypeError(f"{what}(): argument 'device_type' (position 1) must be str, not {type(device_type).__name__}")
    kind = device_type.split(":")[0]
    if kind not in _DEVICE_STRINGS:
        raise RuntimeError(
            f"Expected one of {', '.join(_DEVICE_STRINGS)} device type at start of device string: {device_type}"
        )
    return kind


def _bool_argument(value: Any, what: str, name: str, position: int) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{what}(): argument '{name}' (position {position}) must be bool, not {type(value).__name__}")
    return value


_CUDA: Any = object()  # (is_autocast_enabled() asks about CUDA; None is PyTorch's TypeError)


def is_autocast_enabled(device_type: str = _CUDA) -> bool:
    """Whether an autocast block is on for ``device_type`` (CUDA's when not given, as PyTorch's):
    only the CPU's ever is here."""
    if device_type is _CUDA:
        return False
    return _autocast_device(device_type, "is_autocast_enabled") == "cpu" and _cast.BLOCK[0] is not None


def set_autocast_enabled(*args: Any) -> None:
    """``set_autocast_enabled([device_type,] enabled)``: turning autocast off is accepted; turning it
    on raises the ``NotImplementedError`` of an enabled :class:`autocast` block."""
    if len(args) not in (1, 2):
        raise TypeError(f"set_autocast_enabled() takes 1 or 2 arguments ([device_type,] enabled), got {len(args)}")
    kind = "cuda" if len(args) == 1 else _autocast_device(args[0], "set_autocast_enabled")
    on = _bool_argument(args[-1], "set_autocast_enabled", "enabled", len(args))
    if kind == "cpu":
        _cast.BLOCK[0] = _cpu_block_dtype(get_autocast_dtype("cpu")) if on else None
    elif on:
        _refuse_enabled(kind)


def _cpu_block_dtype(dtype: Any) -> Any:
    """The dtype an enabled CPU block computes its lower-precision ops in (bfloat16 or float16, as
    PyTorch's CPU autocast takes); refused where this library cannot hold it (bfloat16 without ml_dtypes)."""
    from ..tensors import dtypes  # noqa: PLC0415

    if dtype is not dtypes.float16 and dtype is not dtypes.bfloat16:
        raise RuntimeError(f"autocast: the CPU autocast dtype must be torch.bfloat16 or torch.float16, got {dtype}")
    return dtypes.torch_dtype(dtype)  # (bfloat16 without ml_dtypes: its TypeError naming the extra)


def _refuse_enabled(kind: str) -> None:
    raise NotImplementedError(
        f"autocast: running ops in lower precision (device_type={kind!r}) is not part of "
        "tinygrad_attn; use enabled=False, or convert the model and inputs (model.half(), x.half())"
    )


def get_autocast_dtype(device_type: str) -> Any:
    """The dtype an autocast block on ``device_type`` computes in: PyTorch's default (bfloat16 on the
    CPU, float16 on CUDA) or what :func:`set_autocast_dtype` set."""
    from ..tensors import dtypes  # noqa: PLC0415 - (dtypes imports the runtime)

    kind = _autocast_device(device_type, "get_autocast_dtype")
    if kind in _NO_AUTOCAST:
        raise RuntimeError("unsupported scalarType")
    if kind in _autocast_dtype:
        return _autocast_dtype[kind]
    return dtypes.bfloat16 if kind in ("cpu", "xla", "hpu") else dtypes.float16


def set_autocast_dtype(device_type: str, dtype: Any) -> None:
    """Set the dtype an autocast block on ``device_type`` would compute in."""
    from ..tensors import dtypes  # noqa: PLC0415

    kind = _autocast_device(device_type, "set_autocast_dtype")
    if not isinstance(dtype, dtypes.dtype):
        raise TypeError(
            f"set_autocast_dtype(): argument 'dtype' (position 2) must be torch.dtype, not {type(dtype).__name__}"
        )
    _autocast_dtype[kind] = dtype


def _deprecated(old: str, new: str) -> None:
    _user_warn(f"torch.{old} is deprecated. Please use torch.{new} instead.", DeprecationWarning)


def is_autocast_cpu_enabled() -> bool:
    """``is_autocast_enabled("cpu")``, PyTorch's older spelling (with its DeprecationWarning)."""
    _deprecated("is_autocast_cpu_enabled()", "is_autocast_enabled('cpu')")
    return is_autocast_enabled("cpu")


def set_autocast_cpu_enabled(enabled: bool) -> None:
    """``set_autocast_enabled("cpu", enabled)``, PyTorch's older spelling."""
    _deprecated("set_autocast_cpu_enabled(enabled)", "set_autocast_enabled('cpu', enabled)")
    set_autocast_enabled("cpu", enabled)


def get_autocast_cpu_dtype() -> Any:
    """``get_autocast_dtype("cpu")``, PyTorch's older spelling."""
    _deprecated("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')")
    return get_autocast_dtype("cpu")


def set_autocast_cpu_dtype(dtype: Any) -> None:
    """``set_autocast_dtype("cpu", dtype)``, PyTorch's older spelling."""
    _deprecated("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)")
    set_autocast_dtype("cpu", dtype)


def get_autocast_gpu_dtype() -> Any:
    """``get_autocast_dtype("cuda")``, PyTorch's older spelling."""
    _deprecated("get_autocast_gpu_dtype()", "get_autocast_dtype('cuda')")
    return get_autocast_dtype("cuda")


def set_autocast_gpu_dtype(dtype: Any) -> None:
    """``set_autocast_dtype("cuda", dtype)``, PyTorch's older spelling."""
    _deprecated("set_autocast_gpu_dtype(dtype)", "set_autocast_dtype('cuda', dtype)")
    set_autocast_dtype("cuda", dtype)


def is_autocast_ipu_enabled() -> bool:
    """``is_autocast_enabled("ipu")``, PyTorch's older spelling."""
    _deprecated("is_autocast_ipu_enabled()", "is_autocast_enabled('ipu')")
    return is_autocast_enabled("ipu")


def set_autocast_ipu_enabled(enabled: bool) -> None:
    """``set_autocast_enabled("ipu", enabled)``, PyTorch's older spelling."""
    _deprecated("set_autocast_ipu_enabled(enabled)", "set_autocast_enabled('ipu', enabled)")
    set_autocast_enabled("ipu", enabled)


def get_autocast_ipu_dtype() -> Any:
    """``get_autocast_dtype("ipu")``, PyTorch's older spelling."""
    _deprecated("get_autocast_ipu_dtype()", "get_autocast_dtype('ipu')")
    return get_autocast_dtype("ipu")


def set_autocast_ipu_dtype(dtype: Any) -> None:
    """``set_autocast_dtype("ipu", dtype)``, PyTorch's older spelling."""
    _deprecated("set_autocast_ipu_dtype(dtype)", "set_autocast_dtype('ipu', dtype)")
    set_autocast_dtype("ipu", dtype)


def is_autocast_xla_enabled() -> bool:
    """``is_autocast_enabled("xla")``, PyTorch's older spelling."""
    _deprecated("is_autocast_xla_enabled()", "is_autocast_enabled('xla')")
    return is_autocast_enabled("xla")


def set_autocast_xla_enabled(enabled: bool) -> None:
    """``set_autocast_enabled("xla", enabled)``, PyTorch's older spelling."""
    _deprecated("set_autocast_xla_enabled(enabled)", "set_autocast_enabled('xla', enabled)")
    set_autocast_enabled("xla", enabled)


def get_autocast_xla_dtype() -> Any:
    """``get_autocast_dtype("xla")``, PyTorch's older spelling."""
    _deprecated("get_autocast_xla_dtype()", "get_autocast_dtype('xla')")
    return get_autocast_dtype("xla")


def set_autocast_xla_dtype(dtype: Any) -> None:
    """``set_autocast_dtype("xla", dtype)``, PyTorch's older spelling."""
    _deprecated("set_autocast_xla_dtype(dtype)", "set_autocast_dtype('xla', dtype)")
    set_autocast_dtype("xla", dtype)


def is_autocast_cache_enabled() -> bool:
    """Whether autocast keeps its lower-precision copies of weights within a block."""
    return _autocast_state["cache"]


def set_autocast_cache_enabled(enabled: bool) -> None:
    """Turn autocast's weight cache on or off (nothing is cached here: the flag is kept and read back)."""
    _autocast_state["cache"] = _bool_argument(enabled, "set_autocast_cache_enabled", "enabled", 1)


def clear_autocast_cache() -> None:
    """Drop autocast's cached weight copies (there are none here)."""


def autocast_increment_nesting() -> int:
    """One autocast block deeper: returns the new depth, as PyTorch's."""
    _autocast_state["nesting"] += 1
    return _autocast_state["nesting"]


def autocast_decrement_nesting() -> int:
    """One autocast block shallower: returns the new depth (PyTorch's goes below 0 as well)."""
    _autocast_state["nesting"] -= 1
    return _autocast_state["nesting"]


def is_autocast_available(device_type: str) -> bool:
    """Whether ``autocast`` takes ``device_type`` (it then runs disabled only: see the module)."""
    return device_type in _DEVICE_TYPES


class autocast(contextlib.ContextDecorator):  # noqa: N801 - PyTorch's name
    """Mixed precision inside a block: PyTorch's CPU autocast, and the disabled form on CUDA (see the module)."""

    def __init__(self, device_type: str, dtype: Any = None, enabled: bool = True, cache_enabled: bool | None = None):
        if not isinstance(device_type, str):
            raise ValueError(f"autocast: expected device_type of type str, but got: {type(device_type)}")
        kind = device_type.split(":")[0]
        if kind not in _DEVICE_TYPES:
            raise RuntimeError(f"autocast: device_type {device_type!r} is not supported; expected 'cpu' or 'cuda'")
        if enabled and kind == "cuda" and not is_available("cuda"):
            _user_warn("User provided device_type of 'cuda', but CUDA is not available. Disabling")
            enabled = False
        self.device_type, self._enabled = kind, bool(enabled)
        self.fast_dtype = get_autocast_dtype(kind) if dtype is None else dtype
        if self._enabled and kind == "cpu" and self.fast_dtype.name not in ("bfloat16", "float16"):
            _user_warn("In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
                       "CPU Autocast only supports dtypes of torch.bfloat16, torch.float16 currently.")  # fmt: skip
            self._enabled = False
        self._cache_enabled = is_autocast_cache_enabled() if cache_enabled is None else bool(cache_enabled)

    def __enter__(self) -> autocast:
        cpu = self.device_type == "cpu"
        if self._enabled and not cpu:
            _refuse_enabled(self.device_type)
        block = _cpu_block_dtype(self.fast_dtype) if self._enabled else None
        # (PyTorch's bookkeeping of a block: its dtype and cache flag while it runs, one level deeper)
        self._outer = (get_autocast_dtype(self.device_type), is_autocast_cache_enabled(), _cast.BLOCK[0])
        set_autocast_dtype(self.device_type, self.fast_dtype)
        _autocast_state["cache"] = self._cache_enabled
        if cpu:  # (enabled=False inside an enabled block turns it off until it ends)
            _cast.BLOCK[0] = block
        autocast_increment_nesting()
        return self

    def __exit__(self, *exc: object) -> None:
        autocast_decrement_nesting()
        set_autocast_dtype(self.device_type, self._outer[0])
        _autocast_state["cache"] = self._outer[1]
        if self.device_type == "cpu":
            _cast.BLOCK[0] = self._outer[2]
        return None


def _each_tensor(outputs: Any) -> Iterable[Tensor]:
    if isinstance(outputs, Tensor):
        yield outputs
    elif isinstance(outputs, (list, tuple)):
        for o in outputs:
            yield from _each_tensor(o)


class GradScaler:
    """PyTorch's gradient scaler for float16 training (see the module)."""

    def __init__(self, device: str = "cuda", init_scale: float = 2.0**16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True) -> None:  # fmt: skip
        if enabled and str(device).startswith("cuda") and not is_available("cuda"):
            _user_warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.")
            enabled = False
        if growth_factor <= 1.0 or not 0.0 < backoff_factor < 1.0:
            raise ValueError(
                f"GradScaler: growth_factor must be > 1 and backoff_factor in (0, 1), got {growth_factor}, {backoff_factor}"
            )
        self._enabled = bool(enabled)
        self._scale = float(init_scale)
        self._growth_factor, self._backoff_factor = float(growth_factor), float(backoff_factor)
        self._growth_interval, self._growth_tracker = int(growth_interval), 0
        self._found_inf: dict[int, bool] = {}  # per optimizer (by id) unscaled since the last update

    def is_enabled(self) -> bool:
        return self._enabled

    def scale(self, outputs: Any) -> Any:
        """``outputs`` (a tensor or nested lists/tuples of them) times the scale."""
        if not self._enabled:
            return outputs
        if (tracer := active_tracer()) is not None:
            # (the scale, the finite check and update() are Python decisions and state a replayed
            # program would not make again: a compiled step using a scaler runs eagerly)
            tracer.python_effect("GradScaler.scale")
        if isinstance(outputs, Tensor):
            return outputs * self._scale
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        raise ValueError(f"GradScaler.scale: outputs must be a Tensor or an iterable of Tensors, got {type(outputs)}")

    def unscale_(self, optimizer: Any) -> None:
        """Divide the gradients of ``optimizer``'s parameters by the scale, in place, and note
        whether any is not finite."""
        if not self._enabled:
            return
        if id(optimizer) in self._found_inf:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if (tracer := active_tracer()) is not None:
            tracer.python_effect("GradScaler.unscale_")
        found = False
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    p.grad.mul_(1.0 / self._scale)
                    found = found or not bool(p.grad.isfinite().all())
        self._found_inf[id(optimizer)] = found

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """``optimizer.step()`` on unscaled gradients, skipped where they are not finite."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if id(optimizer) not in self._found_inf:
            self.unscale_(optimizer)
        return None if self._found_inf[id(optimizer)] else optimizer.step(*args, **kwargs)

    def update(self, new_scale: Any = None) -> None:
        """Back the scale off after a step with non-finite gradients; grow it after
        ``growth_interval`` finite ones (or set it to ``new_scale``)."""
        if not self._enabled:
            return
        if (tracer := active_tracer()) is not None:
            tracer.python_effect("GradScaler.update")
        if new_scale is not None:
            self._scale = float(new_scale)
        elif any(self._found_inf.values()):
            self._scale *= self._backoff_factor
            self._growth_tracker = 0
        elif self._found_inf:
            self._growth_tracker += 1
            if self._growth_tracker == self._growth_interval:
                self._scale *= self._growth_factor
                self._growth_tracker = 0
        self._found_inf.clear()

    def get_scale(self) -> float:
        return self._scale if self._enabled else 1.0

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = int(new_interval)

    def state_dict(self) -> dict[str, Any]:
        """PyTorch's keys; empty when disabled, as PyTorch's."""
        if not self._enabled:
            return {}
        return {"scale": self._scale, "growth_factor": self._growth_factor, "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval, "_growth_tracker": self._growth_tracker}  # fmt: skip

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        if not self._enabled:
            return
        if not state_dict:
            raise RuntimeError("GradScaler.load_state_dict: the state dict is empty (saved from a disabled scaler)")
        self._scale = float(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])


class _CudaAutocast(autocast):
    """``torch.cuda.amp.autocast``: :class:`autocast` on ``"cuda"``."""

    def __init__(self, enabled: bool = True, dtype: Any = None, cache_enabled: bool = True) -> None:
        super().__init__("cuda", dtype, enabled, cache_enabled)


# ``torch.cuda.amp``, PyTorch's older path to the same two (tga.cuda.amp, importable as tinygrad_attn.cuda.amp)
cuda_amp = types.ModuleType("tinygrad_attn.cuda.amp", "``torch.cuda.amp``: autocast on CUDA and GradScaler (tga.amp).")
cuda_amp.autocast, cuda_amp.GradScaler = _CudaAutocast, GradScaler
