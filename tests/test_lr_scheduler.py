"""torchlike.optim.lr_scheduler against torch.optim.lr_scheduler: every scheduler, from a spec
table, gives PyTorch's learning rates (and momentum / betas) as exactly the same floats over
30 steps; state_dicts equal PyTorch's and a round trip mid-way continues identically; the
warnings and errors are PyTorch's."""
import copy
import math
import warnings

import pytest
import torch

import torchlike

STEPS = 30


class Scale:
    """A callable object (its ``__dict__`` goes into state_dicts, unlike a lambda's)."""

    def __init__(self, base):
        self.base = base

    def __call__(self, x):
        return self.base ** x


def _optimizer(lib, name="SGD", lr=0.1, **kwargs):
    """Two parameter groups (lr and lr / 2) of a ``lib`` optimizer."""
    groups = [{"params": [lib.zeros(2, requires_grad=True)]},
              {"params": [lib.zeros(3, requires_grad=True)], "lr": lr / 2}]
    return getattr(lib.optim, name)(groups, lr=lr, **kwargs)


def _snapshot(sched, opt):
    """What a step is compared by: get_last_lr(), and the groups' lr / momentum / betas."""
    keys = ("lr", "momentum", "betas")
    return ([float(v) for v in sched.get_last_lr()],
            [tuple(g.get(k) for k in keys) for g in opt.param_groups])


# (id, optimizer (name, kwargs), make(L, opt) -> scheduler); L is lib.optim.lr_scheduler
SPECS = [
    ("lambda", ("SGD", {}), lambda L, o: L.LambdaLR(o, lambda e: 0.95 ** e)),
    ("lambda_per_group", ("SGD", {}),
     lambda L, o: L.LambdaLR(o, [lambda e: 1 / (e + 1), Scale(0.9)])),
    ("multiplicative", ("SGD", {}), lambda L, o: L.MultiplicativeLR(o, lambda e: 0.9)),
    ("multiplicative_per_group", ("SGD", {}),
     lambda L, o: L.MultiplicativeLR(o, [lambda e: 0.97, Scale(0.99)])),
    ("step", ("SGD", {}), lambda L, o: L.StepLR(o, step_size=3)),
    ("step_gamma", ("SGD", {}), lambda L, o: L.StepLR(o, step_size=4, gamma=0.7)),
    ("multistep", ("SGD", {}), lambda L, o: L.MultiStepLR(o, milestones=[3, 7, 7, 12])),
    ("multistep_gamma", ("SGD", {}),
     lambda L, o: L.MultiStepLR(o, milestones=(20, 5), gamma=0.3)),
    ("constant", ("SGD", {}), lambda L, o: L.ConstantLR(o)),
    ("constant_factor", ("SGD", {}), lambda L, o: L.ConstantLR(o, factor=0.7, total_iters=9)),
    ("linear", ("SGD", {}), lambda L, o: L.LinearLR(o)),
    ("linear_ramp", ("SGD", {}),
     lambda L, o: L.LinearLR(o, start_factor=0.25, end_factor=0.75, total_iters=8)),
    ("linear_down", ("SGD", {}),
     lambda L, o: L.LinearLR(o, start_factor=1.0, end_factor=0.1, total_iters=13)),
    ("exponential", ("SGD", {}), lambda L, o: L.ExponentialLR(o, gamma=0.9)),
    ("polynomial", ("SGD", {}), lambda L, o: L.PolynomialLR(o)),
    ("polynomial_power", ("SGD", {}),
     lambda L, o: L.PolynomialLR(o, total_iters=17, power=2.0)),
    ("polynomial_sqrt", ("SGD", {}),
     lambda L, o: L.PolynomialLR(o, total_iters=12, power=0.5)),
    ("cosine", ("SGD", {}), lambda L, o: L.CosineAnnealingLR(o, T_max=10)),
    ("cosine_eta_min", ("SGD", {}),
     lambda L, o: L.CosineAnnealingLR(o, T_max=7, eta_min=0.001)),
    ("warm_restarts", ("SGD", {}), lambda L, o: L.CosineAnnealingWarmRestarts(o, T_0=5)),
    ("warm_restarts_mult", ("SGD", {}),
     lambda L, o: L.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.01)),
    ("cyclic", ("SGD", {"momentum": 0.9}),
     lambda L, o: L.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=4)),
    ("cyclic_triangular2", ("SGD", {"momentum": 0.9}),
     lambda L, o: L.CyclicLR(o, 0.001, [0.1, 0.05], step_size_up=3, step_size_down=5,
                             mode="triangular2", base_momentum=[0.7, 0.75])),
    ("cyclic_exp_range", ("SGD", {"momentum": 0.5}),
     lambda L, o: L.CyclicLR(o, 0.01, 0.2, step_size_up=5, mode="exp_range", gamma=0.95)),
    ("cyclic_scale_fn", ("SGD", {}),
     lambda L, o: L.CyclicLR(o, 0.01, 0.1, step_size_up=2, scale_fn=lambda x: 0.5 ** x,
                             scale_mode="iterations", cycle_momentum=False)),
    ("cyclic_scale_object", ("SGD", {"momentum": 0.9}),
     lambda L, o: L.CyclicLR(o, 0.01, 0.1, step_size_up=3, scale_fn=Scale(0.8))),
    ("cyclic_adam_betas", ("Adam", {"betas": (0.9, 0.98)}),
     lambda L, o: L.CyclicLR(o, 0.001, 0.01, step_size_up=4, base_momentum=0.85,
                             max_momentum=0.95)),
    ("cyclic_rmsprop", ("RMSprop", {"momentum": 0.5}),
     lambda L, o: L.CyclicLR(o, 0.001, 0.01, step_size_up=6)),
    ("one_cycle", ("SGD", {"momentum": 0.9}),
     lambda L, o: L.OneCycleLR(o, max_lr=0.1, total_steps=STEPS)),
    ("one_cycle_linear", ("SGD", {"momentum": 0.9}),
     lambda L, o: L.OneCycleLR(o, max_lr=[0.1, 0.2], total_steps=STEPS + 5,
                               anneal_strategy="linear", pct_start=0.25)),
    ("one_cycle_three_phase", ("SGD", {"momentum": 0.9}),
     lambda L, o: L.OneCycleLR(o, max_lr=0.1, epochs=3, steps_per_epoch=10,
                               three_phase=True, div_factor=10.0, final_div_factor=100.0)),
    ("one_cycle_adam", ("Adam", {}),
     lambda L, o: L.OneCycleLR(o, max_lr=0.01, total_steps=STEPS, base_momentum=0.8,
                               max_momentum=[0.9, 0.92])),
    ("one_cycle_no_momentum", ("Adagrad", {}),
     lambda L, o: L.OneCycleLR(o, max_lr=0.05, total_steps=40, cycle_momentum=False,
                               three_phase=True, anneal_strategy="linear")),
    ("sequential", ("SGD", {}),
     lambda L, o: L.SequentialLR(o, [L.LinearLR(o, start_factor=0.1, total_iters=5),
                                     L.ExponentialLR(o, gamma=0.9)], milestones=[5])),
    ("sequential_three", ("SGD", {}),
     lambda L, o: L.SequentialLR(o, [L.ConstantLR(o, factor=0.5, total_iters=2),
                                     L.CosineAnnealingLR(o, T_max=8),
                                     L.StepLR(o, step_size=3, gamma=0.5)],
                                 milestones=[4, 12])),
    ("sequential_of_chained", ("SGD", {}),
     lambda L, o: L.SequentialLR(o, [L.ChainedScheduler([L.ExponentialLR(o, gamma=0.9),
                                                         L.StepLR(o, 4, gamma=0.5)]),
                                     L.LinearLR(o, start_factor=0.5, total_iters=3)],
                                 milestones=[6])),
    ("chained", ("SGD", {}),
     lambda L, o: L.ChainedScheduler([L.ConstantLR(o, factor=0.1, total_iters=2),
                                      L.ExponentialLR(o, gamma=0.9)])),
    ("chained_three", ("SGD", {}),
     lambda L, o: L.ChainedScheduler([L.LinearLR(o, start_factor=0.5, total_iters=6),
                                      L.MultiStepLR(o, [4, 9]),
                                      L.CosineAnnealingLR(o, T_max=12)], optimizer=o)),
]


def _setup(lib, spec, caught=None):
    """The optimizer and scheduler of a spec row; the construction's warnings (PyTorch's
    own: a ChainedScheduler inside a SequentialLR steps before the optimizer) are appended
    to ``caught``."""
    _, (name, kwargs), make = spec
    opt = _optimizer(lib, name, **kwargs)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        sched = make(lib.optim.lr_scheduler, opt)
    if caught is not None:
        caught += [str(w.message) for w in record]
    return opt, sched


def _run(opt, sched, steps):
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(steps):
            opt.step()
            sched.step()
            out.append(_snapshot(sched, opt))
    return out


def _trace(lib, spec, steps=STEPS):
    caught = []
    opt, sched = _setup(lib, spec, caught)
    return [caught, _snapshot(sched, opt)] + _run(opt, sched, steps)


@pytest.mark.parametrize("spec", SPECS, ids=[s[0] for s in SPECS])
def test_schedule_matches_torch(spec):
    assert _trace(torchlike, spec) == _trace(torch, spec)


@pytest.mark.parametrize("spec", SPECS, ids=[s[0] for s in SPECS])
def test_state_dict_matches_torch_and_round_trips(spec):
    opt, sched = _setup(torchlike, spec)
    opt_t, sched_t = _setup(torch, spec)
    _run(opt, sched, 12)
    _run(opt_t, sched_t, 12)
    state = sched.state_dict()
    assert list(state) == list(sched_t.state_dict())
    # 'initial_lr', 'max_lr', 'max_momentum', ... as PyTorch stores them in the groups
    assert ([{k: v for k, v in g.items() if k != "params"} for g in opt.param_groups]
            == [{k: v for k, v in g.items() if k != "params"} for g in opt_t.param_groups])
    assert state == sched_t.state_dict()

    saved, saved_opt = copy.deepcopy(state), copy.deepcopy(opt.state_dict())
    rest = _run(opt, sched, STEPS - 12)
    opt2, sched2 = _setup(torchlike, spec)
    opt2.load_state_dict(saved_opt)
    sched2.load_state_dict(saved)
    assert _run(opt2, sched2, STEPS - 12) == rest


def test_lambda_state_dict_keeps_callable_objects_only():
    for lib in (torch, torchlike):
        scale = Scale(0.9)
        opt = _optimizer(lib)
        sched = lib.optim.lr_scheduler.LambdaLR(opt, [lambda e: 1.0, scale])
        state = copy.deepcopy(sched.state_dict())
        assert state["lr_lambdas"] == [None, {"base": 0.9}]
        scale.base = 0.5
        sched.load_state_dict(state)
        assert scale.base == 0.9 and state["lr_lambdas"] == [None, {"base": 0.9}]

        cyc = lib.optim.lr_scheduler.CyclicLR(_optimizer(lib, momentum=0.9), 0.01, 0.1,
                                              scale_fn=scale)
        saved = copy.deepcopy(cyc.state_dict())
        assert saved["_scale_fn_custom"] == {"base": 0.9}
        scale.base = 0.3
        cyc.load_state_dict(saved)
        assert scale.base == 0.9


@pytest.mark.parametrize("config", [
    {},
    {"mode": "max", "threshold_mode": "abs", "threshold": 0.05, "cooldown": 2, "patience": 1},
    {"factor": 0.5, "patience": 0, "min_lr": [0.02, 0.01]},
    {"factor": 0.5, "patience": 1, "threshold_mode": "abs", "min_lr": 0.004, "eps": 0.02},
    {"mode": "max", "factor": 0.3, "patience": 2, "cooldown": 1},
], ids=["default", "max_abs_cooldown", "min_lr_list", "eps", "max_rel"])
def test_reduce_on_plateau_matches_torch(config):
    metrics = [1.0, 0.9, 0.95, 0.95, 0.96, 0.89, 0.9, 0.9, 0.91, 0.92, 0.5, 0.6, 0.61,
               0.62, 0.63, 0.64, 0.7, 0.8, 0.65, 0.6, 0.6, 0.6, 0.6, 0.59, 0.59, 0.59, 0.59,
               0.7, 0.8, 0.9]
    traces, states = [], []
    for lib in (torch, torchlike):
        opt = _optimizer(lib)
        sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **config)
        trace = [sched.get_last_lr()]
        for i, m in enumerate(metrics):
            opt.step()
            sched.step(lib.tensor(m) if i % 2 else m)
            trace.append(sched.get_last_lr())
        traces.append(trace)
        states.append(sched.state_dict())
    assert traces[1] == traces[0]
    assert list(states[1]) == list(states[0]) and states[1] == states[0]


def test_reduce_on_plateau_round_trip_and_epoch_warning():
    metrics = [1.0, 1.0, 0.99, 1.0, 1.0, 1.0, 0.5, 0.6, 0.6, 0.6]
    opt = _optimizer(torchlike)
    sched = torchlike.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=1, cooldown=1)
    for m in metrics[:5]:
        sched.step(m)
    saved, saved_opt = copy.deepcopy(sched.state_dict()), copy.deepcopy(opt.state_dict())
    rest = []
    for m in metrics[5:]:
        sched.step(m)
        rest.append(sched.get_last_lr())
    opt2 = _optimizer(torchlike)
    sched2 = torchlike.optim.lr_scheduler.ReduceLROnPlateau(opt2, mode="max")
    opt2.load_state_dict(saved_opt)
    sched2.load_state_dict(saved)
    assert sched2.mode_worse == math.inf
    rest2 = []
    for m in metrics[5:]:
        sched2.step(m)
        rest2.append(sched2.get_last_lr())
    assert rest2 == rest
    with pytest.warns(UserWarning, match="The epoch parameter in `scheduler.step\\(\\)`"):
        sched2.step(0.1, epoch=20)
    assert sched2.last_epoch == 20


@pytest.mark.parametrize("make", [
    lambda L, o: L.StepLR(o, step_size=3, gamma=0.5),
    lambda L, o: L.MultiStepLR(o, milestones=[2, 5, 5]),
    lambda L, o: L.ConstantLR(o, factor=0.5, total_iters=4),
    lambda L, o: L.LinearLR(o, start_factor=0.2, total_iters=6),
    lambda L, o: L.ExponentialLR(o, gamma=0.8),
    lambda L, o: L.PolynomialLR(o, total_iters=8, power=1.5),
    lambda L, o: L.CosineAnnealingLR(o, T_max=9, eta_min=0.01),
    lambda L, o: L.LambdaLR(o, lambda e: 1 / (1 + e)),
], ids=["step", "multistep", "constant", "linear", "exponential", "polynomial", "cosine",
        "lambda"])
def test_step_with_epoch_uses_closed_form_and_warns(make):
    epochs = [1, 2, 5, 3, 10, 7, 7, 12]
    traces = []
    for lib in (torch, torchlike):
        opt = _optimizer(lib)
        sched = make(lib.optim.lr_scheduler, opt)
        trace = []
        for e in epochs:
            opt.step()
            with pytest.warns(UserWarning, match="The epoch parameter in `scheduler.step") as w:
                sched.step(e)
            trace.append((sched.get_last_lr(), sched.last_epoch))
        traces.append((trace, str(w[0].message)))
    assert traces[1] == traces[0]


def test_warm_restarts_fractional_epochs():
    traces = []
    for lib in (torch, torchlike):
        for kwargs in ({"T_0": 4}, {"T_0": 2, "T_mult": 3, "eta_min": 0.001}):
            opt = _optimizer(lib)
            sched = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, **kwargs)
            trace = []
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                for epoch in range(12):
                    for i in range(3):
                        opt.step()
                        sched.step(epoch + i / 3)
                        trace.append((sched.get_last_lr(), sched.T_cur, sched.T_i,
                                      sched.last_epoch))
            traces.append(trace)
    assert traces[2:] == traces[:2]


def test_resume_with_last_epoch():
    traces = []
    for lib in (torch, torchlike):
        L = lib.optim.lr_scheduler
        trace = []
        for make in (lambda o: L.CosineAnnealingLR(o, T_max=10, last_epoch=4),
                     lambda o: L.StepLR(o, step_size=3, last_epoch=5),
                     lambda o: L.LinearLR(o, total_iters=6, last_epoch=2),
                     lambda o: L.OneCycleLR(o, 0.1, total_steps=20, last_epoch=-1)):
            opt = _optimizer(lib, momentum=0.9)
            for group in opt.param_groups:
                group["initial_lr"] = group["lr"] * 2
            sched = make(opt)
            trace.append(_snapshot(sched, opt))
            trace += _run(opt, sched, 8)
        traces.append(trace)
    assert traces[1] == traces[0]


def test_tensor_lr_is_filled_in_place():
    traces = []
    for lib in (torch, torchlike):
        lr = lib.tensor(0.1)
        opt = lib.optim.SGD([lib.zeros(2, requires_grad=True)], lr=lr, momentum=0.9)
        L = lib.optim.lr_scheduler
        trace = []
        for make in (lambda o: L.StepLR(o, step_size=2, gamma=0.5),
                     lambda o: L.CosineAnnealingLR(o, T_max=6),
                     lambda o: L.ReduceLROnPlateau(o, patience=0)):
            sched = make(opt)
            for _ in range(6):
                opt.step()
                if isinstance(sched, L.ReduceLROnPlateau):
                    sched.step(1.0)
                else:
                    sched.step()
                last = sched.get_last_lr()[0]
                assert opt.param_groups[0]["lr"] is lr
                assert isinstance(last, lib.Tensor) and last is not lr
                trace.append(last.item())
        traces.append(trace)
    assert traces[1] == traces[0]


def _warning_texts(lib, action):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        action(lib)
    return [(w.category, str(w.message)) for w in record]


@pytest.mark.parametrize("action", [
    # scheduler stepped before the optimizer
    lambda lib: lib.optim.lr_scheduler.StepLR(_optimizer(lib), 2).step(),
    # optimizer.step replaced after the scheduler wrapped it
    lambda lib: _override_step(lib),
    # get_lr() called by the user
    lambda lib: lib.optim.lr_scheduler.ExponentialLR(_optimizer(lib), 0.5).get_lr(),
    # the right order: no warning
    lambda lib: _right_order(lib),
], ids=["before_optimizer", "overridden", "get_lr", "none"])
def test_warnings_match_torch(action):
    assert _warning_texts(torchlike, action) == _warning_texts(torch, action)


def _override_step(lib):
    opt = _optimizer(lib)
    sched = lib.optim.lr_scheduler.StepLR(opt, 2)
    opt.step = lambda: None
    sched.step()


def _right_order(lib):
    opt = _optimizer(lib)
    sched = lib.optim.lr_scheduler.OneCycleLR(opt, 0.1, total_steps=5)
    sched2 = lib.optim.lr_scheduler.StepLR(opt, 2)   # wraps optimizer.step only once
    opt.step()
    sched.step()
    sched2.step()


def test_optimizer_step_is_wrapped_once_and_still_works():
    p = torchlike.tensor([1.0, 2.0], requires_grad=True)
    opt = torchlike.optim.SGD([p], lr=0.25)
    torchlike.optim.lr_scheduler.StepLR(opt, 1)
    wrapped = opt.step
    torchlike.optim.lr_scheduler.ExponentialLR(opt, 0.5)
    assert opt.step is wrapped and wrapped._wrapped_by_lr_sched
    assert not getattr(opt, "_opt_called", False)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    assert opt.step(closure).detach().item() == 5.0
    assert opt._opt_called and p.tolist() == [0.5, 1.0]   # p - 0.25 * 2p


def _error(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as info:
            fn()
    return type(info.value), str(info.value)


def _step_past_end(lib):
    opt = _optimizer(lib)
    sched = lib.optim.lr_scheduler.OneCycleLR(opt, 0.1, total_steps=3)
    for _ in range(4):
        sched.step()


def _plateau_new_group(lib):
    opt = _optimizer(lib)
    sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=0, min_lr=[0.0, 0.0])
    opt.add_param_group({"params": [lib.zeros(1, requires_grad=True)]})
    sched.step(1.0)
    sched.step(2.0)


class _NoOptimizer:
    pass


ERRORS = [
    lambda L, o, lib: L.StepLR("not an optimizer", 3),
    lambda L, o, lib: L.StepLR(o, 3, last_epoch=4),
    lambda L, o, lib: L.StepLR(o, 3, verbose=True),
    lambda L, o, lib: L.ReduceLROnPlateau(o, verbose=False),
    lambda L, o, lib: L.LambdaLR(o, [lambda e: 1.0]),
    lambda L, o, lib: L.MultiplicativeLR(o, 0.9),
    lambda L, o, lib: L.ConstantLR(o, factor=1.5),
    lambda L, o, lib: L.LinearLR(o, start_factor=0),
    lambda L, o, lib: L.LinearLR(o, end_factor=1.5),
    lambda L, o, lib: L.CosineAnnealingWarmRestarts(o, T_0=0),
    lambda L, o, lib: L.CosineAnnealingWarmRestarts(o, T_0=2.5),
    lambda L, o, lib: L.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=0),
    lambda L, o, lib: L.CosineAnnealingWarmRestarts(o, T_0=2, eta_min="0"),
    lambda L, o, lib: L.CosineAnnealingWarmRestarts(o, T_0=2).step(-1),
    lambda L, o, lib: L.CyclicLR(o, 0.01, 0.1, mode="bad", cycle_momentum=False),
    lambda L, o, lib: L.CyclicLR(o, [0.01], 0.1),
    lambda L, o, lib: L.CyclicLR(_optimizer(lib, "Adagrad"), 0.01, 0.1),
    lambda L, o, lib: L.CyclicLR([o], 0.01, 0.1),
    lambda L, o, lib: L.OneCycleLR(o, 0.1),
    lambda L, o, lib: L.OneCycleLR(o, 0.1, total_steps=0),
    lambda L, o, lib: L.OneCycleLR(o, 0.1, epochs=0, steps_per_epoch=2),
    lambda L, o, lib: L.OneCycleLR(o, 0.1, epochs=2, steps_per_epoch=1.5),
    lambda L, o, lib: L.OneCycleLR(o, 0.1, total_steps=10, pct_start=1),
    lambda L, o, lib: L.OneCycleLR(o, 0.1, total_steps=10, anneal_strategy="exp"),
    lambda L, o, lib: L.OneCycleLR(_optimizer(lib, "Adagrad"), 0.1, total_steps=10),
    lambda L, o, lib: L.OneCycleLR(o, [0.1, 0.2, 0.3], total_steps=10),
    lambda L, o, lib: _step_past_end(lib),
    lambda L, o, lib: L.ReduceLROnPlateau(o, factor=1.0),
    lambda L, o, lib: L.ReduceLROnPlateau(o, mode="lowest"),
    lambda L, o, lib: L.ReduceLROnPlateau(o, threshold_mode="ratio"),
    lambda L, o, lib: L.ReduceLROnPlateau(o, min_lr=[0.1]),
    lambda L, o, lib: L.ReduceLROnPlateau(None),
    lambda L, o, lib: _plateau_new_group(lib),
    lambda L, o, lib: L.SequentialLR(o, [], milestones=[]),
    lambda L, o, lib: L.SequentialLR(o, [L.StepLR(o, 2)], milestones=[3]),
    lambda L, o, lib: L.SequentialLR(o, [L.StepLR(o, 2), L.ReduceLROnPlateau(o)], [3]),
    lambda L, o, lib: L.SequentialLR(o, [L.StepLR(o, 2), _NoOptimizer()], [3]),
    lambda L, o, lib: L.ChainedScheduler([]),
    # PyTorch cannot restart a ChainedScheduler at a milestone (it has no get_lr)
    lambda L, o, lib: [L.SequentialLR(o, [L.StepLR(o, 2), L.ChainedScheduler([L.StepLR(o, 3)])],
                                      [1]).step() for _ in range(2)],
    lambda L, o, lib: L.ChainedScheduler([L.StepLR(o, 2), L.ReduceLROnPlateau(o)]),
]


@pytest.mark.parametrize("make", ERRORS)
def test_errors_match_torch(make):
    def attempt(lib):
        return _error(lambda: make(lib.optim.lr_scheduler, _optimizer(lib), lib))

    assert attempt(torchlike) == attempt(torch)


def test_schedulers_of_another_optimizer():
    for lib in (torch, torchlike):
        L = lib.optim.lr_scheduler
        opt, other = _optimizer(lib), _optimizer(lib)
        for make in (lambda: L.SequentialLR(opt, [L.StepLR(opt, 2), L.StepLR(other, 2)], [3]),
                     lambda: L.ChainedScheduler([L.StepLR(opt, 2), L.StepLR(other, 2)])):
            kind, text = _error(make)
            assert kind is ValueError
            assert "expects all schedulers to belong to the same optimizer, but got " \
                   "scheduler StepLR at index 1 has SGD (" in text
            assert text.endswith("which is different from SGD.")


def test_public_surface():
    L, Lt = torchlike.optim.lr_scheduler, torch.optim.lr_scheduler
    assert sorted(L.__all__) == sorted(Lt.__all__)
    for name in L.__all__:
        cls = getattr(L, name)
        assert cls.__module__ == "torchlike.optim.lr_scheduler"
        assert issubclass(cls, L.LRScheduler)
    assert issubclass(L._LRScheduler, L.LRScheduler)
