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
"""
import sys

import numpy as np

from ._tensor import Tensor


def refcounts(arrays):
    """The reference counts of ``arrays`` (a list or a dict's values: the container's own
    reference is one of them)."""
    return list(map(sys.getrefcount, arrays))


def sole_owned(arrays):
    """Whether each of ``arrays`` (held in one container) is held by its Tensor alone."""
    return all(map(SOLE_OWNER.__ge__, map(sys.getrefcount, arrays)))


def _sole_owner_refs():
    """The count of an array only its Tensor and a list hold, with the counting's own.
    (Counted with a numpy stand-in: making a jax array at import would start jax's backend,
    claiming a GPU.)"""
    t = Tensor._wrap(np.zeros(1))
    return refcounts([t._arr])[0]


SOLE_OWNER = _sole_owner_refs()
