"""einsum: Einstein summation over an equation string (or PyTorch's sublist form).

The equation is parsed and checked here, with PyTorch's errors; the product itself is one
``jnp.einsum``, contracting in the order ``torchlike.backends.opt_einsum`` asks for (opt_einsum's
'auto' path by default, left to right when disabled, as PyTorch).  PyTorch computes einsum from permutes, bmm, mul
and sum, so its grad_fn depends on the equation: one operand gives ``SumBackward1`` when some
subscript is summed out, else ``PermuteBackward0``; several operands give ``ViewBackward0`` when
some subscript is summed out, else ``MulBackward0``.  torchlike records one node with that name
(the nodes below it in PyTorch's graph are not reproduced).

NOTE [ einsum under autocast ]
PyTorch's CPU autocast does not list einsum, but its decomposition runs ``bmm`` (listed) for each
pair of operands that contracts a label and ``mul`` otherwise, so the result is in the region's
dtype exactly when the last pair contracts (or multiplies two such results).  ``_ends_in_bmm``
follows PyTorch's pairing (the opt_einsum path for three or more operands, as ``jnp.einsum``
takes) on the shapes only; when it says so, ``entry`` casts the operands by ``bmm``'s row and
the one einsum op runs in that dtype.  Otherwise the whole einsum runs in float32, where PyTorch
may have run an inner pair in the lower dtype (values then differ at that dtype's rounding).
"""
import jax.numpy as jnp
import numpy as np

from .. import _amp_hook, _dtype as D
from ..backends import opt_einsum as _opt_einsum
from .._dispatch import Op, call
from .._tensor import Tensor
from . import linalg as _products

_ELLIPSIS = "..."


def _einsum(*ops, equation, labels, out_dtype, precision, optimize):
    """Broadcast each operand to the sizes its subscripts have overall (PyTorch broadcasts
    size-1 dimensions, numpy's einsum does not), then contract."""
    sizes, ell = {}, ()
    for x, subs in zip(ops, labels):
        n_ell = x.ndim - sum(1 for s in subs if s != _ELLIPSIS)
        dims = iter(x.shape)
        for s in subs:
            if s == _ELLIPSIS:
                part = tuple(next(dims) for _ in range(n_ell))
                ell = jnp.broadcast_shapes(ell, part)
            else:
                d = next(dims)
                sizes[s] = max(sizes.get(s, 1), d)
    full = []
    for x, subs in zip(ops, labels):
        n_ell = x.ndim - sum(1 for s in subs if s != _ELLIPSIS)
        shape, target, dims = [], [], iter(x.shape)
        for s in subs:
            if s == _ELLIPSIS:
                shape += [1] * (len(ell) - n_ell) + [next(dims) for _ in range(n_ell)]
                target += list(ell)
            else:
                shape.append(next(dims))
                target.append(sizes[s])
        full.append(jnp.broadcast_to(x.reshape(shape), target))
    out = jnp.einsum(equation, *full, precision=precision, optimize=optimize)
    return out if out_dtype is None else out.astype(out_dtype)


# the top node of PyTorch's einsum graph (see the module docstring)
EINSUM = {node: Op("einsum", _einsum, node)
          for node in ("SumBackward1", "PermuteBackward0", "ViewBackward0", "MulBackward0")}


def _err(message):
    return RuntimeError(f"einsum(): {message}")


def _parse_operands(lhs, n_ops):
    """Split the left-hand side into each operand's subscripts (letters and '...')."""
    labels, current, found_ell = [[]], 0, False
    i = 0
    while i < len(lhs):
        c = lhs[i]
        if c == " ":
            pass
        elif c == ".":
            if found_ell:
                raise _err(f"found '.' for operand {current} for which an ellipsis was already "
                           "found")
            if lhs[i + 1:i + 3] != "..":
                raise _err(f"found '.' for operand {current} that is not part of any ellipsis")
            labels[current].append(_ELLIPSIS)
            found_ell = True
            i += 2
        elif c == ",":
            current += 1
            if current >= n_ops:
                raise _err("fewer operands were provided than specified in the equation")
            labels.append([])
            found_ell = False
        elif c.isascii() and c.isalpha():
            labels[current].append(c)
        else:
            raise _err(f"invalid subscript given at index {i} in the equation string, "
                       "subscripts must be in [a-zA-Z]")
        i += 1
    if current != n_ops - 1:
        raise _err("more operands were provided than specified in the equation")
    return labels


def _parse_output(rhs, offset, seen):
    out, found_ell, i = [], False, 0
    while i < len(rhs):
        c = rhs[i]
        if c == " ":
            pass
        elif c == ".":
            if found_ell:
                raise _err("found '.' for output but an ellipsis (...) was already found")
            if rhs[i + 1:i + 3] != "..":
                raise _err("found '.' for output that is not part of any ellipsis (...)")
            out.append(_ELLIPSIS)
            found_ell = True
            i += 2
        elif c.isascii() and c.isalpha():
            if c in out:
                raise _err(f"output subscript {c} appears more than once in the output")
            if c not in seen:
                raise _err(f"output subscript {c} does not appear in the equation for any input "
                           "operand")
            out.append(c)
        else:
            raise _err(f"invalid subscript given at index {offset + i} in the equation string, "
                       "subscripts must be in [a-zA-Z]")
        i += 1
    return out


def _check_sizes(operands, labels):
    """Repeated subscripts of one operand must agree; across operands they broadcast."""
    seen = {}
    for k, (x, subs) in enumerate(zip(operands, labels)):
        n_ell = x.ndim - sum(1 for s in subs if s != _ELLIPSIS)
        dims, mine = iter(x.shape), {}
        for s in subs:
            if s == _ELLIPSIS:
                for _ in range(n_ell):
                    next(dims)
                continue
            d = next(dims)
            if s in mine and mine[s] != d:
                raise _err(f"subscript {s} is repeated for operand {k} but the sizes don't match, "
                           f"{d} != {mine[s]}")
            mine[s] = d
            if s in seen and d != 1 and seen[s] != 1 and seen[s] != d:
                raise _err(f"subscript {s} has size {d} for operand {k} which does not broadcast "
                           f"with previously seen size {seen[s]}")
            seen[s] = d if s not in seen or seen[s] == 1 else seen[s]


def _letter(i):
    if not (isinstance(i, int) and 0 <= i < 52):
        raise ValueError("einsum(): subscript in subscript list is not within the valid range "
                         "[0, 52)")
    return chr(ord("A") + i) if i < 26 else chr(ord("a") + i - 26)


def _sublist(items):
    return "".join(_ELLIPSIS if s is Ellipsis else _letter(s) for s in items)


def _from_sublists(args):
    """einsum(op1, sublist1, op2, sublist2, ..., [sublist_out]) as an equation string."""
    pairs = args[:len(args) - len(args) % 2]
    eq = ",".join(_sublist(s) for s in pairs[1::2])
    if len(args) % 2:   # the output sublist
        eq += "->" + _sublist(args[-1])
    return eq, list(pairs[0::2])


def _order_key(c):
    """Implicit output order: PyTorch numbers A-Z before a-z."""
    return (0, c) if c.isupper() else (1, c)


def _operands(args):
    """(equation, operands) of an einsum call in any of its forms."""
    if isinstance(args[0], str):
        equation, operands = args[0], list(args[1:])
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
            operands = list(operands[0])
        return equation, operands
    return _from_sublists(args)


def _autocast_rows(*args):
    """einsum's autocast rows (NOTE [ einsum under autocast ]): its own (CUDA lists it), then
    ``bmm`` where PyTorch's decomposition ends in a bmm, so its result is in the lower dtype."""
    try:
        equation, operands = _operands(args)
        if len(operands) < 2 or not all(isinstance(x, Tensor) for x in operands):
            return ("einsum",)
        node, static = _plan(equation, operands)
    except (TypeError, ValueError, RuntimeError, IndexError, NotImplementedError):
        return ("einsum",)   # einsum itself raises PyTorch's error
    labels, out = dict(static)["labels"], dict(static)["equation"].split("->")[1]
    return ("einsum", "bmm") if _ends_in_bmm(labels, out, operands) else ("einsum",)


def _ends_in_bmm(labels, output, operands):
    """Whether PyTorch's pairwise einsum (sum out what one operand alone holds, then ``mul`` a
    pair, or ``bmm`` it when the pair shares a label no other operand nor the output holds,
    of size > 1 in both) gives its result in the lower dtype: from a bmm, or from a mul of two
    lower-precision values."""
    out = set(output)
    terms = []
    for x, subs in zip(operands, labels):
        n_ell = x.ndim - sum(1 for s in subs if s != _ELLIPSIS)
        sized, dims = {}, iter(x.shape)
        for s in subs:
            if s == _ELLIPSIS:
                for _ in range(n_ell):
                    next(dims)
            else:
                sized[s] = max(sized.get(s, 1), next(dims))
        terms.append(({s for s, n in sized.items() if n != 1}, set(sized), False))
    if len(terms) > 2 and _opt_einsum.optimize():
        path = jnp.einsum_path(",".join("".join(subs) for subs in labels) + "->" + output,
                               *[np.broadcast_to(np.float32(0), x.shape) for x in operands],
                               optimize=_opt_einsum.optimize())[0]
    else:   # left to right: the result takes the pair's place in front
        path = [(0, 1)] * (len(terms) - 1)
    front = len(terms) <= 2 or not _opt_einsum.optimize()
    for pair in path:
        i, j = sorted(pair)
        (big_a, all_a, low_a), (big_b, all_b, low_b) = terms[i], terms[j]
        rest = [t for k, t in enumerate(terms) if k not in (i, j)]
        kept = out.union(*(t[0] for t in rest))
        bmm = bool((big_a & big_b) - kept)
        keep = (all_a | all_b) & (kept | set().union(*(t[1] for t in rest)))
        term = ((big_a | big_b) & keep, keep, bmm or (low_a and low_b))
        terms = [term] + rest if front else rest + [term]
    return terms[0][2]


@_amp_hook.entry(_autocast_rows)
def einsum(*args):
    """Mirrors ``torch.einsum``: ``einsum("ij,jk->ik", a, b)``, with the operands also accepted
    as one list, or the sublist form ``einsum(a, [0, 1], b, [1, 2], [0, 2])``.

    Subscripts are letters; ``...`` stands for broadcast dimensions; without ``->`` the output
    holds the subscripts seen once, in alphabetical order (upper case first), after the
    ellipsis dimensions.  Size-1 dimensions broadcast as in PyTorch.

    Example:
        >>> a, b = torchlike.ones(2, 3), torchlike.ones(3, 4)
        >>> torchlike.einsum("ij,jk->ik", a, b).shape
        torch.Size([2, 4])
    """
    if not args or (isinstance(args[0], str) and len(args) < 2):
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
    equation, operands = _operands(args)
    if not all(isinstance(x, Tensor) for x in operands):
        raise TypeError("einsum(): operands must be Tensors")
    key = (equation,) + tuple((x.shape, x.dtype) for x in operands)
    plan = _PLANS.get(key)
    if plan is None:
        if len(_PLANS) > 4096:
            _PLANS.clear()
        plan = _PLANS[key] = _plan(equation, operands)
    node, static = plan
    return call(EINSUM[node], *operands, static=static + _products._static()
                + (("optimize", _opt_einsum.optimize()),))


# (equation, operand shapes and dtypes) -> (node name, static arguments): the parse and checks
# run once per signature, not once per call
_PLANS = {}


def _plan(equation, operands):
    lhs, arrow, rhs = equation.partition("->")
    n_terms = lhs.count(",") + 1
    if len(operands) >= 3 and n_terms != len(operands):   # PyTorch's opt_einsum path
        raise ValueError(f"Number of einsum subscripts, {n_terms}, must be equal to the number "
                         f"of operands, {len(operands)}.")
    labels = _parse_operands(lhs, len(operands))
    for k, (x, subs) in enumerate(zip(operands, labels)):
        n = sum(1 for s in subs if s != _ELLIPSIS)
        if _ELLIPSIS in subs:
            if n > x.ndim:
                raise _err(f"the number of subscripts in the equation ({n}) is more than the "
                           f"number of dimensions ({x.ndim}) for operand {k}")
        elif n != x.ndim:
            raise _err(f"the number of subscripts in the equation ({n}) does not match the "
                       f"number of dimensions ({x.ndim}) for operand {k} and no ellipsis was "
                       "given")
    seen = [s for subs in labels for s in subs if s != _ELLIPSIS]
    if arrow:
        output = _parse_output(rhs, len(lhs) + 2, set(seen))
    else:
        once = sorted((s for s in set(seen) if seen.count(s) == 1), key=_order_key)
        output = ([_ELLIPSIS] if any(_ELLIPSIS in subs for subs in labels) else []) + once
    _check_sizes(operands, labels)
    for x in operands[1:]:
        if x.dtype is not operands[0].dtype:
            raise RuntimeError(f"expected scalar type {operands[0].dtype._scalar_name} but found "
                               f"{x.dtype._scalar_name}")
    summed = bool(set(seen) - set(output))
    dt = operands[0].dtype
    if len(operands) == 1:
        node = "SumBackward1" if summed else "PermuteBackward0"
    else:
        node = "ViewBackward0" if summed else "MulBackward0"
        if summed and dt is D.bool_:
            raise NotImplementedError("\"bmm\" not implemented for 'Bool'")
    # one operand summed is PyTorch's sum: integers and bools add up in int64
    out_dtype = D.int64._np if (node == "SumBackward1" and not (
        dt.is_floating_point or dt.is_complex)) else None
    norm = ",".join("".join(subs) for subs in labels) + "->" + "".join(output)
    return node, (("equation", norm), ("labels", tuple(tuple(s) for s in labels)),
                  ("out_dtype", out_dtype))
