"""Operands of different dtypes, where PyTorch's CPU kernels promote none: every call below runs
with each pair of float16/float32/float64 (and int64) operands, under PyTorch and here, and must
raise where PyTorch raises (an instance of its class) and otherwise give its dtype and values.
The first operand (``A``) is the input; ``B``/``C`` are the other operands (weights, statistics,
sources, masks). A kernel that promotes nothing refuses a float64 input with float32 weights;
a normalisation takes float32 parameters for a float16 input and answers in float16."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import tinygrad_attn as tga

torch = pytest.importorskip("torch")

DTYPES = ("float16", "float32", "float64", "int64")

#: name -> a call of ``T_`` (the library), ``F`` (its functional), ``A``/``B``/``C`` (operand makers by shape)
CASES = {
    "layer_norm": ("F.layer_norm(A((2,3)), (3,), B((3,)), C((3,)))"),
    "group_norm": ("F.group_norm(A((2,2,3)), 1, B((2,)), C((2,)))"),
    "instance_norm": ("F.instance_norm(A((1,2,3)), weight=B((2,)), bias=C((2,)))"),
    "instance_norm_run": ("F.instance_norm(A((1,2,3)), B((2,)), C((2,)).abs()+1, use_input_stats=True)"),
    "instance_norm_stats": (
        "(lambda m, v: (F.instance_norm(A((2,2,3)), m, v, use_input_stats=True, momentum=0.5), T_.cat([m, v]))[1])"
        "(B((2,)), C((2,)).abs()+1)"
    ),
    "batch_norm_train": ("F.batch_norm(A((2,3)), B((3,)), C((3,)).abs()+1, training=True)"),
    "batch_norm_stats": (
        "(lambda m, v: (F.batch_norm(A((2,3)), m, v, training=True, momentum=0.5), T_.cat([m, v]))[1])"
        "(B((3,)), C((3,)).abs()+1)"
    ),
    "batch_norm_eval": ("F.batch_norm(A((2,3)), B((3,)), C((3,)).abs()+1, training=False)"),
    "batch_norm_w": ("F.batch_norm(A((2,3)), None, None, B((3,)), C((3,)), training=True)"),
    "rms_norm": ("F.rms_norm(A((2,3)), (3,), B((3,)))"),
    "prelu": ("F.prelu(A((2,3)), B((1,)))"),
    "ce_weight": ("F.cross_entropy(A((2,3)), T_.tensor([0,1]), weight=B((3,)).abs())"),
    "nll_weight": ("F.nll_loss(A((2,3)), T_.tensor([0,1]), weight=B((3,)).abs())"),
    "ce_probs": ("F.cross_entropy(A((2,3)), B((2,3)).softmax(1))"),
    "bce_weight": ("F.binary_cross_entropy(A((2,3)).sigmoid(), A((2,3)).sigmoid(), weight=B((2,3)).abs())"),
    "bce_logits_w": ("F.binary_cross_entropy_with_logits(A((2,3)), B((2,3)).sigmoid())"),
    "bce_logits_pw": ("F.binary_cross_entropy_with_logits(A((2,3)), A((2,3)).sigmoid(), pos_weight=B((3,)).abs())"),
    "cdist": ("T_.cdist(A((2,3)), B((2,3)))"),
    "pdist_pair": ("F.pairwise_distance(A((2,3)), B((2,3)))"),
    "cos_sim": ("F.cosine_similarity(A((2,3)), B((2,3)))"),
    "sdpa_k": ("F.scaled_dot_product_attention(A((1,2,3)), B((1,2,3)), A((1,2,3)))"),
    "sdpa_mask": ("F.scaled_dot_product_attention(A((1,2,3)), A((1,2,3)), A((1,2,3)), attn_mask=B((2,2)))"),
    "embbag_psw": (
        "F.embedding_bag(T_.tensor([0,1]), A((3,2)), T_.tensor([0]), per_sample_weights=B((2,)), mode='sum')"
    ),
    "grid_sample": ("F.grid_sample(A((1,1,2,2)), B((1,1,1,2)), align_corners=False)"),
    "affine_grid": ("F.affine_grid(A((1,2,3)), (1,1,2,2), align_corners=False)"),
    "conv1d_bias": ("F.conv1d(A((1,2,3)), A((2,2,1)), B((2,)))"),
    "linear_bias": ("F.linear(A((2,3)), A((2,3)), B((2,)))"),
    "bilinear": ("F.bilinear(A((2,3)), B((2,3)), A((2,3,3)))"),
    "mse": ("F.mse_loss(A((2,3)), B((2,3)))"),
    "l1": ("F.l1_loss(A((2,3)), B((2,3)))"),
    "huber": ("F.huber_loss(A((2,3)), B((2,3)))"),
    "kl": ("F.kl_div(A((2,3)), B((2,3)))"),
    "smoothl1": ("F.smooth_l1_loss(A((2,3)), B((2,3)))"),
    "gaussnll": ("F.gaussian_nll_loss(A((2,3)), B((2,3)), A((2,3)).abs()+1)"),
    "poisson": ("F.poisson_nll_loss(A((2,3)), B((2,3)).abs())"),
    "poisson_full": ("F.poisson_nll_loss(A((2,3)), B((2,3)).abs() + 1, full=True)"),
    "poisson_rates": ("F.poisson_nll_loss(A((2,3)).abs(), B((2,3)).abs(), log_input=False, full=True)"),
    "margin_rank": ("F.margin_ranking_loss(A((3,)), B((3,)), A((3,)).sign())"),
    "hinge": ("F.hinge_embedding_loss(A((3,)), B((3,)).sign())"),
    "cos_emb": ("F.cosine_embedding_loss(A((2,3)), B((2,3)), T_.tensor([1,-1]))"),
    "triplet": ("F.triplet_margin_loss(A((2,3)), B((2,3)), A((2,3)))"),
    "soft_margin": ("F.soft_margin_loss(A((2,3)), B((2,3)).sign())"),
    "multilabel_soft": ("F.multilabel_soft_margin_loss(A((2,3)), B((2,3)).sign().clamp(0))"),
    "multi_margin_w": ("F.multi_margin_loss(A((2,3)), T_.tensor([0,1]), weight=B((3,)).abs())"),
    "mha": (
        "F.multi_head_attention_forward(A((2,1,4)), A((2,1,4)), A((2,1,4)), 4, 2, B((12,4)), B((12,)), None, None, False, 0.0, B((4,4)), B((4,)), need_weights=False)[0]"
    ),
    "lerp_w": ("T_.lerp(A((3,)), A((3,)), B((3,)))"),
    "addcmul": ("T_.addcmul(A((3,)), B((3,)), A((3,)))"),
    "addmm": ("T_.addmm(B((2,2)), A((2,3)), A((3,2)))"),
    "baddbmm": ("T_.baddbmm(B((1,2,2)), A((1,2,3)), A((1,3,2)))"),
    "addmv": ("T_.addmv(B((2,)), A((2,3)), A((3,)))"),
    "addr": ("T_.addr(B((2,3)), A((2,)), A((3,)))"),
    "dot": ("T_.dot(A((3,)), B((3,)))"),
    "vdot": ("T_.vdot(A((3,)), B((3,)))"),
    "inner": ("T_.inner(A((3,)), B((3,)))"),
    "outer": ("T_.outer(A((3,)), B((3,)))"),
    "kron": ("T_.kron(A((3,)), B((3,)))"),
    "cross": ("T_.linalg.cross(A((3,)), B((3,)))"),
    "atan2": ("T_.atan2(A((3,)), B((3,)))"),
    "clamp_t": ("T_.clamp(A((3,)), B((3,)), None)"),
    "where": ("T_.where(A((3,))>0, A((3,)), B((3,)))"),
    "index_add": ("A((3,)).index_add(0, T_.tensor([0]), B((1,)))"),
    "scatter_add": ("A((3,)).scatter_add(0, T_.tensor([0]), B((1,)))"),
    "scatter": ("A((3,)).scatter(0, T_.tensor([0]), B((1,)))"),
    "index_copy": ("A((3,)).index_copy(0, T_.tensor([0]), B((1,)))"),
    "masked_scatter": ("A((3,)).masked_scatter(A((3,))>0, B((3,)))"),
    "index_put": ("A((3,)).index_put((T_.tensor([0]),), B((1,)))"),
    "put": ("A((3,)).put(T_.tensor([0]), B((1,)))"),
    "copysign": ("T_.copysign(A((3,)), B((3,)))"),
    "bucketize": ("T_.bucketize(A((3,)), B((3,)).sort().values)"),
    "searchsorted": ("T_.searchsorted(B((3,)).sort().values, A((3,)))"),
    "dist": ("T_.dist(A((3,)), B((3,)))"),
    "trapz": ("T_.trapezoid(A((3,)), B((3,)))"),
    "cumtrapz": ("T_.cumulative_trapezoid(A((3,)), B((3,)))"),
    "solve": ("T_.linalg.solve(A((3,3))+T_.eye(3, dtype=A((1,)).dtype)*3, B((3,)))"),
    "lstsq": ("T_.linalg.lstsq(A((3,3))+T_.eye(3, dtype=A((1,)).dtype)*3, B((3,1))).solution"),
    "cholesky_solve": ("T_.cholesky_solve(B((3,1)), T_.eye(3, dtype=A((1,)).dtype))"),
    "tri_solve": ("T_.linalg.solve_triangular(T_.eye(3, dtype=A((1,)).dtype), B((3,1)), upper=True)"),
    "multi_dot": ("T_.linalg.multi_dot([A((2,3)), B((3,2))])"),
    "vecdot": ("T_.linalg.vecdot(A((3,)), B((3,)))"),
    "cat": ("T_.cat([A((3,)), B((3,))])"),
    "stack": ("T_.stack([A((3,)), B((3,))])"),
    "xlogy": ("T_.xlogy(A((3,)), B((3,)))"),
    "hypot": ("T_.hypot(A((3,)), B((3,)))"),
    "fmod": ("T_.fmod(A((3,)), B((3,)))"),
    "nextafter": ("T_.nextafter(A((3,)), B((3,)))"),
    "ldexp": ("T_.ldexp(A((3,)), B((3,)))"),
    "logaddexp": ("T_.logaddexp(A((3,)), B((3,)))"),
    "heaviside": ("T_.heaviside(A((3,)), B((3,)))"),
    "embedding": ("F.embedding(T_.tensor([0]), A((3,2)), max_norm=1.0)"),
    "glu": ("F.glu(A((2,4)))"),
    "ctc": ("F.ctc_loss(A((4,1,3)).log_softmax(2), T_.tensor([[1,2]]), T_.tensor([4]), T_.tensor([2]))"),
    "conv_transpose_b": ("F.conv_transpose1d(A((1,2,3)), A((2,2,1)), B((2,)))"),
    "interp": ("F.interpolate(A((1,1,2,2)), scale_factor=2.0, mode='bilinear')"),
    "pad": ("F.pad(A((1,3)), (1,1), value=1.5)"),
    "normalize": ("F.normalize(A((2,3)))"),
    "local_resp": ("F.local_response_norm(A((1,2,3)), 2)"),
}
# (modules as users call them: a float64 batch into float32 parameters)
CASES.update(
    {
        "nn.LayerNorm": "T_.nn.LayerNorm(3).to(B((1,)).dtype)(A((2,3)))",
        "nn.BatchNorm1d": "T_.nn.BatchNorm1d(3).to(B((1,)).dtype)(A((2,3)))",
        "nn.GroupNorm": "T_.nn.GroupNorm(1, 2).to(B((1,)).dtype)(A((1,2,3)))",
        "nn.RMSNorm": "T_.nn.RMSNorm(3).to(B((1,)).dtype)(A((2,3)))",
        "nn.PReLU": "T_.nn.PReLU().to(B((1,)).dtype)(A((2,3)))",
        "nn.GRUCell": "T_.nn.GRUCell(3, 2).to(B((1,)).dtype)(A((2,3)))",
        "nn.LSTMCell": "T_.nn.LSTMCell(3, 2).to(B((1,)).dtype)(A((2,3)))[0]",
        "nn.RNNCell_hx": "T_.nn.RNNCell(3, 2).to(A((1,)).dtype)(A((2,3)), B((2,2)))",
        "nn.Bilinear": "T_.nn.Bilinear(3, 3, 2).to(B((1,)).dtype)(A((2,3)), A((2,3)))",
        "nn.Linear": "T_.nn.Linear(3, 2).to(B((1,)).dtype)(A((2,3)))",
        "nn.Conv1d": "T_.nn.Conv1d(2, 2, 1).to(B((1,)).dtype)(A((1,2,3)))",
    }
)


#: name-A-B -> why ours differs (strict xfail: a fix shows here)
KNOWN = {}


def _run(lib, expr: str, da: str, db: str):
    """(result, None) or (None, exception) of ``expr`` with ``A`` in ``da`` and ``B``/``C`` in ``db``."""
    gen = np.random.default_rng(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if lib is tga:
            tga.manual_seed(0)
        else:
            torch.manual_seed(0)

        def maker(dt):
            def make(shape):
                a = gen.standard_normal(shape)
                a = np.round(a * 4) if dt == "int64" else a
                return lib.tensor(a).to(getattr(lib, dt))

            return make

        env = {"F": lib.nn.functional, "T_": lib, "A": maker(da), "B": maker(db), "C": maker(db)}
        try:
            return eval(expr, env), None  # noqa: S307 - the table above
        except Exception as e:  # noqa: BLE001 - compared with PyTorch's below
            return None, e


def _params():
    out = []
    for name, (da, db) in itertools.product(CASES, itertools.product(DTYPES, DTYPES)):
        key = f"{name}-{da}-{db}"
        if da != db:
            marks = [pytest.mark.xfail(reason=KNOWN[key], strict=True)] if key in KNOWN else []
            out.append(pytest.param(name, da, db, id=key, marks=marks))
    return out


@pytest.mark.parametrize("name,da,db", _params())
def test_mixed_dtypes_as_in_torch(name, da, db):
    want, want_err = _run(torch, CASES[name], da, db)
    got, got_err = _run(tga, CASES[name], da, db)
    if want_err is not None:
        assert got_err is not None, f"{name}: PyTorch raises {type(want_err).__name__}: {want_err}; ours returns"
        # (float16 LAPACK and similar: PyTorch names the missing kernel by RuntimeError or NotImplementedError)
        assert isinstance(got_err, (type(want_err), NotImplementedError)), (
            f"{name}: PyTorch raises {type(want_err).__name__}, ours {type(got_err).__name__}: {got_err}"
        )
        return
    assert got_err is None, f"{name}: PyTorch returns, ours raises {type(got_err).__name__}: {got_err}"
    assert str(got.dtype) == str(want.dtype), f"{name}: dtype {got.dtype}, PyTorch's {want.dtype}"
    # (a float16 operand: PyTorch's kernels round its intermediate results in another order than ours)
    tol = 4e-3 if "float16" in (da, db) else 1e-5
    np.testing.assert_allclose(got.detach().numpy().astype(np.float64),
                               want.detach().numpy().astype(np.float64), rtol=tol, atol=tol)  # fmt: skip


#: calls that move float16 (or bfloat16) running statistics of a float16 (bfloat16) input in place, each
#: returning the statistics after the call (``X``: the input, ``M``/``V``: the buffers)
RUNNING_CALLS = {
    "F.batch_norm": "F.batch_norm(X, M, V, training=True, momentum=0.5)",
    "F.instance_norm": "F.instance_norm(X, M, V, use_input_stats=True, momentum=0.5)",
    "torch.batch_norm": "T_.batch_norm(X, None, None, M, V, True, 0.5, 1e-5, False)",
    "torch.native_batch_norm": "T_.native_batch_norm(X, None, None, M, V, True, 0.5, 1e-5)",
    "torch.instance_norm": "T_.instance_norm(X, None, None, M, V, True, 0.5, 1e-5, False)",
}


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", sorted(RUNNING_CALLS))
def test_half_running_statistics_move_as_pytorchs(name, dt):
    """The op computes a float16 input in float32 (PyTorch's opmath), on float32 copies of its buffers:
    what it writes into them reaches the caller's buffers."""
    x0 = np.random.default_rng(1).standard_normal((3, 2, 4)) * 3
    got = []
    for lib in (torch, tga):
        env = {"F": lib.nn.functional, "T_": lib, "X": lib.tensor(x0).to(getattr(lib, dt)),
               "M": lib.tensor([1.0, -2.0]).to(getattr(lib, dt)), "V": lib.tensor([2.0, 3.0]).to(getattr(lib, dt))}  # fmt: skip
        eval(RUNNING_CALLS[name], env)  # noqa: S307 - the table above
        got.append(np.concatenate([env["M"].float().numpy(), env["V"].float().numpy()]))
    # (one unit in the last place: ours averages the samples' statistics before rounding them)
    np.testing.assert_allclose(got[1], got[0], rtol=2**-7 if dt == "bfloat16" else 2**-10)
    assert not np.array_equal(got[1], [1.0, -2.0, 2.0, 3.0])


@pytest.mark.parametrize("module", ["BatchNorm1d(2)", "InstanceNorm1d(2, track_running_stats=True)"])
def test_a_half_norm_layer_moves_its_statistics_as_pytorchs(module):
    x0 = np.random.default_rng(2).standard_normal((3, 2, 4))
    got = []
    for lib in (torch, tga):
        m = eval(f"lib.nn.{module}", {"lib": lib}).half()  # noqa: S307 - the parameters above
        m(lib.tensor(x0).half())
        got.append(np.concatenate([m.running_mean.float().numpy(), m.running_var.float().numpy()]))
    np.testing.assert_allclose(got[1], got[0], rtol=2**-10, atol=2**-14)
    assert not np.array_equal(got[1], [0.0, 0.0, 1.0, 1.0])
