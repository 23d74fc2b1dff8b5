"""torch.export's dynamic dimensions (``Dim``) and ``dynamic_shapes``, mapped onto jax.export
symbolic dimensions (NOTE [ symbolic batch ] in _lower.py)."""
import itertools
import math

import jax
import numpy as np

from . import _capture as cap


# --- dynamic dimensions ---------------------------------------------------------------------------

class _DimHint:
    """``Dim.AUTO`` / ``Dim.DYNAMIC`` / ``Dim.STATIC``."""

    def __init__(self, kind):
        self.kind = kind

    def __repr__(self):
        return f"DimHint({self.kind})"


class Dim:
    """Mirrors ``torch.export.Dim``: a named dynamic dimension, ``min <= size <= max``.

    The same Dim (by name) in several inputs says those sizes are equal.  ``Dim.DYNAMIC`` and
    ``Dim.AUTO`` ask for an anonymous dynamic dimension (AUTO falls back to a static size when
    the program cannot be exported with a dynamic one); ``Dim.STATIC`` (or None) keeps the
    example's size.

    Example::

        >>> batch = torchlike.export.Dim("batch", min=1, max=1024)
        >>> ep = torchlike.export.export(model, (x,), dynamic_shapes={"x": {0: batch}})
    """

    AUTO = _DimHint("AUTO")
    DYNAMIC = _DimHint("DYNAMIC")
    STATIC = _DimHint("STATIC")

    def __init__(self, name, *, min=None, max=None):  # noqa: A002
        if not isinstance(name, str) or not name.isidentifier():
            raise TypeError(f"Dim name must be a valid identifier, got {name!r}")
        lo = 0 if min is None else min
        hi = math.inf if max is None else max
        if lo > hi:
            raise AssertionError(f"Cannot create Dim with inconsistent min={min}, max={max}")
        self.__name__ = name
        self.min, self.max = lo, hi

    def __repr__(self):
        parts = [repr(self.__name__)]
        if self.min != 2:
            parts.append(f"min={self.min}")
        if self.max != math.inf:
            parts.append(f"max={self.max}")
        return f"Dim({', '.join(parts)})"

    def __eq__(self, other):
        return isinstance(other, Dim) and (self.__name__, self.min, self.max) == (
            other.__name__, other.min, other.max)

    def __hash__(self):
        return hash((self.__name__, self.min, self.max))


def dims(*names, min=None, max=None):  # noqa: A002
    """Mirrors ``torch.export.dims``: one :class:`Dim` per name, all with the same range."""
    return tuple(Dim(n, min=min, max=max) for n in names)


def _user_error(msg):
    return RuntimeError(msg + "\n\nThe error above occurred when calling "
                        "torchlike.export.export.")


def _dynamic_dims(capture, args, kwargs, dynamic_shapes):
    """Per input: {dim index: Dim or hint}, from torch-style ``dynamic_shapes``."""
    positional = cap._parameter_names(capture.fn, args, kwargs)
    top_names = positional + list(kwargs)
    n_top = len(args) + len(kwargs)
    if dynamic_shapes is None:
        return [{} for _ in capture.inputs]
    if isinstance(dynamic_shapes, dict):
        extra = [k for k in dynamic_shapes if k not in top_names]
        if extra:
            raise _user_error(
                "When `dynamic_shapes` is specified as a dict, its top-level keys must be the "
                f"arg names {top_names} of `inputs`, but here they are "
                f"{list(dynamic_shapes)}. Alternatively, you could also ignore arg names "
                "entirely and specify `dynamic_shapes` as a list/tuple matching `inputs`.")
        top = {("args", i): dynamic_shapes.get(n) for i, n in enumerate(positional)}
        top.update({("kwargs", k): dynamic_shapes.get(k) for k in kwargs})
    elif isinstance(dynamic_shapes, (tuple, list)):
        if len(dynamic_shapes) not in (len(args), n_top):
            raise _user_error(
                "Detected mismatch between the structure of `inputs` and `dynamic_shapes`: "
                f"`inputs` has {n_top} elements, but `dynamic_shapes` has "
                f"{len(dynamic_shapes)} elements")
        top = {("args", i): s for i, s in enumerate(dynamic_shapes[:len(args)])}
        top.update({("kwargs", k): s for k, s in zip(kwargs, dynamic_shapes[len(args):])})
    else:
        raise _user_error(f"dynamic_shapes must be a dict, tuple or list, got "
                          f"{type(dynamic_shapes).__name__}")
    paths, _ = jax.tree_util.tree_flatten_with_path((args, kwargs), is_leaf=cap._is_input_leaf)
    out = []
    for (path, leaf), name in zip(paths, capture.input_names):
        if not cap.is_array(leaf):
            continue
        which = "args" if path[0].idx == 0 else "kwargs"
        key = path[1].idx if which == "args" else cap._key_name(path[1])
        spec = top.get((which, key))
        for k in path[2:]:
            if spec is None:
                break
            try:
                spec = spec[getattr(k, "idx", getattr(k, "key", getattr(k, "name", None)))]
            except (KeyError, IndexError, TypeError):
                raise _user_error(f"dynamic_shapes for {name}: {spec!r} does not match the "
                                  "structure of the input") from None
        ndim = len(np.shape(leaf))
        if spec is None:
            out.append({})
            continue
        if isinstance(spec, (tuple, list)):
            if len(spec) != ndim:
                raise _user_error(f"dynamic_shapes for {name} has {len(spec)} entries, but "
                                  f"{name} has {ndim} dimensions")
            spec = dict(enumerate(spec))
        if not isinstance(spec, dict):
            raise _user_error(f"dynamic_shapes for {name} must be a dict {{dim: Dim}} or a "
                              f"tuple of Dims, got {spec!r}")
        dims_of = {}
        for d, v in spec.items():
            if not isinstance(d, int) or not -ndim <= d < ndim:
                raise IndexError(f"dynamic_shapes for {name}: dimension {d} is out of range "
                                 f"for an input with {ndim} dimensions")
            if v is None or v is Dim.STATIC:
                continue
            if not isinstance(v, (Dim, _DimHint)):
                raise _user_error(f"dynamic_shapes for {name}[{d}] must be a Dim, got {v!r}")
            dims_of[d % ndim] = v
        out.append(dims_of)
    return out


def _symbols(capture, specs, static_auto):
    """Symbol names per input, the range constraints and jax's symbolic dimensions."""
    by_name, anonymous, dims = {}, itertools.count(), []
    taken = {d.__name__ for s in specs for d in s.values() if isinstance(d, Dim)}
    for j, spec in enumerate(specs):
        mine = {}
        for d, v in spec.items():
            if isinstance(v, _DimHint):
                if v is Dim.AUTO and static_auto:
                    continue
                name = next(f"s{k}" for k in anonymous if f"s{k}" not in taken)
                v = Dim(name)
            old = by_name.setdefault(v.__name__, v)
            if (old.min, old.max) != (v.min, v.max):
                raise _user_error(f"Found different definitions {old!r} and {v!r} for the "
                                  f"same dimension name {v.__name__}")
            size = capture.inputs[j].shape[d]
            if not max(v.min, 1) <= size <= v.max:
                raise _user_error(
                    f"Constraints violated ({v.__name__})! The example input "
                    f"{capture.input_names[j]} has size {size} in dimension {d}, outside "
                    f"[{max(v.min, 1)}, {v.max}]")
            mine[d] = v.__name__
        dims.append(mine)
    ranges = {n: [max(v.min, 1), None if v.max == math.inf else int(v.max)]
              for n, v in by_name.items()}
    if not by_name:
        return dims, ranges, {}
    constraints = [f"{n} >= {lo}" for n, (lo, hi) in ranges.items() if lo > 1]
    constraints += [f"{n} <= {hi}" for n, (lo, hi) in ranges.items() if hi is not None]
    scope = jax.export.SymbolicScope(constraints)
    names = list(by_name)
    syms = jax.export.symbolic_shape(", ".join(names), scope=scope)
    return dims, ranges, dict(zip(names, syms))
