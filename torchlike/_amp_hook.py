"""Where autocast reaches dispatch and the composite ops PyTorch's autocast lists name.

NOTE [ autocast hook ]
``policy`` is None unless an autocast region is active in some thread; then it is
``torchlike.amp._policy``'s policy object (the one table, NOTE [ autocast policy ] there).
``_dispatch.call`` asks it to cast the operands of an op whose name has a row.  A public
function that PyTorch lists but torchlike writes as a composite (``matmul`` from dot / mv / mm /
bmm, ``cross_entropy`` from log_softmax and nll_loss) is wrapped by ``entry(name)``: its
operands are cast by its row before it runs, and the ops inside it are not cast again, as
PyTorch's autocast kernels exclude autocast below themselves.  With no region active each costs
one test of ``policy``.  This module imports nothing of torchlike, so the op table can use it.

The wrapper is one frame between the caller and the function, with or without a region;
``stacklevel`` gives a warning inside such a function its caller's line all the same.
"""
import functools
import sys

policy = None


def entry(name):
    """Decorator: the autocast row ``name`` applies to this composite's operands as a whole."""
    def wrap(fn):
        @functools.wraps(fn)
        def composite(*args, **kwargs):
            if policy is None:
                return fn(*args, **kwargs)
            args, kwargs, excluded = policy.enter(name, args, kwargs)
            try:
                return fn(*args, **kwargs)
            finally:
                if excluded:
                    policy.leave()
        return composite
    return wrap


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
