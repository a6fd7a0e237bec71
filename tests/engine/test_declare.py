"""One declaration per public op (``engine/declare.py``): what follows from it, and that no
public name has two definitions."""

import ast
import inspect
import pathlib
import types

import pytest

import tinygrad_attn as tga
from tinygrad_attn import Tensor
from tinygrad_attn.engine import declare
from tinygrad_attn.engine.declare import DECLARED, METHOD_ONLY, public

PACKAGE = pathlib.Path(tga.__file__).parent

# The pairs PyTorch itself has, where the method and the free function differ in meaning or in
# their operands' names (``x.where(c, y)`` is ``torch.where(c, x, y)``; ``x.split(split_size)``;
# ``x.polygamma(n)`` is ``torch.polygamma(n, x)``).
PYTORCH_PAIRS = {
    "where",
    "split",
    "unflatten",
    "unique",
    "unique_consecutive",
    "polygamma",
    "get_device",
    "grad",
    "lu",
    "real",
    "imag",
    "stft",
    "istft",
    "repeat_interleave",
}  # (torch.lu(A, pivot, get_infos) and Tensor.lu(pivot, get_infos); torch.repeat_interleave(repeats) alone)
# and the library's own methods whose name PyTorch gives a free function only (PyTorch's Tensor has
# neither): ``x.layer_norm(weight, bias, eps)`` normalises the last axis, ``tga.layer_norm`` is
# ``torch.layer_norm(input, normalized_shape, ...)``; ``x.dropout(p)`` is
# ``F.dropout``, ``tga.dropout(input, p, train)`` ATen's spelling
LIBRARY_METHODS = {"layer_norm", "dropout"}


def _declarations():
    return [*DECLARED.values(), *METHOD_ONLY.values()]


@pytest.mark.parametrize("d", sorted({d.name: d for d in DECLARED.values()}.values(), key=lambda d: d.name), ids=str)
def test_a_declared_function_is_the_free_function_and_the_method(d):
    for name in d.names:
        fn = getattr(tga, name)
        # (the free function's check of its first argument, or PyTorch's out= adapter of it)
        assert declare.one_function(fn) is d.fn, name
        assert name in tga.__all__, name
        if d.method:  # (the function itself: a method takes no out=)
            attr = inspect.getattr_static(Tensor, name)
            attr = attr.__func__ if d.static else attr
            assert getattr(attr, "refuses_out_of", attr) is d.fn, name


def test_every_in_place_twin_writes_into_the_tensor():
    for d in _declarations():
        for name in d.names if d.inplace else ():
            twin = getattr(Tensor, name + "_")
            assert twin.__name__ == name + "_", name
            if d.inplace_function:  # (the twin, or the twin behind the free function's own argument forms: addmv_)
                free = getattr(tga, name + "_")
                free = getattr(free, "torch_function_of", free)  # (under the __torch_function__ check)
                assert free is twin or getattr(free, "__wrapped__", None) is twin, name


def test_a_method_and_its_free_function_are_one_function():
    # (every name that is both tga.X and Tensor.X, but PyTorch's own pairs)
    for name in tga.__all__:
        fn = getattr(tga, name, None)
        if (
            name in PYTORCH_PAIRS | LIBRARY_METHODS
            or not callable(fn)
            or isinstance(fn, type)
            or not hasattr(Tensor, name)
        ):
            continue
        attr = inspect.getattr_static(Tensor, name)
        assert declare.one_function(getattr(attr, "__func__", attr)) is declare.one_function(fn), name


def _top_level_definitions() -> dict[str, list[str]]:
    """Each public function name defined (``def``) at a module's top level or in Tensor's body."""
    found: dict[str, list[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text())
        nodes = list(tree.body)
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name == "Tensor":
                nodes += node.body
        for node in nodes:
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
                found.setdefault(node.name, []).append(str(path.relative_to(PACKAGE)))
    return found


# Other namespaces, whose names PyTorch pairs with torch's own (``nn.init.normal_`` and
# ``Tensor.normal_``, ``F.relu(input, inplace)``, ``torch.linalg.norm`` and ``torch.norm``,
# ``torch.jit.trace`` and ``torch.trace``), and internal modules (``_name``, the host-side random
# transforms, the tracer, the drawing code).
OTHER_NAMESPACES = ("nn/", "optim/", "distributions/", "utils/", "symbolic/", "viz/", "autograd/", "linalg/",
                    "runtime/", "functional/", "random/")  # fmt: skip


def test_no_declared_op_is_defined_in_two_modules():
    defs = _top_level_definitions()
    public_ops = {n for d in _declarations() for n in d.names}
    places = {n: [w for w in where if not w.startswith(OTHER_NAMESPACES) and "/_" not in "/" + w]
              for n, where in defs.items() if n in public_ops}  # fmt: skip
    assert {n: w for n, w in places.items() if len(w) > 1} == {}


def test_declaring_a_name_twice_is_refused_at_import():
    def one(input):
        return input

    def other(input):
        return input

    saved = dict(DECLARED)
    try:
        public(one, name="_declare_test_name")
        with pytest.raises(RuntimeError, match="_declare_test_name.*declared twice"):
            public(other, name="_declare_test_name")
    finally:
        DECLARED.clear()
        DECLARED.update(saved)


def test_a_new_declaration_becomes_function_method_and_twin():
    class Probe:
        pass

    def double(input):
        """Twice ``input``."""
        return input * 2

    saved = dict(DECLARED)
    namespace: dict = {}
    try:
        public(double, method=True, inplace_function=True, aliases=("twice",), special=("doubled",))
        special = types.ModuleType("special")
        special.__all__ = []
        names = declare.install(Probe, namespace, lambda name: lambda self: f"{name}_ of {self!r}", special)
    finally:
        DECLARED.clear()
        DECLARED.update(saved)
    # (the free functions under the __torch_function__ check, one for both names)
    assert namespace["double"] is namespace["twice"] and namespace["double"].torch_function_of is double
    assert double is Probe.double is Probe.twice
    assert namespace["double_"].torch_function_of is Probe.double_ and Probe.twice_ is not None
    assert {"double", "twice", "double_", "twice_"} <= set(names)
    assert special.doubled is namespace["double"] and "doubled" in special.__all__


# Declared names that are not ops with a gradient to check: factories, Tensor's attributes and
# conversions, random draws (their numbers are tested against PyTorch's in tests/random), and the
# in-place metadata changes (tested in tests/engine/test_inplace_variants.py).
NOT_OPS = {"as_tensor", "tensor", "from_numpy", "from_dlpack", "is_tensor", "rand", "randperm", "dim", "element_size",
           "is_floating_point", "nelement", "numel", "new_tensor", "type_as", "bernoulli_", "cauchy_", "exponential_",
           "geometric_", "log_normal_", "normal_", "random_", "uniform_", "detach_", "fill_diagonal_", "index_put_",
           "squeeze_", "unsqueeze_", "swapaxes_", "swapdims_", "t_", "transpose_"}  # fmt: skip
# (Tensor's attributes and helpers: against PyTorch in tests/tensor/test_tensor_members.py)
NOT_OPS |= {"apply_", "map_", "map2_", "grad_dtype", "retains_grad", "is_contiguous", "is_cpu", "is_distributed",
            "is_nonzero", "is_same_size", "is_signed", "layout", "ndimension", "new", "output_nr", "resize",
            "resize_as", "register_post_accumulate_grad_hook"}  # fmt: skip
# (memory layout: against PyTorch's over every view in tests/tensor/test_strides.py)
NOT_OPS |= {"stride", "storage_offset", "data_ptr"}
# (memory and kind flags: against PyTorch's over every layout in tests/tensor/test_memory_members_torch.py)
NOT_OPS |= {"const_data_ptr", "dim_order", "is_pinned", "pin_memory", "is_shared", "share_memory_", "is_sparse",
            "is_nested", "is_quantized", "is_meta", "is_mkldnn", "is_xpu", "is_mps", "is_ipu", "is_maia", "is_mtia",
            "is_vulkan", "is_xla"}  # fmt: skip
# (the dtype of an op of two operands: against PyTorch's in tests/tensor/test_dtypes.py)
NOT_OPS |= {"result_type"}
# (the lazy conjugate and negative bits, which no tensor here carries: against PyTorch in tests/tensor/test_complex_torch.py)
NOT_OPS |= {"is_conj", "is_neg"}
# (sizes in bytes: against PyTorch in tests/tensor/test_protocol_programs_torch.py)
NOT_OPS |= {"itemsize", "nbytes"}
# (torch's factories, predicates, methods as free functions and removed stubs: against PyTorch in
# tests/tensor/test_torch_namespace.py)
NOT_OPS |= {"asarray", "frombuffer", "range", "empty_strided", "hann_window", "hamming_window", "blackman_window",
            "bartlett_window", "kaiser_window", "detach", "fill_", "is_complex", "symeig", "solve", "lstsq",
            "matrix_rank", "eig"}  # fmt: skip
# (draws, flags, memory exchange, the complex views' copies and the in-place re-stride: against PyTorch, and
# against finite differences where differentiable, in tests/tensor/test_pytorch_names_torch.py)
NOT_OPS |= {"as_strided_", "as_subclass", "binomial", "is_inference", "is_set_to", "module_load", "poisson", "set_",
            "to_dlpack", "view_as_complex_copy", "view_as_real_copy", "is_storage"}  # fmt: skip
# (the memory's storage objects: against PyTorch in tests/tensor/test_memory_members_torch.py)
NOT_OPS |= {"storage", "untyped_storage"}
# (the sparse COO layout's constructor and product: against PyTorch, and against finite differences, in
# tests/tensor/test_sparse_coo_torch.py)
NOT_OPS |= {"sparse_coo_tensor", "spmm", "to_sparse"}


def test_every_declared_op_is_checked_against_pytorch():
    """A declared op needs an entry in tests/opinfo.py, or a PyTorch OpInfo of its name (run by
    tests/ops/test_torch_opinfo.py), so adding a declaration without a test fails here."""
    common = pytest.importorskip("torch.testing._internal.common_methods_invocations")
    from opinfo import OPS  # noqa: PLC0415 - (tests/ is on the path)

    checked = {n for op in OPS for n in (op.name, *op.covers)}
    for info in common.op_db:
        checked |= {info.name, *(a.name for a in info.aliases or ())}
    unchecked = []
    for d in _declarations():  # (one function: checked under any of its names, special ones included)
        names = {n for n in d.names if not n.startswith("_")} | {f"special.{n}" for n in d.special}
        spelled = names | {f"special.{n}" for n in names}
        if names and not spelled & checked and not names & NOT_OPS:
            unchecked.append(sorted(names)[0])
    unchecked = sorted(set(unchecked))
    assert unchecked == [], f"declared ops with no test against PyTorch: {unchecked}"


def test_the_functional_namespace_is_its_declarations():
    """``F`` is made from ``@public(functional=True)`` alone: every declared name is there, the
    same object, in ``__all__``, and no module of the package keeps a list of names."""
    import tinygrad_attn.functional as F  # noqa: PLC0415

    assert F.__all__ == list(declare.FUNCTIONAL) and len(set(F.__all__)) == len(F.__all__)
    for name, d in declare.FUNCTIONAL.items():
        assert getattr(F, name).torch_function_of is d.fn, name  # (under the __torch_function__ check)
        assert tga.nn.functional.__dict__[name] is getattr(F, name)
    lists = []
    for path in sorted((PACKAGE / "functional").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                lists.append(f"{path.name}: {ast.unparse(node)}")
    assert lists == ["__init__.py: __all__ = list(_declare.FUNCTIONAL)"]


def test_a_functional_declaration_is_in_f_only_unless_asked():
    def scaled(input):
        return input * 3

    saved = [dict(t) for t in (DECLARED, METHOD_ONLY, declare.FUNCTIONAL)]
    try:
        public(scaled, function=False, functional=True)
        assert declare.FUNCTIONAL["scaled"].fn is scaled
        assert "scaled" not in DECLARED and "scaled" not in METHOD_ONLY
        with pytest.raises(RuntimeError, match="'scaled' is declared twice"):
            public(lambda input: input, function=False, functional=True, name="scaled")
        public(scaled, name="scaled", functional=True)  # (the same function again: tga.scaled too)
        assert DECLARED["scaled"].fn is scaled
        with pytest.raises(ValueError, match="'nowhere' is declared public nowhere"):
            public(scaled, function=False, name="nowhere")
    finally:
        for t, s in zip((DECLARED, METHOD_ONLY, declare.FUNCTIONAL), saved, strict=True):
            t.clear()
            t.update(s)
