"""``torchlike.linalg``: mirrors ``torch.linalg``.

    import torchlike as torch
    L = torch.linalg.cholesky(A)            # A = L @ L.mH
    U, S, Vh = torch.linalg.svd(A, full_matrices=False)

Decompositions raise ``torchlike.linalg.LinAlgError`` for singular / non-positive-definite input
in eager mode; while tracing they cannot look at values and return inf/NaN instead (NOTE
[ linalg errors ] in _ops/decomp.py).
"""
from ._ops.decomp import LinAlgError as LinAlgError
from ._ops.decomp import cholesky_ex as cholesky_ex
from ._ops.decomp import det as det
from ._ops.decomp import eig as eig
from ._ops.decomp import eigh as eigh
from ._ops.decomp import eigvals as eigvals
from ._ops.decomp import eigvalsh as eigvalsh
from ._ops.decomp import inv as inv
from ._ops.decomp import inv_ex as inv_ex
from ._ops.decomp import linalg_cholesky as cholesky
from ._ops.decomp import linalg_qr as qr
from ._ops.decomp import linalg_svd as svd
from ._ops.decomp import lstsq as lstsq
from ._ops.decomp import matrix_exp as matrix_exp
from ._ops.decomp import matrix_power as matrix_power
from ._ops.decomp import matrix_rank as matrix_rank
from ._ops.decomp import pinv as pinv
from ._ops.decomp import slogdet as slogdet
from ._ops.decomp import solve as solve
from ._ops.decomp import solve_ex as solve_ex
from ._ops.decomp import svdvals as svdvals
from ._ops.linalg import linalg_cross as cross
from ._ops.linalg import linalg_diagonal as diagonal
from ._ops.linalg import matmul as matmul
from ._ops.linalg import multi_dot as multi_dot
from ._ops.linalg import vecdot as vecdot
from ._ops.linalg_extra import cond as cond
from ._ops.linalg_extra import tensorinv as tensorinv
from ._ops.linalg_extra import tensorsolve as tensorsolve
from ._ops.linalg_extra import vander as vander
from ._ops.linalg_factor import householder_product as householder_product
from ._ops.linalg_factor import lu as lu
from ._ops.linalg_factor import lu_factor as lu_factor
from ._ops.linalg_factor import lu_factor_ex as lu_factor_ex
from ._ops.linalg_factor import lu_solve as lu_solve
from ._ops.linalg_factor import solve_triangular as solve_triangular
from ._ops.linalg_ldl import ldl_factor as ldl_factor
from ._ops.linalg_ldl import ldl_factor_ex as ldl_factor_ex
from ._ops.linalg_ldl import ldl_solve as ldl_solve
from ._ops.norms import matrix_norm as matrix_norm
from ._ops.norms import norm as norm
from ._ops.norms import vector_norm as vector_norm
