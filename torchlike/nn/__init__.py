"""torchlike.nn: mirrors ``torch.nn`` -- Module, Parameter, the standard layers, init, losses.

The maths lives in ``torchlike.nn.functional``; each layer holds its parameters and calls it.
"""
from . import attention as attention, functional as functional, init as init, modules as modules
from .modules.activation import (
    CELU as CELU, ELU as ELU, GELU as GELU, GLU as GLU, Hardshrink as Hardshrink,
    Hardsigmoid as Hardsigmoid, Hardswish as Hardswish, Hardtanh as Hardtanh,
    LeakyReLU as LeakyReLU, LogSigmoid as LogSigmoid, LogSoftmax as LogSoftmax, Mish as Mish,
    PReLU as PReLU, ReLU as ReLU, ReLU6 as ReLU6, RReLU as RReLU, SELU as SELU, SiLU as SiLU,
    Sigmoid as Sigmoid, Softmax as Softmax, Softmax2d as Softmax2d, Softmin as Softmin,
    Softplus as Softplus, Softshrink as Softshrink, Softsign as Softsign, Tanh as Tanh,
    Tanhshrink as Tanhshrink, Threshold as Threshold)
from .modules.adaptive import AdaptiveLogSoftmaxWithLoss as AdaptiveLogSoftmaxWithLoss
from .modules.attention import MultiheadAttention as MultiheadAttention
from .modules.batchnorm import (
    BatchNorm1d as BatchNorm1d, BatchNorm2d as BatchNorm2d, BatchNorm3d as BatchNorm3d,
    LazyBatchNorm1d as LazyBatchNorm1d, LazyBatchNorm2d as LazyBatchNorm2d,
    LazyBatchNorm3d as LazyBatchNorm3d, SyncBatchNorm as SyncBatchNorm)
from .modules.container import (
    ModuleDict as ModuleDict, ModuleList as ModuleList, ParameterDict as ParameterDict,
    ParameterList as ParameterList, Sequential as Sequential)
from .modules.conv import (
    Conv1d as Conv1d, Conv2d as Conv2d, Conv3d as Conv3d, ConvTranspose1d as ConvTranspose1d,
    ConvTranspose2d as ConvTranspose2d, ConvTranspose3d as ConvTranspose3d,
    LazyConv1d as LazyConv1d, LazyConv2d as LazyConv2d, LazyConv3d as LazyConv3d,
    LazyConvTranspose1d as LazyConvTranspose1d, LazyConvTranspose2d as LazyConvTranspose2d,
    LazyConvTranspose3d as LazyConvTranspose3d)
from .modules.distance import (
    CosineSimilarity as CosineSimilarity, PairwiseDistance as PairwiseDistance)
from .modules.dropout import (
    AlphaDropout as AlphaDropout, Dropout as Dropout, Dropout1d as Dropout1d,
    Dropout2d as Dropout2d, Dropout3d as Dropout3d, FeatureAlphaDropout as FeatureAlphaDropout)
from .modules.fold import Fold as Fold, Unfold as Unfold
from .modules.instancenorm import (
    InstanceNorm1d as InstanceNorm1d, InstanceNorm2d as InstanceNorm2d,
    InstanceNorm3d as InstanceNorm3d, LazyInstanceNorm1d as LazyInstanceNorm1d,
    LazyInstanceNorm2d as LazyInstanceNorm2d, LazyInstanceNorm3d as LazyInstanceNorm3d)
from .modules.linear import (
    Bilinear as Bilinear, Identity as Identity, LazyLinear as LazyLinear, Linear as Linear)
from .modules.loss import (
    BCELoss as BCELoss, BCEWithLogitsLoss as BCEWithLogitsLoss, CTCLoss as CTCLoss,
    CosineEmbeddingLoss as CosineEmbeddingLoss, CrossEntropyLoss as CrossEntropyLoss,
    GaussianNLLLoss as GaussianNLLLoss, HingeEmbeddingLoss as HingeEmbeddingLoss,
    HuberLoss as HuberLoss, KLDivLoss as KLDivLoss, L1Loss as L1Loss,
    LinearCrossEntropyLoss as LinearCrossEntropyLoss,
    MarginRankingLoss as MarginRankingLoss, MSELoss as MSELoss,
    MultiLabelMarginLoss as MultiLabelMarginLoss,
    MultiLabelSoftMarginLoss as MultiLabelSoftMarginLoss, MultiMarginLoss as MultiMarginLoss,
    NLLLoss as NLLLoss, PoissonNLLLoss as PoissonNLLLoss, SmoothL1Loss as SmoothL1Loss,
    SoftMarginLoss as SoftMarginLoss, TripletMarginLoss as TripletMarginLoss,
    TripletMarginWithDistanceLoss as TripletMarginWithDistanceLoss)
from .modules.linear_cross_entropy_options import (
    LinearCrossEntropyOptions as LinearCrossEntropyOptions)
from .modules.module import Module as Module
from .modules.normalization import (
    CrossMapLRN2d as CrossMapLRN2d, GroupNorm as GroupNorm, LayerNorm as LayerNorm,
    LocalResponseNorm as LocalResponseNorm, RMSNorm as RMSNorm)
from .modules.padding import (
    CircularPad1d as CircularPad1d, CircularPad2d as CircularPad2d,
    CircularPad3d as CircularPad3d, ConstantPad1d as ConstantPad1d,
    ConstantPad2d as ConstantPad2d, ConstantPad3d as ConstantPad3d,
    ReflectionPad1d as ReflectionPad1d, ReflectionPad2d as ReflectionPad2d,
    ReflectionPad3d as ReflectionPad3d, ReplicationPad1d as ReplicationPad1d,
    ReplicationPad2d as ReplicationPad2d, ReplicationPad3d as ReplicationPad3d,
    ZeroPad1d as ZeroPad1d, ZeroPad2d as ZeroPad2d, ZeroPad3d as ZeroPad3d)
from .modules.pooling import (
    AdaptiveAvgPool1d as AdaptiveAvgPool1d, AdaptiveAvgPool2d as AdaptiveAvgPool2d,
    AdaptiveAvgPool3d as AdaptiveAvgPool3d, AdaptiveMaxPool1d as AdaptiveMaxPool1d,
    AdaptiveMaxPool2d as AdaptiveMaxPool2d, AdaptiveMaxPool3d as AdaptiveMaxPool3d,
    AvgPool1d as AvgPool1d, AvgPool2d as AvgPool2d, AvgPool3d as AvgPool3d,
    FractionalMaxPool2d as FractionalMaxPool2d, FractionalMaxPool3d as FractionalMaxPool3d,
    LPPool1d as LPPool1d, LPPool2d as LPPool2d, LPPool3d as LPPool3d, MaxPool1d as MaxPool1d,
    MaxPool2d as MaxPool2d, MaxPool3d as MaxPool3d, MaxUnpool1d as MaxUnpool1d,
    MaxUnpool2d as MaxUnpool2d, MaxUnpool3d as MaxUnpool3d)
from .modules.rnn import (
    GRU as GRU, GRUCell as GRUCell, LSTM as LSTM, LSTMCell as LSTMCell, RNN as RNN,
    RNNBase as RNNBase, RNNCell as RNNCell, RNNCellBase as RNNCellBase)
from .modules.shape import (
    ChannelShuffle as ChannelShuffle, Flatten as Flatten, PixelShuffle as PixelShuffle,
    PixelUnshuffle as PixelUnshuffle, Unflatten as Unflatten, Upsample as Upsample,
    UpsamplingBilinear2d as UpsamplingBilinear2d, UpsamplingNearest2d as UpsamplingNearest2d)
from .modules.sparse import Embedding as Embedding, EmbeddingBag as EmbeddingBag
from .modules.transformer import (
    Transformer as Transformer, TransformerDecoder as TransformerDecoder,
    TransformerDecoderLayer as TransformerDecoderLayer, TransformerEncoder as TransformerEncoder,
    TransformerEncoderLayer as TransformerEncoderLayer)
from .modules.utils import factory_kwargs as factory_kwargs
from .parameter import (
    Buffer as Buffer, Parameter as Parameter, UninitializedBuffer as UninitializedBuffer,
    UninitializedParameter as UninitializedParameter)
from . import utils as utils  # noqa: E402  (the utilities build on the layers above)
from . import parallel as parallel  # noqa: E402  (DataParallel wraps the layers)
from .parallel import DataParallel as DataParallel  # noqa: E402
