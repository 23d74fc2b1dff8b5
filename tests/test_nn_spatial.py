"""Parity tests for torchlike/_ops/spatial.py against PyTorch: F.pad (every mode), F.interpolate
(every mode, size / scale_factor, align_corners, recompute_scale_factor, antialias) and the
deprecated upsample forms, F.grid_sample, F.affine_grid, pixel_shuffle / pixel_unshuffle /
channel_shuffle.

Spec tables, one row per case: values, dtypes, shapes, grad_fn names and gradients against real
torch (check_op); finite differences in float64 (gradcheck); PyTorch's errors and warnings; the
traced (jax.jit) path.
"""
import warnings

import jax
import numpy as np
import pytest
import torch

import torchlike as tl
from torchlike.testing import to_jax_function

from parity import A, both, cases, check_op, gname, seed_of


def F(T):
    return T.nn.functional


# ------------------------------------------------------------------------------------------------
# pad
# ------------------------------------------------------------------------------------------------

PAD = [
    # name, fn(T, x), input shape
    ("constant_1d", lambda T, x: F(T).pad(x, (1, 2)), (2, 5)),
    ("constant_value", lambda T, x: F(T).pad(x, (1, 1, 2, 0), value=-1.5), (2, 3, 4)),
    ("constant_all_dims", lambda T, x: F(T).pad(x, (1, 1, 0, 1, 2, 0)), (2, 3, 4)),
    ("constant_crop", lambda T, x: F(T).pad(x, (-1, 2, 1, -2)), (2, 3, 4)),
    ("constant_crop_empty", lambda T, x: F(T).pad(x, (-2, -2)), (2, 4)),
    ("constant_list", lambda T, x: F(T).pad(x, [0, 0, 1, 1], "constant", 2.0), (3, 2)),
    ("constant_0d_pad", lambda T, x: F(T).pad(x, ()), (3, 2)),
    ("constant_pad_nd", lambda T, x: T.constant_pad_nd(x, (1, 0), 3.0), (2, 3)),
    ("reflect_1d", lambda T, x: F(T).pad(x, (2, 3), mode="reflect"), (2, 3, 5)),
    ("reflect_1d_unbatched", lambda T, x: F(T).pad(x, (4, 1), mode="reflect"), (2, 5)),
    ("reflect_2d", lambda T, x: F(T).pad(x, (1, 2, 2, 1), mode="reflect"), (1, 2, 3, 4)),
    ("reflect_2d_unbatched", lambda T, x: F(T).pad(x, (1, 0, 0, 2), mode="reflect"), (2, 3, 4)),
    ("reflect_3d", lambda T, x: F(T).pad(x, (1, 1, 2, 0, 1, 2), mode="reflect"), (1, 1, 3, 3, 4)),
    ("reflect_negative", lambda T, x: F(T).pad(x, (1, 0, -1, 3), mode="reflect"), (1, 2, 4, 5)),
    ("reflect_negative_1d", lambda T, x: F(T).pad(x, (2, -1), mode="reflect"), (1, 2, 5)),
    ("replicate_1d", lambda T, x: F(T).pad(x, (3, 1), mode="replicate"), (2, 2, 3)),
    ("replicate_2d", lambda T, x: F(T).pad(x, (2, 2, 1, 3), mode="replicate"), (1, 2, 3, 3)),
    ("replicate_3d", lambda T, x: F(T).pad(x, (1, 2, 0, 1, 2, 1), mode="replicate"),
     (2, 2, 2, 3)),
    ("replicate_negative", lambda T, x: F(T).pad(x, (-1, 2, 1, -1), mode="replicate"),
     (1, 1, 3, 4)),
    ("reflect_value_zero", lambda T, x: F(T).pad(x, (1, 1), "reflect", 0), (1, 2, 3)),
]


@pytest.mark.parametrize("name,fn,shape", cases(PAD))
def test_pad(name, fn, shape):
    check_op(name, fn, [A(shape)])


@pytest.mark.parametrize("dtype", ["float64", "int64", "bool"])
@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate"])
def test_pad_dtypes(mode, dtype):
    unsupported = dtype == "bool" and mode != "constant"     # PyTorch has no bool kernel
    check_op(f"pad_{mode}_{dtype}", lambda T, x: F(T).pad(x, (1, 2, 2, 1), mode),
             [A((1, 3, 4), dtype)], raises=unsupported,
             match=r"^\"(reflection|replication)_pad2d\" not implemented for 'Bool'$")


def test_pad_constant_value_cast():
    # an integer tensor truncates a float fill value; a bool tensor takes its truth
    both(lambda T: F(T).pad(T.arange(4), (1, 1), value=1.7))
    both(lambda T: F(T).pad(T.arange(4), (1, 1), value=-1.7))
    both(lambda T: F(T).pad(T.tensor([True, False]), (1, 1), value=1))


def _check_no_next(name, fn, inputs):
    """check_op without comparing next_functions (circular pad: PyTorch records a chain of
    CopySlices nodes, torchlike one node of that name)."""
    rng = np.random.default_rng(seed_of(name))
    vals = [a.values(rng) for a in inputs]

    def go(T):
        xs = [a.make(T, v) for a, v in zip(inputs, vals)]
        out = fn(T, *xs)
        g = np.random.default_rng(seed_of(name + "/g")).standard_normal(tuple(out.shape))
        out.backward(T.tensor(g, dtype=out.dtype))
        return {"out": out, "grads": [x.grad for x in xs]}

    both(go)


CIRCULAR = [
    ("circular_1d", (1, 2), (2, 2, 5)),
    ("circular_1d_unbatched", (3, 0), (2, 4)),
    ("circular_2d", (1, 2, 2, 1), (1, 2, 3, 4)),
    ("circular_3d", (1, 1, 0, 2, 2, 1), (1, 1, 3, 3, 4)),
    ("circular_full_wrap", (5, 0), (1, 1, 5)),
    ("circular_negative", (2, -1), (1, 2, 5)),
    ("circular_negative_2d", (-1, 2, 1, -2), (1, 1, 4, 5)),
]


@pytest.mark.parametrize("name,pad,shape", cases(CIRCULAR))
def test_pad_circular(name, pad, shape):
    dtype = "float64" if "negative" in name else "float32"
    _check_no_next(f"{name}/{dtype}", lambda T, x: F(T).pad(x, pad, mode="circular"),
                   [A(shape, dtype)])


PAD_ERRORS = [
    # name, fn(T), message pattern
    ("odd_length", lambda T: F(T).pad(T.ones(2, 3), (1,)), "divisible by 2"),
    ("too_long", lambda T: F(T).pad(T.ones(2, 3), (1,) * 6), "padding length 6"),
    ("nd_odd", lambda T: T.constant_pad_nd(T.ones(2, 3), (1,)), "must be even"),
    ("nd_too_long", lambda T: T.constant_pad_nd(T.ones(2, 3), (1,) * 6), "Pad length is 6"),
    ("crop_negative", lambda T: F(T).pad(T.ones(2, 3), (-2, -2)), "non-negative"),
    ("float_pad", lambda T: F(T).pad(T.ones(2, 3), (1.5, 1)), "tuple of ints"),
    ("bad_mode", lambda T: F(T).pad(T.ones(1, 2, 3), (1, 1), mode="foo"),
     "Unrecognised padding mode foo"),
    ("reflect_value", lambda T: F(T).pad(T.ones(1, 2, 3), (1, 1), "reflect", 1.0),
     "doesn't take in value"),
    ("reflect_too_big", lambda T: F(T).pad(T.ones(1, 2, 5), (5, 0), "reflect"),
     r"Argument #4: Padding size should be less than the corresponding input dimension, but "
     r"got: padding \(5, 0\) at dimension 2 of input \[1, 2, 5\]"),
    ("reflect_too_big_h", lambda T: F(T).pad(T.ones(1, 2, 3, 4), (1, 1, 3, 1), "reflect"),
     r"Argument #6: .* padding \(3, 1\) at dimension 2"),
    ("reflect_too_big_d", lambda T: F(T).pad(T.ones(1, 1, 3, 4, 5), (1, 1, 1, 1, 3, 0),
                                             "reflect"), r"Argument #8"),
    ("reflect_rank", lambda T: F(T).pad(T.ones(1, 2, 3, 4), (1, 1), "reflect"),
     "Padding size 2 is not supported for 4D input tensor"),
    ("replicate_rank", lambda T: F(T).pad(T.ones(5), (1, 1), "replicate"),
     "not supported for 1D input"),
    ("circular_rank", lambda T: F(T).pad(T.ones(2, 3, 4), (1,) * 6, "circular"),
     "not supported for 3D input"),
    ("reflect_6d", lambda T: F(T).pad(T.ones(1, 1, 2, 3, 3, 3), (1,) * 6, "reflect"),
     "not supported for 6D"),
    ("reflect_empty", lambda T: F(T).pad(T.ones(1, 0, 4), (1, 1), "reflect"),
     "non-zero dimensions"),
    ("replicate_too_small", lambda T: F(T).pad(T.ones(1, 1, 3), (-2, -2), "replicate"), None),
    ("circular_twice", lambda T: F(T).pad(T.ones(1, 1, 5), (6, 0), "circular"),
     "wrapping around more than once"),
    ("circular_empty", lambda T: F(T).pad(T.ones(1, 1, 3), (-2, -2), "circular"),
     "resulting in an empty dimension"),
]


@pytest.mark.parametrize("name,fn,match", cases(PAD_ERRORS))
def test_pad_errors(name, fn, match):
    both(fn, match=match, raises=True)


# ------------------------------------------------------------------------------------------------
# interpolate
# ------------------------------------------------------------------------------------------------

def _interp(**kw):
    return lambda T, x: F(T).interpolate(x, **kw)


INTERP = [
    # name, fn(T, x), input shape
    ("nearest_1d", _interp(size=7), (1, 2, 4)),
    ("nearest_1d_down", _interp(size=3), (1, 2, 7)),
    ("nearest_2d_scale", _interp(scale_factor=2), (1, 2, 3, 2)),
    ("nearest_2d_scale_same_size", _interp(scale_factor=1.3), (1, 1, 3, 2)),
    ("nearest_2d_scale_near_double", _interp(scale_factor=(2.1, 1.7)), (1, 1, 3, 2)),
    ("nearest_2d_recompute", _interp(scale_factor=(2.1, 1.7), recompute_scale_factor=True),
     (1, 1, 3, 2)),
    ("nearest_3d", _interp(size=(3, 4, 2)), (1, 1, 2, 3, 3)),
    ("nearest_exact_1d", _interp(size=5, mode="nearest-exact"), (1, 2, 3)),
    ("nearest_exact_2d", _interp(scale_factor=0.6, mode="nearest-exact"), (1, 1, 5, 4)),
    ("nearest_exact_3d", _interp(size=(2, 3, 3), mode="nearest-exact"), (1, 1, 3, 2, 4)),
    ("linear", _interp(size=7, mode="linear"), (2, 2, 4)),
    ("linear_align", _interp(size=7, mode="linear", align_corners=True), (2, 2, 4)),
    ("linear_scale", _interp(scale_factor=0.7, mode="linear"), (1, 2, 6)),
    ("linear_scale_same_size", _interp(scale_factor=1.2, mode="linear"), (1, 2, 4)),
    ("bilinear_up", _interp(scale_factor=2, mode="bilinear"), (1, 2, 3, 3)),
    ("bilinear_size", _interp(size=(5, 2), mode="bilinear"), (1, 2, 3, 4)),
    ("bilinear_align", _interp(size=(5, 7), mode="bilinear", align_corners=True), (1, 1, 3, 4)),
    ("bilinear_out_1", _interp(size=(1, 3), mode="bilinear", align_corners=True), (1, 1, 3, 4)),
    ("bilinear_scale_recompute", _interp(scale_factor=1.7, mode="bilinear",
                                         recompute_scale_factor=True), (1, 1, 3, 4)),
    ("bicubic_up", _interp(scale_factor=2.5, mode="bicubic"), (1, 2, 3, 3)),
    ("bicubic_down", _interp(size=(2, 3), mode="bicubic"), (1, 1, 5, 6)),
    ("bicubic_align", _interp(size=(4, 5), mode="bicubic", align_corners=True), (1, 1, 3, 3)),
    ("trilinear", _interp(size=(3, 2, 4), mode="trilinear"), (1, 2, 2, 3, 3)),
    ("trilinear_align", _interp(scale_factor=1.5, mode="trilinear", align_corners=True),
     (1, 1, 2, 2, 3)),
    ("trilinear_scale_same", _interp(scale_factor=(1.095, 3.2, 0.57), mode="trilinear"),
     (1, 1, 3, 2, 4)),
    ("bilinear_aa_down", _interp(size=(3, 2), mode="bilinear", antialias=True), (1, 2, 7, 6)),
    ("bilinear_aa_up", _interp(scale_factor=1.6, mode="bilinear", antialias=True),
     (1, 1, 3, 4)),
    ("bilinear_aa_align", _interp(size=(3, 4), mode="bilinear", antialias=True,
                                  align_corners=True), (1, 1, 8, 6)),
    ("bicubic_aa_down", _interp(scale_factor=0.4, mode="bicubic", antialias=True),
     (1, 2, 9, 8)),
    ("lanczos_aa_down", _interp(size=(4, 3), mode="lanczos", antialias=True), (1, 1, 9, 7)),
]


@pytest.mark.parametrize("name,fn,shape", cases(INTERP))
def test_interpolate(name, fn, shape):
    check_op(name, fn, [A(shape)])


INTERP64 = ["nearest_2d_scale_near_double", "bilinear_align", "bicubic_up", "bicubic_aa_down"]


@pytest.mark.parametrize("name,fn,shape", cases([r for r in INTERP if r[0] in INTERP64]))
def test_interpolate_float64(name, fn, shape):
    check_op(name + "/f64", fn, [A(shape, "float64")])


def test_interpolate_bicubic_same_size_scaled():
    # NOTE: values only: PyTorch's bicubic backward copies the gradient through an axis whose
    # size stays, which disagrees with its own forward (its gradcheck fails); torchlike's
    # gradient is the derivative of the forward.
    check_op("bicubic_same_size", _interp(scale_factor=(1.2, 1.1), mode="bicubic"),
             [A((1, 1, 3, 4), grad=False)])


@pytest.mark.parametrize("mode", ["nearest", "bilinear", "bicubic"])
def test_interpolate_half(mode):
    check_op(f"interp_half_{mode}", _interp(scale_factor=1.5, mode=mode),
             [A((1, 1, 3, 4), "float16", grad=False)])


def test_interpolate_uint8_nearest():
    check_op("interp_uint8", _interp(scale_factor=2), [A((1, 1, 2, 3), "uint8")])


@pytest.mark.parametrize("dim", [1, 2, 3])
def test_interpolate_area(dim):
    shape = (1, 2) + (5, 4, 3)[:dim]
    check_op(f"area{dim}", _interp(size=(3, 2, 2)[:dim], mode="area"), [A(shape)])
    check_op(f"area_scale{dim}", _interp(scale_factor=0.5, mode="area"), [A(shape)])


INTERP_ERRORS = [
    ("both", _interp(size=3, scale_factor=2), "only one of size or scale_factor"),
    ("neither", _interp(), "either size or scale_factor"),
    ("align_nearest", _interp(size=3, align_corners=True),
     "align_corners option can only be set with the interpolating modes"),
    ("recompute_size", _interp(size=3, recompute_scale_factor=True), "not meaningful"),
    ("size_rank", _interp(size=(3, 3, 3)), r"spatial dimensions of \[4, 4\] and output size"),
    ("scale_rank", _interp(scale_factor=(2, 2, 2)), "scale_factor of shape"),
    ("size_float", _interp(size=(2.0, 3)), "expected size to be one of int"),
    ("linear_4d", _interp(size=3, mode="linear"), "Got 4D input, but linear mode needs 3D"),
    ("trilinear_4d", _interp(size=3, mode="trilinear"), "trilinear mode needs 5D"),
    ("bad_mode", _interp(size=3, mode="foo"), r"Only 3D, 4D and 5D .* \(got foo\)"),
    ("antialias_nearest", _interp(size=3, antialias=True), "Anti-alias option is restricted"),
    ("lanczos_no_aa", _interp(size=3, mode="lanczos"), "requires antialias=True"),
    ("lanczos_align", _interp(size=3, mode="lanczos", antialias=True, align_corners=True),
     "does not support align_corners"),
    ("zero_out", _interp(scale_factor=0.1), "Input and output sizes should be greater than 0"),
    ("negative_scale", _interp(scale_factor=-1.0), "should be greater than 0"),
    ("long_bilinear", lambda T, x: F(T).interpolate(x.long(), size=3, mode="bilinear"),
     "not implemented for 'Long'"),
]


@pytest.mark.parametrize("name,fn,match", cases(INTERP_ERRORS))
def test_interpolate_errors(name, fn, match):
    both(lambda T: fn(T, T.ones(1, 2, 4, 4)), match=match, raises=True)


@pytest.mark.parametrize("shape,mode", [((2, 3), "nearest"), ((1, 2, 3, 3, 3, 3), "nearest"),
                                        ((1, 2, 3, 3, 3), "bicubic"), ((1, 2, 3), "bilinear")])
def test_interpolate_rank_errors(shape, mode):
    both(lambda T: F(T).interpolate(T.ones(shape), size=2, mode=mode), match="input", raises=True)


DEPRECATED = [
    ("upsample", lambda T, x: F(T).upsample(x, scale_factor=2, mode="bilinear"),
     "upsample` is deprecated"),
    ("upsample_nearest", lambda T, x: F(T).upsample_nearest(x, size=(3, 5)),
     "upsample_nearest` is deprecated"),
    ("upsample_bilinear", lambda T, x: F(T).upsample_bilinear(x, scale_factor=2),
     "upsample_bilinear` is deprecated"),
]


@pytest.mark.parametrize("name,fn,message", cases(DEPRECATED))
def test_upsample_deprecated(name, fn, message):
    for T in (torch, tl):
        with pytest.warns(UserWarning, match=message):
            fn(T, T.ones(1, 1, 2, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_op(name, fn, [A((1, 2, 2, 3))])


# ------------------------------------------------------------------------------------------------
# grid_sample, affine_grid
# ------------------------------------------------------------------------------------------------

GRID = [
    # name, mode, padding_mode, align_corners: swept over 4-D (and 5-D for bilinear/nearest)
    ("bilinear_zeros", "bilinear", "zeros", False),
    ("bilinear_zeros_align", "bilinear", "zeros", True),
    ("bilinear_border", "bilinear", "border", False),
    ("bilinear_reflection", "bilinear", "reflection", False),
    ("bilinear_reflection_align", "bilinear", "reflection", True),
    ("nearest_zeros", "nearest", "zeros", False),
    ("nearest_border_align", "nearest", "border", True),
    ("nearest_reflection", "nearest", "reflection", False),
    ("bicubic_zeros", "bicubic", "zeros", False),
    ("bicubic_border_align", "bicubic", "border", True),
    ("bicubic_reflection", "bicubic", "reflection", False),
    ("bicubic_reflection_align", "bicubic", "reflection", True),
]


def _grid_fn(mode, padding, align):
    return lambda T, x, g: F(T).grid_sample(x, g, mode, padding, align)


@pytest.mark.parametrize("name,mode,padding,align", cases(GRID))
def test_grid_sample_2d(name, mode, padding, align):
    # grid values in -2..2: some samples fall outside the input (bicubic sums 16 float32 taps
    # in another order than PyTorch: a looser absolute tolerance)
    check_op(f"gs2/{name}", _grid_fn(mode, padding, align),
             [A((2, 2, 3, 4)), A((2, 3, 2, 2))], atol=1e-5 if mode == "bicubic" else None)


@pytest.mark.parametrize("name,mode,padding,align",
                         cases([r for r in GRID if r[1] != "bicubic"][::2]))
def test_grid_sample_3d(name, mode, padding, align):
    check_op(f"gs3/{name}", _grid_fn(mode, padding, align),
             [A((1, 2, 2, 3, 3)), A((1, 2, 2, 2, 3))])


@pytest.mark.parametrize("name,mode,padding,align", cases(GRID[::4]))
def test_grid_sample_float64(name, mode, padding, align):
    check_op(f"gs64/{name}", _grid_fn(mode, padding, align),
             [A((1, 2, 3, 3), "float64"), A((1, 2, 3, 2), "float64")])


class Fixed(A):
    """An input with the given values."""

    def __init__(self, values, dtype="float64"):
        super().__init__(values.shape, dtype)
        self.fixed = values

    def values(self, rng):
        return self.fixed


def test_grid_sample_exact_edges():
    # grid points exactly on the borders and corners (align_corners=True): PyTorch's clip
    # gradient is 0 there
    g = np.array([[[[-1.0, -1.0], [1.0, 1.0], [1.0, -0.5]], [[0.25, 1.0], [-1.0, 0.0],
                                                            [0.0, 0.0]]]])
    for padding in ("border", "reflection"):
        check_op(f"gs_edges/{padding}", _grid_fn("bilinear", padding, True),
                 [A((1, 2, 3, 4), "float64"), Fixed(g)])


def test_grid_sample_default_align_warns():
    for T in (torch, tl):
        with pytest.warns(UserWarning, match="Default grid_sample and affine_grid behavior"):
            F(T).grid_sample(T.ones(1, 1, 2, 2), T.zeros(1, 1, 1, 2))


AFFINE = [
    # name, theta shape, size, align_corners
    ("2d", (2, 2, 3), (2, 3, 4, 5), False),
    ("2d_align", (1, 2, 3), (1, 1, 3, 2), True),
    ("2d_unit", (1, 2, 3), (1, 1, 1, 3), False),
    ("3d", (2, 3, 4), (2, 1, 2, 3, 4), False),
    ("3d_align", (1, 3, 4), (1, 2, 3, 2, 2), True),
]


@pytest.mark.parametrize("name,theta,size,align", cases(AFFINE))
def test_affine_grid(name, theta, size, align):
    dtype = "float64" if "align" in name else "float32"
    check_op(f"ag/{name}/{dtype}", lambda T, t: F(T).affine_grid(t, size, align),
             [A(theta, dtype)])


def test_affine_then_grid_sample():
    def fn(T, x, theta):
        grid = F(T).affine_grid(theta, (2, 2, 3, 3), align_corners=False)
        return F(T).grid_sample(x, grid, align_corners=False)
    check_op("affine_then_sample", fn, [A((2, 2, 4, 4)), A((2, 2, 3), dom="unit")])


GRID_ERRORS = [
    ("mode", lambda T: F(T).grid_sample(T.ones(1, 1, 2, 2), T.zeros(1, 1, 1, 2), "foo",
                                        align_corners=False), "expected mode to be"),
    ("padding", lambda T: F(T).grid_sample(T.ones(1, 1, 2, 2), T.zeros(1, 1, 1, 2),
                                           padding_mode="foo", align_corners=False),
     "expected padding_mode"),
    ("dtype", lambda T: F(T).grid_sample(T.ones(1, 1, 2, 2), T.zeros(1, 1, 1, 2).double(),
                                         align_corners=False), "expected scalar type Float"),
    ("batch", lambda T: F(T).grid_sample(T.ones(1, 1, 2, 2), T.zeros(2, 1, 1, 2),
                                         align_corners=False), "same batch size"),
    ("last_dim", lambda T: F(T).grid_sample(T.ones(1, 1, 2, 2), T.zeros(1, 1, 1, 3),
                                            align_corners=False), "size 2 in last dimension"),
    ("bicubic_5d", lambda T: F(T).grid_sample(T.ones(1, 1, 2, 2, 2), T.zeros(1, 1, 1, 1, 3),
                                              "bicubic", align_corners=False),
     "bicubic interpolation only supports 4D input"),
    ("empty", lambda T: F(T).grid_sample(T.ones(1, 1, 0, 2), T.zeros(1, 1, 1, 2),
                                         align_corners=False), "non-empty spatial dimensions"),
    ("long", lambda T: F(T).grid_sample(T.ones(1, 1, 2, 2).long(), T.zeros(1, 1, 1, 2).long(),
                                        align_corners=False), "not implemented for 'Long'"),
    ("affine_int", lambda T: F(T).affine_grid(T.ones(1, 2, 3).long(), (1, 1, 2, 2), False),
     "floating point type"),
    ("affine_shape", lambda T: F(T).affine_grid(T.ones(1, 2, 3), (1, 1, 2, 2, 2), False),
     "Nx3x4"),
    ("affine_size", lambda T: F(T).affine_grid(T.ones(1, 2, 3), (1, 2, 3), False),
     "only supports 4D and 5D sizes"),
    ("affine_zero", lambda T: F(T).affine_grid(T.ones(1, 2, 3), (1, 1, 0, 2), False),
     "positive output size"),
    ("affine_batch", lambda T: F(T).affine_grid(T.ones(1, 2, 3), (2, 1, 2, 2), False),
     "batch2 tensor"),
]


@pytest.mark.parametrize("name,fn,match", cases(GRID_ERRORS))
def test_grid_errors(name, fn, match):
    both(fn, match=match, raises=True)


# ------------------------------------------------------------------------------------------------
# pixel_shuffle, pixel_unshuffle, channel_shuffle
# ------------------------------------------------------------------------------------------------

SHUFFLE = [
    # name, fn(T, x), input shape: swept over float32 / int64
    ("pixel_shuffle", lambda T, x: F(T).pixel_shuffle(x, 2), (1, 8, 2, 3)),
    ("pixel_shuffle_3", lambda T, x: T.pixel_shuffle(x, 3), (9, 1, 2)),
    ("pixel_shuffle_batch", lambda T, x: F(T).pixel_shuffle(x, 2), (2, 1, 4, 2, 1)),
    ("pixel_shuffle_1", lambda T, x: F(T).pixel_shuffle(x, 1), (1, 2, 2, 2)),
    ("pixel_unshuffle", lambda T, x: F(T).pixel_unshuffle(x, 2), (1, 2, 4, 6)),
    ("pixel_unshuffle_top", lambda T, x: T.pixel_unshuffle(x, 3), (1, 3, 3)),
    ("channel_shuffle", lambda T, x: F(T).channel_shuffle(x, 2), (2, 6, 2, 1)),
    ("channel_shuffle_3d", lambda T, x: T.channel_shuffle(x, 3), (1, 6, 2)),
]


@pytest.mark.parametrize("name,fn,shape", cases(SHUFFLE))
def test_shuffle(name, fn, shape):
    dtype = "int64" if "3" in name else "float32"
    check_op(f"{name}/{dtype}", fn, [A(shape, dtype)])


SHUFFLE_ERRORS = [
    ("ps_rank", lambda T: F(T).pixel_shuffle(T.ones(4, 2), 2), "at least 3 dimensions"),
    ("ps_channels", lambda T: F(T).pixel_shuffle(T.ones(1, 3, 2, 2), 2),
     r"input.size\(-3\)=3 is not divisible by 4"),
    ("ps_factor", lambda T: F(T).pixel_shuffle(T.ones(1, 4, 2, 2), 0), "positive upscale_factor"),
    ("pu_height", lambda T: F(T).pixel_unshuffle(T.ones(1, 4, 3, 2), 2), "height to be divisible"),
    ("pu_width", lambda T: F(T).pixel_unshuffle(T.ones(1, 4, 2, 3), 2), "width to be divisible"),
    ("pu_factor", lambda T: F(T).pixel_unshuffle(T.ones(1, 1, 2, 2), -1),
     "positive downscale_factor"),
    ("cs_rank", lambda T: F(T).channel_shuffle(T.ones(4, 2), 2), r"> 2 dims"),
    ("cs_groups", lambda T: F(T).channel_shuffle(T.ones(1, 3, 2, 2), 2),
     "Got 3 channels and 2 groups"),
    ("cs_zero", lambda T: F(T).channel_shuffle(T.ones(1, 4, 2, 2), 0), "must be positive"),
]


@pytest.mark.parametrize("name,fn,match", cases(SHUFFLE_ERRORS))
def test_shuffle_errors(name, fn, match):
    both(fn, match=match, raises=True)


# ------------------------------------------------------------------------------------------------
# finite differences (float64) and the traced path
# ------------------------------------------------------------------------------------------------

GRADCHECK = [
    ("pad_reflect", lambda x: tl.nn.functional.pad(x, (2, 1, 1, 2), mode="reflect"),
     [(1, 1, 3, 4)]),
    ("pad_circular", lambda x: tl.nn.functional.pad(x, (2, -1), mode="circular"), [(1, 2, 4)]),
    ("bicubic", lambda x: tl.nn.functional.interpolate(x, scale_factor=1.5, mode="bicubic"),
     [(1, 1, 3, 3)]),
    ("bilinear_aa", lambda x: tl.nn.functional.interpolate(x, size=(2, 2), mode="bilinear",
                                                           antialias=True), [(1, 1, 5, 4)]),
    ("grid_sample", lambda x, g: tl.nn.functional.grid_sample(x, g, padding_mode="reflection",
                                                              align_corners=False),
     [(1, 2, 3, 3), (1, 2, 2, 2)]),
    ("grid_sample_bicubic", lambda x, g: tl.nn.functional.grid_sample(
        x, g, mode="bicubic", align_corners=True), [(1, 1, 3, 3), (1, 2, 1, 2)]),
    ("affine_grid", lambda t: tl.nn.functional.affine_grid(t, (1, 1, 2, 3), align_corners=False),
     [(1, 2, 3)]),
]


@pytest.mark.parametrize("name,fn,shapes", cases(GRADCHECK))
def test_gradcheck(name, fn, shapes):
    rng = np.random.default_rng(seed_of(name))
    # grids stay inside (-0.95, 0.95): finite differences need smooth points
    xs = [tl.tensor(rng.uniform(-0.95, 0.95, s), dtype=tl.float64, requires_grad=True)
          for s in shapes]
    assert tl.autograd.gradcheck(fn, xs)


def test_traced():
    def program(x, g):
        F_ = tl.nn.functional
        y = F_.interpolate(F_.pad(x, (1, 1, 1, 1), mode="reflect"), scale_factor=2,
                           mode="bilinear")
        return F_.pixel_shuffle(F_.grid_sample(y, g, align_corners=True), 1)
    rng = np.random.default_rng(0)
    x, g = rng.standard_normal((1, 2, 3, 3)), rng.uniform(-1, 1, (1, 2, 2, 2))
    eager = program(tl.tensor(x), tl.tensor(g)).numpy()
    with jax.enable_x64(True):   # its JAX code reads 64-bit data
        traced = jax.jit(to_jax_function(program))(x, g)
    np.testing.assert_allclose(np.asarray(traced), eager, rtol=1e-12)
    assert gname(F(tl).pad(tl.ones(2, 2, requires_grad=True), (1, 1))) == "ConstantPadNdBackward0"
