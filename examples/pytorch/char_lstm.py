"""A character-level LSTM language model on Python's own documentation: an ordinary PyTorch
program.

The corpus is a slice of CPython's ``pydoc_data.topics`` (the text ``help()`` shows), so nothing
is downloaded.

    python examples/pytorch/char_lstm.py --steps 300
    python -m torchlike examples/pytorch/char_lstm.py

It reports the held-out loss (nats per character) before and after training and prints a short
greedy sample.  The last line is machine-readable:
``initial_loss=<val loss before> final_loss=<val loss after> accuracy=<next-char accuracy>``.
"""
import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from pydoc_data.topics import topics


def load_corpus(chars):
    text = "\n".join(topics[key] for key in sorted(topics))[:chars]
    vocab = sorted(set(text))
    stoi = {c: i for i, c in enumerate(vocab)}
    return torch.tensor([stoi[c] for c in text], dtype=torch.long), vocab


class CharLSTM(nn.Module):
    def __init__(self, vocab_size, embed=32, hidden=96, layers=1):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, embed)
        self.lstm = nn.LSTM(embed, hidden, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hidden, vocab_size)

    def forward(self, x, state=None):
        out, state = self.lstm(self.embed(x), state)
        return self.head(out), state


def random_batch(data, batch_size, seq_len, device):
    starts = torch.randint(0, len(data) - seq_len - 1, (batch_size,))
    x = torch.stack([data[s:s + seq_len] for s in starts.tolist()])
    y = torch.stack([data[s + 1:s + seq_len + 1] for s in starts.tolist()])
    return x.to(device), y.to(device)


@torch.no_grad()
def evaluate(model, data, seq_len, device):
    """Mean loss and next-character accuracy over consecutive windows of ``data``."""
    model.eval()
    n = (len(data) - 1) // seq_len
    x = data[:n * seq_len].view(n, seq_len).to(device)
    y = data[1:n * seq_len + 1].view(n, seq_len).to(device)
    logits, _ = model(x)
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1)).item()
    accuracy = (logits.argmax(-1) == y).float().mean().item()
    model.train()
    return loss, accuracy


@torch.no_grad()
def generate(model, vocab, prompt, length, device):
    model.eval()
    stoi = {c: i for i, c in enumerate(vocab)}
    x = torch.tensor([[stoi[c] for c in prompt]], device=device)
    logits, state = model(x)
    out = []
    for _ in range(length):
        nxt = logits[:, -1].argmax(-1, keepdim=True)
        out.append(vocab[nxt.item()])
        logits, state = model(nxt, state)
    model.train()
    return prompt + "".join(out)


def main():
    parser = argparse.ArgumentParser(description="character-level LSTM on pydoc_data.topics")
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--chars", type=int, default=40000, help="size of the corpus slice")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--seq-len", type=int, default=48)
    parser.add_argument("--lr", type=float, default=1e-2)
    parser.add_argument("--sample-chars", type=int, default=60, help="length of the greedy sample")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    device = "cuda" if torch.cuda.is_available() else "cpu"

    data, vocab = load_corpus(args.chars)
    split = int(0.9 * len(data))
    train, val = data[:split], data[split:]
    print(f"corpus: {len(data)} characters, vocabulary {len(vocab)} "
          f"(uniform guess: {math.log(len(vocab)):.3f} nats)")

    model = CharLSTM(len(vocab)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.steps)

    initial_loss, _ = evaluate(model, val, args.seq_len, device)
    for step in range(1, args.steps + 1):
        x, y = random_batch(train, args.batch_size, args.seq_len, device)
        logits, _ = model(x)
        loss = F.cross_entropy(logits.view(-1, len(vocab)), y.view(-1))
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        optimizer.step()
        scheduler.step()
        if step % 50 == 0 or step == args.steps:
            print(f"step {step}: train_loss={loss.item():.3f}")

    final_loss, accuracy = evaluate(model, val, args.seq_len, device)
    print("sample:", repr(generate(model, vocab, "The ", args.sample_chars, device)))
    print(f"initial_loss={initial_loss:.4f} final_loss={final_loss:.4f} accuracy={accuracy:.4f}")


if __name__ == "__main__":
    main()
