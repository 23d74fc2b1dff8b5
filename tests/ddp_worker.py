"""One rank of tests/test_distributed.py's DistributedDataParallel run (argv: mode, output path):
"ddp" trains with DDP on this rank's half of the batch; "reference" trains the same model
without DDP on the whole batch in one process.  Writes every parameter after every step, as
JSON, so the test compares the two."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import torchlike as torch  # noqa: E402
import torchlike.distributed as dist  # noqa: E402
from torchlike.distributed.algorithms.ddp_comm_hooks import default_hooks  # noqa: E402

MODE, OUT = sys.argv[1], sys.argv[2]
RANK = int(os.environ.get("RANK", 0))
WORLD = int(os.environ.get("WORLD_SIZE", 1))
STEPS = 5
PROGRAMS = []


def model(seed):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))


def batch():
    g = torch.Generator().manual_seed(123)
    return torch.randn(8, 4, generator=g), torch.randn(8, 2, generator=g)


def params(m):
    return [p.detach().tolist() for p in m.parameters()]


def train(opt_name, wrap, micro=1, hook=None, compiled=False):
    """Reference: the model rank 0 builds, the whole batch.  DDP: each rank builds its own
    (seeded by rank: construction must broadcast rank 0's) and takes its half.  ``compiled``:
    each step is one torchlike.compile program (its gradient all-reduce inside); the program's
    HLO text is kept in ``PROGRAMS``."""
    m = model(0 if MODE == "reference" else RANK)
    net = wrap(m)
    if hook is not None:
        net.register_comm_hook(None, hook)
    opt = (torch.optim.SGD(m.parameters(), lr=0.1) if opt_name == "sgd"
           else torch.optim.Adam(m.parameters(), lr=0.01))
    x, y = batch()
    if MODE == "ddp":
        x, y = x[RANK * 4:(RANK + 1) * 4], y[RANK * 4:(RANK + 1) * 4]
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
        PROGRAMS.append(step.program_text())
        return history
    for _ in range(STEPS):
        opt.zero_grad()
        pieces = list(zip(x.chunk(micro), y.chunk(micro)))
        for i, (xb, yb) in enumerate(pieces):
            # gradients of the mean over this rank's share, accumulated over micro-batches
            last = i == len(pieces) - 1
            ctx = net.no_sync() if (MODE == "ddp" and not last) else _nothing()
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


def syncbn():
    """SyncBatchNorm on this rank's half of a batch (reference: BatchNorm1d on all of it):
    outputs, input and affine gradients of sum(out * t), running statistics."""
    bn = torch.nn.SyncBatchNorm(3) if MODE == "ddp" else torch.nn.BatchNorm1d(3)
    with torch.no_grad():
        bn.weight.copy_(torch.tensor([1.0, 2.0, 3.0]))
        bn.bias.copy_(torch.tensor([0.1, 0.2, 0.3]))
    g = torch.Generator().manual_seed(7)
    x = torch.randn(8, 3, 5, generator=g) * 2 + 1
    t = torch.randn(8, 3, 5, generator=g)
    if MODE == "ddp":
        x, t = x[RANK * 4:(RANK + 1) * 4], t[RANK * 4:(RANK + 1) * 4]
    x.requires_grad_()
    out = bn(x)
    (out * t).sum().backward()
    return {k: v.detach().tolist() for k, v in (
        ("out", out), ("x.grad", x.grad), ("weight.grad", bn.weight.grad),
        ("bias.grad", bn.bias.grad), ("running_mean", bn.running_mean),
        ("running_var", bn.running_var))}


def main():
    if MODE == "reference":
        same = lambda m: m  # noqa: E731
        results = {"sgd": train("sgd", same), "adam": train("adam", same),
                   "accumulate": train("sgd", same, micro=2),
                   "fp16": train("sgd", same), "syncbn": syncbn()}
    else:
        dist.init_process_group("gloo")
        ddp = torch.nn.parallel.DistributedDataParallel
        results = {"sgd": train("sgd", ddp), "adam": train("adam", ddp),
                   "accumulate": train("sgd", ddp, micro=2),
                   "fp16": train("sgd", ddp, hook=default_hooks.fp16_compress_hook),
                   "compiled": train("sgd", ddp, compiled=True),
                   "unused": unused(), "syncbn": syncbn(),
                   "keys": list(ddp(model(0)).state_dict())}
        results["compiled all-reduces"] = PROGRAMS[0].count(" all-reduce(")
        dist.destroy_process_group()
    with open(OUT, "w") as f:
        json.dump(results, f)


if __name__ == "__main__":
    main()
