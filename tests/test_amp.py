"""Mixed precision against real PyTorch: autocast op by op (every row of the CPU policy table),
whole models forward and backward, GradScaler step by step, and a compiled step against eager.
"""
import zlib

import numpy as np
import pytest
import torch

import torchlike
from torchlike.amp import _policy

def _arr(RNG, kind, shape):
    if kind == "pos":
        return RNG.uniform(0.5, 2.0, shape)
    if kind == "prob":
        return RNG.uniform(0.05, 0.95, shape)
    if kind == "unit":
        return RNG.uniform(-0.9, 0.9, shape)
    if kind == "sign":
        return np.where(RNG.standard_normal(shape) > 0, 1.0, -1.0)
    if kind == "spd":
        a = RNG.standard_normal(shape)
        return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])
    if kind == "wellcond":
        return RNG.standard_normal(shape) + 3 * np.eye(shape[-1])
    return RNG.standard_normal(shape)


# An input: (shape, dtype name, kind); integers: ("int", shape, high).
def F(*shape, kind="n"):
    return (shape, "float32", kind)


def B(*shape, kind="n"):
    return (shape, "bfloat16", kind)


def I(high, *shape):
    return ("int", shape, high)


def _pair(spec, RNG):
    if spec[0] == "int":
        a = RNG.integers(0, spec[2], spec[1])
        return torch.tensor(a), torchlike.tensor(a)
    shape, dt, kind = spec
    a = _arr(RNG, kind, shape).astype(np.float32)
    return (torch.tensor(a).to(getattr(torch, dt)),
            torchlike.tensor(a).to(getattr(torchlike, dt)))


def _lu(t, A, B_):
    LU, piv = t.linalg.lu_factor(A.float())
    return t.linalg.lu_solve(LU, piv, B_)


def _geqrf(t, a):
    q, tau = t.geqrf(a)
    return q.float(), tau.float()


def _unpool(t, x, dims):
    pool = t.nn.functional.max_pool2d if dims == 2 else t.nn.functional.max_pool3d
    unpool = t.nn.functional.max_unpool2d if dims == 2 else t.nn.functional.max_unpool3d
    y, idx = pool(x, 2, return_indices=True)
    return unpool(y, idx, 2)


def _frac(t, x, dims, n):
    samples = t.tensor(np.full((1, 2, dims), 0.5, np.float32))
    f = (t.nn.functional.fractional_max_pool2d if dims == 2 else
         t.nn.functional.fractional_max_pool3d)
    return f(x, 2, output_size=(n,) * dims, _random_samples=samples.to(x.dtype))


# torchlike name of a table row -> (torch code with t for the module, inputs)
CASES = {
    # lower precision
    "conv1d": (lambda t, x, w, b: t.nn.functional.conv1d(x, w, b), [F(2, 3, 8), F(4, 3, 3), F(4)]),
    "conv2d": (lambda t, x, w: t.nn.functional.conv2d(x, w, padding=1),
               [B(1, 2, 6, 6), F(3, 2, 3, 3)]),
    "conv3d": (lambda t, x, w: t.nn.functional.conv3d(x, w), [F(1, 2, 4, 4, 4), F(2, 2, 2, 2, 2)]),
    "conv_transpose1d": (lambda t, x, w: t.nn.functional.conv_transpose1d(x, w, stride=2),
                         [F(1, 3, 5), F(3, 2, 3)]),
    "conv_transpose2d": (lambda t, x, w: t.nn.functional.conv_transpose2d(x, w),
                         [F(1, 2, 4, 4), F(2, 3, 3, 3)]),
    "conv_transpose3d": (lambda t, x, w: t.nn.functional.conv_transpose3d(x, w),
                         [F(1, 2, 3, 3, 3), F(2, 2, 2, 2, 2)]),
    "conv_tbc": (lambda t, x, w, b: t.conv_tbc(x, w, b, 1), [F(5, 2, 3), F(3, 3, 4), F(4)]),
    "bmm": (lambda t, a, b: t.bmm(a, b), [B(2, 3, 4), F(2, 4, 5)]),
    "mm": (lambda t, a, b: t.mm(a, b), [F(3, 4), B(4, 5)]),
    "vecdot": (lambda t, a, b: t.linalg.vecdot(a, b), [F(3, 4), F(3, 4)]),
    "baddbmm": (lambda t, c, a, b: t.baddbmm(c, a, b, beta=0.5),
                [F(2, 3, 5), B(2, 3, 4), F(2, 4, 5)]),
    "addmm": (lambda t, c, a, b: t.addmm(c, a, b), [F(3, 5), F(3, 4), B(4, 5)]),
    "addbmm": (lambda t, c, a, b: t.addbmm(c, a, b), [F(3, 5), F(2, 3, 4), F(2, 4, 5)]),
    "linear": (lambda t, x, w, b: t.nn.functional.linear(x, w, b), [B(2, 3), F(4, 3), F(4)]),
    "matmul": (lambda t, a, b, c: (t.matmul(a, b), t.matmul(c, c), a @ c[:4]),
               [F(2, 3, 4), F(4, 5), F(6)]),
    "prelu": (lambda t, x, w: t.nn.functional.prelu(x, w), [F(2, 3, 4), F(3)]),
    "scaled_dot_product_attention": (
        lambda t, q, k, v: t.nn.functional.scaled_dot_product_attention(q, k, v),
        [F(1, 2, 4, 8), B(1, 2, 4, 8), F(1, 2, 4, 8)]),
    # float32
    "avg_pool3d": (lambda t, x: t.nn.functional.avg_pool3d(x, 2), [B(1, 2, 4, 4, 4)]),
    "binary_cross_entropy": (lambda t, p, y: t.nn.functional.binary_cross_entropy(p, y),
                             [B(4, 3, kind="prob"), F(4, 3, kind="prob")]),
    "grid_sample": (lambda t, x, g: t.nn.functional.grid_sample(x, g, align_corners=False),
                    [B(1, 2, 4, 4), B(1, 3, 3, 2, kind="unit")]),
    "polar": (lambda t, a, b: t.view_as_real(t.polar(a, b)), [B(3, kind="pos"), F(3)]),
    "prod": (lambda t, x: (t.prod(x), x.prod(1)), [B(3, 4, kind="pos")]),
    "quantile": (lambda t, x: t.quantile(x, 0.3), [B(10)]),
    "nanquantile": (lambda t, x: t.nanquantile(x, 0.7, dim=0), [B(10, 2)]),
    "stft": (lambda t, x: t.view_as_real(t.stft(x, 16, return_complex=True, window=t.ones(16))),
             [B(64)]),
    "cdist": (lambda t, a, b: t.cdist(a, b), [B(3, 4), B(5, 4)]),
    "trace": (lambda t, x: t.trace(x), [B(4, 4)]),
    "view_as_complex": (lambda t, x: t.view_as_real(t.view_as_complex(x)), [B(3, 2)]),
    "cholesky": (lambda t, a: t.cholesky(a), [B(3, 3, kind="spd")]),
    "cholesky_inverse": (lambda t, a: t.cholesky_inverse(t.linalg.cholesky(a.float()).to(a.dtype)),
                         [B(3, 3, kind="spd")]),
    "cholesky_solve": (lambda t, b, a: t.cholesky_solve(
        b, t.linalg.cholesky(a.float()).to(b.dtype)),
                       [B(3, 2), B(3, 3, kind="spd")]),
    "inverse": (lambda t, a: t.inverse(a), [B(3, 3, kind="wellcond")]),
    "orgqr": (lambda t, a: t.orgqr(*[v.bfloat16() for v in _geqrf(t, a)]), [F(4, 3)]),
    "ormqr": (lambda t, a, c: t.ormqr(*[v.bfloat16() for v in _geqrf(t, a)], c),
              [F(4, 3), B(4, 2)]),
    "pinverse": (lambda t, a: t.pinverse(a), [B(3, 4)]),
    "max_pool3d": (lambda t, x: t.nn.functional.max_pool3d(x, 2), [B(1, 1, 4, 4, 4)]),
    "max_unpool2d": (lambda t, x: _unpool(t, x, 2), [B(1, 1, 4, 4)]),
    "max_unpool3d": (lambda t, x: _unpool(t, x, 3), [B(1, 1, 4, 4, 4)]),
    "adaptive_avg_pool3d": (lambda t, x: t.nn.functional.adaptive_avg_pool3d(x, 2),
                            [B(1, 2, 4, 4, 4)]),
    "mse_loss": (lambda t, a, b: t.nn.functional.mse_loss(a, b), [B(4, 3), F(4, 3)]),
    "cosine_embedding_loss": (lambda t, a, b, y: t.nn.functional.cosine_embedding_loss(a, b, y),
                              [B(4, 3), B(4, 3), F(4, kind="sign")]),
    "nll_loss": (lambda t, x, y: t.nn.functional.nll_loss(x, y), [B(4, 5), I(5, 4)]),
    "nll_loss2d": (lambda t, x, y: t.nn.functional.nll_loss(x, y), [B(2, 5, 3, 3), I(5, 2, 3, 3)]),
    "hinge_embedding_loss": (lambda t, x, y: t.nn.functional.hinge_embedding_loss(x, y),
                             [B(4, 3), F(4, 3, kind="sign")]),
    "poisson_nll_loss": (lambda t, x, y: t.nn.functional.poisson_nll_loss(x, y),
                         [B(4, 3), F(4, 3, kind="pos")]),
    "smooth_l1_loss": (lambda t, a, b: t.nn.functional.smooth_l1_loss(a, b), [B(4, 3), B(4, 3)]),
    "cross_entropy": (lambda t, x, y: t.nn.functional.cross_entropy(x, y), [B(4, 5), I(5, 4)]),
    "l1_loss": (lambda t, a, b: t.nn.functional.l1_loss(a, b), [B(4, 3), B(4, 3)]),
    "huber_loss": (lambda t, a, b: t.nn.functional.huber_loss(a, b, delta=0.5), [B(4, 3), B(4, 3)]),
    "margin_ranking_loss": (lambda t, a, b, y: t.nn.functional.margin_ranking_loss(a, b, y),
                            [B(4), B(4), F(4, kind="sign")]),
    "soft_margin_loss": (lambda t, x, y: t.nn.functional.soft_margin_loss(x, y),
                         [B(4, 3), F(4, 3, kind="sign")]),
    "triplet_margin_loss": (lambda t, a, p, n: t.nn.functional.triplet_margin_loss(a, p, n),
                            [B(4, 3), B(4, 3), B(4, 3)]),
    "multi_margin_loss": (lambda t, x, y: t.nn.functional.multi_margin_loss(x, y),
                          [B(4, 5), I(5, 4)]),
    "ctc_loss": (lambda t, x, y: t.nn.functional.ctc_loss(
        x.log_softmax(2), y + 1, [6, 6], [3, 2]), [B(6, 2, 4), I(3, 2, 3)]),
    "kl_div": (lambda t, a, b: t.nn.functional.kl_div(a, b, reduction="batchmean"),
               [B(4, 3), F(4, 3, kind="prob")]),
    "multilabel_margin_loss": (lambda t, x, y: t.nn.functional.multilabel_margin_loss(x, y),
                               [B(2, 4), I(4, 2, 4)]),
    "binary_cross_entropy_with_logits": (
        lambda t, x, y: t.nn.functional.binary_cross_entropy_with_logits(x, y),
        [B(4, 3), F(4, 3, kind="prob")]),
    **{f"fft_{n}": ((lambda n: lambda t, x: t.view_as_real(getattr(t.fft, n)(x).resolve_conj()))(n),
                    [B(2, 8)])
       for n in ("fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "rfft2", "rfftn",
                 "ihfft")},
    **{f"fft_{n}": ((lambda n: lambda t, x: getattr(t.fft, n)(t.view_as_complex(x.float())))(n),
                    [F(2, 8, 2)]) for n in ("irfft", "irfft2", "irfftn", "hfft")},
    "linalg_cond": (lambda t, a: t.linalg.cond(a), [B(3, 3, kind="wellcond")]),
    "linalg_matrix_rank": (lambda t, a: t.linalg.matrix_rank(a), [B(3, 4)]),
    "linalg_solve": (lambda t, a, b: t.linalg.solve(a, b), [B(3, 3, kind="wellcond"), F(3, 2)]),
    "linalg_cholesky": (lambda t, a: t.linalg.cholesky(a), [B(3, 3, kind="spd")]),
    "linalg_svdvals": (lambda t, a: t.linalg.svdvals(a), [B(3, 4)]),
    "linalg_eigvals": (lambda t, a: t.view_as_real(t.linalg.eigvals(a)).abs().sort(0).values,
                       [B(3, 3, kind="spd")]),
    "linalg_eigvalsh": (lambda t, a: t.linalg.eigvalsh(a), [B(3, 3, kind="spd")]),
    "linalg_inv": (lambda t, a: t.linalg.inv(a), [B(3, 3, kind="wellcond")]),
    "linalg_householder_product": (
        lambda t, a: t.linalg.householder_product(*[v.bfloat16() for v in _geqrf(t, a)]),
        [F(4, 3)]),
    "linalg_tensorinv": (lambda t, a: t.linalg.tensorinv(a.reshape(4, 2, 2), ind=1),
                         [B(4, 4, kind="wellcond")]),
    "linalg_tensorsolve": (lambda t, a, b: t.linalg.tensorsolve(a.reshape(4, 2, 2), b),
                           [B(4, 4, kind="wellcond"), B(4)]),
    "geqrf": (lambda t, a: tuple(x.abs() for x in t.geqrf(a)), [B(4, 3)]),
    "qr": (lambda t, a: tuple(x.abs() for x in t.qr(a)), [B(4, 3)]),
    "svd": (lambda t, a: t.svd(a)[1], [B(4, 3)]),
    "fractional_max_pool2d": (lambda t, x: _frac(t, x, 2, 3), [B(1, 2, 6, 6)]),
    "fractional_max_pool3d": (lambda t, x: _frac(t, x, 3, 2), [B(1, 2, 4, 4, 4)]),
    "adaptive_max_pool3d": (lambda t, x: t.nn.functional.adaptive_max_pool3d(x, 2),
                            [B(1, 2, 4, 4, 4)]),
    "linalg_qr": (lambda t, a: tuple(x.abs() for x in t.linalg.qr(a)), [B(4, 3)]),
    "linalg_cholesky_ex": (lambda t, a: t.linalg.cholesky_ex(a), [B(3, 3, kind="spd")]),
    "linalg_svd": (lambda t, a: t.linalg.svd(a)[1], [B(4, 3)]),
    "linalg_eig": (lambda t, a: t.view_as_real(t.linalg.eig(a)[0]).abs().sort(0).values,
                   [B(3, 3, kind="spd")]),
    "linalg_eigh": (lambda t, a: t.linalg.eigh(a)[0], [B(3, 3, kind="spd")]),
    "linalg_lstsq": (lambda t, a, b: t.linalg.lstsq(a, b).solution, [B(4, 3), F(4, 2)]),
    "linalg_inv_ex": (lambda t, a: t.linalg.inv_ex(a), [B(3, 3, kind="wellcond")]),
    "mkldnn_rnn_layer": (lambda t, x, h, c, *w: t.lstm(x, (h, c), list(w), True, 1, 0.0, False,
                                                       False, False),
                         [F(3, 2, 4), F(1, 2, 5), F(1, 2, 5), F(20, 4), F(20, 5), F(20), F(20)]),
    # fp32: the pads F.pad reaches
    "reflection_pad1d": (lambda t, x: t.nn.functional.pad(x, (2, 1), mode="reflect"),
                         [B(2, 3, 5)]),
    "reflection_pad2d": (lambda t, x: t.nn.functional.pad(x, (1, 1, 2, 0), mode="reflect"),
                         [B(2, 4, 4)]),
    "replication_pad1d": (lambda t, x: t.nn.functional.pad(x, (1, 2), mode="replicate"),
                          [B(1, 2, 3)]),
    "replication_pad2d": (lambda t, x: t.nn.functional.pad(x, (1, 0, 0, 2), mode="replicate"),
                          [B(1, 2, 3, 3)]),
    "replication_pad3d": (lambda t, x: t.nn.functional.pad(x, (1,) * 6, mode="replicate"),
                          [B(1, 2, 2, 2, 2)]),
    # promote
    "stack": (lambda t, a, b: t.stack([a, b]), [B(2, 3), F(2, 3)]),
    "cat": (lambda t, a, b, c: (t.cat([a, b]), t.cat([a, a])), [B(2, 3), F(2, 3), F(2, 3)]),
    "index_copy": (lambda t, x, s, i: x.index_copy(0, i, s), [F(4, 3), B(2, 3), I(4, 2)]),
}
TOLERANCE = {_policy.LOWER: 2e-2, _policy.FP32: 1e-3, _policy.PROMOTE: 1e-6}


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [y for x in out for y in _flat(x)]
    return [out]


def _torch_bf16_lstm(under_autocast, cast_by_hand):
    """Real PyTorch's values where autocast sends an LSTM to oneDNN in bfloat16, which oneDNN
    cannot build on a CPU without AVX-512 ("could not create a primitive descriptor"). There the
    same bfloat16 LSTM runs in PyTorch's native kernel on operands cast as autocast casts them."""
    try:
        return under_autocast()
    except RuntimeError as e:
        if "could not create a primitive descriptor" not in str(e):
            raise
    with torch.backends.mkldnn.flags(enabled=False):
        return cast_by_hand()


def test_cases_cover_the_cpu_table():
    assert set(CASES) == set(_policy.CPU)


@pytest.mark.parametrize("name", sorted(_policy.CPU))
def test_cpu_autocast_op_like_torch(name):
    fn, specs = CASES[name]
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    pairs = [_pair(s, rng) for s in specs]
    operands = [p[0] for p in pairs]

    def under_autocast():
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return fn(torch, *operands)

    want = _flat(_torch_bf16_lstm(under_autocast, lambda: fn(torch, *[
        x.bfloat16() if x.is_floating_point() else x for x in operands])))
    with torchlike.autocast("cpu", dtype=torchlike.bfloat16):
        got = _flat(fn(torchlike, *[p[1] for p in pairs]))
    tol = TOLERANCE[_policy.CPU[name]]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert str(g.dtype) == str(w.dtype), name
        np.testing.assert_allclose(g.float().numpy(), w.float().numpy(), rtol=tol, atol=tol,
                                   err_msg=name)


# --- whole models, forward and backward -----------------------------------------------------------

def _mlp(T):
    return T.nn.Sequential(T.nn.Linear(8, 16), T.nn.ReLU(), T.nn.Linear(16, 4))


def _cnn(T):
    return T.nn.Sequential(T.nn.Conv2d(2, 4, 3), T.nn.ReLU(), T.nn.MaxPool2d(2), T.nn.Flatten(),
                           T.nn.Linear(36, 4))


def _transformer(T):
    return T.nn.Sequential(T.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True),
                           T.nn.Flatten(), T.nn.Linear(40, 4))


MODELS = {"mlp": (_mlp, (6, 8)), "cnn": (_cnn, (6, 2, 8, 8)),
          "transformer": (_transformer, (6, 5, 8))}


def _copy(ref, model):
    model.load_state_dict({k: torchlike.tensor(v.detach().numpy())
                           for k, v in ref.state_dict().items()})
    return model


def _train_pass(T, model, x, y):
    with T.autocast("cpu", dtype=T.bfloat16):
        out = model(x)
        loss = T.nn.functional.cross_entropy(out, y)
    loss.backward()
    return out, loss


@pytest.mark.parametrize("name", sorted(MODELS))
def test_model_forward_backward_like_torch(name):
    make, shape = MODELS[name]
    torch.manual_seed(0)
    ref = make(torch)
    model = _copy(ref, make(torchlike))
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape).astype(np.float32)
    y = rng.integers(0, 4, shape[0])
    out_r, loss_r = _train_pass(torch, ref, torch.tensor(x), torch.tensor(y))
    out, loss = _train_pass(torchlike, model, torchlike.tensor(x), torchlike.tensor(y))
    assert (str(out.dtype), str(loss.dtype)) == (str(out_r.dtype), str(loss_r.dtype))
    assert ((out.grad_fn.name(), loss.grad_fn.name())
            == (out_r.grad_fn.name(), loss_r.grad_fn.name()))
    np.testing.assert_allclose(out.float().detach().numpy(), out_r.float().detach().numpy(),
                               rtol=3e-2, atol=3e-2)
    np.testing.assert_allclose(loss.item(), loss_r.item(), rtol=2e-2)
    grads = dict(ref.named_parameters())
    for k, p in model.named_parameters():
        assert str(p.grad.dtype) == str(grads[k].grad.dtype) == "torch.float32", k
        scale = float(grads[k].grad.abs().max()) + 1e-3
        np.testing.assert_allclose(p.grad.numpy(), grads[k].grad.numpy(), atol=5e-2 * scale,
                                   rtol=0, err_msg=k)


# --- composites whose PyTorch decomposition reaches a listed op ----------------------------------

# einsum is bfloat16 where PyTorch's pairwise decomposition ends in a bmm (a shared summed label)
EINSUMS = [("ij,jk->ik", (2, 3), (3, 4)), ("ij,jk->ijk", (2, 3), (3, 4)), ("ij->i", (2, 3)),
           ("i,i->", (3,), (3,)), ("i,i->i", (3,), (3,)), ("ij,kl->", (2, 3), (2, 2)),
           ("bij,bjk->bik", (2, 2, 3), (2, 3, 4)), ("...i,...i->...", (2, 3), (2, 3)),
           ("ij,jk->ik", (2, 1), (1, 4)), ("ij,jk,kl->il", (2, 3), (3, 4), (4, 2)),
           ("ij,jk,k->ik", (2, 3), (3, 4), (4,)), ("i,j,k->ijk", (2,), (3,), (2,)),
           ("i,j,ij->", (2,), (3,), (2, 3)), ("ab,bc,cd,de->ae", (2, 3), (3, 2), (2, 4), (4, 2)),
           ("c,b,eb,eab->", (3,), (1,), (3, 1), (3, 2, 1))]


def _region_grads(T, fn, arrays):
    xs = [T.tensor(a, requires_grad=True) for a in arrays]
    with T.autocast("cpu", dtype=T.bfloat16):
        out = fn(T, *xs)
    outs = _flat(out)
    sum(o.float().sum() for o in outs).backward()
    return outs, [x.grad for x in xs]


def _like_torch(fn, arrays, tol=3e-2):
    want, want_g = _region_grads(torch, fn, arrays)
    got, got_g = _region_grads(torchlike, fn, arrays)
    assert [str(g.dtype) for g in got] == [str(w.dtype) for w in want]
    assert [str(g.dtype) for g in got_g] == [str(w.dtype) for w in want_g]
    for g, w in zip(got + got_g, want + want_g):
        w = w.float().detach().numpy()
        np.testing.assert_allclose(g.float().detach().numpy(), w, rtol=tol,
                                   atol=tol * (1 + np.abs(w).max()))


@pytest.mark.parametrize("opt_einsum", [True, False])
def test_einsum_under_autocast_like_torch(opt_einsum):
    """Dtypes, values and gradients; the pairing follows opt_einsum's path or left to right."""
    rng = np.random.default_rng(2)
    try:
        torch.backends.opt_einsum.enabled = torchlike.backends.opt_einsum.enabled = opt_einsum
        for eq, *shapes in EINSUMS if opt_einsum else EINSUMS[-5:]:
            arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
            _like_torch(lambda T, *xs: T.einsum(eq, *xs), arrays)
    finally:
        torch.backends.opt_einsum.enabled = torchlike.backends.opt_einsum.enabled = True


def _recurrent(T, kind):
    kind = kind.split(":")[0]
    if kind.endswith("Cell"):
        return getattr(T.nn, kind)(4, 5)
    if kind == "LSTM_proj":
        return T.nn.LSTM(4, 5, proj_size=3)
    return getattr(T.nn, kind)(4, 5, num_layers=1 + (kind == "GRU"))


def _recurrent_pass(T, layer, x, kind):
    # ":bf16": a bfloat16 input to float32 weights, which autocast accepts
    x = T.tensor(x, dtype=T.bfloat16 if kind.endswith(":bf16") else T.float32,
                 requires_grad=True)
    inp = x[0] if "Cell" in kind else x

    def under_autocast():
        with T.autocast("cpu", dtype=T.bfloat16):
            return layer(inp)

    if T is torch and kind == "LSTM":
        out = _torch_bf16_lstm(under_autocast, lambda: torch.func.functional_call(
            layer, {n: p.bfloat16() for n, p in layer.named_parameters()}, (inp.bfloat16(),)))
    else:
        out = under_autocast()
    outs = _flat(out)
    sum(o.float().sum() for o in outs).backward()
    return outs + [x.grad] + [p.grad for p in layer.parameters()]


@pytest.mark.filterwarnings("ignore:LSTM with projections is not supported with oneDNN")
@pytest.mark.parametrize("kind", ["LSTM", "LSTM_proj", "GRU", "RNN", "LSTMCell", "GRUCell",
                                  "RNNCell", "GRU:bf16", "GRUCell:bf16"])
def test_recurrent_layers_under_autocast_like_torch(kind):
    """Output, h_n, c_n and the gradients of the input and the float32 weights in PyTorch's
    dtypes and values: oneDNN's LSTM all bfloat16, the native kernels by their steps' linear."""
    torch.manual_seed(0)
    ref = _recurrent(torch, kind)
    layer = _copy(ref, _recurrent(torchlike, kind))
    x = np.random.default_rng(3).standard_normal((3, 2, 4)).astype(np.float32)
    want = _recurrent_pass(torch, ref, x, kind)
    got = _recurrent_pass(torchlike, layer, x, kind)
    assert [str(g.dtype) for g in got] == [str(w.dtype) for w in want]
    for g, w in zip(got, want):
        w = w.float().detach().numpy()
        np.testing.assert_allclose(g.float().detach().numpy(), w, rtol=4e-2,
                                   atol=4e-2 * (1 + np.abs(w).max()))


# --- GradScaler ---------------------------------------------------------------------------------

def _scaled_steps(T, scaler, model, opt, batches, clip=None):
    """Steps of the usual loop; yields (loss, scale, tracker, params) after each."""
    for x, y in batches:
        opt.zero_grad()
        with T.autocast("cpu", dtype=T.bfloat16):
            loss = T.nn.functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        if clip is not None:
            scaler.unscale_(opt)
            T.nn.utils.clip_grad_norm_(model.parameters(), clip)
        scaler.step(opt)
        scaler.update()
        yield loss, scaler.get_scale(), scaler._get_growth_tracker(), [
            p.detach().float().numpy().copy() for p in model.parameters()]


def _batches(T, n=5, overflow=(2,)):
    rng = np.random.default_rng(3)
    out = []
    for i in range(n):
        x = rng.standard_normal((6, 8)).astype(np.float32)
        if i in overflow:   # an inf in the batch: every gradient is inf or nan
            x[0, 0] = np.inf
        out.append((T.tensor(x), T.tensor(rng.integers(0, 4, 6))))
    return out


@pytest.mark.parametrize("clip", [None, 1.0])
def test_grad_scaler_steps_like_torch(clip):
    torch.manual_seed(0)
    ref = _mlp(torch)
    model = _copy(ref, _mlp(torchlike))
    kw = dict(init_scale=2.0 ** 4, growth_interval=2)
    opt_r = torch.optim.Adam(ref.parameters(), lr=0.01)
    opt = torchlike.optim.Adam(model.parameters(), lr=0.01)
    s_r, s = torch.amp.GradScaler("cpu", **kw), torchlike.amp.GradScaler("cpu", **kw)
    for (lr, sr, tr, pr), (l, sc, t, p) in zip(
            _scaled_steps(torch, s_r, ref, opt_r, _batches(torch), clip),
            _scaled_steps(torchlike, s, model, opt, _batches(torchlike), clip)):
        assert (sc, t) == (sr, tr)
        for a, b in zip(p, pr):
            np.testing.assert_allclose(a, b, rtol=2e-3, atol=2e-3)
    assert s.state_dict() == s_r.state_dict()
    fresh = torchlike.amp.GradScaler("cpu")
    fresh.load_state_dict(s.state_dict())
    assert fresh.state_dict() == s_r.state_dict()


def test_grad_scaler_errors_and_disabled():
    s = torchlike.amp.GradScaler("cpu")
    opt = torchlike.optim.SGD([torchlike.nn.Parameter(torchlike.ones(2))], lr=0.1)
    with pytest.raises(AssertionError, match="_scale is None"):
        s.step(opt)
    s.scale(torchlike.ones(()))
    s.unscale_(opt)
    with pytest.raises(RuntimeError, match="already been called on this optimizer"):
        s.unscale_(opt)
    off = torchlike.amp.GradScaler("cpu", enabled=False)
    x = torchlike.ones(2)
    assert off.scale(x) is x and off.get_scale() == 1.0 and off.state_dict() == {}
    with pytest.raises(RuntimeError, match="source state dict is empty"):
        torchlike.amp.GradScaler("cpu").load_state_dict({})


def test_compiled_step_with_autocast_and_scaler_equals_eager():
    """An autocast region and a GradScaler inside torchlike.compile: one program, the skip and
    the scale update traced (NOTE [ GradScaler as traced selects ]), equal to eager."""
    from torchlike import compiler

    def run(compiled):
        torchlike.manual_seed(0)
        model = _mlp(torchlike)
        opt = torchlike.optim.Adam(model.parameters(), lr=0.01)
        scaler = torchlike.amp.GradScaler("cpu", init_scale=2.0 ** 4, growth_interval=2)

        def step(x, y):
            opt.zero_grad()
            with torchlike.autocast("cpu", dtype=torchlike.bfloat16):
                loss = torchlike.nn.functional.cross_entropy(model(x), y)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            return loss

        fn = torchlike.compile(step, fullgraph=True) if compiled else step
        seen = []
        # the first (eager) and second (traced) calls overflow: Adam's state is made inside
        # the trace, and kept at its initial values
        for x, y in _batches(torchlike, n=6, overflow=(0, 1, 4)):
            loss = fn(x, y)
            seen.append((loss.dtype, scaler._scale.clone(), scaler._growth_tracker.clone(),
                         [p.detach().clone() for p in model.parameters()]))
        return seen

    compiler.reset()
    eager, compiled = run(False), run(True)
    # two programs: the first traced call creates Adam's state (the eager first call, skipped,
    # made none), and the next call captures it; the scale's changes recompile nothing
    assert compiler.counters["compiles"] == 2
    for (d1, s1, t1, p1), (d2, s2, t2, p2) in zip(eager, compiled):
        assert d1 is d2 is torchlike.float32
        assert (s1.item(), t1.item()) == (s2.item(), t2.item())
        for a, b in zip(p1, p2):
            # bfloat16 roundings may sit elsewhere once XLA fuses the whole step
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-3, atol=2e-4)
    assert [s.item() for _, s, _, _ in eager] == [8.0, 4.0, 4.0, 8.0, 4.0, 4.0]


# --- regions: nesting, decorator, switches, the weight cache, custom_fwd / custom_bwd ----------

def _error(fn):
    try:
        return fn().dtype
    except RuntimeError as e:
        return str(e)


def _region_trace(T):
    """What a script sees of autocast's state and dtypes through nested regions."""
    a, w = T.ones(2, 3), T.ones(4, 3, requires_grad=True)
    seen = [T.is_autocast_enabled("cpu"), T.get_autocast_dtype("cpu"), T.get_autocast_dtype("cuda")]

    @T.autocast("cpu")
    def decorated(x):
        return T.nn.functional.linear(x, w).dtype

    with T.autocast("cpu", dtype=T.bfloat16):
        seen += [T.is_autocast_enabled("cpu"), T.is_autocast_enabled(), T.mm(a, w.t()).dtype]
        with T.autocast("cpu", enabled=False):
            seen += [T.is_autocast_enabled("cpu"), T.mm(a, w.t()).dtype]
        with T.autocast("cpu", dtype=T.float16):
            seen += [T.get_autocast_dtype("cpu"), T.mm(a, w.t()).dtype,
                     _error(lambda: T.cat([a.half(), a.bfloat16()]))]
        seen += [T.mm(a.double(), w.double().t()).dtype, T.cat([a, a.bfloat16()]).dtype]
        seen += [T.is_autocast_cache_enabled()]
    seen += [decorated(a), T.is_autocast_enabled("cpu"), T.get_autocast_dtype("cpu")]
    with T.autocast("cpu", cache_enabled=False):
        seen += [T.is_autocast_cache_enabled()]
    with pytest.warns(UserWarning, match="target dtype is not supported"):
        with T.autocast("cpu", dtype=T.float64):
            seen += [T.is_autocast_enabled("cpu")]
    with pytest.warns(UserWarning, match="CUDA is not available"):
        with T.autocast("cuda"):
            seen += [T.is_autocast_enabled("cuda")]
    for bad, kw in (("foo", {}), (1, {})):
        try:
            T.autocast(bad, **kw)
        except (RuntimeError, ValueError) as e:
            seen.append((type(e).__name__, str(e)))
    return [str(s) for s in seen]


def test_regions_like_torch():
    assert _region_trace(torchlike) == _region_trace(torch)
    with pytest.warns(FutureWarning, match=r"torch.cpu.amp.autocast\(args...\)` is deprecated"):
        assert torchlike.cpu.amp.autocast().fast_dtype is torchlike.bfloat16
    with pytest.warns(FutureWarning, match=r"torch.cuda.amp.autocast\(args...\)` is deprecated"):
        with pytest.warns(UserWarning, match="CUDA is not available"):
            assert torchlike.cuda.amp.autocast().fast_dtype is torchlike.float16


def test_weight_cast_cache_within_a_region():
    """A float32 leaf weight is cast once per outermost region (PyTorch's heuristic), and the
    cast is recorded: its gradient is float32 and sums both uses."""
    w = torchlike.randn(3, 3, requires_grad=True)
    x = torchlike.randn(2, 3)
    with torchlike.autocast("cpu"):
        a, b = torchlike.mm(x, w), torchlike.mm(x + 1, w)
        assert a.grad_fn.next_functions[1][0] is b.grad_fn.next_functions[1][0]
        assert a.grad_fn.next_functions[1][0].name() == "ToCopyBackward0"
    with torchlike.autocast("cpu"):
        c = torchlike.mm(x, w)
    assert c.grad_fn.next_functions[1][0] is not a.grad_fn.next_functions[1][0]
    with torchlike.autocast("cpu", cache_enabled=False):
        d, e = torchlike.mm(x, w), torchlike.mm(x, w)
        assert d.grad_fn.next_functions[1][0] is not e.grad_fn.next_functions[1][0]
    (a.float().sum() + b.float().sum()).backward()
    assert w.grad.dtype is torchlike.float32


def _custom_fn(T):
    class Square(T.autograd.Function):
        @staticmethod
        @T.amp.custom_fwd(device_type="cpu", cast_inputs=T.float32)
        def forward(ctx, x, w):
            ctx.save_for_backward(x, w)
            ctx.inside = (T.is_autocast_enabled("cpu"), x.dtype, T.mm(x, w).dtype)
            return T.mm(x, w)

        @staticmethod
        @T.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            x, w = ctx.saved_tensors
            ctx.backward_saw = T.is_autocast_enabled("cpu")
            return g @ w.t(), x.t() @ g

    x = T.ones(2, 3, dtype=T.bfloat16, requires_grad=True)
    w = T.ones(3, 2, requires_grad=True)
    with T.autocast("cpu"):
        y = Square.apply(x, w)
    y.sum().backward()
    return [str(v) for v in (y.dtype, y.grad_fn.inside, x.grad.dtype, w.grad.dtype,
                             y.grad_fn.backward_saw)]


def test_custom_fwd_bwd_like_torch():
    assert _custom_fn(torchlike) == _custom_fn(torch)


def test_compiled_step_guards_the_autocast_region_around_it():
    """A step compiled outside any region and called inside one (or the other way round) is
    traced again: the casts are baked into its program."""
    from torchlike import compiler
    compiler.reset()
    lin = torchlike.nn.Linear(3, 2)
    step = torchlike.compile(lambda x: lin(x).detach(), fullgraph=True)
    x = torchlike.ones(4, 3)
    dtypes = []
    for region in (False, False, True, True, False):
        with torchlike.autocast("cpu", enabled=region):
            dtypes.append(step(x).dtype)
    assert dtypes == [torchlike.float32] * 2 + [torchlike.bfloat16] * 2 + [torchlike.float32]
    assert (compiler.counters["compiles"], compiler.counters["calls"]) == (2, 4)


def _inplace_and_out(T):
    """In-place and out= variants of listed ops are not autocast, in PyTorch and here."""
    a, b, c = T.ones(2, 3) / 3, T.ones(3, 4) / 7, T.ones(2, 4)
    o = T.empty(2, 4)
    with T.autocast("cpu"):
        c.addmm_(a, b)
        T.mm(a, b, out=o)
        r = T.mm(a, b)
    return [(str(t.dtype), t.float().sum().item()) for t in (c, o, r)]


def test_inplace_and_out_are_not_cast_like_torch():
    got, want = _inplace_and_out(torchlike), _inplace_and_out(torch)
    assert [g[0] for g in got] == [w[0] for w in want]
    np.testing.assert_allclose([g[1] for g in got], [w[1] for w in want], rtol=1e-6)
