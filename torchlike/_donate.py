"""Whether a program may take the buffers of the arrays it replaces.

NOTE [ donated buffers ]
A program that computes new contents for Tensors it was given (an optimizer's update, a compiled
step) may take their old buffers for its outputs (jit's ``donate_argnums``): XLA then writes in
place, where otherwise every call fills newly allocated buffers and the old ones are freed.
Plain jax on the 2-core CPU, SGD with momentum over the MLP 784-512-512-10: 322 -> 172 us a step
(minimum), 695 -> 266 us (median).  A donated array is deleted, so it may be given only where
nothing else can read it: the Tensor holds the only reference to it.  ``refcounts`` counts them
(``sys.getrefcount``), and ``SOLE_OWNER`` is the count of an array only a Tensor and the caller's
container hold; one anything else holds (an alias or a clone sharing it, a graph that saved it,
a jax array of it in the user's hands) is not given.  jax itself declines to donate a buffer
that numpy or DLPack shares.

A program is compiled for its donations (``donate_argnums``), so an update that declined to
donate where an array was shared compiled a second program for the same work: two Tensors share
an array wherever one was copied (``copy.deepcopy``, as ``nn.TransformerEncoder`` clones its
layer), and examples/pytorch/transformer_lm.py's AdamW compiled its update twice, 0.47 and 0.58
s, for its first step and then for the rest.  So the first time an optimizer's update finds a
written array shared, it takes copies of them all (``copy_each``) and donates those; only where
sharing comes again (a graph kept by retain_graph, a lazy segment's operands: copies every step
cost the Transformer's lazy step 2 ms of ``device_put`` calls) does it compile the program
without donation.  All, not only the shared ones: a count tells whether another object holds an
array, not whether another array holds its buffers (a replicated DTensor's ``full_tensor()`` and
what a state dict loads from it share theirs: ``jax.device_put`` to a layout equal to an array's
own, over another Mesh object, returns a new array over the same buffers), so only an update
whose arrays are all held alone takes its Tensors' own, as before.  The copies are the runtime's
(``copied``), not a jitted copy that would compile for each shape.
"""
import sys

import jax
import numpy as np

from ._tensor import Tensor


def refcounts(arrays):
    """The reference counts of ``arrays`` (a list or a dict's values: the container's own
    reference is one of them)."""
    return list(map(sys.getrefcount, arrays))


def sole_owned(arrays):
    """Whether each of ``arrays`` (held in one container) is held by its Tensor alone."""
    return all(map(SOLE_OWNER.__ge__, map(sys.getrefcount, arrays)))


def copied(a):
    """A copy of the array ``a`` on its devices, made without compiling a program."""
    return jax.device_put(a, may_alias=False)


def own(arrays):
    """``arrays`` (a list of arrays, each its Tensor's; None allowed) with each one something
    else holds as well replaced by a copy; changed in place."""
    counts = refcounts(arrays)
    if all(map(SOLE_OWNER.__ge__, counts)):   # (as a rule: a compiled step's hundred arrays)
        return
    for i, n in enumerate(counts):
        if n > SOLE_OWNER and arrays[i] is not None:
            arrays[i] = copied(arrays[i])


def copy_each(arrays):
    """``arrays`` (a list or a dict of arrays) with each replaced by a copy; changed in place."""
    for key in list(arrays) if isinstance(arrays, dict) else range(len(arrays)):
        arrays[key] = copied(arrays[key])


def _sole_owner_refs():
    """The count of an array only its Tensor and a list hold, with the counting's own.
    (Counted with a numpy stand-in: making a jax array at import would start jax's backend,
    claiming a GPU.)"""
    t = Tensor._wrap(np.zeros(1))
    return refcounts([t._arr])[0]


SOLE_OWNER = _sole_owner_refs()
