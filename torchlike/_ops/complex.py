"""Complex-number ops: real, imag, conj, angle, view_as_real/view_as_complex, polar, complex."""

PUBLIC = ()
TENSOR_METHODS = {}
