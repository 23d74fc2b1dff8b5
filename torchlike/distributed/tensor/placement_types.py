"""Mirrors ``torch.distributed.tensor.placement_types``: how a DTensor lies along each dimension
of its mesh (``Shard(dim)``: split along tensor dimension ``dim``; ``Replicate()``: whole on
every device)."""

__all__ = ["Placement", "Replicate", "Shard"]


class Placement:
    """Mirrors ``torch.distributed.tensor.placement_types.Placement``: the base of the
    placements."""

    __slots__ = ()

    def is_shard(self, dim=None):
        """Whether this is ``Shard`` (along ``dim`` when given)."""
        return False

    def is_replicate(self):
        """Whether this is ``Replicate``."""
        return False

    def is_partial(self, reduce_op=None):
        """Whether this is ``Partial`` (torchlike has no partial placement: NOTE [ DTensor as
        a global array ] in _api.py)."""
        return False


class Shard(Placement):
    """Mirrors ``torch.distributed.tensor.Shard``: the tensor is split into equal pieces along
    tensor dimension ``dim``, one per device along the mesh dimension this placement is for.

    Args:
        dim: the tensor dimension to split (negative counts from the end).

    Example::

        >>> distribute_tensor(torch.ones(8, 4), mesh, [Shard(0)]).placements
        (Shard(dim=0),)
    """

    __slots__ = ("dim",)

    def __init__(self, dim):
        object.__setattr__(self, "dim", dim)

    def __setattr__(self, name, value):   # frozen, as PyTorch's dataclass
        raise AttributeError(f"cannot assign to field '{name}'")

    def is_shard(self, dim=None):
        return dim is None or dim == self.dim

    def __eq__(self, other):
        return isinstance(other, Shard) and other.dim == self.dim

    def __hash__(self):
        return hash((Shard, self.dim))

    def __repr__(self):
        return f"Shard(dim={self.dim})"

    def __str__(self):
        return f"S({self.dim})"

    def __reduce__(self):
        return (Shard, (self.dim,))


class Replicate(Placement):
    """Mirrors ``torch.distributed.tensor.Replicate``: every device along the mesh dimension
    holds the whole tensor.

    Example::

        >>> distribute_tensor(torch.ones(8, 4), mesh, [Replicate()]).placements
        (Replicate(),)
    """

    __slots__ = ()

    def is_replicate(self):
        return True

    def __eq__(self, other):
        return isinstance(other, Replicate)

    def __hash__(self):
        return hash(Replicate)

    def __repr__(self):
        return "Replicate()"

    def __str__(self):
        return "R"

    def __reduce__(self):
        return (Replicate, ())
