"""Parameter and Buffer: the Tensors a Module files as its state (mirrors ``torch.nn.parameter``).
"""
import numpy as np

from .._creation import empty
from .._tensor import Tensor


def _new(cls, data, requires_grad):
    """A leaf of class ``cls`` holding ``data``'s values (the jax array is shared: immutable)."""
    if data is None:
        data = empty(0)
    if not isinstance(data, Tensor):
        raise TypeError(f"Creating a {cls.__name__} from an instance of type "
                        f"{type(data).__name__} requires that detach() returns an instance of "
                        "the same type, but return type Tensor was found instead.")
    t = object.__new__(cls)
    t._arr = data._value()
    t._strides = data._strides
    if data._inference:   # the same tensor as data, in PyTorch
        t._inference = True
    if requires_grad:
        t._set_requires_grad(True)
    return t


class Parameter(Tensor):
    """Mirrors ``torch.nn.Parameter``: a leaf Tensor that a Module registers as a parameter.

    Args:
        data: the initial values (default: an empty tensor).
        requires_grad: whether the parameter requires gradient (default True).

    Example::

        >>> w = torchlike.nn.Parameter(torchlike.zeros(2))
        >>> w
        Parameter containing:
        tensor([0., 0.], requires_grad=True)
    """

    def __new__(cls, data=None, requires_grad=True):
        return _new(cls, data, requires_grad)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __reduce_ex__(self, protocol):
        return (_rebuild_parameter, (type(self), np.asarray(self._value()), self.dtype._name,
                                     self.requires_grad))


def _rebuild_parameter(cls, values, dtype_name, requires_grad):
    from .._creation import _rebuild
    return cls(_rebuild(values, dtype_name, False), requires_grad)


class Buffer(Tensor):
    """Mirrors ``torch.nn.Buffer``: assigning one to a Module attribute registers it as a
    buffer; ``persistent=False`` keeps it out of ``state_dict``."""

    def __new__(cls, data=None, *, persistent=True):
        t = _new(cls, data, False)
        t.persistent = persistent
        return t


class UninitializedParameter(Parameter):
    """Mirrors ``torch.nn.UninitializedParameter``: the parameter of a lazy module before its
    first forward; ``materialize(shape)`` gives it its shape."""

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return _new(cls, empty(0, device=device, dtype=dtype), requires_grad)

    def materialize(self, shape, device=None, dtype=None):
        """Give this parameter ``shape`` (uninitialised values) and make it a Parameter."""
        t = empty(shape, device=device or self.device, dtype=dtype or self.dtype)
        self._arr = t._value()
        self._strides = None
        self.__class__ = Parameter

    def detach(self):
        """Still uninitialized (what ``state_dict`` holds before the first forward)."""
        return UninitializedParameter(False, self.device, self.dtype)

    def __repr__(self):
        return "<UninitializedParameter>"


class UninitializedBuffer(Buffer):
    """Mirrors ``torch.nn.UninitializedBuffer``: the buffer of a lazy module (running statistics
    of a lazy norm layer) before its first forward; ``materialize(shape)`` gives it its shape and
    makes it a plain Tensor."""

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        t = _new(cls, empty(0, device=device, dtype=dtype), requires_grad)
        t.persistent = persistent
        return t

    def materialize(self, shape, device=None, dtype=None):
        """Give this buffer ``shape`` (uninitialised values) and make it a Tensor."""
        t = empty(shape, device=device or self.device, dtype=dtype or self.dtype)
        self._arr = t._value()
        self._strides = None
        self.__class__ = Tensor

    def detach(self):
        """Still uninitialized (what ``state_dict`` holds before the first forward)."""
        return UninitializedBuffer(False, self.device, self.dtype, self.persistent)

    def __repr__(self):
        return "<UninitializedBuffer>"


def is_lazy(param):
    """Mirrors ``torch.nn.parameter.is_lazy``: an uninitialized parameter or buffer."""
    return isinstance(param, (UninitializedParameter, UninitializedBuffer))
