"""In-place ops: compute the out-of-place result, then store it into the same Tensor.

Autograd sees the write (NOTE [ views and in-place writes ] in _tensor.py):
- on a tensor that owns its storage, the result's grad_fn becomes the tensor's grad_fn;
- through a view, the view's base (its storage root, or the detach()/.data alias the view was
  taken of) gets a ``CopySlices`` node (the base with the view's positions replaced), and the
  view re-derives itself from the storage (its grad_fn: ``AsStridedBackward0`` of the base).
"""
from . import _amp_hook, _dtype as D, _lazy, _x64
from ._dispatch import call
from ._views import COPY_SLICES, check_writable
from .autograd.grad_mode import _state


def can_cast(src, dst):
    """PyTorch's canCast: no complex -> real, float -> integral, or non-bool -> bool."""
    if src.is_complex and not dst.is_complex:
        return False
    if src.is_floating_point and not (dst.is_floating_point or dst.is_complex):
        return False
    return not (src is not D.bool_ and dst is D.bool_)


def check_cast(src, dst, dst_name=None):
    """PyTorch's error where an in-place result of dtype ``src`` cannot be cast to the tensor's
    dtype ``dst`` (named ``dst_name`` where an op names it otherwise: clamp_'s C++ names)."""
    if not can_cast(src, dst):
        raise RuntimeError(f"result type {src._scalar_name} can't be cast to the desired output "
                           f"type {dst_name or dst._scalar_name}")


INFERENCE_INPLACE_ERROR = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
    "clone to get a normal tensor before doing inplace update.See "
    "https://github.com/pytorch/rfcs/pull/17 for more details.")


def check_inplace(self, overlap_ok=False):
    """The errors PyTorch raises before any in-place op (``overlap_ok``: zero_ and fill_ with a
    number may write to a tensor whose elements share memory: each gets the same value)."""
    if self._inference and not _state.inference:
        raise RuntimeError(INFERENCE_INPLACE_ERROR)
    if self._root is not None and not overlap_ok:
        check_writable(self)
    if _state.grad_enabled:
        if self._grad_fn is None and self._requires_grad and self._vbase is None:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                               "operation.")
        if self._no_grad_view:   # (before the base's checks, as PyTorch: a view of a leaf too)
            raise RuntimeError(
                "A view was created in no_grad mode and is being modified inplace with grad mode "
                "enabled. Given that this use case is ambiguous and error-prone, it is "
                "forbidden. You can clarify your code by moving both the view and the inplace "
                "either both inside the no_grad block (if you don't want the inplace to be "
                "tracked) or both outside (if you want the inplace to be tracked).")
        base = self._vbase
        if base is not None and base._grad_fn is None and base._requires_grad:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                               "in-place operation.")
        if self._multi_view_of is not None and self.requires_grad:
            raise RuntimeError(
                f"Output {self._output_nr} of {self._multi_view_of} is a view and is being "
                "modified inplace. This view is the output of a function that returns multiple "
                "views. Such functions do not allow the output views to be modified inplace. "
                "You should replace the inplace operation by an out-of-place one.")


def inplace(self, compute, overlap_ok=False):
    """``self <- compute()``, where compute returns the out-of-place result as a Tensor."""
    check_inplace(self, overlap_ok)
    # NOTE [ autocast hook ]: autocast casts no in-place op (PyTorch lists out-of-place ones)
    out = compute() if _amp_hook.policy is None else _amp_hook.policy.run_uncast(compute)
    return store(self, out)


def inplace_view(self, op, static=(), source=None):
    """``self`` becomes ``op``'s view of itself (or of ``source``, a view of ``self``), in place
    (transpose_, t_, squeeze_, unsqueeze_, resize_): its shape, strides and autograd node are
    the view's; the storage is not touched."""
    check_inplace(self)
    out = call(op, self if source is None else source, static=static)
    self._arr, self._strides, node = out._value(), out._strides, out._grad_fn
    self.__dict__.pop("_lazy", None)
    if self._root is not None:
        self._chain = out._chain
    else:
        # NOTE: a root tensor's array is its storage, so views taken from it before this call
        # keep reading the new layout through their old steps (PyTorch keeps the old layout).
        self._gen += 1
    if node is not None:
        self._grad_fn, self._output_nr = node, 0
    self._version_counter()[0] += 1
    return self


def store(self, out):
    """Write the Tensor ``out`` (broadcastable to self, castable to its dtype) into ``self``."""
    mine, theirs = self._aval(), out._aval()
    if theirs.dtype != mine.dtype:
        dt = self.dtype
        check_cast(out.dtype, dt)
        out = out.to(dt)
    if theirs.shape != mine.shape:
        check_output_shape(mine.shape, shape_broadcast(theirs.shape, mine.shape) or theirs.shape)
        out = out.expand(mine.shape)
    if _state.grad_enabled and out._grad_fn is not None:
        if self._vbase is None:   # not a view for autograd: a root, or a detach()/.data alias
            _rebind(self, out)
        else:   # the view's base (its root, or an alias of the root) records the write
            base = self._vbase
            new_base = call(COPY_SLICES, base, out,
                            static=(("chain", self._chain[len(base._chain):]),))
            _rebind(base, new_base)
        _adopt_saved(out._grad_fn, self, out)
        return self
    self._write(_lazy.read(out))
    return self


def _rebind(self, out):
    """self takes out's values (into its storage) and grad_fn, and its version moves on."""
    self._write(_lazy.read(out))
    self._grad_fn = out._grad_fn
    self._output_nr = out._output_nr


def _adopt_saved(node, self, out):
    """Version records of the in-place op's own node.  Its first input is the value before the
    write, which PyTorch saves as a copy (the node keeps that array): nothing to check.  Its
    result is now ``self``, at the version this write produced.  ``y.mul_(y)`` still fails, as
    in PyTorch: its second input was saved before the write."""
    saved = getattr(node, "_saved", ())
    if saved:
        vc = self._version_counter()
        node._saved = tuple(
            (vc, vc[0], t, a, i) if i == "result" else (c, v, t, a, i)
            for c, v, t, a, i in saved if i != 0)


def check_output_shape(mine, broadcast):
    """An in-place result of shape ``broadcast`` must fit self's shape ``mine``."""
    if tuple(broadcast) != tuple(mine):
        raise RuntimeError(f"output with shape {list(mine)} doesn't match the "
                           f"broadcast shape {list(broadcast)}")


def shape_broadcast(a, b):
    import numpy as np
    try:
        return tuple(np.broadcast_shapes(tuple(a), tuple(b)))
    except ValueError:
        return None


@_x64.scoped
def copy_into_out(out, result):
    """The ``out=`` keyword: store result into out (resizing it), with no autograd."""
    if _state.grad_enabled and result.requires_grad:
        op = getattr(result.grad_fn, "_op", None)   # PyTorch names the op: "add(): ..."
        raise RuntimeError(("" if op is None else f"{op.name}(): ") + "functions with out=... "
                           "arguments don't support automatic differentiation, but one of the "
                           "arguments requires grad.")
    if out.shape != result.shape:
        out._arr = result._value().astype(out.dtype._np)
        out.__dict__.pop("_lazy", None)
        out._gen += 1
        out._version_counter()[0] += 1
        return out
    return store(out, result.detach())


def inplace_method(fn):
    """The in-place Tensor method of the op ``fn``: ``x.add_(y)`` stores ``add(x, y)`` into
    ``x``.  Every op family makes its in-place variants with this."""
    def method(self, *args, **kwargs):
        return inplace(self, lambda: fn(self, *args, **kwargs))
    method.__name__ = fn.__name__ + "_"
    return method
