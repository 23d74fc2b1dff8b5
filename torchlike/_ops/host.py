"""Tensors and the memory outside them: frombuffer, from_file, to_dlpack and is_storage; and the
Tensor methods that run a Python callable on the host (apply_, map_) or hand a tensor to
``nn.Module.load_state_dict`` (module_load).  Their Tensor methods join the reduce family
(reduce.py).

NOTE [ no shared memory ]
PyTorch's frombuffer and from_file(shared=True) return tensors that share memory with the buffer
or file: writes go both ways.  A torchlike tensor's values live in an XLA buffer, which cannot
alias a Python buffer or a mapped file, so these read the bytes once (a copy, as
``torchlike.from_numpy``); later writes on either side are not seen by the other.
"""
import numpy as np

from .. import _dtype as D
from .._creation import _finish, _place


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """Mirrors ``torch.frombuffer``: a 1-D tensor of ``count`` elements of ``dtype`` (all that
    fit, by default) read from a Python buffer from byte ``offset`` (a copy: NOTE [ no shared
    memory ])."""
    dt = D.to_dtype(dtype)
    data = memoryview(buffer).cast("B")
    length = len(data)
    if length <= 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if not 0 <= offset < length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({length} bytes) minus 1")
    if count <= 0 and (length - offset) % dt.itemsize:
        raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} bytes) "
                         f"must be a multiple of element size ({dt.itemsize})")
    n = (length - offset) // dt.itemsize if count < 0 else count
    if offset + n * dt.itemsize > length:
        raise ValueError(f"requested buffer length ({n} * {dt.itemsize} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({length} bytes)")
    values = np.frombuffer(data, dt._np, n, offset).copy()
    return _finish(_place(values, None), requires_grad)


def from_file(filename, shared=None, size=0, *, dtype=None, layout=None, device=None,
              pin_memory=False, requires_grad=False):
    """Mirrors ``torch.from_file``: a 1-D tensor of ``size`` elements of ``dtype`` (the default
    float dtype) read from the start of a binary file (read once: NOTE [ no shared memory ])."""
    dt = D.get_default_dtype() if dtype is None else D.to_dtype(dtype)
    with open(filename, "rb") as f:
        data = f.read(size * dt.itemsize)
    if len(data) < size * dt.itemsize:
        raise RuntimeError(f"unable to mmap {size * dt.itemsize} bytes from file <{filename}>: "
                           f"Cannot allocate memory (12)")
    values = np.frombuffer(data, dt._np, size).copy()
    return _finish(_place(values, device), requires_grad)


def to_dlpack(tensor):
    """Mirrors ``torch.to_dlpack``: a DLPack capsule of the tensor's values, for another
    library's ``from_dlpack``."""
    return tensor._value().__dlpack__()


def is_storage(obj):
    """Mirrors ``torch.is_storage``: whether ``obj`` is a storage (what
    ``Tensor.untyped_storage()`` returns)."""
    from .._storage import UntypedStorage
    return isinstance(obj, UntypedStorage)


# --- Python callables on the host ---------------------------------------------------------------

def _host_values(self, name):
    if self.requires_grad:
        raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use "
                           f"var.detach().{name}() instead.")
    return np.array(self._value())


def _store(self, values):
    from .._inplace import inplace
    from .._creation import from_host
    return inplace(self, lambda: from_host(values, self, self.dtype._np))


def apply_(self, callable):
    """Mirrors ``Tensor.apply_``: each element replaced by ``callable(element)``, a Python
    function run on the host (slow; for CPU tensors in PyTorch)."""
    values = _host_values(self, "apply_")
    flat = values.reshape(-1)
    for i, v in enumerate(flat.tolist()):
        flat[i] = callable(v)
    return _store(self, values)


def map_(self, tensor, callable):
    """Mirrors ``Tensor.map_``: each element replaced by ``callable(element, other)`` with
    ``tensor``'s element broadcast to this tensor's shape (a Python function on the host)."""
    values = _host_values(self, "map_")
    other = np.broadcast_to(np.asarray(tensor._value()), values.shape)
    flat = values.reshape(-1)
    for i, (a, b) in enumerate(zip(flat.tolist(), other.reshape(-1).tolist())):
        flat[i] = callable(a, b)
    return _store(self, values)


def module_load(self, other, assign=False):
    """Mirrors ``Tensor.module_load``: what ``nn.Module.load_state_dict`` swaps in for this
    parameter or buffer: ``self.copy_(other).detach()``, or ``other.detach()`` when
    ``assign``."""
    if assign:
        return other.detach()
    return self.copy_(other).detach()


PUBLIC = ("frombuffer", "from_file", "to_dlpack", "is_storage")
TENSOR_METHODS = {"apply_": apply_, "map_": map_, "module_load": module_load}
