"""torchlike.nn.functional: mirrors ``torch.nn.functional``, the stateless maths every layer calls.

Each function is written once, as ops of the op table in ``torchlike/_ops/<family>.py``, and
re-exported here by name, one block per family.
"""
from torchlike._ops.normalization import (  # noqa: E402
    batch_norm as batch_norm, group_norm as group_norm, instance_norm as instance_norm,
    layer_norm as layer_norm, local_response_norm as local_response_norm,
    normalize as normalize, rms_norm as rms_norm)
from torchlike._ops.embedding import (  # noqa: E402
    embedding as embedding, embedding_bag as embedding_bag, one_hot as one_hot)
from torchlike._ops.activation import (  # noqa: E402
    celu as celu, celu_ as celu_, elu as elu, elu_ as elu_, gelu as gelu, glu as glu,
    gumbel_softmax as gumbel_softmax, hardshrink as hardshrink, hardsigmoid as hardsigmoid,
    hardswish as hardswish, hardtanh as hardtanh, hardtanh_ as hardtanh_,
    leaky_relu as leaky_relu, leaky_relu_ as leaky_relu_, log_softmax as log_softmax,
    logsigmoid as logsigmoid, mish as mish, prelu as prelu, relu as relu, relu6 as relu6,
    relu_ as relu_, rrelu as rrelu, rrelu_ as rrelu_, selu as selu, selu_ as selu_,
    sigmoid as sigmoid, silu as silu, softmax as softmax, softmin as softmin,
    softplus as softplus, softshrink as softshrink, softsign as softsign, tanh as tanh,
    tanhshrink as tanhshrink, threshold as threshold, threshold_ as threshold_)
from torchlike._ops.dropout import (  # noqa: E402
    alpha_dropout as alpha_dropout, dropout as dropout, dropout1d as dropout1d,
    dropout2d as dropout2d, dropout3d as dropout3d,
    feature_alpha_dropout as feature_alpha_dropout)
from torchlike._ops.loss import (  # noqa: E402
    binary_cross_entropy as binary_cross_entropy,
    binary_cross_entropy_with_logits as binary_cross_entropy_with_logits,
    cross_entropy as cross_entropy, gaussian_nll_loss as gaussian_nll_loss,
    huber_loss as huber_loss, kl_div as kl_div, l1_loss as l1_loss, mse_loss as mse_loss,
    nll_loss as nll_loss,
    poisson_nll_loss as poisson_nll_loss, smooth_l1_loss as smooth_l1_loss)
from torchlike._ops.conv import (  # noqa: E402
    conv1d as conv1d, conv2d as conv2d, conv3d as conv3d, conv_transpose1d as conv_transpose1d,
    conv_transpose2d as conv_transpose2d, conv_transpose3d as conv_transpose3d, fold as fold,
    unfold as unfold)
from torchlike._ops.pool import (  # noqa: E402
    adaptive_avg_pool1d as adaptive_avg_pool1d, adaptive_avg_pool2d as adaptive_avg_pool2d,
    adaptive_avg_pool3d as adaptive_avg_pool3d, adaptive_max_pool1d as adaptive_max_pool1d,
    adaptive_max_pool1d_with_indices as adaptive_max_pool1d_with_indices,
    adaptive_max_pool2d as adaptive_max_pool2d,
    adaptive_max_pool2d_with_indices as adaptive_max_pool2d_with_indices,
    adaptive_max_pool3d as adaptive_max_pool3d,
    adaptive_max_pool3d_with_indices as adaptive_max_pool3d_with_indices,
    avg_pool1d as avg_pool1d, avg_pool2d as avg_pool2d, avg_pool3d as avg_pool3d,
    lp_pool1d as lp_pool1d, lp_pool2d as lp_pool2d, lp_pool3d as lp_pool3d,
    max_pool1d as max_pool1d, max_pool1d_with_indices as max_pool1d_with_indices,
    max_pool2d as max_pool2d, max_pool2d_with_indices as max_pool2d_with_indices,
    max_pool3d as max_pool3d, max_pool3d_with_indices as max_pool3d_with_indices,
    max_unpool1d as max_unpool1d, max_unpool2d as max_unpool2d, max_unpool3d as max_unpool3d)
from torchlike._ops.loss_margin import (  # noqa: E402
    cosine_embedding_loss as cosine_embedding_loss, hinge_embedding_loss as hinge_embedding_loss,
    margin_ranking_loss as margin_ranking_loss, multi_margin_loss as multi_margin_loss,
    multilabel_margin_loss as multilabel_margin_loss,
    multilabel_soft_margin_loss as multilabel_soft_margin_loss,
    soft_margin_loss as soft_margin_loss, triplet_margin_loss as triplet_margin_loss,
    triplet_margin_with_distance_loss as triplet_margin_with_distance_loss)
from torchlike._ops.distance import (  # noqa: E402
    cosine_similarity as cosine_similarity, pairwise_distance as pairwise_distance, pdist as pdist)
from torchlike._ops.loss_ctc import ctc_loss as ctc_loss  # noqa: E402
from torchlike._ops.spatial import (  # noqa: E402
    affine_grid as affine_grid, channel_shuffle as channel_shuffle, grid_sample as grid_sample,
    interpolate as interpolate, native_channel_shuffle as native_channel_shuffle, pad as pad,
    pixel_shuffle as pixel_shuffle, pixel_unshuffle as pixel_unshuffle, upsample as upsample,
    upsample_bilinear as upsample_bilinear, upsample_nearest as upsample_nearest)
from torchlike._ops.attention import (  # noqa: E402
    _canonical_mask as _canonical_mask, _in_projection as _in_projection,
    _in_projection_packed as _in_projection_packed, _mha_shape_check as _mha_shape_check,
    _none_or_dtype as _none_or_dtype, bilinear as bilinear, linear as linear,
    multi_head_attention_forward as multi_head_attention_forward,
    scaled_dot_product_attention as scaled_dot_product_attention)
from torchlike._ops.pool_fractional import (  # noqa: E402
    fractional_max_pool2d as fractional_max_pool2d,
    fractional_max_pool2d_with_indices as fractional_max_pool2d_with_indices,
    fractional_max_pool3d as fractional_max_pool3d,
    fractional_max_pool3d_with_indices as fractional_max_pool3d_with_indices)
from torchlike._ops.native import conv_tbc as conv_tbc  # noqa: E402
from torchlike._ops.linalg_grouped import grouped_mm as grouped_mm  # noqa: E402
from torchlike._ops.loss_linear import linear_cross_entropy as linear_cross_entropy  # noqa: E402
from torchlike.nn.modules.utils import assert_int_or_pair as assert_int_or_pair  # noqa: E402
