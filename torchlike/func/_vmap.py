"""torch.func.vmap on jax.vmap, and torch's rule for random draws inside vmapped code.

NOTE [ vmap randomness ]
Inside ``vmap(f, randomness=...)`` every generator ``f`` can reach (its closure, globals and
arguments, and the default generator) has its ``_next`` (the key data of one draw) replaced for
the duration of the trace:
- ``"error"``: drawing raises PyTorch's RuntimeError;
- ``"same"``: draws are left alone: a key drawn while tracing is not batched, so every example
  gets the same numbers (a sample shaped like a batched input is drawn once per example shape
  and broadcast);
- ``"different"``: one draw per generator before the vmap gives a base key, each example gets
  its own seed from it (a batched input of the vmapped function), and the k-th draw inside is
  derived from the example's seed and k, so every example draws independently.
"""
import contextlib
import functools

import jax
import jax.numpy as jnp

from .. import _x64
from .._random import _draw_key
from .._tensor import TRACED_VALUE_ERRORS, Tensor
from ..autograd.grad_mode import no_grad
from . import _lift as lift

_RANDOMNESS = ("error", "different", "same")
_RANDOM_ERROR = ("vmap: called random operation while in randomness error mode. Please either use "
                 "the 'same' or 'different' randomness flags on vmap or perform the randomness "
                 "operation out of vmap")
_MISSING = object()


def check_randomness(randomness):
    if randomness not in _RANDOMNESS:
        raise RuntimeError("Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")


@contextlib.contextmanager
def _drawing(generators, make):
    """Replace each generator's ``_next`` by ``make(i, generator)`` for the duration."""
    saved = [(g, g.__dict__.get("_next", _MISSING)) for g in generators]
    try:
        for i, g in enumerate(generators):
            g._next = make(i, g)
        yield
    finally:
        for g, old in saved:
            if old is _MISSING:
                g.__dict__.pop("_next", None)
            else:
                g._next = old


def _forbid(i, g):
    def draw():
        raise RuntimeError(_RANDOM_ERROR)
    return draw


@functools.partial(jax.jit, static_argnums=1)
def _example_seeds(key, size):
    """(size, 2) uint32 seeds, one per example, derived from one draw's key data."""
    key = jnp.asarray(key, jnp.uint32)
    idx = jnp.arange(size, dtype=jnp.uint32)
    # 0x5EED in the high counter word keeps these apart from the generator's own draws
    return jnp.stack(_draw_key(key[0], key[1], idx, jnp.uint32(0x5EED)), axis=1)


@jax.jit
def _example_key(seed, count):
    """Key data of draw number ``count`` of the example whose seed is ``seed``."""
    return jnp.stack(_draw_key(seed[0], seed[1], count, jnp.uint32(0)))


def _per_example(seeds):
    def make(i, g):
        count = [0]

        def draw():
            count[0] += 1
            return _example_key(seeds[i], jnp.uint32(count[0]))
        return draw
    return make


def random_seeds(randomness, generators, size):
    """The extra batched inputs ``batched_call`` needs (one draw per generator, made now)."""
    if randomness != "different":
        return []
    return [_example_seeds(g._next(), size) for g in generators]


def batched_call(body, in_axes, batched, size, randomness, generators, seeds, chunk_size=None):
    """``jax.vmap(body, in_axes)(*batched)`` (every output batched along 0), with draws from
    ``generators`` inside following ``randomness`` (NOTE [ vmap randomness ]; ``seeds`` from
    ``random_seeds``), in chunks of ``chunk_size`` examples."""
    if randomness == "different":
        n = len(seeds)

        def run(*xs):
            with _drawing(generators, _per_example(xs[:n])):
                return body(*xs[n:])
        fn, axes, inputs = run, (0,) * n + tuple(in_axes), list(seeds) + list(batched)
    elif randomness == "error":
        def run(*xs):
            with _drawing(generators, _forbid):
                return body(*xs)
        fn, axes, inputs = run, tuple(in_axes), list(batched)
    else:
        fn, axes, inputs = body, tuple(in_axes), list(batched)
    mapped = jax.vmap(fn, in_axes=axes)
    if chunk_size is None or chunk_size >= size:
        return mapped(*inputs)
    pieces = []
    for start in range(0, size, chunk_size):
        stop = min(start + chunk_size, size)
        pieces.append(mapped(*[jax.lax.slice_in_dim(x, start, stop, axis=a)
                               for x, a in zip(inputs, axes)]))
    return jax.tree_util.tree_map(lambda *xs: jnp.concatenate(xs, 0), *pieces)


# --- vmap -----------------------------------------------------------------------------------------

def _name(func):
    return getattr(func, "__name__", repr(func))


def _broadcast(prefix, tree, is_leaf):
    """The entry of the prefix tree ``prefix`` for every leaf of ``tree`` (flatten order);
    raises ValueError when ``prefix`` is not a prefix of ``tree``."""
    out = []

    def each(p, sub):
        out.append([p] * len(jax.tree_util.tree_leaves(sub, is_leaf=is_leaf)))
    jax.tree_util.tree_map(each, prefix, tree, is_leaf=lambda x: x is None or is_leaf(x))
    return [d for group in out for d in group]


def _out_leaf(x):
    return x is None or isinstance(x, Tensor)


def _structure(tree):
    return str(jax.tree_util.tree_structure(tree, is_leaf=lambda x: x is None or lift.is_tensor(x)))


def _in_dims(func, in_dims, args):
    where = f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>)"
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(f"{where}: expected `in_dims` to be int or a (potentially nested) tuple "
                         f"matching the structure of inputs, got: {type(in_dims)}.")
    prefix = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args)
    try:
        dims = _broadcast(prefix, tuple(args), lift.is_tensor)
    except (ValueError, TypeError):
        raise ValueError(f"{where}: in_dims is not compatible with the structure of `inputs`. "
                         f"in_dims has structure {_structure(in_dims)} but inputs has structure "
                         f"{_structure(tuple(args))}.") from None
    leaves = lift.flatten(tuple(args))[0]
    for x, d in zip(leaves, dims):
        if d is None:
            continue
        if not isinstance(d, int):
            raise ValueError(f"{where}: Got in_dim={d} for an input but in_dim must be either "
                             "an integer dimension or None.")
        if not isinstance(x, Tensor):
            raise ValueError(f"{where}: Got in_dim={d} for an input but the input is of type "
                             f"{type(x)}. We cannot vmap over non-Tensor arguments, please use "
                             "None as the respective in_dim")
        n = x.ndim
        if not -n <= d < n:
            raise ValueError(f"{where}: Got in_dim={d} for some input, but that input is a Tensor "
                             f"of dimensionality {n} so expected in_dim to satisfy -{n} <= in_dim "
                             f"< {n}.")
    return dims


def _out_dims(func, out_dims, out):
    """out_dims for every leaf of ``out``, checked as torch checks them."""
    if not isinstance(out_dims, (int, tuple)) and out_dims is not None:
        raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims}): expected `out_dims` to "
                         "be int or a (potentially nested) tuple matching the structure of "
                         f"outputs, got: {type(out_dims)}.")
    try:
        return _broadcast(out_dims, out, _out_leaf)
    except (ValueError, TypeError):
        raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims is "
                         "not compatible with the structure of `outputs`. out_dims has structure "
                         f"{_structure(out_dims)} but outputs has structure "
                         f"{_structure(out)}.") from None


def _data_dependent(e):
    """torch's vmap message for a traced value needed in Python."""
    import traceback
    if any(f.name == "item" for f in traceback.extract_tb(e.__traceback__)):
        return RuntimeError(
            "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over "
            "calling .item() on a Tensor, please try to rewrite what you're doing with other "
            "operations. If error is occurring somewhere inside PyTorch internals, please file a "
            "bug report.")
    return RuntimeError(
        "vmap: It looks like you're attempting to use a Tensor in some data-dependent control "
        "flow. We don't support that yet, please file an issue at "
        "https://github.com/pytorch/pytorch/issues .")


@_x64.scoped
def vmap_call(func, in_dims, out_dims, randomness, chunk_size, args, kwargs):
    """One call of ``vmap(func, ...)``: see ``torchlike.func.vmap``."""
    if not args:
        raise ValueError(f"vmap({_name(func)})(<inputs>): got no inputs. Maybe you forgot to add "
                         "inputs, or you are trying to vmap over a function with no inputs. The "
                         "latter is unsupported.")
    dims = _in_dims(func, in_dims, args)
    bound = lift.Bound(args, kwargs)
    n_args = len(lift.flatten(tuple(args))[0])
    tensor_dims = [dims[i] if i < n_args else None for i in bound.pos]
    mapped = [(k, d % t.ndim) for k, (t, d) in enumerate(zip(bound.tensors, tensor_dims))
              if d is not None]
    if not mapped:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    sizes = [bound.tensors[k].shape[d] for k, d in mapped]
    if len(set(sizes)) > 1:
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    size = sizes[0]
    state = lift.capture(func, args, kwargs, bound.tensors)
    generators = state.generators
    seeds = random_seeds(randomness, generators, size)
    info = {}
    n_in = len(bound.tensors)

    def mutation(t):
        return (f"output with shape {list(t.shape)} doesn't match the broadcast shape "
                f"{[size] + list(t.shape)}")

    def fn(*xs):
        arrays, extra = list(xs[:n_in]), xs[n_in:]
        statics = {}

        def body(*batched):
            full = list(arrays)
            for (k, _), a in zip(mapped, batched):
                full[k] = a
            a, kw = bound.rebuild(full)
            with no_grad(), state.guarding(mutation):
                try:
                    out = func(*a, **kw)
                except TRACED_VALUE_ERRORS as e:
                    raise _data_dependent(e) from None
            leaves, tree = jax.tree_util.tree_flatten(out, is_leaf=_out_leaf)
            odims = _out_dims(func, out_dims, out)
            trace = getattr(batched[0], "_trace", _MISSING)
            kept = []
            for i, (x, d) in enumerate(zip(leaves, odims)):
                if d is None:
                    if isinstance(x, Tensor) and getattr(x._value(), "_trace", None) is trace:
                        raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` can not "
                                         "return a BatchedTensor when out_dim is None")
                    statics[i] = x
                    continue
                if not isinstance(x, Tensor):
                    raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` must only "
                                     f"return Tensors, got type {type(x)}. Did you mean to set "
                                     "out_dims= to None for output?")
                n = x.ndim + 1
                if not -n <= d < n:
                    raise IndexError(f"Dimension out of range (expected to be in range of "
                                     f"[{-n}, {n - 1}], but got {d})")
                kept.append((i, d % n))
            info["tree"], info["kept"] = tree, kept
            return [leaves[i]._value() for i, _ in kept]
        outs = batched_call(body, [d for _, d in mapped], [arrays[k] for k, _ in mapped], size,
                            randomness, generators, extra, chunk_size)
        outs = [jnp.moveaxis(o, 0, d) for o, (_, d) in zip(outs, info["kept"])]
        info["statics"] = {i: x for i, x in statics.items() if not isinstance(x, Tensor)}
        unbatched = sorted(i for i, x in statics.items() if isinstance(x, Tensor))
        info["unbatched"] = unbatched
        return tuple(outs) + tuple(statics[i]._value() for i in unbatched)

    outs = lift.lifted_call("Vmap", fn, bound.tensors, state, seeds)
    tree, kept = info["tree"], info["kept"]
    leaves = [None] * tree.num_leaves
    for (i, _), t in zip(kept, outs):
        leaves[i] = t
    for i, t in zip(info["unbatched"], outs[len(kept):]):
        leaves[i] = t
    for i, x in info["statics"].items():
        leaves[i] = x
    return jax.tree_util.tree_unflatten(tree, leaves)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """Mirrors ``torch.func.vmap``: ``func`` mapped over a batch dimension of its inputs
    (``jax.vmap`` of ``func`` run on Tensors holding the traced arrays).

    Args:
        func: a function of Tensors (pytrees of them: tuples, lists, dicts) returning Tensors.
        in_dims: the dimension mapped of each positional input: an int for all, or a (nested)
            tuple matching ``args`` whose entries are ints or None (not mapped).  Keyword
            arguments are never mapped.
        out_dims: where the mapped dimension goes in each output (an int, or a tuple matching
            the outputs; None for an output that does not depend on the mapped inputs, which
            is returned as it is, also a non-Tensor).
        randomness: ``"error"`` (a random draw inside raises), ``"same"`` (every example gets
            the same draw) or ``"different"`` (independent draws per example).
        chunk_size: map this many examples at a time (less memory, same result).

    Returns:
        The mapped function.  Its outputs are part of the autograd graph of its inputs (and of
        the tensors requiring grad that ``func`` reads), as in PyTorch.

    Example::

        >>> x = torchlike.randn(5, 3)
        >>> torchlike.func.vmap(torchlike.dot, in_dims=(0, None))(x, torchlike.ones(3)).shape
        torch.Size([5])
    """
    check_randomness(randomness)
    if chunk_size is not None and chunk_size <= 0:
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        return vmap_call(func, in_dims, out_dims, randomness, chunk_size, args, kwargs)
    return wrapped
