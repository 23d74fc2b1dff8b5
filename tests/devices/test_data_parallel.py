"""nn.DataParallel over the session's cuda devices (CPU devices presented as GPUs, at least 3):
each batch is one array sharded over the devices, the parameters replicated (NOTE
[ DataParallel ]).  Oracle: the same module on one device -- outputs, gradients, running
statistics, and a compiled training step equal eager training on one device."""
import jax
import numpy as np
import pytest
from jax.sharding import NamedSharding, PartitionSpec

import torchlike as torch
from torchlike._device import devices_of

N = len(devices_of("cuda"))


class Probe(torch.nn.Module):
    """An MLP that records the sharding of its input and first weight in each eager forward,
    and adds a tensor it makes on its input's device."""

    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.Tanh(),
                                       torch.nn.Linear(5, 2))
        self.seen = []

    def forward(self, x, scale=1.0):
        if not isinstance(x._value(), jax.core.Tracer):
            self.seen.append((x._value().sharding, self.net[0].weight._value().sharding))
        # a tensor made on x.device (one of the devices) joins the sharded batch
        # (NOTE [ tensors over several devices ])
        return self.net(x) * scale + torch.linspace(0, 1, 2, device=x.device)


@pytest.fixture
def probe():
    torch.manual_seed(0)
    return Probe().to("cuda")


def one_device(module, x, **kwargs):
    """Output and gradients of sum(out**2) on cuda:0, the gradients then cleared."""
    out = module(x, **kwargs)
    out.pow(2).sum().backward()
    grads = [p.grad.clone() for p in module.parameters()]
    module.zero_grad()
    return out, grads


def test_the_batch_is_sharded_and_the_parameters_replicated(probe):
    x = torch.randn(2 * N, 3).to("cuda")
    ref, ref_grads = one_device(probe, x, scale=2.0)
    out = torch.nn.DataParallel(probe)(x, scale=2.0)
    x_sharding, w_sharding = probe.seen[-1]
    assert isinstance(x_sharding, NamedSharding) and x_sharding.spec == PartitionSpec("batch")
    assert len(x_sharding.device_set) == N
    assert {tuple(s.data.shape) for s in
            jax.device_put(x._value(), x_sharding).addressable_shards} == {(2, 3)}
    assert w_sharding.is_fully_replicated and len(w_sharding.device_set) == N
    assert out.device == torch.device("cuda:0") and len(out._value().devices()) == 1
    out.pow(2).sum().backward()
    torch.testing.assert_close(out, ref, atol=1e-6, rtol=1e-6)
    for p, g in zip(probe.parameters(), ref_grads):
        assert p.grad.device == torch.device("cuda:0")
        torch.testing.assert_close(p.grad, g, atol=1e-5, rtol=1e-5)


def test_dim_structures_output_device_and_uneven_batches(probe):
    """dim=1 with a (tensor, tensor) output; a batch the devices do not divide runs on the
    largest number of them that does (5 over 3 or 4: one device); output_device=-1 is the CPU."""
    class Pair(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, x):
            self.seen = x._value().sharding
            y = self.inner(x.transpose(0, 1))
            return y.transpose(0, 1), {"mean": y.mean(1)}
    pair = Pair(probe)
    x = torch.randn(3, 2 * N).to("cuda")
    ref = pair(x)
    got = torch.nn.DataParallel(pair, dim=1, output_device=-1)(x)
    assert pair.seen.spec == PartitionSpec(None, "batch")
    assert got[0].device == torch.device("cpu") and got[1]["mean"].device == torch.device("cpu")
    torch.testing.assert_close(got[0], ref[0].cpu(), atol=1e-6, rtol=1e-6)
    torch.testing.assert_close(got[1]["mean"], ref[1]["mean"].cpu(), atol=1e-6, rtol=1e-6)
    dp = torch.nn.DataParallel(probe)
    for batch in (5, 6):
        used = max(d for d in range(1, N + 1) if batch % d == 0)
        x = torch.randn(batch, 3).to("cuda")
        torch.testing.assert_close(dp(x), probe(x), atol=1e-6, rtol=1e-6)
        assert len(probe.seen[-2][0].device_set) == used


def test_batch_norm_statistics_are_the_whole_batchs():
    torch.manual_seed(0)
    bn = torch.nn.BatchNorm1d(3).to("cuda")
    ref = torch.nn.BatchNorm1d(3).to("cuda")
    x = (torch.randn(2 * N, 3) * 3 + 1).to("cuda")
    torch.testing.assert_close(torch.nn.DataParallel(bn)(x), ref(x), atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(bn.running_mean, ref.running_mean, atol=1e-6, rtol=1e-6)
    torch.testing.assert_close(bn.running_var, ref.running_var, atol=1e-6, rtol=1e-6)
    assert bn.num_batches_tracked.item() == 1


def test_compiled_step_is_one_program_equal_to_one_device(probe):
    """torchlike.compile of a training step through DataParallel: one SPMD program over the
    devices (its HLO holds the gradients' all-reduce), training as eager one-device SGD."""
    x, y = torch.randn(2 * N, 3).to("cuda"), torch.randn(2 * N, 2).to("cuda")
    start = {k: v.clone() for k, v in probe.state_dict().items()}
    opt = torch.optim.SGD(probe.parameters(), lr=0.1)

    def step(net):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(net(x), y)
        loss.backward()
        opt.step()
        return loss
    eager = [step(probe).item() for _ in range(3)]
    final = [p.clone() for p in probe.parameters()]
    probe.load_state_dict(start)
    compiled = torch.compile(step, fullgraph=True)
    dp = torch.nn.DataParallel(probe)
    losses = [compiled(dp).item() for _ in range(3)]
    np.testing.assert_allclose(losses, eager, atol=1e-6, rtol=0)
    for p, f in zip(probe.parameters(), final):
        assert p.device == torch.device("cuda:0")
        torch.testing.assert_close(p, f, atol=1e-6, rtol=0)
    assert torch.compiler.counters["graph_breaks"] == 0
    assert " all-reduce(" in compiled.program_text()


def test_parameters_must_be_on_the_first_device():
    dp = torch.nn.DataParallel(torch.nn.Linear(2, 2))   # left on the CPU
    with pytest.raises(RuntimeError, match=r"module must have its parameters and buffers on "
                                           r"device cuda:0 \(device_ids\[0\]\) but found one of "
                                           r"them on device: cpu"):
        dp(torch.ones(N, 2).to("cuda"))
    with pytest.raises(ValueError, match="Expected a non cpu device, but got: cpu"):
        torch.nn.DataParallel(torch.nn.Linear(2, 2), device_ids=["cpu"])
