"""Sorting and searching: sort, argsort, topk, unique, searchsorted, histograms, ..."""

# Public names this family adds to the torchlike namespace, and the Tensor methods it binds.
PUBLIC = ()
TENSOR_METHODS = {}
