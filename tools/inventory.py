"""PyTorch's own inventories of names, each marked present, missing or out of scope here.

Six inventories are read from the installed PyTorch (the oracle, never a dependency of
the package):

- ``op_db``: the names of PyTorch's OpInfo database (``torch.testing._internal.
  common_methods_invocations.op_db``): each entry's ``name`` (``linalg.det``,
  ``nn.functional.relu``, ``special.i0e``, ...) and its aliases' names;
- ``Tensor``: the public members of ``dir(torch.Tensor)``;
- ``nn``: the classes of ``torch.nn``;
- ``functional``: the public functions of ``torch.nn.functional``;
- ``linalg``: the public functions of ``torch.linalg``;
- ``torch``: the public names of ``dir(torch)`` itself (functions, classes, dtypes, constants,
  submodules).

A name is *present* when the library has it under the same spelling (``tga.X``,
``tga.Tensor.X``, ``tga.nn.X``, ``tga.nn.functional.X``, ``tga.linalg.X``, ``tga.X``), *out of
scope* when a rule of :data:`OUT_OF_SCOPE` names the reason (sparse and quantized
tensors, complex numbers, storage, named tensors, ...), else *missing*. Every missing
name must be listed, with a reason, in ``tools/inventory_missing.txt`` (reviewed by
hand): ``tests/test_inventory.py`` fails when a gap appears that is not listed there,
so none appears silently.

    python tools/inventory.py                  # write tools/inventory.md, print the counts
    python tools/inventory.py --missing        # print the missing names not in the reviewed list
    python tools/inventory.py --prune          # drop the listed names that are present now
"""

from __future__ import annotations

import inspect
import re
import sys
import types
import unittest
from collections.abc import Iterable
from pathlib import Path

HERE = Path(__file__).resolve().parent
TABLE = HERE / "inventory.md"
MISSING_FILE = HERE / "inventory_missing.txt"
INVENTORIES = ("op_db", "Tensor", "nn", "functional", "linalg", "torch")

#: (inventory or "*", regular expression matching the whole name, reason): the first rule that
#: matches puts the name out of scope.
OUT_OF_SCOPE: list[tuple[str, str, str]] = [
    (
        "*",
        r".*sparse.*|.*_csr.*|.*_csc.*|.*_bsr.*|.*_bsc.*|coalesce|is_coalesced|_?indices|_?values|crow_indices|"
        r"col_indices|ccol_indices|row_indices|dense_dim|_?to_dense|to_dense|smm|sspaddmm|hspmm|_nnz|"
        r"sparse_mask|sparse_resize_.*|nnz",
        "sparse tensors",
    ),
    (
        "*",
        r".*quantiz.*|q_.*|int_repr|qscheme|.*qint.*|.*fake_quant.*|.*per_channel.*|.*_quantized_.*",
        "quantized tensors",
    ),
    (
        "*",
        r"complex|real|imag|conj|conj_physical.*|resolve_conj|resolve_neg|is_conj|is_neg|view_as_real|"
        r"view_as_complex|polar|is_complex|adjoint|.*_complex.*|cfloat|cdouble|chalf|_neg_view|_conj.*",
        "complex numbers",
    ),
    (
        "*",
        r".*storage.*|set_|data_ptr|is_shared|share_memory_|pin_memory|is_pinned|record_stream|"
        r"new_tensor_from_storage|_make_subclass|untyped.*|nbytes|itemsize|element_size|module_load|"
        r"dim_order|is_set_to|_?base|_version|__torch_.*|as_subclass",
        "storage, memory layout and subclassing",
    ),
    ("*", r"names|refine_names|rename_?|align_to|align_as|has_names|is_named", "named tensors"),
    ("*", r"fft\..*|special\..*|stft|istft|.*_window|signal\..*", "torch.fft, torch.special and signal windows"),
    (
        "*",
        r"(is_|to_)?(cuda|xpu|mps|ipu|hpu|mtia|mkldnn|vulkan|maia|xla|ort|meta)|.*cudnn.*|.*miopen.*|is_inference|"
        r".*nested.*|.*functorch.*|to_padded_tensor",
        "other devices, backends and nested tensors",
    ),
    ("op_db", r"masked\..*", "torch.masked (masked-tensor prototype)"),
    (
        "*",
        r"as_strided.*|stride|empty_strided|new_empty_strided|empty_permuted|const_data_ptr",
        "strides and memory layout",
    ),
    ("Tensor", r"lstsq|solve|symeig|eig|reinforce|volatile", "removed from PyTorch (the attribute raises or is inert)"),
    ("*", r".*Distributed.*|DataParallel|SyncBatchNorm|.*parallel.*|.*_shard.*|.*_dtensor.*", "distributed"),
    (
        "op_db",
        r".*_copy|jiterator_.*|_native_.*|_segment_reduce|_refs\..*|_upsample.*|_chunk_cat|_softmax_.*|"
        r"_unsafe.*|_batch_norm_.*|_efficientzerotensor|_foreach_.*|_fused_.*|_scaled_.*|_to_copy|"
        r"_safe_softmax|ops\..*|torch\..*|_.*",
        "PyTorch-internal test entries (copies, jiterator, private ops)",
    ),
    (
        "op_db",
        r"normal\..*|bernoulli|multinomial|.*rand.*|"
        r"uniform|cauchy|exponential|geometric|log_normal",
        "random-draw entries (the draws differ by design)",
    ),
    ("nn", r".*Quant.*|.*quant.*|Transformer.*Quant.*", "quantized tensors"),
    # -- dir(torch): what the torch module holds besides the functions users call
    (
        "torch",
        r"os|sys|math|builtins|ctypes|functools|glob|importlib|inspect|platform|textwrap|threading|types|warnings|"
        r"torch|TYPE_CHECKING",
        "a Python module (or the package itself) that torch's namespace re-exports",
    ),
    (
        "torch",
        r".*Storage.*|from_file",
        "storage, memory layout and subclassing",
    ),
    (
        "torch",
        r"bfloat16|BFloat16Tensor|float8_.*|float4_.*|complex32|u?int[1-7]|bits?.*",
        "a dtype NumPy lacks (bfloat16, float8, float4, sub-byte integers, bit packs)",
    ),
    (
        "torch",
        r"cdouble|cfloat|chalf|polar|view_as_(real|complex)(_copy)?|conj_physical_",
        "complex numbers",
    ),
    (
        "torch",
        r"AliasDb|AnyType|Argument|ArgumentSpec|AwaitType|Block|BoolType|BufferDict|CallStack|Capsule|ClassType|Code|"
        r"CompilationUnit|CompleteArgumentSpec|ComplexType|ConcreteModuleType.*|DeepCopyMemoTable|DeviceObjType|"
        r"DictType|EnumType|ErrorReport|ExecutionPlan|FileCheck|FloatType|FunctionSchema|Future|FutureType|Gradient|"
        r"Graph|GraphExecutorState|IODescriptor|InferredType|IntType|InterfaceType|JITException|ListType|"
        r"LiteScriptModule|LockingLogger|LoggerBase|ModuleDict|Node|NoneType|NoopLogger|NumberType|OperatorInfo|"
        r"OptionalType|ParameterDict|PyObjectType|PyTorchFile(Reader|Writer)|RRefType|Script.*|StaticModule|"
        r"StreamObjType|StringType|Sym(Bool|Int)Type|TensorType|TracingState|TupleType|Type|UnionType|Use|Value|"
        r"AggregationType|AVG|SUM|ThroughputBenchmark|Benchmark(Config|ExecutionStats)|"
        r"(De)?SerializationStorageContext|classes|cpp|fork|wait|futures|import_ir_module.*|parse_ir|parse_schema|"
        r"parse_type_comment|merge_type_from_type_comment|unify_type_list|FatalError",
        "TorchScript and JIT internals",
    ),
    (
        "torch",
        r"DispatchKey|DispatchKeySet|ExcludeDispatchKeyGuard|DisableTorchFunction.*|Tag|PRIVATE_OPS|library|"
        r"overrides|classproperty|get_file_path|prepare_multiprocessing_environment|"
        r"profiler_allow_cudagraph_cupti_lazy_reinit_cuda12|thread_safe_generator|"
        r"compiled_with_cxx11_abi|USE_GLOBAL_DEPS|USE_RTLD_GLOBAL_WITH_LIBTORCH|has_(lapack|mkl|openmp|spectral)|"
        r"version|torch_version|package|monitor|hub|multiprocessing|ao",
        "PyTorch's dispatcher, build configuration and tooling (no tensor is computed)",
    ),
    (
        "torch",
        r"Sym(Bool|Float|Int)|sym_.*|export|compiler|cond|while_loop",
        "symbolic shapes, torch.export and control-flow operators of the compiler stack",
    ),
    (
        "torch",
        r".*autocast.*",
        "autocast internals (tga.autocast and tga.amp hold the public surface)",
    ),
    (
        "torch",
        r"cudnn_.*|miopen_.*|mkldnn_.*|fbgemm_.*|xpu|mps|mtia|is_vulkan_available|Stream|Event|AcceleratorError|"
        r"OutOfMemoryError|(get|set)_num_interop_threads|init_num_threads|set_flush_denormal|get_device_module|"
        r"batch_norm_(backward_elemt|backward_reduce|elemt|gather_stats|gather_stats_with_counts|stats|update_stats)",
        "other devices and backends' kernels (cuDNN, MIOpen, oneDNN, FBGEMM, SyncBatchNorm's CUDA kernels)",
    ),
    (
        "torch",
        r"jagged|dsmm|hsmm|saddmm|spmm|segment_reduce|resize_as_sparse_|.*_indices_copy|indices_copy|values_copy|"
        r"dequantize|choose_qparams_optimized|qscheme|per_(tensor|channel)_.*|quint.*|masked",
        "sparse, nested and quantized tensors",
    ),
    (
        "torch",
        r"as_strided.*|empty_permuted|legacy_contiguous_format",
        "strides and memory layout",
    ),
    (
        "torch",
        r"to_dlpack|from_dlpack",
        "DLPack exchange between frameworks' device memory",
    ),
    ("torch", r"fft|stft|istft", "torch.fft, torch.special and signal windows"),
    (
        "functional",
        r"scaled_mm|scaled_grouped_mm",
        "float8 matmuls with scaling recipes and swizzles: their operands are float8 tensors (float8_e4m3fn, "
        "float8_e5m2, ...), dtypes NumPy lacks and issue 31 leaves out",
    ),
    (
        "functional",
        r"Callable|Optional|Union|List|Tuple|Any|TYPE_CHECKING|BroadcastingList.*|DType|"
        r"boolean_dispatch|handle_torch_function|has_torch_function.*|_.*",
        "imported helpers",
    ),
]


def _stub_expecttest() -> None:
    """PyTorch's test helpers import ``expecttest``; the inventory needs none of it."""
    if "expecttest" not in sys.modules:
        try:
            import expecttest  # noqa: F401, PLC0415
        except ImportError:
            stub = types.ModuleType("expecttest")
            stub.TestCase = unittest.TestCase  # type: ignore[attr-defined]
            sys.modules["expecttest"] = stub


def torch_names() -> dict[str, list[str]]:
    """Each inventory's names, sorted, from the installed PyTorch."""
    import torch  # noqa: PLC0415
    import torch.nn.functional as tf  # noqa: PLC0415

    _stub_expecttest()
    from torch.testing._internal.common_methods_invocations import op_db  # noqa: PLC0415

    ops: set[str] = set()
    for info in op_db:
        ops.add(info.name)
        ops.update(alias.name for alias in getattr(info, "aliases", ()) or ())
    tensor = {n for n in dir(torch.Tensor) if not n.startswith("_")}
    nn = {n for n in dir(torch.nn) if inspect.isclass(getattr(torch.nn, n)) and not n.startswith("_")}
    functional = {
        n for n in dir(tf) if not n.startswith("_") and callable(getattr(tf, n)) and not inspect.isclass(getattr(tf, n))
        and not inspect.ismodule(getattr(tf, n))
    }  # fmt: skip
    linalg = {n for n in dir(torch.linalg) if not n.startswith("_") and callable(getattr(torch.linalg, n))}
    namespace = {n for n in dir(torch) if not n.startswith("_")}
    return {k: sorted(v) for k, v in zip(INVENTORIES, (ops, tensor, nn, functional, linalg, namespace))}


def _lookup(root: object, dotted: str) -> bool:
    obj = root
    for part in dotted.split("."):
        if not hasattr(obj, part):
            return False
        obj = getattr(obj, part)
    return True


def is_present(inventory: str, name: str) -> bool:
    """Whether the library has ``name`` of ``inventory`` under PyTorch's spelling."""
    import tinygrad_attn as tga  # noqa: PLC0415

    if inventory == "op_db":
        # an OpInfo name is a torch function or a Tensor method (``__radd__``, ``byte``)
        return _lookup(tga, name) or (("." not in name) and hasattr(tga.Tensor, name))
    if inventory == "Tensor":
        return hasattr(tga.Tensor, name)
    if inventory == "nn":
        return hasattr(tga.nn, name)
    if inventory == "functional":
        return hasattr(tga.nn.functional, name)
    if inventory == "torch":
        return hasattr(tga, name)
    return _lookup(tga, "linalg." + name)


def out_of_scope(inventory: str, name: str) -> str:
    """The reason ``name`` is out of scope, or ``""``."""
    for where, pattern, reason in OUT_OF_SCOPE:
        if where in ("*", inventory) and re.fullmatch(pattern, name):
            return reason
    return ""


def reviewed_missing(path: Path = MISSING_FILE) -> dict[tuple[str, str], str]:
    """The reviewed gaps: ``inventory<TAB>name<TAB>reason`` per line (``#`` starts a comment)."""
    out = {}
    for line in path.read_text().splitlines() if path.exists() else ():
        if line.strip() and not line.startswith("#"):
            inventory, name, reason = line.split("\t", 2)
            out[(inventory, name)] = reason
    return out


def classify(names: dict[str, list[str]]) -> dict[str, list[tuple[str, str, str]]]:
    """Each inventory's ``(name, status, reason)`` rows; status ``present``, ``out of scope`` or ``missing``."""
    listed = reviewed_missing()
    table: dict[str, list[tuple[str, str, str]]] = {}
    for inventory in INVENTORIES:
        rows = []
        for name in names[inventory]:
            if is_present(inventory, name):
                rows.append((name, "present", ""))
            elif reason := out_of_scope(inventory, name):
                rows.append((name, "out of scope", reason))
            else:
                rows.append((name, "missing", listed.get((inventory, name), "")))
        table[inventory] = rows
    return table


def counts(table: dict[str, list[tuple[str, str, str]]]) -> dict[str, dict[str, int]]:
    out = {}
    for inventory, rows in table.items():
        c = {"present": 0, "missing": 0, "out of scope": 0}
        for _, status, _ in rows:
            c[status] += 1
        c["total"] = len(rows)
        out[inventory] = c
    return out


def unlisted_gaps(table: dict[str, list[tuple[str, str, str]]]) -> list[tuple[str, str]]:
    """The missing names that the reviewed list does not name."""
    listed = reviewed_missing()
    return [(inv, n) for inv, rows in table.items() for n, s, _ in rows if s == "missing" and (inv, n) not in listed]


def stale_entries(table: dict[str, list[tuple[str, str, str]]]) -> list[tuple[str, str]]:
    """Listed gaps that are no gaps now (present, out of scope, or no longer in PyTorch's inventory)."""
    gaps = {(inv, n) for inv, rows in table.items() for n, s, _ in rows if s == "missing"}
    return sorted(set(reviewed_missing()) - gaps)


def markdown(table: dict[str, list[tuple[str, str, str]]]) -> str:
    import torch  # noqa: PLC0415

    lines = [f"# PyTorch {torch.__version__.split('+')[0]}'s inventories against tinygrad_attn", "",
             "Written by `python tools/inventory.py`; do not edit by hand.", "",
             "| inventory | present | missing | out of scope | total |", "| --- | --- | --- | --- | --- |"]  # fmt: skip
    for inventory, c in counts(table).items():
        lines.append(f"| {inventory} | {c['present']} | {c['missing']} | {c['out of scope']} | {c['total']} |")
    for inventory, rows in table.items():
        lines += ["", f"## {inventory}", "", "| name | status | reason |", "| --- | --- | --- |"]
        lines += [f"| `{n}` | {s} | {r} |" for n, s, r in rows]
    return "\n".join(lines) + "\n"


def _prune(stale: Iterable[tuple[str, str]]) -> None:
    drop = set(stale)
    kept = [
        line for line in MISSING_FILE.read_text().splitlines()
        if line.startswith("#") or not line.strip() or tuple(line.split("\t", 2)[:2]) not in drop
    ]  # fmt: skip
    MISSING_FILE.write_text("\n".join(kept) + "\n")


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(HERE.parent))
    table = classify(torch_names())
    if "--missing" in argv:
        for inventory, name in unlisted_gaps(table):
            print(f"{inventory}\t{name}")
        return 0
    if "--prune" in argv:
        _prune(stale_entries(table))
        return 0
    TABLE.write_text(markdown(table))
    for inventory, c in counts(table).items():
        print(f"{inventory:11s} present {c['present']:4d}  missing {c['missing']:4d}  "
              f"out of scope {c['out of scope']:4d}  total {c['total']:4d}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
