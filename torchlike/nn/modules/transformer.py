"""Transformer, TransformerEncoder/Decoder and their layers (mirror ``torch.nn``'s; Vaswani et
al., 2017).  An encoder layer takes PyTorch's inference fast path where PyTorch does, one op for
the layer (NOTE [ encoder layer fast path ] in _ops/attention.py); the rest is the plain path."""
import copy
import warnings

import jax
import numpy as np

from ... import _amp_hook, _creation as C
from ... import _dtype as D
from ..._ops.attention import (_canonical_mask, _none_or_dtype, _transformer_encoder_layer_fwd,
                               run_encoder_layer)
from ..._ops.shape import triu
from ...autograd.grad_mode import is_grad_enabled
from ...backends import mha as _mha
from .. import functional as F, init
from .attention import MultiheadAttention
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm


def _activation(activation):
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    if isinstance(activation, str):
        raise RuntimeError(f"activation should be relu/gelu, not {activation}")
    return activation


def _clones(module, n):
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


def _causal_values(sz):
    """The (sz, sz) causal mask's values on the host: -inf above the diagonal, 0 elsewhere."""
    return np.triu(np.full((sz, sz), -np.inf, np.float32), 1)


def _generate_square_subsequent_mask(sz, device=None, dtype=None):
    """A float (sz, sz) mask with -inf above the diagonal and 0 elsewhere, made on the host: a
    generation loop asks for one of each length, which on the device would each compile a
    program."""
    dtype = dtype or D.get_default_dtype()
    if not (dtype.is_floating_point or dtype.is_complex):   # (full's error for -inf, or bool)
        return triu(C.full((sz, sz), float("-inf"), dtype=dtype, device=device), diagonal=1)
    return C.tensor(_causal_values(sz), dtype=dtype, device=device)


def _is_causal_mask(mask, is_causal=None, size=None):
    """PyTorch's ``_detect_is_causal_mask``: ``is_causal``, or whether ``mask`` equals the
    causal mask made in its dtype.  The comparison reads values, so a traced mask is taken as not
    causal (it is applied either way: the flag is only a hint); a float or bool mask on the CPU
    is compared on the host, where a loop over lengths compiles no comparison for each."""
    causal = is_causal is True
    if is_causal is None and mask is not None and not isinstance(mask._value(), jax.core.Tracer):
        sz = size if size is not None else mask.shape[-2]
        if mask.device.type == "cpu" and (mask.dtype.is_floating_point or mask.dtype == D.bool_):
            values = np.asarray(mask._value())
            causal = values.shape == (sz, sz) and np.array_equal(
                values, _causal_values(sz).astype(values.dtype))
        else:
            causal_mask = _generate_square_subsequent_mask(sz, dtype=mask.dtype)
            causal = tuple(mask.shape) == tuple(causal_mask.shape) and bool(
                (mask == causal_mask).all())
    return bool(causal)


class TransformerEncoderLayer(Module):
    """Mirrors ``torch.nn.TransformerEncoderLayer``: self-attention and a feed-forward block,
    each with dropout, a residual connection and LayerNorm (before the block when
    ``norm_first``, after it otherwise)."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True,
                 device=None, dtype=None):
        super().__init__()
        kw = dict(device=device, dtype=dtype)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, **kw)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation_relu_or_gelu = {F.relu: 1, "relu": 1, F.gelu: 2, "gelu": 2}.get(
            activation, 0) if not isinstance(activation, Module) else 0
        self.activation = _activation(activation)

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        src_key_padding_mask = _canonical_mask(
            src_key_padding_mask, "src_key_padding_mask", _none_or_dtype(src_mask), "src_mask",
            src.dtype)
        src_mask = _canonical_mask(src_mask, "src_mask", None, "", src.dtype, check_other=False)
        if self._fast_path(src):   # NOTE [ encoder layer fast path ] in _ops/attention.py
            attn = self.self_attn
            gelu, w = self.activation_relu_or_gelu == 2, self._fast_path_weights()
            plain_mask = src_key_padding_mask is None and src_mask is not None and \
                src_mask.dim() == 2
            if plain_mask and is_causal and src_mask.shape == (src.shape[1],) * 2:
                # NOTE [ causal encoder layers in buckets ] in _ops/attention.py
                return run_encoder_layer(src, attn.num_heads, gelu, self.norm_first,
                                         self.norm1.eps, w, causal=True)
            if plain_mask:
                mask, mask_type = src_mask, 0   # (broadcast in the op: no expanded copy)
            else:
                mask, mask_type = attn.merge_masks(src_mask, src_key_padding_mask, src)
            return _transformer_encoder_layer_fwd(
                src, attn.embed_dim, attn.num_heads, *w[:4], gelu, self.norm_first,
                self.norm1.eps, *w[4:], mask, mask_type)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _fast_path(self, src):
        """PyTorch's conditions for its inference fast path: eval mode, nothing to record, a
        batched batch-first input, a layer its kernel covers, no hooks, no autocast."""
        attn = self.self_attn
        if not (_mha.get_fastpath_enabled() and src.dim() == 3 and not self.training
                and attn.batch_first and attn.in_proj_bias is not None
                and attn._qkv_same_embed_dim and self.activation_relu_or_gelu
                and self.norm1.eps == self.norm2.eps and attn.num_heads % 2 == 0
                and not _amp_hook.any_enabled()):
            return False
        if any(m._hooks["forward"] or m._hooks["forward_pre"] for m in self.modules()):
            return False
        return not (is_grad_enabled() and any(
            t.requires_grad for t in (src, *self._fast_path_weights())))

    def _fast_path_weights(self):
        """The layer's parameters in ``_transformer_encoder_layer_fwd``'s order."""
        attn = self.self_attn
        return (attn.in_proj_weight, attn.in_proj_bias, attn.out_proj.weight, attn.out_proj.bias,
                self.norm1.weight, self.norm1.bias, self.norm2.weight, self.norm2.bias,
                self.linear1.weight, self.linear1.bias, self.linear2.weight, self.linear2.bias)

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerDecoderLayer(Module):
    """Mirrors ``torch.nn.TransformerDecoderLayer``: self-attention, attention over the
    encoder's ``memory`` and a feed-forward block, each with dropout, residual and LayerNorm."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True,
                 device=None, dtype=None):
        super().__init__()
        kw = dict(device=device, dtype=dtype)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                            batch_first=batch_first, bias=bias, **kw)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                                 batch_first=batch_first, bias=bias, **kw)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _activation(activation)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask,
                                    memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask,
                                               memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           is_causal=is_causal, need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal=False):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask,
                                key_padding_mask=key_padding_mask, is_causal=is_causal,
                                need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))


def _why_no_nested_tensor(layer):
    """PyTorch's reason (in its words) why its encoder would not use nested tensors."""
    name = "encoder_layer"
    if not isinstance(layer, TransformerEncoderLayer):
        return f"{name} was not TransformerEncoderLayer"
    if layer.norm_first:
        return f"{name}.norm_first was True"
    if not layer.self_attn.batch_first:
        return (f"{name}.self_attn.batch_first was not True"
                "(use batch_first for better inference performance)")
    if not layer.self_attn._qkv_same_embed_dim:
        return f"{name}.self_attn._qkv_same_embed_dim was not True"
    if layer.self_attn.in_proj_bias is None:
        return f"{name}.self_attn was passed bias=False"
    if not layer.activation_relu_or_gelu:
        return f"{name}.activation_relu_or_gelu was not True"
    if layer.norm1.eps != layer.norm2.eps:
        return f"{name}.norm1.eps was not equal to {name}.norm2.eps"
    if layer.self_attn.num_heads % 2 == 1:
        return f"{name}.self_attn.num_heads is odd"
    return ""


class TransformerEncoder(Module):
    """Mirrors ``torch.nn.TransformerEncoder``: ``num_layers`` copies of ``encoder_layer``,
    then the optional ``norm``."""

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True,
                 mask_check=True):
        super().__init__()
        self.layers = _clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        why_not = _why_no_nested_tensor(encoder_layer)
        if enable_nested_tensor and why_not:
            warnings.warn("enable_nested_tensor is True, but self.use_nested_tensor is False "
                          f"because {why_not}")
            self.use_nested_tensor = False

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        batch_first = self.layers[0].self_attn.batch_first
        seq_len = src.shape[1 if batch_first else 0] if src.dim() == 3 else src.shape[0]
        is_causal = _is_causal_mask(mask, is_causal, seq_len)
        out = src
        for layer in self.layers:
            out = layer(out, src_mask=mask, is_causal=is_causal,
                        src_key_padding_mask=src_key_padding_mask)
        return self.norm(out) if self.norm is not None else out


class TransformerDecoder(Module):
    """Mirrors ``torch.nn.TransformerDecoder``: ``num_layers`` copies of ``decoder_layer``,
    then the optional ``norm``."""

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        batch_first = self.layers[0].self_attn.batch_first
        seq_len = tgt.shape[1 if batch_first else 0] if tgt.dim() == 3 else tgt.shape[0]
        tgt_is_causal = _is_causal_mask(tgt_mask, tgt_is_causal, seq_len)
        out = tgt
        for layer in self.layers:
            out = layer(out, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                        tgt_key_padding_mask=tgt_key_padding_mask,
                        memory_key_padding_mask=memory_key_padding_mask,
                        tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
        return self.norm(out) if self.norm is not None else out


class Transformer(Module):
    """Mirrors ``torch.nn.Transformer``: an encoder-decoder model; parameters of rank > 1 are
    initialised with xavier_uniform_."""

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6,
                 dim_feedforward=2048, dropout=0.1, activation=F.relu, custom_encoder=None,
                 custom_decoder=None, layer_norm_eps=1e-5, batch_first=False, norm_first=False,
                 bias=True, device=None, dtype=None):
        super().__init__()
        kw = dict(device=device, dtype=dtype)
        layer_kw = dict(dim_feedforward=dim_feedforward, dropout=dropout, activation=activation,
                        layer_norm_eps=layer_norm_eps, batch_first=batch_first,
                        norm_first=norm_first, bias=bias, **kw)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(
                TransformerEncoderLayer(d_model, nhead, **layer_kw), num_encoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(
                TransformerDecoderLayer(d_model, nhead, **layer_kw), num_decoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw))
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
                src_key_padding_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        batched = src.dim() == 3
        if not self.batch_first and src.shape[1] != tgt.shape[1] and batched:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if self.batch_first and src.shape[0] != tgt.shape[0] and batched:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        """Mirrors ``Transformer.generate_square_subsequent_mask``: a float mask with -inf
        above the diagonal."""
        return _generate_square_subsequent_mask(sz, device, dtype)

    def _reset_parameters(self):
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)
