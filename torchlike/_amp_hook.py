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
"""
import functools

policy = None


def entry(name):
    """Decorator: the autocast row ``name`` applies to this composite's operands as a whole."""
    def wrap(fn):
        @functools.wraps(fn)
        def composite(*args, **kwargs):
            if policy is None:
                return fn(*args, **kwargs)
            return policy.run_entry(name, fn, args, kwargs)
        return composite
    return wrap
