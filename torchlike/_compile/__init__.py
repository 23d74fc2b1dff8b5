"""Mirrors ``torch.compile``: an eager step as one XLA program (docs/architecture.md §4).

NOTE [ whole-step compile ]
``step = torchlike.compile(fn)``.  The first call runs ``fn`` eagerly: it creates what eager code
creates lazily (optimizer moments, ``.grad`` tensors), so what is traced is the step's steady
state.  A later call whose guards match no compiled program traces ``fn`` once (jax.make_jaxpr,
its Tensors holding tracers) and compiles the trace with jax.jit; calls with the same guards run
that program and write its results back.

Captured, found on every call by walking from ``fn``'s arguments, its closure, the globals it
names (and those of the functions it names) and the object of a bound method, through Modules,
Optimizers, LR schedulers, Generators, lists, tuples, dicts and plain objects' attributes, plus
every device's default generator:
- inputs: every Tensor found (parameters, buffers, each parameter's ``.grad``, optimizer state,
  Tensor hyper-parameters, Tensor arguments); the numeric hyper-parameters of every optimizer
  group (``lr``, ``momentum``, ``betas``, ...) as traced scalars, so a scheduler's changes do not
  recompile; the generators' states, so random ops draw fresh numbers on every call;
- outputs: what ``fn`` returns (as Tensors without history), every captured Tensor the step
  writes, each parameter's final ``.grad``, changed hyper-parameters, the generators' states,
  and Tensors the step creates that stay reachable.  They are written back into the same Tensor
  objects.  The old buffers of written Tensors and of the ``.grad`` Tensors are donated to the
  program (each one only when nothing else holds it; ``torchlike.compiler.config.donate_buffers``).
Baked in: Python values (non-Tensor arguments, shapes, module attributes such as ``training``
and a dropout's ``p``, numbers and strings in the globals and closure the step names, optimizer
flags such as ``nesterov`` and whether ``weight_decay`` is 0) and the structure of the state
(which ``.grad`` exist, optimizer state keys).
Recompiles: new shapes or dtypes of captured Tensors, new Python argument values, a module
switching between train and eval or changing a number attribute, a new value of such a global
or closure number, grad mode, a change of the state's structure or flags.  (A number the step
changes itself, a counter, keeps the value its trace left: later calls run no Python.)
``torchlike.compiler.counters`` counts programs and calls; past ``config.cache_size_limit``
programs for one function each new one warns, as torch._dynamo's cache limit does.
Python side effects of ``fn`` run only while it is traced (as with jax.jit), except LR scheduler
steps, which are recorded and replayed eagerly after every call: their new rates reach the next
call as inputs (code after ``sched.step()`` in the same step still sees the old rate).  Python
numbers the step returns are those of the trace (a warning says so).  A Tensor the walk cannot
reach is baked in as a constant.  A step that binds new Tensors into objects (``self.ema =
0.9 * self.ema + ...``, in an attribute, a dict or list slot, a closure cell or a global) is
compiled once: later calls bind the program's new value to the same places as a new Tensor
(without autograd history), as long as those places still hold the step's inputs (else it is
traced again); state created where a walk cannot rebind it (only a view of it reachable) makes
every call trace.
A step that needs a traced value in Python (``.item()``, ``if loss > 1:``, ``.numpy()``,
``nonzero()``) cannot be one program: ``fullgraph=True`` raises ``torchlike.compiler.Unsupported``
naming the line; otherwise the step runs eagerly from then on, with one warning.  The program's
outputs have no autograd history, so a function that returns a loss for its caller to
differentiate (without running backward itself) also runs eagerly, with a warning.

NOTE [ devices in a compiled step ]
A program runs on one device: the step's device is that of its first captured tensor with
dimensions (the model's parameters, usually).  Inside the trace ``.device`` is that device for
what the step computes and the real device for what it captured.  A move of a captured tensor to
the step's device (``x.to(device)`` of a CPU batch) is a copy in the trace, and each call moves
that argument before the program runs (an eager device_put, as the eager step made); a move to
another device raises.  Generators' states enter on the step's device and go back to their own
after the call (a copy, not a host read).  Any other tensor on another device gets PyTorch's
error, as the eager step gets it.  A step whose first such tensor is laid out over a mesh (a
DTensor's values: NOTE [ DTensor as a global array ] in distributed/tensor/_api.py) is one SPMD
program over that mesh: ``.device`` is the mesh's first device, and what a call moves in (the
hyper-parameters, the generators' states, captured tensors on one device such as a batch) goes
whole onto every device of the mesh.

One concern per file:
- walk.py: the one walk of the objects a step reaches (its state: ``find_state``; with paths,
  the names torchlike.export gives that state);
- guards.py: what a program is filed under, and the check that replays the last call;
- trace.py: the step as a pure function of its state (``pure_step``), what its trace found out
  (``Plan``), and the error of a step that cannot be one program;
- program.py: one compiled program (``Compiled``) and a call of it (``Call``, planned once per
  state; ``run``): buffers donated, results written back, checks;
- function.py: ``compile``, the function it returns, and ``OptimizedModule``.
The names below are what the rest of torchlike uses: torchlike.export runs the same capture,
torchlike.func and utils.checkpoint lift what ``find_state`` finds into one op.
"""
from .function import OptimizedModule as OptimizedModule, compile as compile, reset as reset
from .program import Compiled as Compiled, run as run
from .trace import (TENSOR as TENSOR, Plan as Plan, is_graph_break as is_graph_break,
                    pure_step as pure_step, unsupported as unsupported)
from .walk import find_state as find_state, is_leaf as is_leaf

__all__ = ["compile"]
