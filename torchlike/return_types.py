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
