"""One compiled program and a call of it: the jitted trace with the state's buffers donated, the
captured values it takes, and the results written back into the same Tensor objects (NOTE
[ whole-step compile ] in __init__.py), checks included (NOTE [ checks in a compiled step ]).
"""
import functools
import operator
import sys
import weakref

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dispatch, compiler
from .._device import from_jax_device, out_of_memory
from .._donate import copied, own
from .._tensor import Tensor, defer_check
from .trace import NUMBER, TENSOR, bind_place, fresh_gen, step_devices, step_placement


class Retrace(Exception):
    """A replayed call's inputs differ from the program's in shape, dtype or structure."""


class Compiled:
    """One program: the jitted trace of ``state``'s step (``jaxpr``, its outputs' ``shapes``)
    and the plan of where its outputs go; ``device``: the step's (NOTE [ devices in a compiled
    step ]; None: found from ``state``)."""

    def __init__(self, jaxpr, shapes, plan, state, device=None):
        self.plan = plan
        arrays = input_values(state)[0]
        self.device = step_devices(arrays)[-1] if device is None else device
        self.placement = step_placement(arrays, self.device)   # where a call moves inputs
        self.on_host = from_jax_device(self.device).type == "cpu"   # where the checks' flags are
        out_tree = jax.tree_util.tree_structure(shapes)
        n_tensors = len(state.tensors)
        had_grads = [p._grad is not None for p in state.params]
        consts = jaxpr.consts
        inner = jaxpr.jaxpr
        changed = set(plan.changed)
        self.donated = tuple(i for i in range(n_tensors) if i in changed)
        self.kept = tuple(i for i in range(n_tensors) if i not in changed)
        self.sealed = False   # a call that must not trace (jit traces again for new inputs)
        self.fresh = True     # not run yet

        # the checks: first, on the host, where numpy can evaluate them from the state's
        # arrays, else selects in this program (NOTE [ checks in a compiled step ])
        self.check = None
        self.passed = ()   # weak references to the arrays the checks last held for
        if plan.checks and self.on_host and plan.group is None and plan.mesh is None:
            self.check = _checks_first(jaxpr, n_tensors, self.donated, self.kept, len(
                jax.tree_util.tree_leaves(shapes[-1])))

        def run(donated, kept, grads, hypers, gens):
            if self.sealed:
                raise Retrace
            arrays, d, k = [], iter(donated), iter(kept)
            for i in range(n_tensors):
                arrays.append(next(d) if i in changed else next(k))
            flat = jax.tree_util.tree_leaves((arrays, grads, hypers, gens))
            out = jax.tree_util.tree_unflatten(out_tree, jax.core.eval_jaxpr(inner, consts, *flat))
            if not plan.checks:
                return out
            if self.check is not None:   # checked before the call: nothing to select
                return (*out[:-1], ())
            changed_out, outs, final_grads, *rest, checked = out
            ok = jnp.all(checked[0])
            changed_out = [jnp.where(ok, a, arrays[i]) for i, a in zip(plan.changed, changed_out)]
            old = [g for g, has in zip(grads, plan.grads) if has]
            final_grads = [a if g is None else jnp.where(ok, a, g)
                           for a, g in zip(final_grads, old)]
            return (changed_out, outs, final_grads, *rest, checked)
        # the written state; and the old gradients when each has a new one to take its buffer
        self.donate_grads = all(out for out, was in zip(plan.grads, had_grads) if was)
        donate = (0, 2) if self.donate_grads else (0,)
        donate = donate if compiler.config.donate_buffers else ()
        if plan.group is not None:
            self.fn = _over_processes(run, plan.group._mesh_of(), donate)
        elif plan.mesh is not None:
            self.fn = _over_devices(run, plan.mesh, self.device, donate)
        else:
            self.fn = jax.jit(run, donate_argnums=donate, keep_unused=True)

    def checks_hold(self, arrays):
        """Whether the checks run first hold for ``arrays``, the state's arrays they read
        (``self.check``).  Where they are the very arrays the checks last held for, they are not
        read again: an array's values never change."""
        if len(arrays) == len(self.passed) and \
                all(a is held() for a, held in zip(arrays, self.passed)):
            return True
        if not self.check[0](*arrays)[0].all():
            return False
        self.passed = [weakref.ref(a) for a in arrays]
        return True

    def __call__(self, donated, kept, grads, hypers, gens, sealed=False):
        """Run on the captured values (``donated``, ``kept``: the arrays of the written and of
        the other captured tensors, in Call's lists, which this may change); ``sealed``: raise
        Retrace (before running anything) where the inputs are not those the program was
        compiled for."""
        own(donated)   # NOTE [ donated buffers ] in _donate.py
        if self.fresh:
            self.inputs = jax.tree_util.tree_map(_struct, (donated, kept, grads, hypers, gens))
        if self.donate_grads:
            own(grads)
        self.sealed = sealed
        try:
            if _dispatch._profiler is not None:   # NOTE [ profiler hook ] in autograd/profiler.py
                return _dispatch._profiler.program(self.fn, donated, kept, grads, hypers, gens)
            return self.fn(donated, kept, grads, hypers, gens)
        except ValueError as e:
            if "incompatible devices" not in str(e):
                raise
            found = list(dict.fromkeys(from_jax_device(next(iter(a.devices())))
                                       for a in jax.tree_util.tree_leaves(
                                           (donated, kept, grads))))
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at "
                               f"least two devices, {found[0]} and {found[1]}!") from None
        except jax.errors.JaxRuntimeError as e:
            raise out_of_memory(e) or e
        finally:
            self.sealed = False


# NOTE [ a step over the processes ]
# A step whose collectives run over a process group (DistributedDataParallel's gradient
# all-reduce, SyncBatchNorm's statistics: NOTE [ collectives in a compiled step ] in
# distributed/distributed_c10d.py) is one program that every process of the group runs
# together: the jitted trace under ``shard_map`` over the group's mesh (one device per rank).
# Each input is this process's own array presented as its device's shard of a global array
# sharded ``P()`` (``make_array_from_single_device_arrays``: no copy, so donation still hands the
# old buffers over); the ranks' values differ, and ``shard_map`` with ``check_vma=False`` lets
# each device run on its own -- the program's only communication is the collectives the step
# asked for.  Each output comes back as this process's shard.  Measured (jax 0.10.2, two CPU
# processes, the MLP of tests/ddp_worker.py): the program's HLO holds one all-reduce per DDP
# bucket and nothing else that communicates; presenting an input costs about 25 us per array
# per call on this 2-core machine, reading an output's shard under 1 us.  The other way, a
# program over global arrays stacked along a leading rank axis, would reshape every input each
# call and leave the communication to XLA's partitioner; this one keeps exactly the
# collectives the eager code makes.
def _over_processes(run, mesh, donate):
    """``run`` as one program over ``mesh``'s processes (NOTE [ a step over the processes ])."""
    from jax.sharding import NamedSharding, PartitionSpec
    whole = NamedSharding(mesh, PartitionSpec())
    body = jax.shard_map(run, mesh=mesh, in_specs=(PartitionSpec(),) * 5,
                         out_specs=PartitionSpec(), check_vma=False)
    program = jax.jit(body, donate_argnums=donate, keep_unused=True)

    def spread(a):
        return jax.make_array_from_single_device_arrays(a.shape, whole, [a])

    def call(*args):
        out = program(*jax.tree_util.tree_map(spread, args))
        return jax.tree_util.tree_map(lambda a: a.addressable_data(0), out)
    call.program, call.whole = program, whole
    return call


# NOTE [ a step over several devices ]
# A step that runs a DataParallel (NOTE [ DataParallel ] in nn/parallel/data_parallel.py) asks,
# while it is traced, for its batch sharded over the devices' Mesh and its parameters
# replicated (sharding constraints).  Its program is then one SPMD program over that mesh: its
# inputs are put on every device of the mesh before each call (the broadcast of the parameters
# PyTorch's replicate does each forward), XLA's partitioner splits the work by the constraints
# and inserts the collectives (the gradients' all-reduce), and the outputs, replicated, are
# taken from the step's device, where the module's state lives.
def _over_devices(run, mesh, device, donate):
    """``run`` as one program over ``mesh``'s devices (NOTE [ a step over several devices ])."""
    from jax.sharding import NamedSharding, PartitionSpec
    whole = NamedSharding(mesh, PartitionSpec())
    program = jax.jit(run, out_shardings=whole, donate_argnums=donate, keep_unused=True)

    def call(*args):
        out = program(*jax.device_put(args, whole))
        leaves = jax.tree_util.tree_leaves(out)
        if not leaves:
            return out
        at = [s.device for s in leaves[0].addressable_shards].index(device)
        return jax.tree_util.tree_map(lambda a: a.addressable_data(at), out)
    call.program, call.whole = program, whole
    return call


def _struct(a, sharding=None):
    return jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=sharding or a.sharding)


def program_text(compiled):
    """The optimized HLO text of ``compiled``'s program for the inputs of its first call: what
    XLA runs, collectives included."""
    fn, inputs = compiled.fn, compiled.inputs
    if hasattr(fn, "program"):
        fn, inputs = fn.program, jax.tree_util.tree_map(lambda a: _struct(a, fn.whole), inputs)
    return fn.lower(*inputs).compile().as_text()


_GRAD = operator.attrgetter("_grad")


def hyper_values(state):
    """The values of the optimizers' traced hyper-parameters, a tuple per group."""
    return [tuple(group[k] for k in keys) for _, group, keys in state.groups]


_ARR = operator.attrgetter("_arr")


def input_values(state, hypers=None):
    """A program's inputs from ``state``: (arrays, grads, hypers, gens)."""
    arrays = list(map(_ARR, state.tensors))
    for i in state.by_value:
        arrays[i] = state.tensors[i]._value()
    return arrays, _grad_values(state.params), \
        hyper_values(state) if hypers is None else hypers, _gen_values(state.generators)


def _grad_values(params):
    return [None if g is None else g._arr if g._root is None else g._sync()
            for g in map(_GRAD, params)]


def _gen_values(generators):
    return [g._state._arr for g in generators]


class Call:
    """A call of ``program`` on ``state``, planned once: where each input is read and each
    output written (NOTE [ the per-call plan ]).  Calling it runs the program and writes its
    results back; it returns what the step returns.

    NOTE [ the per-call plan ]
    A compiled call runs no Python of the step, so what is left is moving values between the
    captured Tensors and the program: the replay check (guards.Replay), the inputs and the
    write-back.  Their cost is per Tensor (a Transformer and its Adam moments: over 100 written
    every call), and it is paid right after a program that has taken the caches, so every
    object read costs a miss: the per-call plan reads each Tensor once, in lists made once per
    state.  What a replayed call finds is the same objects (the replay check proved it), so this
    plan is made with the Replay and kept:
    - inputs: the Tensors whose arrays are donated (the ones the step writes) and kept, each
      list in the program's order; an argument (positions from ``state.fixed`` on, new objects
      on each call) is read from ``state.tensors``, which the replay check fills;
    - outputs: the written storage roots, written inline (Tensor._write's three stores, the
      version counter bumped as PyTorch's in-place update bumps it, one fresh storage
      generation for all: a new int per Tensor would be one more object made and freed); an
      argument the step writes (a view, or passed by value) takes Tensor._write;
    - which generators and moved tensors cross devices (NOTE [ devices in a compiled step ]),
      and whether the checks' flags are on the host, known from the program's device.
    Each call still reads the ``.grad`` of every parameter (code outside the step may set
    them) and the refcounts of what it donates (_donate.own, _held_grads), and frees each written
    Tensor's old (donated) array, which costs about a microsecond in jaxlib per array even
    warm: a floor of the write-back that no plan removes."""

    def __init__(self, program, state):
        self.program, self.state = program, state
        plan, tensors, fixed = program.plan, state.tensors, state.fixed
        self.donated = [tensors[i] for i in program.donated if i < fixed]
        self.kept = [tensors[i] for i in program.kept if i < fixed]
        self.donated_args = program.donated[len(self.donated):]
        self.kept_args = program.kept[len(self.kept):]
        here = self.here = program.placement
        moved = list(plan.moved)
        if here is not program.device:   # a step over a mesh: what is on one device joins it
            moved += [i for i, t in enumerate(tensors) if i not in plan.moved and
                      len(t._value().devices()) == 1]
        self.moved = [(i in program.donated, (program.donated if i in program.donated
                                              else program.kept).index(i))
                      for i in moved]
        homes = [g._state._device() for g in state.generators]
        self.gens_away = [k for k, d in enumerate(homes) if d != here]
        self.gens_out = [(state.generators[i], None if homes[i] == here else homes[i])
                         for i in plan.gens]
        self.roots, self.at, self.others = [], [], []
        for k, i in enumerate(plan.changed):
            t = tensors[i]
            if i < fixed and t._root is None:
                t._version_counter()   # made now, read as t._vc on every call
                self.roots.append(t)
                self.at.append(k)
            else:
                self.others.append((k, i))

    def __call__(self, hypers=None, sealed=False):
        """``hypers``: the optimizers' hyper-parameters as device scalars, as a replayed call
        gives them (None: put on the device now; as Python numbers, jit would compile the
        program again for them); ``sealed``: as Compiled takes it."""
        program, state = self.program, self.state
        plan, tensors, here = program.plan, state.tensors, self.here
        donated = list(map(_ARR, self.donated))
        kept = list(map(_ARR, self.kept))
        if self.donated_args or self.kept_args:
            donated += [tensors[i]._value() for i in self.donated_args]
            kept += [tensors[i]._value() for i in self.kept_args]
        for is_donated, k in self.moved:
            arrays = donated if is_donated else kept
            arrays[k] = jax.device_put(arrays[k], here)
        if hypers is None:
            hypers = jax.device_put(hyper_values(state), here)
        gens = _gen_values(state.generators)
        for k in self.gens_away:
            gens[k] = jax.device_put(gens[k], here)
        if program.check is not None:   # NOTE [ checks in a compiled step ]
            _, checks, reads = program.check
            arrays = [(donated if d else kept)[k] for d, k in reads]
            if not program.checks_hold(arrays):
                checked = checks(*arrays)
                _raise_failed_check(plan, state, (), (checked[0], checked[1:]))
        grads = _grad_values(state.params)
        held = _held_grads(state.params, plan.replaced, grads, program.donate_grads)
        changed, outs, final_grads, hyper_out, gens_out, created, deferred, checked = program(
            donated, kept, grads, hypers, gens, sealed=sealed)
        del donated, kept, grads   # (as donated, gone)
        # the state and gradients are written while the program runs (NOTE [ checks in a
        # compiled step ]: where a check fails they hold their old values)
        gen = fresh_gen()
        self.write(changed, gen)
        params = state.params
        for i in held:   # the step's new gradient goes into a new Tensor, as in eager
            params[i]._grad = None
        new_grads, made = iter(final_grads), []
        for p, has in zip(params, plan.grads):
            g = p._grad
            if not has:
                p._grad = None
            elif g is None:
                p._grad = Tensor._wrap(next(new_grads))
                made.append(p)
            elif g._root is None:   # as in write
                g._arr = next(new_grads)
                g._gen = gen
                (g._vc or g._version_counter())[0] += 1
            else:
                g._write(next(new_grads))
        if checked:
            if program.on_host:   # (read through the buffer protocol: numpy's path costs more)
                flags = checked[0] if here is program.device else checked[0].addressable_data(0)
                if not all(memoryview(flags).tolist()):
                    _raise_failed_check(plan, state, made, checked)
            else:
                _defer_checks(plan, checked)
        for (g, k), v in zip(plan.hypers, hyper_out):
            group = state.groups[g][1]
            group[k] = jax.tree_util.tree_map(float, v)
        for (g, home), a in zip(self.gens_out, gens_out):
            g._tensor._write(a if home is None else jax.device_put(a, home))
            g._reload()
        if plan.created:
            _bind_created(program, plan, created)
        program.fresh = False
        for (f, f_args), arrays in zip(plan.deferred, deferred):
            it = iter(arrays)
            f(*[Tensor._wrap(next(it)) if a is None else a for a in f_args])
        if plan.one_tensor:
            return Tensor._wrap(outs[0])
        it = iter(outs)
        leaves = [Tensor._wrap(next(it)) if s is TENSOR else next(it).item() if s is NUMBER
                  else s for s in plan.out_static]
        return jax.tree_util.tree_unflatten(plan.out_tree, leaves)

    def write(self, changed, gen):
        """Write the program's new values of the written state into its Tensors; ``gen``: a
        fresh storage generation, the same for all (no view has seen it)."""
        values = changed if len(self.at) == len(changed) else map(changed.__getitem__, self.at)
        for t, a in zip(self.roots, values):
            t._arr = a   # Tensor._write for a storage root, inlined
            t._gen = gen
            t._vc[0] += 1
        tensors = self.state.tensors
        for k, i in self.others:   # an argument view: into its root
            tensors[i]._write(changed[k])


def _bind_created(program, plan, created):
    """The Tensors the step created: the call that traced the program bound them already
    (their arrays are set here), a later call binds new Tensors to the same places."""
    if program.fresh:
        for t, a in zip(plan.created, created):
            t._arr, t._gen = a, fresh_gen()
    else:
        for places, a in zip(plan.bind, created):
            t = Tensor._wrap(a)
            for how, container, key, _ in places:
                bind_place(how, container, key, t)


def run(program, state, hypers=None):
    """Call ``program`` on ``state``'s values and write its results back into ``state``'s
    objects; returns what the step returns."""
    return Call(program, state)(hypers)


def _held_grads(params, replaced, grads, donated):
    """The parameters, among those whose ``.grad`` the step replaces by a new Tensor
    (``zero_grad()``, then backward), whose old ``.grad`` Tensor something else holds: it keeps
    its values, as in eager, so its buffer is not donated (a copy goes in instead).  The new
    gradient of any other one may go into the old Tensor: nothing else can see it."""
    held = [i for i in replaced if params[i]._grad is not None
            and sys.getrefcount(params[i]._grad) > _SOLE_GRAD_OWNER]
    if donated:
        for i in held:
            grads[i] = copied(grads[i])
    return held


# NOTE [ checks in a compiled step ]
# Eager ops check index values on the host (an embedding index past the table raises
# IndexError); while a step is traced the values are not known, and XLA would clamp such an
# index and train on the wrong row.  So an op that checks on the host records the same check as
# a traced boolean (_trace_context.check), and the step's jaxpr returns the checks' flags, with
# the values its message shows.  Where a check fails the step raises what eager code raises at
# an op of the forward, with nothing written: the parameters, the optimizer's state and
# accumulated gradients hold their old values, and a ``.grad`` the step makes or replaces
# (``zero_grad()``, then backward) is None again, as zero_grad left it.
# Most checks read only what the step is given (an embedding's token ids, a loss's targets), and
# those run first, on the host, before the program (``_checks_first``: the jaxpr cut down to the
# checks, evaluated with numpy where every primitive in it is one ``_host_program`` knows), so the
# program itself has no checks in it.  Checks of values the model computes (an index made by an
# argmax over a product: a primitive numpy does not run here) stay in the program, and so do the
# rest of that step's checks and all checks of a step on an accelerator or over devices or
# processes: every state output (written tensors, gradients that replace old ones) is then
# selected, the new value where every check holds, else the old one (``Compiled``'s run), and the
# flags are read after the call (on the CPU) or queued as eager checks are (NOTE [ checks on an
# accelerator ] in _tensor.py), the state keeping its old values as selected and the error coming
# at the next read of values on the host.  The selects cost most of what checks cost: XLA copies
# the donated buffers they read after the step wrote them (the MLP's program copies 9 buffers, 3
# without checks; the Transformer's 95), and a separate check program would wait for the device's
# queue (36 µs alone for the MLP's targets; a compiled MLP step 2.52-2.57 ms against 2.32-2.36
# without checks), where numpy takes microseconds: the flags alone (the values their messages show
# are computed where one fails), a compiled program of numpy steps (``_host_program``), 11 µs in a
# loop for the MLP's targets, 63 µs within the step, beside XLA's threads on the 2-core CPU
# (bench_train --profile's per-call Python, MLP / CNN / Transformer, 130 / 179 / 295 -> 178 / 247 /
# 367 µs).  What the checks cost, compiled step with them against without (scripts/bench_train.py
# --index-checks-cost, 2-core CPU, 2026-12-06): selects in the program, MLP 1.21x, CNN 1.12x,
# Transformer 1.18x; checked first on the host, 1.04x, 1.03-1.04x, 1.03-1.05x (two runs; the
# compiled step then 1.04-1.05x hand-written JAX for the MLP, 1.05-1.08x for the Transformer, 1.23x
# and 1.20x before).  Checks that held for the very arrays they read now are not evaluated
# again (``Compiled.checks_hold``; an array's values never change, and a write into a captured
# Tensor gives it a new array): a step over the same batch, captured or passed again, skips them,
# where one given new batches pays them each call.  A compiled call less its program run alone,
# in turns (bench_train's steps, two runs each, 2026-12-07): the MLP's main-thread CPU 113 -> 45-47
# µs and wall time 99-120 -> 28-40 µs, the Transformer's 235-238 -> 138-161 µs and 90-111 -> 28-50
# µs.
# compiler.config.index_checks switches them off.  Measured and not kept:
# ``xla_cpu_copy_insertion_use_region_analysis`` removes the copies (the small step 171-180 ->
# 91-94 us, the MLP's 3.15 -> 2.97 ms, medians of four processes) but ran the CNN's step slower on
# two cores (2.56 -> 3.05 ms; on one core 2.73 -> 2.69) and the Transformer's no faster: the copies
# free the donated buffers early, so XLA can run the updates beside the rest of the backward on
# another core, where without them each update waits for every reader.
def _checks_first(jaxpr, n_tensors, donated, kept, n_checked):
    """The checks as functions of the state's arrays that numpy evaluates before the step (NOTE
    [ checks in a compiled step ]): (their flags, their flags and values, (donated?, position)
    of each array they read); None where they read more than the state's arrays or hold a
    primitive ``_host_program`` does not know (checks of values the model computes: a
    product)."""
    try:
        from jax._src.interpreters.partial_eval import dce_jaxpr
    except ImportError:
        return None
    inner = jaxpr.jaxpr
    first = len(inner.outvars) - n_checked   # the flags, then the values their messages show
    checks, used = dce_jaxpr(inner, [i >= first for i in range(len(inner.outvars))])
    reads = [i for i, u in enumerate(used) if u]
    if any(i >= n_tensors for i in reads):
        return None
    flags, _ = dce_jaxpr(inner, [i == first for i in range(len(inner.outvars))],
                         instantiate=used)   # (reading the same arrays)
    flags, checks = (_host_program(j, jaxpr.consts) for j in (flags, checks))
    if checks is None:
        return None
    return flags, checks, [(True, donated.index(i)) if i in donated else (False, kept.index(i))
                           for i in reads]


def _broadcast_in_dim(x, shape, broadcast_dimensions, **_):
    return np.broadcast_to(np.expand_dims(x, tuple(
        d for d in range(len(shape)) if d not in broadcast_dimensions)), shape)


def _dynamic_slice(x, *starts, slice_sizes):
    at = tuple(slice(s, s + n) for s, n in zip(
        (min(max(int(s), 0), d - n) for s, d, n in zip(starts, x.shape, slice_sizes)),
        slice_sizes))   # (clamped into range, as XLA clamps a dynamic slice's start)
    return x[at]


# numpy for the primitives of index checks (NOTE [ checks in a compiled step ]); the
# elementwise ones take no parameters (checks with one that sets any stay in the program)
_ELEMENTWISE = {
    "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
    "eq": np.equal, "ne": np.not_equal, "and": np.bitwise_and, "or": np.bitwise_or,
    "not": np.invert, "add": np.add, "sub": np.subtract, "mul": np.multiply,
    "max": np.maximum, "min": np.minimum,
    "select_n": lambda p, *cases: np.choose(np.asarray(p).astype(np.int64), cases)}
_HOST = {
    "argmax": lambda x, axes, index_dtype: np.argmax(x, axes[0]).astype(index_dtype),
    # (a ufunc's reduce, as lax's are bitwise on integers; np.any's wrapper costs twice as much)
    "reduce_or": lambda x, axes, **_: np.bitwise_or.reduce(x, axis=axes),
    "reduce_and": lambda x, axes, **_: np.bitwise_and.reduce(x, axis=axes),
    "reduce_max": lambda x, axes, **_: np.maximum.reduce(x, axis=axes),
    "reduce_min": lambda x, axes, **_: np.minimum.reduce(x, axis=axes),
    "squeeze": lambda x, dimensions: np.squeeze(x, dimensions),
    "reshape": lambda x, new_sizes, **_: np.reshape(x, new_sizes),
    "convert_element_type": lambda x, new_dtype, **_: np.asarray(x).astype(new_dtype),
    "broadcast_in_dim": _broadcast_in_dim, "dynamic_slice": _dynamic_slice,
    "slice": lambda x, start_indices, limit_indices, strides: x[tuple(
        slice(a, b, s) for a, b, s in zip(start_indices, limit_indices,
                                          strides or (1,) * x.ndim))],
    "stack": lambda *xs, axis: np.stack(xs, axis),
    "concatenate": lambda *xs, dimension: np.concatenate(xs, dimension),
    "copy": np.copy, "copy_p": np.copy}
_CALLS = {"pjit", "jit", "closed_call"}


def _host_program(jaxpr, consts):
    """``jaxpr`` as a function of numpy arrays (a step's checks of its index inputs take
    microseconds so; a program of their own would wait for the device's queue), or None where
    it holds a primitive this does not know.  Made once: its steps read and write slots of
    one list, nested calls inlined and constants placed beforehand."""
    slots, template, steps = {}, [], []

    def place(value):
        template.append(value)
        return len(template) - 1

    def slot(v):
        return place(np.asarray(v.val)) if hasattr(v, "val") else slots[v]

    def compile_(jaxpr, consts):
        slots.update((v, place(c)) for v, c in zip(jaxpr.constvars, consts))
        for e in jaxpr.eqns:
            name, ins = e.primitive.name, [slot(v) for v in e.invars]
            if name in _CALLS:
                inner = e.params["jaxpr"]
                slots.update(zip(inner.jaxpr.invars, ins))
                if not compile_(inner.jaxpr, inner.consts):
                    return False
                slots.update(zip(e.outvars, [slot(v) for v in inner.jaxpr.outvars]))
                continue
            if name in _ELEMENTWISE and all(v is None for v in e.params.values()):
                fn = _ELEMENTWISE[name]
            elif name in _HOST:
                fn = functools.partial(_HOST[name], **{
                    k: v for k, v in e.params.items() if k not in ("sharding", "out_sharding")})
            else:
                return False
            outs = [place(None) for _ in e.outvars]
            slots.update(zip(e.outvars, outs))
            steps.append((fn, ins, outs if e.primitive.multiple_results else outs[0]))
        return True

    ins = [place(None) for _ in jaxpr.invars]
    slots.update(zip(jaxpr.invars, ins))
    if not compile_(jaxpr, consts):
        return None
    outs = [slot(v) for v in jaxpr.outvars]

    def run(*args):
        env = template.copy()
        for i, a in zip(ins, args):
            env[i] = np.asarray(a)
        for fn, at, to in steps:
            if type(to) is int:
                env[to] = fn(*[env[i] for i in at])
            else:
                for i, v in zip(to, fn(*[env[i] for i in at])):
                    env[i] = v
        return [np.asarray(env[i]) for i in outs]
    return run


def _raise_failed_check(plan, state, made, checked):
    """A check of the program failed (NOTE [ checks in a compiled step ]): the state and
    gradients written back hold their old values; a .grad the step made (``made``) or replaces
    is None again; then raise as eager code would, with nothing else written back (the
    generators' states were not donated)."""
    for p in made:
        p._grad = None
    for i in plan.replaced:
        state.params[i]._grad = None
    oks, values = np.asarray(checked[0]), checked[1]
    k = int(np.argmin(oks))
    at = sum(n for _, _, n in plan.checks[:k])
    error, message, n = plan.checks[k]
    raise error(message.format(*(np.asarray(v).item() for v in values[at:at + n])))


def _defer_checks(plan, checked):
    """On an accelerator the checks' flags are not read after the call: each is queued (NOTE
    [ checks on an accelerator ] in _tensor.py); the state written holds its old values where
    one failed, as the program selected them."""
    oks, values = checked
    at = 0
    for k, (error, message, n) in enumerate(plan.checks):
        defer_check((oks[k], *values[at:at + n]), error, message)
        at += n


def _sole_grad_owner_refs():
    """sys.getrefcount of a ``.grad`` only its parameter holds, as _held_grads reads it."""
    p = Tensor._wrap(np.zeros(1))
    p._grad = Tensor._wrap(np.zeros(1))
    params = [p]
    return sys.getrefcount(params[0]._grad)


_SOLE_GRAD_OWNER = _sole_grad_owner_refs()
