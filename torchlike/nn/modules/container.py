"""Containers: Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict (mirror
``torch.nn``'s).  Each keeps its entries in the Module's own tables, so iteration order, dotted
names and state_dict keys are PyTorch's ("0", "1", ... or the dict keys)."""
import collections
import operator

from ..._tensor import Tensor
from ..parameter import Parameter
from .module import Module, _add_indent


def _index(idx, n):
    """A non-negative index into ``n`` entries, with PyTorch's IndexError."""
    idx = operator.index(idx)
    if not -n <= idx < n:
        raise IndexError(f"index {idx} is out of range")
    return idx % n


class Sequential(Module):
    """Mirrors ``torch.nn.Sequential``: modules called in order, each on the previous output.

    Example::

        >>> net = torchlike.nn.Sequential(torchlike.nn.Linear(4, 8), torchlike.nn.ReLU())
    """

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], collections.OrderedDict):
            for name, module in args[0].items():
                self.add_module(name, module)
        else:
            for i, module in enumerate(args):
                self.add_module(str(i), module)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(collections.OrderedDict(list(self._modules.items())[idx]))
        return list(self._modules.values())[_index(idx, len(self))]

    def __setitem__(self, idx, module):
        key = list(self._modules)[_index(idx, len(self))]
        setattr(self, key, module)

    def __delitem__(self, idx):
        keys = list(self._modules)
        for key in keys[idx] if isinstance(idx, slice) else [keys[_index(idx, len(self))]]:
            delattr(self, key)
        self._renumber()

    def _renumber(self):
        modules = list(self._modules.values())
        self._modules.clear()
        self._modules.update((str(i), m) for i, m in enumerate(modules))

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __add__(self, other):
        if not isinstance(other, Sequential):
            raise ValueError("add operator supports only objects of Sequential class, but "
                             f"{type(other)} is given.")
        return Sequential(*self, *other)

    def __iadd__(self, other):
        if not isinstance(other, Sequential):
            raise ValueError("add operator supports only objects of Sequential class, but "
                             f"{type(other)} is given.")
        return self.extend(other)

    def __mul__(self, other):
        if not isinstance(other, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(other)}")
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")
        return Sequential(*(list(self) * other))

    __rmul__ = __mul__

    def __imul__(self, other):
        product = self * other
        self._modules.clear()
        self._modules.update(product._modules)
        return self

    def append(self, module):
        """Mirrors ``Sequential.append``."""
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index, module):
        """Mirrors ``Sequential.insert``: ``module`` goes before position ``index``."""
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        modules = list(self._modules.values())
        modules.insert(index if index >= 0 else index + n, module)
        self._modules.clear()
        self._modules.update((str(i), m) for i, m in enumerate(modules))
        return self

    def extend(self, sequential):
        """Mirrors ``Sequential.extend``."""
        for module in sequential:
            self.append(module)
        return self

    def pop(self, key):
        """Mirrors ``Sequential.pop``: remove and return the module at ``key``."""
        module = self[key]
        del self[key]
        return module

    def forward(self, input):
        for module in self:
            input = module(input)
        return input


class ModuleList(Module):
    """Mirrors ``torch.nn.ModuleList``: a list of sub-modules, registered so their parameters
    belong to the owner."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])
        return self._modules[str(_index(idx, len(self)))]

    def __setitem__(self, idx, module):
        setattr(self, str(_index(idx, len(self))), module)

    def __delitem__(self, idx):
        keys = list(self._modules)
        for key in keys[idx] if isinstance(idx, slice) else [str(_index(idx, len(self)))]:
            delattr(self, key)
        Sequential._renumber(self)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other):
        return ModuleList([*self, *other])

    def append(self, module):
        """Mirrors ``ModuleList.append``."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        """Mirrors ``ModuleList.extend``."""
        if not isinstance(modules, collections.abc.Iterable):
            raise TypeError("ModuleList.extend should be called with an iterable, but got "
                            + type(modules).__name__)
        for module in modules:
            self.append(module)
        return self

    def insert(self, index, module):
        """Mirrors ``ModuleList.insert``."""
        modules = list(self._modules.values())
        modules.insert(index, module)
        self._modules.clear()
        for i, m in enumerate(modules):
            self.add_module(str(i), m)

    def pop(self, key):
        """Mirrors ``ModuleList.pop``."""
        module = self[key]
        del self[key]
        return module

    def __repr__(self):
        # PyTorch groups runs of identical children: "(0-2): 3 x Linear(...)"
        reprs = [repr(m) for m in self]
        if not reprs:
            return self._get_name() + "()"
        lines, start = [], 0
        for i in range(1, len(reprs) + 1):
            if i == len(reprs) or reprs[i] != reprs[start]:
                label = f"({start})" if i - start == 1 else f"({start}-{i - 1}): {i - start} x"
                sep = ": " if i - start == 1 else " "
                lines.append(label + sep + _add_indent(reprs[start], 2))
                start = i
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    """Mirrors ``torch.nn.ModuleDict``: sub-modules by name, in insertion order."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def clear(self):
        """Mirrors ``ModuleDict.clear``."""
        self._modules.clear()

    def pop(self, key):
        """Mirrors ``ModuleDict.pop``."""
        module = self[key]
        del self[key]
        return module

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules):
        """Mirrors ``ModuleDict.update``: from a mapping or an iterable of (name, module)."""
        pairs = modules.items() if isinstance(modules, collections.abc.Mapping) else modules
        for pair in pairs:
            key, module = pair
            self[key] = module


def _tensor_line(key, value, type_name):
    if not isinstance(value, Tensor):
        return f"  ({key}): Object of type: {type(value).__name__}"
    size = "x".join(str(s) for s in value.shape)
    device = "" if value.device.type == "cpu" else f" ({value.device})"
    kind = "Parameter" if isinstance(value, Parameter) else "Tensor"
    return f"  ({key}): {kind} containing: [{type_name(value)} of size {size}{device}]"


def _as_parameter(value):
    """PyTorch's rule: a plain Tensor stored in a ParameterList/Dict becomes a Parameter."""
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


class ParameterList(Module):
    """Mirrors ``torch.nn.ParameterList``: a list of Parameters (Tensors are wrapped as
    Parameters; other objects are kept as plain attributes)."""

    def __init__(self, values=None):
        super().__init__()
        self._size = 0
        if values is not None:
            self.extend(values)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)([self[i] for i in range(len(self))[idx]])
        return getattr(self, str(_index(idx, len(self))))

    def __setitem__(self, idx, value):
        setattr(self, str(_index(idx, len(self))), _as_parameter(value))

    def __len__(self):
        return self._size

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __iadd__(self, values):
        return self.extend(values)

    def append(self, value):
        """Mirrors ``ParameterList.append``."""
        self._size += 1
        setattr(self, str(self._size - 1), _as_parameter(value))
        return self

    def extend(self, values):
        """Mirrors ``ParameterList.extend``."""
        if not isinstance(values, collections.abc.Iterable) or isinstance(values, Tensor):
            raise TypeError("ParameterList.extend should be called with an iterable, but got "
                            + type(values).__name__)
        for value in values:
            self.append(value)
        return self

    def extra_repr(self):
        return "\n".join(_tensor_line(i, p, lambda t: str(t.dtype)) for i, p in enumerate(self))


class ParameterDict(Module):
    """Mirrors ``torch.nn.ParameterDict``: Parameters by name, in insertion order."""

    def __init__(self, parameters=None):
        super().__init__()
        self._keys = {}
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key):
        return getattr(self, key)

    def __setitem__(self, key, value):
        self._keys[key] = None
        setattr(self, key, _as_parameter(value))

    def __delitem__(self, key):
        del self._keys[key]
        delattr(self, key)

    def __len__(self):
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __contains__(self, key):
        return key in self._keys

    def keys(self):
        return self._keys.keys()

    def items(self):
        return ((k, self[k]) for k in self._keys)

    def values(self):
        return (self[k] for k in self._keys)

    def get(self, key, default=None):
        """Mirrors ``ParameterDict.get``."""
        return self[key] if key in self else default

    def pop(self, key):
        """Mirrors ``ParameterDict.pop``."""
        value = self[key]
        del self[key]
        return value

    def clear(self):
        """Mirrors ``ParameterDict.clear``."""
        for key in list(self._keys):
            del self[key]

    def update(self, parameters):
        """Mirrors ``ParameterDict.update``: from a mapping or an iterable of (key, value);
        a plain (unordered) dict's keys are taken sorted, as PyTorch does."""
        if isinstance(parameters, (collections.OrderedDict, ParameterDict)):
            pairs = parameters.items()
        elif isinstance(parameters, collections.abc.Mapping):
            pairs = sorted(parameters.items())
        else:
            pairs = parameters
        for key, value in pairs:
            self[key] = value

    def extra_repr(self):
        return "\n".join(_tensor_line(k, p, lambda t: "torch." + t.type().rsplit(".", 1)[-1])
                         for k, p in self.items())
