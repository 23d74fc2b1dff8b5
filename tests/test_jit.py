"""torchlike.jit against real torch.jit: traced and scripted modules and functions (values,
class names, reprs, gradients, shared parameters), is_tracing inside a trace, fork/wait, the
TracerWarning and script fallback warnings, torch's errors, and save/load run in a fresh process
without the model's code."""
import copy
import os
import subprocess
import sys
import textwrap
import typing
import warnings

import numpy as np
import pytest
import torch

import torchlike as tl

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _copy(src, dst):
    """dst (torchlike) takes src's (torch) weights."""
    dst.load_state_dict({k: tl.tensor(v.detach().numpy()) for k, v in src.state_dict().items()})
    return dst


def _np(t):
    return t.detach().numpy()


def _mlp(T):
    return T.nn.Sequential(T.nn.Linear(6, 16), T.nn.Tanh(), T.nn.Linear(16, 3))


class _CNN:
    @staticmethod
    def make(T):
        class CNN(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = T.nn.Conv2d(1, 4, 3)
                self.fc = T.nn.Linear(4 * 3 * 3, 5)

            def forward(self, x):
                x = T.nn.functional.max_pool2d(T.relu(self.conv(x)), 2)
                return self.fc(x.flatten(1))
        return CNN()


@pytest.fixture(scope="module")
def pair():
    """An MLP and a small CNN in torch and in torchlike (same weights), each traced on both
    sides: traced once for the whole file."""
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    out = {}
    for name, make, shape in (("mlp", _mlp, (4, 6)), ("cnn", _CNN.make, (2, 1, 8, 8))):
        ref = make(torch).eval()
        ours = _copy(ref, make(tl)).eval()
        x = rng.standard_normal(shape).astype(np.float32)
        out[name] = dict(ref=ref, ours=ours, x=x, ref_t=torch.jit.trace(ref, torch.tensor(x)),
                         ours_t=tl.jit.trace(ours, tl.tensor(x)))
    return out


@pytest.mark.parametrize("name", ["mlp", "cnn"])
def test_traced_module_matches_eager_and_torch(pair, name):
    p = pair[name]
    ref_t, ours_t, ours = p["ref_t"], p["ours_t"], p["ours"]
    assert type(ours_t).__name__ == type(ref_t).__name__ == "TopLevelTracedModule"
    assert isinstance(ours_t, tl.jit.ScriptModule) and isinstance(ours_t, tl.nn.Module)
    assert repr(ours_t) == repr(ref_t)
    assert [type(m).__name__ for m in ours_t.children()] == \
        [type(m).__name__ for m in ref_t.children()]
    assert list(ours_t.state_dict()) == list(ref_t.state_dict())
    x = p["x"]
    big = np.concatenate([x, x[::-1], x])   # another batch size: specialised, not refused
    for a in (x, big):
        got = _np(ours_t(tl.tensor(a)))
        np.testing.assert_allclose(got, _np(ours(tl.tensor(a))), rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(got, _np(ref_t(torch.tensor(a))), rtol=1e-5, atol=1e-5)


def test_traced_module_shares_parameters_and_gradients(pair):
    """Gradients reach the original's parameters through the program, as in torch, and an
    optimizer step on the original is seen by the next traced call."""
    p = pair["mlp"]
    ref, ours, ref_t, ours_t = p["ref"], p["ours"], p["ref_t"], p["ours_t"]
    x = p["x"]
    assert ours_t._modules["0"].weight is ours[0].weight
    for m in (ref, ours):
        m.zero_grad()
    ref_t(torch.tensor(x)).pow(2).sum().backward()
    ours_t(tl.tensor(x)).pow(2).sum().backward()
    traced = {k: _np(v.grad) for k, v in ours.named_parameters()}
    ours.zero_grad()
    ours(tl.tensor(x)).pow(2).sum().backward()
    for k, v in ours.named_parameters():
        np.testing.assert_allclose(traced[k], _np(v.grad), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(traced[k], dict(ref.named_parameters())[k].grad.numpy(),
                                   rtol=1e-4, atol=1e-5)
    before = _np(ours_t(tl.tensor(x)))
    saved = {k: v.clone() for k, v in ours.state_dict().items()}
    with tl.no_grad():
        for q in ours.parameters():
            q.sub_(0.1 * q.grad)
    after = _np(ours_t(tl.tensor(x)))
    assert not np.allclose(before, after)
    np.testing.assert_allclose(after, _np(ours(tl.tensor(x))), rtol=1e-6, atol=1e-6)
    ours.load_state_dict(saved)   # the module-scoped pair stays as torch's
    ours.zero_grad()


def test_traced_function_is_tracing_and_code(pair):
    seen = {torch: [], tl: []}

    def make(T):
        def f(x, y):
            seen[T].append(T.jit.is_tracing())
            return T.tanh(x) * y + 1.0
        return f
    a = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    b = np.full((2, 3), 0.5, np.float32)
    ref = torch.jit.trace(make(torch), (torch.tensor(a), torch.tensor(b)))
    ours = tl.jit.trace(make(tl), (tl.tensor(a), tl.tensor(b)))
    assert type(ours).__name__ == type(ref).__name__ == "ScriptFunction"
    assert seen[tl][0] is seen[torch][0] is True          # inside the capture
    assert tl.jit.is_tracing() is torch.jit.is_tracing() is False
    np.testing.assert_allclose(_np(ours(tl.tensor(b), tl.tensor(a))),
                               ref(torch.tensor(b), torch.tensor(a)).numpy(), rtol=1e-6)
    assert "stablehlo.tanh" in ours.code and ours.graph == ours.code
    assert "stablehlo.dot_general" in pair["mlp"]["ours_t"].code


def test_tracer_warning_where_torch_warns():
    """A branch on a tensor's value: torch's TracerWarning (its first sentence) at the user's
    line; torchlike then runs the Python (so the answer follows the input)."""
    def f(x):
        if x.sum() > 0:
            return x * 2
        return x
    found = {}
    for T in (torch, tl):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            traced = T.jit.trace(f, T.ones(2))
        hits = [m for m in w if issubclass(m.category, T.jit.TracerWarning)]
        assert hits and all(m.filename == __file__ for m in hits)   # torch: once per trace
        found[T] = str(hits[0].message).split(". ")[0], hits[0].lineno, traced
    assert found[tl][:2] == found[torch][:2]
    assert found[tl][2](-tl.ones(2)).tolist() == [-1.0, -1.0]
    with pytest.raises(RuntimeError, match="not captured as a program"):
        found[tl][2].save(io_bytes())


def io_bytes():
    import io
    return io.BytesIO()


def test_check_trace_warns_on_nondeterminism_as_torch():
    msgs = {}
    for T in (torch, tl):
        T.manual_seed(0)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            T.jit.trace(T.nn.Dropout(0.5), T.ones(64))
        msgs[T] = [str(m.message).split("\n")[0] for m in w
                   if issubclass(m.category, T.jit.TracerWarning)]
    assert msgs[tl] == msgs[torch]


def test_scripted_module_values_modes_and_gradients():
    torch.manual_seed(1)
    ref = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.Dropout(0.3), torch.nn.ReLU(),
                              torch.nn.Linear(8, 2))
    ours = _copy(ref, tl.nn.Sequential(tl.nn.Linear(5, 8), tl.nn.Dropout(0.3), tl.nn.ReLU(),
                                       tl.nn.Linear(8, 2)))
    ref_s, ours_s = torch.jit.script(ref), tl.jit.script(ours)
    assert type(ours_s).__name__ == type(ref_s).__name__ == "RecursiveScriptModule"
    assert repr(ours_s) == repr(ref_s)
    assert list(ours_s.state_dict()) == list(ref_s.state_dict())
    x = np.random.default_rng(1).standard_normal((3, 5)).astype(np.float32)
    ours_s.eval()
    ref_s.eval()
    assert ours.training and not ours_s.training   # the mirror's mode is its own
    got = ours_s(tl.tensor(x))
    np.testing.assert_allclose(_np(got), ref_s(torch.tensor(x)).detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    got.sum().backward()
    scripted = {k: _np(v.grad) for k, v in ours.named_parameters()}
    ours.zero_grad()
    ours.eval()
    ours(tl.tensor(x)).sum().backward()
    for k, v in ours.named_parameters():
        np.testing.assert_allclose(scripted[k], _np(v.grad), rtol=1e-5, atol=1e-6)
    ours_s.train()   # dropout on: a second program, drawing fresh numbers every call
    a, b = _np(ours_s(tl.tensor(x))), _np(ours_s(tl.tensor(x)))
    assert not np.allclose(a, b) and len(ours_s._runner.programs) == 2


def test_script_function_is_scripting_and_fallback_warning():
    @tl.jit.script
    def scaled(x, k: float):
        if tl.jit.is_scripting():
            return x * k
        return x * k + 100.0
    assert type(scaled).__name__ == "ScriptFunction"
    assert scaled._runner.programs == {}   # nothing compiled at decoration
    assert scaled(tl.ones(2), 3.0).tolist() == [3.0, 3.0]

    def branchy(x):
        if x.sum() > 0:
            return x * 2
        return x - 1
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        f = tl.jit.script(branchy)
        assert f(tl.ones(2)).tolist() == [2.0, 2.0]
        assert f(-tl.ones(2)).tolist() == [-2.0, -2.0]
    hits = [m for m in w if m.category is UserWarning]
    assert len(hits) == 1
    assert "cannot compile" in str(hits[0].message) and "branchy: line" in str(hits[0].message)
    assert "`if x.sum() > 0:`" in str(hits[0].message) and hits[0].filename == __file__


def test_fork_wait_and_helpers_as_torch():
    for T in (torch, tl):
        fut = T.jit.fork(T.add, T.ones(2), 2)
        assert fut.done() and T.jit.wait(fut).tolist() == [3.0, 3.0]
        assert fut.then(lambda f: f.wait() * 2).wait().tolist() == [6.0, 6.0]
        with pytest.raises(ZeroDivisionError):
            T.jit.fork(lambda: 1 / 0)
    assert tl.jit.is_scripting() is torch.jit.is_scripting() is False


@pytest.mark.parametrize("case", ["freeze_plain", "freeze_train", "opt_plain", "load_missing",
                                  "save_plain", "script_int", "trace_int", "trace_returns_int"])
def test_errors_as_torch(case, tmp_path):
    def run(T):
        m = T.nn.Linear(2, 2)
        if case == "freeze_plain":
            T.jit.freeze(m.eval())
        elif case == "freeze_train":
            T.jit.freeze(T.jit.script(m))
        elif case == "opt_plain":
            T.jit.optimize_for_inference(m.eval())
        elif case == "load_missing":
            T.jit.load(str(tmp_path / "missing.pt"))
        elif case == "save_plain":
            T.jit.save(m, str(tmp_path / "x.pt"))
        elif case == "script_int":
            T.jit.script(3)
        elif case == "trace_returns_int":
            T.jit.trace(lambda x: (x * 2, 3), T.ones(2))
        else:
            T.jit.trace(3, T.ones(1))
    errors = []
    for T in (torch, tl):
        with pytest.raises(Exception) as info:
            run(T)
        errors.append((type(info.value), str(info.value)))
    assert errors[0] == errors[1]


def test_freeze_runs_the_same():
    ours = tl.nn.Sequential(tl.nn.Linear(3, 2), tl.nn.ReLU()).eval()
    frozen = tl.jit.freeze(tl.jit.script(ours))
    ref_m = torch.nn.Linear(3, 2).eval()
    ref = torch.jit.freeze(torch.jit.script(ref_m))
    assert type(frozen).__name__ == type(ref).__name__
    assert list(frozen.parameters()) == list(ref.parameters()) == []
    x = tl.randn(4, 3)
    np.testing.assert_allclose(_np(frozen(x)), _np(ours(x)), rtol=1e-6)
    assert not frozen(x).requires_grad
    seen = []   # torch's frozen constants share the weights' storage: an in-place change shows
    for T, m, f in ((tl, ours[0], frozen), (torch, ref_m, ref)):
        y = T.ones(1, 3)
        before = _np(f(y)).copy()
        with T.no_grad():
            m.weight.add_(1.0)
        seen.append(np.allclose(before, _np(f(y))))
    assert seen[0] == seen[1]


_LOADER = textwrap.dedent("""
    import sys, numpy as np
    import torchlike
    extra = {"note.txt": ""}
    m = torchlike.jit.load(sys.argv[1], map_location="cpu", _extra_files=extra)
    data = np.load(sys.argv[2])
    outs = {k: m(torchlike.tensor(data[k])).detach().numpy() for k in data.files}
    np.savez(sys.argv[3], **outs)
    print(type(m).__name__, m.original_name, extra["note.txt"].decode(), flush=True)
""")


def test_save_load_in_a_process_without_the_model(pair, tmp_path):
    """The traced CNN saved with .save and torchlike.jit.save, loaded and run by a fresh
    process that has no model code; a batch size other than the example's works (one symbolic
    batch dimension)."""
    p = pair["cnn"]
    path = str(tmp_path / "cnn.pt")
    tl.jit.save(p["ours_t"], path, _extra_files={"note.txt": "hello"})
    x = p["x"]
    inputs = {"example": x, "other": np.concatenate([x, x, x[:1]])}
    np.savez(tmp_path / "in.npz", **inputs)
    script = tmp_path / "loader.py"
    script.write_text(_LOADER)
    env = dict(os.environ, PYTHONPATH=ROOT, JAX_PLATFORMS="cpu")
    res = subprocess.run([sys.executable, str(script), path, str(tmp_path / "in.npz"),
                          str(tmp_path / "out.npz")], capture_output=True, text=True,
                         timeout=120, env=env, cwd=str(tmp_path))
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split() == ["RecursiveScriptModule", "CNN", "hello"]
    with np.load(tmp_path / "out.npz") as out:
        for k, a in inputs.items():
            np.testing.assert_allclose(out[k], _np(p["ours"](tl.tensor(a))), rtol=1e-5,
                                       atol=1e-6)
    loaded = tl.jit.load(path)   # and here: same parameter names as the original's
    assert list(loaded.state_dict()) == list(p["ours"].state_dict())
    for m in (loaded, p["ours"]):   # and the same gradients (the file holds the derivative)
        m.zero_grad()
        m(tl.tensor(x)).pow(2).sum().backward()
    for (name, a), b in zip(loaded.named_parameters(), p["ours"].parameters(), strict=True):
        np.testing.assert_allclose(_np(a.grad), _np(b.grad), rtol=1e-4, atol=1e-6, err_msg=name)


def test_scripted_training_steps_equal_eager():
    """SGD steps through a scripted module with BatchNorm (running statistics written back by
    the program) and a scripted helper function equal the eager steps."""


    @tl.jit.script
    def swish(x):
        return x * tl.sigmoid(x)

    class Net(tl.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.bn, self.fc2 = tl.nn.Linear(6, 8), tl.nn.BatchNorm1d(8), \
                tl.nn.Linear(8, 3)

        def forward(self, x):
            return self.fc2(swish(self.bn(self.fc1(x))))
    tl.manual_seed(3)
    eager = Net()
    net = copy.deepcopy(eager)
    scripted = tl.jit.script(net)
    x, y = tl.randn(8, 6), tl.randint(0, 3, (8,))
    for model, params in ((scripted, net.parameters()), (eager, eager.parameters())):
        opt = tl.optim.SGD(params, lr=0.1)
        for _ in range(2):
            opt.zero_grad()
            tl.nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
    for (k, a), b in zip(net.state_dict().items(), eager.state_dict().values()):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-5, atol=1e-6, err_msg=k)


def _inc(x):
    return x + 1


def test_load_keeps_training_flags_and_deprecation_warns_at_torchs_line(tmp_path):
    """A loaded module has the saved modules' training flags (a model traced in eval mode
    loads in eval mode), as torch's; jit.trace / jit.script's DeprecationWarning points into
    the library, as torch's, so Python's default filters keep a user's program quiet."""
    flags, places = [], []
    for T in (torch, tl):
        m = T.nn.Sequential(T.nn.Linear(2, 2), T.nn.Linear(2, 2)).eval()
        m[1].train()
        path = str(tmp_path / f"{T.__name__}.pt")
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            T.jit.trace(m, T.ones(1, 2)).save(path)
            T.jit.script(_inc)
        flags.append([k.training for k in T.jit.load(path).modules()])
        places.append([w.filename == __file__ for w in seen
                       if issubclass(w.category, DeprecationWarning)
                       and ("jit.trace`" in str(w.message) or "jit.script`" in str(w.message))])
    assert flags[0] == flags[1] == [False, False, True]
    assert places[0] == places[1] == [False, False]


def _longest(lengths: typing.List[int]) -> int:
    best = 0
    for n in lengths:
        if n > best:
            best = n
    return best


def test_isinstance_and_scripted_helpers_without_tensors_as_torch():
    """jit.isinstance checks typed containers as torch's eager fallback does (same answers,
    same errors); a scripted helper over Python values runs quietly (nothing to compile)."""
    T_ = typing
    cases = [([1, 2], T_.List[int]), ([1, 2.0], T_.List[int]), ({"a": 1}, T_.Dict[str, int]),
             ({"a": "b"}, T_.Dict[str, int]), ((1, "x"), T_.Tuple[int, str]),
             ((1, "x", 2), T_.Tuple[int, str]), (None, T_.Optional[T_.List[int]]),
             ([[1], ["a"]], T_.List[T_.List[int]]), (3, T_.Union[T_.List[int], int]),
             (3, (str, int)), ({1: [2.0]}, dict[int, list[float]]), ("s", str | None)]
    errors = []
    for T in (torch, tl):
        answers = [T.jit.isinstance(o, t) for o, t in cases]
        for bad in (T_.List, dict, [int]):
            with pytest.raises(RuntimeError) as e:
                T.jit.isinstance([1], bad)
            errors.append(str(e.value))
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            answers.append(T.jit.isinstance([], T_.List[str]))
            answers.append(T.jit.script(_longest)([3, 7, 2]))
        answers.append([str(w.message)[:40] for w in seen if w.category is UserWarning])
        errors.append(answers)
    assert errors[:4] == errors[4:]


def test_load_says_what_a_pytorch_torchscript_file_is(tmp_path):
    path = str(tmp_path / "ts.pt")
    torch.jit.save(torch.jit.trace(torch.nn.Linear(2, 2), torch.ones(1, 2)), path)
    with pytest.raises(RuntimeError, match="TorchScript archive written by PyTorch"):
        tl.jit.load(path)


def test_fusion_switches_as_torch():
    def run(T):
        out = [T.jit.set_fusion_strategy([("DYNAMIC", 3)]),
               T.jit.set_fusion_strategy([("STATIC", 2), ("DYNAMIC", 10)]),
               T.jit.onednn_fusion_enabled()]
        with T.jit.optimized_execution(False) as a, T.jit.fuser("fuser1") as b:
            out += [a, b]
        for bad in (lambda: T.jit.set_fusion_strategy([("X", 2)]),
                    lambda: T.jit.fuser("bogus").__enter__()):
            with pytest.raises(Exception) as info:
                bad()
            out.append((type(info.value), str(info.value)))
        return out
    assert run(tl) == run(torch)


def test_deepcopy_gives_independent_modules_as_torch():
    x = np.ones((2, 3), np.float32)
    seen = {}
    for T in (torch, tl):
        T.manual_seed(0)
        m = T.nn.Sequential(T.nn.Linear(3, 2))
        seen[T] = []
        for made in (T.jit.trace(m, T.tensor(x)), T.jit.script(m)):
            c = copy.deepcopy(made)
            seen[T].append((type(c).__name__, repr(c)))
            assert _np(c(T.tensor(x))).tolist() == _np(made(T.tensor(x))).tolist()
            with T.no_grad():
                next(c.parameters()).add_(1.0)
            assert not np.allclose(_np(c(T.tensor(x))), _np(made(T.tensor(x))))
    assert seen[tl] == seen[torch]


def test_input_gradients_and_double_backward_through_a_trace(pair):
    """d/dx and d/dx of |d/dx|^2 through the traced MLP equal torch's traced module's."""
    p = pair["mlp"]
    out = []
    for T, traced in ((torch, p["ref_t"]), (tl, p["ours_t"])):
        x = T.tensor(p["x"]).requires_grad_()
        g, = T.autograd.grad(traced(x).sum(), x, create_graph=True)
        h, = T.autograd.grad(g.pow(2).sum(), x)
        out.append((_np(g), _np(h)))
    for a, b in zip(*out):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
