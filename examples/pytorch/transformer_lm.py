"""A small causal Transformer language model (nn.TransformerEncoder with a causal mask) on Python's
own documentation: an ordinary PyTorch program.

The corpus is a slice of CPython's ``pydoc_data.topics``, tokenised by character.

    python examples/pytorch/transformer_lm.py --steps 300
    python -m torchlike examples/pytorch/transformer_lm.py

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


class TransformerLM(nn.Module):
    def __init__(self, vocab_size, context, d_model=32, nhead=4, layers=2, dropout=0.1):
        super().__init__()
        self.context = context
        self.token = nn.Embedding(vocab_size, d_model)
        self.position = nn.Parameter(torch.zeros(1, context, d_model))
        layer = nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward=4 * d_model,
                                           dropout=dropout, activation="gelu",
                                           batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size, bias=False)
        self.head.weight = self.token.weight            # tied input and output embeddings
        nn.init.normal_(self.position, std=0.02)
        nn.init.normal_(self.token.weight, std=0.02)

    def forward(self, x):
        t = x.size(1)
        mask = nn.Transformer.generate_square_subsequent_mask(t, device=x.device)
        h = self.token(x) + self.position[:, :t]
        h = self.encoder(h, mask=mask, is_causal=True)
        return self.head(self.norm(h))


def random_batch(data, batch_size, seq_len, device):
    starts = torch.randint(0, len(data) - seq_len - 1, (batch_size,))
    offsets = torch.arange(seq_len)
    x = data[starts[:, None] + offsets]
    y = data[starts[:, None] + offsets + 1]
    return x.to(device), y.to(device)


@torch.no_grad()
def evaluate(model, data, seq_len, device):
    """Mean loss and next-character accuracy over consecutive windows of ``data``."""
    model.eval()
    n = (len(data) - 1) // seq_len
    x = data[:n * seq_len].view(n, seq_len).to(device)
    y = data[1:n * seq_len + 1].view(n, seq_len).to(device)
    logits = model(x)
    loss = F.cross_entropy(logits.flatten(0, 1), y.flatten()).item()
    accuracy = (logits.argmax(-1) == y).float().mean().item()
    model.train()
    return loss, accuracy


@torch.no_grad()
def generate(model, vocab, prompt, length, device):
    model.eval()
    stoi = {c: i for i, c in enumerate(vocab)}
    x = torch.tensor([[stoi[c] for c in prompt]], device=device)
    for _ in range(length):
        logits = model(x[:, -model.context:])
        x = torch.cat([x, logits[:, -1:].argmax(-1)], dim=1)
    model.train()
    return "".join(vocab[i] for i in x[0].tolist())


def main():
    parser = argparse.ArgumentParser(description="causal Transformer LM on pydoc_data.topics")
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--chars", type=int, default=40000, help="size of the corpus slice")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--seq-len", type=int, default=32)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--warmup", type=int, default=30)
    parser.add_argument("--sample-chars", type=int, default=40, help="length of the greedy sample")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.set_float32_matmul_precision("high")

    data, vocab = load_corpus(args.chars)
    split = int(0.9 * len(data))
    train, val = data[:split], data[split:]
    print(f"corpus: {len(data)} characters, vocabulary {len(vocab)} "
          f"(uniform guess: {math.log(len(vocab)):.3f} nats)")

    model = TransformerLM(len(vocab), context=args.seq_len).to(device)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2 and "position" not in n]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2 or "position" in n]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01},
                                   {"params": no_decay, "weight_decay": 0.0}],
                                  lr=args.lr, betas=(0.9, 0.98))

    def schedule(step):    # linear warmup, then cosine decay to 10%
        if step < args.warmup:
            return (step + 1) / args.warmup
        progress = (step - args.warmup) / max(1, args.steps - args.warmup)
        return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress))

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, schedule)
    print(f"parameters: {sum(p.numel() for p in model.parameters())}")

    initial_loss, _ = evaluate(model, val, args.seq_len, device)
    for step in range(1, args.steps + 1):
        x, y = random_batch(train, args.batch_size, args.seq_len, device)
        loss = F.cross_entropy(model(x).view(-1, len(vocab)), y.view(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        if step % 50 == 0 or step == args.steps:
            print(f"step {step}: train_loss={loss.item():.3f} lr={scheduler.get_last_lr()[0]:.2e}")

    final_loss, accuracy = evaluate(model, val, args.seq_len, device)
    print("sample:", repr(generate(model, vocab, "The ", args.sample_chars, device)))
    print(f"initial_loss={initial_loss:.4f} final_loss={final_loss:.4f} accuracy={accuracy:.4f}")


if __name__ == "__main__":
    main()
