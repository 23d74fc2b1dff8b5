"""Train a tiny GPT on the Python documentation, one character at a time, on torchlike.

The text is the help text that ships with CPython itself (`pydoc_data.topics`, the pages that
`help("if")` shows), so nothing is downloaded.  The model is a small decoder-only Transformer:
token and position embeddings, causal self-attention blocks (F.scaled_dot_product_attention with
is_causal=True), LayerNorm, a GELU MLP, dropout, and an output layer tied to the token embedding.
It trains with AdamW and a OneCycleLR schedule; by default the whole training step (zero_grad,
forward, loss, backward, gradient clipping, AdamW, the scheduler) is one XLA program made by
torch.compile.  The script prints the loss as it falls, how many steps a second the compiled step
runs next to the same step run eagerly, and a sample of generated text.

    python examples/char_transformer.py                  # about a minute on a 2-core CPU
    python examples/char_transformer.py --eager          # the same training, op by op
    python examples/char_transformer.py --steps 2000 --layers 4 --d-model 128
"""
import argparse
import math
import time

from pydoc_data.topics import topics

import torchlike as torch
import torchlike.nn as nn
import torchlike.nn.functional as F


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--steps", type=int, default=600, help="training steps")
    p.add_argument("--batch-size", type=int, default=32, help="sequences per step")
    p.add_argument("--block-size", type=int, default=64, help="characters of context")
    p.add_argument("--layers", type=int, default=2, help="Transformer blocks")
    p.add_argument("--d-model", type=int, default=64, help="embedding width")
    p.add_argument("--heads", type=int, default=4, help="attention heads")
    p.add_argument("--dropout", type=float, default=0.1)
    p.add_argument("--lr", type=float, default=5e-3, help="peak learning rate of OneCycleLR")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--eager", action="store_true",
                   help="run the training step eagerly instead of compiling it")
    p.add_argument("--log-every", type=int, default=50, help="print the loss every N steps")
    p.add_argument("--eager-steps", type=int, default=10,
                   help="eager steps timed after compiled training, for the speed comparison")
    p.add_argument("--sample-chars", type=int, default=300, help="characters to generate")
    p.add_argument("--temperature", type=float, default=0.8)
    return p.parse_args(argv)


# --- data ------------------------------------------------------------------------------------------

class CharData:
    """The documentation text as a 1-D int64 tensor of character ids, split 90/10."""

    def __init__(self):
        text = "\n".join(topics.values())
        self.chars = sorted(set(text))
        self.index = {c: i for i, c in enumerate(self.chars)}
        data = torch.tensor([self.index[c] for c in text], dtype=torch.int64)
        n = int(0.9 * len(data))
        self.train, self.val = data[:n], data[n:]

    def encode(self, s):
        return [self.index[c] for c in s]

    def decode(self, ids):
        return "".join(self.chars[i] for i in ids)

    def batch(self, split, batch_size, block_size, generator):
        """Random windows of ``block_size`` characters and the same windows one character on."""
        data = self.train if split == "train" else self.val
        start = torch.randint(len(data) - block_size - 1, (batch_size, 1), generator=generator)
        idx = start + torch.arange(block_size)
        return data[idx], data[idx + 1]


# --- model -----------------------------------------------------------------------------------------

class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, heads, dropout):
        super().__init__()
        self.heads = heads
        self.dropout = dropout
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.resid_drop = nn.Dropout(dropout)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                           dropout_p=self.dropout if self.training else 0.0)
        return self.resid_drop(self.proj(y.transpose(1, 2).reshape(b, t, c)))


class Block(nn.Module):
    """Pre-norm Transformer block: x + attention(LN(x)), then x + MLP(LN(x))."""

    def __init__(self, d_model, heads, dropout):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = CausalSelfAttention(d_model, heads, dropout)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(),
                                 nn.Linear(4 * d_model, d_model), nn.Dropout(dropout))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class TinyGPT(nn.Module):
    def __init__(self, vocab_size, block_size, d_model, layers, heads, dropout):
        super().__init__()
        self.block_size = block_size
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(block_size, d_model)
        self.drop = nn.Dropout(dropout)
        self.blocks = nn.Sequential(*[Block(d_model, heads, dropout) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size, bias=False)
        self.head.weight = self.tok_emb.weight          # weight tying
        self.apply(self._init_weights)

    @staticmethod
    def _init_weights(module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def forward(self, idx):
        t = idx.shape[1]
        x = self.drop(self.tok_emb(idx) + self.pos_emb(torch.arange(t)))
        return self.head(self.ln_f(self.blocks(x)))


def make_optimizer(model, lr, steps):
    """AdamW (weight decay on the matrices only) and a OneCycleLR schedule over ``steps``."""
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                                   {"params": no_decay, "weight_decay": 0.0}],
                                  lr=lr, betas=(0.9, 0.99))
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=lr, total_steps=steps,
                                                    pct_start=0.1)
    return optimizer, scheduler


def make_train_step(model, optimizer, scheduler):
    """One whole optimisation step, written as ordinary eager code."""
    def train_step(x, y):
        optimizer.zero_grad()
        logits = model(x)
        loss = F.cross_entropy(logits.view(-1, logits.shape[-1]), y.view(-1))
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        return loss
    return train_step


@torch.no_grad()
def estimate_loss(model, data, args, generator, batches=4):
    """Mean loss on a few batches of the held-out split, with dropout off."""
    model.eval()
    losses = []
    for _ in range(batches):
        x, y = data.batch("val", args.batch_size, args.block_size, generator)
        logits = model(x)
        losses.append(F.cross_entropy(logits.view(-1, logits.shape[-1]), y.view(-1)))
    model.train()
    return torch.stack(losses).mean().item()


def generate(model, data, prompt, n_chars, temperature, generator):
    """Sample ``n_chars`` characters after ``prompt``.  The context is always ``block_size``
    long (padded on the right, which causal attention never looks at), so the compiled forward
    sees one shape and compiles once."""
    model.eval()

    @torch.compile
    @torch.no_grad()
    def next_logits(context, position):
        return model(context)[0].index_select(0, position)[0]

    tokens = data.encode(prompt)
    for _ in range(n_chars):
        window = tokens[-model.block_size:]
        context = torch.tensor([window + [0] * (model.block_size - len(window))])
        logits = next_logits(context, torch.tensor([len(window) - 1]))
        probs = F.softmax(logits / temperature, dim=-1)
        tokens.append(torch.multinomial(probs, 1, generator=generator).item())
    return data.decode(tokens)


def timed_steps(step, data, args, generator, n):
    """Run ``n`` training steps on fresh batches; seconds per step (the last loss is read, which
    waits for every step to finish)."""
    start = time.perf_counter()
    for _ in range(n):
        loss = step(*data.batch("train", args.batch_size, args.block_size, generator))
    loss.item()
    return (time.perf_counter() - start) / n


def main(argv=None):
    args = parse_args(argv)
    if args.d_model % args.heads:
        raise SystemExit(f"--d-model {args.d_model} is not divisible by --heads {args.heads}")
    torch.manual_seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed)
    data = CharData()
    model = TinyGPT(len(data.chars), args.block_size, args.d_model, args.layers, args.heads,
                    args.dropout)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"data: {len(data.train) + len(data.val):,} characters of CPython's pydoc topics, "
          f"{len(data.chars)} distinct; model: {args.layers} blocks, d_model {args.d_model}, "
          f"{n_params:,} parameters")
    print(f"validation loss before training: {estimate_loss(model, data, args, gen):.3f} "
          f"(uniform guessing: {math.log(len(data.chars)):.3f})")

    optimizer, scheduler = make_optimizer(model, args.lr, args.steps)
    eager_step = make_train_step(model, optimizer, scheduler)
    step = eager_step if args.eager else torch.compile(eager_step)
    mode = "eager" if args.eager else "compiled"

    start = time.perf_counter()
    losses, logged, timed_from = [], [], None
    for i in range(1, args.steps + 1):
        if i == 3:   # steps 1-2 include compiling (the first runs eagerly, the second traces)
            timed_from = time.perf_counter()
        losses.append(step(*data.batch("train", args.batch_size, args.block_size, gen)))
        if i % args.log_every == 0 or i == args.steps:
            mean = torch.stack(losses).mean().item()
            logged.append(mean)
            print(f"step {i:5d}/{args.steps}: train loss {mean:.3f}, "
                  f"lr {scheduler.get_last_lr()[0]:.2e}, {time.perf_counter() - start:6.1f} s")
            losses = []
    train_seconds = time.perf_counter() - start
    per_step = ((time.perf_counter() - timed_from) / (args.steps - 2) if args.steps > 2
                else train_seconds / args.steps)
    print(f"train loss {logged[0]:.3f} at the first report, {logged[-1]:.3f} at the last; "
          f"validation loss after training: {estimate_loss(model, data, args, gen):.3f}")

    if args.eager:
        print(f"speed: eager {1 / per_step:.1f} steps/s ({1000 * per_step:.1f} ms a step); "
              "run without --eager for the compiled step")
    else:
        # The same step eagerly, on a copy with its own optimizer, so training is untouched.
        twin = TinyGPT(len(data.chars), args.block_size, args.d_model, args.layers, args.heads,
                       args.dropout)
        twin_opt, twin_sched = make_optimizer(twin, args.lr, args.eager_steps + 2)
        twin_step = make_train_step(twin, twin_opt, twin_sched)
        timed_steps(twin_step, data, args, gen, 2)   # warm-up
        eager = timed_steps(twin_step, data, args, gen, args.eager_steps)
        print(f"speed: compiled {1 / per_step:.1f} steps/s ({1000 * per_step:.1f} ms a step), "
              f"eager {1 / eager:.1f} steps/s ({1000 * eager:.1f} ms a step): compiled is "
              f"{eager / per_step:.1f}x faster")

    print(f"training took {train_seconds:.1f} s ({mode}); sample at temperature "
          f"{args.temperature}:")
    print("-" * 72)
    print(generate(model, data, "The ", args.sample_chars, args.temperature, gen))
    print("-" * 72)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
