"""``tga.compiler`` and ``tga.version``: PyTorch's names, and what code that checks them sees."""

from __future__ import annotations

import pytest

import tinygrad_attn as tga

torch = pytest.importorskip("torch")


def test_compiler_names_are_pytorchs() -> None:
    assert set(tga.compiler.__all__) <= set(torch.compiler.__all__)
    for name in tga.compiler.__all__:
        assert callable(getattr(tga.compiler, name)), name


def test_is_compiling_inside_a_compiled_function_only() -> None:
    @tga.compile
    def f(x):
        return x * 3 if tga.compiler.is_compiling() else x * 2  # (the branch taken is what the trace records)

    assert not tga.compiler.is_compiling()
    assert f(tga.ones(2)).tolist() == [3.0, 3.0]  # (traced)
    assert f(tga.ones(2)).tolist() == [3.0, 3.0]  # (replayed)
    assert not tga.compiler.is_compiling()


def test_the_dynamo_switches_return_the_function() -> None:
    def g(x):
        return x + 1

    assert tga.compiler.disable(g) is g and tga.compiler.disable()(g) is g
    assert tga.compiler.allow_in_graph(g) is g and tga.compiler.assume_constant_result(g) is g
    assert tga.compiler.reset() is None and tga.compiler.is_exporting() is False


def test_version_module_has_pytorchs_names() -> None:
    import importlib.util  # noqa: PLC0415

    for name in ("cuda", "hip", "debug", "git_version", "__version__"):
        assert hasattr(tga.version, name) and hasattr(torch.version, name), name
    assert tga.version.__version__ == tga.__version__
    assert tga.version.debug is False and tga.version.hip is None
    if importlib.util.find_spec("cupy") is None:  # (no GPU backend: PyTorch's CPU build answers None)
        assert tga.version.cuda is None
    else:
        assert isinstance(tga.version.cuda, (str, type(None)))
    import tinygrad_attn.compiler  # noqa: F401, PLC0415 - PyTorch's import path works
    import tinygrad_attn.version  # noqa: F401, PLC0415
