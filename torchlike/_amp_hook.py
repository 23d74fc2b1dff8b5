"""Where autocast reaches dispatch and the composite ops PyTorch's autocast lists name.

NOTE [ autocast hook ]
``policy`` is None unless an autocast region is active in some thread; then it is
``torchlike.amp._policy``'s policy object (the one table, NOTE [ autocast policy ] there).
``_dispatch.call`` asks it to cast the operands of an op whose name has a row.  A public
function that PyTorch lists but torchlike writes as a composite (``matmul`` from dot / mv / mm /
bmm, ``cross_entropy`` from log_softmax and nll_loss) is wrapped by ``entry(name)``: its
operands are cast by its row before it runs, and the ops inside it are not cast again, as
PyTorch's autocast kernels exclude autocast below themselves.  With no region active each costs
one test of ``policy``.  ``name`` may be a function of the call's arguments returning the row
names to try, first found first, per device type: where PyTorch lists no row for the function
itself but its decomposition reaches a listed op for some arguments (``einsum`` reaches ``bmm``
when it contracts, ``F.pad`` reaches ``reflection_pad1d`` ...), the function names that op.

A composite written as one op whose PyTorch decomposition runs a listed op *inside* a loop (the
recurrent layers' ``linear`` at each step) asks ``inner_dtype(name, tensors)`` for the dtype that
op's row gives now, and computes that part in it.  This module imports nothing of torchlike, so
the op table can use it.

The wrapper is one frame between the caller and the function, with or without a region;
``stacklevel`` gives a warning inside such a function its caller's line all the same.
"""
import functools
import sys

policy = None


def entry(name):
    """Decorator: the autocast row ``name`` applies to this composite's operands as a whole
    (or the first row found of those ``name(*args, **kwargs)`` returns)."""
    rows = name if callable(name) else None

    def wrap(fn):
        @functools.wraps(fn)
        def composite(*args, **kwargs):
            if policy is None:
                return fn(*args, **kwargs)
            names = (name,) if rows is None else rows(*args, **kwargs)
            args, kwargs, excluded = policy.enter(names, args, kwargs)
            try:
                return fn(*args, **kwargs)
            finally:
                if excluded:
                    policy.leave()
        return composite
    return wrap


def inner_dtype(name, tensors):
    """The dtype row ``name`` casts to now if it is a lower-precision row of an enabled device
    type and some tensor of ``tensors`` is eligible, else None."""
    return None if policy is None else policy.inner_dtype(name, tensors)


def any_enabled():
    """Whether autocast is on for some device type in this thread (PyTorch's
    ``torch._C._is_any_autocast_enabled``)."""
    return policy is not None and policy.any_enabled()


_ENTRY_CODE = entry("")(lambda: None).__code__


def stacklevel(level):
    """``warnings.warn``'s stacklevel for a warning its caller gives at ``level`` (the caller
    is 1), counting past the ``entry`` wrappers between it and the line it names."""
    frame, extra = sys._getframe(1), 0
    for _ in range(level - 1):
        frame = frame.f_back
        while frame is not None and frame.f_code is _ENTRY_CODE:
            frame, extra = frame.f_back, extra + 1
        if frame is None:
            break
    return level + extra
