"""torchlike.nn.utils: mirrors ``torch.nn.utils`` -- gradient clipping, parameters <-> vector,
parametrizations (weight_norm, spectral_norm, orthogonal), the legacy hook-based weight_norm and
spectral_norm, functional_call, skip_init and conv/linear + BatchNorm fusion."""
from . import parametrizations as parametrizations, parametrize as parametrize
from . import rnn as rnn, stateless as stateless
from .clip_grad import (
    clip_grad_norm as clip_grad_norm, clip_grad_norm_ as clip_grad_norm_,
    clip_grad_value_ as clip_grad_value_, clip_grads_with_norm_ as clip_grads_with_norm_,
    get_total_norm as get_total_norm)
from .convert_parameters import (
    parameters_to_vector as parameters_to_vector, vector_to_parameters as vector_to_parameters)
from .fusion import (
    fuse_conv_bn_eval as fuse_conv_bn_eval, fuse_conv_bn_weights as fuse_conv_bn_weights,
    fuse_linear_bn_eval as fuse_linear_bn_eval, fuse_linear_bn_weights as fuse_linear_bn_weights)
from .init import skip_init as skip_init
from .spectral_norm import remove_spectral_norm as remove_spectral_norm
from .spectral_norm import spectral_norm as spectral_norm
from .weight_norm import remove_weight_norm as remove_weight_norm, weight_norm as weight_norm
