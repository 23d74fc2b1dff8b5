"""A step on an accelerator never waits for the host: no value of a GPU tensor is read while an
eager or compiled training step runs (NOTE [ checks on an accelerator ]); a failed check is
reported at the next read, as a CUDA device-side assert is.  Reads are counted at jax's one
doors to host values (numpy's conversions and ArrayImpl._value), for arrays on the devices
presented as GPUs."""
import contextlib

import numpy as np
import pytest

import torchlike as tl
from torchlike import compiler, nn
from torchlike._device import to_jax_device
from torchlike._tensor import ArrayImpl   # jax's concrete array class

F = nn.functional
GPU = "cuda:0"


@contextlib.contextmanager
def gpu_reads():
    """Count reads of GPU values: numpy's conversions (np.asarray of a CPU-backed jax array
    takes the buffer protocol, below Python) and jax's own door (ArrayImpl._value: item,
    tolist, bool, int, float)."""
    cpu = to_jax_device("cpu")
    count = [0]

    def note(x):
        if isinstance(x, ArrayImpl) and next(iter(x.devices())) != cpu:
            count[0] += 1

    def counting(convert):
        def wrapper(a, *args, **kwargs):
            note(a)
            return convert(a, *args, **kwargs)
        return wrapper

    read = ArrayImpl._value

    def counted(self):
        note(self)
        return read.fget(self)
    saved = np.asarray, np.array
    np.asarray, np.array = map(counting, saved)
    ArrayImpl._value = property(counted)
    try:
        yield count
    finally:
        np.asarray, np.array = saved
        ArrayImpl._value = read


def _model():
    tl.manual_seed(0)
    emb = nn.Embedding(10, 8).to(GPU)
    head = nn.Linear(8, 4).to(GPU)
    opt = tl.optim.Adam([*emb.parameters(), *head.parameters()], lr=0.01)

    def step(idx, y, probs):
        opt.zero_grad()
        h = emb(idx)                                    # embedding's index check
        h = F.dropout(h[tl.arange(4, device=GPU)], 0.1)  # x[idx]; a generator's draw
        logits = head(h)
        loss = F.cross_entropy(logits, y)               # the target check
        loss = loss + F.nll_loss(logits.log_softmax(-1), y)
        picked = logits.gather(1, y[:, None])           # gather's check
        loss = loss + picked.mean() + logits.index_select(0, y).mean()
        p = tl.sigmoid(logits)
        loss = loss + F.binary_cross_entropy(p, p.detach().round())   # its values' check
        loss = loss + tl.multinomial(probs, 2).float().mean()          # its distribution's
        loss.backward()
        opt.step()
        return loss
    return step


def _batch(bad_target=False):
    idx = tl.tensor([1, 2, 3, 4], device=GPU)
    y = tl.tensor([0, 1, 2, 7 if bad_target else 3], device=GPU)
    return idx, y, tl.tensor([[0.2, 0.3, 0.5]], device=GPU)


@pytest.mark.parametrize("compiled", [False, True])
def test_a_training_step_reads_no_gpu_values(compiled):
    compiler.reset()
    step = _model()
    if compiled:
        step = tl.compile(step)
        step(*_batch())   # the eager first call
        step(*_batch())   # traces and compiles
    with gpu_reads() as reads:
        for _ in range(2):
            loss = step(*_batch())
    assert reads[0] == 0
    with gpu_reads() as reads:
        loss.item()
    assert reads[0] >= 1   # the counter sees a read


@pytest.mark.parametrize("compiled", [False, True])
def test_a_failed_check_raises_at_the_next_read(compiled):
    step = _model()
    if compiled:
        step = tl.compile(step)
        step(*_batch())
        step(*_batch())
    step(*_batch(bad_target=True))   # queued, not raised: nothing read the values
    with pytest.raises(IndexError, match="Target 7 is out of bounds."):
        tl.ones(1).item()
    tl.ones(1).item()   # reported once


def test_eager_checks_on_the_cpu_still_raise_at_the_op():
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding(tl.tensor([10]), tl.ones(10, 2))
