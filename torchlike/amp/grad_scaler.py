"""``torch.amp.GradScaler``: loss scaling for float16 training.

NOTE [ GradScaler as traced selects ]
The scale and the growth tracker are Tensors (float32 and int32, 0-dim), as in PyTorch, and
every change to them is an op on them: ``unscale_`` is one jitted program over all of an
optimizer's gradients (multiply by the inverse scale, and one flag for any inf or nan), and
``update`` is one jitted program (PyTorch's ``_amp_update_scale_``).  Eagerly, ``step`` reads
the flag on the host and skips ``optimizer.step()`` when it is set, as PyTorch does.  Inside
``torchlike.compile`` the flag is a traced value: ``step`` then runs the optimizer's step and
keeps, parameter by parameter and state by state, the old values where the flag is set (a
``where``), so the step stays one program, nothing is read on the host, and a new scale is a
new input value, not a new program.  The compiled step's state walk finds the scaler's Tensors
as attributes of a plain object (NOTE [ whole-step compile ]).
"""
import enum
import functools
import warnings
from collections import defaultdict

import jax
import jax.numpy as jnp

from .. import _dtype as D, _x64
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad


class OptState(enum.Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_per_optimizer_state():
    return {"stage": OptState.READY, "found_inf_per_device": {}}


@jax.jit
def _unscale(grads, inv_scale):
    """Every gradient times ``inv_scale``, and 1.0 where any of them holds an inf or a nan."""
    found = jnp.zeros((), jnp.float32)
    out = []
    for g in grads:
        found = jnp.maximum(found, jnp.any(~jnp.isfinite(g)).astype(jnp.float32))
        out.append((g * inv_scale.astype(g.dtype)).astype(g.dtype))
    return out, found


@functools.partial(jax.jit, static_argnums=(3, 4, 5))
def _update_scale(scale, tracker, found_inf, growth_factor, backoff_factor, growth_interval):
    """PyTorch's ``_amp_update_scale_``: back off after an inf, grow after ``growth_interval``
    clean steps in a row (unless the grown scale would be inf)."""
    found = found_inf > 0
    successful = tracker + 1
    grow = successful == growth_interval
    grown = scale * growth_factor
    grown = jnp.where(jnp.isfinite(grown), grown, scale)
    new_scale = jnp.where(found, scale * backoff_factor, jnp.where(grow, grown, scale))
    new_tracker = jnp.where(found | grow, jnp.zeros_like(tracker), successful)
    return new_scale.astype(scale.dtype), new_tracker.astype(tracker.dtype)


def _is_traced(t):
    return isinstance(t._value(), jax.core.Tracer)


class GradScaler:
    """Mirrors ``torch.amp.GradScaler``: multiplies the loss by a scale so that small float16
    gradients do not underflow, unscales the gradients before the step, skips a step whose
    gradients hold an inf or a nan, and adapts the scale (NOTE [ GradScaler as traced
    selects ] in ``torchlike/amp/grad_scaler.py``).

    Args:
        device: the device type of the scale (``"cuda"``, ``"cpu"``, ``"xla"``).
        init_scale: the first scale.
        growth_factor: multiplies the scale after ``growth_interval`` clean steps in a row.
        backoff_factor: multiplies the scale after a step with an inf or nan.
        growth_interval: clean steps in a row before the scale grows.
        enabled: False makes every method a no-op (``scale`` returns its input).

    Example::

        >>> scaler = torch.amp.GradScaler("cpu")
        >>> with torch.autocast("cpu", dtype=torch.float16):
        ...     loss = loss_fn(model(x), y)
        >>> scaler.scale(loss).backward()
        >>> scaler.step(opt)
        >>> scaler.update()
    """

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0,
                 backoff_factor=0.5, growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if self._device == "cuda" and enabled:
            from .. import cuda
            if not cuda.is_available():
                warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available."
                              "  Disabling.", stacklevel=2)
                self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale = None
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None
            self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _check_scale_growth_tracker(self, funcname):
        fix = "This may indicate your script did not use scaler.scale(loss or outputs) earlier " \
              "in the iteration."
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  {fix}")
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {funcname} but _growth_tracker is None.  {fix}")
        return self._scale, self._growth_tracker

    def _lazy_init_scale_growth_tracker(self, dev):
        from .._creation import full
        self._scale = full((), self._init_scale, dtype=D.float32, device=dev)
        self._growth_tracker = full((), self._init_growth_tracker, dtype=D.int32, device=dev)

    def scale(self, outputs):
        """Mirrors ``GradScaler.scale``: ``outputs`` (a Tensor, or lists / tuples of them) times
        the current scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            if self._scale is None:
                self._lazy_init_scale_growth_tracker(outputs.device)
            return outputs * self._scale.to(device=outputs.device, non_blocking=True)

        def apply_scale(val):
            if isinstance(val, Tensor):
                if self._scale is None:
                    self._lazy_init_scale_growth_tracker(val.device)
                return val * self._scale.to(device=val.device)
            if isinstance(val, (list, tuple)):
                out = [apply_scale(v) for v in val]
                return type(val)(out) if isinstance(val, tuple) else out
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")
        return apply_scale(outputs)

    def _unscale_grads_(self, optimizer, inv_scale, found_inf, allow_fp16):
        grads = []
        with no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    if param.grad is None:
                        continue
                    if not allow_fp16 and param.grad.dtype is D.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    grads.append(param.grad)
            if grads:
                with _x64.on():
                    new, found = _unscale([g._value() for g in grads], inv_scale._value())
                for g, n in zip(grads, new):
                    g._write(n)
                found_inf._write(found)
        return {found_inf.device: found_inf}

    def unscale_(self, optimizer):
        """Mirrors ``GradScaler.unscale_``: divide ``optimizer``'s gradients by the scale (in
        place; e.g. before ``clip_grad_norm_``), noting whether any holds an inf or a nan."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the "
                               "last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        from .._creation import full
        with no_grad():
            inv_scale = self._scale.double().reciprocal().float()
            found_inf = full((), 0.0, dtype=D.float32, device=self._scale.device)
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, found_inf,
                                                             False)
        state["stage"] = OptState.UNSCALED

    def _maybe_opt_step(self, optimizer, state, *args, **kwargs):
        found = list(state["found_inf_per_device"].values())
        if any(_is_traced(f) for f in found):
            return self._selected_step(optimizer, found, *args, **kwargs)
        if not sum(v.item() for v in found):
            return optimizer.step(*args, **kwargs)
        return None

    def _selected_step(self, optimizer, found, *args, **kwargs):
        """The step inside a traced program: run it, then keep the old values where an inf
        was found (NOTE [ GradScaler as traced selects ]).  State the step creates (an eager
        first step that overflowed made none) is kept at its initial value where it is set."""
        params = [(p, g) for g in optimizer.param_groups for p in g["params"]
                  if p.grad is not None]
        tensors = [p for p, _ in params]
        tensors += [v for p, _ in params for v in optimizer.state.get(p, {}).values()
                    if isinstance(v, Tensor)]
        had = {id(p): set(optimizer.state.get(p, {})) for p, _ in params}
        before = [t._value() for t in tensors]
        retval = optimizer.step(*args, **kwargs)
        skip = functools.reduce(jnp.add, [f._value() for f in found]) > 0
        for t, old in zip(tensors, before):
            t._write(jnp.where(skip, old, t._value()))
        for p, group in params:
            new = [k for k, v in optimizer.state.get(p, {}).items()
                   if k not in had[id(p)] and isinstance(v, Tensor)]
            if new:
                init = optimizer._init_state(p, group)
                for k in new:
                    t = optimizer.state[p][k]
                    t._write(jnp.where(skip, init[k]._value().astype(t.dtype._np),
                                       t._value()))
        return retval

    def step(self, optimizer, *args, **kwargs):
        """Mirrors ``GradScaler.step``: unscale ``optimizer``'s gradients (unless ``unscale_``
        did) and run ``optimizer.step(*args, **kwargs)`` unless they hold an inf or a nan.

        Returns:
            What ``optimizer.step`` returned, or None when the step was skipped.
        """
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if not state["found_inf_per_device"]:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = self._maybe_opt_step(optimizer, state, *args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale=None):
        """Mirrors ``GradScaler.update``: back the scale off after a skipped step, grow it
        after ``growth_interval`` clean ones, or set it to ``new_scale``."""
        if not self._enabled:
            return
        scale, tracker = self._check_scale_growth_tracker("update")
        with no_grad():
            if new_scale is not None:
                if isinstance(new_scale, float):
                    self._scale.fill_(new_scale)
                else:
                    if not (isinstance(new_scale, Tensor) and new_scale.numel() == 1
                            and new_scale.dtype is D.float32 and not new_scale.requires_grad):
                        raise AssertionError(
                            "new_scale should be a float or a 1-element torch.cuda.FloatTensor "
                            "or torch.FloatTensor with requires_grad=False.")
                    self._scale.copy_(new_scale)
            else:
                found_infs = [f.to(device=scale.device, non_blocking=True)
                              for state in self._per_optimizer_states.values()
                              for f in state["found_inf_per_device"].values()]
                if not found_infs:
                    raise AssertionError("No inf checks were recorded prior to update.")
                combined = found_infs[0]
                for f in found_infs[1:]:
                    combined = combined + f
                with _x64.on():
                    new_s, new_t = _update_scale(scale._value(), tracker._value(),
                                                 combined._value(), float(self._growth_factor),
                                                 float(self._backoff_factor),
                                                 int(self._growth_interval))
                scale._write(new_s)
                tracker._write(new_t)
        self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _get_scale_async(self):
        return self._scale

    def get_scale(self):
        """Mirrors ``GradScaler.get_scale``: the current scale as a Python float (1.0 when
        disabled); reads it from the device."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else self._scale.item()

    def get_growth_factor(self):
        """Mirrors ``GradScaler.get_growth_factor``."""
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        """Mirrors ``GradScaler.set_growth_factor``."""
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        """Mirrors ``GradScaler.get_backoff_factor``."""
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        """Mirrors ``GradScaler.set_backoff_factor``."""
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        """Mirrors ``GradScaler.get_growth_interval``."""
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        """Mirrors ``GradScaler.set_growth_interval``."""
        self._growth_interval = new_interval

    def _get_growth_tracker(self):
        if not self._enabled:
            return 0
        return (self._init_growth_tracker if self._growth_tracker is None
                else self._growth_tracker.item())

    def is_enabled(self):
        """Mirrors ``GradScaler.is_enabled``."""
        return self._enabled

    def state_dict(self):
        """Mirrors ``GradScaler.state_dict``: ``scale``, ``growth_factor``, ``backoff_factor``,
        ``growth_interval`` and ``_growth_tracker`` as Python numbers ({} when disabled)."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict):
        """Mirrors ``GradScaler.load_state_dict``."""
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])
