"""Train a small CNN on scikit-learn's 8x8 handwritten digits: an ordinary PyTorch program.

    python examples/pytorch/cnn_digits.py --epochs 4          # real PyTorch
    python -m torchlike examples/pytorch/cnn_digits.py        # the same file on torchlike

At the end it saves a checkpoint, loads it into a fresh model and evaluates that too.  The last
line is machine-readable: ``final_loss=<train loss> accuracy=<test accuracy>
reloaded_accuracy=<the reloaded model's test accuracy>``.
"""
import argparse
import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.datasets import load_digits
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, kernel_size=3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, kernel_size=3, padding=1)
        self.bn = nn.BatchNorm2d(16)
        self.fc1 = nn.Linear(16 * 4 * 4, 32)
        self.fc2 = nn.Linear(32, 10)
        self.dropout = nn.Dropout(0.1)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.max_pool2d(F.relu(self.bn(self.conv2(x))), 2)    # 8x8 -> 4x4
        x = torch.flatten(x, 1)
        x = self.dropout(F.relu(self.fc1(x)))
        return self.fc2(x)


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    correct, total = 0, 0
    for images, labels in loader:
        images, labels = images.to(device), labels.to(device)
        pred = model(images).argmax(dim=1)
        correct += (pred == labels).sum().item()
        total += labels.size(0)
    return correct / total


def main():
    parser = argparse.ArgumentParser(description="small CNN on sklearn's digits")
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--steps", type=int, default=None, help="stop each epoch after N batches")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.backends.cudnn.benchmark = True

    digits = load_digits()
    images = torch.tensor(digits.images, dtype=torch.float32).unsqueeze(1) / 16.0
    labels = torch.tensor(digits.target)
    perm = torch.randperm(len(images))
    train_idx, test_idx = perm[:1400], perm[1400:]
    train_loader = DataLoader(TensorDataset(images[train_idx], labels[train_idx]),
                              batch_size=args.batch_size, shuffle=True, drop_last=True)
    test_loader = DataLoader(TensorDataset(images[test_idx], labels[test_idx]), batch_size=397)

    model = Net().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)

    for epoch in range(args.epochs):
        model.train()
        running, seen = 0.0, 0
        for step, (x, y) in enumerate(train_loader):
            if args.steps is not None and step >= args.steps:
                break
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            running += loss.item() * x.size(0)
            seen += x.size(0)
        scheduler.step()
        accuracy = evaluate(model, test_loader, device)
        print(f"epoch {epoch + 1}: train_loss={running / seen:.4f} test_accuracy={accuracy:.4f} "
              f"lr={scheduler.get_last_lr()[0]:.2e}")

    # Save a checkpoint and load it into a fresh model: it must predict exactly as the original.
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "cnn_digits.pt")
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                    "epoch": args.epochs}, path)
        checkpoint = torch.load(path, map_location=device)
    restored = Net().to(device)
    restored.load_state_dict(checkpoint["model"])
    reloaded = evaluate(restored, test_loader, device)

    print(f"final_loss={running / seen:.4f} accuracy={accuracy:.4f} "
          f"reloaded_accuracy={reloaded:.4f}")


if __name__ == "__main__":
    main()
