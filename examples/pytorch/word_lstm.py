"""A word-level LSTM language model on Python's own documentation: an ordinary PyTorch program,
written as PyTorch's word_language_model example writes one.

The corpus is a slice of CPython's ``pydoc_data.topics`` (the text ``help()`` shows), so nothing
is downloaded.  It is split into lower-case words, numbers and punctuation (a run of one mark,
such as an underline of ``*``, is one token); words outside the most frequent ``--vocab`` become
``<unk>``.  Training is truncated back-propagation through time: the token stream is cut into
``--batch-size`` parallel columns, read ``--bptt`` tokens at a time, and the LSTM's state is
carried from one window into the next (detached from the graph).  The update is plain SGD written
out by hand, with the gradient's norm clipped, and the learning rate divided by 4 whenever the
held-out loss stops improving.

    python examples/pytorch/word_lstm.py --epochs 3
    python -m torchlike examples/pytorch/word_lstm.py

It reports the held-out loss (nats per word) before training and after each epoch.  The last
line is machine-readable:
``initial_loss=<val loss before> final_loss=<val loss after> accuracy=<next-word accuracy>``.
"""
import argparse
import collections
import math
import re

import torch
import torch.nn as nn
import torch.nn.functional as F
from pydoc_data.topics import topics

TOKEN = re.compile(r"[a-z]+|\d+|([^\w\s])\1*")


def load_corpus(words, vocab_size):
    text = "\n".join(topics[key] for key in sorted(topics)).lower()
    tokens = [m.group() for m in TOKEN.finditer(text)][:words]
    vocab = ["<unk>"] + [w for w, _ in collections.Counter(tokens).most_common(vocab_size - 1)]
    stoi = {w: i for i, w in enumerate(vocab)}
    return torch.tensor([stoi.get(w, 0) for w in tokens], dtype=torch.long), vocab


def batchify(data, columns, device):
    """The stream as ``columns`` parallel streams: a (length, columns) tensor."""
    n = len(data) // columns
    return data[:n * columns].view(columns, n).t().contiguous().to(device)


def get_batch(source, i, bptt):
    seq_len = min(bptt, len(source) - 1 - i)
    return source[i:i + seq_len], source[i + 1:i + 1 + seq_len].reshape(-1)


class WordLSTM(nn.Module):
    def __init__(self, vocab_size, embed=64, hidden=128, layers=2, dropout=0.2):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(vocab_size, embed)
        self.rnn = nn.LSTM(embed, hidden, num_layers=layers, dropout=dropout)
        self.decoder = nn.Linear(hidden, vocab_size)
        self.layers, self.hidden = layers, hidden
        nn.init.uniform_(self.encoder.weight, -0.1, 0.1)
        nn.init.uniform_(self.decoder.weight, -0.1, 0.1)
        nn.init.zeros_(self.decoder.bias)

    def forward(self, x, state):
        out, state = self.rnn(self.drop(self.encoder(x)), state)
        return self.decoder(self.drop(out)), state

    def init_state(self, columns):
        weight = next(self.parameters())
        return (weight.new_zeros(self.layers, columns, self.hidden),
                weight.new_zeros(self.layers, columns, self.hidden))


def detach(state):
    """The state as values only, so the next window does not back-propagate into this one."""
    return tuple(s.detach() for s in state)


@torch.no_grad()
def evaluate(model, source, bptt):
    """Mean loss per word and next-word accuracy over the whole of ``source``."""
    model.eval()
    total_loss, correct, count = 0.0, 0, 0
    state = model.init_state(source.size(1))
    for i in range(0, source.size(0) - 1, bptt):
        x, y = get_batch(source, i, bptt)
        logits, state = model(x, state)
        logits = logits.view(-1, logits.size(-1))
        total_loss += F.cross_entropy(logits, y, reduction="sum").item()
        correct += (logits.argmax(-1) == y).sum().item()
        count += y.numel()
    model.train()
    return total_loss / count, correct / count


def main():
    parser = argparse.ArgumentParser(description="word-level LSTM on pydoc_data.topics")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--words", type=int, default=40000, help="size of the corpus slice")
    parser.add_argument("--vocab", type=int, default=2000, help="words kept (the rest: <unk>)")
    parser.add_argument("--batch-size", type=int, default=20)
    parser.add_argument("--bptt", type=int, default=35)
    parser.add_argument("--lr", type=float, default=20.0)
    parser.add_argument("--clip", type=float, default=0.25)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    device = "cuda" if torch.cuda.is_available() else "cpu"

    data, vocab = load_corpus(args.words, args.vocab)
    split = int(0.9 * len(data))
    train = batchify(data[:split], args.batch_size, device)
    val = batchify(data[split:], 10, device)
    print(f"corpus: {len(data)} words, vocabulary {len(vocab)} "
          f"(uniform guess: {math.log(len(vocab)):.3f} nats)")

    model = WordLSTM(len(vocab)).to(device)
    initial_loss, _ = evaluate(model, val, args.bptt)
    print(f"initial: val_loss={initial_loss:.3f}")
    lr, best = args.lr, initial_loss
    for epoch in range(1, args.epochs + 1):
        state = model.init_state(args.batch_size)
        total, windows = 0.0, 0
        for i in range(0, train.size(0) - 1, args.bptt):
            x, y = get_batch(train, i, args.bptt)
            state = detach(state)
            model.zero_grad()
            logits, state = model(x, state)
            loss = F.cross_entropy(logits.view(-1, len(vocab)), y)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            for p in model.parameters():
                p.data.add_(p.grad, alpha=-lr)
            total += loss.item()
            windows += 1
        val_loss, accuracy = evaluate(model, val, args.bptt)
        print(f"epoch {epoch}: train_loss={total / windows:.3f} val_loss={val_loss:.3f} "
              f"val_ppl={math.exp(val_loss):.1f} lr={lr:g}")
        if val_loss < best:
            best = val_loss
        else:
            lr /= 4.0

    print(f"initial_loss={initial_loss:.4f} final_loss={val_loss:.4f} accuracy={accuracy:.4f}")


if __name__ == "__main__":
    main()
