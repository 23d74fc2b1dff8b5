"""Parameters <-> one flat vector: mirrors ``torch.nn.utils.convert_parameters``."""
from ..._ops.shape import cat
from ..._tensor import Tensor


def parameters_to_vector(parameters):
    """Mirrors ``torch.nn.utils.parameters_to_vector``: every parameter flattened and
    concatenated into one 1-D Tensor (differentiable: ``CatBackward0`` of ``ViewBackward0``s).

    Example::

        >>> vec = torchlike.nn.utils.parameters_to_vector(model.parameters())
    """
    device = None
    vec = []
    for param in parameters:
        device = _check_param_device(param, device)
        vec.append(param.view(-1))
    return cat(vec)


def vector_to_parameters(vec, parameters):
    """Mirrors ``torch.nn.utils.vector_to_parameters``: cut ``vec`` into pieces the sizes of
    ``parameters`` and make them each parameter's data (in order)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {typename(vec)}")
    device = None
    pointer = 0
    for param in parameters:
        device = _check_param_device(param, device)
        n = param.numel()
        param.data = vec[pointer:pointer + n].view_as(param).data
        pointer += n


def _check_param_device(param, old_device):
    """The accelerator index of ``param`` (-1 on the CPU); a TypeError when it differs from
    ``old_device`` (the previous parameter's)."""
    here = param.get_device() if param.device.type != "cpu" else -1
    if old_device is not None and here != old_device:
        raise TypeError("Found two parameters on different devices, this is currently not "
                        "supported.")
    return here


def typename(obj):
    """Mirrors ``torch.typename``: ``'torch.FloatTensor'`` for a Tensor, else the dotted name of
    the object's type (``'list'``, ``'numpy.ndarray'``)."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module = obj.__class__.__module__ or ""
        qualname = obj.__class__.__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


PUBLIC = ("typename",)
TENSOR_METHODS = {}
