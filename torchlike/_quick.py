"""Quick compiles: the XLA options torchlike's per-op programs compile with.

NOTE [ quick compiles ]
Compiling is most of a new process's time (scripts/bench_programs.py: 44-60% of the example
programs' wall time), and an eager program compiles a program per op and shape, most of them a
few elementwise loops that run for microseconds.  XLA's CPU backend compiles loop fusions with
its newer emitters by default; its older ones (``xla_cpu_use_fusion_emitters=False``) compile
the same program in about 60% of the time (2-core CPU, jax 0.10.2, one core: a 64x64 mul
32 -> 19 ms, batch norm's statistics 66 -> 35 ms, Adam over a small CNN's 10 tensors 410 ->
280 ms), and their code runs as fast for elementwise work, reductions over leading axes, gathers
and what is not a fusion (dots, convolutions), but slower for a recurrence's loop (an LSTM
layer's scan: 1.9 -> 2.8 ms) and a row-wise softmax over more than a few thousand elements.
Set for the whole process (with one codegen split), the old emitters also slowed
scripts/bench_train.py's Transformer step compiled as one program from 2.68 to 3.08 ms.  LLVM's
optimisation level 1 instead of 2 (``xla_backend_optimization_level=1``) shortens the old
emitters' compiles again (fresh processes, two cores: 24 per-op programs 1.56-1.65 -> 1.39-1.45
s; a log-softmax over 64x33 78 -> 46 ms, an LSTMCell's backward 92-98 -> 79-81 ms) and their
code runs as fast, since XLA's emitters vectorise their loops themselves (2048x1024 elementwise
ops, reductions and softmax within 5%).  The default emitters' code runs as fast at level 1
(a softmax over 2048x1024: 1.49 -> 1.41 ms, 700x2000 0.84 -> 0.82 ms); an LSTM stack it
compiles no faster, runs its plain forward faster (two layers, 35 steps: 5.6 -> 4.1 ms) and its
recorded forward and backward 5-10% slower, and the example programs that train and evaluate
one come out ahead (examples/pytorch/word_lstm.py 13.75 -> 13.52 s, char_lstm.py 10.46 ->
10.02 s; one core, medians of 3, interleaved).  A (log-)softmax over rows runs faster with the
default emitters from tens of thousands of elements and compiles 20-40 ms slower below that (one
core, interleaved: forward / backward runs, old -> default emitters, log-softmax over 32x1000
39 / 43 -> 31 / 36 µs, 128x512 67 / 74 -> 51 / 59 µs, 700x2000 1.30 / 1.73 -> 0.89 / 1.18 ms,
560x10000 6.8 / 7.8 -> 5.9 / 7.1 ms; as fast at 64x33 and 128x10; compiles, medians of 12
shapes: 16x10 68 / 95 -> 87 / 136 ms, 64x33 90 / 106 -> 129 / 142 ms, 128x512 67 / 51 -> 63
/ 73 ms; a cross-entropy's forward and backward over word_lstm's 700x2000 logits, two runs,
2.09, 2.38 -> 1.72, 2.06 ms; logsumexp's backward over 128x512 57 -> 41 µs, 700x2000 1.04 ->
0.69 ms, its forward as fast).

So the programs that run eagerly, where a compile is most of what a program costs (an op's forward
and backward, a view chain, a random draw), compile with the old emitters at level 1
(``quick_jit``); the rnn stacks (``Op(fusion=True)``), whose scans the old emitters run slowly, with
the default emitters at level 1 (``quick_jit(fusion=True)``), and so do an optimizer's update (whose
in-place writes the old emitters copy: NOTE [ one update program per step ] in optim/optimizer.py)
and the softmax family's programs (softmax, log_softmax and so cross-entropy, attention's safe
softmax, logsumexp) over at least ``SOFTMAX_FUSION`` elements (``Op(fusion=SOFTMAX_FUSION)``: the
trace notes the options for jax's compile step, wrapped: NOTE [ programs for ever new shapes ]); and
the programs compiled because they repeat (torchlike.compile's step, the fused backward, a lazy
segment), where running fast matters more than compiling fast, with XLA's defaults.  Only where
every device is a CPU (the options are the CPU backend's), an XLA without the options keeps its
defaults, and an option the process's XLA_FLAGS sets is left to it (a compiler option would
override it: the test suite compiles at level 0, which level 1 made 55% slower to compile).

jax refuses a jit with compiler options inside another trace (``jax.make_jaxpr``, ``eval_shape``,
a user's ``jax.jit`` over eager code on captured tensors): a call that can be reached there
catches that error and runs the program's function in the trace instead (``inlined``), which is
what a nested jit amounts to.  The check costs nothing when the call is not traced.

Which options apply depends on the devices, and asking for them starts jax's backend (on a
GPU machine, claiming the GPU), which importing torchlike must not do: a program defined at
import (an optimizer's helpers, the engine's gradient adds) is a ``quick_program``, made into
its jitted function at its first call.
"""
import functools
import math
import os
import re
import threading

import jax

_QUICK = {"xla_cpu_use_fusion_emitters": False, "xla_backend_optimization_level": 1}
_FUSION = {"xla_backend_optimization_level": 1}   # XLA's default (fusion) emitters
_options = None   # (quick, fusion) options in use, found when the first program is made
SOFTMAX_FUSION = 65536   # elements: the smallest softmax compiled with the fusion emitters


def quick_jit(fn, fusion=False, traces=None, **kwargs):
    """``jax.jit(fn, **kwargs)`` compiled with the quick options, or with XLA's fusion emitters
    (NOTE [ quick compiles ]): ``fusion`` True for every program (a recurrence's loop), or the
    fewest elements of a program's largest array that take them (a row-wise softmax);
    ``traces``: [the traces of every program of one op (NOTE [ programs for ever new shapes ]),
    the new shapes it met: these traces and its calls run on the host instead (``Op._traces``)],
    else this program's own."""
    global _options
    if _options is None:
        _options = _supported()
    return jax.jit(_marked(fn, [0, 0] if traces is None else traces, fusion),
                   compiler_options=_options[fusion is True] or None, **kwargs)


class quick_program:
    """``quick_jit(fn, **kwargs)`` made at the first call, for a program defined at import
    (NOTE [ quick compiles ]); a decorator (``functools.partial`` passes ``kwargs``)."""

    __slots__ = ("_fn", "_kwargs", "_jitted", "__weakref__")   # (jax.eval_shape keeps one)

    def __init__(self, fn, **kwargs):
        self._fn, self._kwargs, self._jitted = fn, kwargs, None

    def __call__(self, *args, **kwargs):
        jitted = self._jitted
        if jitted is None:
            jitted = self._jitted = quick_jit(self._fn, **self._kwargs)
        return jitted(*args, **kwargs)


# NOTE [ one MLIR context a thread ]
# jax lowers each program into an MLIR context made for it (``mlir.make_ir_context``: a new
# context, its dialects loaded), which lives as long as the program's module: jax's caches keep
# up to 2,048 lowered programs.  For the small programs an eager program compiles by the hundred
# that is most of their lowering, and of their memory: tracing and lowering
# ``x[:, 1:] * 2 + x[:, :-1]`` for 1,000 new shapes took 7.6-10.2 ms each with a context apiece
# and 3.1-3.7 ms with one kept (jax 0.10.2, 2-core CPU, two runs; making a context 4.4 ms), and
# scripts/bench_growth.py's 300 batch sizes (3,605 programs) took 180 s and kept 3.81 GB with a
# context apiece, 115 s and 1.29 GB with one.  So the programs torchlike compiles with the
# quick options lower into one context per thread, made again after every ``_CONTEXT_USES``
# lowerings.  A context keeps what its modules uniqued (types, locations, constants) while any
# of them lives: a context made anew bounds that, and other lowerings keep jax's context
# apiece, since a program with large constants (a closure over a big array) would keep a shared
# context's earlier constants alive with it (40 jitted functions, each over its own 4 MB array:
# 133 MB kept with jax's contexts, 239 MB shared).
# The trace of a quick program marks the thread (_marked), and the next context asked for, which
# jax asks for as it lowers that trace, is the shared one.  A trace that is not lowered next (an
# ``eval_shape``; a quick program inlined into a larger trace) leaves the mark for the next
# lowering of that thread, which shares the context too: torchlike's own larger programs (a
# compiled step, a lazy segment) mostly.  ``TORCHLIKE_MLIR_CONTEXT=jax`` (read at import)
# leaves jax's context apiece; a jax without ``make_ir_context`` is left as it is.
_CONTEXT_USES = 64
_thread = threading.local()   # .marked: a quick trace awaits its lowering; .context, .uses


def _marked(fn, traces, fusion=False):
    """``fn``, marking the thread after each trace of it (NOTE [ one MLIR context a thread ]),
    counting it in ``traces``, and noting for its compile the options it takes instead of the
    quick ones (``_recompile``)."""
    @functools.wraps(fn)
    def traced(*args, **kwargs):
        out = fn(*args, **kwargs)
        _thread.marked = True
        traces[0] += 1
        traces[1] += 1
        _thread.recompile = _recompile(
            args, out, traces[0] > _SHAPES_MET or getattr(_thread, "bucket", False), fusion)
        return out
    if isinstance(fn, functools.partial):   # jax names the program after it (jit(_apply))
        traced.__name__ = traced.__qualname__ = fn.func.__name__
    return traced


def _replace(module, name, switch, wrap):
    """Put ``wrap(jax's own)`` in place of jax's ``module.name``, jax's own kept at ``.jax``,
    unless this jax has no such function, it was replaced already, or the environment variable
    ``switch`` is "jax"; returns whether it was replaced."""
    own = getattr(module, name, None)
    if own is None or hasattr(own, "jax") or os.environ.get(switch) == "jax":
        return False
    replacement = wrap(own)
    replacement.jax = own   # (tests restore it)
    setattr(module, name, replacement)
    return True


def share_ir_contexts():
    """Lower quick programs into one MLIR context per thread (NOTE [ one MLIR context a
    thread ]); returns whether jax's ``make_ir_context`` was replaced."""
    try:
        from jax._src.interpreters import mlir
    except ImportError:
        return False

    def wrap(make):
        def make_ir_context():
            if not getattr(_thread, "marked", False):
                return make()
            _thread.marked = False
            uses = getattr(_thread, "uses", _CONTEXT_USES)
            if uses >= _CONTEXT_USES:
                _thread.context, uses = make(), 0
            _thread.uses = uses + 1
            return _thread.context
        return make_ir_context
    return _replace(mlir, "make_ir_context", "TORCHLIKE_MLIR_CONTEXT", wrap)


# NOTE [ programs for ever new shapes ]
# A loop whose shapes keep changing compiles every op again for each new shape: a language
# model's generation loop, whose context grows a token a step (examples/pytorch/transformer_lm.py
# compiled its slices, cat, adds, layer norm, embedding and linear head anew for each of ~32
# lengths, ~330 programs).  Each is a program over a few thousand elements at most, run a few
# times.  LLVM's optimisation level 0 compiles such a program in about half the time of the
# quick options' level 1 (2-core CPU, jax 0.10.2, medians of 32 shapes: ``x + y`` over
# (1, n, 32) 18.8 -> 9.8 ms, a slice 21.9 -> 11.2 ms; a layer norm over 64x256 42 -> 23 ms) and
# its code runs slower, by microseconds at that size and by up to tenfold past it (32x64: an add
# 7.4 -> 10.3 µs, a layer norm 9.7 -> 25.3, a log-softmax 9.9 -> 35.0; 256x512: an add 21 ->
# 198 µs, a layer norm 79 -> 400).  So once the programs of one op (every program compiled for it,
# forward and backward; a program of no op counts its own) have been traced ``_SHAPES_MET``
# times, a new one whose operands and results have at most ``_SMALL`` elements each compiles at
# level 0.  A training loop meets an op in a few shapes (the example programs' most traced op
# was word_lstm's view, 16 traces), and any program over larger arrays keeps level 1; a model of
# many small layers, each of its own shape, runs its later layers' programs so too, a few
# microseconds slower a call.  A bucket's program (NOTE [ rows in buckets ] in _host.py,
# NOTE [ causal encoder layers in buckets ] in _ops/attention.py) is made for such an op, so it
# compiles so from its first trace (``bucketed``): the 40-character sample of transformer_lm's
# model after three training steps took 0.90, 0.93, 1.13 s where it took 1.41, 1.47, 1.24
# (interleaved, one process each), its causal layer's four bucket programs over (1, 8..32, 32)
# among them.  A program that only moves data (a slice, a pad, a cat) is not compiled for its
# first calls once its op has met a few shapes (NOTE [ new shapes moved on the host ] in
# _host.py).
# The trace notes the shapes of its results and the options to change for the thread
# (``_thread.recompile``: level 0 here, the fusion emitters for a large softmax, NOTE [ quick
# compiles ]), and jax's compile step, wrapped, changes them for the next program whose results
# have those shapes (a trace that is not compiled next, an ``eval_shape``, leaves a note the
# next compile does not match).  Only the quick options are changed: where XLA_FLAGS sets the
# level (the test suite's 0) nothing is lowered.  transformer_lm compiles 158 of its 418
# programs at level 0: XLA's compiles 7.06, 7.43 -> 6.54, 6.81 s (scripts/bench_programs.py, two
# interleaved runs; the wall time 16.4, 17.2 -> 16.3, 16.9 s, within the machine's noise).
# ``TORCHLIKE_COMPILE_STEP=jax`` (read at import) leaves jax's compile step as it is.
_SHAPES_MET = 16    # traces of an op's programs before its small new shapes compile quickest
_SMALL = 4096       # elements: the largest array of a program compiled so
_LEVEL_0 = {"xla_backend_optimization_level": 0}       # (the quick options' level is 1)
_TO_FUSION = {"xla_cpu_use_fusion_emitters": None}     # the quick options made _FUSION


class bucketed:
    """A context in which the programs traced are a bucket's (NOTE [ rows in buckets ] in
    _host.py), which serve an op that keeps meeting new shapes: they compile as its programs do
    once it has met ``_SHAPES_MET`` (NOTE [ programs for ever new shapes ])."""

    def __enter__(self):
        self.prev = getattr(_thread, "bucket", False)
        _thread.bucket = True

    def __exit__(self, *exc):
        _thread.bucket = self.prev


def _recompile(args, out, churning, fusion):
    """(the shapes of a trace's results, the changes its compile makes to its options), or None:
    level 0 for a program of an op ``churning`` through shapes whose arrays (operands, results)
    have at most _SMALL elements each (NOTE [ programs for ever new shapes ]), the fusion emitters
    for one whose largest array has at least ``fusion`` elements (NOTE [ quick compiles ])."""
    if not churning and type(fusion) is not int:
        return None
    outs = jax.tree_util.tree_leaves(out)
    largest = max([getattr(a, "size", 1) for a in (*jax.tree_util.tree_leaves(args), *outs)])
    if churning and largest <= _SMALL:
        changes = _LEVEL_0
    elif type(fusion) is int and largest >= fusion:
        changes = _TO_FUSION
    else:
        return None
    return tuple([tuple(getattr(a, "shape", ())) for a in outs]), changes


def _changed(options, changes):
    """Compiler options (a tuple of pairs) with ``changes`` made (None: the option dropped)."""
    changed = []
    for k, v in options:
        v = changes.get(k, v)
        if v is not None:
            changed.append((k, v))
    return tuple(changed)


def _result_shapes(module):
    """The shapes of the results of an MLIR module's ``main`` (None where one has none)."""
    from jax._src.lib.mlir import ir
    for op in module.body.operations:
        if op.operation.name == "func.func" and str(op.attributes["sym_name"]) == '"main"':
            results = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value).results
            try:
                return tuple([tuple(ir.ShapedType(r).shape) for r in results])
            except ValueError:   # a result with no shape (a token)
                return None
    return None


# NOTE [ small reductions over several dims ]
# XLA's old CPU emitters compile a reduction of a small floating-point array over two or more of
# its dims (a full sum, mean, max, var, norm or logsumexp of a 32x32 tensor) as a vectorised loop
# that LLVM, at the quick options' level 1, unrolls for hundreds of milliseconds: a sum over
# 32x32 compiles in 360-490 ms, over (2, 32, 32) in 1.6 s, over (16, 32) or (128, 16) in 110-120
# ms, where a sum over (64, 32) or (32, 33) compiles in 30 and one over the same 32x32 at level 0
# or with the fusion emitters in 18-55 (2-core CPU, jax 0.10.2, first compiles; what unrolls
# depends on the shape, within 2,048 elements, and not for integers; 256-bit vectors do it, 128
# would not, at a cost to every other loop).  clip_grad_norm_'s program over
# examples/pytorch/transformer_lm.py's 28 gradients, three of them 32x32, compiled in 0.82-1.18
# s; with the fusion emitters 0.27-0.40 s, and runs as fast (165-260 against 180-240 µs).  So a
# program that would compile with the quick options and holds such a reduction (at most
# ``_UNROLLED`` elements, two or more reduced dims longer than one: found in its module's
# text) compiles with the fusion emitters instead; one whose trace chose level 0 (NOTE [
# programs for ever new shapes ]) keeps it, which does not unroll.
_UNROLLED = 2048    # elements: the largest reduced array compiled with the fusion emitters


_REDUCE = re.compile(r"stablehlo\.reduce\(.*? across dimensions = \[([\d, ]+)\] : "
                     r"\(tensor<([^>]*)>")   # (the reduced dims; the first operand's type)


def _unrolled_reduction(text):
    """Whether an MLIR module (its text, which touches no operation through the bindings)
    reduces a floating-point array of at most _UNROLLED elements over two or more of its dims
    longer than one (NOTE [ small reductions over several dims ])."""
    for dims, operand in _REDUCE.findall(text):
        *shape, dtype = operand.split("x")
        shape = [int(n) for n in shape]
        if dtype.startswith(("f", "bf")) and math.prod(shape) <= _UNROLLED and \
                sum(shape[int(d)] > 1 for d in dims.split(",")) > 1:
            return True
    return False


# NOTE [ one program for one text ]
# jax compiles a program per jitted function, and torchlike's per-op programs are many
# functions (each op's forward, each op's backward, for each set of static arguments) whose
# programs often come out the same: the backward of a view is the forward of the view that
# undoes it (a reshape of (32, 32, 92) to (1024, 92) and back), the backward of a clone, of an
# add of two arrays of one shape, of an expand to the shape it had, passes its gradient on
# unchanged (a module that returns its operand), two scalings of the same shape by a Python
# number are one program.  examples/pytorch/transformer_lm.py compiled 21 of its 153 programs a
# second time so (0.39 s of XLA's 3.9), once their modules' own names and the names of their
# results (``jax.result_info``, which XLA does not read) were set aside.  So a module compiled
# with torchlike's options (quick or fusion: NOTE [ quick compiles ]) is looked up by that
# text and the rest of jax's compile arguments (the options, the devices, the client, donation
# and callbacks) before XLA compiles it, and a match takes the executable compiled before:
# the same module text with the same arguments is the same program.  At most ``_MAX_SAME``
# executables are kept so (about 0.2 MB each for a small program, 2-core CPU, jax 0.10.2), the
# least recently used dropped first (NOTE [ bounded program caches ] in _dispatch.py).
_MAX_SAME = 256
_SAME = {}   # (text without names, the other arguments) -> the executable
_same_lock = threading.Lock()
_MODULE_NAME = re.compile(r"^module @[\w.$-]+")
_RESULT_NAME = re.compile(r' ?jax\.result_info = "(?:[^"\\]|\\.)*",?')


def clear_same():
    """Drop the executables kept by their text; jax.clear_caches calls it (registered with
    jax's caches below, as an object with a ``cache_clear``)."""
    with _same_lock:
        _SAME.clear()


clear_same.cache_clear = clear_same
try:
    from jax._src import util as _jax_util
    _jax_util.register_cache(clear_same, "torchlike's programs of one text")
except (ImportError, AttributeError):   # another jax: cleared with jax's compile step only
    pass


def _same_key(text, args):
    """The key of ``_SAME`` for a module's text and jax's other compile arguments (its name,
    a str, left out)."""
    text = _RESULT_NAME.sub("", _MODULE_NAME.sub("module", text, count=1))
    return text, tuple([a for a in args if type(a) is not str])


def options_per_program():
    """Compile a quick program with the options its trace noted (NOTE [ programs for ever new
    shapes ]), or with the fusion emitters where it holds a small reduction over several dims
    (NOTE [ small reductions over several dims ]), and a program of torchlike's options whose
    text was compiled already not again (NOTE [ one program for one text ]); returns whether
    jax's compile step was wrapped."""
    try:
        from jax._src.interpreters import pxla
    except ImportError:
        return False

    def wrap(compile):
        def cached_compilation(computation, *args):
            # (the options: a tuple of pairs)
            at = [i for i, a in enumerate(args) if type(a) is tuple and a and
                  type(a[0]) is tuple]
            note, changes = getattr(_thread, "recompile", None), None
            if note is not None:
                _thread.recompile = None
                if _result_shapes(computation) == note[0]:
                    changes = note[1]
            if _options is None or \
                    not any(o and o.items() <= set(args[i]) for o in _options for i in at):
                return compile(computation, *args)   # (not one of torchlike's programs)
            text = str(computation)
            if changes is None and any(_QUICK.items() <= set(args[i]) for i in at) and \
                    _unrolled_reduction(text):
                changes = _TO_FUSION
            if changes is not None:
                args = list(args)
                for i in at:
                    args[i] = _changed(args[i], changes)
            key = _same_key(text, args)
            with _same_lock:   # (the compile-ahead worker compiles too)
                executable = _SAME.pop(key, None)   # (put back last: the most recently used)
            if executable is None:
                executable = compile(computation, *args)
            with _same_lock:
                while len(_SAME) >= _MAX_SAME:
                    del _SAME[next(iter(_SAME))]
                _SAME[key] = executable
            return executable

        def cache_clear():   # (jax.extend's clearing of jax's compile step)
            clear_same()
            compile.cache_clear()
        cached_compilation.cache_clear = cache_clear
        return cached_compilation
    return _replace(pxla, "_cached_compilation", "TORCHLIKE_COMPILE_STEP", wrap)


def inlined(error, fn, *args):
    """``fn(*args)`` with every jit inside it inlined into the trace it was called in, where
    ``error`` is jax refusing a quick program there; any other error is raised again."""
    if "compiler_options" not in str(error):
        raise error
    with jax.disable_jit():
        return fn(*args)


def _supported():
    """The (quick, fusion) options for this process: none unless every device is a CPU and this
    XLA accepts them, and none that XLA_FLAGS sets itself (the process's choice wins: the test
    suite's optimisation level 0, say)."""
    if any(d.platform != "cpu" for d in jax.devices()):
        return {}, {}
    try:
        jax.jit(lambda: 0, compiler_options=_QUICK).lower().compile()
    except jax.errors.JaxRuntimeError:   # this XLA has no such option
        return {}, {}
    flagged = {f.split("=")[0].lstrip("-") for f in os.environ.get("XLA_FLAGS", "").split()}
    return tuple({k: v for k, v in o.items() if k not in flagged} for o in (_QUICK, _FUSION))
