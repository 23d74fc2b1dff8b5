"""Folding an eval-mode BatchNorm into the preceding convolution or linear layer: mirrors
``torch.nn.utils.fusion``."""
import copy

from ... import _creation
from ..._ops.unary import rsqrt
from ..parameter import Parameter


def fuse_conv_bn_eval(conv, bn, transpose=False):
    """Mirrors ``torch.nn.utils.fuse_conv_bn_eval``: a copy of ``conv`` whose weight and bias
    absorb the eval-mode BatchNorm ``bn`` that follows it (``transpose`` for ConvTranspose)."""
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused_conv = copy.deepcopy(conv)
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")
    fused_conv.weight, fused_conv.bias = fuse_conv_bn_weights(
        fused_conv.weight, fused_conv.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight,
        bn.bias, transpose)
    return fused_conv


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose=False):
    """Mirrors ``torch.nn.utils.fuse_conv_bn_weights``: the (weight, bias) Parameters of a
    convolution followed by a BatchNorm with these statistics and affine parameters:
    ``w * gamma / sqrt(var + eps)`` (per output channel) and
    ``(b - mean) * gamma / sqrt(var + eps) + beta``."""
    w_dtype = conv_w.dtype
    b_dtype = conv_b.dtype if conv_b is not None else w_dtype
    if conv_b is None:
        conv_b = _creation.zeros_like(bn_rm)
    if bn_w is None:
        bn_w = _creation.ones_like(bn_rm)
    if bn_b is None:
        bn_b = _creation.zeros_like(bn_rm)
    bn_var_rsqrt = rsqrt(bn_rv + bn_eps)
    rest = [1] * (conv_w.ndim - 2)
    shape = [1, -1] + rest if transpose else [-1, 1] + rest
    fused_w = (conv_w * (bn_w * bn_var_rsqrt).reshape(shape)).to(dtype=w_dtype)
    fused_b = ((conv_b - bn_rm) * bn_var_rsqrt * bn_w + bn_b).to(dtype=b_dtype)
    return Parameter(fused_w, conv_w.requires_grad), Parameter(fused_b, conv_b.requires_grad)


def fuse_linear_bn_eval(linear, bn):
    """Mirrors ``torch.nn.utils.fuse_linear_bn_eval``: a copy of ``linear`` whose weight and
    bias absorb the eval-mode BatchNorm ``bn`` that follows it."""
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused_linear = copy.deepcopy(linear)
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError("To fuse, linear.out_features == bn.num_features or "
                             "bn.num_features == 1, got linear.out_features="
                             f"{linear.out_features} and bn.num_features={bn.num_features}")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")
    fused_linear.weight, fused_linear.bias = fuse_linear_bn_weights(
        fused_linear.weight, fused_linear.bias, bn.running_mean, bn.running_var, bn.eps,
        bn.weight, bn.bias)
    return fused_linear


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    """Mirrors ``torch.nn.utils.fuse_linear_bn_weights``: the (weight, bias) Parameters of a
    linear layer followed by a BatchNorm with these statistics and affine parameters."""
    w_dtype = linear_w.dtype
    b_dtype = linear_b.dtype if linear_b is not None else w_dtype
    if linear_b is None:
        linear_b = _creation.zeros_like(bn_rm)
    bn_scale = bn_w * rsqrt(bn_rv + bn_eps)
    fused_w = linear_w * bn_scale.unsqueeze(-1).to(dtype=w_dtype)
    fused_b = ((linear_b - bn_rm) * bn_scale + bn_b).to(dtype=b_dtype)
    return Parameter(fused_w, linear_w.requires_grad), Parameter(fused_b, linear_b.requires_grad)
