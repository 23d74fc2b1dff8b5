"""RNNBase, RNN, LSTM, GRU and the cells RNNCell, LSTMCell, GRUCell (mirror ``torch.nn``'s).

Each layer holds PyTorch's parameters (same names, shapes, order and default initialisation) and
runs the recurrence ops of ``torchlike/_ops/rnn.py`` (NOTE [ rnn ops ]): one op per
(layer, direction), a ``jax.lax.scan`` over time.
"""
import math
import numbers
import warnings

from ... import _amp_hook, _creation as C
from ..._ops import rnn as _rnn
from ..._ops.scatter import index_select
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _permute(hx, permutation):
    """hx (a Tensor, or LSTM's (h, c)) with its batch dimension put in ``permutation`` order."""
    if permutation is None or hx is None:
        return hx
    if isinstance(hx, tuple):
        return tuple(index_select(h, 1, permutation) for h in hx)
    return index_select(hx, 1, permutation)


class RNNBase(Module):
    """Mirrors ``torch.nn.RNNBase``: the parameters and checks shared by RNN, LSTM and GRU.

    Parameters, per layer ``k`` and direction (suffix ``_reverse`` for the backward one):
    ``weight_ih_l{k}`` (gates*hidden, input), ``weight_hh_l{k}`` (gates*hidden, hidden or
    proj_size), ``bias_ih_l{k}``, ``bias_hh_l{k}`` (when ``bias``), ``weight_hr_l{k}``
    (proj_size, hidden; LSTM with projections), all from U(-1/sqrt(hidden), 1/sqrt(hidden)).
    """

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        dirs = 2 if bidirectional else 1
        if not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) or \
                not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          "non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=2)
        for name, value in (("bias", bias), ("batch_first", batch_first)):
            if not isinstance(value, bool):
                raise TypeError(f"{name} should be of type bool, got: {type(value).__name__}")
        for name, value in (("input_size", input_size), ("hidden_size", hidden_size)):
            if not isinstance(value, int):
                raise TypeError(f"{name} should be of type int, got: {type(value).__name__}")
            if value <= 0:
                raise ValueError(f"{name} must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(dirs):
                layer_input = input_size if layer == 0 else real_hidden * dirs
                shapes = [("weight_ih", (gate_size, layer_input)),
                          ("weight_hh", (gate_size, real_hidden))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes += [("weight_hr", (proj_size, hidden_size))]
                suffix = "_reverse" if direction == 1 else ""
                names = []
                for stem, shape in shapes:
                    name = f"{stem}_l{layer}{suffix}"
                    setattr(self, name, Parameter(C.empty(shape, device=device, dtype=dtype)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self):
        return [getattr(self, name, None) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        """Mirrors ``RNNBase.all_weights``: the parameters, one list per (layer, direction)."""
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self):
        """Mirrors ``RNNBase.flatten_parameters``: a no-op (there is no cuDNN weight buffer to
        compact)."""

    def reset_parameters(self):
        """Mirrors ``RNNBase.reset_parameters``: every parameter from
        U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    # --- checks (PyTorch's wording) -------------------------------------------------------------

    def check_input(self, input, batch_sizes):
        """Mirrors ``RNNBase.check_input``: dtype, number of dimensions, feature size."""
        weight = self._flat_weights[0]
        if input.dtype != weight.dtype and not _amp_hook.any_enabled():
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype "
                             f"({weight.dtype}). Convert input: input.to({weight.dtype}), or "
                             f"convert model: model.to({input.dtype})")
        expected = 2 if batch_sizes is not None else 3
        if input.dim() != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.size(-1)}")

    def _mini_batch(self, input, batch_sizes):
        if batch_sizes is not None:
            return int(batch_sizes[0])
        return input.size(0) if self.batch_first else input.size(1)

    def get_expected_hidden_size(self, input, batch_sizes):
        """Mirrors ``RNNBase.get_expected_hidden_size``."""
        dirs = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * dirs, self._mini_batch(input, batch_sizes), size)

    def check_hidden_size(self, hx, expected_hidden_size, msg="Expected hidden size {}, got {}"):
        """Mirrors ``RNNBase.check_hidden_size``."""
        if tuple(hx.size()) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input, hidden, batch_sizes):
        """Mirrors ``RNNBase.check_forward_args``."""
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        """Mirrors ``RNNBase.permute_hidden``: reorder the batch dimension of hx."""
        return _permute(hx, permutation)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # --- running --------------------------------------------------------------------------------

    def _prepare(self, input, hx, name):
        """PyTorch's argument handling for RNN and GRU (a single hidden tensor): returns
        (x, batch_sizes, hx, unbatched, sorted_indices, unsorted_indices), hx batched or None."""
        if isinstance(input, PackedSequence):
            x, batch_sizes, sorted_indices, unsorted_indices = input
            batch_sizes = _rnn.host_batch_sizes(batch_sizes)
            hx = self.permute_hidden(hx, sorted_indices)
            self._check(x, hx, batch_sizes, False)
            return x, batch_sizes, hx, False, sorted_indices, unsorted_indices
        if input.dim() not in (2, 3):
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D"
                             f"{' tensor' if name == 'RNN' else ''} instead")
        unbatched = input.dim() == 2
        if hx is not None:
            if unbatched and hx.dim() != 2:
                raise RuntimeError("For unbatched 2-D input, hx should also be 2-D but got "
                                   f"{hx.dim()}-D tensor")
            if not unbatched and hx.dim() != 3:
                raise RuntimeError("For batched 3-D input, hx should also be 3-D but got "
                                   f"{hx.dim()}-D tensor")
        self._check(input, hx, None, unbatched)
        return input, None, hx, unbatched, None, None

    def _check(self, x, hx, batch_sizes, unbatched):
        """check_forward_args on the batched view of (x, hx) (no tensors are made)."""
        xb = _Batched(x, 0 if self.batch_first else 1) if unbatched else x
        self.check_input(xb, batch_sizes)
        if hx is not None:
            hb = _Batched(hx, 1) if unbatched else hx
            self.check_hidden_size(hb, self.get_expected_hidden_size(xb, batch_sizes))

    def _finish(self, out, hidden, input, unbatched, unsorted_indices):
        if isinstance(input, PackedSequence):
            out = PackedSequence(out, input.batch_sizes, input.sorted_indices,
                                 input.unsorted_indices)
        elif unbatched:   # the recurrence ran time-major on a batch of one
            out = out.squeeze(1)
            hidden = tuple(h.squeeze(1) for h in hidden) if isinstance(hidden, tuple) \
                else hidden.squeeze(1)
        return out, self.permute_hidden(hidden, unsorted_indices)

    def _run(self, x, batch_sizes, hx, cx, unbatched):
        return _rnn.run_stack(self.mode, x, batch_sizes, hx, cx, self._flat_weights, self.bias,
                              self.num_layers, self.dropout, self.training, self.bidirectional,
                              self.batch_first, self.proj_size > 0, unbatched)

    def forward(self, input, hx=None):
        name = "GRU" if self.mode == "GRU" else "RNN"
        x, batch_sizes, hx, unbatched, _, unsorted = self._prepare(input, hx, name)
        out, h_n = self._run(x, batch_sizes, hx, None, unbatched)
        return self._finish(out, h_n, input, unbatched, unsorted)

    def __setstate__(self, state):
        super().__setstate__(state)
        self.__dict__.setdefault("proj_size", 0)


class _Batched:
    """The shape of ``t`` with a batch dimension of 1 inserted at ``dim`` (for the checks)."""

    def __init__(self, t, dim):
        shape = list(t.shape)
        shape.insert(dim, 1)
        self.shape, self.dtype = tuple(shape), t.dtype

    def dim(self):
        return len(self.shape)

    def size(self, d=None):
        return self.shape if d is None else self.shape[d]


class RNN(RNNBase):
    """Mirrors ``torch.nn.RNN``: a stacked Elman RNN,
    h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (``nonlinearity='relu'``: relu).

    Args: input_size, hidden_size, num_layers=1, nonlinearity='tanh', bias=True,
    batch_first=False, dropout=0.0 (between layers, training only), bidirectional=False,
    device=None, dtype=None.  ``forward(input, hx=None)`` takes (L, N, H_in), (N, L, H_in) with
    batch_first, (L, H_in) unbatched, or a PackedSequence, and returns (output, h_n).

    Example::

        >>> rnn = torchlike.nn.RNN(4, 5, num_layers=2)
        >>> out, h_n = rnn(torchlike.randn(3, 2, 4))
        >>> out.shape, h_n.shape
        (torch.Size([3, 2, 5]), torch.Size([2, 2, 5]))
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or "
                             "'relu'.")
        super().__init__(mode, *args, **kwargs)


class LSTM(RNNBase):
    """Mirrors ``torch.nn.LSTM``: a stacked LSTM (gates i, f, g, o; with ``proj_size > 0`` the
    hidden state is projected by ``weight_hr``).

    Args: input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
    bidirectional=False, proj_size=0, device=None, dtype=None.  ``forward(input, hx=None)``
    with ``hx = (h_0, c_0)`` returns (output, (h_n, c_n)).

    Example::

        >>> lstm = torchlike.nn.LSTM(4, 5, batch_first=True)
        >>> out, (h_n, c_n) = lstm(torchlike.randn(2, 3, 4))
        >>> out.shape, c_n.shape
        (torch.Size([2, 3, 5]), torch.Size([1, 2, 5]))
    """

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes):
        """Mirrors ``LSTM.get_expected_cell_size``."""
        dirs = 2 if self.bidirectional else 1
        return (self.num_layers * dirs, self._mini_batch(input, batch_sizes), self.hidden_size)

    def check_forward_args(self, input, hidden, batch_sizes):
        """Mirrors ``LSTM.check_forward_args``."""
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def _check(self, x, hx, batch_sizes, unbatched):
        xb = _Batched(x, 0 if self.batch_first else 1) if unbatched else x
        self.check_input(xb, batch_sizes)
        if hx is not None:
            hb = tuple(_Batched(h, 1) for h in hx) if unbatched else hx
            self.check_hidden_size(hb[0], self.get_expected_hidden_size(xb, batch_sizes),
                                   "Expected hidden[0] size {}, got {}")
            self.check_hidden_size(hb[1], self.get_expected_cell_size(xb, batch_sizes),
                                   "Expected hidden[1] size {}, got {}")

    def forward(self, input, hx=None):
        unsorted = None
        if isinstance(input, PackedSequence):
            x, batch_sizes, sorted_indices, unsorted = input
            batch_sizes = _rnn.host_batch_sizes(batch_sizes)
            unbatched = False
            if hx is not None:
                hx = self.permute_hidden(tuple(hx), sorted_indices)
            # NOTE: PyTorch makes no Python checks here; its kernel fails on bad shapes
            self._check(x, hx, batch_sizes, False)
        else:
            if input.dim() not in (2, 3):
                raise ValueError(f"LSTM: Expected input to be 2D or 3D, got {input.dim()}D "
                                 "instead")
            unbatched = input.dim() == 2
            x, batch_sizes = input, None
            if hx is not None:
                want = 2 if unbatched else 3
                if hx[0].dim() != want or hx[1].dim() != want:
                    kind = "unbatched 2-D" if unbatched else "batched 3-D"
                    raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D but "
                                       f"got ({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
            self._check(x, hx, None, unbatched)
        h0, c0 = (None, None) if hx is None else hx
        out, h_n, c_n = self._run(x, batch_sizes, h0, c0, unbatched)
        return self._finish(out, (h_n, c_n), input, unbatched, unsorted)


class GRU(RNNBase):
    """Mirrors ``torch.nn.GRU``: a stacked GRU (gates r, z, n;
    n_t = tanh(W_in x_t + b_in + r_t * (W_hn h_{t-1} + b_hn)),
    h_t = (1 - z_t) * n_t + z_t * h_{t-1}).

    Args and ``forward`` as ``RNN`` (without ``nonlinearity``).

    Example::

        >>> gru = torchlike.nn.GRU(4, 5, bidirectional=True)
        >>> out, h_n = gru(torchlike.randn(3, 4))
        >>> out.shape, h_n.shape
        (torch.Size([3, 10]), torch.Size([2, 5]))
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


# --- cells ----------------------------------------------------------------------------------------

class RNNCellBase(Module):
    """Mirrors ``torch.nn.RNNCellBase``: ``weight_ih`` (chunks*hidden, input), ``weight_hh``
    (chunks*hidden, hidden), ``bias_ih``, ``bias_hh`` (or None), from
    U(-1/sqrt(hidden), 1/sqrt(hidden))."""

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        kw = {"device": device, "dtype": dtype}
        self.weight_ih = Parameter(C.empty((num_chunks * hidden_size, input_size), **kw))
        self.weight_hh = Parameter(C.empty((num_chunks * hidden_size, hidden_size), **kw))
        if bias:
            self.bias_ih = Parameter(C.empty(num_chunks * hidden_size, **kw))
            self.bias_hh = Parameter(C.empty(num_chunks * hidden_size, **kw))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += f", bias={self.bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def reset_parameters(self):
        """Mirrors ``RNNCellBase.reset_parameters``."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _cell(self, mode, input, hx, name, hidden_name="hidden"):
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        states = () if hx is None else tuple(hx) if mode == "LSTM" else (hx,)
        for i, h in enumerate(states):
            if h.dim() not in (1, 2):
                which = f"hx[{i}]" if mode == "LSTM" else hidden_name
                raise ValueError(f"{name}: Expected {which} to be 1D or 2D, got {h.dim()}D "
                                 "instead")
        return _rnn.run_cell(mode, input, hx, self.weight_ih, self.weight_hh, self.bias_ih,
                             self.bias_hh, unbatched=input.dim() == 1)


class RNNCell(RNNCellBase):
    """Mirrors ``torch.nn.RNNCell``: h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (or relu).

    ``forward(input, hx=None)``: input (N, H_in) or (H_in,), hx (N, H) or (H,) (zeros when
    None); returns h'.

    Example::

        >>> cell = torchlike.nn.RNNCell(4, 5)
        >>> cell(torchlike.randn(2, 4)).shape
        torch.Size([2, 5])
    """

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        if self.nonlinearity not in ("tanh", "relu"):
            if input.dim() not in (1, 2):
                raise ValueError(f"RNNCell: Expected input to be 1D or 2D, got {input.dim()}D "
                                 "instead")
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        mode = "RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU"
        return self._cell(mode, input, hx, "RNNCell")


class LSTMCell(RNNCellBase):
    """Mirrors ``torch.nn.LSTMCell``: one LSTM step (gates i, f, g, o).

    ``forward(input, hx=None)`` with ``hx = (h, c)`` (zeros when None) returns (h', c').

    Example::

        >>> cell = torchlike.nn.LSTMCell(4, 5)
        >>> h, c = cell(torchlike.randn(4))
        >>> h.shape
        torch.Size([5])
    """

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        return self._cell("LSTM", input, hx, "LSTMCell")


class GRUCell(RNNCellBase):
    """Mirrors ``torch.nn.GRUCell``: one GRU step (gates r, z, n, as ``nn.GRU``).

    ``forward(input, hx=None)`` returns h'.

    Example::

        >>> cell = torchlike.nn.GRUCell(4, 5)
        >>> cell(torchlike.randn(3, 4), torchlike.zeros(3, 5)).shape
        torch.Size([3, 5])
    """

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        return self._cell("GRU", input, hx, "GRUCell")
