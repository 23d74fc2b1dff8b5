"""torchlike.return_types: the named tuples ops return (mirrors torch.return_types).

    values, indices = x.max(dim=1)      # also r.values, r.indices
"""
from collections import namedtuple


def _structseq(name, fields):
    base = namedtuple(name, fields)

    def __repr__(self):
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(self._fields, self))
        return f"torch.return_types.{name}(\n{body})"

    return type(name, (base,), {"__slots__": (), "__repr__": __repr__,
                                "__module__": "torchlike.return_types"})


max = _structseq("max", ("values", "indices"))  # noqa: A001
min = _structseq("min", ("values", "indices"))  # noqa: A001
sort = _structseq("sort", ("values", "indices"))
topk = _structseq("topk", ("values", "indices"))
kthvalue = _structseq("kthvalue", ("values", "indices"))
mode = _structseq("mode", ("values", "indices"))
median = _structseq("median", ("values", "indices"))
nanmedian = _structseq("nanmedian", ("values", "indices"))
cummax = _structseq("cummax", ("values", "indices"))
cummin = _structseq("cummin", ("values", "indices"))
aminmax = _structseq("aminmax", ("min", "max"))
frexp = _structseq("frexp", ("mantissa", "exponent"))
histogram = _structseq("histogram", ("hist", "bin_edges"))
histogramdd = _structseq("histogramdd", ("hist", "bin_edges"))
geqrf = _structseq("geqrf", ("a", "tau"))
lu_unpack = _structseq("lu_unpack", ("P", "L", "U"))
triangular_solve = _structseq("triangular_solve", ("solution", "cloned_coefficient"))
histogram = _structseq("histogram", ("hist", "bin_edges"))
histogramdd = _structseq("histogramdd", ("hist", "bin_edges"))
slogdet = _structseq("slogdet", ("sign", "logabsdet"))
linalg_slogdet = _structseq("linalg_slogdet", ("sign", "logabsdet"))
linalg_inv_ex = _structseq("linalg_inv_ex", ("inverse", "info"))
linalg_solve_ex = _structseq("linalg_solve_ex", ("result", "info"))
linalg_cholesky_ex = _structseq("linalg_cholesky_ex", ("L", "info"))
linalg_qr = _structseq("linalg_qr", ("Q", "R"))
qr = _structseq("qr", ("Q", "R"))
linalg_svd = _structseq("linalg_svd", ("U", "S", "Vh"))
svd = _structseq("svd", ("U", "S", "V"))
linalg_eig = _structseq("linalg_eig", ("eigenvalues", "eigenvectors"))
linalg_eigh = _structseq("linalg_eigh", ("eigenvalues", "eigenvectors"))
linalg_lstsq = _structseq("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))
linalg_lu = _structseq("linalg_lu", ("P", "L", "U"))
linalg_lu_factor = _structseq("linalg_lu_factor", ("LU", "pivots"))
linalg_lu_factor_ex = _structseq("linalg_lu_factor_ex", ("LU", "pivots", "info"))
linalg_ldl_factor = _structseq("linalg_ldl_factor", ("LD", "pivots"))
linalg_ldl_factor_ex = _structseq("linalg_ldl_factor_ex", ("LD", "pivots", "info"))
