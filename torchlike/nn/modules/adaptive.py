"""AdaptiveLogSoftmaxWithLoss (mirrors ``torch.nn.modules.adaptive``): the adaptive softmax of
Grave et al., 2016 (https://arxiv.org/abs/1609.04309)."""
import itertools
from collections import namedtuple

from .. import functional as F
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Mirrors ``torch.nn.AdaptiveLogSoftmaxWithLoss``: a softmax over ``n_classes`` labels
    sorted by frequency, split at ``cutoffs`` into a head (the most frequent labels plus one
    logit per tail cluster) and tail clusters whose projections shrink by ``div_value`` per
    cluster.  ``forward(input, target)`` returns ``(output, loss)``: each target's
    log-probability and their mean negative; ``log_prob`` gives the full distribution and
    ``predict`` its argmax.
    """

    def __init__(self, in_features, n_classes, cutoffs, div_value=4.0, head_bias=False,
                 device=None, dtype=None):
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted "
                             "in an increasing order, where each value is between 1 and "
                             "n_classes-1")
        self.in_features, self.n_classes = in_features, n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value, self.head_bias = div_value, head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, device=device,
                           dtype=dtype)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(
                Linear(in_features, hidden, bias=False, device=device, dtype=dtype),
                Linear(hidden, size, bias=False, device=device, dtype=dtype)))

    def reset_parameters(self):
        self.head.reset_parameters()
        for projection, output in self.tail:
            projection.reset_parameters()
            output.reset_parameters()

    def forward(self, input_, target_):
        if target_.dim() == 1:
            if input_.size(0) != target_.size(0):
                raise RuntimeError("Input and target should have the same size in the batch "
                                   "dimension.")
            if input_.dim() != 2:
                raise RuntimeError(f"1D target tensor expects 2D input tensors, but found "
                                   f"inputs with size {input_.size()}")
        elif target_.dim() == 0:
            if input_.dim() != 1:
                raise RuntimeError(f"0D target tensor expects 1D input tensors, but found "
                                   f"inputs with size {input_.size()}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = target_.dim() > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)
        batch = target.size(0)
        output = input.new_zeros(batch)
        # the head logit each row reads: its label (shortlist) or its cluster's logit
        head_index = target.new_empty(batch)
        used = 0
        bounds = [0] + self.cutoffs
        for i, (low, high) in enumerate(itertools.pairwise(bounds)):
            mask = (target >= low) & (target < high)
            rows = mask.nonzero().squeeze()
            if rows.numel() == 0:
                continue
            if i == 0:
                head_index.index_copy_(0, rows, target[mask])
            else:
                logprob = F.log_softmax(self.tail[i - 1](input.index_select(0, rows)), dim=1)
                head_index.index_fill_(0, rows, self.shortlist_size + i - 1)
                local = logprob.gather(1, (target[mask] - low).unsqueeze(1))
                output.index_copy_(0, rows, local.squeeze(1))
            used += rows.numel()
        if used != batch:
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but "
                               f"values in range [{target.min().item()}, "
                               f"{target.max().item()}] were found. ")
        head_logprob = F.log_softmax(self.head(input), dim=1)
        output += head_logprob.gather(1, head_index.unsqueeze(1)).squeeze()
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _get_full_log_prob(self, input, head_output):
        """log p(class) for every class: the head's for the shortlist, cluster + head logit for
        the tail."""
        out = input.new_empty((head_output.size(0), self.n_classes))
        head_logprob = F.log_softmax(head_output, dim=1)
        out[:, :self.shortlist_size] = head_logprob[:, :self.shortlist_size]
        for i, (start, stop) in enumerate(itertools.pairwise(self.cutoffs)):
            cluster = F.log_softmax(self.tail[i](input), dim=1)
            out[:, start:stop] = cluster + head_logprob[:, self.shortlist_size + i].unsqueeze(1)
        return out

    def log_prob(self, input):
        """The log-probabilities of all ``n_classes`` labels, (N, n_classes)."""
        return self._get_full_log_prob(input, self.head(input))

    def predict(self, input):
        """The most probable label of each row (``log_prob(input).argmax(1)``, with the tail
        evaluated only for rows whose head argmax is a cluster)."""
        head_output = self.head(input)
        output = head_output.argmax(dim=1)
        in_tail = output >= self.shortlist_size
        if not in_tail.any():
            return output
        if in_tail.all():
            return self._get_full_log_prob(input, head_output).argmax(dim=1)
        output[in_tail] = self._get_full_log_prob(input[in_tail],
                                                  head_output[in_tail]).argmax(dim=1)
        return output
