"""Every named result of PyTorch's ``torch.return_types`` (its own inventory, ``dir``) that an op
we share returns: the class's name and fields, what ``repr`` prints, unpacking, ``isinstance``
against ``tga.return_types.<name>``, and a pickle round trip, against PyTorch's."""

from __future__ import annotations

import pickle
import warnings

import pytest

torch = pytest.importorskip("torch")

import tinygrad_attn as tga  # noqa: E402

#: a call for each return type, on ``A`` (a 3x3 well-conditioned matrix) and ``v`` (a vector)
CALLS = {
    "aminmax": "torch.aminmax(A, dim=0)", "cummax": "torch.cummax(v, 0)", "cummin": "torch.cummin(v, 0)",
    "frexp": "torch.frexp(v)", "geqrf": "torch.geqrf(A)", "histogram": "torch.histogram(v, bins=3)",
    "histogramdd": "torch.histogramdd(A, bins=2)", "kthvalue": "torch.kthvalue(v, 2)",
    "linalg_cholesky_ex": "torch.linalg.cholesky_ex(A @ A.mT)", "linalg_eig": "torch.linalg.eig(A)",
    "linalg_eigh": "torch.linalg.eigh(A @ A.mT)", "linalg_inv_ex": "torch.linalg.inv_ex(A)",
    "linalg_ldl_factor": "torch.linalg.ldl_factor(A @ A.mT)",
    "linalg_ldl_factor_ex": "torch.linalg.ldl_factor_ex(A @ A.mT)", "linalg_lstsq": "torch.linalg.lstsq(A, A)",
    "linalg_lu": "torch.linalg.lu(A)", "linalg_lu_factor": "torch.linalg.lu_factor(A)",
    "linalg_lu_factor_ex": "torch.linalg.lu_factor_ex(A)", "linalg_qr": "torch.linalg.qr(A)",
    "linalg_slogdet": "torch.linalg.slogdet(A)", "linalg_solve_ex": "torch.linalg.solve_ex(A, A)",
    "linalg_svd": "torch.linalg.svd(A)", "lu_unpack": "torch.lu_unpack(*torch.linalg.lu_factor(A))",
    "max": "torch.max(A, 1)", "median": "torch.median(A, 0)", "min": "A.min(dim=0)", "mode": "torch.mode(v)",
    "nanmedian": "torch.nanmedian(v, 0)", "qr": "torch.qr(A)", "sort": "torch.sort(v)", "svd": "torch.svd(A)",
    "topk": "torch.topk(v, 2)", "triangular_solve": "torch.triangular_solve(A, A.triu())",
}  # fmt: skip
CALLS["slogdet"] = "torch.slogdet(A)"
#: named results by an op's other spellings (its method, its older top-level name): each PyTorch's class
ALIASES = [
    "A.slogdet()", "torch.det(A)", "A.det()", "torch.svd(A)", "A.svd()", "torch.qr(A)", "A.qr()", "A.geqrf()",
    "A.max(1)", "A.min(1)", "torch.max(A, dim=0)", "A.sort()", "A.topk(2)", "A.kthvalue(2)", "A.mode()", "A.median(0)",
    "A.nanmedian(0)", "A.cummax(0)", "A.cummin(0)", "A.aminmax()", "A.frexp()", "v.histogram(3)",
    "A.triangular_solve(A.triu())", "torch.lu_unpack(*A.lu())", "torch.std_mean(A)", "torch.var_mean(A, 0)",
    "torch.linalg.eigvals(A)", "torch.linalg.lu_factor_ex(A)", "torch.linalg.cholesky_ex(A @ A.mT, upper=True)",
]  # fmt: skip
KNOWN: dict[str, str] = {}


def _names() -> list[str]:
    """PyTorch's return types: its module's classes, without the ``out=`` twins."""
    return sorted(c.__name__ for c in torch.return_types.all_return_types if not c.__name__.endswith("_out"))


def _run(lib, name: str):
    A = lib.tensor([[4.0, 1.0, 0.5], [1.0, 3.0, 0.25], [0.5, 0.25, 2.0]], dtype=lib.float64)
    v = lib.tensor([3.0, 1.0, 2.0, 1.0], dtype=lib.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return eval(CALLS[name], {"torch": lib, "A": A, "v": v})  # noqa: S307 - the table's own text


def test_the_table_has_every_return_type() -> None:
    assert [n for n in _names() if n not in CALLS] == []


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.xfail(reason=KNOWN[n], strict=True)) if n in KNOWN else n
             for n in sorted(CALLS)]
)  # fmt: skip
def test_named_result_as_pytorchs(name: str) -> None:
    theirs, ours = _run(torch, name), _run(tga, name)
    assert type(ours).__name__ == type(theirs).__name__ == name
    assert isinstance(ours, getattr(tga.return_types, name))
    fields = [f for f in dir(theirs) if not f.startswith("_") and f not in ("count", "index", "n_fields",
                                                                            "n_sequence_fields", "n_unnamed_fields")]  # fmt: skip
    assert sorted(ours._fields) == sorted(fields)
    assert len(ours) == len(theirs)
    if name not in (
        "linalg_eig",
        "linalg_svd",
        "svd",
        "linalg_qr",
        "qr",
        "geqrf",
        "linalg_eigh",
        "linalg_lstsq",
        "linalg_solve_ex",
    ):
        assert repr(ours) == repr(theirs)  # (factorisations: LAPACK's signs and last digits may differ)
    else:
        assert repr(ours).split("=")[0] == repr(theirs).split("=")[0]
    again = pickle.loads(pickle.dumps(ours))
    assert type(again) is type(ours) and all(repr(a) == repr(b) for a, b in zip(again, ours))


@pytest.mark.parametrize("call", ALIASES)
def test_an_other_spelling_names_its_result_as_pytorch(call: str) -> None:
    A = [lib.tensor([[4.0, 1.0, 0.5], [1.0, 3.0, 0.25], [0.5, 0.25, 2.0]], dtype=lib.float64) for lib in (torch, tga)]
    v = [lib.tensor([3.0, 1.0, 2.0, 1.0], dtype=lib.float64) for lib in (torch, tga)]
    theirs, ours = (eval(call, {"torch": lib, "A": a, "v": b}) for lib, a, b in zip((torch, tga), A, v))  # noqa: S307
    assert type(ours).__name__ == type(theirs).__name__
    assert repr(ours).split("(")[0].replace("tinygrad_attn", "torch") == repr(theirs).split("(")[0]
