"""torchlike.export: mirrors ``torch.export`` -- a module's forward, or a whole training step,
as a serialized StableHLO program (jax.export) that runs without the model's Python code.

    >>> ep = torchlike.export.export(model.eval(), (x,),
    ...                              dynamic_shapes={"x": {0: torchlike.export.Dim("batch")}})
    >>> torchlike.export.save(ep, "model.pt2")
    >>> torchlike.export.load("model.pt2").module()(x)     # in any process: no model code

What is produced: **not ONNX**.  The artifact is StableHLO, serialized by ``jax.export`` (its
versioned format, with jax.export's compatibility guarantees), plus the weights and a JSON
manifest, in one zip file;
JAX (``jax.export.deserialize``) and other XLA/StableHLO-based runtimes can run it.  By default
the program is lowered for the platform it was exported on; pass ``platforms=("cpu", "cuda")``
to :func:`export` for one artifact that runs on several.

Differences from torch.export:
- Tracing always runs the Python code (torch.export's non-strict mode); ``strict`` is accepted.
- An ``ExportedProgram`` holds a jax.export program, not an FX graph: there is no ``graph`` /
  ``graph_module`` and no ``run_decompositions``; ``mlir_module()`` shows the StableHLO text.
- ``ep.module()`` runs the program as one op (``FromJaxBackward`` where torch shows the last
  op's node); gradients flow to its parameters and inputs, after ``load`` too (NOTE
  [ a differentiable exported module ]).
- Dynamic dimensions are jax.export symbolic dimensions, always at least 1 (a ``Dim`` minimum
  below 1 means 1), and an example size of 1 is not specialized.  Derived dimensions
  (``2 * batch``) are not supported.  See NOTE [ symbolic batch ] in _lower.py for how a
  forward whose shape logic needs concrete sizes is exported per example.
- Bad inputs raise ``AssertionError("Guard failed: x.size()[1] == 4")`` as torch's module does,
  and also for a wrong rank or dtype, which torch leaves to the first op that fails.
- :func:`export_step` (no torch.export equivalent) exports a whole training step.
"""
import jax
import numpy as np

from .. import _x64
from .._random import Generator, default_generator
from .._tensor import Tensor
from ..func._bridge import bridge_op
from ..nn.modules.module import Module
from ..nn.parameter import Parameter
from ..optim.optimizer import Optimizer
from . import _capture as cap
from . import _lower as low
from ._dims import Dim as Dim, dims as dims, _dynamic_dims, _symbols, _user_error

__all__ = ["Dim", "dims", "export", "export_step", "save", "load", "ExportedProgram",
           "ExportedStep", "ExportGraphSignature", "InputSpec", "OutputSpec"]


# --- signatures -----------------------------------------------------------------------------------

class InputSpec:
    """Mirrors ``torch.export.graph_signature.InputSpec``: one input of the program (``kind``:
    USER_INPUT, PARAMETER, BUFFER, CONSTANT_TENSOR, and for a step also GRADIENT,
    OPTIMIZER_STATE, HYPERPARAMETER, RNG_STATE), with its shape and dtype."""

    def __init__(self, kind, name, target, shape, dtype, persistent=None):
        self.kind, self.name, self.target = kind, name, target
        self.shape, self.dtype, self.persistent = shape, dtype, persistent

    def __repr__(self):
        target = "" if self.target is None else f" target={self.target!r}"
        persistent = "" if self.persistent is None else f" persistent={self.persistent}"
        return f"{self.name}: {self.kind}{target}{persistent}"


class OutputSpec(InputSpec):
    """Mirrors ``torch.export.graph_signature.OutputSpec`` (``kind``: USER_OUTPUT, or the
    mutation of a piece of state, e.g. BUFFER_MUTATION, with the state's name as target)."""


_PREFIX = {cap.PARAMETER: "p_", cap.BUFFER: "b_", cap.CONSTANT: "c_"}


class ExportGraphSignature:
    """Mirrors ``torch.export.ExportGraphSignature``: the program's inputs and outputs, in
    order."""

    def __init__(self, input_specs, output_specs):
        self.input_specs, self.output_specs = list(input_specs), list(output_specs)

    def _of(self, kind, specs=None):
        return tuple(s for s in (specs or self.input_specs) if s.kind == kind)

    @property
    def user_inputs(self):
        return tuple(s.name for s in self._of("USER_INPUT"))

    @property
    def user_outputs(self):
        return tuple(s.name for s in self._of("USER_OUTPUT", self.output_specs))

    @property
    def parameters(self):
        return tuple(s.target for s in self._of(cap.PARAMETER))

    @property
    def buffers(self):
        return tuple(s.target for s in self._of(cap.BUFFER))

    @property
    def inputs_to_parameters(self):
        return {s.name: s.target for s in self._of(cap.PARAMETER)}

    @property
    def inputs_to_buffers(self):
        return {s.name: s.target for s in self._of(cap.BUFFER)}

    @property
    def buffers_to_mutate(self):
        return {s.name: s.target for s in self._of("BUFFER_MUTATION", self.output_specs)}

    def __repr__(self):
        lines = ["# inputs"] + [repr(s) for s in self.input_specs]
        lines += ["", "# outputs"] + [repr(s) for s in self.output_specs]
        return "\n".join(lines) + "\n"


def _signature(meta):
    inputs = []
    for s in meta["state"]:
        if s["input"]:
            name = s["name"] if meta["kind"] == "step" else \
                _PREFIX.get(s["kind"], "") + s["name"].replace(".", "_")
            persistent = s["persistent"] if s["kind"] == cap.BUFFER else None
            inputs.append(InputSpec(s["kind"], name, s["name"], s["shape"], s["dtype"],
                                    persistent))
    inputs += [InputSpec("USER_INPUT", s["name"], None, s["shape"], s["dtype"])
               for s in meta["inputs"]]
    outputs = [OutputSpec("USER_OUTPUT", s["name"], None, s["shape"], s["dtype"])
               for s in meta["outputs"]]
    outputs += [OutputSpec(f"{s['kind'].replace('_TENSOR', '')}_MUTATION"
                           if s["kind"] != cap.OPTIMIZER_STATE else "OPTIMIZER_STATE_MUTATION",
                           s["name"], s["name"], s["shape"], s["dtype"])
                for s in meta["state"] if s["updated"]]
    return ExportGraphSignature(inputs, outputs)


def _type_str(spec):
    dt = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16",
          "int64": "i64", "int32": "i32", "bool": "b8", "uint32": "u32"}.get(spec["dtype"],
                                                                          spec["dtype"])
    return f'"{dt}[{", ".join(str(d) for d in spec["shape"])}]"'


# --- the exported objects -------------------------------------------------------------------------

def _to_tensors(tree):
    return jax.tree_util.tree_map(Tensor._wrap, tree)


class _Exported:
    """What ExportedProgram and ExportedStep share: the jax.export program and its manifest."""

    def __init__(self, exported, meta):
        self._exported = exported
        self._meta = meta
        self._jitted = self._bridged = None

    @property
    def exported(self):
        """The ``jax.export.Exported`` program (callable from JAX: ``.call(values, args,
        kwargs)``)."""
        return self._exported

    @property
    def graph_signature(self):
        return _signature(self._meta)

    @property
    def range_constraints(self):
        """{dimension name: (min, max)} (max None: unbounded)."""
        return {k: tuple(v) for k, v in self._meta["range_constraints"].items()}

    @property
    def platforms(self):
        return tuple(self._exported.platforms)

    def mlir_module(self):
        """The program as StableHLO text."""
        return self._exported.mlir_module()

    @_x64.scoped
    def _call(self, values, args, kwargs):
        sub_args, sub_kwargs = low.check_call(self._meta, self._exported, args, kwargs)
        if self._jitted is None:
            self._jitted = jax.jit(self._exported.call)
        return self._jitted(values, sub_args, sub_kwargs)

    def _header(self, title):
        m = self._meta
        params = [f'{s.name}: {_type_str(s.__dict__)}' for s in self.graph_signature.input_specs]
        outs = [_type_str(s) for s in m["outputs"]]
        ret = outs[0] if len(outs) == 1 else f"({', '.join(outs)})"
        how = {"symbolic": "symbolic shapes", "per-example": "per-example (vmap) batch",
               "static": "static shapes"}[m["method"]]
        line = f"    def {m['function']}(" + ", ".join(params) + f") -> {ret}\n"
        if len(line) > 100:
            line = f"    def {m['function']}(\n" + "".join(
                f"        {p},\n" for p in params) + f"    ) -> {ret}\n"
        return (f"{title} (StableHLO via jax.export; platforms: {', '.join(self.platforms)}; "
                f"{how}):\n" + line)


class ExportedProgram(_Exported):
    """Mirrors ``torch.export.ExportedProgram``: a module's forward as a jax.export (StableHLO)
    program, with the module's parameters and buffers.

    Attributes:
        state_dict: the parameters and persistent buffers, by name (as ``model.state_dict()``).
        constants: non-persistent buffers, other tensor attributes the forward reads and, for a
            forward that draws random numbers, the generator state ``rng``.
        graph_signature: the program's inputs and outputs (:class:`ExportGraphSignature`).
        range_constraints: the dynamic dimensions' ranges.
    """

    def __init__(self, exported, meta, state_dict, constants):
        super().__init__(exported, meta)
        self.state_dict = state_dict
        self.constants = constants

    def named_parameters(self):
        kinds = {s["name"]: s["kind"] for s in self._meta["state"]}
        return ((k, v) for k, v in self.state_dict.items() if kinds[k] == cap.PARAMETER)

    def parameters(self):
        return (v for _, v in self.named_parameters())

    def named_buffers(self):
        kinds = {s["name"]: s["kind"] for s in self._meta["state"]}
        return ((k, v) for k, v in {**self.state_dict, **self.constants}.items()
                if kinds[k] == cap.BUFFER)

    def buffers(self):
        return (v for _, v in self.named_buffers())

    def _values(self, tensors):
        return {s["name"]: tensors[s["name"]]._value() for s in self._meta["state"]
                if s["input"]}

    def call(self, *args, **kwargs):
        """Run the program on ``args`` with this program's state; returns the outputs as
        Tensors.  State the forward writes (running statistics, ``rng``) is not kept: use
        :meth:`module` for that."""
        outputs, _ = self._call(self._values({**self.state_dict, **self.constants}), args,
                                kwargs)
        return _to_tensors(outputs)

    def module(self):
        """Mirrors ``torch.export.ExportedProgram.module``: an ``nn.Module`` holding copies of
        the parameters and buffers (same names as the original's ``state_dict``) whose calls
        run the program, differentiably (NOTE [ a differentiable exported module ]); writes to
        buffers are kept."""
        return ExportedModule(self)

    def _op(self):
        """The program as one torchlike op of (state values, args, kwargs) (NOTE [ a
        differentiable exported module ])."""
        if self._bridged is None:
            meta, exported = self._meta, self._exported

            def program(values, args, kwargs):
                return exported.call(values, *low.check_call(meta, exported, args, kwargs))
            self._bridged = bridge_op(program, x64=True)
        return self._bridged

    def __repr__(self):
        ranges = ", ".join(f"{k}: VR[{lo}, {'int_oo' if hi is None else hi}]"
                           for k, (lo, hi) in self.range_constraints.items())
        sig = "\n".join(("    " + line).rstrip()
                        for line in str(self.graph_signature).splitlines()).lstrip()
        return (self._header("ExportedProgram") + f"Graph signature:\n    {sig}\n"
                f"Range constraints: {{{ranges}}}\n")

    __str__ = __repr__


class ExportedModule(Module):
    """What :meth:`ExportedProgram.module` returns: the program with its state as a Module."""

    def __init__(self, program):
        super().__init__()
        object.__setattr__(self, "_program", program)
        kinds = {s["name"]: s for s in program._meta["state"]}
        extra = {}
        for name, t in {**program.state_dict, **program.constants}.items():
            kind = kinds[name]["kind"]
            if kind not in (cap.PARAMETER, cap.BUFFER):
                extra[name] = Tensor._wrap(t._value())
                continue
            *path, leaf = name.split(".")
            owner = self
            for part in path:
                if part not in owner._modules:
                    owner.add_module(part, Module())
                owner = owner._modules[part]
            if kind == cap.PARAMETER:
                owner.register_parameter(leaf, Parameter(Tensor._wrap(t._value()),
                                                         requires_grad=t.requires_grad))
            else:
                owner.register_buffer(leaf, Tensor._wrap(t._value()),
                                      persistent=kinds[name]["persistent"])
        object.__setattr__(self, "_extra", extra)

    def _tensors(self):
        out = dict(self.named_parameters(remove_duplicate=False))
        out.update(self.named_buffers(remove_duplicate=False))
        out.update(self._extra)
        return out

    def forward(self, *args, **kwargs):
        program, tensors = self._program, self._tensors()
        low.check_call(program._meta, program._exported, args, kwargs)   # torch's guard errors
        values = {s["name"]: tensors[s["name"]] for s in program._meta["state"] if s["input"]}
        outputs, updates = program._op()(values, args, kwargs)
        for name, t in updates.items():
            tensors[name]._write(t._value())
        return outputs


# NOTE [ a differentiable exported module ]
# torch.export's module (and a loaded one) is differentiable: its outputs carry grad_fn, and
# backward reaches its parameters and inputs.  ExportedModule runs the jax.export program as
# one op through the JAX bridge (func._bridge.bridge_op): its forward is the program (jitted),
# its backward jax.vjp of ``Exported.call``, which jax.export answers with the program's own
# derivative: the one it lowers when the program was exported in this process, the one
# serialized beside it after a load (export.save writes the first-order derivative,
# ``vjp_order=1``).  A higher-order derivative of a loaded program is not in the file.


class ExportedStep(_Exported):
    """A whole training step (forward, backward, optimizer update) as one jax.export program:
    ``(state, batch) -> (new state, outputs)``; see :func:`export_step`.

    Attributes:
        state: the step's state when it was exported, by name (``model.0.weight``,
            ``model.0.weight.grad``, ``opt.state.0.momentum_buffer``,
            ``opt.param_groups.0.lr``, ``rng``; NOTE [ export capture ] in _capture.py
            says how names are made), as Tensors (hyper-parameters: 0-d float64 or int64).
        graph_signature: its inputs and outputs; outputs of kind ``*_MUTATION`` are the state
            the step writes.
    """

    def __init__(self, exported, meta, state):
        super().__init__(exported, meta)
        self.state = state

    @_x64.scoped
    def run(self, state, *args, **kwargs):
        """One step: returns ``(new_state, outputs)``; ``state`` maps every name of
        :attr:`state` to a Tensor, array or number, ``args``/``kwargs`` are the batch as the
        step takes it.  Nothing is modified in place."""
        names = [s["name"] for s in self._meta["state"]]
        missing = [n for n in names if n not in state]
        unknown = [n for n in state if n not in set(names)]
        if missing or unknown:
            raise KeyError(f"ExportedStep.run: the state does not match the exported step's: "
                           f"missing {missing}, unexpected {unknown}")
        values = {}
        for s in self._meta["state"]:
            v = state[s["name"]]
            values[s["name"]] = v._value() if isinstance(v, Tensor) else np.asarray(
                v, dtype=s["dtype"]) if s["kind"] == cap.HYPERPARAMETER else v
        outputs, updates = self._call(values, args, kwargs)
        new_state = {n: v if isinstance(v, Tensor) else Tensor._wrap(jax.numpy.asarray(v))
                     for n, v in state.items()}
        new_state.update({n: Tensor._wrap(a) for n, a in updates.items()})
        return new_state, _to_tensors(outputs)

    def apply_to(self, *objects, state=None, **named):
        """Write ``state`` (default: :attr:`state`) into live objects: the model, optimizer,
        generator a name starts with, given by that name (``apply_to(model=net, opt=sgd)``) or
        positionally when one root of that type exists (``apply_to(net, sgd)``).  The default
        generator takes ``rng`` unless another object is given for it.  Returns the names
        written."""
        state = self.state if state is None else state
        roots = dict(self._meta["roots"])
        given = dict(named)
        for obj in objects:
            kind = _root_kind(obj)
            match = [r for r, k in roots.items() if k == kind and r not in given]
            if len(match) != 1:
                raise TypeError(f"apply_to: cannot tell which of the step's {kind} objects "
                                f"{match} this {type(obj).__name__} is; pass it by name")
            given[match[0]] = obj
        if "rng" in roots and "rng" not in given:
            given["rng"] = default_generator
        written = []
        for s in self._meta["state"]:
            root, _, rest = s["name"].partition(".")
            if root in given and s["name"] in state:
                _assign(given[root], rest, s, state[s["name"]])
                written.append(s["name"])
        return written

    def __repr__(self):
        lines = [f"    {s['name']}: {s['kind']} {_type_str(s)}"
                 + (" (updated)" if s["updated"] else "") for s in self._meta["state"]]
        lines += [f"    {s['name']}: USER_INPUT {_type_str(s)}" for s in self._meta["inputs"]]
        lines += [f"    {s['name']}: USER_OUTPUT {_type_str(s)}" for s in self._meta["outputs"]]
        return self._header("ExportedStep") + "\n".join(lines) + "\n"

    __str__ = __repr__


def _root_kind(obj):
    for cls in (Module, Optimizer, Generator):
        if isinstance(obj, cls):
            return cls.__name__
    return type(obj).__name__


def _assign(obj, rest, spec, value):
    """Put ``value`` where ``rest`` (a name without its root) points inside ``obj``."""
    arr = value._value() if isinstance(value, Tensor) else jax.numpy.asarray(value)
    if isinstance(obj, Generator):
        obj._state._write(arr)
        obj._reload()
        return
    if isinstance(obj, Optimizer):
        parts = rest.split(".")
        if parts[0] == "param_groups":
            group = obj.param_groups[int(parts[1])]
            v = float(arr) if spec["python"] == "float" else int(arr)
            if len(parts) == 4:
                old = list(group[parts[2]])
                old[int(parts[3])] = v
                group[parts[2]] = type(group[parts[2]])(old)
            else:
                group[parts[2]] = v
            return
        params = [p for g in obj.param_groups for p in g["params"]]
        st = obj.state[params[int(parts[1])]]
        key = ".".join(parts[2:])
        if key in st and isinstance(st[key], Tensor):
            st[key]._write(arr)
        else:
            st[key] = Tensor._wrap(arr)
        return
    if isinstance(obj, Module):
        grad = rest.endswith(".grad")
        name = rest[:-len(".grad")] if grad else rest
        tensors = dict(obj.named_parameters(remove_duplicate=False))
        tensors.update(obj.named_buffers(remove_duplicate=False))
        if name in tensors:
            t = tensors[name]
            if not grad:
                t._write(arr)
            elif t._grad is not None:
                t._grad._write(arr)
            else:
                t.grad = Tensor._wrap(arr)
            return
    head, _, tail = rest.partition(".")
    child = obj[int(head) if isinstance(obj, (list, tuple)) else head] \
        if isinstance(obj, (list, tuple, dict)) else getattr(obj, head)
    if not tail:
        child._write(arr)
    else:
        _assign(child, tail, spec, value)


# --- building -------------------------------------------------------------------------------------

def _state_meta(capture, entries, kept, updated):
    out = []
    for e in entries:
        spec = capture.spec(e)
        tensor = capture.state.tensors[e.where[1]] if e.where[0] == "tensor" else None
        out.append({"name": e.name, "kind": e.kind, "shape": [int(d) for d in spec.shape],
                    "dtype": np.dtype(spec.dtype).name, "persistent": e.persistent,
                    "python": e.python, "input": e.name in kept, "updated": e.name in updated,
                    "requires_grad": tensor is not None and tensor.requires_grad})
    return out


def _meta(kind, capture, exported, method, ranges, state_meta, function):
    avals = jax.tree_util.tree_unflatten(exported.out_tree, exported.out_avals)
    outputs = avals[0]
    inputs = [{"name": n, **low.aval_json(a)} for n, a in zip(
        [m["name"] for m in low.leaves_meta(capture) if "input" in m],
        jax.tree_util.tree_leaves(jax.tree_util.tree_unflatten(
            exported.in_tree, exported.in_avals)[0][1:]))]
    return {"format": "torchlike.export", "version": 1, "kind": kind, "method": method,
            "function": function, "leaves": low.leaves_meta(capture), "inputs": inputs,
            "outputs": [{"name": n, **low.aval_json(a)} for n, a in zip(
                cap.output_names(outputs), jax.tree_util.tree_leaves(outputs))],
            "state": state_meta, "range_constraints": ranges, "roots": {}}


@_x64.scoped
def export(mod, args, kwargs=None, *, dynamic_shapes=None, strict=False, platforms=None):
    """Mirrors ``torch.export.export``: ``mod``'s forward traced into a jax.export (StableHLO)
    program, a pure function of the module's parameters and buffers and the inputs.

    Args:
        mod: the ``nn.Module`` (its current mode, train or eval, is what gets exported).
        args: a tuple of example positional inputs; kwargs: a dict of keyword inputs.  Their
            Tensors become the program's inputs; other values are baked in (and checked on
            every call).
        dynamic_shapes: per input, ``{dim: Dim(...)}`` (or a tuple with one entry per
            dimension), as a dict by argument name or a tuple by position; None: all static.
        strict: accepted; tracing always runs the Python code (torch's non-strict mode).
        platforms: jax.export platforms (``("cpu", "cuda", "tpu")``); default: this machine's.

    Returns:
        An :class:`ExportedProgram`.

    Example::

        >>> ep = torchlike.export.export(model.eval(), (torchlike.randn(4, 8),),
        ...                              dynamic_shapes=({0: torchlike.export.Dim("b")},))
        >>> ep.module()(torchlike.randn(7, 8)).shape
        torch.Size([7, 3])
    """
    del strict
    return _export_program(mod, args, kwargs, dynamic_shapes, platforms)


def _export_program(mod, args, kwargs, dynamic_shapes, platforms, traced=None):
    """:func:`export`'s work; ``traced`` (a list) receives the jax function that was exported
    and its input specs (torchlike.onnx translates its jaxpr)."""
    if not isinstance(mod, Module):
        raise ValueError(f"Expected `mod` to be an instance of `torch.nn.Module`, got "
                         f"{type(mod)}.")
    if not isinstance(args, tuple):
        raise _user_error(f"Expecting `args` to be a tuple of example positional inputs, got "
                          f"{type(args)}")
    kwargs = {} if kwargs is None else kwargs
    capture = cap.Capture(mod, args, kwargs, with_grads=False, grad_mode=False)
    result = capture.trace()
    specs = _dynamic_dims(capture, args, kwargs, dynamic_shapes)
    return _from_capture(capture, result, specs, platforms, traced)


def _from_capture(capture, result, specs, platforms, traced=None):
    """The ExportedProgram of a forward ``capture`` that ``result`` (its first trace) describes;
    ``specs``: per input, {dim index: Dim or hint}; ``traced`` as for :func:`_export_program`.
    torchlike.jit saves its traced programs through this too (one capture for both)."""
    if result.plan.created or result.plan.deferred:
        name = type(capture.fn).__name__ if isinstance(capture.fn, Module) \
            else cap._qualname(capture.fn)
        raise RuntimeError(f"torchlike.export: the forward of {name} creates "
                           "state when it runs (a lazily initialized module); call it once "
                           "before exporting it")
    kept = [e.name for e in capture.keep(result)]
    try:
        dims_, ranges, symbols = _symbols(capture, specs, static_auto=False)
        exported, method = low.lower(capture, dims_, symbols, platforms, "forward", traced)
    except RuntimeError:
        if not any(v is Dim.AUTO for s in specs for v in s.values()):
            raise
        dims_, ranges, symbols = _symbols(capture, specs, static_auto=True)
        exported, method = low.lower(capture, dims_, symbols, platforms, "forward", traced)
    entries = [e for e in capture.entries
               if e.kind in (cap.PARAMETER, cap.BUFFER) or e.name in kept]
    state_meta = _state_meta(capture, entries, kept, result.changed)
    meta = _meta("program", capture, exported, method, ranges, state_meta, "forward")
    state_dict, constants = {}, {}
    for e, s in zip(entries, state_meta):
        t = Tensor._wrap(capture.live(e))
        t.requires_grad_(s["requires_grad"])
        persistent = e.kind == cap.PARAMETER or (e.kind == cap.BUFFER and e.persistent)
        (state_dict if persistent else constants)[e.name] = t
    return ExportedProgram(exported, meta, state_dict, constants)


@_x64.scoped
def export_step(step_fn, args, kwargs=None, *, platforms=None):
    """Export a whole eager training step -- ``opt.zero_grad(); loss = F.cross_entropy(model(x),
    y); loss.backward(); opt.step(); return loss`` -- as one jax.export (StableHLO) program
    ``(state, batch) -> (new state, outputs)`` (no torch.export equivalent).

    The state is what ``torchlike.compile`` captures (NOTE [ whole-step compile ]): the
    parameters, buffers and ``.grad`` of the modules the step reaches, the optimizers' state
    and numeric hyper-parameters (``lr``, ``betas``: inputs, so a schedule can change them),
    the random generators; only what the step reads or writes is kept.  Names:
    NOTE [ export capture ].

    When the step creates state as it runs (an optimizer's moments and each ``.grad`` appear at
    the first step), ``export_step`` first runs it once for real on ``args`` -- the model and
    optimizer advance one step, as with torchlike.compile's first call -- and exports the step
    as it is from then on.  Shapes are static; an LR scheduler stepped inside the step cannot
    be exported (step it outside and change the ``lr`` entries of the state instead).

    Args:
        step_fn: the step, taking the batch; it reaches the model and optimizer through its
            closure, globals or arguments.
        args, kwargs: an example batch.
        platforms: jax.export platforms (default: this machine's).

    Returns:
        An :class:`ExportedStep`: ``new_state, loss = ep.run(ep.state, x, y)``.
    """
    if not isinstance(args, tuple):
        raise _user_error(f"Expecting `args` to be a tuple of example positional inputs, got "
                          f"{type(args)}")
    kwargs = {} if kwargs is None else kwargs
    capture = cap.Capture(step_fn, args, kwargs, with_grads=True, grad_mode=True)
    warmed = False
    for _ in range(3):
        result = capture.trace()
        names = {e.name for e in capture.entries}
        if not result.plan.created and result.changed <= names:
            break
        capture.warm_up(result)
        warmed = True
        capture.find()
    else:
        raise RuntimeError(f"torchlike.export.export_step: {cap._qualname(step_fn)} creates "
                           "new state on every call, so it has no steady state to export")
    if result.plan.deferred:
        raise RuntimeError("torchlike.export.export_step: the step steps an LR scheduler; "
                           "step the scheduler outside the exported step (and pass the new "
                           "rates in the state's 'param_groups.N.lr' entries)")
    kept = [e.name for e in capture.keep(result)]
    exported, method = low.lower(capture, [{} for _ in capture.inputs], {}, platforms, "step")
    state_meta = _state_meta(capture, capture.kept, kept, result.changed)
    meta = _meta("step", capture, exported, method, {}, state_meta,
                 getattr(step_fn, "__name__", "step"))
    meta["warmed_up"] = warmed
    roots = {}
    for e in capture.kept:
        root = e.name.partition(".")[0]
        roots.setdefault(root, "Generator" if e.kind == cap.RNG_STATE else
                         "Optimizer" if e.kind in (cap.OPTIMIZER_STATE, cap.HYPERPARAMETER)
                         else "Module" if e.kind in (cap.PARAMETER, cap.BUFFER, cap.GRADIENT)
                         else "Tensor")
    meta["roots"] = roots
    state = {}
    for e in capture.kept:
        v = capture.live(e)
        state[e.name] = Tensor._wrap(jax.numpy.asarray(
            v, dtype=np.float64 if isinstance(v, float) else None)
            if e.kind == cap.HYPERPARAMETER else v)
    return ExportedStep(exported, meta, state)


def save(ep, f, *, extra_files=None, opset_version=None, pickle_protocol=None):
    """Mirrors ``torch.export.save``: write an :class:`ExportedProgram` (or
    :class:`ExportedStep`) to ``f`` (a path, written atomically, or a binary file object): one
    zip with the jax.export program (``program.jaxexport``: StableHLO), the state
    (``state.npz``) and ``manifest.json``.  ``extra_files`` ({name: str}) are stored too;
    ``opset_version`` and ``pickle_protocol`` are accepted (nothing is pickled)."""
    from ._io import save as _save
    del opset_version, pickle_protocol
    _save(ep, f, extra_files)


@_x64.scoped
def load(f, *, extra_files=None, expected_opset_version=None):
    """Mirrors ``torch.export.load``: read what :func:`save` wrote -- in any process, without
    the model's code.  ``extra_files``: a dict whose keys are filled with the stored extra
    files.  Returns an :class:`ExportedProgram` or :class:`ExportedStep`."""
    from ._io import load as _load
    del expected_opset_version
    return _load(f, extra_files)
