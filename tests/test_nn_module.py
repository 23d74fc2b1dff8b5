"""nn.Module, Parameter, Buffer and the containers against real PyTorch: registration, names and
order, state_dict / load_state_dict (keys, errors, returned keys), modes and conversions, reprs,
hooks (forward, backward, state-dict), pytree flattening.

Every model is built by one function of the library (``T`` is torch or torchlike), so the same
code runs on both and the results are compared.
"""
import collections
import copy
import pickle
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch

import torchlike as tl

from parity import both, same

RNG = np.random.default_rng(0)
W1 = RNG.standard_normal((3, 4)).astype(np.float32)
W2 = RNG.standard_normal((4, 2)).astype(np.float32)
X = RNG.standard_normal((5, 3)).astype(np.float32)


def build(T):
    """A small model with own parameters, buffers (one non-persistent), nested children, a
    tied weight, a None parameter and a None child."""
    nn = T.nn

    class Affine(nn.Module):
        def __init__(self, w):
            super().__init__()
            self.weight = nn.Parameter(T.tensor(w))
            self.register_parameter("unused", None)
            self.register_buffer("shift", T.zeros(w.shape[1]))
            self.register_buffer("scratch", T.ones(1), persistent=False)

        def forward(self, x):
            return x @ self.weight + self.shift

        def extra_repr(self):
            return f"in={self.weight.shape[0]}, out={self.weight.shape[1]}"

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = nn.Parameter(T.tensor(2.0))
            self.first = Affine(W1)
            self.body = nn.Sequential(Affine(W2), nn.Identity())
            self.tied = self.first          # the same module under two names
            self.missing = None
            self.register_module("none_child", None)
            self.heads = nn.ModuleDict({"b": nn.Identity(), "a": Affine(W2)})

        def forward(self, x):
            return self.body(self.first(x) * self.scale).tanh()

    return Net()


def names(pairs):
    return [n for n, _ in pairs]


@pytest.mark.parametrize("what", [
    "named_parameters", "named_buffers", "named_modules", "named_children", "state_dict"])
def test_names_and_order(what):
    def go(T):
        m = build(T)
        got = getattr(m, what)()
        return names(got.items() if isinstance(got, dict) else got)
    ref, got = both(go)
    assert ref == got


@pytest.mark.parametrize("kwargs", [dict(remove_duplicate=False), dict(recurse=False),
                                    dict(prefix="model")])
def test_named_parameters_options(kwargs):
    ref, got = (names(build(T).named_parameters(**kwargs)) for T in (torch, tl))
    assert ref == got


def test_parameter_and_lookup_surface():
    for T in (torch, tl):
        m = build(T)
        assert m.get_submodule("body.0") is m.body[0]
        assert m.get_parameter("first.weight") is m.first.weight
        assert m.get_buffer("first.shift") is m.first.shift
        assert len(list(m.parameters())) == 4 and len(list(m.buffers())) == 6
        assert [type(c).__name__ for c in m.children()] == ["Affine", "Sequential", "ModuleDict"]
    both(lambda T: build(T).get_submodule("body.7"), raises=True)
    both(lambda T: build(T).get_submodule("scale"), raises=True)
    both(lambda T: build(T).get_parameter("first.shift"), raises=True)
    same(lambda T: build(T).nope, raises=True)


def test_state_dict_values_metadata_keep_vars():
    t, m = build(torch), build(tl)
    ts, ms = t.state_dict(), m.state_dict()
    assert list(ts._metadata.items()) == list(ms._metadata.items())
    for k in ts:
        np.testing.assert_allclose(ts[k].numpy(), ms[k].numpy())
        assert ms[k].requires_grad is False
    assert m.state_dict(keep_vars=True)["scale"] is m.scale
    assert list(m.state_dict(prefix="p.")) == list(t.state_dict(prefix="p."))


def _load(T, entries, **kw):
    m = build(T)
    sd = m.state_dict()
    for key, value in entries.items():
        if value is None:
            del sd[key]
        else:
            sd[key] = T.tensor(value)
    out = m.load_state_dict(sd, **kw)
    return repr(out), out.missing_keys, out.unexpected_keys, m.first.weight


@pytest.mark.parametrize("entries,kw,raises", [
    ({}, {}, False),
    ({"first.weight": W1 * 2}, {}, False),
    ({"scale": None}, {"strict": False}, False),
    ({"extra.thing": np.ones(2, np.float32)}, {"strict": False}, False),
    ({"scale": None, "extra": np.ones(1, np.float32)}, {}, True),
    ({"first.weight": np.ones((4, 4), np.float32)}, {}, True),
    ({"first.weight": np.ones((4, 4), np.float32), "extra": np.ones(1, np.float32)}, {}, True),
    ({"scale": np.ones(1, np.float32)}, {}, False),   # 1-element entry into a 0-dim parameter
    ({"first.weight": W1 * 3}, {"assign": True}, False),
], ids=["same", "new-values", "missing-non-strict", "unexpected-non-strict", "strict-errors",
        "size-mismatch", "mismatch-and-unexpected", "legacy-1-element", "assign"])
def test_load_state_dict(entries, kw, raises):
    same(lambda T: _load(T, entries, **kw), raises=raises)


def test_load_state_dict_keeps_objects_and_assign_rebinds():
    m = build(tl)
    w = m.first.weight
    m.load_state_dict({k: v * 0 for k, v in m.state_dict().items()})
    assert m.first.weight is w and float(w.abs().sum()) == 0 and w.requires_grad
    m.load_state_dict({k: v + 1 for k, v in m.state_dict().items()}, assign=True)
    assert m.first.weight is not w and isinstance(m.first.weight, tl.nn.Parameter)
    assert m.first.weight.requires_grad
    both(lambda T: build(T).load_state_dict([1, 2]), raises=True)
    same(lambda T: build(T).load_state_dict({"scale": 1.0}, strict=False), raises=True)


def test_setattr_rules_and_errors():
    def go(T):
        m = build(T)
        m.first.shift = T.ones(4)                  # a buffer name keeps it a buffer
        m.plain = T.ones(2)                        # a plain tensor attribute
        m.scale = None                             # a parameter set to None
        m.body = None
        return (names(m.named_buffers()), names(m.named_parameters()), "plain" in m._buffers,
                [n for n, _ in m.named_children()])
    ref, got = both(go)
    assert ref == got
    same(lambda T: setattr(build(T), "scale", T.ones(1)), raises=True)
    same(lambda T: setattr(build(T), "body", 3), raises=True)
    same(lambda T: setattr(build(T).first, "shift", 3), raises=True)
    same(lambda T: build(T).register_buffer("a.b", None), raises=True)
    same(lambda T: build(T).register_buffer("", None), raises=True)
    same(lambda T: build(T).register_buffer("scale", None), raises=True)
    same(lambda T: build(T).register_buffer("x", 3), raises=True)
    same(lambda T: build(T).register_parameter("x", T.ones(1)), raises=True)
    same(lambda T: build(T).register_parameter("x", T.nn.Parameter(T.ones(1)) * 2), raises=True)
    same(lambda T: build(T).add_module("x", 3), raises=True)

    def before_init(T):
        class Bad(T.nn.Module):
            def __init__(self):
                self.w = T.nn.Parameter(T.ones(1))
        Bad()
    same(before_init, raises=True)


def test_buffer_class_and_delattr():
    def go(T):
        m = T.nn.Module()
        m.a = T.nn.Buffer(T.ones(2))
        m.b = T.nn.Buffer(T.ones(2), persistent=False)
        m.c = T.nn.Parameter(T.ones(1))
        del m.c
        return names(m.named_buffers()), list(m.state_dict()), names(m.named_parameters())
    ref, got = both(go)
    assert ref == got


def test_train_eval_requires_grad_zero_grad_apply():
    def go(T):
        m = build(T)
        m.eval()
        flags = [x.training for x in m.modules()]
        m.train()
        flags2 = [x.training for x in m.modules()]
        m(T.tensor(X)).sum().backward()
        before = [p.grad is not None for p in m.parameters()]
        m.zero_grad(set_to_none=False)
        zeroed = [None if p.grad is None else float(p.grad.abs().sum()) for p in m.parameters()]
        m.zero_grad()
        cleared = [p.grad is None for p in m.parameters()]
        m.requires_grad_(False)
        order = []
        m.apply(lambda mod: order.append(type(mod).__name__))
        return flags, flags2, before, zeroed, cleared, \
            [p.requires_grad for p in m.parameters()], order
    ref, got = both(go)
    assert ref == got
    same(lambda T: build(T).train("yes"), raises=True)


@pytest.mark.parametrize("convert", ["double", "half", "float", "to64", "to_tensor",
                                     "to_int", "bfloat16"])
def test_conversions(convert):
    def go(T):
        m = build(T)
        p = m.first.weight
        fn = {"double": lambda: m.double(), "half": lambda: m.half(),
              "float": lambda: m.double().float(), "to64": lambda: m.to(T.float64),
              "to_tensor": lambda: m.to(T.ones(1, dtype=T.float64)),
              "to_int": lambda: m.to(T.int64), "bfloat16": lambda: m.bfloat16()}[convert]
        out = fn()
        return (out is m, m.first.weight is p,
                [str(t.dtype) for t in m.state_dict().values()], p.requires_grad)
    ref, got = same(go, raises=convert == "to_int")     # integer dtypes are refused
    if convert != "to_int":
        assert ref == got


def test_reprs():
    def reprs(T):
        nn = T.nn
        return [
            repr(build(T)),
            repr(nn.ModuleList([nn.Identity(), nn.Identity(), build(T).first, nn.Identity()])),
            repr(nn.ModuleList()),
            repr(nn.ParameterList([nn.Parameter(T.ones(2, 3)), T.ones(3)])),
            repr(nn.ParameterDict({"w": nn.Parameter(T.ones(2)), "a": T.ones(1, dtype=T.float64)})),
            repr(nn.ModuleDict({"x": nn.Identity()})),
            repr(nn.Parameter(T.ones(2))), str(nn.Parameter(T.ones(2), requires_grad=False)),
            repr(build(T).load_state_dict(build(T).state_dict())),
        ]
    ref, got = both(reprs)
    assert ref == got


def test_sequential_surface():
    def go(T):
        nn = T.nn
        s = nn.Sequential(build(T).first, nn.Identity(), nn.Identity())
        out = [len(s), type(s[1:]).__name__, list(s[1:]._modules), type(s[-1]).__name__]
        s.append(nn.Identity())
        s.insert(1, nn.Identity())
        del s[0]
        out.append(list(s._modules))
        s.extend(nn.Sequential(nn.Identity()))
        out.append(len(s))
        s2 = s + s
        out.append(len(s2))
        s.pop(0)
        out.append(list(s._modules))
        named = nn.Sequential(collections.OrderedDict([("a", nn.Identity()), ("b", nn.Identity())]))
        out.append(list(named._modules))
        out.append(len(nn.Sequential(nn.Identity()) * 3))
        return out
    ref, got = both(go)
    assert ref == got
    same(lambda T: T.nn.Sequential(T.nn.Identity())[3], raises=True)
    same(lambda T: T.nn.ModuleList([T.nn.Identity()])[-2], raises=True)
    y = tl.nn.Sequential(build(tl).first, tl.nn.Identity())(tl.tensor(X))
    np.testing.assert_allclose(y.detach().numpy(), X @ W1, rtol=1e-5)


def test_module_list_dict_parameter_containers():
    def go(T):
        nn = T.nn
        ml = nn.ModuleList([nn.Identity()])
        ml.append(nn.Identity())
        ml.extend([nn.Identity()])
        ml.insert(0, build(T).first)
        del ml[1]
        md = nn.ModuleDict([("z", nn.Identity()), ("y", nn.Identity())])
        md["x"] = build(T).first
        md.pop("z")
        pl = nn.ParameterList([T.ones(2)])
        pl.append(nn.Parameter(T.zeros(3)))
        pd = nn.ParameterDict({"b": T.ones(1), "a": T.ones(2)})
        pd["c"] = nn.Parameter(T.ones(3))
        holder = nn.Module()
        holder.ml, holder.md, holder.pl, holder.pd = ml, md, pl, pd
        return (list(ml._modules), list(md.keys()), "y" in md, len(pl), list(pd.keys()),
                names(holder.named_parameters()), list(holder.state_dict()),
                [type(p).__name__ for p in pl], pd.get("zz") is None)
    ref, got = both(go)
    assert ref == got


def test_parameter_basics():
    p = tl.nn.Parameter(tl.ones(2))
    assert p.is_leaf and p.requires_grad and isinstance(p, tl.Tensor)
    assert type(p * 2) is tl.Tensor and type(p.detach()) is tl.Tensor
    q = copy.deepcopy(p)
    assert type(q) is tl.nn.Parameter and q.requires_grad and q is not p
    r = pickle.loads(pickle.dumps(tl.nn.Parameter(tl.ones(2), requires_grad=False)))
    assert type(r) is tl.nn.Parameter and not r.requires_grad
    m = copy.deepcopy(build(tl))
    assert m.tied is m.first and names(m.named_parameters()) == names(
        build(tl).named_parameters())


# --- hooks --------------------------------------------------------------------------------------

def test_forward_hooks():
    def go(T):
        m = build(T)
        log = []
        h1 = m.first.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
        m.first.register_forward_pre_hook(
            lambda mod, args, kwargs: log.append(("kw", len(args), sorted(kwargs))),
            with_kwargs=True)
        m.first.register_forward_pre_hook(lambda mod, args: log.append("prepended"),
                                          prepend=True)
        m.body.register_forward_hook(lambda mod, args, out: out + 1)
        m.body.register_forward_hook(lambda mod, args, kwargs, out: log.append(
            ("after", tuple(out.shape))), with_kwargs=True)
        y1 = m(T.tensor(X))
        h1.remove()
        y2 = m(T.tensor(X))
        return y1, y2, log
    both(go)


def test_forward_hook_always_call_and_bad_pre_hook():
    def go(T):
        m = build(T)
        log = []
        m.first.register_forward_hook(lambda mod, args, out: log.append("always"),
                                      always_call=True)
        m.first.register_forward_hook(lambda mod, args, out: log.append("normal"))
        try:
            m(T.ones(5, 7))
        except RuntimeError:
            log.append("raised")
        return log
    ref, got = both(go)
    assert ref == got == ["always", "raised"]
    same(lambda T: (lambda first: (first.register_forward_pre_hook(
        lambda mod, a, k: 3, with_kwargs=True), first(T.tensor(X))))(build(T).first), raises=True)

    def bad(T):
        m = build(T)
        m.first.register_forward_pre_hook(lambda mod, a, k: 3, with_kwargs=True)
        return m(T.tensor(X))
    same(bad, raises=True)


@pytest.mark.parametrize("input_grad", [True, False])
def test_full_backward_hooks(input_grad):
    def go(T):
        m = build(T)
        seen = []
        m.first.register_full_backward_pre_hook(
            lambda mod, gout: (gout[0] * 3,))
        m.first.register_full_backward_hook(
            lambda mod, gin, gout: seen.append(("first", [None if g is None else g.clone()
                                                          for g in gin], gout[0].clone())))
        m.body.register_full_backward_hook(
            lambda mod, gin, gout: seen.append(("body", gin[0].clone(), gout[0].clone())))
        x = T.tensor(X, requires_grad=input_grad)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = m(x)
            y.sum().backward()
        return (type(y.grad_fn).__name__, seen, m.first.weight.grad,
                x.grad if input_grad else None)
    both(go)


def test_backward_hook_replaces_grad_input():
    def go(T):
        m = build(T)
        m.body.register_full_backward_hook(lambda mod, gin, gout: (gin[0] * 0,))
        m(T.tensor(X)).sum().backward()
        return m.first.weight.grad, m.body[0].weight.grad
    both(go)


def test_state_dict_hooks():
    def go(T):
        m = build(T)
        log = []
        m.first.register_state_dict_pre_hook(lambda mod, prefix, keep: log.append(("pre", prefix)))
        m.first.register_state_dict_post_hook(
            lambda mod, sd, prefix, meta: log.append(("post", prefix, len(sd))))
        m.register_load_state_dict_pre_hook(
            lambda mod, sd, prefix, meta, strict, missing, unexpected, errors: log.append(
                ("load-pre", prefix, len(sd))))
        m.register_load_state_dict_post_hook(
            lambda mod, keys: keys.missing_keys.clear())
        sd = m.state_dict()
        del sd["scale"]
        out = m.load_state_dict(sd)
        return log, repr(out)
    ref, got = both(go)
    assert ref == got


# --- pytrees ------------------------------------------------------------------------------------

def test_pytree_flatten_unflatten_and_jax_grad():
    m = build(tl)
    leaves, treedef = jax.tree_util.tree_flatten(m)
    expected = list(m.named_parameters()) + list(m.named_buffers())
    assert len(leaves) == len(expected)
    paths = [jax.tree_util.keystr(p) for p, _ in jax.tree_util.tree_flatten_with_path(m)[0]]
    assert paths == [f".{n}" for n, _ in expected]
    doubled = jax.tree_util.tree_unflatten(treedef, [2 * x for x in leaves])
    assert doubled.tied is doubled.first and doubled.first is not m.first
    np.testing.assert_allclose(doubled.first.weight.detach().numpy(), 2 * W1)
    np.testing.assert_allclose(m.first.weight.detach().numpy(), W1)   # the original is intact
    assert isinstance(doubled.first.weight, tl.nn.Parameter)

    def loss(model, x):
        return jnp.sum(model(tl.Tensor._wrap(x))._value())

    g = jax.grad(loss)(m, jnp.asarray(X))
    m(tl.tensor(X)).sum().backward()
    np.testing.assert_allclose(np.asarray(g.first.weight._value()), m.first.weight.grad.numpy(),
                               rtol=1e-5)
