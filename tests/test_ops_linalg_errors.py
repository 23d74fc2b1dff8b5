"""Linear algebra beyond values and gradients (see test_ops_linalg.py for those): outputs
without gradients (signs, info codes, singular inputs), PyTorch's errors and LinAlgError, the
traced (jax.jit) path, the jax.grad oracle and double backward.
"""
import math

import jax
import numpy as np
import pytest
import torch

import torchlike as tl
from torchlike.testing import to_jax_function

from test_ops_linalg import M, _inputs, _plain, _recon
from parity import both, cases, seed_of

# PyTorch warns about its deprecated spellings (torch.qr, torch.cholesky, chain_matmul)
pytestmark = pytest.mark.filterwarnings("ignore:torch.*is deprecated:UserWarning")


# ------------------------------------------------------------------------------------------------
# Values without gradients: signs, info codes, singular inputs
# ------------------------------------------------------------------------------------------------

_SING = [[1., 2., 3.], [2., 4., 6.], [1., 0., 1.]]
_NOT_PD = [[4., 2., 0.], [2., 1., 0.], [0., 0., 1.]]

VALUES = [
    # name, fn(T)
    ("slogdet_signs", lambda T: T.linalg.slogdet(T.tensor([[[0., 1.], [1., 0.]], [[2., 0.],
                                                                                [0., 3.]]]))),
    ("slogdet_singular", lambda T: T.linalg.slogdet(T.zeros(3, 3))),
    ("det_singular", lambda T: T.linalg.det(T.tensor(_SING))),
    ("logdet_negative", lambda T: T.logdet(T.tensor([[0., 1.], [1., 0.]]))),
    ("logdet_singular", lambda T: T.logdet(T.zeros(2, 2))),
    ("inv_ex_info", lambda T: T.linalg.inv_ex(T.stack([T.eye(3), T.tensor(_SING),
                                                       T.zeros(3, 3)])).info),
    ("solve_ex_info", lambda T: T.linalg.solve_ex(T.tensor(_SING), T.ones(3, 1)).info),
    ("cholesky_ex_info", lambda T: T.linalg.cholesky_ex(T.stack([
        T.eye(3), T.tensor(_NOT_PD), -T.eye(3), T.tensor(_NOT_PD).flip(0, 1)])).info),
    ("cholesky_ex_upper_info", lambda T: T.linalg.cholesky_ex(T.tensor(_NOT_PD),
                                                              upper=True).info),
    ("cholesky_reads_lower", lambda T: T.linalg.cholesky(T.tensor([[4., 100.], [1., 3.]]))),
    ("cholesky_reads_upper", lambda T: T.linalg.cholesky(T.tensor([[4., 1.], [100., 3.]]),
                                                         upper=True)),
    ("eigh_reads_lower", lambda T: T.linalg.eigvalsh(T.tensor([[4., 100.], [1., 3.]]))),
    ("eigh_complex_diag", lambda T: T.linalg.eigvalsh(T.tensor([[4 + 5j, 1 + 2j],
                                                               [1 - 1j, 3.]]))),
    ("matrix_power_int", lambda T: T.matrix_power(T.tensor([[1, 2], [3, 4]]), 3)),
    ("matrix_power_int_0", lambda T: T.matrix_power(T.tensor([[1, 2], [3, 4]]), 0)),
    ("qr_r_mode", lambda T: _plain(T.linalg.qr(T.tensor([[1., 2.], [3., 4.], [5., 6.]]),
                                               mode="r"))),
    ("svd_no_uv", lambda T: _plain(T.svd(T.tensor([[1., 2.], [3., 4.], [5., 6.]]),
                                         compute_uv=False))),
    ("pinv_singular", lambda T: T.linalg.pinv(T.tensor(_SING))),
    ("pinv_singular_hermitian", lambda T: T.linalg.pinv(T.tensor([[1., 1.], [1., 1.]]),
                                                        hermitian=True)),
    ("pinv_empty", lambda T: T.linalg.pinv(T.zeros(0, 3))),
    ("rank_zero", lambda T: T.linalg.matrix_rank(T.zeros(3, 2))),
    ("matrix_exp_nilpotent", lambda T: T.matrix_exp(T.tensor([[0., 1.], [0., 0.]]))),
    ("eig_complex_pair", lambda T: T.linalg.eigvals(T.tensor([[0., -1.], [1., 0.]]))),
]


@pytest.mark.parametrize("name,fn", cases(VALUES))
def test_values(name, fn):
    both(lambda T: _plain(fn(T)))


# ------------------------------------------------------------------------------------------------
# Errors: PyTorch's exception types and wording
# ------------------------------------------------------------------------------------------------

_I = lambda T: T.ones(3, 3, dtype=T.long)  # noqa: E731
_R = lambda T: T.ones(2, 3)  # noqa: E731

ERRORS = [
    # name, fn(T), message regex
    ("mm_shapes", lambda T: T.mm(T.ones(2, 3), T.ones(4, 5)), r"shapes cannot be multiplied "
                                                              r"\(2x3 and 4x5\)"),
    ("mm_bool", lambda T: T.mm(T.ones(2, 2, dtype=T.bool), T.ones(2, 2, dtype=T.bool)),
     "addmm_impl_cpu_"),
    ("bmm_dtype", lambda T: T.bmm(T.ones(1, 2, 3), T.ones(1, 3, 2, dtype=T.float64)),
     "expected scalar type Float but found Double"),
    ("mv_dtype", lambda T: T.mv(T.ones(2, 3), T.ones(3, dtype=T.float64)),
     "addmv input tensors must have the same dtype, but got Double, Float, and Double"),
    ("dot_dtype", lambda T: T.dot(T.ones(3), T.ones(3, dtype=T.float64)),
     "dot : expected both vectors to have same dtype, but found Float and Double"),
    ("vdot_2d", lambda T: T.vdot(T.ones(2, 2), T.ones(2, 2)), "1D tensors expected, but got 2D"),
    ("vdot_size", lambda T: T.vdot(T.ones(2), T.ones(3)), "inconsistent tensor size"),
    ("vdot_bool", lambda T: T.vdot(T.ones(2, dtype=T.bool), T.ones(2, dtype=T.bool)), '"dot"'),
    ("addmm_shapes", lambda T: T.addmm(T.ones(2, 2), T.ones(2, 3), T.ones(2, 3)),
     r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 2x3\)"),
    ("addmm_1d", lambda T: T.addmm(T.ones(2, 2), T.ones(3), T.ones(3, 2)),
     "mat1 must be a matrix, got 1-D tensor"),
    ("addmm_input", lambda T: T.addmm(T.ones(4), T.ones(3, 3), T.ones(3, 3)),
     r"The expanded size of the tensor \(3\) must match the existing size \(4\) at "
     r"non-singleton dimension 1.  Target sizes: \[3, 3\].  Tensor sizes: \[4\]"),
    ("addmm_input_3d", lambda T: T.addmm(T.ones(1, 2, 2), T.ones(2, 3), T.ones(3, 2)),
     r"the number of sizes provided \(2\) must be greater or equal"),
    ("addmm_self_dtype", lambda T: T.addmm(T.ones(2, 2, dtype=T.float64), T.ones(2, 3),
                                           T.ones(3, 2)),
     "self and mat2 must have the same dtype, but got Double and Float"),
    ("addmm_mat_dtype", lambda T: T.addmm(T.ones(2, 2), T.ones(2, 3, dtype=T.float64),
                                          T.ones(3, 2)),
     "mat1 and mat2 must have the same dtype, but got Double and Float"),
    ("addmm_bool", lambda T: T.addmm(*(T.ones(2, 2, dtype=T.bool),) * 3), "addmm_impl_cpu_"),
    ("addmm_inplace_shape", lambda T: T.ones(4).addmm_(T.ones(2, 3), T.ones(3, 4)),
     r"Bad in-place call: input tensor size \[4\] and output tensor size \[2, 4\]"),
    ("addmv_dims", lambda T: T.addmv(T.ones(2), T.ones(2, 3), T.ones(3, 1)),
     "vector \\+ matrix @ vector expected, got 1, 2, 2"),
    ("addmv_size", lambda T: T.addmv(T.ones(3), T.ones(2, 3), T.ones(3)),
     r"size mismatch, got input \(3\), mat \(2x3\), vec \(3\)"),
    ("addmv_dtype", lambda T: T.addmv(T.ones(2), T.ones(2, 3), T.ones(3, dtype=T.float64)),
     "addmv input tensors must have the same dtype, but got Float, Float, and Double"),
    ("addmv_inplace", lambda T: T.ones(1).addmv_(T.ones(2, 3), T.ones(3)), "Bad in-place call"),
    ("addr_2d", lambda T: T.addr(T.ones(3, 3), T.ones(3, 3), T.ones(3)),
     "addr: Expected 1-D argument vec1, but got 2-D"),
    ("addr_int_alpha", lambda T: T.addr(T.ones(2, 3, dtype=T.long), T.ones(2, dtype=T.long),
                                        T.ones(3, dtype=T.long), alpha=2.5),
     "For integral input tensors, argument alpha must not be a floating point number."),
    ("addr_bool_beta", lambda T: T.addr(T.ones(2, 3, dtype=T.bool), T.ones(2, dtype=T.bool),
                                        T.ones(3, dtype=T.bool), beta=1.5), "argument beta"),
    ("addr_inplace", lambda T: T.ones(1, 3).addr_(T.ones(2), T.ones(3)),
     r"size mismatch, input: \[1, 3\], v1: \[2\], v2: \[3\]"),
    ("addbmm_batches", lambda T: T.addbmm(T.ones(2, 2), T.ones(1, 2, 3), T.ones(2, 3, 2)),
     "batch1 and batch2 must have same number of batches, got 1 and 2"),
    ("addbmm_sizes", lambda T: T.addbmm(T.ones(2, 2), T.ones(1, 2, 3), T.ones(1, 4, 2)),
     r"Incompatible matrix sizes for bmm \(2x3 and 4x2\)"),
    ("addbmm_2d", lambda T: T.addbmm(T.ones(3, 2), T.ones(2, 3), T.ones(1, 3, 2)),
     "batch1 must be a 3D tensor"),
    ("baddbmm_sizes", lambda T: T.baddbmm(T.ones(1, 2, 2), T.ones(1, 2, 3), T.ones(2, 3, 2)),
     r"Expected size for first two dimensions of batch2 tensor to be: \[1, 3\] but got: "
     r"\[2, 3\]."),
    ("baddbmm_input_dtype", lambda T: T.baddbmm(T.ones(1, 2, 2, dtype=T.float64),
                                                T.ones(1, 2, 3), T.ones(1, 3, 2)),
     "Input dtypes must be the same, got: input double, batch1: float, batch2: float"),
    ("baddbmm_bool", lambda T: T.baddbmm(*(T.ones(1, 2, 2, dtype=T.bool),) * 3), '"baddbmm"'),
    ("outer_2d", lambda T: T.outer(T.ones(2, 2), T.ones(2)),
     "outer: Expected 1-D argument self, but got 2-D"),
    ("inner_size", lambda T: T.inner(T.ones(2, 3), T.ones(2)),
     r"inner\(\) the last dimension must match on both input tensors but got shapes \[2, 3\] "
     r"and \[2\]"),
    ("inner_dtype", lambda T: T.inner(T.ones(3, dtype=T.long), T.ones(3)),
     "both inputs should have same dtype"),
    ("tensordot_neg", lambda T: T.tensordot(T.ones(2), T.ones(2), -1),
     "tensordot expects dims >= 0, but got dims=-1"),
    ("tensordot_many", lambda T: T.tensordot(T.ones(2, 3), T.ones(3, 2), 3),
     "tensordot expects dims < ndim_a or ndim_b, but got dims=3"),
    ("tensordot_lens", lambda T: T.tensordot(T.ones(2, 3), T.ones(3, 2), ([1], [0, 1])),
     "both dimension lists should have same length"),
    ("tensordot_sizes", lambda T: T.tensordot(T.ones(2, 3), T.ones(2, 2), 1),
     "contracted dimensions need to match, but first has size 3 in dim -1 and second has size "
     "2 in dim 0"),
    ("tensordot_int_list", lambda T: T.tensordot(T.ones(2, 3), T.ones(3, 2), [1, 0]),
     "must be tuple of ints, not int"),
    ("tensordot_bool", lambda T: T.tensordot(*(T.ones(2, 2, dtype=T.bool),) * 2, 1),
     "addmm_impl"),
    ("tensordot_bool_dot", lambda T: T.tensordot(*(T.ones(2, 2, dtype=T.bool),) * 2), '"dot"'),
    ("multi_dot_one", lambda T: T.linalg.multi_dot([T.ones(2, 2)]),
     r"multi_dot\(\): expected at least 2 tensors but got 1"),
    ("multi_dot_3d_last", lambda T: T.linalg.multi_dot([T.ones(3, 3), T.ones(2, 3, 3)]),
     "the last tensor must be 1D or 2D but got 3D"),
    ("multi_dot_3d_first", lambda T: T.linalg.multi_dot([T.ones(2, 3, 3), T.ones(3, 3)]),
     "the first tensor must be 1D or 2D but got 3D"),
    ("multi_dot_middle", lambda T: T.linalg.multi_dot([T.ones(3), T.ones(3), T.ones(3)]),
     "tensor 1 must be 2D but got 1D"),
    ("multi_dot_shapes", lambda T: T.linalg.multi_dot([T.ones(3, 3), T.ones(2, 3)]),
     r"tensors 0 and 1 with shapes \[3, 3\] and \[2, 3\] cannot be multiplied"),
    ("multi_dot_dtype", lambda T: T.linalg.multi_dot([T.ones(3, 3), T.ones(3, 3).double()]),
     "all tensors must have be the same dtype but tensor 0 is float and tensor 1 double"),
    ("chain_matmul_none", lambda T: T.chain_matmul(), "Expected one or more matrices"),
    ("chain_matmul_1d", lambda T: T.chain_matmul(T.ones(3), T.ones(3, 3)),
     "Tensor dimension is 1, expected 2 instead."),
    ("cross_len", lambda T: T.linalg.cross(T.ones(2, 3), T.ones(2, 3), dim=0),
     "linalg.cross: inputs dimension 0 must have length 3. Got 2 and 2"),
    ("cross_ndim", lambda T: T.linalg.cross(T.ones(3), T.ones(4, 3)),
     "linalg.cross: inputs must have the same number of dimensions."),
    ("cross_bcast", lambda T: T.linalg.cross(T.ones(4, 3), T.ones(2, 3)),
     r"The size of tensor a \(4\) must match the size of tensor b \(2\) at non-singleton "
     "dimension 0"),
    ("cross_dtype", lambda T: T.linalg.cross(T.ones(3, dtype=T.long), T.ones(3)),
     "expected scalar type Long but found Float"),
    ("cross_no_size3", lambda T: T.cross(T.ones(2, 4), T.ones(2, 4)),
     "no dimension of size 3 in input"),
    ("vecdot_int", lambda T: T.linalg.vecdot(T.ones(3, dtype=T.long), T.ones(3)),
     "linalg.vecdot: Expected a floating point or complex tensor as input. Got Long"),
    ("cdist_1d", lambda T: T.cdist(T.ones(3), T.ones(3)),
     "cdist only supports at least 2D tensors, X1 got: 1D"),
    ("cdist_cols", lambda T: T.cdist(T.ones(4, 3), T.ones(2, 2)),
     "X1 and X2 must have the same number of columns. X1: 3 X2: 2"),
    ("cdist_int", lambda T: T.cdist(T.ones(3, 3, dtype=T.long), T.ones(3, 3, dtype=T.long)),
     "cdist only supports floating-point dtypes, X1 got: Long"),
    ("cdist_neg_p", lambda T: T.cdist(T.ones(4, 3), T.ones(2, 3), p=-1),
     "cdist only supports non-negative p values"),
    ("cdist_mode", lambda T: T.cdist(T.ones(4, 3), T.ones(2, 3), compute_mode="foo"),
     "foo is not a valid value for compute_mode"),
    ("cdist_dtype", lambda T: T.cdist(T.ones(4, 3), T.ones(2, 3, dtype=T.float64)),
     "expected scalar type Float but found Double"),
    ("einsum_fewer_operands", lambda T: T.einsum("ij,jk", T.ones(3, 3)),
     "fewer operands were provided than specified in the equation"),
    ("einsum_more_operands", lambda T: T.einsum("i->", T.ones(2), T.ones(2)),
     "more operands were provided than specified in the equation"),
    ("einsum_opt_path_count", lambda T: T.einsum("i,i->", T.ones(2), T.ones(2), T.ones(2)),
     "Number of einsum subscripts, 2, must be equal to the number of operands, 3."),
    ("einsum_no_operands", lambda T: T.einsum("ij->ij"), "must specify the equation string"),
    ("einsum_output_unknown", lambda T: T.einsum("ij->ik", T.ones(3, 3)),
     "output subscript k does not appear in the equation for any input operand"),
    ("einsum_output_twice", lambda T: T.einsum("ij->ii", T.ones(3, 3)),
     "output subscript i appears more than once in the output"),
    ("einsum_ndim", lambda T: T.einsum("ijk->i", T.ones(3, 3)),
     r"the number of subscripts in the equation \(3\) does not match the number of dimensions "
     r"\(2\) for operand 0 and no ellipsis was given"),
    ("einsum_ndim_ellipsis", lambda T: T.einsum("i...->...", T.ones(())),
     r"the number of subscripts in the equation \(1\) is more than the number of dimensions "
     r"\(0\) for operand 0"),
    ("einsum_sizes", lambda T: T.einsum("ij,jk->ik", T.ones(3, 3), T.ones(2, 3)),
     "subscript j has size 2 for operand 1 which does not broadcast with previously seen size 3"),
    ("einsum_repeated_size", lambda T: T.einsum("ii->i", T.ones(2, 3)),
     "subscript i is repeated for operand 0 but the sizes don't match, 3 != 2"),
    ("einsum_bad_char", lambda T: T.einsum("i1->i", T.ones(3, 3)),
     "invalid subscript given at index 1 in the equation string, subscripts must be in "
     r"\[a-zA-Z\]"),
    ("einsum_bad_output_char", lambda T: T.einsum("ij->i->j", T.ones(3, 3)),
     "invalid subscript given at index 5"),
    ("einsum_lone_dot", lambda T: T.einsum("i.j->i", T.ones(3, 3)),
     "found '.' for operand 0 that is not part of any ellipsis"),
    ("einsum_two_ellipses", lambda T: T.einsum("...i...->i", T.ones(3, 3)),
     "found '.' for operand 0 for which an ellipsis was already found"),
    ("einsum_output_dot", lambda T: T.einsum("i->i..", T.ones(2)),
     r"found '.' for output that is not part of any ellipsis \(...\)"),
    ("einsum_output_two_ellipses", lambda T: T.einsum("...->......", T.ones(2)),
     r"found '.' for output but an ellipsis \(...\) was already found"),
    ("einsum_sublist_range", lambda T: T.einsum(T.ones(2), [60]),
     r"subscript in subscript list is not within the valid range \[0, 52\)"),
    ("einsum_dtype", lambda T: T.einsum("i,i->", T.ones(3), T.ones(3).double()),
     "expected scalar type Float but found Double"),
    ("einsum_bool", lambda T: T.einsum("ij,jk->ik", *(T.ones(2, 2, dtype=T.bool),) * 2),
     '"bmm" not implemented'),
    ("inv_nonsquare", lambda T: T.linalg.inv(_R(T)),
     "linalg.inv: A must be batches of square matrices, but they are 2 by 3 matrices"),
    ("inv_int", lambda T: T.linalg.inv(_I(T)),
     "linalg.inv: Expected a floating point or complex tensor as input. Got Long"),
    ("inv_1d", lambda T: T.linalg.inv(T.ones(3)),
     "linalg.inv: The input tensor A must have at least 2 dimensions."),
    ("inv_half", lambda T: T.linalg.inv(T.ones(2, 2, dtype=T.half)),
     "linalg.inv: Low precision dtypes not supported. Got Half"),
    ("det_int", lambda T: T.linalg.det(_I(T)), "linalg.det: Expected a floating point"),
    ("det_half", lambda T: T.det(T.ones(2, 2, dtype=T.half)), '"lu_cpu" not implemented'),
    ("slogdet_nonsquare", lambda T: T.linalg.slogdet(_R(T)), "linalg.slogdet: A must be"),
    ("logdet_int", lambda T: T.logdet(_I(T)),
     "logdet: Expected a floating point or complex tensor as input. Got Long"),
    ("cholesky_int", lambda T: T.linalg.cholesky(_I(T)), "linalg.cholesky: Expected a floating"),
    ("cholesky_nonsquare", lambda T: T.linalg.cholesky(_R(T)), "linalg.cholesky: A must be"),
    ("solve_shapes", lambda T: T.linalg.solve(T.eye(3), T.ones(2, 2)),
     r"linalg.solve: Incompatible shapes of A and B for the equation AX = B \(3x3 and 2x2\)"),
    ("solve_vector_shape", lambda T: T.linalg.solve(T.eye(3), T.ones(4)),
     r"for the equation AX = B \(3x3 and 4x1\)"),
    ("solve_right_vector", lambda T: T.linalg.solve(T.eye(3), T.ones(3), left=False),
     r"for the equation XA = B \(3x3 and 3x1\)"),
    ("solve_batch", lambda T: T.linalg.solve(T.ones(2, 3, 3), T.ones(5, 3, 1)),
     r"The size of tensor a \(5\) must match the size of tensor b \(2\)"),
    ("solve_dtype", lambda T: T.linalg.solve(T.eye(3), T.ones(3, 3).double()),
     "linalg.solve: Expected A and B to have the same dtype, but found A of type Float and B of "
     "type Double instead"),
    ("solve_int", lambda T: T.linalg.solve(_I(T), _I(T)), "linalg.solve: Expected a floating"),
    ("qr_mode", lambda T: T.linalg.qr(T.eye(3), mode="foo"),
     "qr received unrecognized mode 'foo' but expected one of 'reduced' \\(default\\), 'r', or "
     "'complete'"),
    ("qr_int", lambda T: T.linalg.qr(_I(T)), "linalg.qr: Expected a floating point"),
    ("svd_1d", lambda T: T.linalg.svd(T.ones(3)),
     "linalg.svd: The input tensor A must have at least 2 dimensions."),
    ("svd_half", lambda T: T.linalg.svd(T.ones(2, 2, dtype=T.half)), '"linalg_svd_cpu"'),
    ("svdvals_int", lambda T: T.linalg.svdvals(_I(T)), "linalg.svd: Expected a floating point"),
    ("eig_int", lambda T: T.linalg.eig(_I(T)), "Unknown Complex ScalarType for Long"),
    ("eig_nonsquare", lambda T: T.linalg.eig(_R(T)), "linalg.eig: A must be batches of square"),
    ("eigvals_1d", lambda T: T.linalg.eigvals(T.ones(3)), "linalg.eigvals: The input tensor A"),
    ("eigh_uplo", lambda T: T.linalg.eigh(T.eye(3), UPLO="X"),
     "Expected UPLO argument to be 'L' or 'U', but got X"),
    ("eigh_int", lambda T: T.linalg.eigvalsh(_I(T)), '"linalg_eigh_cpu" not implemented for '
                                                     "'Long'"),
    ("eigh_nonsquare", lambda T: T.linalg.eigh(_R(T)), "linalg.eigh: A must be batches"),
    ("pinv_int", lambda T: T.linalg.pinv(_I(T)),
     r"linalg.pinv\(Long\{\[3, 3\]\}\): expected a tensor with 2 or more dimensions of float, "
     "double, cfloat or cdouble types"),
    ("rank_int", lambda T: T.linalg.matrix_rank(_I(T)),
     "This function doesn't handle types other than float and double"),
    ("rank_1d", lambda T: T.linalg.matrix_rank(T.ones(3)),
     "torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions."),
    ("lstsq_int", lambda T: T.linalg.lstsq(_I(T), _I(T)), "doesn't handle types other than"),
    ("lstsq_rows", lambda T: T.linalg.lstsq(T.eye(3), T.ones(2, 2)),
     r"torch.linalg.lstsq: input.size\(-2\) should match other.size\(-2\)"),
    ("lstsq_driver", lambda T: T.linalg.lstsq(T.eye(3), T.eye(3), driver="foo"),
     r"parameter `driver` should be one of \(gels, gelsy, gelsd, gelss\)"),
    ("matrix_power_float_n", lambda T: T.linalg.matrix_power(T.eye(3), 2.0),
     r"argument 'n' \(position 2\) must be int, not float"),
    ("matrix_power_nonsquare", lambda T: T.linalg.matrix_power(_R(T), 2),
     "linalg.matrix_power: A must be batches of square matrices"),
    ("matrix_power_1d", lambda T: T.matrix_power(T.ones(3), 2),
     "linalg.matrix_power: The input tensor A must have at least 2 dimensions."),
    ("matrix_power_int_neg", lambda T: T.linalg.matrix_power(_I(T), -1),
     "linalg.inv: Expected a floating point"),
    ("matrix_exp_int", lambda T: T.linalg.matrix_exp(_I(T)), "linalg.matrix_exp: Expected a"),
    ("norm_int", lambda T: T.linalg.norm(_I(T)),
     "linalg.vector_norm: Expected a floating point or complex tensor as input. Got Long"),
    ("matrix_norm_int", lambda T: T.linalg.matrix_norm(_I(T), 2),
     "linalg.matrix_norm: Expected a floating point or complex tensor as input. Got Long"),
    ("matrix_norm_ord", lambda T: T.linalg.matrix_norm(T.eye(3), 3),
     "linalg.matrix_norm: Order 3 not supported."),
    ("matrix_norm_str", lambda T: T.linalg.matrix_norm(T.eye(3), "foo"),
     "linalg.matrix_norm: Order foo not supported."),
    ("matrix_norm_1d", lambda T: T.linalg.matrix_norm(T.ones(3)),
     "linalg.matrix_norm: The input tensor A must have at least 2 dimensions."),
    ("matrix_norm_same_dims", lambda T: T.linalg.matrix_norm(T.ones(2, 2, 2), dim=(0, 0)),
     r"linalg.matrix_norm: dims must be different. Got \(0, 0\)"),
    ("matrix_norm_one_dim", lambda T: T.linalg.matrix_norm(T.ones(2, 2, 2), dim=(0,)),
     "linalg.matrix_norm: dim must be a 2-tuple. Got 0"),
    ("matrix_norm_narrowing", lambda T: T.linalg.matrix_norm(T.eye(2).double(),
                                                             dtype=T.float32),
     r"linalg.matrix_norm: the dtype of the input \(Double\) should be convertible without "
     r"narrowing to the specified dtype \(Float\)"),
    ("norm_3d_ord", lambda T: T.linalg.norm(T.ones(2, 2, 2), 2),
     "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got 3D."),
    ("norm_three_dims", lambda T: T.linalg.norm(T.ones(2, 2, 2), 2, dim=(0, 1, 2)),
     r"linalg.norm: If dim is specified, it must be of length 1 or 2. Got \[0, 1, 2\]"),
    ("norm_str_int_dim", lambda T: T.linalg.norm(T.ones(2, 2), "fro", dim=0),
     "linalg.matrix_norm: dim must be a 2-tuple. Got 0"),
    ("norm_str_1d", lambda T: T.linalg.norm(T.ones(3), "fro"),
     "linalg.matrix_norm: The input tensor A must have at least 2 dimensions."),
    ("vector_norm_str", lambda T: T.linalg.vector_norm(T.ones(3), "fro"),
     r"argument 'ord' \(position 2\) must be Number, not str"),
    ("vector_norm_int_dtype", lambda T: T.linalg.vector_norm(T.ones(3), dtype=T.long),
     "linalg.vector_norm: dtype should be floating point or complex, but got Long"),
    ("vector_norm_narrowing", lambda T: T.linalg.vector_norm(T.ones(3).double(),
                                                             dtype=T.half),
     r"convertible without narrowing to the specified dtype \(Half\)"),
    ("vector_norm_complex_real_dtype", lambda T: T.linalg.vector_norm(
        T.tensor([1j]), dtype=T.float64),
     "linalg.vector_norm: dtype should be complex for complex inputs, but got Double"),
    ("vector_norm_inf_empty", lambda T: T.linalg.vector_norm(T.zeros(0), math.inf),
     "linalg.vector_norm cannot compute the inf norm on an empty tensor because the operation "
     "does not have an identity"),
    ("vector_norm_neg_inf_empty", lambda T: T.linalg.vector_norm(T.zeros(2, 0), -math.inf, 1),
     "cannot compute the -inf norm on the dimension 1because this dimension is empty"),
]


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name,fn,match", cases(ERRORS))
def test_errors(name, fn, match):
    both(fn, match=match, raises=True)


LINALG_ERRORS = [
    # name, fn(T), message regex: LinAlgError (a RuntimeError) in eager mode
    ("inv_singular", lambda T: T.linalg.inv(T.zeros(3, 3)),
     r"^linalg.inv: The diagonal element 1 is zero, the inversion could not be completed "
     r"because the input matrix is singular.$"),
    ("inv_singular_pivot", lambda T: T.linalg.inv(T.tensor(_SING)), "diagonal element 3 is zero"),
    ("inv_batch", lambda T: T.inverse(T.stack([T.eye(3), T.zeros(3, 3)])),
     r"^linalg.inv: \(Batch element 1\): The diagonal element 1 is zero"),
    ("inv_ex_check", lambda T: T.linalg.inv_ex(T.zeros(2, 2), check_errors=True),
     "diagonal element 1 is zero"),
    ("matrix_power_singular", lambda T: T.matrix_power(T.zeros(2, 2), -2),
     "diagonal element 1 is zero"),
    ("solve_singular", lambda T: T.linalg.solve(T.tensor(_SING), T.ones(3)),
     r"^torch.linalg.solve: The solver failed because the input matrix is singular.$"),
    ("solve_batch", lambda T: T.linalg.solve(T.zeros(2, 2, 2), T.ones(2, 2, 1)),
     r"^torch.linalg.solve: \(Batch element 0\): The solver failed"),
    ("cholesky_not_pd", lambda T: T.linalg.cholesky(T.tensor(_NOT_PD)),
     r"^linalg.cholesky: The factorization could not be completed because the input is not "
     r"positive-definite \(the leading minor of order 2 is not positive-definite\).$"),
    ("cholesky_batch", lambda T: T.linalg.cholesky(T.stack([T.eye(3), -T.eye(3)])),
     r"^linalg.cholesky: \(Batch element 1\): .* minor of order 1 is"),
    ("cholesky_upper", lambda T: T.linalg.cholesky(T.tensor([[4., 100.], [1., 3.]]),
                                                   upper=True), "minor of order 2"),
    ("cholesky_ex_check", lambda T: T.linalg.cholesky_ex(-T.eye(2), check_errors=True),
     "minor of order 1"),
    ("cholesky_torch", lambda T: T.cholesky(-T.eye(2)),
     r"^cholesky: The factorization could not be completed"),
]


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name,fn,match", cases(LINALG_ERRORS))
def test_linalg_errors(name, fn, match):
    _, got = both(fn, match=match, raises=True)
    assert isinstance(got.exc, tl.linalg.LinAlgError) and isinstance(got.exc, RuntimeError)


def test_linalg_error_class():
    assert issubclass(tl.linalg.LinAlgError, RuntimeError)
    assert tl.linalg.LinAlgError.__name__ == torch.linalg.LinAlgError.__name__


def test_qr_backward_refused():
    """PyTorch records these but its backward raises."""
    both(lambda T: T.linalg.qr(T.ones(3, 2, requires_grad=True), "complete").Q.sum().backward(),
         match="not differentiable when mode='complete' and nrows > ncols", raises=True)
    both(lambda T: T.linalg.qr(T.eye(2, requires_grad=True), "r").R.sum().backward(),
         match="depends on Q, which is not computed when mode='r'", raises=True)


def test_deprecation_warnings():
    with pytest.warns(UserWarning, match="torch.cholesky is deprecated"):
        tl.cholesky(tl.eye(2))
    with pytest.warns(UserWarning, match="torch.qr is deprecated"):
        tl.qr(tl.eye(2))


# ------------------------------------------------------------------------------------------------
# Traced (jax.jit through to_jax_function): same values as eager; no host reads
# ------------------------------------------------------------------------------------------------

TRACED = [
    # name, fn(*tensors), inputs
    ("addmm", lambda i, a, b: tl.addmm(i, a, b, beta=0, alpha=2), [("gen", (2, 2)),
                                                                   ("gen", (2, 3)),
                                                                   ("gen", (3, 2))]),
    ("einsum", lambda a, b: tl.einsum("bij,jk->bik", a, b), [("gen", (2, 2, 3)),
                                                             ("gen", (3, 3))]),
    ("cdist", lambda a, b: tl.cdist(a, b, p=3), [("gen", (3, 2)), ("gen", (4, 2))]),
    ("det_inv", lambda x: tl.linalg.det(x).reshape(2, 1, 1) * tl.linalg.inv(x),
     [("gen", (2, 3, 3))]),
    ("solve", lambda a, b: tl.linalg.solve(a, b), [("gen", (3, 3)), ("gen", (3,))]),
    ("cholesky", lambda x: tl.linalg.cholesky(x, upper=True), [("spd", (3, 3))]),
    ("cholesky_ex", lambda x: tl.linalg.cholesky_ex(-x).info, [("spd", (2, 3, 3))]),
    ("inv_ex_singular", lambda x: tl.linalg.inv_ex(x * 0).info, [("gen", (3, 3))]),
    ("svd", lambda x: _recon(tl.linalg.svd(x)), [("svd", (4, 3))]),
    ("eigh", lambda x: tl.linalg.eigh(x).eigenvalues, [("sym", (3, 3))]),
    ("eig", lambda x: tl.linalg.eigvals(x), [("eig", (3, 3))]),
    ("qr", lambda x: tl.linalg.qr(x).R, [("gen", (4, 3))]),
    ("pinv", lambda x: tl.linalg.pinv(x), [("svd", (3, 4))]),
    ("lstsq", lambda a, b: tl.linalg.lstsq(a, b, driver="gelsd").solution, [("svd", (4, 3)),
                                                                          ("gen", (4, 2))]),
    ("matrix_rank", lambda x: tl.linalg.matrix_rank(x), [("svd", (4, 3))]),
    ("matrix_power", lambda x: tl.linalg.matrix_power(x, -3), [("gen", (3, 3))]),
    ("matrix_exp", lambda x: tl.linalg.matrix_exp(x), [("gen", (3, 3))]),
    ("norms", lambda x: tl.linalg.matrix_norm(x, 2) + tl.linalg.norm(x, 1), [("svd", (3, 3))]),
]


@pytest.mark.parametrize("name,fn,spec", cases(TRACED))
def test_traced(name, fn, spec):
    rng = np.random.default_rng(seed_of(name))
    arrays = [x.values(rng) for x in _inputs(spec, "float64")]
    eager = fn(*[tl.tensor(a) for a in arrays])
    with jax.enable_x64(True):   # its JAX code reads 64-bit data
        traced = jax.jit(to_jax_function(fn))(*arrays)
    np.testing.assert_allclose(np.asarray(traced), eager.numpy(), rtol=1e-10, atol=1e-12)


def test_traced_singular_does_not_raise():
    """While tracing, values cannot be read: a singular matrix gives inf/NaN, not an error."""
    out = jax.jit(to_jax_function(tl.linalg.inv))(np.zeros((2, 2)))
    assert not np.isfinite(np.asarray(out)).all()


def test_traced_lstsq_residuals():
    """Traced, residuals always come for m > n (the rank cannot be read)."""
    a = M((4, 2), "float64", "svd").values(np.random.default_rng(1))
    b = np.ones((4, 1))
    with jax.enable_x64(True):   # its JAX code reads 64-bit data
        res = jax.jit(to_jax_function(lambda a, b: tl.linalg.lstsq(a, b, driver="gelsd")[1]))(
            a, b)
    eager = tl.linalg.lstsq(tl.tensor(a), tl.tensor(b), driver="gelsd").residuals
    np.testing.assert_allclose(np.asarray(res), eager.numpy(), rtol=1e-10)


def test_grads_match_jax():
    """The engine's gradients through a chain of linalg ops equal jax.grad's."""
    rng = np.random.default_rng(3)
    x = tl.tensor(M((3, 3), "float64", "spd").values(rng))
    b = tl.tensor(rng.standard_normal((3, 2)))

    def f(x, b):
        L = tl.linalg.cholesky(x)
        y = tl.linalg.solve(L, b)
        return tl.linalg.matrix_norm(y, "nuc") + tl.logdet(x) + tl.einsum("ij,ij->", y, y)
    tl.testing.assert_grads_match_jax(f, x, b)


def test_double_backward():
    """create_graph through a decomposition (cholesky's derivative is a custom rule)."""
    def go(T):
        x = T.tensor(M((3, 3), "float64", "spd").values(np.random.default_rng(4)),
                     requires_grad=True)
        g, = T.autograd.grad(T.linalg.cholesky(x).sum() + T.linalg.det(x), x, create_graph=True)
        gg, = T.autograd.grad((g * g).sum(), x)
        return g, gg
    both(go)


def test_saved_result_modified_inplace():
    """inv saves its result, as PyTorch does: writing into it breaks backward."""
    both(lambda T: (lambda x: (lambda y: (y.add_(1), y.sum().backward()))(T.linalg.inv(x)))(
        T.eye(2, requires_grad=True) * 2), match="modified by an inplace operation", raises=True)
