"""Strides of elementwise results (torchlike/_layout.py) against real PyTorch.

An elementwise op on permuted, sliced, broadcast or expanded inputs lays its output out as
PyTorch's TensorIterator does; ``stride()``, ``is_contiguous()`` and ``view()`` then agree.
"""
import numpy as np
import pytest
import torch

import torchlike as tl

from parity import cases

# Input layouts: fn(T, base) with base a (2, 3, 4) float tensor built from the same numbers.
LAYOUTS = [
    ("contiguous", lambda T, x: x),
    ("transposed", lambda T, x: x.transpose(0, 2)),
    ("permuted", lambda T, x: x.permute(1, 2, 0)),
    ("permuted2", lambda T, x: x.permute(2, 0, 1)),
    ("mT", lambda T, x: x.mT),
    ("sliced_step", lambda T, x: x[:, :, ::2]),
    ("sliced_permuted", lambda T, x: x.permute(2, 1, 0)[::2]),
    ("select", lambda T, x: x.transpose(1, 2)[0]),
    ("unsqueezed", lambda T, x: x.transpose(0, 2)[:, None]),
    ("size_one_dims", lambda T, x: x[:1].permute(2, 0, 1)),
    ("size_one_odd_stride", lambda T, x: x.transpose(0, 2)[:, :, ::2]),
    ("expanded", lambda T, x: x[:, :1].expand(2, 3, 4)),
    ("diagonal_like", lambda T, x: x[0, :, :3].t()),
]

# Ops: fn(T, a) on one laid-out input a, partners built inside with torch's/torchlike's API.
OPS = [
    ("exp", lambda T, a: a.exp()),
    ("add_scalar", lambda T, a: a + 1),
    ("mul_self", lambda T, a: a * a),
    ("gt", lambda T, a: a > 0),
    ("where", lambda T, a: T.where(a > 0, a, 0.0)),
    ("clamp", lambda T, a: a.clamp(-0.5, 0.5)),
    ("add_contiguous", lambda T, a: a + T.ones(a.shape, dtype=a.dtype)),
    ("contiguous_add", lambda T, a: T.ones(a.shape, dtype=a.dtype) + a),
    ("add_broadcast_row", lambda T, a: a + T.ones(a.shape[-1], dtype=a.dtype)),
    ("add_broadcast_lead", lambda T, a: a[None] + T.ones((2,) + (1,) * a.ndim, dtype=a.dtype)),
    ("atan2", lambda T, a: T.atan2(a, a + 2)),
    ("lerp", lambda T, a: T.lerp(a, a * 2, 0.3)),
    ("round", lambda T, a: a.round()),
    ("pow_scalar", lambda T, a: a.pow(2)),
    ("mul_0dim", lambda T, a: a * T.tensor(2.0)),
    # composites of ATen's Scalar overloads (MulBackward1, AddBackward1): elementwise too
    ("ndtr", lambda T, a: T.special.ndtr(a / 8)),
    ("margin_ranking_loss", lambda T, a: T.nn.functional.margin_ranking_loss(
        a, a * 2, a * 0 + 1, reduction="none")),
]


def _pair(layout):
    base = np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 11.5
    return layout(torch, torch.tensor(base)), layout(tl, tl.tensor(base))


@pytest.mark.parametrize("lname,layout", cases(LAYOUTS))
@pytest.mark.parametrize("oname,op", cases(OPS))
def test_elementwise_strides(lname, layout, oname, op):
    ta, la = _pair(layout)
    assert la.stride() == ta.stride(), "the layout itself differs"
    ref, got = op(torch, ta), op(tl, la)
    assert got.stride() == ref.stride(), (lname, oname, ref.stride(), got.stride())
    assert got.is_contiguous() == ref.is_contiguous()
    np.testing.assert_allclose(np.asarray(got.numpy()), ref.numpy(), rtol=1e-6)


@pytest.mark.parametrize("lname,layout", cases(LAYOUTS))
def test_strides_with_grad_and_inplace(lname, layout):
    """The recorded path (wrap_outputs) and in-place ops keep the same layout."""
    ta, la = _pair(layout)
    ta, la = ta.clone().requires_grad_(), la.clone().requires_grad_()
    assert (la * 2).stride() == (ta * 2).stride()
    tb, lb = layout(torch, torch.ones(2, 3, 4)), layout(tl, tl.ones(2, 3, 4))
    tb = tb.clone() if lname == "expanded" else tb
    lb = lb.clone() if lname == "expanded" else lb
    assert lb.add_(1).stride() == tb.add_(1).stride()


def test_view_of_a_permuted_result_fails_like_torch():
    t, x = torch.ones(3, 4).t() + 1, tl.ones(3, 4).t() + 1
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        t.view(-1)
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        x.view(-1)
    assert x.reshape(-1).tolist() == t.reshape(-1).tolist()


# Copies: fn(T, a) -> a copy whose layout follows memory_format (preserve_format by default).
COPIES = [
    ("clone", lambda T, a: a.clone()),
    ("clone_contiguous", lambda T, a: a.clone(memory_format=T.contiguous_format)),
    ("contiguous", lambda T, a: a.contiguous()),
    ("to_double", lambda T, a: a.to(T.float64)),
    ("double", lambda T, a: a.double()),
    ("zeros_like", lambda T, a: T.zeros_like(a)),
    ("empty_like", lambda T, a: T.empty_like(a)),
    ("full_like", lambda T, a: T.full_like(a, 2.0)),
    ("ones_like_contiguous", lambda T, a: T.ones_like(a, memory_format=T.contiguous_format)),
]


@pytest.mark.parametrize("lname,layout", cases(LAYOUTS))
@pytest.mark.parametrize("cname,copy", cases(COPIES))
def test_copy_strides(lname, layout, cname, copy):
    ta, la = _pair(layout)
    ref, got = copy(torch, ta), copy(tl, la)
    assert got.stride() == ref.stride(), (lname, cname, ref.stride(), got.stride())
    assert got.is_contiguous() == ref.is_contiguous()


CHANNELS_LAST = [
    ("to_channels_last", lambda T, x: x.to(memory_format=T.channels_last)),
    ("contiguous_channels_last", lambda T, x: x.contiguous(memory_format=T.channels_last)),
    ("clone_channels_last", lambda T, x: x.clone(memory_format=T.channels_last)),
    ("then_add", lambda T, x: x.contiguous(memory_format=T.channels_last) + 1),
    ("then_clone", lambda T, x: x.contiguous(memory_format=T.channels_last).clone()),
    ("then_contiguous", lambda T, x: x.contiguous(memory_format=T.channels_last).contiguous()),
    ("then_slice_clone", lambda T, x: x.contiguous(memory_format=T.channels_last)[:, :, ::2]
     .clone()),
    ("5d_channels_last_3d", lambda T, x: x[None].contiguous(memory_format=T.channels_last_3d)),
]


@pytest.mark.parametrize("name,fn", cases(CHANNELS_LAST))
def test_channels_last(name, fn):
    ref, got = fn(torch, torch.ones(2, 3, 4, 5)), fn(tl, tl.ones(2, 3, 4, 5))
    assert got.stride() == ref.stride()
    for fmt in ("contiguous_format", "channels_last", "channels_last_3d"):
        assert got.is_contiguous(memory_format=getattr(tl, fmt)) == ref.is_contiguous(
            memory_format=getattr(torch, fmt))


def test_memory_format_errors_and_repr():
    assert repr(tl.channels_last) == repr(torch.channels_last) == "torch.channels_last"
    assert repr(tl.preserve_format) == "torch.preserve_format"
    for T in (torch, tl):
        with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last"):
            T.ones(2, 3).contiguous(memory_format=T.channels_last)
        x = T.ones(2, 3)
        assert x.contiguous(memory_format=T.preserve_format) is x
        with pytest.raises(RuntimeError, match="preserve memory format is unsupported"):
            x.t().contiguous(memory_format=T.preserve_format)
