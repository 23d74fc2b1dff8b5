"""torch.func's autodiff transforms on JAX's: grad, grad_and_value, vjp, jvp, jacrev, jacfwd,
hessian and linearize.  Each is the JAX transform of ``func`` run on Tensors holding the traced
arrays, recorded as one op of the eager graph (NOTE [ lifted transforms ] in _lift.py), so
transforms nest (``grad(grad(f))``, ``vmap(grad(f))``, ``jacrev(jacrev(f))``) and their results
stay differentiable by ``.backward()``.
"""
import functools
import math

import jax
import jax.numpy as jnp

from .. import _x64
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from . import _lift as lift
from . import _vmap


# --- argument handling ----------------------------------------------------------------------------

def _argnums(argnums, n):
    """``argnums`` as a tuple of positions, and whether it was given as a tuple."""
    if isinstance(argnums, tuple):
        if not argnums:
            raise RuntimeError("argnums must be non-empty")
        if not all(isinstance(a, int) for a in argnums):
            raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
        if len(set(argnums)) != len(argnums):
            raise RuntimeError(f"argnums elements must be unique, got {argnums}")
        nums, is_tuple = argnums, True
    elif isinstance(argnums, int):
        nums, is_tuple = (argnums,), False
    else:
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    for a in nums:
        if not -n <= a < n:
            raise RuntimeError(f"Got argnum={a}, but only {n} positional inputs")
    return tuple(a % n for a in nums), is_tuple


def _check_primal(x, forward=False, what=None):
    if not isinstance(x, Tensor):
        if what:
            raise RuntimeError(f"{what}: Expected primals to only contain Tensors, got {type(x)}")
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        if forward:
            raise ValueError(f"Expected primal to be floating point or complex, but got: {x.dtype}")
        raise RuntimeError("only Tensors of floating point dtype can require gradients")


_MUTATION = ("During a grad (vjp, jvp, grad, etc) transform, the function provided attempted to "
             "call an in-place operation that would mutate a captured Tensor. This is not "
             "supported; please rewrite the function being transformed to explicitly accept the "
             "mutated Tensor(s) as inputs.")


def _check_like(leaves, meta, mismatch):
    """PyTorch's errors for cotangents / tangents ``leaves`` that are not Tensors of the shapes
    in ``meta`` ((shape, dtype) per leaf); ``mismatch(i, got, shape)`` words a shape error."""
    for i, (x, (shape, _)) in enumerate(zip(leaves, meta)):
        if not isinstance(x, Tensor):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(x)}")
        if x.shape != shape:
            raise RuntimeError(mismatch(i, x.shape, shape))


def _spec(tree):
    """A pytree's structure as torch prints it in messages: ``*`` for a leaf."""
    if isinstance(tree, tuple):
        inner = ", ".join(_spec(v) for v in tree)
        return f"({inner},)" if len(tree) == 1 else f"({inner})"
    if isinstance(tree, list):
        return "[" + ", ".join(_spec(v) for v in tree) + "]"
    if isinstance(tree, dict):
        return "{" + ", ".join(f"{k!r}: {_spec(v)}" for k, v in tree.items()) + "}"
    return "*"


def _split_aux(out, has_aux, what):
    if not has_aux:
        return out, ()
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(f"{what}: output of function f should be a tuple: (output, aux) if "
                           "has_aux is True")
    return out


def _aux_arrays(aux):
    leaves, tree = lift.flatten(aux)
    for x in leaves:
        if not isinstance(x, Tensor):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(x)}")
    return [x._value() for x in leaves], tree


def _out_arrays(out, what):
    leaves, tree = lift.flatten(out)
    for x in leaves:
        if not isinstance(x, Tensor):
            raise RuntimeError(f"{what}: expected f(*primals) to return only tensors, got "
                               f"unsupported type {type(x)}")
    return [x._value() for x in leaves], tree


def _unflatten(tree, leaves):
    return jax.tree_util.tree_unflatten(tree, list(leaves))


class _Diff:
    """A call of ``func`` whose positional arguments ``nums`` are differentiated: their Tensor
    leaves (``n`` of them) come first among ``tensors``, the other arguments' Tensors after."""

    def __init__(self, func, args, kwargs, nums, forward=False, what=None):
        self.func, self.args, self.kwargs, self.nums = func, args, kwargs, nums
        self.leaves, self.tree = lift.flatten(tuple(args[i] for i in nums))
        for x in self.leaves:
            _check_primal(x, forward, what)
        rest = list(args)
        for i in nums:
            rest[i] = None
        self.rest = lift.Bound(rest, kwargs)
        self.tensors = self.leaves + self.rest.tensors
        self.n = len(self.leaves)
        self.state = lift.capture(func, args, kwargs, self.tensors)

    def call(self, arrays):
        """``func`` on Tensors holding ``arrays`` (the differentiated ones, then the rest)."""
        args, kwargs = self.rest.rebuild(arrays[self.n:])
        diff = _unflatten(self.tree, [Tensor._wrap(a) for a in arrays[:self.n]])
        args = list(args)
        for i, d in zip(self.nums, diff):
            args[i] = d
        with no_grad(), self.state.guarding(lambda t: _MUTATION, any_write=True):
            return self.func(*args, **kwargs)

    def args_tree(self, leaves, is_tuple=True):
        """Per differentiated argument, ``leaves`` in its structure."""
        trees = _unflatten(self.tree, leaves)
        return trees if is_tuple else trees[0]


# --- grad -----------------------------------------------------------------------------------------

@_x64.scoped
def _grad_and_value(func, argnums, has_aux, args, kwargs):
    nums, is_tuple = _argnums(argnums, len(args))
    d = _Diff(func, args, kwargs, nums)
    what = "grad_and_value(f)(*args)"
    info = {}

    def fn(*arrays):
        rest = list(arrays[d.n:])

        def f(diff):
            out, aux = _split_aux(d.call(list(diff) + rest), has_aux, what)
            if not isinstance(out, Tensor):
                raise RuntimeError(f"{what}: Expected f(*args) to return a Tensor, got "
                                   f"{type(out)}")
            if out.ndim != 0:
                raise RuntimeError(f"{what}: Expected f(*args) to return a scalar Tensor, got "
                                   f"tensor with {out.ndim} dims. Maybe you wanted to use the "
                                   "vjp or jacrev APIs instead?")
            aux_arrays, info["aux"] = _aux_arrays(aux)
            return out._value(), aux_arrays
        (value, aux), grads = jax.value_and_grad(f, has_aux=True)(list(arrays[:d.n]))
        return (*grads, value, *aux)
    outs = lift.lifted_call("Grad", fn, d.tensors, d.state)
    grads = d.args_tree(outs[:d.n], is_tuple)
    value = outs[d.n]
    if has_aux:
        return grads, (value, _unflatten(info["aux"], outs[d.n + 1:]))
    return grads, value


def grad_and_value(func, argnums=0, has_aux=False):
    """Mirrors ``torch.func.grad_and_value``: like ``grad``, returning ``(gradient, value)``
    (``(gradient, (value, aux))`` with ``has_aux``).

    Example::

        >>> g, v = torchlike.func.grad_and_value(lambda x: (x ** 2).sum())(torchlike.ones(3))
    """
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return _grad_and_value(func, argnums, has_aux, args, kwargs)
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """Mirrors ``torch.func.grad``: the gradient of a function returning a scalar Tensor
    (``jax.grad`` of ``func`` run on Tensors holding the traced arrays).

    Args:
        func: a function of Tensors (pytrees of them) returning a scalar Tensor, or
            ``(scalar, aux)`` with ``has_aux``.
        argnums: the positional argument (int) or arguments (tuple of ints) to differentiate.
        has_aux: ``func`` returns ``(output, aux)``; ``aux`` (Tensors) is returned as well.

    Returns:
        A function returning the gradient (same structure as the differentiated argument, or a
        tuple of them for a tuple ``argnums``), and ``aux`` with ``has_aux``.

    Example::

        >>> x = torchlike.randn(3)
        >>> torchlike.func.grad(lambda x: x.sin().sum())(x)   # == x.cos()
    """
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        grads, value = _grad_and_value(func, argnums, has_aux, args, kwargs)
        return (grads, value[1]) if has_aux else grads
    return wrapper


# --- vjp ------------------------------------------------------------------------------------------

@_x64.scoped
def vjp(func, *primals, has_aux=False):
    """Mirrors ``torch.func.vjp``: ``func(*primals)`` and a function computing vector-Jacobian
    products at ``primals`` (``jax.vjp``).

    Returns:
        ``(output, vjp_fn)``, or ``(output, vjp_fn, aux)`` with ``has_aux``.
        ``vjp_fn(cotangents)`` takes cotangents shaped like ``output`` and returns a tuple with
        one gradient per primal.

    Example::

        >>> out, vjp_fn = torchlike.func.vjp(torchlike.sin, x)
        >>> (g,) = vjp_fn(torchlike.ones_like(out))   # == x.cos()
    """
    d = _Diff(func, primals, {}, tuple(range(len(primals))))
    what = "vjp(f, *primals)"
    info = {}

    def f(diff):
        out, aux = _split_aux(d.call(diff), has_aux, what)
        out_arrays, info["out"] = _out_arrays(out, what)
        aux_arrays, info["aux"] = _aux_arrays(aux)
        return out_arrays, aux_arrays

    def fn(*arrays):
        out, pull, aux = jax.vjp(f, list(arrays), has_aux=True)
        info.setdefault("pull", pull)
        return (*out, *aux)
    state = d.state
    outs = lift.lifted_call("Vjp", fn, d.tensors, state)
    n_out = info["out"].num_leaves
    output = _unflatten(info["out"], outs[:n_out])
    out_meta = [(o.shape, o.dtype) for o in outs[:n_out]]
    pull = info.pop("pull")

    @_x64.scoped
    def vjp_fn(cotangents, retain_graph=True, create_graph=None):
        leaves, tree = lift.flatten(cotangents)
        if tree != info["out"]:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree "
                               "structure of outputs to the function. cotangents: "
                               f"{_spec(cotangents)}, primal output: {_spec(output)}")
        _check_like(leaves, out_meta, lambda i, got, shape: (
            f"Mismatch in shape: grad_output[{i}] has a shape of {got} and output[{i}] has a "
            f"shape of {shape}."))
        dtypes = [dt._np for _, dt in out_meta]

        def fn_vjp(*arrays):
            cts = [c.astype(dt) for c, dt in zip(arrays[len(d.tensors):], dtypes)]
            return tuple(jax.vjp(f, list(arrays[:len(d.tensors)]), has_aux=True)[1](cts)[0])
        cts = [c._value().astype(dt) for c, dt in zip(leaves, dtypes)]
        out = tuple(pull(cts)[0])
        grads = lift.lifted_call("VjpFn", fn_vjp, d.tensors + leaves, state, out=out)
        return d.args_tree(grads)
    if has_aux:
        return output, vjp_fn, _unflatten(info["aux"], outs[n_out:])
    return output, vjp_fn


# --- jvp and linearize ----------------------------------------------------------------------------

_JVP = "jvp(f, primals, tangents)"


def _check_tangents(p_leaves, t_leaves):
    for p, t in zip(p_leaves, t_leaves):
        if not isinstance(t, Tensor):
            raise RuntimeError(f"{_JVP}: Expected tangents to only contain Tensors, got "
                               f"{type(t)}")
        if t.shape != p.shape:
            raise RuntimeError("Trying to set a forward gradient that has a different size than "
                               "that of the original Tensor, this is not supported. Tensor is of "
                               f"size {list(p.shape)} while the given forward gradient is of size "
                               f"{list(t.shape)}.")


@_x64.scoped
def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """Mirrors ``torch.func.jvp``: ``func(*primals)`` and its Jacobian-vector product with
    ``tangents`` (``jax.jvp``).

    Args:
        func: a function of Tensors returning Tensors (or ``(output, aux)`` with ``has_aux``).
        primals: a tuple of the arguments (pytrees of Tensors).
        tangents: a tuple with the structure and shapes of ``primals``.
        strict: raise if an output does not depend on the inputs.

    Returns:
        ``(output, jvp_out)``, or ``(output, jvp_out, aux)`` with ``has_aux``.

    Example::

        >>> out, tangent = torchlike.func.jvp(torchlike.sin, (x,), (torchlike.ones_like(x),))
    """
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{_JVP}: Expected primals to be a tuple. E.g. it should be valid to "
                           "call f(*primals).")
    p_leaves, p_tree = lift.flatten(primals)
    t_leaves, t_tree = lift.flatten(tangents)
    if p_tree != t_tree:
        raise RuntimeError(f"{_JVP}: Expected primals and tangents to have the same python "
                           "structure. For example, if primals is a tuple of 3 tensors, tangents "
                           f"also must be. Got primals with structure {_spec(primals)} and "
                           f"tangents with structure {_spec(tangents)}")
    if not p_leaves:
        raise RuntimeError(f"{_JVP}: Expected primals to contain at least one Tensor.")
    d = _Diff(func, primals, {}, tuple(range(len(primals))), forward=True, what=_JVP)
    _check_tangents(p_leaves, t_leaves)
    info = {}

    def fn(*arrays):
        primal = list(arrays[:d.n])
        tangent = [t.astype(p.dtype) for t, p in zip(arrays[d.n:], primal)]

        def f(diff):
            out, aux = _split_aux(d.call(diff), has_aux, _JVP)
            out_arrays, info["out"] = _out_arrays(out, _JVP)
            trace = getattr(diff[0], "_trace", None)
            if strict and trace is not None and any(
                    getattr(o, "_trace", None) is not trace for o in out_arrays):
                raise RuntimeError(f"{_JVP[:-1]}, strict=True): The output of f is independent of "
                                   "the inputs. This is not allowed with strict=True.")
            aux_arrays, info["aux"] = _aux_arrays(aux)
            return out_arrays, aux_arrays
        out, tan, aux = jax.jvp(f, (primal,), (tangent,), has_aux=True)
        return (*out, *tan, *aux)
    outs = lift.lifted_call("Jvp", fn, d.tensors + t_leaves, d.state)
    n = info["out"].num_leaves
    result = (_unflatten(info["out"], outs[:n]), _unflatten(info["out"], outs[n:2 * n]))
    if has_aux:
        return result + (_unflatten(info["aux"], outs[2 * n:]),)
    return result


@_x64.scoped
def linearize(func, *primals):
    """Mirrors ``torch.func.linearize``: ``func(*primals)`` and a function computing
    Jacobian-vector products at ``primals`` (``jax.linearize``: the linearization is computed
    once and reused by every call).

    Returns:
        ``(output, jvp_fn)``; ``jvp_fn(*tangents)`` takes tangents shaped like ``primals``.

    Example::

        >>> out, jvp_fn = torchlike.func.linearize(torchlike.sin, x)
        >>> jvp_fn(torchlike.ones_like(x))   # == x.cos()
    """
    what = "linearize(f, *primals)"
    d = _Diff(func, primals, {}, tuple(range(len(primals))), forward=True)
    p_meta = [(p.shape, p.dtype) for p in d.leaves]
    info = {}

    def f(diff):
        out_arrays, info["out"] = _out_arrays(d.call(diff), what)
        return out_arrays

    def fn(*arrays):
        out, f_jvp = jax.linearize(f, list(arrays))
        info.setdefault("jvp", f_jvp)
        return tuple(out)
    state = d.state
    outs = lift.lifted_call("Linearize", fn, d.tensors, state)
    output = _unflatten(info["out"], outs)
    f_jvp = info.pop("jvp")

    @_x64.scoped
    def jvp_fn(*tangents):
        leaves, tree = lift.flatten(tangents)
        if tree != lift.flatten(tuple(primals))[1]:
            raise RuntimeError(f"Expected the tangents {_spec(tangents)} to have the same argspec "
                               f"as the primals {_spec(tuple(primals))}")
        _check_like(leaves, p_meta, lambda i, got, shape: (
            f"tangent:{i} with shape {got} in flattened pytree doesn't match the shape {shape} "
            "of the corresponding primal."))
        dtypes = [dt._np for _, dt in p_meta]

        def fn_jvp(*arrays):
            primal = list(arrays[:d.n])
            tangent = [t.astype(dt) for t, dt in zip(arrays[d.n:], dtypes)]
            return tuple(jax.jvp(f, (primal,), (tangent,))[1])
        out = tuple(f_jvp([t._value().astype(dt) for t, dt in zip(leaves, dtypes)]))
        res = lift.lifted_call("LinearizeJvp", fn_jvp, d.tensors + leaves, state, out=out)
        return _unflatten(info["out"], res)
    return output, jvp_fn


# --- Jacobians ------------------------------------------------------------------------------------

def _basis(metas, rows, dtype_of):
    """Rows ``rows`` (a range) of the identity over the concatenated flattened ``metas``
    (shape, dtype), split back into one batched array per entry."""
    out, offset = [], 0
    n_rows = len(rows)
    for shape, dt in metas:
        size = math.prod(shape)
        cols = jnp.arange(offset, offset + size)
        block = (jnp.arange(rows.start, rows.stop)[:, None] == cols[None, :]).astype(dtype_of(dt))
        out.append(block.reshape((n_rows,) + tuple(shape)))
        offset += size
    return out


def _split_rows(stacked, metas_rows, metas_cols, row_major):
    """Per (row entry, column entry): the Jacobian block of the stacked products.

    ``stacked[j]`` has the total size of ``metas_rows`` as its leading axis and column entry j's
    shape after it.  Returns ``blocks[i][j]`` shaped ``row_i + col_j`` when ``row_major``
    (jacrev), else ``col_j + row_i`` (jacfwd: the products were taken along the inputs)."""
    blocks = [[None] * len(metas_cols) for _ in metas_rows]
    for j, arr in enumerate(stacked):
        offset = 0
        for i, (shape, _) in enumerate(metas_rows):
            size = math.prod(shape)
            part = arr[offset:offset + size].reshape(tuple(shape) + arr.shape[1:])
            if not row_major:   # (*input_i, *output_j) -> (*output_j, *input_i)
                k = len(shape)
                part = jnp.moveaxis(part, tuple(range(k)), tuple(range(part.ndim - k, part.ndim)))
            blocks[i][j] = part
            offset += size
    return blocks


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """Mirrors ``torch.func.jacrev``: the Jacobian of ``func`` by reverse mode (``jax.vjp``
    applied to a basis of cotangents with ``jax.vmap``).

    Args:
        func: a function of Tensors returning Tensors (pytrees), or ``(output, aux)``.
        argnums: the argument (int) or arguments (tuple) to differentiate.
        has_aux: ``func`` returns ``(output, aux)``; aux is returned too.
        chunk_size: compute this many rows of the Jacobian at a time (less memory).

    Returns:
        A function returning, for every output leaf, the Jacobian (shape
        ``output.shape + input.shape``) w.r.t. the argument (its structure), or a tuple of
        them for a tuple ``argnums``; ``(jacobian, aux)`` with ``has_aux``.

    Example::

        >>> torchlike.func.jacrev(torchlike.sin)(x)   # == torchlike.diag(x.cos())
    """
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")
    what = "vjp(f, *primals)"

    @functools.wraps(func)
    @_x64.scoped
    def wrapper(*args, **kwargs):
        nums, is_tuple = _argnums(argnums, len(args))
        d = _Diff(func, args, kwargs, nums)
        info = {}

        def fn(*arrays):
            rest = list(arrays[d.n:])

            def f(diff):
                out, aux = _split_aux(d.call(list(diff) + rest), has_aux, what)
                out_arrays, info["out"] = _out_arrays(out, what)
                aux_arrays, info["aux"] = _aux_arrays(aux)
                return out_arrays, aux_arrays
            primal = list(arrays[:d.n])
            out, pull, aux = jax.vjp(f, primal, has_aux=True)
            rows = [(o.shape, o.dtype) for o in out]
            cols = [(p.shape, p.dtype) for p in primal]
            total = sum(math.prod(s) for s, _ in rows)
            step = total if chunk_size is None else chunk_size
            pieces = []
            for start in range(0, total, max(step, 1)):
                basis = _basis(rows, range(start, min(start + step, total)), lambda dt: dt)
                pieces.append(jax.vmap(lambda ct: pull(ct)[0])(basis))
            if pieces:
                stacked = [jnp.concatenate([p[j] for p in pieces]) for j in range(len(cols))]
            else:
                stacked = [jnp.zeros((0,) + tuple(s), dt) for s, dt in cols]
            blocks = _split_rows(stacked, rows, cols, row_major=True)
            return (*[b for row in blocks for b in row], *aux)
        outs = lift.lifted_call("Jacrev", fn, d.tensors, d.state)
        return _jacobian(info, d, outs, is_tuple, has_aux)
    return wrapper


def _jacobian(info, d, outs, is_tuple, has_aux):
    """jacrev's / jacfwd's result from the lifted op's outputs: per output leaf, its blocks
    (one per input) in the inputs' structure, in the output's structure; then the aux."""
    n_out = info["out"].num_leaves
    jac = _unflatten(info["out"], [d.args_tree(outs[i * d.n:(i + 1) * d.n], is_tuple)
                                   for i in range(n_out)])
    if has_aux:
        return jac, _unflatten(info["aux"], outs[n_out * d.n:])
    return jac


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """Mirrors ``torch.func.jacfwd``: the Jacobian of ``func`` by forward mode (``jax.jvp``
    applied to a basis of tangents with ``jax.vmap``).

    Args:
        func, argnums, has_aux: as for ``jacrev``.
        randomness: how random draws inside ``func`` behave across the vmapped basis:
            ``"error"``, ``"same"`` or ``"different"`` (see ``vmap``).

    Returns:
        A function returning the Jacobian in ``jacrev``'s structure.

    Example::

        >>> torchlike.func.jacfwd(torchlike.sin)(x)   # == torchlike.diag(x.cos())
    """
    _vmap.check_randomness(randomness)
    what = _JVP

    @functools.wraps(func)
    @_x64.scoped
    def wrapper(*args, **kwargs):
        nums, is_tuple = _argnums(argnums, len(args))
        d = _Diff(func, args, kwargs, nums, forward=True)
        state = d.state
        gens = state.generators
        cols = [(p.shape, p._value().dtype) for p in d.leaves]
        total = sum(math.prod(s) for s, _ in cols)
        seeds = _vmap.random_seeds(randomness, gens, total)
        info = {}

        def fn(*arrays):
            primal, rest = list(arrays[:d.n]), list(arrays[d.n:len(d.tensors)])

            def f(diff):
                out, aux = _split_aux(d.call(list(diff) + rest), has_aux, what)
                out_arrays, info["out"] = _out_arrays(out, what)
                aux_arrays, info["aux"] = _aux_arrays(aux)
                return out_arrays, aux_arrays

            def push(*tangent):
                out, tan, aux = jax.jvp(f, (primal,), (list(tangent),), has_aux=True)
                return out, tan, aux
            basis = _basis(cols, range(total), lambda dt: dt)
            out, tan, aux = _vmap.batched_call(push, [0] * len(basis), basis, total,
                                               randomness, gens,
                                               list(arrays[len(d.tensors):]))
            rows = [(o.shape[1:], o.dtype) for o in out]
            # tan[i]: (total, *out_i); split along the inputs, then move the input axes last
            blocks = _split_rows(tan, cols, rows, row_major=False)
            flat = [blocks[j][i] for i in range(len(rows)) for j in range(len(cols))]
            return (*flat, *[a[0] for a in aux])
        outs = lift.lifted_call("Jacfwd", fn, d.tensors, state, extra=seeds)
        return _jacobian(info, d, outs, is_tuple, has_aux)
    return wrapper


def hessian(func, argnums=0):
    """Mirrors ``torch.func.hessian``: ``jacfwd(jacrev(func, argnums), argnums)``.

    Example::

        >>> torchlike.func.hessian(lambda x: x.sin().sum())(x)   # == torchlike.diag(-x.sin())
    """
    return jacfwd(jacrev(func, argnums), argnums)
