"""Parity tests for the torch-namespace functions and Tensor methods added for API coverage
(scripts/api_coverage.py): one or a few rows per name against real torch (values, dtypes, shapes,
grad_fn names and gradients through check_op / both from parity), error rows compared
by type and message.
"""
import importlib.util
import pathlib
import pickle

import numpy as np
import pytest
import torch

import torchlike as tl

from parity import A, both, cases, check_op, seed_of

M, V3, V4, S0 = (3, 4), (3,), (4,), ()

OPS = [
    # name, fn(T, *inputs), inputs
    ("cartesian_prod", lambda T, a, b: T.cartesian_prod(a, b), [A(V3), A((2,))]),
    ("cartesian_prod_3", lambda T, a, b: T.cartesian_prod(a, b, a), [A(V3), A((2,))]),
    ("cartesian_prod_int", lambda T, a: T.cartesian_prod(a, a), [A(V3, "int64")]),
    ("combinations", lambda T, a: T.combinations(a), [A(V4)]),
    ("combinations_r3", lambda T, a: T.combinations(a, 3), [A(V4)]),
    ("combinations_repl", lambda T, a: T.combinations(a, 2, with_replacement=True), [A(V3)]),
    ("combinations_0", lambda T, a: T.combinations(a, 0), [A(V3)]),
    ("block_diag", lambda T, a, b, c: T.block_diag(a, b, c), [A(M), A(V3), A(S0)]),
    ("block_diag_promote", lambda T, a, b: T.block_diag(a, b), [A((2, 2), "int64"), A(V3)]),
    ("block_diag_f64", lambda T, a, b: T.block_diag(a, b), [A((2, 1)), A((1, 2), "float64")]),
    ("block_diag_empty", lambda T: T.block_diag(), []),
    ("cov", lambda T, x: T.cov(x), [A(M)]),
    ("cov_1d", lambda T, x: x.cov(correction=0), [A(V4)]),
    ("cov_int", lambda T, x: T.cov(x), [A(M, "int64")]),
    ("cov_weights", lambda T, x, fw, aw: T.cov(x, fweights=fw, aweights=aw),
     [A(M, "float64"), A(V4, "int64", "small"), A(V4, "float64", "pos", grad=False)]),
    ("cov_complex", lambda T, x: T.cov(T.complex(x, x.flip(0))), [A(M)]),
    ("corrcoef", lambda T, x: T.corrcoef(x), [A(M)]),
    ("corrcoef_1d", lambda T, x: x.corrcoef(), [A(V4, "float64")]),
    ("isin", lambda T, x, y: T.isin(x, y), [A(M, "int64"), A(V4, "int64")]),
    ("isin_promote", lambda T, x, y: T.isin(x, y, invert=True), [A(M, "int64"), A(V3)]),
    ("isin_numbers", lambda T, x: [T.isin(2, x), T.isin(x, 2)], [A(M, "int64")]),
    ("hann_window", lambda T: [T.hann_window(n, p) for n in (0, 1, 2, 7) for p in (True, False)],
     []),
    ("hamming_window", lambda T: [T.hamming_window(8), T.hamming_window(
        7, False, 0.5, 0.3, dtype=T.float64)], []),
    ("blackman_window", lambda T: [T.blackman_window(8), T.blackman_window(
        7, False, dtype=T.float64)], []),
    ("bartlett_window", lambda T: [T.bartlett_window(8), T.bartlett_window(7, False)], []),
    ("kaiser_window", lambda T: [T.kaiser_window(8), T.kaiser_window(7, False, 4.0),
                                 T.kaiser_window(5, dtype=T.float64)], []),
    ("window_requires_grad", lambda T: T.hann_window(4, requires_grad=True), []),
    ("deg2rad", lambda T, x: T.deg2rad(x), [A(M)]),
    ("deg2rad_int", lambda T, x: x.deg2rad(), [A(M, "int64")]),
    ("deg2rad_", lambda T, x: x.clone().deg2rad_(), [A(M, "float64")]),
    ("rad2deg", lambda T, x: x.rad2deg(), [A(M)]),
    ("positive", lambda T, x: [T.positive(x), x.positive() is x], [A(M)]),
    ("frexp", lambda T, x: list(T.frexp(x * 100)), [A(M)]),
    ("frexp_fields", lambda T, x: [type(x.frexp()).__name__, x.frexp().mantissa,
                                   x.frexp().exponent], [A(M, "float64")]),
    ("frexp_edges", lambda T: [tuple(T.frexp(T.tensor(
        [0., -0., 1e-40, -3e-39, 1e-45, 1.5, float("inf"), float("nan")], dtype=dt)))
        for dt in (T.float32, T.float64, T.float16)], []),
    ("float_power", lambda T, x: T.float_power(x, 2), [A(M, dom="pos")]),
    ("float_power_tensor", lambda T, x, y: x.float_power(y), [A(M, dom="pos"), A(V4)]),
    ("float_power_int_base", lambda T, y: T.float_power(2, y), [A(V4)]),
    ("float_power_complex", lambda T, x: T.float_power(x, 0.5j), [A(V4, dom="pos")]),
    ("float_power_", lambda T, x: x.clone().float_power_(3), [A(V4, "float64")]),
    ("ldexp", lambda T, x, e: T.ldexp(x, e), [A(M), A(V4, "int64")]),
    ("ldexp_float_exp", lambda T, x, e: x.ldexp(e), [A(M, "float16", grad=False), A(V4)]),
    ("ldexp_", lambda T, x, e: x.clone().ldexp_(e), [A(M, "float64"), A(V4)]),
    ("logaddexp2", lambda T, a, b: T.logaddexp2(a, b), [A(M), A(V4, "float64")]),
    ("nextafter", lambda T, a, b: T.nextafter(a, b), [A(M), A(V4)]),
    ("nextafter_", lambda T, a, b: a.clone().nextafter_(b), [A(M, "float64"), A(V4, "float64")]),
    ("gcd_lcm", lambda T, a, b: [T.gcd(a, b), a.lcm(b), a.clone().gcd_(b)],
     [A(M, "int64"), A(V4, "int64")]),
    ("gcd_promote", lambda T, a, b: T.gcd(a, b), [A(M, "uint8"), A(V4, "int32")]),
    ("aliases", lambda T, a, b: [T.divide(a, b), T.multiply(a, b), T.subtract(a, b, alpha=2),
                                 T.greater(a, b), T.greater_equal(a, b), T.less(a, b),
                                 T.less_equal(a, b), T.not_equal(a, b)], [A(M), A(V4)]),
    ("comparison_methods", lambda T, a, b: [a.greater_equal(b), a.less_equal(b), a.not_equal(b),
                                            a.clone().greater_(b), a.clone().less_(b),
                                            a.clone().not_equal_(b)],
     [A(M, grad=False), A(V4, grad=False)]),
    ("renorm", lambda T, x: T.renorm(x, 2, 0, 1.5), [A(M)]),
    ("renorm_p1_dim1", lambda T, x: x.renorm(1, -1, 2.0), [A(M, "float64")]),
    ("renorm_", lambda T, x: x.clone().renorm_(3, 1, 1.0), [A(M)]),
    ("dist", lambda T, a, b: T.dist(a, b), [A(M), A(V4)]),
    ("dist_p", lambda T, a, b: [a.dist(b, 1), a.dist(b, float("inf")), T.dist(a, b, 0)],
     [A(M, "float64"), A(V4, "float64")]),
    ("adjoint", lambda T, x: T.adjoint(x), [A(M)]),
    ("adjoint_complex", lambda T, x: x.adjoint().resolve_conj(), [A((2, 3, 4), "complex64")]),
    ("H_mH", lambda T, x: [x.H.resolve_conj(), x.mH.resolve_conj()], [A(M, "complex128")]),
    ("H_real", lambda T, x: x.H, [A(M)]),
    ("ravel", lambda T, x: T.ravel(x), [A(M)]),
    ("ravel_transposed", lambda T, x: x.t().ravel(), [A(M)]),
    ("unsafe_split", lambda T, x: T.unsafe_split(x, 3, 1)[1], [A(M)]),
    ("unsafe_chunk", lambda T, x: [p.add_(1) for p in x.unsafe_chunk(2)][0], [A((4, 3))]),
    ("select_scatter", lambda T, x, s: T.select_scatter(x, s, 0, -1), [A(M), A(V4)]),
    ("select_scatter_cast", lambda T, x, s: T.select_scatter(x, s, 1, 2), [A(M), A(V3, "float64")]),
    ("slice_scatter", lambda T, x, s: T.slice_scatter(x, s, 1, 0, 4, 2), [A(M), A((3, 2))]),
    ("slice_scatter_default", lambda T, x, s: x.slice_scatter(s, start=-2), [A(M), A((2, 4))]),
    ("diagonal_scatter", lambda T, x, s: T.diagonal_scatter(x, s, 1), [A(M), A(V3)]),
    ("diagonal_scatter_dims", lambda T, x, s: x.diagonal_scatter(s, -1, 2, 0),
     [A((2, 3, 4)), A((3, 2))]),
    ("nonzero_static", lambda T, x: [T.nonzero_static(x, size=2), x.nonzero_static(size=20),
                                     T.nonzero_static(x, size=30, fill_value=-7)],
     [A(M, "int64")]),
    ("nonzero_static_0d", lambda T: T.nonzero_static(T.tensor(3), size=2), []),
    ("unravel_index", lambda T, x: T.unravel_index(x.abs(), (2, 3)), [A(M, "int64")]),
    ("unravel_index_int", lambda T: T.unravel_index(T.tensor(17), 5), []),
    ("vander", lambda T, x: T.vander(x), [A(V4, grad=False)]),
    ("vander_increasing", lambda T, x: T.vander(x, 3, True), [A(V4, "float64", grad=False)]),
    ("vander_int", lambda T, x: [T.vander(x, 2), T.vander(x, 0), T.vander(x > 0)],
     [A(V4, "int32")]),
    ("result_type", lambda T, x, i: [T.result_type(x, 2), T.result_type(i, 2.5),
                                     T.result_type(1, 2), T.result_type(i.byte(), -1)],
     [A(M), A(V4, "int64")]),
    ("can_cast", lambda T: [T.can_cast(a, b) for a in (T.float, T.int64, T.bool, T.complex64)
                            for b in (T.int32, T.float16, T.bool, T.complex128)], []),
    ("is_nonzero", lambda T: [T.is_nonzero(T.tensor([0.5])), T.is_nonzero(T.tensor(0))], []),
    ("is_signed", lambda T: [T.ones(1, dtype=d).is_signed() for d in (
        T.float32, T.int8, T.uint8, T.bool, T.complex64)], []),
    ("native_channel_shuffle", lambda T, x: T.native_channel_shuffle(x, 2),
     [A((2, 4, 3), grad=False)]),
    ("polygamma", lambda T, x: [T.polygamma(1, x), x.polygamma(2)], [A(M, dom="pos")]),
    ("polygamma_", lambda T, x: x.clone().polygamma_(1), [A(M, dom="pos")]),
    ("mvlgamma", lambda T, x: [T.mvlgamma(x + 2, 2), x.add(3).mvlgamma_(3)], [A(M, dom="pos")]),
    ("igamma", lambda T, a, b: [T.igamma(a, b), a.igammac(b)],
     [A(M, dom="pos", grad=False), A(V4, dom="pos")]),
    ("histogram", lambda T, x: list(T.histogram(x, 5)), [A((20,), grad=False)]),
    ("histogram_options", lambda T, x, w: list(x.histogram(4, range=(-1.0, 1.5), weight=w,
                                                           density=True)),
     [A((4, 5), "float64", grad=False), A((4, 5), "float64", "pos", grad=False)]),
    ("histogram_edges", lambda T, x: list(T.histogram(x, T.tensor([-2.0, 0.0, 0.5, 2.0]))),
     [A((20,), grad=False)]),
    ("histogram_constant", lambda T: list(T.histogram(T.ones(3), 2)), []),
    ("histogramdd", lambda T, x: [T.histogramdd(x, [2, 3]).hist,
                                  list(T.histogramdd(x, 2, density=True).bin_edges)],
     [A((10, 2), grad=False)]),
    ("trapezoid", lambda T, y: T.trapezoid(y), [A(M)]),
    ("trapezoid_dx", lambda T, y: T.trapezoid(y, dx=0.5, dim=0), [A(M, "float64")]),
    ("trapezoid_x", lambda T, y, x: T.trapezoid(y, x), [A(M), A(V4)]),
    ("trapz_x_2d", lambda T, y, x: T.trapz(y, x, dim=0), [A(M), A((3, 1))]),
    ("trapezoid_empty", lambda T: T.trapezoid(T.ones(3, 0)), []),
    ("cumulative_trapezoid", lambda T, y: T.cumulative_trapezoid(y, dx=2), [A(M)]),
    ("cumulative_trapezoid_x", lambda T, y, x: T.cumulative_trapezoid(y, x, dim=0),
     [A(M), A(V3)]),
    ("gradient", lambda T, y: list(T.gradient(y)), [A(M)]),
    ("gradient_order2", lambda T, y: list(T.gradient(y, spacing=2.0, dim=1, edge_order=2)),
     [A(M, "float64")]),
    ("gradient_coordinates", lambda T, y: list(T.gradient(
        y, spacing=[T.tensor([0.0, 1.0, 3.0]), T.tensor([0.0, 1.0, 2.0, 4.0])], edge_order=2)),
     [A(M)]),
    ("gradient_int", lambda T: list(T.gradient(T.arange(5) ** 2, spacing=[2])), []),
    ("geqrf", lambda T, x: list(T.geqrf(x)), [A((4, 3), "float64", grad=False)]),
    ("orgqr", lambda T, x: T.orgqr(x, T.geqrf(x.detach())[1]), [A((4, 3), "float64")]),
    ("ormqr", lambda T, x, c: [T.ormqr(x, T.geqrf(x.detach())[1], c),
                               x.ormqr(T.geqrf(x.detach())[1], c.mT, False, True)],
     [A((4, 3), "float64"), A((4, 2), "float64")]),
    ("cholesky_solve", lambda T, b, x: T.cholesky_solve(b, x.tril() + 3 * T.eye(3)),
     [A((3, 2)), A((3, 3))]),
    ("cholesky_solve_upper_batched", lambda T, b, x: b.cholesky_solve(
        x.triu() + 3 * T.eye(3, dtype=T.float64), upper=True),
     [A((2, 3, 2), "float64"), A((3, 3), "float64")]),
    ("cholesky_inverse", lambda T, x: [T.cholesky_inverse(x.tril() + 3 * T.eye(3)),
                                       x.add(T.eye(3) * 3).triu().cholesky_inverse(True)],
     [A((3, 3))]),
    ("lu_unpack", lambda T, x: list(T.lu_unpack(x, T.linalg.lu_factor(x.detach())[1])),
     [A((3, 3), "float64")]),
    ("lu_unpack_parts", lambda T, x: [list(T.lu_unpack(x, T.linalg.lu_factor(x.detach())[1],
                                                       unpack_data=False)),
                                      list(T.lu_unpack(x, T.linalg.lu_factor(x.detach())[1],
                                                       unpack_pivots=False))],
     [A((3, 3), grad=False)]),
    ("lu_method", lambda T, x: [list(x.lu()), list(x.lu(get_infos=True))], [A((3, 3))]),
    ("lu_solve_method", lambda T, b, x: b.lu_solve(*T.linalg.lu_factor(x + 3 * T.eye(3))),
     [A((3, 2)), A((3, 3))]),
    ("triangular_solve_method", lambda T, b, x: [list(b.triangular_solve(x.triu() + 3 * T.eye(
        3))), b.triangular_solve(x.tril() + 3 * T.eye(3), False, True, True).solution],
     [A((3, 2)), A((3, 3))]),
    ("as_strided", lambda T, x: [T.as_strided(x, (2, 2), (1, 2), 1), x.as_strided((3, 2), (1, 1))],
     [A(M)]),
    ("as_strided_of_view", lambda T, x: x[1:].t().as_strided((2, 3), (3, 1)), [A(M, "float64")]),
    ("as_strided_strides", lambda T, x: [x.as_strided((2, 2), (1, 4)).stride(),
                                         x[1:].as_strided((2,), (3,)).storage_offset()],
     [A(M, grad=False)]),
    ("as_strided_write", lambda T, x: [x.as_strided((2, 2), (4, 1), 1).fill_(7.0), x],
     [A(M, grad=False)]),
    ("as_strided_", lambda T, x: [x.clone().as_strided_((2, 3), (3, 1)),
                                  x[1:].clone().as_strided_((2,), (2,), 1)], [A((6,))]),
    ("as_strided_scatter", lambda T, x, s: T.as_strided_scatter(x, s, (2, 2), (1, 2), 1),
     [A(M, grad=False), A((2, 2))]),
    ("empty_strided", lambda T: [T.empty_strided((2, 3), (1, 2)).stride(),
                                 T.empty_permuted((2, 3, 4), (0, 2, 1)).stride(),
                                 T.ones(2).new_empty_strided((2, 3), (1, 2)).stride(),
                                 T.empty_strided((2, 3), (3, 1), dtype=T.float64).dtype], []),
    ("layout", lambda T, x: [x.layout is T.strided, repr(T.strided), repr(x.layout),
                             T.legacy_contiguous_format is T.contiguous_format,
                             repr(pickle.loads(pickle.dumps(T.strided)))], [A(M)]),
    ("dim_order", lambda T, x: [x.dim_order(), x.t().dim_order(), x.dim_order(
        ambiguity_check=True), T.empty(2, 3, 4, 5).to(memory_format=T.channels_last).dim_order()],
     [A(M)]),
    ("sum_to_size", lambda T, x: [x.sum_to_size(1, 4), x.sum_to_size(4), x.sum_to_size((3, 1)),
                                  x.sum_to_size(3, 4) is x], [A(M)]),
    ("hash_tensor", lambda T, x, i: [T.hash_tensor(x), T.hash_tensor(i, 1),
                                     T.hash_tensor(x, (0, 1), keepdim=True),
                                     T.hash_tensor(i > 0)],
     [A(M, grad=False), A(M, "int32")]),
    ("apply_map", lambda T, x, y: [x.clone().apply_(lambda v: v * v + 1),
                                   x.clone().map_(y, lambda a, b: a - 2 * b)],
     [A(M, grad=False), A(V4, grad=False)]),
    ("frombuffer", lambda T: [T.frombuffer(bytearray(np.arange(6, dtype=np.float32).tobytes()),
                                           dtype=T.float32, count=2, offset=4),
                              T.frombuffer(b"abcd", dtype=T.uint8)], []),
    ("module_load", lambda T, x, y: [x.clone().module_load(y), x.module_load(y, assign=True)],
     [A(V4, grad=False), A(V4)]),
    ("is_storage", lambda T: [T.is_storage(T.ones(2).untyped_storage()), T.is_storage(
        T.ones(2))], []),
    ("to_dlpack", lambda T: torch.from_dlpack(T.to_dlpack(T.arange(3.0))).tolist(), []),
    ("index_reduce_prod", lambda T, x, s: T.index_reduce(x, 0, T.tensor([0, 2, 0]), s, "prod"),
     [A(M), A(M)]),
    ("index_reduce_prod_zeros", lambda T, x, s: x.index_reduce(
        0, T.tensor([0, 2, 0]), s * (s > 0), "prod", include_self=False), [A(M), A(M)]),
    ("index_reduce_mean", lambda T, x, s: T.index_reduce(x, 1, T.tensor([3, 0, 3]), s, "mean"),
     [A(M, "float64"), A((3, 3), "float64")]),
    ("index_reduce_amax_ties", lambda T, x, s: T.index_reduce(
        x.round(), 0, T.tensor([1, 1, 0]), s.round(), "amax"), [A(M), A(M)]),
    ("index_reduce_amin", lambda T, x, s: x.index_reduce(
        0, T.tensor([1, 1, 0]), s, "amin", include_self=False), [A(M), A(M)]),
    ("index_reduce_", lambda T, x, s: [x.clone().index_reduce_(0, T.tensor([0, 0, 2]), s,
                                                                "mean"),
                                       x.clone().index_reduce_(0, T.tensor([0, 0, 2]), s,
                                                                "amax", include_self=False)],
     [A(M, "int64"), A(M, "int64")]),
]


def test_from_file(tmp_path):
    """from_file reads the file's bytes, as torch's (which would also map them)."""
    path = tmp_path / "values.bin"
    np.arange(6, dtype=np.float64).tofile(path)
    both(lambda T: [T.from_file(str(path), size=4, dtype=T.float64),
                    T.from_file(str(path), shared=False, size=3, dtype=T.int32)])


def _eager_cond(T):
    """torch.cond's semantics in plain torch (it compiles each call, seconds, to compute the
    same); torchlike's own."""
    if T is tl:
        return tl.cond, tl.while_loop

    def cond(pred, true_fn, false_fn, operands=()):
        return (true_fn if bool(pred) else false_fn)(*operands)

    def while_loop(cond_fn, body_fn, carried):
        kind = type(carried)
        while bool(cond_fn(*carried)):
            carried = body_fn(*carried)
        return kind(carried)
    return cond, while_loop


CONTROL_FLOW = [
    # name, fn(T, cond, while_loop, *inputs), inputs
    ("cond_true", lambda T, cond, loop, x, w: cond(x.sum() > -10, lambda a: a.sin() * w,
                                                   lambda a: a.cos(), (x,)), [A(M), A(M)]),
    ("cond_false", lambda T, cond, loop, x: cond(T.tensor(0), lambda a, b: a + b,
                                                 lambda a, b: a * b, [x, x.exp()]), [A(M)]),
    ("while_loop", lambda T, cond, loop, x: loop(lambda i, s: i < 3, lambda i, s: (i + 1, s * x),
                                                 (T.tensor(0), x))[1], [A(M)]),
    ("while_loop_list", lambda T, cond, loop, x: loop(lambda i, s: i < 2,
                                                      lambda i, s: [i + 1, s.sin()],
                                                      [T.tensor(0), x]), [A(M, grad=False)]),
]


@pytest.mark.parametrize("name,fn,inputs", cases(CONTROL_FLOW))
def test_control_flow(name, fn, inputs):
    check_op(name, lambda T, *xs: fn(T, *_eager_cond(T), *xs), inputs)


def test_control_flow_traced():
    """Modes agree: cond and while_loop under jax.jit (to_jax), jax.grad and torchlike.compile
    give the eager results."""
    import jax
    pure = tl.func.to_jax(lambda a: tl.cond(a.sum() > 0, lambda b: b.sin(), lambda b: b.cos(),
                                            (a,)))
    for v in (np.array([0.5, -1.0, 2.0], np.float32), np.array([-3.0, 1.0], np.float32)):
        x = tl.tensor(v, requires_grad=True)
        eager = tl.cond(x.sum() > 0, lambda b: b.sin(), lambda b: b.cos(), (x,))
        eager.sum().backward()
        np.testing.assert_allclose(jax.jit(pure)(v), eager.detach().numpy(), rtol=1e-6)
        np.testing.assert_allclose(jax.grad(lambda a: pure(a).sum())(v), x.grad.numpy(),
                                   rtol=1e-6)
    power = tl.func.to_jax(lambda n: tl.while_loop(lambda i, s: i < n,
                                                   lambda i, s: (i + 1, s * 2),
                                                   (tl.tensor(0), tl.tensor(1.0)))[1])
    assert float(jax.jit(power)(np.array(4))) == 16.0
    step = tl.compile(lambda a: tl.cond(a.sum() > 0, lambda b: b * 2, lambda b: b * 3, (a,)))
    assert step(tl.tensor([1.0, 2.0])).tolist() == [2.0, 4.0]
    assert step(tl.tensor([-1.0, -2.0])).tolist() == [-3.0, -6.0]


def test_while_loop_metadata():
    """A loop body must return what it was given (PyTorch checks this while compiling)."""
    with pytest.raises(RuntimeError, match=r"Expected body_fn_output and carried_inputs to have "
                                           r"same metadata but found:\npair\[0\] differ in "
                                           r"'dtype: torch.float32 vs torch.int64'"):
        tl.while_loop(lambda i: i < 3, lambda i: (i + 0.5,), (tl.tensor(0),))


def test_set_warn_always():
    """After set_warn_always(True) a once-per-process warning appears every time."""
    import warnings
    try:
        for T in (torch, tl):
            T.set_warn_always(True)
            assert T.is_warn_always_enabled()
            for _ in range(2):
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    T.istft(T.stft(T.ones(16), 8, return_complex=True), 8)
                assert any("A window was not provided" in str(w.message) for w in caught), T
    finally:
        torch.set_warn_always(False)
        tl.set_warn_always(False)
    assert not tl.is_warn_always_enabled()


@pytest.mark.parametrize("name,fn,inputs", cases(OPS))
def test_op(name, fn, inputs):
    check_op(name, fn, inputs)


def check_values(name, fn, inputs, rtol=None, atol=None):
    """check_op for composites PyTorch has no dedicated backward for: values, dtypes, shapes and
    the inputs' gradients (a random upstream gradient, complex for a complex result), not the
    grad_fn names of the ops the composite is made of."""
    rng = np.random.default_rng(seed_of(name))
    vals = [a.values(rng) for a in inputs]

    def go(T):
        xs = [a.make(T, v) for a, v in zip(inputs, vals)]
        out = fn(T, *xs)
        res = {"out": out.detach(), "requires_grad": out.requires_grad}
        if out.requires_grad:
            g = np.random.default_rng(seed_of(name + "/g")).standard_normal((2,) + out.shape)
            g = g[0] + 1j * g[1] if out.is_complex() else g[0]
            out.backward(T.tensor(g, dtype=out.dtype))
            res["grads"] = [x.grad for x in xs]
        return res

    both(go, rtol=rtol, atol=atol)


SIGNAL = 40
COMPOSITES = [
    # name, fn(T, *inputs), inputs: values and gradients (no dedicated backward in PyTorch)
    ("stft", lambda T, x: T.stft(x, 8, return_complex=True), [A((SIGNAL,))]),
    ("stft_window", lambda T, x: x.stft(8, window=T.hann_window(8), return_complex=True),
     [A((2, SIGNAL))]),
    ("stft_short_window", lambda T, x: T.stft(
        x, 8, hop_length=3, win_length=6, window=T.hann_window(6), center=False,
        normalized=True, return_complex=True), [A((2, SIGNAL), "float64")]),
    ("stft_align", lambda T, x: T.stft(x, 8, 3, 6, T.hann_window(6), center=False,
                                       return_complex=True, align_to_window=True), [A((SIGNAL,))]),
    ("stft_twosided_real", lambda T, x: T.stft(x, 8, pad_mode="constant", onesided=False,
                                               return_complex=False), [A((SIGNAL,))]),
    ("stft_complex", lambda T, x: T.stft(T.complex(x, x.flip(0)), 8, return_complex=True),
     [A((SIGNAL,))]),
    ("istft", lambda T, x: T.istft(T.stft(x, 8, window=T.hann_window(8), return_complex=True),
                                   8, window=T.hann_window(8)), [A((2, SIGNAL))]),
    ("istft_length", lambda T, x: T.stft(x, 8, window=T.hann_window(8) + 0.1,
                                         return_complex=True).istft(
        8, window=T.hann_window(8) + 0.1, length=45), [A((SIGNAL,))]),
    ("istft_short_window", lambda T, x: T.istft(T.stft(
        x, 8, 2, 6, T.hann_window(6) + 0.1, return_complex=True), 8, 2, 6,
        T.hann_window(6) + 0.1, length=SIGNAL - 2), [A((SIGNAL,), "float64")]),
    ("istft_complex", lambda T, x: T.istft(T.stft(
        T.complex(x, 2 * x), 8, return_complex=True), 8, return_complex=True), [A((SIGNAL,))]),
]


@pytest.mark.parametrize("name,fn,inputs", cases(COMPOSITES))
def test_composite(name, fn, inputs):
    check_values(name, fn, inputs)


ERRORS = [
    # name, fn(T), the message (a regex both must match)
    ("cartesian_prod_2d", lambda T: T.cartesian_prod(T.ones(2, 2), T.ones(2)),
     r"Expect a 1D vector, but got shape \[2, 2\]"),
    ("cartesian_prod_dtypes", lambda T: T.cartesian_prod(T.ones(2), T.ones(2).long()),
     "meshgrid expects all tensors to have the same dtype"),
    ("combinations_negative", lambda T: T.combinations(T.ones(3), -1),
     "Expect a non-negative number, but got -1"),
    ("cov_3d", lambda T: T.cov(T.ones(2, 2, 2)),
     "cov\\(\\): expected input to have two or fewer dimensions but got an input with 3"),
    ("cov_fweights_float", lambda T: T.cov(T.ones(2, 3), fweights=T.ones(3)),
     "cov\\(\\): expected fweights to have integral dtype but got fweights with Float dtype"),
    ("cov_aweights_negative", lambda T: T.cov(T.ones(2, 3), aweights=-T.ones(3)),
     "cov\\(\\): aweights cannot be negative"),
    ("isin_bool", lambda T: T.isin(T.tensor([True]), T.tensor([1])),
     "Unsupported input type encountered for isin\\(\\): Bool"),
    ("isin_list", lambda T: T.isin(T.tensor([1]), [1]), "isin\\(\\) received an invalid"),
    ("window_int", lambda T: T.hann_window(4, dtype=T.int64),
     r"hann_window expects floating point dtypes, got: TensorOptions\(dtype=long int"),
    ("window_negative", lambda T: T.kaiser_window(-1),
     "kaiser_window requires non-negative window_length, got window_length=-1"),
    ("stft_no_return_complex", lambda T: T.stft(T.ones(20), 8),
     "stft requires the return_complex parameter be given for real inputs"),
    ("stft_n_fft", lambda T: T.stft(T.ones(20), 30, center=False, return_complex=True),
     r"^stft\(torch.FloatTensor\[20\], n_fft=30, hop_length=7, win_length=30, window=None, "
     r"normalized=0, onesided=None, return_complex=1, align_to_window=None\) : expected 0 < "
     r"n_fft < 20, but got n_fft=30$"),
    ("stft_window_size", lambda T: T.stft(T.ones(20), 8, window=T.ones(7), return_complex=True),
     r"expected a 1D window tensor of size equal to win_length=8, but got window with size \[7\]"),
    ("stft_3d", lambda T: T.stft(T.ones(2, 2, 20, dtype=T.complex64), 8, return_complex=True),
     r"^stft\(CPUComplexFloatType\[2, 2, 28\], .*\) : expected a 1D or 2D tensor$"),
    ("stft_align_center", lambda T: T.stft(T.ones(20), 8, return_complex=True,
                                           align_to_window=True),
     "stft align_to_window should only be set when center = false"),
    ("stft_align_odd", lambda T: T.stft(T.ones(20), 8, 3, 5, T.ones(5), center=False,
                                        return_complex=True, align_to_window=True),
     r"^setStorage: sizes \[1, 6, 8\], strides \[22, 3, 1\], storage offset 0, and itemsize 4 "
     r"requiring a storage size of 92 are out of bounds for storage of size 88$"),
    ("istft_real", lambda T: T.istft(T.ones(5, 3), 8),
     "istft requires a complex-valued input tensor matching the output from stft"),
    ("istft_dims", lambda T: T.istft(T.ones(2, 2, 5, 3, dtype=T.complex64), 8),
     r"\) : expected a tensor with 3 or 4 dimensions, but got 5$"),
    ("istft_frequencies", lambda T: T.istft(T.ones(4, 3, dtype=T.complex64), 8),
     r"^istft\(CPUComplexFloatType\[4, 3\], n_fft=8, hop_length=2, win_length=8, window=None, "
     r"center=1, normalized=0, onesided=None, length=None, return_complex=0\) : expected the "
     r"frequency dimension \(3rd to the last\) of the input tensor to match n_fft / 2 \+ 1 when "
     r"onesided=True, but got 4$"),
    ("istft_nola", lambda T: T.istft(T.stft(T.ones(40), 8, window=T.hann_window(8),
                                            return_complex=True), 8, window=T.hann_window(8),
                                     center=False),
     r"return_complex=0\) window overlap add min: 1\n\[ CPUBoolType\{\} \]$"),
    ("deg2rad_complex", lambda T: T.deg2rad(T.ones(2, dtype=T.complex64)),
     "deg2rad is not supported for complex tensors."),
    ("positive_bool", lambda T: T.positive(T.ones(2, dtype=T.bool)),
     "The `\\+` operator, on a bool tensor is not supported."),
    ("frexp_int", lambda T: T.frexp(T.ones(2, dtype=T.int64)),
     r"torch.frexp\(\) only supports floating-point dtypes"),
    ("float_power_inplace_float32", lambda T: T.ones(2).float_power_(2),
     "the base given to float_power_ has dtype Float but the operation's result requires dtype "
     "Double"),
    ("ldexp_number", lambda T: T.ldexp(T.ones(2), 2),
     r"ldexp\(\): argument 'other' \(position 2\) must be Tensor, not int"),
    ("gcd_float", lambda T: T.gcd(T.ones(2), T.ones(2)),
     "\"gcd_cpu\" not implemented for 'Float'"),
    ("lcm_bool", lambda T: T.lcm(T.ones(2, dtype=T.bool), T.ones(2, dtype=T.bool)),
     "\"lcm_cpu\" not implemented for 'Bool'"),
    ("nextafter_int", lambda T: T.nextafter(T.ones(2, dtype=T.int64), T.ones(2, dtype=T.int64)),
     "\"nextafter_cpu\" not implemented for 'Long'"),
    ("logaddexp2_int", lambda T: T.logaddexp2(T.ones(2).long(), T.ones(2).long()),
     "\"logaddexp2_cpu\" not implemented for 'Long'"),
    ("renorm_p", lambda T: T.renorm(T.ones(2, 2), 0, 0, 1.0),
     "renorm: non-positive-norm not supported"),
    ("renorm_maxnorm", lambda T: T.renorm(T.ones(2, 2), 2, 0, -1.0),
     "renorm: expected maxnorm to be >= 0 but got -1"),
    ("renorm_1d", lambda T: T.renorm(T.ones(2), 2, 0, 1.0),
     "renorm: input needs at least 2 dimensions, got 1 dimensions"),
    ("dist_int", lambda T: T.dist(T.ones(2).long(), T.ones(2).long()),
     "norm\\(\\): input dtype should be either floating point or complex. Got Long instead."),
    ("adjoint_1d", lambda T: T.ones(3).adjoint(),
     r"tensor.adjoint\(\) is only supported on matrices or batches of matrices. Got 1-D tensor."),
    ("H_3d", lambda T: T.ones(2, 2, 2).H,
     "tensor.H is only supported on matrices \\(2-D tensors\\). Got 3-D tensor. For batches"),
    ("mH_1d", lambda T: T.ones(2).mH, "tensor.mH is only supported on matrices or batches"),
    ("select_scatter_size", lambda T: T.select_scatter(T.ones(3, 4), T.ones(3), 0, 1),
     r"expected src to have a size equal to the slice of self. src size = \[3\], slice size = "
     r"\[4\]"),
    ("select_scatter_index", lambda T: T.select_scatter(T.ones(3, 4), T.ones(4), 0, 5),
     r"select\(\): index 5 out of range for tensor of size \[3, 4\] at dimension 0"),
    ("slice_scatter_size", lambda T: T.slice_scatter(T.ones(3, 4), T.ones(3, 3), 1, 0, 2),
     r"src size = \[3, 3\], slice size = \[3, 2\]"),
    ("nonzero_static_size", lambda T: T.nonzero_static(T.ones(2), size=-1),
     "nonzero_static: 'size' must be an non-negative integer"),
    ("unravel_index_float", lambda T: T.unravel_index(T.tensor(1.), (2, 2)),
     "expected 'indices' to be integer dtype, but got torch.float32"),
    ("unravel_index_negative", lambda T: T.unravel_index(T.tensor(1), (2, -1)),
     r"'shape' cannot have negative values, but got \(2, -1\)"),
    ("vander_2d", lambda T: T.vander(T.ones(2, 2)), "x must be a one-dimensional tensor."),
    # PyTorch's vander writes cumprod's input in place, so its backward always refuses
    ("vander_backward", lambda T: T.vander(T.ones(3, requires_grad=True)).sum().backward(),
     "one of the variables needed for gradient computation has been modified by an inplace "
     "operation"),
    ("is_nonzero_many", lambda T: T.is_nonzero(T.ones(2)),
     "Boolean value of Tensor with more than one value is ambiguous"),
    ("can_cast_number", lambda T: T.can_cast(1, T.int),
     r"can_cast\(\): argument 'from_' \(position 1\) must be torch.dtype, not int"),
    ("native_channel_shuffle_backward", lambda T: T.native_channel_shuffle(
        T.ones(1, 4, 2, requires_grad=True), 2).sum().backward(),
     "derivative for aten::native_channel_shuffle is not implemented"),
    ("histogram_int", lambda T: T.histogram(T.tensor([1, 2]), 2),
     "\"histogramdd\" not implemented for 'Long'"),
    ("histogram_range", lambda T: T.histogram(T.ones(3), 3, range=(2.0, 1.0)),
     "torch.histogramdd: min should not exceed max, but got min 2 max 1 for dimension 0"),
    ("histogram_bins", lambda T: T.histogram(T.ones(3), 0),
     r"torch.histogram\(\): bins must be > 0, but got 0 for dimension 0"),
    ("histogram_infinite", lambda T: T.histogram(T.tensor([1.0, float("inf")]), 2),
     r"torch.histogramdd: dimension 0's range \[1, inf\] is not finite"),
    ("histogram_bins_dtype", lambda T: T.histogram(T.ones(3), T.ones(2).double()),
     "input tensor and bins tensors should have the same dtype, but got input with dtype float "
     "and bins for dimension 0 with dtype double"),
    ("histogram_backward", lambda T: T.histogram(T.ones(3, requires_grad=True), 2)[0].sum()
     .backward(), "derivative for aten::histogram is not implemented"),
    ("trapezoid_bool", lambda T: T.trapezoid(T.ones(3, dtype=T.bool)),
     "trapezoid: received a bool input for `y`, but bool is not supported"),
    ("trapezoid_samples", lambda T: T.trapezoid(T.ones(3), T.ones(2)),
     "trapezoid: There must be one `x` value for each sample point"),
    ("gradient_edge_order", lambda T: T.gradient(T.ones(3), edge_order=3),
     "torch.gradient only supports edge_order=1 and edge_order=2."),
    ("gradient_size", lambda T: T.gradient(T.ones(2, 2), edge_order=2),
     "torch.gradient expected each dimension size to be at least edge_order\\+1"),
    ("gradient_spacing", lambda T: T.gradient(T.ones(3, 3), spacing=[1.0]),
     "torch.gradient expected spacing to be unspecified, a scalar, or a list of length equal to "
     "'self.dim\\(\\) = 2', since dim argument was not given, but got a list of length 1"),
    ("geqrf_1d", lambda T: T.geqrf(T.ones(3)),
     "torch.geqrf: input must have at least 2 dimensions."),
    ("geqrf_int", lambda T: T.geqrf(T.ones(3, 3).long()),
     "\"geqrf_cpu\" not implemented for 'Long'"),
    ("geqrf_backward", lambda T: T.geqrf(T.ones(3, 3, requires_grad=True))[0].sum().backward(),
     "the derivative for 'geqrf' is not implemented."),
    ("ormqr_shapes", lambda T: T.ormqr(T.ones(4, 3), T.ones(3), T.ones(3, 2)),
     "torch.ormqr: other.shape\\[-2\\] must be equal to input.shape\\[-2\\]"),
    ("cholesky_solve_1d", lambda T: T.cholesky_solve(T.ones(3), T.eye(3)),
     "b should have at least 2 dimensions, but has 1 dimensions instead"),
    ("cholesky_solve_sizes", lambda T: T.cholesky_solve(T.ones(3, 2), T.eye(2)),
     "Incompatible matrix sizes for cholesky_solve: each A matrix is 2 by 2 but each b matrix "
     "is 3 by 2"),
    ("lu_unpack_pivots", lambda T: T.lu_unpack(T.eye(3), T.tensor([1, 2, 3])),
     "torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype."),
    ("cond_pred", lambda T: T.cond(T.tensor([True, False]), lambda: T.ones(1), lambda: T.ones(1)),
     r"Expected pred to be bool or single-element tensor, but got tensor\(\[ True, False\]\)."),
    ("cond_operands", lambda T: T.cond(T.tensor(True), lambda a: a, lambda a: a, T.ones(2)),
     "Expect operands to be a tuple of possibly nested dict/list/tuple that only consists of "
     "tensor leaves"),
    ("index_reduce_reduce", lambda T: T.ones(3, 2).index_reduce(0, T.tensor([0]), T.ones(1, 2),
                                                               "sum"),
     "index_reduce\\(\\): Expected reduce to be one of prod, mean, amax or amin but got sum."),
    ("index_reduce_dtype", lambda T: T.ones(3, 2).index_reduce(0, T.tensor([0]),
                                                              T.ones(1, 2).double(), "prod"),
     r"index_reduce_\(\): self \(Float\) and source \(Double\) must have the same scalar "
     "type"),
    ("index_reduce_range", lambda T: T.ones(3, 2).index_reduce(0, T.tensor([5]), T.ones(1, 2),
                                                              "prod"),
     "index out of range in self"),
    ("block_diag_3d", lambda T: T.block_diag(T.ones(2), T.ones(1, 1, 1)),
     "torch.block_diag: Input tensors must have 2 or fewer dimensions. Input 1 has 3 dimensions"),
]


@pytest.mark.parametrize("name,fn,match", cases(ERRORS))
def test_error(name, fn, match):
    both(fn, match=match, raises=True)


def _coverage_script():
    path = pathlib.Path(__file__).resolve().parent.parent / "scripts" / "api_coverage.py"
    spec = importlib.util.spec_from_file_location("api_coverage", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("namespace", ["torch", "Tensor", "nn", "nn.functional", "linalg",
                                       "special", "fft"])
def test_api_coverage(namespace):
    """scripts/api_coverage.py: torchlike has >= 95% of the user-facing names of each namespace
    of real torch (the coverage target), by the filter in the script's docstring."""
    names, have, _ = _coverage_script().measure(namespace)
    missing = sorted(set(names) - set(have))
    assert len(have) >= 0.95 * len(names), (
        f"{namespace}: {len(have)}/{len(names)}, missing {missing}")


def test_api_coverage_filter():
    """The filter's reasons, one name each."""
    cov = _coverage_script()
    reasons = {("torch", "exp_"): "undocumented", ("torch", "norm"): "deprecated",
               ("torch", "quantize_per_tensor"): "quantization", ("torch", "view_copy"):
               "view-copy twin", ("torch", "sparse_coo_tensor"): "sparse or nested layout",
               ("torch", "cudnn_convolution"): "undocumented", ("torch", "cuda"):
               "not API (module, dict, str or bool)", ("torch", "Graph"):
               "TorchScript or override machinery", ("torch", "sym_int"): "symbolic shapes",
               ("torch", "int4"): "shell dtype", ("torch", "cond"): None,
               ("Tensor", "dtype"): None, ("Tensor", "exp_"): None, ("Tensor", "to_mkldnn"):
               "vendor kernel", ("special", "Tensor"): "torch.Tensor re-exported",
               ("nn.functional", "Optional"): "defined outside the namespace (typing)"}
    for (path, name), reason in reasons.items():
        ns = cov.torch_namespace(torch, path)
        assert cov.exclusion(torch, path, ns, name) == reason, (path, name)
