"""torchlike.nn.utils against real PyTorch: gradient clipping, parameters <-> vector, skip_init,
parametrize (register / remove / cached, class names, reprs, state_dict keys), the
parametrizations weight_norm / spectral_norm / orthogonal, the legacy hook-based weight_norm and
spectral_norm, and functional_call (also under jax.grad).

Every model is built by one function of the library (``T`` is torch or torchlike); where PyTorch
draws random numbers (spectral_norm's u and v, orthogonal's base) its state_dict is copied in.
"""
import copy
import math
import pickle
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch

import torchlike as tl
import torchlike.nn.utils  # noqa: F401
from torchlike.nn.utils.weight_norm import _weight_norm

from parity import both, cases, next_names, same

RNG = np.random.default_rng(0)
W = RNG.standard_normal((4, 3)).astype(np.float32)
W_WIDE = RNG.standard_normal((3, 4)).astype(np.float32)
W_SQ = RNG.standard_normal((3, 3)).astype(np.float32)
W4 = RNG.standard_normal((3, 2, 2, 2)).astype(np.float32)
B = RNG.standard_normal(4).astype(np.float32)
X = RNG.standard_normal((2, 3)).astype(np.float32)
X8 = RNG.standard_normal((2, 8)).astype(np.float32)


def affine(T, w=W, bias=True):
    """A Linear-like module (x @ W^T + b) with the given weight."""
    class Affine(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = T.nn.Parameter(T.tensor(w))
            self.bias = T.nn.Parameter(T.tensor(B[:w.shape[0]])) if bias else None

        def forward(self, x):
            y = x @ self.weight.reshape(self.weight.shape[0], -1).T
            return y if self.bias is None else y + self.bias

        def extra_repr(self):
            return f"in_features={self.weight.shape[1]}, out_features={self.weight.shape[0]}"
    return Affine()


def copy_state(src, dst):
    """Load torch module ``src``'s state_dict into torchlike module ``dst``."""
    dst.load_state_dict({k: tl.tensor(v.detach().numpy()) for k, v in src.state_dict().items()})


def pair(build):
    """The same model in both libraries, torchlike's holding torch's state."""
    ref, got = build(torch), build(tl)
    copy_state(ref, got)
    return ref, got


def run_pair(build, step):
    """``step(T, model)`` on both models of ``pair(build)``; results compared."""
    ref_m, got_m = pair(build)
    models = {torch: ref_m, tl: got_m}
    return both(lambda T: step(T, models[T]))


def keys(m):
    return [(k, tuple(v.shape)) for k, v in m.state_dict().items()]


def with_grads(m):
    return {n: p.grad for n, p in m.named_parameters()}


# --- clip_grad ----------------------------------------------------------------------------------

GRADS = [np.array([[3.0, -4.0], [1.0, 0.5]]), np.array([0.0, 2.0, -1.0]), np.array(1.5)]


def params_with_grads(T, dtypes=("float32",) * 3, values=GRADS, missing=()):
    ps = []
    for i, (v, dt) in enumerate(zip(values, dtypes)):
        p = T.nn.Parameter(T.zeros(np.shape(v), dtype=getattr(T, dt)))
        if i not in missing:
            p.grad = T.tensor(v, dtype=getattr(T, dt))
        ps.append(p)
    return ps


CLIP_NORM = [
    # name, kwargs of clip_grad_norm_, params builder kwargs
    ("l2-clips", dict(max_norm=1.0), {}),
    ("l2-no-clip", dict(max_norm=100.0), {}),
    ("inf", dict(max_norm=1.0, norm_type=math.inf), {}),
    ("inf-str", dict(max_norm=1.0, norm_type="inf"), {}),
    ("-inf", dict(max_norm=1.0, norm_type=-math.inf), {}),
    ("l1", dict(max_norm=2.0, norm_type=1), {}),
    ("l3", dict(max_norm=2.0, norm_type=3.0), {}),
    ("l0", dict(max_norm=2.0, norm_type=0), {}),
    ("float64", dict(max_norm=1.0), dict(dtypes=("float64",) * 3)),
    ("mixed-dtypes", dict(max_norm=1.0), dict(dtypes=("float32", "float64", "float16"))),
    ("bfloat16", dict(max_norm=1.0), dict(dtypes=("bfloat16",) * 3)),
    ("none-grad", dict(max_norm=1.0), dict(missing=(1,))),
    ("foreach", dict(max_norm=1.0, foreach=True), {}),
    ("nan-no-error", dict(max_norm=1.0), dict(values=[GRADS[0], np.array([np.nan, 1.0, 2.0]),
                                                      GRADS[2]])),
    ("inf-error", dict(max_norm=1.0, error_if_nonfinite=True),
     dict(values=[GRADS[0], np.array([np.inf, 1.0, 2.0]), GRADS[2]])),
    ("nan-error-l3", dict(max_norm=1.0, norm_type=3, error_if_nonfinite=True),
     dict(values=[GRADS[0], np.array([np.nan, 1.0, 2.0]), GRADS[2]])),
    ("complex", dict(max_norm=1.0), dict(dtypes=("complex64",) * 2,
                                         values=[np.array([1 + 2j, 3j]), np.array([-1j])])),
]


@pytest.mark.parametrize("name,kwargs,build", cases(CLIP_NORM))
def test_clip_grad_norm(name, kwargs, build):
    def go(T):
        ps = params_with_grads(T, **build)
        before = [p.grad for p in ps]
        total = T.nn.utils.clip_grad_norm_(ps, **kwargs)
        return total, [p.grad for p in ps], all(p.grad is b for p, b in zip(ps, before))
    same(go, raises=kwargs.get("error_if_nonfinite", False))   # those rows have a non-finite norm


def test_clip_grad_norm_forms():
    def go(T):
        ps = params_with_grads(T)
        single = T.nn.utils.clip_grad_norm_(ps[0], 1.0)       # a single tensor
        gen = T.nn.utils.clip_grad_norm_((p for p in ps), 2.0)
        empty = T.nn.utils.clip_grad_norm_([], 1.0)
        none = T.nn.utils.clip_grad_norm_([T.nn.Parameter(T.ones(2))], 1.0)
        return single, gen, empty, none, [p.grad for p in ps]
    same(go)

    def warns(T):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            T.nn.utils.clip_grad_norm_((p for p in []), 1.0)
            T.nn.utils.clip_grad_norm(params_with_grads(T), 1.0)
        return [(c.category.__name__, str(c.message)) for c in w]
    ref, got = same(warns)
    assert ref == got and len(ref) == 2


def test_total_norm_and_clip_with_norm():
    def go(T):
        ps = params_with_grads(T)
        total = T.nn.utils.get_total_norm([p.grad for p in ps], norm_type=2.0)
        total_inf = T.nn.utils.get_total_norm(ps[0].grad, norm_type="inf")
        empty = T.nn.utils.get_total_norm([])
        T.nn.utils.clip_grads_with_norm_(ps, 2.0, total)
        T.nn.utils.clip_grads_with_norm_(ps[1], 0.1, total_inf)
        return total, total_inf, empty, [p.grad for p in ps]
    same(go)
    same(lambda T: T.nn.utils.get_total_norm([T.tensor([np.inf])], error_if_nonfinite=True),
         raises=True)


CLIP_VALUE = [
    # name, dtypes, values, clip value, raises (the message is compared)
    ("float32", ("float32",) * 3, GRADS, 1.0, False),
    ("float64-int-bound", ("float64",) * 3, GRADS, 2, False),
    ("nan-kept", ("float32",) * 3, [GRADS[0], np.array([np.nan, 5.0, -5.0]), GRADS[2]], 1.0,
     False),
    ("complex", ("complex64",), [np.array([1j])], 1.0, True),
]


@pytest.mark.parametrize("name,dtypes,values,clip,raises", cases(CLIP_VALUE))
def test_clip_grad_value(name, dtypes, values, clip, raises):
    def go(T):
        ps = params_with_grads(T, dtypes, values)
        out = T.nn.utils.clip_grad_value_(ps, clip, foreach=None)
        return out, [p.grad for p in ps]
    same(go, raises=raises)


def test_clip_traced():
    """The fused clipping traces: inside jax.jit the gradients are tracers."""
    ps = params_with_grads(tl)
    grads = [p.grad._value() for p in ps]

    @jax.jit
    def step(gs):
        for p, g in zip(ps, gs):
            p.grad = tl.Tensor._wrap(g)
        total = tl.nn.utils.clip_grad_norm_(ps, 1.0, error_if_nonfinite=True)
        tl.nn.utils.clip_grad_value_(ps, 0.3)
        return total._value(), [p.grad._value() for p in ps]

    total, new = step(grads)
    ref = params_with_grads(torch)
    ref_total = torch.nn.utils.clip_grad_norm_(ref, 1.0)
    torch.nn.utils.clip_grad_value_(ref, 0.3)
    np.testing.assert_allclose(total, ref_total.numpy(), rtol=1e-6)
    for g, p in zip(new, ref):
        np.testing.assert_allclose(g, p.grad.numpy(), rtol=1e-6)


# --- parameters <-> vector, skip_init -----------------------------------------------------------

def test_parameters_to_vector_and_back():
    def go(T):
        m = affine(T)
        vec = T.nn.utils.parameters_to_vector(m.parameters())
        (vec * T.arange(vec.numel())).sum().backward()
        names = next_names(vec.grad_fn)
        T.nn.utils.vector_to_parameters(T.arange(16, dtype=T.float32), m.parameters())
        return vec, names, with_grads(m), m.weight, m.bias, type(m.weight).__name__, \
            m.weight.requires_grad
    same(go)


@pytest.mark.parametrize("fn", [
    lambda T: T.nn.utils.parameters_to_vector([]),
    lambda T: T.nn.utils.vector_to_parameters([1.0, 2.0], affine(T).parameters()),
    lambda T: T.nn.utils.vector_to_parameters(np.ones(3), affine(T).parameters()),
    lambda T: T.nn.utils.vector_to_parameters(T.ones(5), affine(T).parameters()),
], ids=["empty", "list", "ndarray", "too-short"])
def test_vector_errors(fn):
    same(fn, raises=True)


def test_skip_init():
    def go(T):
        T.manual_seed(0)
        m = T.nn.utils.skip_init(T.nn.Linear, 3, 4, bias=False)
        return (type(m).__name__, keys(m), m.weight.requires_grad, type(m.weight).__name__,
                m.weight.device, T.rand(1).shape)
    ref, got = same(go)
    tl.manual_seed(0)
    expected = tl.rand(3)
    tl.manual_seed(0)
    tl.nn.utils.skip_init(tl.nn.Linear, 3, 4)
    np.testing.assert_array_equal(tl.rand(3).numpy(), expected.numpy())   # RNG untouched

    def no_device(T):
        class M(T.nn.Module):
            pass
        return T.nn.utils.skip_init(M)
    same(no_device, raises=True)
    same(lambda T: T.nn.utils.skip_init(int), raises=True)


# --- fusion -------------------------------------------------------------------------------------

def eval_bn(T, n):
    bn = T.nn.BatchNorm2d(n)
    with T.no_grad():
        bn.running_mean.copy_(T.tensor(B[:n]))
        bn.running_var.copy_(T.tensor(np.abs(B[:n]) + 0.5))
        bn.weight.copy_(T.tensor(B[:n] * 2))
    return bn.eval()


@pytest.mark.parametrize("transpose", [False, True])
def test_fuse_conv_bn(transpose):
    def go(T):
        conv = (T.nn.ConvTranspose2d(3, 2, 2) if transpose else T.nn.Conv2d(2, 3, 2)).eval()
        with T.no_grad():
            conv.weight.copy_(T.tensor(W4 if not transpose else W4 * 0.5))
            conv.bias.copy_(T.tensor(B[:conv.bias.shape[0]]))
        bn = eval_bn(T, conv.out_channels)
        fused = T.nn.utils.fuse_conv_bn_eval(conv, bn, transpose=transpose)
        x = T.tensor(np.ones((1, conv.in_channels, 3, 3), np.float32))
        w, b = T.nn.utils.fuse_conv_bn_weights(conv.weight, None, bn.running_mean,
                                               bn.running_var, 1e-3, None, None, transpose)
        return (type(fused).__name__, fused.weight, fused.bias, fused is conv, fused(x),
                type(w).__name__, w, b)
    same(go)
    same(lambda T: T.nn.utils.fuse_conv_bn_eval(T.nn.Conv2d(2, 3, 2), eval_bn(T, 3)), raises=True)


def test_fuse_linear_bn():
    def go(T):
        lin = T.nn.Linear(3, 4).eval()
        with T.no_grad():
            lin.weight.copy_(T.tensor(W))
            lin.bias.copy_(T.tensor(B))
        bn = eval_bn(T, 4)
        fused = T.nn.utils.fuse_linear_bn_eval(lin, bn)
        return type(fused).__name__, fused.weight, fused.bias, fused.weight.requires_grad
    same(go)
    same(lambda T: T.nn.utils.fuse_linear_bn_eval(T.nn.Linear(3, 5).eval(), eval_bn(T, 4)),
         raises=True)
    same(lambda T: T.nn.utils.fuse_linear_bn_eval(T.nn.Linear(3, 4), eval_bn(T, 4)), raises=True)


# --- parametrize --------------------------------------------------------------------------------

def symmetric(T):
    class Symmetric(T.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

        def right_inverse(self, A):
            return A.triu()
    return Symmetric()


def scaled(T, k=2.0):
    class Scale(T.nn.Module):
        def forward(self, X):
            return X * k

        def right_inverse(self, A):
            return A / k
    return Scale()


def split_sum(T):
    class SplitSum(T.nn.Module):
        def forward(self, a, b):
            return a + b

        def right_inverse(self, X):
            return X * 0.25, X * 0.75
    return SplitSum()


def test_register_parametrization_surface():
    def go(T):
        P = T.nn.utils.parametrize
        m = affine(T, W_SQ)
        P.register_parametrization(m, "weight", symmetric(T))
        first = (type(m).__name__, type(m).__qualname__, repr(m), keys(m),
                 [n for n, _ in m.named_parameters()], P.is_parametrized(m),
                 P.is_parametrized(m, "weight"), P.is_parametrized(m, "bias"),
                 P.type_before_parametrizations(m).__name__, type(m).__bases__[0].__name__,
                 type(m.parametrizations).__name__, type(m.parametrizations.weight).__name__)
        P.register_parametrization(m, "weight", scaled(T))       # chained
        P.register_parametrization(m, "bias", scaled(T, 3.0))
        y = m(T.tensor(X))
        y.sum().backward()
        second = (repr(m), keys(m), m.weight, y, with_grads(m), next_names(m.weight.grad_fn))
        m.weight = T.tensor(W_SQ + W_SQ.T)         # assignment goes through right_inverse
        third = (m.parametrizations.weight.original, m.weight)
        P.remove_parametrizations(m, "weight", leave_parametrized=False)
        fourth = (type(m).__name__, keys(m), m.weight, type(m.weight).__name__)
        P.remove_parametrizations(m, "bias")
        return first, second, third, fourth, (type(m).__name__, keys(m), m.bias,
                                              hasattr(m, "parametrizations"))
    same(go)


def test_parametrization_with_several_originals_and_buffers():
    def go(T):
        P = T.nn.utils.parametrize
        m = affine(T)
        m.register_buffer("scale", T.tensor([1.0, 2.0, 3.0]))
        P.register_parametrization(m, "weight", split_sum(T))
        P.register_parametrization(m, "scale", scaled(T))
        out = m(T.tensor(X)) * m.scale.sum()
        out.sum().backward()
        res = (keys(m), [n for n, _ in m.named_buffers()], m.weight, m.scale, with_grads(m),
               m.parametrizations.weight.original0.requires_grad,
               type(m.parametrizations.weight.original1).__name__)
        m.weight = T.ones(4, 3)
        res += (m.parametrizations.weight.original0, m.parametrizations.weight.original1)
        P.remove_parametrizations(m, "weight")
        P.remove_parametrizations(m, "scale", leave_parametrized=False)
        return res + (keys(m), m.weight, type(m.weight).__name__, m.scale)
    same(go)


def test_parametrize_errors():
    P = lambda T: T.nn.utils.parametrize  # noqa: E731

    def changes_shape(T):
        class Bad(T.nn.Module):
            def forward(self, X):
                return X[0]
        return P(T).register_parametrization(affine(T), "weight", Bad())

    def changes_dtype(T):
        class Bad(T.nn.Module):
            def forward(self, X):
                return X.double()
        return P(T).register_parametrization(affine(T), "weight", Bad())

    def changes_shape_chained(T):
        m = P(T).register_parametrization(affine(T), "weight", scaled(T))

        class Bad(T.nn.Module):
            def forward(self, X):
                return X.T
        return P(T).register_parametrization(m, "weight", Bad())

    def unsafe_ok(T):
        class Bad(T.nn.Module):
            def forward(self, X):
                return X[0]
        m = P(T).register_parametrization(affine(T), "weight", Bad(), unsafe=True)
        return m.weight

    def no_right_inverse(T):
        class Only(T.nn.Module):
            def forward(self, X):
                return X * 2
        m = P(T).register_parametrization(affine(T), "weight", Only())
        m.weight = T.ones(4, 3)

    def leave_unparametrized_sequence(T):
        m = P(T).register_parametrization(affine(T), "weight", split_sum(T))
        P(T).remove_parametrizations(m, "weight", leave_parametrized=False)

    def bad_right_inverse(T):
        class Bad(T.nn.Module):
            def forward(self, X):
                return X

            def right_inverse(self, X):
                return 3
        P(T).register_parametrization(affine(T), "weight", Bad())

    def assign_parameter(T):
        m = P(T).register_parametrization(affine(T), "weight", scaled(T))
        m.weight = T.nn.Parameter(T.ones(4, 3))

    same(unsafe_ok)
    for fn in (changes_shape, changes_dtype, changes_shape_chained, no_right_inverse,
               leave_unparametrized_sequence, bad_right_inverse, assign_parameter,
               lambda T: P(T).register_parametrization(affine(T), "nope", scaled(T)),
               lambda T: P(T).remove_parametrizations(affine(T), "weight"),
               lambda T: P(T).ParametrizationList([], T.ones(1))):
        same(fn, raises=True)


def test_cached_and_copying():
    def go(T):
        P = T.nn.utils.parametrize
        calls = []

        class Counting(T.nn.Module):
            def forward(self, X):
                calls.append(1)
                return X * 2
        m = P.register_parametrization(affine(T), "weight", Counting())
        n0 = len(calls)
        with P.cached():
            a, b = m.weight, m.weight
            with P.cached():
                c = m.weight
        d = m.weight
        return len(calls) - n0, a is b, a is c, d is a
    ref, got = same(go)
    assert ref == got == (2, True, True, False)

    m = tl.nn.utils.parametrize.register_parametrization(affine(tl), "weight", scaled(tl))
    clone = copy.deepcopy(m)
    assert type(clone).__name__ == "ParametrizedAffine"
    assert clone.parametrizations.weight.original is not m.parametrizations.weight.original
    np.testing.assert_allclose(clone.weight.detach().numpy(), W, rtol=1e-6)
    same(lambda T: pickle.dumps(T.nn.utils.parametrize.register_parametrization(
        affine(T), "weight", scaled(T))), raises=True)


def test_transfer_parametrizations():
    def go(T):
        P = T.nn.utils.parametrize
        a = P.register_parametrization(affine(T), "weight", scaled(T))
        b = P.transfer_parametrizations_and_params(a, affine(T, W * 0))
        return (keys(b), b.weight, b.parametrizations.weight.original is
                a.parametrizations.weight.original)
    same(go)


# --- parametrizations.weight_norm ---------------------------------------------------------------

def conv_like(T):
    """A module with a 4-D weight (like a Conv2d) used as a matrix."""
    return affine(T, W4.reshape(3, 2, 2, 2), bias=False)


WEIGHT_NORM = [
    # name, builder, dim
    ("linear-dim0", affine, 0),
    ("linear-dim1", affine, 1),
    ("linear-none", affine, None),
    ("conv-dim0", conv_like, 0),
    ("conv-dim2", conv_like, 2),
    ("conv-dim-1", conv_like, -1),
    ("conv-dim3", conv_like, 3),
]


@pytest.mark.parametrize("name,build,dim", cases(WEIGHT_NORM))
def test_weight_norm(name, build, dim):
    def go(T):
        m = T.nn.utils.parametrizations.weight_norm(build(T), dim=dim)
        x = T.tensor(X8[:, :m.weight[0].numel()])
        y = m(x)
        (y * y).sum().backward()
        return (keys(m), repr(m), type(m).__name__, y, m.weight,
                next_names(m.weight.grad_fn), with_grads(m))
    same(go)


def test_weight_norm_loads_legacy_state_dict_and_removes():
    def go(T):
        legacy = {"weight_g": T.ones(4, 1) * 2, "weight_v": T.tensor(W), "bias": T.zeros(4)}
        m = T.nn.utils.parametrizations.weight_norm(affine(T))
        out = m.load_state_dict(legacy)
        res = (repr(out), m.weight)
        T.nn.utils.parametrize.remove_parametrizations(m, "weight")
        return res + (keys(m), m.weight, type(m).__name__)
    same(go)
    same(lambda T: T.nn.utils.parametrizations.weight_norm(affine(T), dim=5), raises=True)


# --- parametrizations.spectral_norm -------------------------------------------------------------

def sn_affine(T, **kw):
    return T.nn.utils.parametrizations.spectral_norm(affine(T), **kw)


SPECTRAL = [
    ("default", lambda T: sn_affine(T)),
    ("3-iters", lambda T: sn_affine(T, n_power_iterations=3)),
    ("dim1", lambda T: sn_affine(T, dim=1)),
    ("conv", lambda T: T.nn.utils.parametrizations.spectral_norm(conv_like(T))),
    ("1-d", lambda T: T.nn.utils.parametrizations.spectral_norm(affine(T), name="bias")),
]


@pytest.mark.parametrize("name,build", cases(SPECTRAL))
def test_spectral_norm(name, build):
    def step(T, m):
        x = T.tensor(X8[:, :m.weight[0].numel()])
        res = [keys(m), repr(m)]
        for _ in range(2):                      # training: u and v move at every read
            y = m(x)
            (y * y).sum().backward()
            res += [y, dict(m.state_dict()), with_grads(m)]
        m.eval()
        frozen = dict(m.state_dict())
        res += [m(x), m.weight, frozen, dict(m.state_dict())]
        res.append(next_names(m.weight.grad_fn) if m.weight.grad_fn is not None else None)
        return res
    run_pair(build, step)


def test_spectral_norm_errors():
    for fn in (lambda T: sn_affine(T, n_power_iterations=0), lambda T: sn_affine(T, dim=2),
               lambda T: T.nn.utils.parametrizations.spectral_norm(affine(T), name="nope")):
        same(fn, raises=True)


# --- parametrizations.orthogonal ----------------------------------------------------------------

ORTHOGONAL = [
    # name, weight, kwargs
    ("default-square", W_SQ, {}),
    ("default-tall", W, {}),
    ("default-wide", W_WIDE, {}),
    ("cayley-wide", W_WIDE, dict(orthogonal_map="cayley")),
    ("householder-no-trivialization", W, dict(orthogonal_map="householder",
                                              use_trivialization=False)),
    ("matrix_exp-no-trivialization", W_SQ, dict(use_trivialization=False)),
]


@pytest.mark.parametrize("name,w,kwargs", cases(ORTHOGONAL))
def test_orthogonal(name, w, kwargs):
    def build(T):
        return T.nn.utils.parametrizations.orthogonal(affine(T, w, bias=False), **kwargs)

    def step(T, m):
        Q = m.weight
        (Q * T.tensor(np.arange(Q.numel(), dtype=np.float32).reshape(Q.shape))).sum().backward()
        return keys(m), repr(m), Q, next_names(Q.grad_fn), with_grads(m)
    run_pair(build, step)


def test_orthogonal_assignment_and_errors():
    def assign(T):
        m = T.nn.utils.parametrizations.orthogonal(affine(T, W_SQ, bias=False))
        m.weight = T.tensor(W_SQ)        # not orthogonal: its QR's Q becomes the base
        return m.weight, m.parametrizations.weight.original, m.parametrizations.weight[0].base
    both(assign, atol=1e-5)

    def assign_no_trivialization(T):
        m = T.nn.utils.parametrizations.orthogonal(affine(T, W_SQ, bias=False),
                                                   use_trivialization=False)
        m.weight = T.eye(3)
    P = lambda T: T.nn.utils.parametrizations  # noqa: E731
    for fn in (assign_no_trivialization,
               lambda T: P(T).orthogonal(affine(T), orthogonal_map="qr"),
               lambda T: P(T).orthogonal(affine(T), name="bias"),
               lambda T: P(T).orthogonal(affine(T), name="nope"),
               lambda T: P(T).orthogonal(affine(T, W.astype(np.complex64)),
                                         orthogonal_map="householder")):
        same(fn, raises=True)


# --- legacy weight_norm and spectral_norm -------------------------------------------------------

@pytest.mark.parametrize("dim", [0, 1, None])
def test_legacy_weight_norm(dim):
    def go(T):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            m = T.nn.utils.weight_norm(affine(T), dim=dim)
        res = [[c.category.__name__ for c in caught], keys(m), repr(m), m.weight,
               type(m.weight).__name__, "weight" in m._parameters]
        with T.no_grad():
            m.weight_v.mul_(2)
        y = m(T.tensor(X))                  # the pre-hook recomputes the weight
        (y * y).sum().backward()
        res += [y, m.weight, next_names(m.weight.grad_fn), with_grads(m)]
        T.nn.utils.remove_weight_norm(m)
        return res + [keys(m), m.weight, type(m.weight).__name__, m(T.tensor(X))]
    same(go)

    def twice(T):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            T.nn.utils.weight_norm(T.nn.utils.weight_norm(affine(T)))
    same(twice, raises=True)
    same(lambda T: T.nn.utils.remove_weight_norm(affine(T)), raises=True)


def test_legacy_spectral_norm():
    def step(T, m):
        x = T.tensor(X)
        res = [keys(m), repr(m), m.state_dict()._metadata[""]]
        for _ in range(2):
            y = m(x)
            (y * y).sum().backward()
            res += [y, m.weight, dict(m.state_dict()), with_grads(m)]
        m.eval()
        res += [m(x), dict(m.state_dict())]
        T.nn.utils.remove_spectral_norm(m)
        return res + [keys(m), m.weight, type(m.weight).__name__, m(x),
                      [type(h).__name__ for h in _hooks(m, T, "state_dict")]]
    run_pair(lambda T: T.nn.utils.spectral_norm(affine(T), n_power_iterations=2), step)
    same(lambda T: T.nn.utils.spectral_norm(T.nn.utils.spectral_norm(affine(T))), raises=True)
    same(lambda T: T.nn.utils.remove_spectral_norm(affine(T)), raises=True)
    same(lambda T: T.nn.utils.spectral_norm(affine(T, bias=False), name="bias"), raises=True)


def _hooks(m, T, kind):
    return list((m._state_dict_hooks if T is torch else m._hooks[kind]).values())


# --- functional_call ----------------------------------------------------------------------------

def mlp(T):
    class MLP(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = affine(T)
            self.b = affine(T, W.T.copy() * 0.5, bias=False)
            self.register_buffer("shift", T.ones(3))

        def forward(self, x, scale=1.0):
            return (self.b(self.a(x).tanh()) + self.shift) * scale
    return MLP()


def fcall(T, *args, **kwargs):
    fn = (T.func.functional_call if T is torch
          else tl.nn.utils.stateless._functional_call)
    return fn(*args, **kwargs)


def test_functional_call():
    def go(T):
        m = mlp(T)
        new = {"a.weight": T.tensor(W * 2, requires_grad=True), "shift": T.zeros(3)}
        y = fcall(T, m, new, (T.tensor(X),), {"scale": 3.0})
        y.sum().backward()
        single = fcall(T, m, ({"b.weight": T.zeros(3, 4)}, {"shift": T.ones(3) * 5}),
                       T.tensor(X))
        return (y, new["a.weight"].grad, m.a.weight.grad, m.a.bias.grad, m.a.weight,
                m.shift, single, next_names(y.grad_fn))
    same(go)

    def deprecated(T):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = T.nn.utils.stateless.functional_call(mlp(T), {"shift": T.zeros(3)},
                                                     T.tensor(X))
        return y, [c.category.__name__ for c in caught]
    same(deprecated)


def test_functional_call_ties_strict_and_errors():
    def tied(T):
        m = mlp(T)
        m.c = m.a                                 # tied: a.weight is also c.weight
        y = fcall(T, m, {"c.weight": T.zeros(4, 3)}, T.tensor(X))
        z = fcall(T, m, {"c.weight": T.zeros(4, 3)}, T.tensor(X), tie_weights=False)
        return y, z
    same(tied)

    def conflicting(T):
        m = mlp(T)
        m.c = m.a
        fcall(T, m, {"a.weight": T.zeros(4, 3), "c.weight": T.ones(4, 3)}, T.tensor(X))
    same(conflicting, raises=True)

    def strict(T):
        fcall(T, mlp(T), {"a.weight": T.zeros(4, 3), "extra": T.ones(1)}, T.tensor(X),
              strict=True)
    same(strict, raises=True)

    def raising_forward_restores(T):
        m = mlp(T)
        w = m.a.weight
        with pytest.raises(RuntimeError) as info:   # a 5x5 weight for 3 features
            fcall(T, m, {"a.weight": T.zeros(5, 5)}, T.tensor(X))
        return str(info.value), m.a.weight is w, "extra" in m.__dict__
    ref, got = same(raising_forward_restores)
    assert ref[1:] == (True, False)

    def new_attribute(T):
        m = mlp(T)
        fcall(T, m, {"extra": T.ones(1)}, T.tensor(X))
        return hasattr(m, "extra")
    same(new_attribute)
    same(lambda T: fcall(T, mlp(T), ({"shift": T.ones(3)}, {"shift": T.ones(3)}), T.tensor(X)),
         raises=True)
    same(lambda T: fcall(T, mlp(T), ({"shift": T.ones(3)}, 3), T.tensor(X)), raises=True)
    same(lambda T: fcall(T, mlp(T), 3, T.tensor(X)), raises=True)
    same(lambda T: fcall(T, mlp(T), {"a.nope.weight": T.ones(3)}, T.tensor(X)), raises=True)


@pytest.mark.parametrize("parametrized", [False, True])
def test_functional_call_under_jax_grad(parametrized):
    """jax.grad of a loss written with functional_call equals .backward() of the same loss."""
    m = mlp(tl)
    if parametrized:
        tl.nn.utils.parametrizations.weight_norm(m.a)
    x = tl.tensor(X)

    def loss_of(params):
        return (fcall(tl, m, params, (x,), {"scale": 2.0}) ** 2).sum()

    params = dict(m.named_parameters())
    loss_of(params).backward()
    expected = {k: p.grad.numpy() for k, p in params.items()}

    def pure(arrays):
        return loss_of({k: tl.Tensor._wrap(a) for k, a in arrays.items()})._value()
    arrays = {k: p.detach()._value() for k, p in params.items()}
    got = jax.jit(jax.grad(pure))(arrays)
    assert set(got) == set(expected)
    for k in expected:
        np.testing.assert_allclose(np.asarray(got[k]), expected[k], rtol=2e-5, atol=1e-6)
    assert all(p is params[k] for k, p in m.named_parameters())   # restored
    assert isinstance(m.shift._value(), jnp.ndarray) and not isinstance(
        m.shift._value(), jax.core.Tracer)


# --- finite differences -------------------------------------------------------------------------

def _f64(a, grad=True):
    return tl.tensor(np.asarray(a, np.float64), requires_grad=grad)


@pytest.mark.parametrize("name,fn,inputs", cases([
    ("weight-norm-fused", lambda v, g: _weight_norm(v, g, 0),
     lambda: (_f64(W), _f64(np.abs(B)[:, None] + 0.5))),
    ("weight-norm-composite", lambda v, g: _weight_norm(v, g, 2),
     lambda: (_f64(W4), _f64(np.ones((1, 1, 2, 1)) * 1.5))),
    ("householder-product", tl.nn.utils.parametrizations.householder_product,
     lambda: (_f64(np.tril(W, -1)), _f64(np.array([1.2, 0.7, 1.5])))),
]))
def test_gradcheck(name, fn, inputs):
    assert tl.autograd.gradcheck(fn, inputs())
