"""The PyTorch face of Tensor and Module: ``.data``, ``tga.device``, ``state_dict`` values,
``np.asarray(t)``, the legacy and typed constructors, ``to()``'s signatures, ``cpu/cuda``
and ``zero_grad(set_to_none=...)``, each against PyTorch where it is installed."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import tinygrad_attn as tga
from tinygrad_attn import Tensor, nn
from tinygrad_attn.nn import Parameter


# -- Tensor.data -------------------------------------------------------------------------
def test_data_is_a_tensor_without_history_sharing_memory(device):
    p = Parameter(Tensor(np.arange(6.0).reshape(2, 3), device=device))
    d = p.data
    assert isinstance(d, Tensor) and not d.requires_grad and d.is_leaf and d.grad_fn is None
    assert d.shape == p.shape and d.dtype == p.dtype and d.device == p.device
    d.fill_(0.0)  # writes through
    assert p.tolist() == [[0.0] * 3] * 2 and p.requires_grad
    assert p._version == 0  # ... and are not counted: PyTorch's escape hatch


# The random fills come with the in-place variants of the ops; tested here once they exist.
_RANDOM_FILLS = [m for m in ("uniform_", "normal_") if hasattr(Tensor, m)]


@pytest.mark.parametrize(
    "how", ["fill_", "zero_", "mul_", "imul", "isub", "copy_", "copy_array", "setitem", *_RANDOM_FILLS]
)
def test_data_idioms_change_the_parameter(how, device):
    p = Parameter(Tensor(np.ones((2, 3)), device=device))
    v0 = p._version
    if how == "fill_":
        p.data.fill_(2.0)
    elif how == "zero_":
        p.data.zero_()
    elif how == "mul_":
        p.data.mul_(0.5)
    elif how == "imul":
        p.data *= 0.5
    elif how == "isub":
        p.data -= 0.5 * Tensor(np.ones((2, 3)), device=device)
    elif how == "copy_":
        p.data.copy_(Tensor(np.full((2, 3), 3.0), device=device))
    elif how == "copy_array":
        p.data.copy_(np.full((2, 3), 3.0))
    elif how == "setitem":
        p.data[0] = 4.0
    elif how == "uniform_":
        p.data.uniform_(-0.1, 0.1)
    elif how == "normal_":
        p.data.normal_(0.0, 0.02)
    want = {"fill_": 2.0, "zero_": 0.0, "mul_": 0.5, "imul": 0.5, "isub": 0.5, "copy_": 3.0, "copy_array": 3.0}
    got = p.detach().numpy()
    if how in want:
        assert (got == want[how]).all()
    elif how == "setitem":
        assert got[0].tolist() == [4.0] * 3 and got[1].tolist() == [1.0] * 3
    else:
        assert (got != 1.0).all() and np.abs(got).max() < 1.0
    assert p._version == v0 and p.requires_grad and p.is_leaf


def test_data_clone_is_a_copy_and_numpy_shares_on_the_cpu(device):
    p = Parameter(Tensor(np.ones(3), device=device))
    c = p.data.clone()
    c.fill_(5.0)
    assert p.tolist() == [1.0, 1.0, 1.0] and not c.requires_grad
    a = p.data.detach().numpy()
    a[...] = 7.0  # PyTorch's numpy() is the CPU tensor's own memory; of another device's array, a copy
    assert p.tolist() == ([7.0] * 3 if isinstance(p._data, np.ndarray) else [1.0] * 3)


def test_assigning_data_replaces_the_values(device):
    p = Parameter(Tensor(np.ones((2, 2)), device=device))
    p.data = Tensor(np.full((3,), 2.0), device=device)  # any shape, as PyTorch
    assert p.shape == (3,) and p.tolist() == [2.0] * 3 and p.requires_grad
    p.data = np.zeros(3)  # an array is placed on the parameter's device
    assert p.device == tga.device(device) and p.tolist() == [0.0] * 3
    with pytest.raises(TypeError, match="data"):
        p.data = "nope"


def test_writes_through_data_are_invisible_to_autograd():
    x = Tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()  # keeps its output for backward
    y.data.fill_(1.0)  # PyTorch: no error, and the backward reads the new values
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]
    z = x.exp()
    z.fill_(1.0)  # the tracked form: the backward sees the change and refuses
    with pytest.raises(RuntimeError, match="in-place"):
        z.sum().backward()


def test_data_inside_a_training_step_matches_torch():
    torch = pytest.importorskip("torch")
    w0 = np.random.default_rng(0).standard_normal((3, 2))
    ours, theirs = Parameter(w0.copy()), torch.nn.Parameter(torch.tensor(w0))
    for w in (ours, theirs):
        for _ in range(3):
            loss = (w * w).sum()
            loss.backward()
            w.data -= 0.1 * w.grad.data  # the pre-optimizer SGD idiom
            w.grad.data.zero_()
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-12)


# -- tga.device ----------------------------------------------------------------------------
def test_device_class_matches_torch():
    torch = pytest.importorskip("torch")
    for args in (("cpu",), ("cuda",), ("cuda:1",), ("cuda", 0), ("cpu", 0)):
        ours, theirs = tga.device(*args), torch.device(*args)
        assert (ours.type, ours.index) == (theirs.type, theirs.index), args
        assert str(ours) == str(theirs) and repr(ours) == repr(theirs), args
    assert tga.device(tga.device("cuda", 2)) == tga.device("cuda:2")
    assert tga.device(0) == tga.device("cuda", 0)  # (torch makes it only where an accelerator is)


def test_device_equals_its_string_and_hashes_as_it():
    d = tga.device("cpu")
    assert d == "cpu" and "cpu" == d and d != "cuda" and d == tga.device("cpu")
    assert d != tga.device("cuda") and tga.device("cuda", 0) == "cuda:0"
    assert hash(d) == hash("cpu") and {d: 1}["cpu"] == 1
    assert pickle.loads(pickle.dumps(d)) == d and copy.deepcopy(d) == d


@pytest.mark.parametrize("bad", ["", "cuda:", "cuda:-1"])
def test_bad_device_strings_raise(bad):
    with pytest.raises(RuntimeError, match="device"):
        tga.device(bad)
    with pytest.raises(ValueError, match="index"):
        tga.device("cuda:0", 1)


def test_tensor_device_is_a_device(device):
    x = Tensor(np.ones(2), device=device)
    assert isinstance(x.device, tga.device) and x.device == device == tga.get_device(device).name
    assert not x.is_cuda and x.get_device() == -1


def test_a_device_object_works_where_a_name_does(device):
    dev = tga.device(device)
    x = tga.zeros(2, 3, device=dev)
    assert x.device == dev
    assert Tensor([1.0], device=dev).device == dev and tga.tensor([1], device=dev).device == dev
    assert Tensor(np.ones(2)).to(dev).device == dev
    lin = nn.Linear(2, 3).to(dev)
    assert lin.weight.device == dev
    assert x.to(x.device).device == dev  # a tensor's own device back in


def test_torch_device_object_is_accepted():
    torch = pytest.importorskip("torch")
    assert Tensor([1.0]).to(torch.device("cpu")).device == "cpu"
    assert tga.zeros(2, device=torch.device("cpu")).device == "cpu"


# -- state dicts, np.asarray ------------------------------------------------------------
def test_state_dict_values_are_detached_tensors_sharing_memory(device):
    lin = nn.Linear(3, 2).to(device)
    sd = lin.state_dict()
    assert all(isinstance(v, Tensor) and not v.requires_grad for v in sd.values())
    sd["bias"].zero_()
    assert lin.bias.tolist() == [0.0, 0.0]


def test_load_state_dict_takes_tensors_arrays_and_torch_tensors(device):
    lin, src = nn.Linear(3, 2).to(device), nn.Linear(3, 2)
    lin.load_state_dict(src.state_dict())
    np.testing.assert_array_equal(lin.weight.detach().numpy(), src.weight.detach().numpy())
    lin.load_state_dict({k: np.full(v.shape, 2.0) for k, v in src.state_dict().items()})
    assert (lin.weight.detach().numpy() == 2.0).all() and lin.weight.dtype == np.float32
    torch = pytest.importorskip("torch")
    theirs = torch.nn.Linear(3, 2)
    lin.load_state_dict(theirs.state_dict())
    np.testing.assert_array_equal(lin.weight.detach().numpy(), theirs.weight.detach().numpy())
    lin.load_state_dict({"weight": theirs.weight, "bias": theirs.bias})  # (parameters that require grad)
    np.testing.assert_array_equal(lin.bias.detach().numpy(), theirs.bias.detach().numpy())


def test_save_and_load_a_state_dict_of_tensors(tmp_path, device):
    lin = nn.Linear(3, 2).to(device)
    tga.save({"model": lin.state_dict(), "step": 3}, tmp_path / "ckpt.safetensors")
    back = tga.load(tmp_path / "ckpt.safetensors")
    assert back["step"] == 3 and isinstance(back["model"]["weight"], Tensor)
    other = nn.Linear(3, 2)
    other.load_state_dict(back["model"])
    np.testing.assert_array_equal(other.weight.detach().numpy(), lin.weight.detach().numpy())
    lin.save(tmp_path / "m.safetensors")
    np.testing.assert_array_equal(
        nn.Linear(3, 2).load(tmp_path / "m.safetensors").bias.detach().numpy(), lin.bias.detach().numpy()
    )


def test_asarray_gives_the_array(device):
    t = Tensor(np.arange(6.0).reshape(2, 3), device=device)
    a = np.asarray(t)
    assert isinstance(a, np.ndarray) and a.dtype == np.float64 and a.tolist() == t.tolist()
    assert np.asarray(t, dtype=np.float32).dtype == np.float32
    assert np.array(t, copy=True) is not np.asarray(t)
    np.testing.assert_array_equal(t, a)  # NumPy's own testing functions read tensors


def test_asarray_on_the_cpu_shares_memory_and_copy_true_does_not():
    t = Tensor(np.zeros(3))
    np.asarray(t)[0] = 1.0
    assert t.tolist() == [1.0, 0.0, 0.0]  # as np.asarray(torch_tensor)
    t.__array__(copy=True)[1] = 5.0
    assert t.tolist() == [1.0, 0.0, 0.0]


def test_asarray_without_copy_off_the_cpu_raises():
    t = Tensor(np.zeros(3), device="array_api_strict")
    with pytest.raises(ValueError, match="copy=False"):
        t.__array__(copy=False)


def test_asarray_of_a_traced_tensor_raises():
    def f(x):
        y = x * 2
        np.asarray(y)
        return y

    with pytest.raises(tga.TraceError, match=r"(np\.asarray|__array__)"):
        tga.jit.trace(f, Tensor(np.ones(3)))


# -- constructors -------------------------------------------------------------------------
def test_legacy_shape_constructor():
    t = Tensor(2, 3)
    assert t.shape == (2, 3) and t.dtype == np.float32
    assert Tensor(2, 3, dtype=tga.float64).dtype == np.float64
    assert Tensor(4, 0, 2).shape == (4, 0, 2)
    torch = pytest.importorskip("torch")
    for n in (0, 2):  # one int is a length, as torch.Tensor(n) reads it (an empty start for cat, at 0)
        assert Tensor(n).shape == tuple(torch.Tensor(n).shape) and Tensor(n).dtype == np.float32
    assert (
        tga.cat([Tensor(0), Tensor([1.0, 2.0])]).tolist() == torch.cat([torch.Tensor(0), torch.Tensor([1, 2])]).tolist()
    )
    s = Tensor(2.5)  # a float stays data (PyTorch refuses it)
    assert s.shape == () and s.item() == 2.5
    assert Tensor([2, 3]).shape == (2,) and Tensor().shape == (0,)
    with pytest.raises(TypeError, match="shape"):
        Tensor(2, 3.0)


@pytest.mark.parametrize(
    "name,dtype",
    [
        ("FloatTensor", "float32"),
        ("DoubleTensor", "float64"),
        ("LongTensor", "int64"),
        ("IntTensor", "int32"),
        ("ShortTensor", "int16"),
        ("CharTensor", "int8"),
        ("ByteTensor", "uint8"),
        ("HalfTensor", "float16"),
        ("BoolTensor", "bool"),
    ],  # fmt: skip
)
def test_typed_constructors_match_torch(name, dtype):
    torch = pytest.importorskip("torch")
    ours, theirs = getattr(tga, name), getattr(torch, name)
    for args in (([1, 0, 2],), ([[1.5, 0.0]],), (2, 3), (3,), ()):
        a, b = ours(*args), theirs(*args)
        assert a.shape == tuple(b.shape) and str(a.dtype) == f"torch.{dtype}", (name, args)
        if args and isinstance(args[0], list):
            np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    assert ours(np.array([1.0, 2.0])).dtype == np.dtype(dtype)
    assert isinstance(ours([1]), ours) and not isinstance(Tensor(np.zeros(1, np.complex64)), ours)
    assert ours(tga.ones(2).size()).shape == (2,)


@pytest.mark.parametrize("method", ["byte", "char", "short", "int", "long", "half", "float", "double", "bool",
                                    "cfloat", "cdouble"])  # fmt: skip
def test_dtype_spellings_match_torch(method):
    torch = pytest.importorskip("torch")
    values = np.array([[1.5, 0.0, 2.25], [3.0, 1.0, 100.0]])  # (in every dtype's range: C leaves the rest undefined)
    for a in (values, values.astype(np.int64), values > 0):
        ours, theirs = getattr(tga.tensor(a), method)(), getattr(torch.tensor(a), method)()
        assert str(ours.dtype) == str(theirs.dtype)
        np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())


def test_typed_constructor_refuses_a_tensor_of_another_dtype():
    with pytest.raises(TypeError, match="LongTensor.*float32"):
        tga.LongTensor(tga.ones(2))
    assert tga.LongTensor(tga.tensor([1, 2])).tolist() == [1, 2]


# -- to(), cpu(), cuda() ---------------------------------------------------------------------
def test_to_signatures_match_torch():
    torch = pytest.importorskip("torch")
    x, tx = Tensor(np.arange(3.0, dtype=np.float32)), torch.arange(3.0)
    cases = [
        (lambda m, t: t.to(m.float64), "dtype"),
        (lambda m, t: t.to(dtype=m.float64), "dtype kw"),
        (lambda m, t: t.to("cpu", m.float64), "device, dtype"),
        (lambda m, t: t.to(m.device("cpu"), m.int64), "device object, dtype"),
        (lambda m, t: t.to(device="cpu", dtype=m.float64), "both kw"),
        (lambda m, t: t.to(m.zeros(1, dtype=m.int32)), "other tensor"),
        (lambda m, t: t.to("cpu"), "device"),
        (lambda m, t: t.to(m.float32, copy=True), "copy"),
    ]
    for f, what in cases:
        a, b = f(tga, x), f(torch, tx)
        assert str(a.dtype) == str(b.dtype), what
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
        assert (a is x) == (b is tx), what  # itself where nothing changes, as PyTorch
    with pytest.raises(TypeError, match="to"):
        x.to("cpu", tga.float32, False, False, "extra")
    with pytest.raises(TypeError, match="keyword"):
        x.to(dtyp=tga.float64)


def test_to_is_differentiable_across_dtype_and_device():
    x = Tensor(np.ones(2, np.float32), requires_grad=True)
    y = x.to("array_api_strict", tga.float64)
    assert y.device == "array_api_strict" and y.dtype == np.float64
    (y * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0] and x.grad.dtype == np.float32


@pytest.mark.skipif(tga.is_available("cuda"), reason="checks the error without a GPU")
def test_cuda_without_a_gpu_says_so():
    x = Tensor([1.0])
    assert x.cpu() is x
    calls = (lambda: x.cuda(), lambda: x.cuda(0), lambda: x.cuda("cuda:0"), lambda: x.to(tga.device("cuda")),
             lambda: x.to(0), lambda: tga.zeros(1, device=0))  # fmt: skip
    for call in calls:
        with pytest.raises(RuntimeError, match="(CuPy|GPU)"):
            call()


def test_module_to_takes_devices_dtypes_and_tensors(device):
    lin = nn.Linear(2, 3)
    assert lin.to(tga.device(device)) is lin and lin.weight.device == device
    assert lin.to(tga.float64) is lin and lin.weight.dtype == np.float64
    lin.to(dtype=tga.float32)
    assert lin.weight.dtype == np.float32
    lin.to("cpu", tga.float64)
    assert (lin.weight.device, lin.weight.dtype) == ("cpu", np.float64)
    lin.to(Tensor(np.zeros(1, np.float32), device=device))
    assert (lin.weight.device, lin.weight.dtype) == (device, np.float32)
    assert lin.double().weight.dtype == np.float64 and lin.float().bias.dtype == np.float32
    with pytest.raises(TypeError, match="floating"):
        lin.to(tga.int64)


# -- zero_grad --------------------------------------------------------------------------------
def _trained():
    lin = nn.Linear(2, 2)
    lin(Tensor(np.ones((1, 2), np.float32))).sum().backward()
    return lin


def test_zero_grad_sets_to_none_by_default_as_torch():
    lin = _trained()
    opt = tga.optim.SGD(lin.parameters(), lr=0.1)
    opt.zero_grad()
    assert all(p.grad is None for p in lin.parameters())
    lin = _trained()
    lin.zero_grad(set_to_none=True)
    assert all(p.grad is None for p in lin.parameters())


@pytest.mark.parametrize("owner", ["module", "optimizer"])
def test_zero_grad_set_to_none_false_keeps_zeroed_tensors(owner):
    lin = _trained()
    grads = [p.grad for p in lin.parameters()]
    if owner == "module":
        lin.zero_grad(set_to_none=False)
    else:
        tga.optim.Adam(lin.parameters()).zero_grad(set_to_none=False)
    assert all(p.grad is g and (g.detach().numpy() == 0).all() for p, g in zip(lin.parameters(), grads))
    lin(Tensor(np.ones((1, 2), np.float32))).sum().backward()  # accumulates into the zeros
    assert lin.bias.grad.tolist() == [1.0, 1.0]


def test_zero_grad_set_to_none_false_cuts_a_graph_gradient():
    w = Parameter(np.ones(2))
    (w * w).sum().backward(create_graph=True)
    assert w.grad.requires_grad
    opt = tga.optim.SGD([w], lr=0.1)
    opt.zero_grad(set_to_none=False)
    assert w.grad.tolist() == [0.0, 0.0] and not w.grad.requires_grad


def test_top_level_constants_are_torchs():
    torch = pytest.importorskip("torch")
    assert (tga.inf, tga.pi, tga.e) == (torch.inf, torch.pi, torch.e)
    assert tga.nan != tga.nan and isinstance(tga.nan, float)
