"""PyTorch's classes against ours, name by name.

``tools/inventory.py`` compares functions and ``Tensor``; this file compares the other classes
that PyTorch programs touch: every public name of PyTorch's class (or object), the dunder
protocols it adds to ``object``'s, and the underscored names that user code overrides or calls
(``_apply``, ``_load_from_state_dict``, ``_modules``, ...) must exist here, or be listed in
:data:`OMITTED` with the reason it is left out. A name listed there that we have, or that
PyTorch no longer has, fails too, so the table stays true.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import pytest

import tinygrad_attn as tga

torch = pytest.importorskip("torch")


def _ctx(lib: Any) -> Any:
    """The ``ctx`` that a custom Function's ``forward`` receives."""
    seen = {}

    class Double(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            seen["ctx"] = ctx
            return x * 2

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g * 2

    Double.apply(lib.ones(2, requires_grad=True))
    return seen["ctx"]


def _dataset(lib: Any) -> Any:
    return lib.utils.data.TensorDataset(lib.zeros(4, 2), lib.arange(4))


def _sgd(lib: Any) -> Any:
    return lib.optim.SGD([lib.nn.Parameter(lib.zeros(2))], lr=0.1)


#: What is compared: the class, and where an object carries more than its class (attributes
#: made in ``__init__``, a ctx that is a graph node in PyTorch), an instance.
SUBJECTS: dict[str, Callable[[Any], Any]] = {
    "nn.Module": lambda lib: lib.nn.Module,
    "nn.Module()": lambda lib: lib.nn.Module(),
    "nn.Linear()": lambda lib: lib.nn.Linear(2, 3),
    "nn.Parameter": lambda lib: lib.nn.Parameter,  # (only what it adds to Tensor: see _names)
    "nn.Sequential": lambda lib: lib.nn.Sequential,
    "nn.ModuleList": lambda lib: lib.nn.ModuleList,
    "nn.ModuleDict": lambda lib: lib.nn.ModuleDict,
    "nn.ParameterList": lambda lib: lib.nn.ParameterList,
    "nn.ParameterDict": lambda lib: lib.nn.ParameterDict,
    "optim.Optimizer": lambda lib: lib.optim.Optimizer,
    "optim.SGD()": _sgd,
    "optim.lr_scheduler.LRScheduler": lambda lib: lib.optim.lr_scheduler.LRScheduler,
    "optim.lr_scheduler.StepLR()": lambda lib: lib.optim.lr_scheduler.StepLR(_sgd(lib), 2),
    "optim.lr_scheduler.ReduceLROnPlateau": lambda lib: lib.optim.lr_scheduler.ReduceLROnPlateau,
    "utils.data.Dataset": lambda lib: lib.utils.data.Dataset,
    "utils.data.TensorDataset()": _dataset,
    "utils.data.Subset()": lambda lib: lib.utils.data.Subset(_dataset(lib), [0, 2]),
    "utils.data.DataLoader()": lambda lib: lib.utils.data.DataLoader(_dataset(lib), batch_size=2),
    "utils.data.Sampler": lambda lib: lib.utils.data.Sampler,
    "utils.data.RandomSampler()": lambda lib: lib.utils.data.RandomSampler(_dataset(lib)),
    "autograd.Function": lambda lib: lib.autograd.Function,
    "autograd.Function ctx": _ctx,
    "Generator()": lambda lib: lib.Generator(),
    "Size()": lambda lib: lib.Size([2, 3]),
    "device()": lambda lib: lib.device("cpu"),
    "dtype": lambda lib: lib.float32,
    "finfo()": lambda lib: lib.finfo(lib.float32),
    "iinfo()": lambda lib: lib.iinfo(lib.int32),
    "distributions.Distribution": lambda lib: lib.distributions.Distribution,
    "distributions.Normal()": lambda lib: lib.distributions.Normal(lib.zeros(2), lib.ones(2)),
    "utils.hooks.RemovableHandle": lambda lib: importlib.import_module(f"{lib.__name__}.utils.hooks").RemovableHandle,
}

#: The underscored names that programs override or call; the rest are PyTorch's internals.
USER_PRIVATE = {
    # nn.Module: what subclasses override, and the registries code reads
    "_apply", "_get_name", "_save_to_state_dict", "_load_from_state_dict", "_version", "_modules",
    "_parameters", "_buffers", "_non_persistent_buffers_set", "_register_state_dict_hook",
    "_register_load_state_dict_pre_hook", "_call_impl", "_wrapped_call_impl", "_compiled_call_impl",
    "_named_members", "_get_backward_hooks", "_get_backward_pre_hooks", "_forward_hooks", "_forward_pre_hooks",
    "_backward_hooks", "_backward_pre_hooks", "_state_dict_hooks", "_state_dict_pre_hooks",
    "_load_state_dict_pre_hooks", "_load_state_dict_post_hooks", "_is_full_backward_hook",
    # optimizers and schedulers
    "_optimizer_step_pre_hooks", "_optimizer_step_post_hooks", "_last_lr", "_step_count", "_get_closed_form_lr",
    "_initial_step",
    # autograd.Function and its ctx
    "_forward_cls", "_backward_cls",
    # containers
    "_get_abs_string_index", "_key_to_attr",
}  # fmt: skip

#: Dunders that are how a class is built, not what a program uses.
IMPLEMENTATION_DUNDERS = {
    "__dict__", "__module__", "__weakref__", "__annotations__", "__slots__", "__orig_bases__", "__parameters__",
    "__class_getitem__", "__firstlineno__", "__static_attributes__", "__getattr__", "__setstate__",
    "__annotate_func__", "__annotations_cache__", "__abstractmethods__", "__protocol_attrs__",
    "__non_callable_proto_members__", "__callable_proto_members_only__",
}  # fmt: skip

_DEVICES = "XPU, MTIA and IPU devices are out of scope"
_GRAPHS = "CUDA graphs are out of scope"
_SCRIPT = "TorchScript is out of scope"
_CTX_ON_NODE = "in PyTorch ctx is the backward node; here that node is `y.grad_fn`, and ctx only the ctx"
_ON_CTX = "a ctx method: PyTorch's Function class inherits its ctx's class; ours are on the ctx (checked there)"
_NUMPY_DTYPE = "PyTorch's short name for the C++ scalar type; `dtype.name`, `dtype.char` and `tga.finfo` say the same"
_MODULE = {"ipu": _DEVICES, "xpu": _DEVICES, "mtia": _DEVICES}
_MODULE_INSTANCE = _MODULE
_OPTIMIZER_INSTANCE = {
    n: "made at the first registration of such a hook, as the module's"
    for n in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks")
}

#: The reviewed omissions: class -> {name: why it is left out}.
OMITTED: dict[str, dict[str, str]] = {
    "nn.Module": _MODULE,
    "nn.Module()": _MODULE_INSTANCE,
    "nn.Linear()": {
        **_MODULE_INSTANCE,
        "__constants__": _SCRIPT,
        "reset_parameters": "not yet: the layers draw their initial values in __init__ (nn/layers.py)",
    },
    "nn.Sequential": _MODULE,
    "nn.ModuleList": {**_MODULE, "_get_abs_string_index": "PyTorch's helper of its own indexing; ours is _key"},
    "nn.ModuleDict": _MODULE,
    "nn.ParameterList": {**_MODULE, "_get_abs_string_index": "PyTorch's helper of its own indexing; ours is _key"},
    "nn.ParameterDict": {
        **_MODULE,
        "_key_to_attr": "PyTorch's helper for keys that are no identifiers; ours registers every key as it is",
    },  # fmt: skip
    "optim.SGD()": _OPTIMIZER_INSTANCE,
    "autograd.Function": {
        **{
            n: _ON_CTX
            for n in (
                "dirty_tensors",
                "mark_dirty",
                "mark_non_differentiable",
                "materialize_grads",
                "needs_input_grad",
                "non_differentiable",
                "save_for_backward",
                "save_for_forward",
                "saved_for_forward",
                "saved_tensors",
                "saved_variables",
                "set_materialize_grads",
                "to_save",
                "mark_shared_storage",
                "maybe_clear_saved_tensors",
            )
        },
        **{
            n: _CTX_ON_NODE
            for n in ("metadata", "name", "next_functions", "register_hook", "register_prehook", "requires_grad")
        },
        "_backward_cls": "PyTorch's generated node class; ours is one class, CustomNode, for every Function",
        "generate_vmap_rule": "torch.func.vmap of a custom Function is out of scope",
        "vmap": "torch.func.vmap of a custom Function is out of scope",
        "boxed_grads_call": "compiled autograd (torch.compile of backward) is out of scope",
        "clear_saved_tensors_on_access": "compiled autograd (torch.compile of backward) is out of scope",
    },  # fmt: skip
    "autograd.Function ctx": {
        **{
            n: _CTX_ON_NODE
            for n in (
                "apply",
                "apply_boxed",
                "apply_jvp",
                "metadata",
                "name",
                "next_functions",
                "register_hook",
                "register_prehook",
                "requires_grad",
            )
        },
        "_forward_cls": "the Function class is `type(y.grad_fn)`'s `fcls` here",
        "mark_shared_storage": "removed from PyTorch's API (it raises there)",
        "maybe_clear_saved_tensors": "compiled autograd (torch.compile of backward) is out of scope",
        "saved_for_forward": "forward-mode AD (jvp) of custom Functions is out of scope",
    },  # fmt: skip
    "Generator()": {
        "get_offset": "the offset of CUDA's Philox generators; the CPU mt19937 generator has none",
        "set_offset": "the offset of CUDA's Philox generators; the CPU mt19937 generator has none",
        "clone_state": _GRAPHS,
        "graphsafe_get_state": _GRAPHS,
        "graphsafe_set_state": _GRAPHS,
    },
    "dtype": {n: _NUMPY_DTYPE for n in ("abbr",)},  # fmt: skip
    "utils.hooks.RemovableHandle": {"next_id": "PyTorch's counter of handle ids; ours is _next_id"},
}


def _names(key: str, theirs: Any) -> set[str]:
    """The names of PyTorch's ``theirs`` that a program may use."""
    names = set(dir(theirs))
    if key == "nn.Parameter":  # (Tensor's own names are tools/inventory.py's: here what Parameter adds)
        names -= set(dir(torch.Tensor))
    plain = set(dir(object))
    return {
        n
        for n in names
        if not n.startswith("_")
        or n in USER_PRIVATE
        or (n.startswith("__") and n.endswith("__") and n not in plain and n not in IMPLEMENTATION_DUNDERS)
    }


@pytest.mark.parametrize("key", sorted(SUBJECTS))
def test_every_name_of_pytorch_class_is_here_or_reviewed(key: str) -> None:
    make = SUBJECTS[key]
    theirs, ours = make(torch), make(tga)
    omitted = OMITTED.get(key, {})
    wanted = _names(key, theirs)
    missing = sorted(n for n in wanted if not hasattr(ours, n) and n not in omitted)
    assert not missing, f"{key}: PyTorch's names missing here (add them, or list them in OMITTED with why): {missing}"
    stale = sorted(n for n in omitted if hasattr(ours, n) or n not in wanted)
    assert not stale, f"{key}: OMITTED lists names we have, or PyTorch does not: {stale}"


def test_every_omission_gives_a_reason() -> None:
    assert set(OMITTED) <= set(SUBJECTS)
    for key, table in OMITTED.items():
        for name, why in table.items():
            assert isinstance(why, str) and len(why) > 20, (key, name)
