"""Mirrors ``torch.utils.hooks``: removable hook handles and the machinery that runs a Module's
hooks around its forward (``call_with_hooks``), full backward hooks included.

NOTE [ module backward hooks ]
A full backward hook needs the gradients with respect to a module's inputs and outputs, but the
graph records ops, not modules.  So the module's tensor inputs and outputs each pass through one
identity ``autograd.Function`` (``BackwardHookFunctionBackward`` in the graph, as in PyTorch):
the hook on the output node sees ``grad_output`` (and runs the backward pre-hooks, which may
replace it); the hook on the input node sees ``grad_input`` and runs the backward hooks, which may
replace that.  When no input requires grad, the backward hooks run at the output node with
``grad_input`` all None.
"""
import warnings

from .._tensor import Tensor
from ..autograd.function import Function
from ..autograd.graph import RemovableHandle

__all__ = ["RemovableHandle", "BackwardHook"]

_NO_INPUT_GRAD_WARNING = (
    "Full backward hook is firing when gradients are computed with respect to module outputs "
    "since no inputs require gradients. See https://docs.pytorch.org/docs/main/generated/"
    "torch.nn.Module.html#torch.nn.Module.register_full_backward_hook for more details.")


class BackwardHookFunction(Function):
    """Identity on its tensor arguments; its graph node carries a module's backward hooks."""

    @staticmethod
    def forward(ctx, *args):
        ctx.mark_non_differentiable(*[a for a in args if not a.requires_grad])
        return args

    @staticmethod
    def backward(ctx, *grads):
        return grads


def _through_identity(values, on_node):
    """Pass the Tensors among ``values`` (a tuple, or one Tensor) through BackwardHookFunction;
    call ``on_node(node)`` with its graph node.  Returns (new values, positions of tensors)."""
    single = isinstance(values, Tensor)
    seq = (values,) if single else values
    positions = [i for i, v in enumerate(seq) if isinstance(v, Tensor)]
    if not any(seq[i].requires_grad for i in positions):
        return values, None
    outs = BackwardHookFunction.apply(*[seq[i] for i in positions])
    outs = outs if isinstance(outs, tuple) else (outs,)
    node = next(o.grad_fn for o in outs if o.grad_fn is not None)
    on_node(node)
    new = list(seq)
    for i, o in zip(positions, outs):
        new[i] = o
    if single:
        return new[0], positions
    return (type(values)(*new) if hasattr(values, "_fields") else type(values)(new)), positions


class BackwardHook:
    """The backward hooks of one Module call (NOTE [ module backward hooks ])."""

    def __init__(self, module, user_hooks, user_pre_hooks):
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs = None
        self.n_inputs = 0
        self.n_outputs = 0
        self.input_positions = None
        self.output_positions = None

    @staticmethod
    def _pack(positions, grads, n):
        """Gradients at the tensors' positions among the ``n`` arguments, None elsewhere."""
        full = [None] * n
        for i, g in zip(positions, grads):
            full[i] = g
        return tuple(full)

    def _run_hooks(self, grad_input):
        for hook in self.user_hooks:
            out = hook(self.module, grad_input, self.grad_outputs)
            if out is None:
                continue
            if len(out) != len(grad_input):
                raise RuntimeError("Backward hook returned an invalid number of grad_input, got "
                                   f"{len(out)}, but expected {len(grad_input)}")
            grad_input = tuple(out)
        return grad_input

    def setup_input_hook(self, args):
        def on_node(node):
            def hook(grad_inputs, _):
                if self.grad_outputs is None:
                    return None
                res = self._run_hooks(self._pack(self.input_positions, grad_inputs,
                                                 self.n_inputs))
                self.grad_outputs = None
                return tuple(res[i] for i in self.input_positions)
            node.register_hook(hook)

        self.n_inputs = len(args)
        args, self.input_positions = _through_identity(args, on_node)
        return args

    def setup_output_hook(self, result):
        def on_node(node):
            def hook(_, grad_outputs):
                self.grad_outputs = self._pack(self.output_positions, grad_outputs,
                                               self.n_outputs)
                for pre in self.user_pre_hooks:
                    new = pre(self.module, self.grad_outputs)
                    if new is None:
                        continue
                    if len(new) != len(self.grad_outputs):
                        raise RuntimeError("Backward pre hook returned an invalid number of "
                                           f"grad_output, got {len(new)}, but expected "
                                           f"{len(self.grad_outputs)}")
                    self.grad_outputs = tuple(new)
                local = self.grad_outputs
                if self.input_positions is None:   # no input requires grad: run hooks here
                    warnings.warn(_NO_INPUT_GRAD_WARNING)
                    res = self._run_hooks((None,) * self.n_inputs)
                    if any(g is not None for g in res):
                        raise RuntimeError("Backward hook for Modules where no input requires "
                                           "gradient should always return None or None for all "
                                           "gradients.")
                    self.grad_outputs = None
                return tuple(local[i] for i in self.output_positions)
            node.register_hook(hook)

        self.n_outputs = 1 if isinstance(result, Tensor) else len(result)
        result, self.output_positions = _through_identity(result, on_node)
        return result


def call_with_hooks(module, args, kwargs):
    """Call ``module`` with its forward pre-hooks, forward hooks and full backward hooks (what
    ``Module.__call__`` does when it has any)."""
    hooks = module._hooks
    result, called = None, set()
    try:
        for hid, hook in list(hooks["forward_pre"].items()):
            if hid in module._with_kwargs:
                new = hook(module, args, kwargs)
                if new is not None:
                    if not (isinstance(new, tuple) and len(new) == 2):
                        raise RuntimeError("forward pre-hook must return None or a tuple of "
                                           f"(new_args, new_kwargs), but got {new}.")
                    args, kwargs = new
            else:
                new = hook(module, args)
                if new is not None:
                    args = new if isinstance(new, tuple) else (new,)
        bw_hook = None
        if hooks["backward"] or hooks["backward_pre"]:
            bw_hook = BackwardHook(module, list(hooks["backward"].values()),
                                   list(hooks["backward_pre"].values()))
            args = bw_hook.setup_input_hook(args)
        result = module.forward(*args, **kwargs)
        for hid, hook in list(hooks["forward"].items()):
            if hid in module._always_called:
                called.add(hid)
            new = (hook(module, args, kwargs, result) if hid in module._with_kwargs
                   else hook(module, args, result))
            if new is not None:
                result = new
        if bw_hook is not None:
            if not isinstance(result, (Tensor, tuple)):
                warnings.warn("For backward hooks to be called, module output should be a "
                              "Tensor or a tuple of Tensors but received "
                              f"{type(result)}")
            result = bw_hook.setup_output_hook(result)
        return result
    except Exception:
        for hid, hook in list(hooks["forward"].items()):
            if hid in module._always_called and hid not in called:
                try:
                    new = (hook(module, args, kwargs, result) if hid in module._with_kwargs
                           else hook(module, args, result))
                    if new is not None:
                        result = new
                except Exception as e:  # noqa: BLE001 - PyTorch silences it with a warning
                    warnings.warn("forward hook with ``always_call=True`` raised an "
                                  "exception that was silenced as another error was raised "
                                  f"in forward: {e}")
        raise
