"""Joining and splitting ops: split, tensor_split, chunk, hstack/vstack/dstack/column_stack,
meshgrid, and the other multi-tensor shape ops that sit beside cat/stack in shape.py."""

PUBLIC = ()
TENSOR_METHODS = {}
