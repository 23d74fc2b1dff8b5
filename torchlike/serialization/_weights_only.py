"""The ``weights_only`` unpickler: a pickle interpreter that runs only what a checkpoint of
weights needs (the reading half of ``torchlike.load(weights_only=True)``).

NOTE [ weights_only ]
A pickle is a program: GLOBAL pushes any importable object, REDUCE calls one, BUILD sets
attributes on one (``setattr`` / ``__setstate__``), NEWOBJ/INST/OBJ construct classes.  Filtering
only the names a pickle imports is not enough: a BUILD on an allowed class or singleton
(``torch.FloatStorage``, a dtype, ``torch.Tensor``) rewrites it for the whole process.  So, as
torch's own weights_only unpickler does, a ``weights_only`` load runs the pickle in this
interpreter, which knows each opcode a protocol-2 checkpoint uses and refuses the rest, with
torch's rules and messages:
- GLOBAL answers from the allow-list only (torch's names mapped onto torchlike, see
  ``TORCH_GLOBALS``, plus ``add_safe_globals``); modules sys/os/posix/nt are refused even then.
- REDUCE calls only allowed callables; NEWOBJ constructs only allowed classes.
- BUILD sets state only on instances (never on a global itself): a plain Tensor (torch's legacy
  ``set_``), a Parameter (its legacy ``__setstate__``), an OrderedDict (its ``__dict__``), or an
  instance of an allowed class.
- APPEND(S) only into lists, SETITEM(S) only into dict / OrderedDict / Counter.
- A persistent id must be an int or a tuple naming a storage.
- Every other opcode (EXT1/2/4, INST, OBJ, STACK_GLOBAL, FRAME, DUP, ...) raises
  ``Unsupported operand``.
So nothing runs that the allow-list does not name, and nothing that exists outside the file's own
objects is changed by loading it.
"""
import collections
import pickle
import struct
import sys
import warnings

from .._tensor import Tensor
from ._unpickler import (
    BLOCKED_MODULES, TORCH_GLOBALS, _NO_EQUIVALENT, _ascii, no_equivalent, python3_name, set_,
    tensor_setstate, user_globals)

_OPS = {}    # opcode byte -> (WeightsOnlyUnpickler method, bytes of its argument; None: varies)


def _op(code, arg_bytes=0):
    def register(f):
        _OPS[code[0]] = (f, arg_bytes)
        return f
    return register


def _shown(path):
    """How torch's messages spell a global: builtins without their module."""
    return path[len("builtins."):] if path.startswith("builtins.") else path


class WeightsOnlyUnpickler:
    """Mirrors ``torch._weights_only_unpickler.Unpickler``: ``load()`` runs the pickle read from
    ``file`` under the rules of NOTE [ weights_only ]; ``persistent_load(pid)`` (override it)
    resolves storages.  Refusals raise ``pickle.UnpicklingError``."""

    def __init__(self, file, *, encoding="bytes"):
        self.encoding = encoding
        self.read = file.read
        self.readline = file.readline
        self.memo = {}
        self.proto = -1

    def persistent_load(self, pid):
        raise pickle.UnpicklingError("unsupported persistent id encountered")

    def load(self):
        """The object the pickle builds."""
        self.metastack = []
        self.stack = []
        self._safe = _allowed()
        self._ids = {id(v) for v in self._safe.values()}
        while True:
            key = self.read(1)
            if not key:
                raise EOFError
            op = _OPS.get(key[0])
            if op is None:
                raise pickle.UnpicklingError(f"Unsupported operand {key[0]}")
            if op[0] is _stop:
                return self.stack.pop()
            op[0](self)

    # --- helpers ----------------------------------------------------------------------------------

    def _allowed_type(self, cls):
        return id(cls) in self._ids

    def pop_mark(self):
        items = self.stack
        self.stack = self.metastack.pop()
        return items

    def _check_set_item_target(self, opcode):
        if type(self.stack[-1]) not in (dict, collections.OrderedDict, collections.Counter):
            raise pickle.UnpicklingError(
                f"Can only {opcode} for dict, collections.OrderedDict, collections.Counter, but "
                f"got {type(self.stack[-1])}")


# --- the risky opcodes --------------------------------------------------------------------------

def read_global(readline):
    """A GLOBAL opcode's (module, name), in its Python 3 spelling."""
    module = readline()[:-1].decode("utf-8")
    name = readline()[:-1].decode("utf-8")
    return python3_name(module, name)


@_op(pickle.GLOBAL)
def _global(u):
    module, name = read_global(u.readline)
    path = f"{module}.{name}"
    if module in BLOCKED_MODULES:
        raise pickle.UnpicklingError(f"Trying to load unsupported GLOBAL {path} whose module "
                                     f"{module} is blocked.")
    found = u._safe.get(path)
    if found is not None:
        u.stack.append(found)
        return
    if path in _NO_EQUIVALENT:
        raise no_equivalent(path)
    shown = _shown(path)
    raise pickle.UnpicklingError(
        f"Unsupported global: GLOBAL {shown} was not an allowed global by default. Please use "
        f"`torchlike.serialization.add_safe_globals([{shown}])` or the "
        f"`torchlike.serialization.safe_globals([{shown}])` context manager to allowlist this "
        "global if you trust this class/function.")


@_op(pickle.NEWOBJ)
def _newobj(u):
    from ..nn.parameter import Parameter
    args = u.stack.pop()
    cls = u.stack.pop()
    if cls is Parameter:
        u.stack.append(Parameter(*args))
    elif u._allowed_type(cls):
        u.stack.append(cls.__new__(cls, *args))
    else:
        raise pickle.UnpicklingError("Can only create new object for nn.Parameter or classes "
                                     f"allowlisted via `add_safe_globals` but got {cls}")


@_op(pickle.REDUCE)
def _reduce(u):
    args = u.stack.pop()
    func = u.stack[-1]
    if not u._allowed_type(func):
        message = f"Trying to call reduce for unrecognized function {func}"
        if hasattr(func, "__self__"):
            message += f" which belongs to {func.__self__}"
        raise pickle.UnpicklingError(message)
    u.stack[-1] = func(*args)


@_op(pickle.BUILD)
def _build(u):
    from ..nn.parameter import Parameter
    state = u.stack.pop()
    inst = u.stack[-1]
    cls = type(inst)
    if cls is Tensor:
        set_(inst, *state)
    elif cls is Parameter:
        tensor_setstate(inst, state)
    elif cls is collections.OrderedDict:
        inst.__dict__.update(state)
    elif u._allowed_type(cls):
        if hasattr(inst, "__setstate__"):
            inst.__setstate__(state)
            return
        slots = None
        if isinstance(state, tuple) and len(state) == 2:
            state, slots = state
        if state:
            inst.__dict__.update(state)
        for k, v in (slots or {}).items():
            setattr(inst, k, v)
    else:
        raise pickle.UnpicklingError("Can only build Tensor, Parameter, OrderedDict or types "
                                     f"allowlisted via `add_safe_globals`, but got {cls}")


@_op(pickle.BINPERSID)
def _binpersid(u):
    pid = u.stack.pop()
    if type(pid) is not tuple and type(pid) is not int:
        raise pickle.UnpicklingError(f"persistent_load id must be tuple or int, but got "
                                     f"{type(pid)}")
    if type(pid) is tuple and pid and _ascii(pid[0]) != "storage":
        raise pickle.UnpicklingError(f"Only persistent_load of storage is allowed, but got "
                                     f"{type(pid[0])}")
    u.stack.append(u.persistent_load(pid))


# --- containers ---------------------------------------------------------------------------------

@_op(pickle.APPEND)
def _append(u):
    item = u.stack.pop()
    if type(u.stack[-1]) is not list:
        raise pickle.UnpicklingError(f"Can only append to lists, but got {type(u.stack[-1])}")
    u.stack[-1].append(item)


@_op(pickle.APPENDS)
def _appends(u):
    items = u.pop_mark()
    if type(u.stack[-1]) is not list:
        raise pickle.UnpicklingError(f"Can only extend lists, but got {type(u.stack[-1])}")
    u.stack[-1].extend(items)


@_op(pickle.SETITEM)
def _setitem(u):
    value, key = u.stack.pop(), u.stack.pop()
    u._check_set_item_target("SETITEM")
    u.stack[-1][key] = value


@_op(pickle.SETITEMS)
def _setitems(u):
    items = u.pop_mark()
    u._check_set_item_target("SETITEMS")
    for i in range(0, len(items), 2):
        u.stack[-1][items[i]] = items[i + 1]


@_op(pickle.MARK)
def _mark(u):
    u.metastack.append(u.stack)
    u.stack = []


@_op(pickle.TUPLE)
def _tuple(u):
    items = u.pop_mark()    # before reading u.stack: popping the mark replaces it
    u.stack.append(tuple(items))


@_op(pickle.TUPLE1)
def _tuple1(u):
    u.stack[-1] = (u.stack[-1],)


@_op(pickle.TUPLE2)
def _tuple2(u):
    u.stack[-2:] = [(u.stack[-2], u.stack[-1])]


@_op(pickle.TUPLE3)
def _tuple3(u):
    u.stack[-3:] = [(u.stack[-3], u.stack[-2], u.stack[-1])]


def _push(code, make):
    _op(code)(lambda u: u.stack.append(make()))


for _code, _make in ((pickle.NONE, lambda: None), (pickle.NEWFALSE, lambda: False),
                     (pickle.NEWTRUE, lambda: True), (pickle.EMPTY_TUPLE, tuple),
                     (pickle.EMPTY_LIST, list), (pickle.EMPTY_DICT, dict),
                     (pickle.EMPTY_SET, set)):
    _push(_code, _make)
del _code, _make


# --- numbers, strings, the memo -----------------------------------------------------------------

@_op(pickle.BININT, 4)
def _binint(u):
    u.stack.append(struct.unpack("<i", u.read(4))[0])


@_op(pickle.BININT1, 1)
def _binint1(u):
    u.stack.append(u.read(1)[0])


@_op(pickle.BININT2, 2)
def _binint2(u):
    u.stack.append(struct.unpack("<H", u.read(2))[0])


@_op(pickle.BINFLOAT, 8)
def _binfloat(u):
    u.stack.append(struct.unpack(">d", u.read(8))[0])


@_op(pickle.LONG1, None)
def _long1(u):
    n = u.read(1)[0]
    u.stack.append(pickle.decode_long(u.read(n)))


@_op(pickle.BINUNICODE, None)
def _binunicode(u):
    n = struct.unpack("<I", u.read(4))[0]
    if n > sys.maxsize:
        raise pickle.UnpicklingError("String is too long")
    u.stack.append(str(u.read(n), "utf-8", "surrogatepass"))


@_op(pickle.SHORT_BINSTRING, None)
def _short_binstring(u):
    data = u.read(u.read(1)[0])
    u.stack.append(data if u.encoding == "bytes" else data.decode(u.encoding, "strict"))


@_op(pickle.BINGET, 1)
def _binget(u):
    u.stack.append(u.memo[u.read(1)[0]])


@_op(pickle.LONG_BINGET, 4)
def _long_binget(u):
    u.stack.append(u.memo[struct.unpack("<I", u.read(4))[0]])


@_op(pickle.BINPUT, 1)
def _binput(u):
    u.memo[u.read(1)[0]] = u.stack[-1]


@_op(pickle.LONG_BINPUT, 4)
def _long_binput(u):
    u.memo[struct.unpack("<I", u.read(4))[0]] = u.stack[-1]


@_op(pickle.PROTO, 1)
def _proto(u):
    u.proto = u.read(1)[0]
    if u.proto != 2:
        warnings.warn(
            f"Detected pickle protocol {u.proto} in the checkpoint, which was not the default "
            "pickle protocol used by `torchlike.load` (2). The weights_only Unpickler might not "
            "support all instructions implemented by this protocol, please file an issue for "
            "adding support if you encounter this.", stacklevel=4)


@_op(pickle.STOP)
def _stop(u):
    pass   # load() returns the top of the stack


# --- the globals a checkpoint names (torch.serialization.get_unsafe_globals_in_checkpoint) ------

def globals_in_pickle(file):
    """Mirrors ``torch._weights_only_unpickler.get_globals_in_pkl``: the "module.name" of every
    GLOBAL in the pickle, read without running it (an opcode outside the interpreter's set
    raises ``Unsupported operand``, as a load would)."""
    found = set()
    while True:
        key = file.read(1)
        if not key:
            raise EOFError
        op = _OPS.get(key[0])
        if op is None:
            raise pickle.UnpicklingError(f"Unsupported operand {key[0]}")
        f, arg_bytes = op
        if f is _stop:
            return found
        if f is _global:
            found.add(".".join(read_global(file.readline)))
        elif f is _binunicode:
            n = struct.unpack("<I", file.read(4))[0]
            if n > sys.maxsize:
                raise pickle.UnpicklingError("String is too long")
            file.read(n)
        elif f in (_short_binstring, _long1):
            file.read(file.read(1)[0])
        else:
            file.read(arg_bytes)


def _allowed():
    """Every global a ``weights_only`` load may name: the user's ``add_safe_globals``, and
    torch's allow-list mapped onto torchlike (which wins where both name a path)."""
    return {**user_globals(), **TORCH_GLOBALS}


def allowed_names():
    """The "module.name" paths ``get_unsafe_globals_in_checkpoint`` does not report."""
    return set(_allowed()) | set(_NO_EQUIVALENT)

