"""Tensor: the mutable facade over one jax.Array.

NOTE [ views and in-place writes ]
jax arrays are immutable; torchlike tensors are not.  An in-place op computes a new array and
rebinds it inside the same Tensor, bumping the version counter that autograd checks.  A view
(``x[0]``, ``x.view(..)``, ``x.t()``, ``x.detach()``) keeps its storage root and the chain of view
steps that derives it from the root's array.  Writing through a view scatters the new values into
the root (positions found by running the chain on an iota of the root's shape), and every view
re-derives its array when the root's storage generation has moved since it last looked.
``_gen`` counts storage writes (for staleness); the version counter (``_version``) is what
autograd checks, and is shared by a root and its views as in PyTorch (``.data`` gets its own).
"""
import functools
import math
import weakref

import jax
import numpy as np

from . import _dtype as D, _layout, _x64
from ._device import CPU, from_jax_device, to_jax_device
from ._layout import contiguous_strides as _contiguous_strides
from ._lazy import Pending
from ._meta import NO_DATA, is_meta
from ._size import Size

try:   # the concrete jax.Array class, for the hot path's ``type(x) is ArrayImpl``
    from jax._src.array import ArrayImpl
except ImportError:   # jax moved it: find it by making an array (this starts jax's backend)
    ArrayImpl = type(jax.numpy.zeros(()))


def first_device(arr):
    """The device of ``arr``; of one laid out over several (a DTensor's values, or a result
    computed from them), the first of them by id, so ``.device`` does not depend on the order
    of a set."""
    found = arr.devices()
    return next(iter(found)) if len(found) == 1 else min(found, key=lambda d: d.id)


def aval_of(arr):
    """What to read an array's shape and dtype from: a jax array's aval, whose fields are plain
    attributes (NOTE [ reading an array's shape and dtype ] in _dispatch.py); a tracer or a
    meta array itself."""
    return arr.aval if type(arr) is ArrayImpl else arr

_NON_LEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad field "
    "to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you "
    "access the non-leaf Tensor by mistake, make sure you access the leaf Tensor instead. See "
    "github.com/pytorch/pytorch/pull/30531 for more informations.")


class Tensor:
    """Mirrors ``torch.Tensor``.  Build tensors with ``torchlike.tensor`` and the factories."""

    # Per-instance fields that most tensors never set live here as class defaults, so making a
    # Tensor on the hot path is one allocation and one attribute store.
    _grad_fn = None
    _output_nr = 0
    _requires_grad = False
    _grad = None
    _acc = None            # weakref to this leaf's AccumulateGrad
    _vc = None             # version counter: a one-element list, shared with views
    _gen = 0               # storage generation of a root (bumped on every write)
    _root = None           # views: the tensor that owns the storage
    _chain = ()            # views: ((op, static), ...) from the root's array to this one
    _seen = 0              # views: the root's _gen when _arr was last derived
    _vbase = None          # views: what ``._base`` shows (None for detach()/.data)
    _track = False         # views: created with autograd recording on
    _strides = None        # None: contiguous
    _retains = False
    _multi_view_of = None  # views from unbind/split: PyTorch forbids in-place writes with grad
    _stale = False         # such a view after a write to its storage: no use in the graph
    _no_grad_view = False  # a view of a tensor requiring grad, made under no_grad
    _number = None         # a Python number held as a Tensor (a traced hyper-parameter while
                           # torchlike.compile traces): promotes as that Python type
    _viewed = False        # roots: a view or alias has been made of this storage
    _inference = False     # made in inference mode, or a view of such a tensor
    _captured = False      # found by torchlike.compile as state: its storage stays its own
    _pinned = False        # made by pin_memory() (NOTE [ pinned memory ] in _ops/convert.py)
    _lazy = None           # a value recorded but not run yet, in place of ``_arr`` (NOTE
                           # [ lazy segments ] in _lazy.py)
    _derive = None         # the base of an op's folded output view: (the view's array, the
                           # chain that makes this tensor's from it), in place of ``_arr`` until
                           # read (NOTE [ folded views ] in _dispatch.py)
    _host_recipe = None    # (the storage generation it holds for, a function making the values
                           # as numpy on the host): NOTE [ views read on the host ] in _views.py

    def __new__(cls, *args, **kwargs):
        # torch.Tensor(data) / torch.Tensor(*sizes): the legacy constructor (float tensors)
        from ._creation import _legacy_new
        return _legacy_new(cls, *args, **kwargs)

    @staticmethod
    def _wrap(arr):
        t = object.__new__(Tensor)
        t._arr = arr
        if INFERENCE_REGIONS[0] and _state.inference:
            t._inference = True
        return t

    def __getattr__(self, name):
        # only reached for a missing attribute: ``_arr`` of a pending tensor runs its segment;
        # a derived base's is made from its view's array
        if name == "_arr":
            pending = self.__dict__.get("_lazy")
            if pending is not None:
                return pending.value_for(self)
            derive = self._derive
            if derive is not None:
                src, chain = derive
                arr = self._arr = _views.apply_chain(
                    src.get() if type(src) is Pending else src, chain)
                self._derive = None
                return arr
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    # --- storage, views, versions (NOTE [ views and in-place writes ]) --------------------------

    def _value(self):
        return self._arr if self._root is None else self._sync()

    def _sync(self):
        self._refresh()
        return self._arr

    def _refresh(self):
        """A view: re-derive its array (and grad_fn) if its storage was written since."""
        root = self._root
        if root._gen != self._seen:
            self._arr = _views.apply_chain(root._arr, self._chain)
            if self._lazy is not None:   # recorded before the write: stale
                self._lazy = None
            self._seen = root._gen
            base = self._vbase   # autograd's base: the root, or an alias of it
            if self._track and base.requires_grad:
                self._grad_fn = _views.as_strided_node(base, self._chain[len(base._chain):],
                                                       self)
                self._output_nr = 0

    def _become_view(self, parent, op, static, track):
        """Make this (fresh) output of a view op a view of ``parent``'s storage."""
        root = parent if parent._root is None else parent._root
        root._viewed = True
        if parent._inference is not self._inference:   # a view is what its base is
            self._inference = parent._inference
        self._root = root
        self._chain = parent._chain + ((op, static),)
        self._seen = root._gen
        # what ._base shows: the root, or a detached alias the view chain started from
        if parent._vbase is not None:
            self._vbase = parent._vbase
        else:
            self._vbase = parent
        self._track = track or parent._track
        self._no_grad_view = not track and not _state.grad_enabled and parent.requires_grad
        self._vc = parent._version_counter()
        self._strides = op.view(parent, self, dict(static))
        if parent._multi_view_of is not None:   # PyTorch: views of such views inherit the rule
            self._multi_view_of = op.node[:op.node.index("Backward")]

    def _alias(self, own_version):
        """A view with no steps: what detach() (shared version) and .data (own) return.
        NOTE [ an alias does not keep a graph ]: a detached tensor holds only its value, as in
        PyTorch, so ``losses.append(loss.detach())`` must not keep ``loss``'s graph (and, before
        a backward, the activations it saved) alive.  An alias refers to its storage root; when
        that root is a result of the graph with no view of it yet, the storage moves to the
        alias instead: the alias becomes the root and the old root an alias of it (no steps,
        its grad_fn kept), so nothing points from the alias to the graph.  Views point at their
        root, so once a root has one (``out[:, 0].detach()``), an alias keeps that root and its
        graph alive, as it does for state torchlike.compile captured (whose storage roots its
        programs rely on); a backward without retain_graph still frees what the graph saved."""
        pending = self._lazy if self._root is None else None
        if pending is None:
            t = Tensor._wrap(self._value())
        else:   # the alias shares the pending value (NOTE [ lazy segments ] in _lazy.py)
            t = Tensor._wrap(None)
            del t._arr
            t._lazy = pending
        t._strides = self._strides
        if self._inference is not t._inference:
            t._inference = self._inference
        vc = self._version_counter()
        t._vc = [0] if own_version else vc
        if self._root is None and self._grad_fn is not None and not (self._viewed or
                                                                      self._captured):
            t._gen = self._gen
            t._viewed = True
            self._root = t
            self._seen = t._gen
            return t
        root = t._root = self if self._root is None else self._root
        root._viewed = True
        t._chain = self._chain
        t._seen = root._gen
        return t

    def _version_counter(self):
        vc = self._vc
        if vc is None:
            vc = self._vc = [0] if self._root is None else self._root._version_counter()
        return vc

    def _write(self, new_arr):
        """Store new contents (already this tensor's shape and dtype) and bump versions."""
        if type(new_arr) is Pending:   # NOTE [ lazy segments ] in _lazy.py
            if self._root is None:   # a pending value of its own, nothing runs
                self.__dict__.pop("_arr", None)
                self._lazy = new_arr
                self._gen += 1
                self._version_counter()[0] += 1
                return
            new_arr = new_arr.get()
        if self._lazy is not None:   # its pending value would land after this write
            self._lazy.value_for(self)
        if self._root is None:
            self._arr = new_arr
            self._gen += 1
        else:
            root = self._root
            root._arr = _views.scatter_chain(root._value(), self._chain, new_arr)
            root._gen += 1
            self._arr = new_arr
            self._seen = root._gen
        self._version_counter()[0] += 1

    @property
    def _version(self):
        if self._inference:
            raise RuntimeError("Inference tensors do not track version counter.")
        return self._version_counter()[0]

    def is_inference(self):
        """Mirrors ``Tensor.is_inference``: made in inference mode (or a view of such)."""
        return self._inference

    @property
    def _base(self):
        return self._vbase

    def _edge(self):
        if self._stale:
            raise _views.stale_view_error(self)
        fn = self._grad_fn
        if fn is not None:
            return (fn, self._output_nr)
        acc = self._acc() if self._acc is not None else None
        if acc is None:
            acc = AccumulateGrad(self)
            self._acc = weakref.ref(acc)
        return (acc, 0)

    # --- metadata -------------------------------------------------------------------------------

    # NOTE [ reading an array's shape and dtype ] in _dispatch.py: the metadata below is read
    # from the array's aval, inline (these run several times per op), or from a pending value's
    # without running its segment (NOTE [ lazy segments ] in _lazy.py)

    def _aval(self):
        """What to read shape and dtype from (``aval_of`` the array, or the pending value)."""
        arr = self._lazy or self._arr
        return arr.aval if type(arr) is ArrayImpl else arr

    @property
    def shape(self):
        arr = self._lazy or self._arr
        return Size((arr.aval if type(arr) is ArrayImpl else arr).shape)

    def size(self, dim=None):
        arr = self._lazy or self._arr
        shape = (arr.aval if type(arr) is ArrayImpl else arr).shape
        if dim is None:
            return Size(shape)
        return shape[_wrap_dim(dim, len(shape))]

    @property
    def dtype(self):
        arr = self._lazy or self._arr
        np_dtype = (arr.aval if type(arr) is ArrayImpl else arr).dtype
        dt = D._FROM_NP.get(np_dtype)
        return dt if dt is not None else D.from_numpy_dtype(np_dtype)

    @property
    def device(self):
        return from_jax_device(self._device())

    def _device(self):
        """The jax device of the values (in a traced step: the step's device)."""
        arr = self._lazy or self._arr
        if isinstance(arr, jax.core.Tracer):
            return _trace_context.device_of(self) or _cpu()
        return first_device(arr)

    @property
    def ndim(self):
        arr = self._lazy or self._arr
        return len((arr.aval if type(arr) is ArrayImpl else arr).shape)

    def dim(self):
        arr = self._lazy or self._arr
        return len((arr.aval if type(arr) is ArrayImpl else arr).shape)

    ndimension = dim

    def numel(self):
        arr = self._lazy or self._arr
        return math.prod((arr.aval if type(arr) is ArrayImpl else arr).shape)

    nelement = numel

    def element_size(self):
        return self.dtype.itemsize

    def is_floating_point(self):
        return self.dtype.is_floating_point

    def is_complex(self):
        return self.dtype.is_complex

    is_cuda, is_cpu, is_xla, is_mps, is_xpu = (
        property(lambda self, t=t: self.device.type == t, doc=f"Mirrors ``Tensor.is_{t}``.")
        for t in ("cuda", "cpu", "xla", "mps", "xpu"))

    @property
    def is_meta(self):
        return is_meta(self._arr)

    def get_device(self):
        d = self.device
        return -1 if d.type in ("cpu", "meta") else (d.index or 0)

    def type(self, dtype=None):
        if dtype is None:
            return "torch." + self.dtype._tensor_type
        return self.to(D.to_dtype(dtype))

    def stride(self, dim=None):
        s = self._strides if self._strides is not None else _contiguous_strides(self.shape)
        return s if dim is None else s[_wrap_dim(dim, len(s))]

    def is_contiguous(self, memory_format=None):
        if memory_format is None and self._strides is None:
            return True
        return _layout.is_contiguous(self.shape, self._strides,
                                     memory_format or _layout.contiguous_format)

    # --- autograd attributes --------------------------------------------------------------------

    @property
    def grad_fn(self):
        if self._track:   # a recorded view's grad_fn follows writes to its storage
            self._refresh()
            if self._stale and _state.grad_enabled:
                raise _views.stale_view_error(self)
        return self._grad_fn

    @property
    def is_leaf(self):
        return self.grad_fn is None

    @property
    def output_nr(self):
        return self._output_nr

    @property
    def requires_grad(self):
        if self._track:
            self._refresh()
        return self._requires_grad or self._grad_fn is not None

    @requires_grad.setter
    def requires_grad(self, value):
        if self.grad_fn is not None:
            raise RuntimeError("you can only change requires_grad flags of leaf variables.")
        self._set_requires_grad(value)

    def requires_grad_(self, requires_grad=True):
        """Mirrors ``Tensor.requires_grad_``."""
        if self.grad_fn is not None:
            if not requires_grad:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want to "
                    "use a computed variable in a subgraph that doesn't require differentiation "
                    "use var_no_grad = var.detach().")
            return self
        self._set_requires_grad(requires_grad, "only Tensors of floating point dtype can require "
                                               "gradients")
        return self

    def _set_requires_grad(self, value,
                           message="only Tensors of floating point and complex dtype can require "
                                   "gradients"):
        value = bool(value)
        if value and not (self.dtype.is_floating_point or self.dtype.is_complex):
            raise RuntimeError(message)
        if value and self._inference and not _state.inference:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside "
                               "InferenceMode is not allowed.")
        if value != self._requires_grad:
            _trace_context.structure_changed()
        self._requires_grad = value

    @property
    def grad(self):
        if self._grad is None and not self._retains and self.grad_fn is not None:
            import warnings
            warnings.warn(_NON_LEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of "
                                f"type {type(value).__name__}")
            if value.dtype is not self.dtype:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{_c_type(value.dtype)}' to a "
                    f"tensor with grad_dtype '{self.dtype._scalar_name}'. The gradient must match "
                    "the "
                    "tensor's grad_dtype (defaults to the tensor's dtype). You can set the "
                    "tensor's grad_dtype attribute with a specific dtype, or None to allow any "
                    "dtype. Set grad_dtype with caution. Diverging the dtypes of a tensor and its "
                    "gradient may break downstream systems that assume they match.")
            if value.shape != self.shape:
                raise RuntimeError(f"attempting to assign a gradient of size '{list(value.shape)}'"
                                   f" to a tensor of size '{list(self.shape)}'. Please ensure that"
                                   " the gradient and the tensor are the same size")
        self._grad = value

    @grad.deleter
    def grad(self):
        self._grad = None

    @property
    def retains_grad(self):
        return self._retains

    def retain_grad(self):
        """Mirrors ``Tensor.retain_grad``: keep ``.grad`` for this non-leaf after backward."""
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.is_leaf or self._retains:
            return
        fn = self._grad_fn
        if fn._retains_grad is None:
            fn._retains_grad = {}
        fn._retains_grad[self._output_nr] = weakref.ref(self)
        self._retains = True

    def register_hook(self, hook):
        """Mirrors ``Tensor.register_hook``: ``hook(grad)`` runs when this tensor's gradient is
        computed; returning a tensor replaces the gradient.  Returns a removable handle."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        fn = self.grad_fn
        if fn is None:
            hooks = self.__dict__.setdefault("_hooks", {})
        else:
            hooks = fn._tensor_hooks(self._output_nr)
        return add_hook(hooks, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """Mirrors ``Tensor.register_post_accumulate_grad_hook``: ``hook(tensor)`` runs after
        the gradient was accumulated into this leaf's ``.grad``."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                               "tensors")
        return add_hook(self.__dict__.setdefault("_post_acc_hooks", {}), hook)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Mirrors ``Tensor.backward``."""
        from .autograd import backward
        backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def detach(self):
        """Mirrors ``Tensor.detach``: same storage (writes show on both), no autograd history."""
        return self._alias(own_version=False)

    def detach_(self):
        """Mirrors ``Tensor.detach_``."""
        if self._vbase is not None:
            raise RuntimeError("Can't detach views in-place. Use detach() instead. If you are "
                               "using DistributedDataParallel (DDP) for training, and "
                               "gradient_as_bucket_view is set as True, gradients are views of "
                               "DDP buckets, and hence detach_() cannot be called on these "
                               "gradients. To fix this error, please refer to the "
                               "Optimizer.zero_grad() function in torch/optim/optimizer.py as "
                               "the solution.")
        self._grad_fn = None
        self._output_nr = 0
        if self._requires_grad:
            _trace_context.structure_changed()
        self._requires_grad = False
        return self

    @property
    def data(self):
        return self._alias(own_version=True)

    @data.setter
    def data(self, value):
        if not isinstance(value, Tensor):
            raise TypeError(f"data must be a Tensor, got {type(value).__name__}")
        if self._vbase is not None:
            raise RuntimeError("setting .data of a view is not supported: set it on its base")
        if self._root is not None:   # an alias gets storage of its own (its aliases keep theirs)
            self._root, self._chain = None, ()
            _trace_context.structure_changed()
        self._arr = value._value()
        self.__dict__.pop("_lazy", None)
        self._strides = value._strides
        self._gen += 1

    # --- conversions ----------------------------------------------------------------------------

    def item(self):
        n = self.numel()
        if n != 1:
            raise RuntimeError(f"a Tensor with {n} elements cannot be converted to Scalar")
        if is_meta(self._arr):
            raise RuntimeError(_META_ITEM)
        return _py_scalar(_host(_readable(self)).reshape(()))

    def tolist(self):
        a = _host(_readable(self))
        if self.dtype is D.bfloat16:
            a = a.astype(np.float32)
        return a.tolist()

    def numpy(self, *, force=False):
        """Mirrors ``Tensor.numpy``, but as a copy (XLA owns the tensor's buffer, which PyTorch
        would share): a writable array that later writes to the tensor do not reach."""
        if self.requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        if is_meta(self._arr):
            if force:   # PyTorch's numpy(force=True) copies to the CPU first
                raise NotImplementedError(NO_DATA)
            raise TypeError("can't convert meta device type tensor to numpy. Use Tensor.cpu() "
                            "to copy the tensor to host memory first.")
        return np.array(_host(_readable(self)))

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        return a if dtype is None else a.astype(dtype)

    def __dlpack__(self, *args, **kwargs):
        return self._value().__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self._value().__dlpack_device__()

    def __jax_array__(self):
        return self._value()

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def _scalar_for_python(self, what):
        arr = self._value()
        if isinstance(arr, jax.core.Tracer):
            raise TracedValueError(f"{what} of a traced Tensor: its value is not known while "
                               "compiling. Use torchlike.where / tensor ops instead of Python "
                               "control flow on tensor values.")
        if is_meta(arr) and arr.size == 1:
            raise RuntimeError(_META_ITEM)
        return arr

    def __bool__(self):
        arr = self._scalar_for_python("bool()")
        if arr.size != 1:
            raise RuntimeError("Boolean value of Tensor with "
                               f"{'no values' if arr.size == 0 else 'more than one value'} is "
                               "ambiguous")
        return bool(_host(arr).reshape(()))

    def _one_element(self, convert):
        arr = self._scalar_for_python(f"{convert.__name__}()")
        if arr.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return convert(_host(arr).reshape(()))

    def __float__(self):
        if self.requires_grad and _state.grad_enabled and not _WARNED_FLOAT:
            # PyTorch warns here (not in item()), with grad mode on, once per process
            import warnings
            _WARNED_FLOAT.append(True)
            warnings.warn("Converting a tensor with requires_grad=True to a scalar may lead to "
                          "unexpected behavior.\nConsider using tensor.detach() first.",
                          UserWarning, stacklevel=2)
        return self._one_element(float)

    def __int__(self):
        return self._one_element(int)

    def __complex__(self):
        return complex(_host(self._scalar_for_python("complex()")).reshape(()))

    def __index__(self):
        arr = self._scalar_for_python("index()")
        if arr.size != 1 or self.dtype.is_floating_point or self.dtype.is_complex:
            raise TypeError("only integer tensors of a single element can be converted to an "
                            "index")
        return int(_host(arr).reshape(()))

    def __hash__(self):
        return id(self)

    def __repr__(self, *, tensor_contents=None):
        from ._tensor_str import format_meta, format_tensor
        arr = self._value()
        suffixes = []
        fn = self.grad_fn
        if fn is not None:
            suffixes.append(("grad_fn", f"<{fn.name()}>"))
        elif self._requires_grad:
            suffixes.append(("requires_grad", "True"))
        dt = self.dtype
        show_dtype = dt not in (D.get_default_dtype(), D.default_complex(), D.int64, D.bool_)
        if isinstance(arr, jax.core.Tracer):
            body = f"tensor(<traced {dt._name}{list(arr.shape)}>"
            return body + "".join(f", {k}={v}" for k, v in suffixes) + ")"
        if is_meta(arr):
            return format_meta(arr.shape, dtype_name=repr(dt), show_dtype=dt is not
                               D.get_default_dtype(), suffixes=suffixes)
        device = self.device
        return format_tensor(_host(arr), dtype_name=repr(dt), show_dtype=show_dtype,
                             suffixes=suffixes,
                             device_str=None if device.type == "cpu" else str(device))

    __str__ = __repr__

    def __format__(self, spec):
        if self.ndim == 0:
            return format(self.detach().item(), spec)
        return object.__format__(self, spec) if spec else repr(self)

    def __reduce_ex__(self, protocol):
        from ._creation import _rebuild
        return (_rebuild, (_host(self._value()), self.dtype._name, self._requires_grad,
                           str(self.device)))

    def __deepcopy__(self, memo):
        from .autograd.grad_mode import no_grad
        if self.grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) "
                               "support the deepcopy protocol at the moment.  If you were "
                               "attempting to deepcopy a module, this may be because of a "
                               "torch.nn.utils.weight_norm usage, see "
                               "https://github.com/pytorch/pytorch/pull/103001")
        with no_grad():
            new = self.clone()
        new._requires_grad = self._requires_grad
        if self._grad is not None:
            new._grad = self._grad.__deepcopy__(memo)
        if type(self) is not Tensor:
            new.__class__ = type(self)
            new.__dict__.update({k: v for k, v in self.__dict__.items() if not k.startswith("_")})
        memo[id(self)] = new
        return new


def _c_type(dt):
    """The C type name PyTorch uses in some messages ('float', 'double', 'long', ...)."""
    return {"float32": "float", "float64": "double", "float16": "c10::Half",
            "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int",
            "bool": "bool"}.get(dt._name, dt._name)


def _py_scalar(a):
    if a.dtype == D.bfloat16._np:
        a = a.astype(np.float32)
    return a.item()


class TracedValueError(RuntimeError):
    """Python asked for the value of a traced tensor (bool(), .item(), a data-dependent shape):
    under tracing (torchlike.compile, jax transforms) it is not known."""


# every error that means "Python needed a traced value": torchlike's own and jax's
TRACED_VALUE_ERRORS = (TracedValueError, jax.errors.ConcretizationTypeError,
                       jax.errors.TracerArrayConversionError,
                       jax.errors.TracerIntegerConversionError,
                       jax.errors.TracerBoolConversionError)


def values_for_shape(t, name):
    """``t``'s values as numpy, for an op whose output shape depends on them (eager only)."""
    arr = t._value()
    if isinstance(arr, jax.core.Tracer):
        raise TracedValueError(f"{name}() has a data-dependent output shape and cannot be traced "
                           "(torchlike.compile / to_jax); use torchlike.where(cond, x, y) or "
                           "call it outside the compiled step")
    return _host(arr)


def host_values(t):
    """``t``'s values as numpy, or None while tracing (for eager-only checks, skipped then)."""
    arr = t._value()
    return None if isinstance(arr, jax.core.Tracer) else _host(arr)


# NOTE [ checks on an accelerator ]
# PyTorch's CPU kernels check their index values before they run; its CUDA kernels check them on
# the device and report a failed check at the next synchronization ("device-side assert
# triggered"), so a step never waits for its indices.  torchlike does the same: on the CPU a
# check reads the values (no transfer: the host owns them); on any other device it is a small
# jitted reduction whose result stays there, and the next read of any tensor's values on the
# host (item, tolist, numpy, bool, printing, torchlike.cuda.synchronize: ``_host``) raises the
# first failed check's error, with PyTorch's CPU message.  Results computed from bad indices are
# not defined meanwhile, as on a GPU.

_META_ITEM = "Tensor.item() cannot be called on meta tensors"
_WARNED_FLOAT = []   # float() of a tensor requiring grad has warned (once, as PyTorch)
_pending = []   # (flags on the device, error, message) of checks not read yet


def on_host(arr):
    """Whether ``arr`` lives on a CPU device (reading it transfers nothing)."""
    return from_jax_device(first_device(arr)).type == "cpu"


def defer_check(flags, error, message):
    """Queue a device check: ``flags`` is (ok, *values) as device arrays; the first read of
    values on the host raises ``error(message.format(*values))`` if ok is False."""
    _pending.append((flags, error, message))


def sync_checks():
    """Raise the error of the first queued device check that failed (NOTE [ checks on an
    accelerator ]); every queued check is read, and dropped."""
    if _pending:
        pending = _pending[:]
        _pending.clear()
        for (ok, *values), error, message in pending:
            if not bool(np.asarray(ok)):
                raise error(message.format(*(np.asarray(v).item() for v in values)))


def _readable(t):
    """What a read of ``t``'s values on the host takes: its array, or its values as numpy (NOTE
    [ views read on the host ] in _views.py): a view's from its storage root's where that is one
    array on one CPU device, a root's from its ``_host_recipe`` while its program has not run."""
    root = t._root
    if root is None:
        values = _made_on_host(t)
        return t._value() if values is None else values
    arr = root.__dict__.get("_arr")   # (not a derived base's or a pending one's yet)
    if type(arr) is ArrayImpl and len(arr.devices()) == 1 and on_host(arr) and \
            _views.on_host_chain(t._chain):
        values = _made_on_host(root)
        return _views.chain_on_host(arr if values is None else values, t._chain)
    return t._value()


def _made_on_host(root):
    """A storage root's values made on the host by its ``_host_recipe`` while the program making
    its array has not run (NOTE [ views read on the host ] in _views.py); else None (as the
    recipe gives where it no longer can)."""
    recipe = root._host_recipe
    if recipe is None or recipe[0] != root._gen:   # (none, or a write since)
        return None
    arr = root.__dict__.get("_arr")
    return None if type(arr) is not ArrayImpl or _ready(arr) else recipe[1]()


_ready = ArrayImpl.is_ready


def _host(arr):
    """``arr``'s values as numpy: a read on the host, where queued device checks report."""
    if _pending:
        sync_checks()
    if is_meta(arr):
        raise NotImplementedError(NO_DATA)
    return np.asarray(arr)


def host_min_max(values):
    """(min, max) of a non-empty numpy array of index values, for eager bounds checks.

    NOTE: for the small index arrays of eager code, Python's min/max over a list is cheaper
    than numpy's reductions, and a numpy reduction also slows the jitted call that follows it
    by ~3 µs on the CPU (measured with x[idx] and gather)."""
    if values.size <= 64:
        flat = values.ravel().tolist()
        return min(flat), max(flat)
    return values.min(), values.max()


def first_out_of_range(values, lo, hi, ignore=None):
    """(position, value) of the first entry of the numpy integer array ``values`` outside
    [lo, hi) and other than ``ignore``, or None.  The common case, every entry in range, costs
    one cheap test (host_min_max's NOTE)."""
    if not values.size:
        return None
    if values.size <= 64:
        smallest, largest = host_min_max(values)
        if lo <= smallest and largest < hi:
            return None
    # one pass: shifted to start at 0, a value out of range (negatives wrap) is >= the span
    elif (values.astype(np.int64, copy=False) - lo).view(np.uint64).max() < hi - lo:
        return None
    flat = values.ravel().astype(np.int64, copy=False)
    bad = (flat < lo) | (flat >= hi)
    if ignore is not None:
        bad &= flat != ignore
    if not bad.any():
        return None
    i = int(np.flatnonzero(bad)[0])
    return i, int(flat[i])


def check_index_range(t, lo, hi, error, message, ignore=None):
    """Raise ``error(message.format(position, value))`` for the first entry of the integer
    Tensor ``t`` outside [lo, hi) (and other than ``ignore``): read on the host in eager code on
    the CPU, queued on an accelerator (NOTE [ checks on an accelerator ]), as a check of the
    program in a compiled step (NOTE [ checks in a compiled step ] in _compile/program.py), not
    at all under other tracing or on meta."""
    check_in_range(_readable(t), lo, hi, error, message, ignore)


def check_in_range(arr, lo, hi, error, message, ignore=None):
    """check_index_range for a jax array, or numpy values read on the host already."""
    if isinstance(arr, jax.core.Tracer):
        _trace_context.check_in_range(arr, lo, hi, error, message, ignore)
    elif is_meta(arr):   # no values to check, as PyTorch's meta kernels check none
        return
    elif isinstance(arr, jax.Array) and not on_host(arr):
        if arr.size:
            defer_check(_range_flags(arr, lo, hi, -1 if ignore is None else ignore,
                                     ignore is not None), error, message)
    else:
        bad = first_out_of_range(_host(arr), lo, hi, ignore)
        if bad is not None:
            raise error(message.format(*bad))


def check_all(t, pred, error, message):
    """Raise ``error(message)`` unless ``pred(values)`` (a module-level function of an array,
    numpy's or jax's, to a bool array) holds everywhere: on the host on the CPU, queued on an
    accelerator (NOTE [ checks on an accelerator ]), not at all while tracing or on meta."""
    arr = _readable(t)
    if isinstance(arr, jax.core.Tracer) or is_meta(arr):
        return
    if type(arr) is np.ndarray or on_host(arr):
        if not np.all(pred(_host(arr))):
            raise error(message)
        return
    f = _ALL_OF.get(pred)
    if f is None:
        f = _ALL_OF[pred] = _x64.scoped(jax.jit(lambda v: jax.numpy.all(pred(v))))
    defer_check((f(arr),), error, message)


_ALL_OF = {}


@_x64.scoped   # called eagerly, outside the op's scope
@functools.partial(jax.jit, static_argnums=(1, 2, 3, 4))
def _range_flags(values, lo, hi, ignore, has_ignore):
    """(every entry in [lo, hi) or == ignore, first bad position, its value), on the device."""
    v = values.ravel().astype(np.int64)
    bad = (v < lo) | (v >= hi)
    if has_ignore:
        bad &= v != ignore
    i = jax.numpy.argmax(bad)
    return ~bad.any(), i, v[i]


def _wrap_dim(dim, ndim):
    if type(dim) is not int:   # numpy's integers count; a float or a bool is refused
        if isinstance(dim, bool) or not hasattr(dim, "__index__"):
            raise TypeError(f"argument 'dim' must be int, not {type(dim).__name__}")
        dim = dim.__index__()
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim % n


# These modules use Tensor themselves, so they are imported once it exists.
from . import _trace_context  # noqa: E402
from . import _views  # noqa: E402
from .autograd.grad_mode import INFERENCE_REGIONS, _state  # noqa: E402
from .autograd.graph import AccumulateGrad, add_hook  # noqa: E402


def _cpu():
    return to_jax_device(CPU)
