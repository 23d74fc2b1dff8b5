"""finfo / iinfo: numerical properties of torchlike dtypes (mirrors torch.finfo / torch.iinfo)."""
import ml_dtypes

from . import _dtype as D

__all__ = ["finfo", "iinfo"]


class finfo:
    """Mirrors ``torch.finfo``: bits, eps, max, min, tiny (= smallest_normal), resolution and
    dtype of a floating point dtype (a complex dtype describes its real part)."""

    def __init__(self, type=None):
        dt = D.get_default_dtype() if type is None else D.to_dtype(type)
        if dt.is_complex:
            dt = dt.to_real()
        if not dt.is_floating_point:
            raise TypeError("torch.finfo() requires a floating point input type. Use "
                            "torch.iinfo to handle 'torch.finfo'")
        info = ml_dtypes.finfo(dt._np)
        self.bits = info.bits
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -info.precision
        self.dtype = dt._name

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Mirrors ``torch.iinfo``: bits, max, min and dtype of an integer dtype."""

    def __init__(self, type):
        dt = D.to_dtype(type)
        if dt is D.bool_:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if dt.is_floating_point or dt.is_complex:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to "
                            "handle 'torch.iinfo'")
        info = ml_dtypes.iinfo(dt._np)
        self.bits, self.max, self.min, self.dtype = info.bits, int(info.max), int(info.min), \
            dt._name

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"
