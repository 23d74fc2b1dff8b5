"""Robustness of nn as careless code meets it, against PyTorch: assigning a layer, parameter
or buffer anew keeps its place (what forward, state_dict and optimizers see), and hardtanh's
NaN bounds."""
import math

import pytest
import torch

import torchlike as tl
from parity import both


def _names(module):
    return ([n for n, _ in module.named_parameters()], [n for n, _ in module.named_buffers()],
            [n for n, _ in module.named_children()])


def seq_item(T):
    T.manual_seed(0)
    m = T.nn.Sequential(T.nn.Linear(2, 3), T.nn.ReLU(), T.nn.Linear(3, 1))
    m[0] = T.nn.Linear(2, 3)
    return [type(c).__name__ for c in m], _names(m), m(T.ones(4, 2)).shape


def module_list_item(T):
    ml = T.nn.ModuleList([T.nn.Identity(), T.nn.ReLU(), T.nn.Tanh()])
    ml[0] = T.nn.Sigmoid()
    return [type(c).__name__ for c in ml]


def parameter_again(T):
    lin = T.nn.Linear(2, 2)
    lin.weight = T.nn.Parameter(T.ones(2, 2))
    return _names(lin), [tuple(p.shape) for p in lin.parameters()]


def submodule_again(T):
    class Net(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.body = T.nn.Linear(2, 2)
            self.head = T.nn.Linear(2, 1)
    net = Net()
    net.body = T.nn.Linear(2, 2)
    return _names(net), list(net.state_dict())


def buffer_again(T):
    bn = T.nn.BatchNorm1d(2)
    bn.running_mean = T.nn.Buffer(T.ones(2))
    bn.running_var = T.zeros(2)
    return _names(bn), list(bn.state_dict())


def _hardtanh(lo, hi):
    def run(T):
        x = T.tensor([0.5, -1., 2., 1., -1.], requires_grad=True)
        y = T.nn.functional.hardtanh(x, lo, hi)
        y.sum().backward()
        return y, x.grad, T.nn.Hardtanh(lo, hi)(T.ones(2)), T.nn.functional.hardtanh_(
            T.tensor([0.5, 3.]), lo, hi)
    return run


CASES = [pytest.param(f, False, id=f.__name__) for f in (
    seq_item, module_list_item, parameter_again, submodule_again, buffer_again)]
CASES += [pytest.param(_hardtanh(lo, hi), False, id=f"hardtanh({lo}, {hi})")
          for lo, hi in ((math.nan, 1.), (-1., math.nan), (math.nan, math.nan), (-1., 1.))]
CASES += [pytest.param(lambda T: T.nn.functional.hardtanh(T.tensor([1, 2]), math.nan, 2.), True,
                       id="hardtanh(int, nan)")]


@pytest.mark.parametrize("fn, raises", CASES)
def test_as_torch(fn, raises):
    both(fn, raises=raises)


def test_replaced_layer_keeps_optimizer_order():
    """An optimizer made after a layer was replaced pairs its state with the same parameters
    as PyTorch's: a state_dict carried between the two libraries resumes the same training."""
    shapes = {}
    for T in (torch, tl):
        m = T.nn.Sequential(T.nn.Linear(2, 3), T.nn.Linear(3, 3))
        m[0] = T.nn.Linear(2, 3)
        opt = T.optim.Adam(m.parameters())
        shapes[T] = [tuple(p.shape) for g in opt.param_groups for p in g["params"]]
    assert shapes[torch] == shapes[tl]
