"""tests/test_distributed.py's DistributedDataParallel scenarios, imported by both sides: each
rank of dist_worker.py's torchlike group runs ``ddp(rank, world)`` on its share of a batch (4
rows a rank), and the test process runs ``reference(world)``, the same training without DDP on
the whole batch.  Each returns every parameter after every step (and the other scenarios'
results) as JSON-ready lists, so the test compares the two."""
import torchlike as torch
from torchlike.distributed.algorithms.ddp_comm_hooks import default_hooks

STEPS = 5
ROWS = 4   # per rank


def model(seed):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))


def batch(world):
    g = torch.Generator().manual_seed(123)
    return torch.randn(ROWS * world, 4, generator=g), torch.randn(ROWS * world, 2, generator=g)


def params(m):
    return [p.detach().tolist() for p in m.parameters()]


def train(rank, world, opt_name, wrap, micro=1, hook=None, compiled=False):
    """Reference (``rank`` None): the model rank 0 builds, the whole batch.  DDP: each rank
    builds its own (seeded by rank: construction must broadcast rank 0's) and takes its share.
    ``compiled``: each step is one torchlike.compile program (its gradient all-reduce inside);
    returns (history, the program's HLO text)."""
    m = model(0 if rank is None else rank)
    net = wrap(m)
    if hook is not None:
        net.register_comm_hook(None, hook)
    opt = (torch.optim.SGD(m.parameters(), lr=0.1) if opt_name == "sgd"
           else torch.optim.Adam(m.parameters(), lr=0.01))
    x, y = batch(world)
    if rank is not None:
        x, y = x[rank * ROWS:(rank + 1) * ROWS], y[rank * ROWS:(rank + 1) * ROWS]
    history = []
    if compiled:
        def step(x, y):
            opt.zero_grad()
            torch.nn.functional.mse_loss(net(x), y).backward()
            opt.step()
        step = torch.compile(step, fullgraph=True)
        for _ in range(STEPS):
            step(x, y)
            history.append(params(m))
        return history, step.program_text()
    for _ in range(STEPS):
        opt.zero_grad()
        pieces = list(zip(x.chunk(micro), y.chunk(micro)))
        for i, (xb, yb) in enumerate(pieces):
            # gradients of the mean over this rank's share, accumulated over micro-batches
            last = i == len(pieces) - 1
            ctx = net.no_sync() if (rank is not None and not last) else _nothing()
            with ctx:
                loss = torch.nn.functional.mse_loss(net(xb), yb) / micro
                loss.backward()
        opt.step()
        history.append(params(m))
    return history


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def unused():
    """A parameter forward does not use: without find_unused_parameters the next forward
    raises PyTorch's error; with it the step completes and the parameter's gradient is zero."""
    class Two(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.used = torch.nn.Linear(2, 2)
            self.spare = torch.nn.Linear(2, 2)

        def forward(self, x):
            return self.used(x)
    res = {}
    for find in (False, True):
        torch.manual_seed(0)
        net = torch.nn.parallel.DistributedDataParallel(Two(), find_unused_parameters=find)
        try:
            for _ in range(2):
                net(torch.ones(1, 2)).sum().backward()
            res[str(find)] = ["ok", net.module.spare.weight.grad is None or
                              net.module.spare.weight.grad.abs().sum().item() == 0.0]
        except RuntimeError as e:
            res[str(find)] = ["raised", str(e)[:60]]
    return res


def syncbn(rank, world):
    """SyncBatchNorm on this rank's share of a batch (reference: BatchNorm1d on all of it):
    outputs, input and affine gradients of sum(out * t), running statistics."""
    bn = torch.nn.SyncBatchNorm(3) if rank is not None else torch.nn.BatchNorm1d(3)
    with torch.no_grad():
        bn.weight.copy_(torch.tensor([1.0, 2.0, 3.0]))
        bn.bias.copy_(torch.tensor([0.1, 0.2, 0.3]))
    g = torch.Generator().manual_seed(7)
    x = torch.randn(ROWS * world, 3, 5, generator=g) * 2 + 1
    t = torch.randn(ROWS * world, 3, 5, generator=g)
    if rank is not None:
        x, t = x[rank * ROWS:(rank + 1) * ROWS], t[rank * ROWS:(rank + 1) * ROWS]
    x.requires_grad_()
    out = bn(x)
    (out * t).sum().backward()
    return {k: v.detach().tolist() for k, v in (
        ("out", out), ("x.grad", x.grad), ("weight.grad", bn.weight.grad),
        ("bias.grad", bn.bias.grad), ("running_mean", bn.running_mean),
        ("running_var", bn.running_var))}


def reference(world):
    """The whole batch of ``world`` ranks trained in this process, without DDP."""
    same = lambda m: m  # noqa: E731
    return {"sgd": train(None, world, "sgd", same), "adam": train(None, world, "adam", same),
            "accumulate": train(None, world, "sgd", same, micro=2),
            "syncbn": syncbn(None, world)}


def ddp(rank, world):
    """This rank's DDP results, in the process group the caller has initialised."""
    wrap = torch.nn.parallel.DistributedDataParallel
    compiled, text = train(rank, world, "sgd", wrap, compiled=True)
    return {"sgd": train(rank, world, "sgd", wrap), "adam": train(rank, world, "adam", wrap),
            "accumulate": train(rank, world, "sgd", wrap, micro=2),
            "fp16": train(rank, world, "sgd", wrap, hook=default_hooks.fp16_compress_hook),
            "compiled": compiled, "compiled all-reduces": text.count(" all-reduce("),
            "unused": unused(), "syncbn": syncbn(rank, world),
            "keys": list(wrap(model(0)).state_dict())}
