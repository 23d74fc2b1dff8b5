"""Train a small CNN on scikit-learn's handwritten digits, the PyTorch way, on torchlike.

Everything below is an ordinary PyTorch training script; only the imports name torchlike.  It
trains on the 1,797 8x8 digit images that ship with scikit-learn (nothing is downloaded),
reports the test accuracy after every epoch, saves a checkpoint and a plot of the training
curves, then reloads the checkpoint into a fresh model and checks it predicts the same.

With --compile the whole training step (zero_grad, forward, loss, backward, Adam, OneCycleLR) is
wrapped in torch.compile and runs as one XLA program; the summary then reports how many programs
were compiled and how much faster an epoch is than the same epoch run eagerly.  With --amp the
forward pass runs under torch.autocast (bfloat16 on the CPU, float16 on a GPU) and the loss is
scaled by a torch.amp.GradScaler, the usual mixed-precision loop.

    pip install -e ".[examples]"
    python examples/train_digits.py                      # defaults: 12 epochs on the CPU
    python examples/train_digits.py --compile            # the training step as one XLA program
    python examples/train_digits.py --amp                # mixed precision: autocast + GradScaler
    python examples/train_digits.py --profile            # profile steps of the last epoch
    python examples/train_digits.py --tensorboard        # curves etc. for TensorBoard, in runs/
    python examples/train_digits.py --epochs 3 --workers 2 --out /tmp/digits
    python examples/train_digits.py --onnx digits.onnx   # also export the model to ONNX
"""
import argparse
import contextlib
import os
import time

import matplotlib
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from tqdm import tqdm

import torchlike as torch
import torchlike.nn as nn
import torchlike.nn.functional as F
from torchlike.utils.data import DataLoader, TensorDataset

matplotlib.use("Agg")  # write PNG files; no display needed
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--epochs", type=int, default=12, help="passes over the training set")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=0.01, help="peak learning rate of OneCycleLR")
    p.add_argument("--device", default="cpu", help="'cpu', 'cuda', 'cuda:1', 'tpu', ...")
    p.add_argument("--workers", type=int, default=0, help="DataLoader worker processes")
    p.add_argument("--out", default=os.path.join("runs", "digits"),
                   help="directory for the checkpoint and the plot (created if missing)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--limit", type=int, default=None,
                   help="use only the first N images (quick smoke runs)")
    p.add_argument("--compile", action="store_true",
                   help="run the whole training step as one compiled program (torch.compile); "
                        "the summary compares an epoch's time with an eager epoch")
    p.add_argument("--amp", action="store_true",
                   help="mixed precision: the forward pass under torch.autocast (bfloat16 on "
                        "the CPU, float16 on a GPU), the loss scaled by torch.amp.GradScaler")
    p.add_argument("--tensorboard", nargs="?", const="", default=None, metavar="DIR",
                   help="log loss, accuracy and learning rate per epoch, the first layer's "
                        "weights, a few inputs and the hyper-parameters for TensorBoard "
                        "(torch.utils.tensorboard; DIR defaults to runs/<date>_<host>)")
    p.add_argument("--profile", action="store_true",
                   help="profile three training steps of the last epoch with torch.profiler: "
                        "print the ops' table and write a chrome trace (Perfetto) to --out")
    p.add_argument("--onnx", metavar="PATH", default=None,
                   help="export the trained model to ONNX (torch.onnx.export, any batch size) "
                        "and, if onnxruntime is installed, check it against the model")
    return p.parse_args(argv)


class Net(nn.Module):
    """Two 3x3 convolutions, one 2x2 max-pool, then a two-layer classifier."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(),
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(),
            nn.MaxPool2d(2),                                # 8x8 -> 4x4
        )
        self.classifier = nn.Sequential(
            nn.Flatten(),
            nn.Linear(32 * 4 * 4, 64), nn.ReLU(),
            nn.Dropout(0.25),
            nn.Linear(64, 10),
        )

    def forward(self, x):
        return self.classifier(self.features(x))


def make_datasets(limit=None):
    """The digits as (N, 1, 8, 8) float images in [0, 1] and int64 labels, split 80/20."""
    digits = load_digits()
    images, labels = digits.images[:limit], digits.target[:limit]
    # The same stratified split on every run (and the same one under real PyTorch).
    x_train, x_test, y_train, y_test = train_test_split(
        images, labels, test_size=0.2, random_state=0, stratify=labels)

    def to_dataset(x, y):
        x = torch.tensor(x, dtype=torch.float32).unsqueeze(1) / 16.0   # pixels are 0..16
        return TensorDataset(x, torch.tensor(y, dtype=torch.int64))

    return to_dataset(x_train, y_train), to_dataset(x_test, y_test)


@torch.no_grad()
def evaluate(model, loader, device):
    """The model's logits for every sample of `loader`, and the true labels."""
    model.eval()
    logits, targets = [], []
    for x, y in loader:
        logits.append(model(x.to(device)))
        targets.append(y.to(device))
    return torch.cat(logits), torch.cat(targets)


def accuracy(logits, targets):
    return (logits.argmax(dim=1) == targets).float().mean().item()


def save_plot(history, path):
    epochs = range(1, len(history["loss"]) + 1)
    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(9, 3.5))
    ax_loss.plot(epochs, history["loss"], marker="o")
    ax_loss.set(title="training loss", xlabel="epoch", ylabel="mean cross-entropy")
    ax_acc.plot(epochs, [100 * a for a in history["acc"]], marker="o", color="tab:green")
    ax_acc.set(title="test accuracy", xlabel="epoch", ylabel="accuracy (%)")
    for ax in (ax_loss, ax_acc):
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def amp_dtype(device):
    """The lower precision autocast uses on ``device``: bfloat16 on the CPU, float16 on a GPU."""
    return torch.float16 if device.type == "cuda" else torch.bfloat16


def export_onnx(model, images, path):
    """Export ``model`` to an ONNX file with a dynamic batch axis, and return a line that says,
    if onnxruntime is installed, how far its logits on ``images`` are from the model's."""
    model.eval()
    torch.onnx.export(model, (images[:1],), path, input_names=["images"],
                      output_names=["logits"], dynamic_axes={"images": {0: "batch"},
                                                             "logits": {0: "batch"}})
    try:
        import onnxruntime
    except ImportError:
        return f"{path} (install onnxruntime to check it)"
    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    (logits,) = session.run(None, {"images": images.cpu().numpy()})
    with torch.no_grad():
        diff = (torch.from_numpy(logits) - model(images).cpu()).abs().max().item()
    return f"{path} (onnxruntime vs eager on {len(images)} images: max abs diff {diff:.2e})"


def make_train_step(model, optimizer, scheduler, amp=False):
    """One optimisation step as a function of the batch, so that torch.compile can wrap all of
    it: zero_grad, forward, loss, backward, the Adam update and the scheduler's step.  With
    ``amp`` the forward runs under autocast and a GradScaler scales the loss, unscales the
    gradients and skips a step whose gradients overflowed (disabled, both are no-ops)."""
    device = next(model.parameters()).device
    scaler = torch.amp.GradScaler(device.type, enabled=amp)

    def train_step(x, y):
        optimizer.zero_grad()
        with torch.autocast(device.type, dtype=amp_dtype(device), enabled=amp):
            loss = F.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        scheduler.step()
        return loss
    train_step.scaler = scaler
    return train_step


def run_epoch(train_step, model, train_loader, test_loader, device, desc, on_step=None):
    """One pass over the training set and an evaluation: (mean loss, test accuracy, seconds for
    the epoch, seconds spent in the training steps).  ``on_step()`` runs after each step."""
    start = time.perf_counter()
    model.train()
    total, batches, in_steps = 0.0, 0, 0.0
    bar = tqdm(train_loader, desc=desc, unit="batch", leave=False)
    for x, y in bar:
        x, y = x.to(device), y.to(device)
        step_start = time.perf_counter()
        loss = train_step(x, y).item()   # .item() waits for the step to finish
        in_steps += time.perf_counter() - step_start
        if on_step is not None:
            on_step()
        total += loss
        batches += 1
        bar.set_postfix(loss=f"{total / batches:.4f}")
    acc = accuracy(*evaluate(model, test_loader, device))
    return total / batches, acc, time.perf_counter() - start, in_steps


def profiler(out_dir):
    """torch.profiler over an epoch: one step to wait, one to warm up, three recorded; at the
    end of them it prints the ops by total CPU time and writes the trace next to the
    checkpoint (open it in https://ui.perfetto.dev)."""
    def report(prof):
        print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=15))
        prof.export_chrome_trace(os.path.join(out_dir, "trace.json"))
    return torch.profiler.profile(
        activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True,
        schedule=torch.profiler.schedule(wait=1, warmup=1, active=3, repeat=1),
        on_trace_ready=report)


def compile_report():
    """What torch.compile did, from torchlike.compiler.counters (real PyTorch keeps no such
    counters: there the line only says the step was compiled)."""
    counters = getattr(torch.compiler, "counters", None)
    if counters is None:
        return "compiled with torch.compile"
    return (f"{counters['compiles']} XLA program(s) compiled, {counters['calls']} compiled "
            f"calls, {counters['eager_calls']} eager call(s), "
            f"{counters['graph_breaks']} graph break(s)")


def main(argv=None):
    args = parse_args(argv)
    torch.manual_seed(args.seed)
    device = torch.device(args.device)
    os.makedirs(args.out, exist_ok=True)

    train_set, test_set = make_datasets(args.limit)
    # Workers start once and are kept between epochs (they import torchlike, which takes a while).
    loader_args = dict(num_workers=args.workers, persistent_workers=args.workers > 0)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True,
                              drop_last=True, **loader_args)
    test_loader = DataLoader(test_set, batch_size=256, **loader_args)
    print(f"digits: {len(train_set)} training and {len(test_set)} test images, "
          f"device {device}, {args.workers} DataLoader worker(s)")

    model = Net().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(
        optimizer, max_lr=args.lr, epochs=args.epochs, steps_per_epoch=len(train_loader))
    train_step = make_train_step(model, optimizer, scheduler, amp=args.amp)
    scaler = train_step.scaler
    if args.compile:
        train_step = torch.compile(train_step)

    writer = None
    if args.tensorboard is not None:   # --tensorboard [DIR]
        from torchlike.utils.tensorboard import SummaryWriter
        writer = SummaryWriter(args.tensorboard or None)
        writer.add_images("inputs", train_set.tensors[0][:16])   # (16, 1, 8, 8) in [0, 1]

    history = {"loss": [], "acc": [], "seconds": [], "step_seconds": []}
    for epoch in range(1, args.epochs + 1):
        profiling = args.profile and epoch == args.epochs   # the last epoch, compiled already
        with profiler(args.out) if profiling else contextlib.nullcontext() as prof:
            loss, acc, seconds, in_steps = run_epoch(
                train_step, model, train_loader, test_loader, device,
                desc=f"epoch {epoch}/{args.epochs}", on_step=prof.step if profiling else None)
        history["loss"].append(loss)
        history["acc"].append(acc)
        history["seconds"].append(seconds)
        history["step_seconds"].append(in_steps)
        if writer is not None:
            writer.add_scalar("loss/train", loss, epoch)
            writer.add_scalar("accuracy/test", acc, epoch)
            writer.add_scalar("learning_rate", scheduler.get_last_lr()[0], epoch)
            writer.add_histogram("features.0.weight", model.features[0].weight, epoch)
        print(f"epoch {epoch:2d}/{args.epochs}: train loss {loss:.4f}, "
              f"test accuracy {100 * acc:.2f}%, lr {scheduler.get_last_lr()[0]:.2e}, "
              f"{seconds:.2f} s")

    ckpt_path = os.path.join(args.out, "checkpoint.pt")
    torch.save({"epoch": args.epochs,
                "model": model.state_dict(),
                "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict()}, ckpt_path)
    plot_path = os.path.join(args.out, "curves.png")
    save_plot(history, plot_path)

    # Resume as a later run would: fresh objects first, then their saved states.
    ckpt = torch.load(ckpt_path, map_location=device, weights_only=True)
    restored = Net().to(device)
    restored_opt = torch.optim.Adam(restored.parameters(), lr=args.lr)
    restored_sched = torch.optim.lr_scheduler.OneCycleLR(
        restored_opt, max_lr=args.lr, epochs=args.epochs, steps_per_epoch=len(train_loader))
    restored.load_state_dict(ckpt["model"])
    restored_opt.load_state_dict(ckpt["optimizer"])
    restored_sched.load_state_dict(ckpt["scheduler"])
    logits, targets = evaluate(model, test_loader, device)
    logits_again, _ = evaluate(restored, test_loader, device)
    same = (torch.equal(logits, logits_again)
            and restored_sched.get_last_lr() == scheduler.get_last_lr()
            and restored_opt.param_groups[0]["lr"] == optimizer.param_groups[0]["lr"])
    print(f"reloaded checkpoint from epoch {ckpt['epoch']}: "
          f"{'identical' if same else 'DIFFERENT'} predictions on {len(targets)} test images, "
          f"test accuracy {100 * accuracy(logits_again, targets):.2f}%")

    final = history["acc"][-1]
    if writer is not None:
        writer.add_hparams({"lr": args.lr, "batch_size": args.batch_size, "epochs": args.epochs,
                            "compile": args.compile, "amp": args.amp},
                           {"hparam/accuracy": final, "hparam/loss": history["loss"][-1]},
                           run_name="hparams")
        writer.close()
    seconds = history["seconds"]
    later = seconds[1:] or seconds
    print()
    print("summary")
    print(f"  epochs:              {args.epochs}")
    print(f"  final test accuracy: {100 * final:.2f}% "
          f"({int((logits.argmax(dim=1) == targets).sum().item())}/{len(targets)})")
    if args.amp:
        print(f"  mixed precision:     autocast {str(amp_dtype(device)).split('.')[-1]}, "
              f"GradScaler scale {scaler.get_scale():g}")
    per_epoch = sum(later) / len(later)
    print(f"  time per epoch:      {per_epoch:.2f} s "
          f"(first epoch {seconds[0]:.2f} s, including XLA compilation)")
    if args.compile:
        print(f"  compiled step:       {compile_report()}")
        # The same epoch (training and evaluation) eagerly, on a fresh model: one epoch to warm
        # up (compiling each op for the shapes it meets), then the timed one.
        fresh = Net().to(device)
        fresh_opt = torch.optim.Adam(fresh.parameters(), lr=args.lr)
        fresh_sched = torch.optim.lr_scheduler.OneCycleLR(
            fresh_opt, max_lr=args.lr, epochs=2, steps_per_epoch=len(train_loader))
        eager_step = make_train_step(fresh, fresh_opt, fresh_sched, amp=args.amp)
        for i in (1, 2):
            *_, eager, eager_steps = run_epoch(eager_step, fresh, train_loader, test_loader,
                                               device, desc=f"eager epoch {i}/2")
        compiled_steps = history["step_seconds"][1:] or history["step_seconds"]
        compiled_steps = sum(compiled_steps) / len(compiled_steps)
        ms = 1000 / len(train_loader)
        print(f"  compiled vs eager:   {eager / per_epoch:.1f}x faster per epoch "
              f"({per_epoch:.2f} s compiled, {eager:.2f} s eager),")
        print(f"                       {eager_steps / compiled_steps:.1f}x faster per training "
              f"step ({ms * compiled_steps:.1f} ms compiled, {ms * eager_steps:.1f} ms eager)")
    if args.onnx:
        images = torch.cat([x for x, _ in test_loader]).to(device)
        print(f"  onnx:                {export_onnx(model, images, args.onnx)}")
    print(f"  checkpoint:          {ckpt_path}")
    print(f"  plot:                {plot_path}")
    if writer is not None:
        print(f"  tensorboard:         {writer.get_logdir()} "
              f"(tensorboard --logdir {writer.get_logdir()})")
    if args.profile:
        print(f"  profiler trace:      {os.path.join(args.out, 'trace.json')}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
