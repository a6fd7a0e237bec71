"""``tga.func`` (``torch.func``): function transforms over the one autograd engine.

- :func:`vmap` maps a function of tensors over a dimension of its inputs. It runs the
  function once per index of that dimension (on ``x.select(dim, i)``) and stacks the results
  along ``out_dims``, so it gives what PyTorch's batching rules give for any function whose
  value at one index does not depend on the others (every function PyTorch's vmap accepts),
  gradients included; it is a loop, not a batched kernel.
- :func:`grad`, :func:`grad_and_value`, :func:`vjp`, :func:`jvp`, :func:`jacrev`,
  :func:`jacfwd` and :func:`hessian` take derivatives of functions, composable with each other
  and with :func:`vmap` (``vmap(grad(f))`` gives per-sample gradients);
  :func:`functional_call` runs a module with other parameters.

>>> import tinygrad_attn as tga
>>> tga.func.vmap(lambda v: (v * v).sum())(tga.ones(3, 2)).tolist()
[2.0, 2.0, 2.0]
>>> tga.func.grad(lambda v: (v * v).sum())(tga.ones(2)).tolist()
[2.0, 2.0]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..engine import forward_grads as _fg
from ..engine.switches import enable_grad
from ..random import get_rng_state, set_rng_state
from ..tensors._tensor import Tensor, stack
from . import functional as _functional
from .api import grad as _autograd_grad

__all__ = ["vmap", "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "functional_call",
           "stack_module_state", "linearize"]  # fmt: skip


# -- vmap -----------------------------------------------------------------------------------------
def _tree_map(fn: Callable[[Any], Any], tree: Any) -> Any:
    """``fn`` of each leaf of nested tuples, lists and dicts (their structure kept)."""
    if isinstance(tree, (tuple, list)):
        mapped = [_tree_map(fn, t) for t in tree]
        return type(tree)(mapped) if not hasattr(tree, "_fields") else type(tree)(*mapped)
    if isinstance(tree, Mapping):
        return {k: _tree_map(fn, v) for k, v in tree.items()}
    return fn(tree)


def _leaves(tree: Any) -> list[Any]:
    out: list[Any] = []
    _tree_map(out.append, tree)
    return out


def _arg_dims(in_dims: Any, args: tuple) -> list[Any]:
    """One in_dim (an int or None, or a tree of them matching the argument) per positional argument."""
    if isinstance(in_dims, int) or in_dims is None:
        return [in_dims] * len(args)
    if not isinstance(in_dims, (tuple, list)):
        raise ValueError(f"vmap: in_dims must be an int, None or a tuple of them (one per input), got {in_dims!r}")
    if len(in_dims) != len(args):
        raise ValueError(f"vmap: in_dims is compatible with the structure of `inputs`: in_dims has {len(in_dims)} "
                         f"elements but there are {len(args)} inputs")  # fmt: skip
    return list(in_dims)


def _slices(arg: Any, dim: Any, what: str) -> Any:
    """``arg`` with each tensor leaf replaced by ``(tensor, its mapped dim)`` (``None`` when unmapped)."""
    if isinstance(dim, (tuple, list)) and isinstance(arg, (tuple, list)):
        if len(dim) != len(arg):
            raise ValueError(f"vmap: in_dims for {what} has {len(dim)} entries, the input {len(arg)}")
        return type(arg)(_slices(a, d, f"{what}[{i}]") for i, (a, d) in enumerate(zip(arg, dim)))
    if isinstance(dim, Mapping) and isinstance(arg, Mapping):
        return {k: _slices(arg[k], dim[k], f"{what}[{k!r}]") for k in arg}

    def leaf(t: Any) -> Any:
        if dim is None or not isinstance(t, Tensor):
            if dim is not None and not isinstance(t, Tensor):
                raise ValueError(f"vmap: Got in_dim={dim} for {what}, but the input is of type {type(t).__name__}; "
                                 "in_dim must be None for an input that is not a Tensor")  # fmt: skip
            return ("fixed", t)
        if not -max(t.ndim, 1) <= dim < max(t.ndim, 1) or t.ndim == 0:
            raise ValueError(f"vmap: Got in_dim={dim} for {what}, but the input is a Tensor of dimensionality "
                             f"{t.ndim}, so the in_dim must be in the range [-{t.ndim}, {t.ndim})")  # fmt: skip
        return ("mapped", t, dim % t.ndim)

    return _tree_map(leaf, arg)


def _pick(tree: Any, i: int) -> Any:
    def one(leaf: Any) -> Any:
        return leaf[1].select(leaf[2], i) if leaf[0] == "mapped" else leaf[1]

    return _tree_map_marked(one, tree)


def _tree_map_marked(fn: Callable[[Any], Any], tree: Any) -> Any:
    """:func:`_tree_map` whose leaves are the ``("fixed" | "mapped", ...)`` marks of :func:`_slices`."""
    if isinstance(tree, tuple) and tree and tree[0] in ("fixed", "mapped"):
        return fn(tree)
    if isinstance(tree, (tuple, list)):
        return type(tree)(_tree_map_marked(fn, t) for t in tree)
    if isinstance(tree, Mapping):
        return {k: _tree_map_marked(fn, v) for k, v in tree.items()}
    return fn(tree)


def _marked_leaves(tree: Any) -> list[Any]:
    out: list[Any] = []
    _tree_map_marked(out.append, tree)
    return out


def _stacked(results: list[Any], out_dims: Any) -> Any:
    """The per-index results stacked along ``out_dims`` (an int, or a tree of ints like the results)."""
    first = results[0]
    if isinstance(first, Tensor):
        if out_dims is None:
            return first
        if not isinstance(out_dims, int):
            raise ValueError(f"vmap: out_dims must be an int or None for a Tensor output, got {out_dims!r}")
        if not -(first.ndim + 1) <= out_dims <= first.ndim:  # (the result has one more dimension than each output)
            raise IndexError(f"vmap: Dimension out of range (expected to be in range of [{-(first.ndim + 1)}, "
                             f"{first.ndim}], but got {out_dims})")  # fmt: skip
        return stack(results, dim=out_dims % (first.ndim + 1))
    if isinstance(first, (tuple, list)):
        dims = out_dims if isinstance(out_dims, (tuple, list)) else [out_dims] * len(first)
        if len(dims) != len(first):
            raise ValueError(f"vmap: out_dims has {len(dims)} entries but the function returned {len(first)} outputs")
        parts = [_stacked([r[k] for r in results], d) for k, d in enumerate(dims)]
        return type(first)(*parts) if hasattr(first, "_fields") else type(first)(parts)
    if isinstance(first, Mapping):
        dims = out_dims if isinstance(out_dims, Mapping) else dict.fromkeys(first, out_dims)
        return {k: _stacked([r[k] for r in results], dims[k]) for k in first}
    raise ValueError(f"vmap: `func` must only return Tensors, got type {type(first).__name__}; return a Tensor "
                     "(tga.tensor(x)) instead of a Python value")  # fmt: skip


def vmap(func: Callable[..., Any], in_dims: Any = 0, out_dims: Any = 0, randomness: str = "error", *,
         chunk_size: int | None = None) -> Callable[..., Any]:  # fmt: skip
    """``func`` mapped over dimension ``in_dims`` of its inputs (an int for every input, or one
    per positional input, ``None`` for an input that is passed whole), its outputs stacked along
    ``out_dims``: ``vmap(f)(x)[i]`` is ``f(x[i])``. ``randomness="same"`` draws the same numbers
    at each index, ``"different"`` (and ``"error"``, as nothing is batched here) new ones."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size < 1):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    def mapped(*args: Any, **kwargs: Any) -> Any:
        dims = _arg_dims(in_dims, args)
        marked = tuple(_slices(a, d, f"input {i}") for i, (a, d) in enumerate(zip(args, dims)))
        sizes = [leaf[1].shape[leaf[2]] for leaf in _marked_leaves(marked) if leaf[0] == "mapped"]
        if not sizes:
            raise ValueError(f"vmap(f, in_dims={in_dims}, ...)(<inputs>): at least one input must be a Tensor mapped "
                             "over a dimension (in_dims not None)")  # fmt: skip
        if len(set(sizes)) != 1:
            raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                             f"{sizes} for the mapped dimension")  # fmt: skip
        state = get_rng_state() if randomness == "same" else None
        results = []
        for i in range(sizes[0]):
            if state is not None:
                set_rng_state(state)
            results.append(func(*_pick(marked, i), **kwargs))
        return _stacked(results, out_dims)

    return mapped


# -- derivatives ----------------------------------------------------------------------------------
def _selected(args: tuple, argnums: int | tuple[int, ...], who: str) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    if not nums:
        raise RuntimeError(f"{who}: argnums must be non-empty")
    for n in nums:
        if not isinstance(n, int) or not -len(args) <= n < len(args):
            raise RuntimeError(f"{who}: Got argnums={argnums}, but only {len(args)} positional inputs")
    return tuple(n % len(args) for n in nums)


def _differentiable(x: Any, who: str) -> Tensor:
    """``x`` as a tensor that records the ops on it and stays joined to ``x``'s own graph (so
    transforms nest: the gradient of a gradient)."""
    if not isinstance(x, Tensor) or x.dtype.kind not in "fc":
        raise RuntimeError(f"{who}: only floating-point Tensor inputs can be differentiated, got "
                           f"{getattr(x, 'dtype', type(x).__name__)}")  # fmt: skip
    return _own_leaf(x)


def _fresh(joined: Any, given: Any) -> set[int]:
    """The ids of the leaves a transform made for its inputs (``given``) that did not require grad."""
    before = {id(t) for t in _leaves(given)}
    return {id(t) for t in _leaves(joined) if isinstance(t, Tensor) and t._ctx is None and id(t) not in before}


def _reaches_outside(t: Tensor, inner: set[int]) -> bool:
    """Whether ``t``'s graph reaches a leaf that requires grad other than the transform's own
    (``inner``): a result that reaches none depends on nothing outside the transform, and
    comes out without a graph, as PyTorch's (whose transforms differentiate at their own level)."""
    seen: set[int] = set()
    stack = [t]
    while stack:
        u = stack.pop()
        if u._ctx is None:
            if u.requires_grad and id(u) not in inner:
                return True
            continue
        if id(u._ctx) in seen:
            continue
        seen.add(id(u._ctx))
        stack.extend(i for i in (u._ctx.inputs or ()) if isinstance(i, Tensor))
    return False


def _joined(args: tuple, nums: tuple[int, ...], who: str) -> tuple[tuple, list[Any]]:
    new = list(args)
    for n in nums:
        new[n] = _tree_map(lambda t: _differentiable(t, who), args[n])
    return tuple(new), new


def _keeps_graph(args: tuple) -> bool:
    return any(isinstance(t, Tensor) and t.requires_grad for t in _leaves(args))


def _out(t: Any, keep: bool, inner: set[int] | None = None) -> Any:
    def one(x: Any) -> Any:
        if not isinstance(x, Tensor) or (keep and (inner is None or (x.requires_grad and _reaches_outside(x, inner)))):
            return x
        return x.detach()

    return _tree_map(one, t)


def grad_and_value(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0,
                   has_aux: bool = False) -> Callable[..., Any]:  # fmt: skip
    """``(gradient, value)``: ``func``'s (a scalar tensor; with ``has_aux``, ``(scalar, aux)``)
    gradient with respect to its input ``argnums`` (a tuple of them: a tuple of gradients)."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        who = "grad_and_value(f)(*args)"
        nums = _selected(args, argnums, who)
        keep = _keeps_graph(args)
        with enable_grad():
            joined, _ = _joined(args, nums, who)
            result = func(*joined, **kwargs)
            if has_aux:
                if not isinstance(result, (tuple, list)) or len(result) != 2:
                    raise RuntimeError(f"{who}: output of function f should be a tuple: (output, aux) if has_aux is "
                                       "True")  # fmt: skip
                value, aux = result
            else:
                value, aux = result, None
            if not isinstance(value, Tensor) or value.ndim != 0:
                got = f"tensor with {value.ndim} dims" if isinstance(value, Tensor) else type(value).__name__
                raise RuntimeError(f"{who}: Expected f(*args) to return a scalar Tensor, got {got}. Maybe you wanted "
                                   "to use the vjp or jacrev APIs instead?")  # fmt: skip
            inputs = [leaf for n in nums for leaf in _leaves(joined[n])]
            grads = _autograd_grad(value, inputs, create_graph=True, allow_unused=True) if value.requires_grad \
                else [None] * len(inputs)  # fmt: skip
        grads = [g if g is not None else x.detach().new_zeros(x.shape) for g, x in zip(grads, inputs)]
        it = iter(_out(list(grads), keep, _fresh(joined, args)))
        per_arg = [_tree_map(lambda _: next(it), joined[n]) for n in nums]
        g = per_arg[0] if isinstance(argnums, int) else tuple(per_arg)
        v = _out(value, keep)
        return (g, (v, _out(aux, keep))) if has_aux else (g, v)

    return wrapper


def grad(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0, has_aux: bool = False) -> Callable[..., Any]:
    """The gradient of ``func`` (a scalar tensor) with respect to input ``argnums``: ``grad(f)(x)``
    is ``df/dx`` (with ``has_aux``, ``(df/dx, aux)``)."""
    both = grad_and_value(func, argnums, has_aux)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        g, value = both(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper


def vjp(func: Callable[..., Any], *primals: Any, has_aux: bool = False) -> Any:
    """``(func(*primals), vjp_fn)``: ``vjp_fn(cotangents)`` is the tuple of the vector-Jacobian
    products, one per primal (``(output, vjp_fn, aux)`` with ``has_aux``)."""
    who = "vjp(f, *primals)"
    keep = _keeps_graph(primals)
    with enable_grad():
        joined, _ = _joined(primals, tuple(range(len(primals))), who)
        result = func(*joined)
    out, aux = result if has_aux else (result, None)
    outs = _leaves(out)
    inputs = _leaves(joined)

    def vjp_fn(cotangents: Any, retain_graph: bool = True, create_graph: bool | None = None) -> tuple:
        cts = _leaves(cotangents)
        if len(cts) != len(outs):
            raise RuntimeError(f"{who}: expected {len(outs)} cotangents, one per output, got {len(cts)}")
        with enable_grad():
            pairs = [(o, c) for o, c in zip(outs, cts) if o.requires_grad]
            grads = _autograd_grad([o for o, _ in pairs], inputs, [c for _, c in pairs], retain_graph=True,
                                   create_graph=True, allow_unused=True) if pairs else [None] * len(inputs)  # fmt: skip
        grads = [g if g is not None else x.detach().new_zeros(x.shape) for g, x in zip(grads, inputs)]
        it = iter(_out(list(grads), keep or bool(create_graph), None if create_graph else _fresh(joined, primals)))
        return tuple(_tree_map(lambda _: next(it), p) for p in joined)

    return (_out(out, keep), vjp_fn, _out(aux, keep)) if has_aux else (_out(out, keep), vjp_fn)


def jvp(func: Callable[..., Any], primals: Any, tangents: Any, *, strict: bool = False, has_aux: bool = False) -> Any:
    """``(func(*primals), J @ tangents)``: the Jacobian-vector product (``torch.func.jvp``); with
    ``has_aux``, ``func`` returns ``(output, aux)`` and ``aux`` comes third, not differentiated."""
    _refuse_nested_forward()
    if not isinstance(primals, tuple) or not isinstance(tangents, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to be tuples")
    keep = _keeps_graph(primals) or _keeps_graph(tangents)
    aux: list[Any] = []
    if has_aux:
        inner = func

        def func(*xs: Any) -> Any:
            result = inner(*xs)
            if not isinstance(result, tuple) or len(result) != 2:
                raise RuntimeError("jvp(f, primals, tangents): output of function f should be a tuple: (output, aux) "
                                   "if has_aux is True")  # fmt: skip
            aux[:] = [result[1]]
            return result[0]

    joined = tuple(_own_leaf(p) for p in primals)
    result = _functional.jvp(func, joined, tangents, strict=strict, create_graph=keep)
    # (a result that reaches none of the leaves the transform made, nor any other, comes out without a graph)
    result = _out(result, keep, _fresh(joined, primals))
    return (*result, _out(aux[0], keep, _fresh(joined, primals))) if has_aux else result


def _own_leaf(t: Any) -> Any:
    """A floating-point tensor ``t`` as the transform differentiates it: joined to its graph where it
    requires grad, else a leaf of the transform's own; anything else as it is (the functional API says
    what is wrong with it)."""
    if not isinstance(t, Tensor) or t.dtype.kind not in "fc":
        return t
    return t.view_as(t) if t.requires_grad else t.detach().requires_grad_(True)


def _refuse_nested_forward() -> None:
    """PyTorch's forward-mode transforms (``jvp``, ``jacfwd``, ``hessian``) open a dual level of their own, which
    one already open (``forward_ad.dual_level``) refuses."""
    if _fg.current_level() >= 0:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")


def _jacobian(func: Callable[..., Any], argnums: int | tuple[int, ...], has_aux: bool, who: str) -> Callable:
    def wrapper(*args: Any) -> Any:
        if who == "jacfwd":
            _refuse_nested_forward()
        nums = _selected(args, argnums, who)
        aux: list[Any] = []
        dtypes: list[Any] = []  # the outputs'
        trees = [args[n] for n in nums]  # (each a tensor or a tree of them: tuples, lists, dicts)
        counts = [len(_leaves(t)) for t in trees]

        def regrouped(flat: Sequence[Any]) -> tuple:
            """Per selected argument, the entries of ``flat`` (one per leaf of all of them) in its tree."""
            it = iter(flat)
            return tuple(_tree_map(lambda _: next(it), t) for t in trees)

        def of_selected(*chosen: Any) -> Any:
            full = list(args)
            for n, c in zip(nums, regrouped(chosen)):
                full[n] = c
            result = func(*full)
            if has_aux:
                result, a = result
                aux[:] = [a]
            dtypes[:] = [o.dtype for o in _leaves(result) if isinstance(o, Tensor)]
            return result

        chosen = tuple(_own_leaf(x) for t in trees for x in _leaves(t))
        jac = _functional.jacobian(of_selected, chosen, create_graph=True)
        keep = _keeps_graph(args)
        inner = _fresh(chosen, args)
        out_is_tuple = isinstance(jac, tuple) and jac and isinstance(jac[0], tuple)
        if who == "jacfwd":  # (forward mode carries tangents in each output's dtype)
            rows = jac if out_is_tuple else (jac,)
            rows = tuple(tuple(b.to(dt) for b in row) for row, dt in zip(rows, dtypes))
            jac = rows if out_is_tuple else rows[0]
        if counts != [1] * len(trees) or any(not isinstance(t, Tensor) for t in trees):  # (blocks in each input's tree)
            jac = tuple(regrouped(row) for row in jac) if out_is_tuple else regrouped(jac)
        if isinstance(argnums, int):  # (one input: no inner tuple per output)
            jac = tuple(j[0] for j in jac) if out_is_tuple else jac[0]
        jac = _out(jac, keep, inner)
        return (jac, _out(aux[0], keep)) if has_aux else jac

    return wrapper


def jacrev(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0, *, has_aux: bool = False,
           chunk_size: int | None = None, _preallocate_and_copy: bool = False) -> Callable[..., Any]:  # fmt: skip
    """The Jacobian of ``func`` with respect to input ``argnums``, shaped ``output.shape +
    input.shape`` (row by row, by reverse mode; ``_preallocate_and_copy``, PyTorch's choice of
    how chunks are stored, gives the same values)."""
    return _jacobian(func, argnums, has_aux, "jacrev")


def jacfwd(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0, has_aux: bool = False, *,
           randomness: str = "error") -> Callable[..., Any]:  # fmt: skip
    """:func:`jacrev`'s Jacobian (the same numbers; computed here by reverse mode as well)."""
    return _jacobian(func, argnums, has_aux, "jacfwd")


def hessian(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0) -> Callable[..., Any]:
    """The Jacobian of the Jacobian: ``jacfwd(jacrev(func, argnums), argnums)``."""
    return jacfwd(jacrev(func, argnums), argnums)


def functional_call(module: Any, parameter_and_buffer_dicts: Any, args: Any = None, kwargs: Any = None, *,
                    tie_weights: bool = True, strict: bool = False) -> Any:  # fmt: skip
    """``module(*args, **kwargs)`` with its parameters and buffers replaced by those named in
    ``parameter_and_buffer_dicts`` (a dict, or a sequence of dicts merged) for the call.
    ``strict=True`` raises ``RuntimeError`` naming the keys the module lacks and those of its
    parameters and buffers not given, as PyTorch's; otherwise a name the module lacks is unused."""
    from ..nn.module import functional_call as _call  # noqa: PLC0415 - (tga.nn loads on first use)

    tensors: dict[str, Any] = {}
    for d in [parameter_and_buffer_dicts] if isinstance(parameter_and_buffer_dicts, Mapping) \
            else parameter_and_buffer_dicts:  # fmt: skip
        overlap = set(tensors) & set(d)
        if overlap:
            raise ValueError(f"functional_call: {sorted(overlap)} appeared in multiple dictionaries")
        tensors.update(d)
    names = {n for n, _ in module.named_parameters(remove_duplicate=False)}
    names |= {n for n, _ in module.named_buffers(remove_duplicate=False)}
    if strict:  # (PyTorch's message: the names given that the module lacks, then those it has but not given)
        unexpected, missing = [n for n in tensors if n not in names], sorted(names - set(tensors))
        if unexpected or missing:
            lines = [f"Error(s) in reparametrizing for {type(module).__name__}:"]
            if unexpected:
                lines.append("\tUnexpected key(s): " + ", ".join(f"'{n}'" for n in unexpected) + ".")
            if missing:
                lines.append("\tMissing key(s): " + ", ".join(f"'{n}'" for n in missing) + ".")
            raise RuntimeError("\n".join(lines))
    else:  # (PyTorch sets a name the module lacks as a plain attribute for the call, which the call never reads)
        tensors = {n: t for n, t in tensors.items() if n in names}
    call_args = () if args is None else args if isinstance(args, tuple) else (args,)
    return _call(module, tensors, *call_args, **(kwargs or {}))


def stack_module_state(models: Any) -> tuple[dict[str, Tensor], dict[str, Tensor]]:
    """The parameters and buffers of ``models`` (of one class, all training or all not), each
    name's tensors stacked along a new first dimension: ``(params, buffers)``, for
    ``vmap`` over :func:`functional_call`. A stacked parameter is a new leaf that requires grad."""
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    if any(type(m) is not type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def stacked(tensors: list[Tensor], name: str) -> Tensor:
        wanted = [t.requires_grad for t in tensors]
        if any(wanted) and not all(wanted):
            raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
        out = stack(tensors)
        return out.detach().requires_grad_() if all(wanted) else out

    params = [dict(m.named_parameters()) for m in models]
    buffers = [dict(m.named_buffers()) for m in models]
    return ({k: stacked([p[k] for p in params], k) for k in params[0]},
            {k: stacked([b[k] for b in buffers], k) for k in buffers[0]})  # fmt: skip


def linearize(func: Callable[..., Any], *primals: Any) -> tuple[Any, Callable[..., Any]]:
    """``(func(*primals), jvp_fn)``: ``jvp_fn(*tangents)`` is the Jacobian of ``func`` at ``primals``
    times ``tangents`` (each of its primal's shape and dtype, as PyTorch checks)."""
    out = _tree_map(lambda t: t.detach() if isinstance(t, Tensor) else t, func(*primals))

    def jvp_fn(*tangents: Any) -> Any:
        if len(tangents) != len(primals):
            raise RuntimeError(f"linearize: expected {len(primals)} tangents, one per primal, got {len(tangents)}")
        for i, (t, p) in enumerate(zip(tangents, primals)):
            if not isinstance(t, Tensor) or not isinstance(p, Tensor):
                raise RuntimeError(f"linearize: tangent:{i} is a {type(t).__name__}, its primal a {type(p).__name__}")
            if tuple(t.shape) != tuple(p.shape):
                raise RuntimeError(f"tangent:{i} with shape {t.shape} in flattened pytree doesn't match the shape "
                                   f"{p.shape} of the corresponding primal.")  # fmt: skip
            if t.dtype != p.dtype:
                raise RuntimeError(f"tangent:{i} with dtype {t.dtype} in flattened pytree doesn't match the dtype "
                                   f"{p.dtype} of the corresponding primal.")  # fmt: skip
        return jvp(func, primals, tangents)[1]

    return out, jvp_fn
