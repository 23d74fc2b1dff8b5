"""The digits CNN of train_digits.py, trained with DistributedDataParallel over several processes.

Launch it as PyTorch's torchrun would (each worker is one process on this machine; on several
hosts give each --nnodes, --node-rank, --master-addr and --master-port):

    python -m torchlike.distributed.run --standalone --nproc-per-node 2 examples/train_ddp.py

Each process builds the model (DDP copies rank 0's parameters to the others), reads its own
share of every epoch through a DistributedSampler, and averages gradients with the others after
each backward, so that the processes step together as one model trained on batches of
--batch-size images.  Rank 0 reports the test accuracy after every epoch and saves the model.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torchlike as torch  # noqa: E402
import torchlike.distributed as dist  # noqa: E402
import torchlike.nn.functional as F  # noqa: E402
from torchlike.nn.parallel import DistributedDataParallel as DDP  # noqa: E402
from torchlike.utils.data import DataLoader, DistributedSampler  # noqa: E402
from train_digits import Net, accuracy, evaluate, make_datasets  # noqa: E402


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--epochs", type=int, default=12)
    p.add_argument("--batch-size", type=int, default=64,
                   help="images per step over all processes (each takes its share)")
    p.add_argument("--lr", type=float, default=0.01, help="peak learning rate of OneCycleLR")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--limit", type=int, default=None, help="use only the first N images")
    p.add_argument("--out", default=os.path.join("runs", "digits_ddp"))
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    dist.init_process_group("gloo")           # RANK, WORLD_SIZE, MASTER_* from the launcher
    rank, world = dist.get_rank(), dist.get_world_size()
    if args.batch_size % world:
        raise SystemExit(f"--batch-size {args.batch_size} does not divide among {world} "
                         "processes")
    torch.manual_seed(args.seed + rank)       # DDP makes every rank start from rank 0's model

    train_set, test_set = make_datasets(args.limit)
    sampler = DistributedSampler(train_set, shuffle=True, seed=args.seed, drop_last=True)
    train_loader = DataLoader(train_set, batch_size=args.batch_size // world, sampler=sampler,
                              drop_last=True)
    test_loader = DataLoader(test_set, batch_size=256)

    model = DDP(Net())
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(
        optimizer, max_lr=args.lr, epochs=args.epochs, steps_per_epoch=len(train_loader))
    if rank == 0:
        print(f"digits: {len(train_set)} training and {len(test_set)} test images, {world} "
              f"processes, {args.batch_size // world} images per process per step")

    acc = 0.0
    for epoch in range(1, args.epochs + 1):
        sampler.set_epoch(epoch)              # a different shuffle every epoch, the same on all
        model.train()
        start, total = time.perf_counter(), torch.zeros(())
        for x, y in train_loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()                   # gradients averaged over the processes
            optimizer.step()
            scheduler.step()
            total += loss.detach()
        dist.all_reduce(total, op=dist.ReduceOp.AVG)
        if rank == 0:
            acc = accuracy(*evaluate(model.module, test_loader, "cpu"))
            print(f"epoch {epoch:2d}/{args.epochs}: train loss "
                  f"{total.item() / len(train_loader):.4f}, test accuracy {100 * acc:.2f}%, "
                  f"{time.perf_counter() - start:.2f} s")
    if rank == 0:
        os.makedirs(args.out, exist_ok=True)
        torch.save(model.module.state_dict(), os.path.join(args.out, "model.pt"))
        print(f"final test accuracy: {100 * acc:.2f}%")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
