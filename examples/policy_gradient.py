"""REINFORCE with torch.distributions.Categorical: a small policy learns to walk a corridor.

An ordinary PyTorch program; only the import names torchlike.  The environment, written below,
is a corridor of --length cells with an exit at each end: the right exit pays 1.0, the left one
0.6, and every step costs 0.1, so from the two cells next to the left exit the cheap exit is
worth more, and from every other cell the far one.  An episode starts in a random inner cell and
ends at an exit or after --max-steps steps.  The policy network sees its cell (one-hot) and
returns the logits of a Categorical over the actions (left, right).

Each iteration plays --episodes episodes at once: ``dist = Categorical(logits=policy(obs))`` and
``action = dist.sample()`` at every step.  The update ascends the policy gradient

    grad J = E[ sum_t grad log pi(a_t | s_t) * (G_t - b) ],

the return-to-go G_t minus a baseline b (the batch's mean return-to-go), as the loss
``-(dist.log_prob(actions) * advantage).mean()``, with an entropy bonus that keeps the policy
exploring early on.  The average return of the sampled policy over the same 500 evaluation
episodes is printed before and after training, beside the best possible average (exact, by
counting steps).  --compile runs the update (forward, log_prob, entropy, backward, Adam) as one
compiled program.

    python examples/policy_gradient.py                 # 60 iterations, a few seconds
    python examples/policy_gradient.py --compile --length 14 --max-steps 30

The last line is machine-readable:
``initial_return=<average before> final_return=<after> optimal_return=<best possible>``.
"""
import argparse
import time

import numpy as np

import torchlike as torch
import torchlike.nn as nn
from torchlike.distributions import Categorical

LEFT, RIGHT = 0, 1


class Corridor:
    """A batch of corridor episodes, stepped together; deterministic given its seed.

    Cells 0 .. length-1; cells 0 and length-1 are the exits, paying `left_reward` and
    `right_reward` on arrival.  Every step costs `step_cost`; an episode ends at an exit or after
    `max_steps` steps."""

    def __init__(self, length=10, left_reward=0.6, right_reward=1.0, step_cost=0.1,
                 max_steps=20, seed=0):
        if length < 3:
            raise ValueError(f"a corridor needs at least 3 cells, got length={length}")
        self.length, self.max_steps, self.step_cost = length, max_steps, step_cost
        self.exit_reward = {0: left_reward, length - 1: right_reward}
        self.rng = np.random.default_rng(seed)

    def reset(self, n):
        """Start n episodes, each in a random inner cell; returns their cells."""
        return self.rng.integers(1, self.length - 1, size=n)

    def step(self, cells, actions):
        """Move each episode one cell: (new cells, rewards, which episodes reached an exit)."""
        cells = cells + np.where(actions == RIGHT, 1, -1)
        at_exit = (cells == 0) | (cells == self.length - 1)
        rewards = -self.step_cost + np.where(cells == 0, self.exit_reward[0], 0.0) + np.where(
            cells == self.length - 1, self.exit_reward[self.length - 1], 0.0)
        return cells, rewards, at_exit

    def optimal_return(self):
        """The best average return over the start cells: walk to the better exit (or wait out
        the step limit, should both be too far)."""
        best = []
        for start in range(1, self.length - 1):
            timeout = -self.step_cost * self.max_steps
            walks = [reward - self.step_cost * abs(exit_cell - start)
                     for exit_cell, reward in self.exit_reward.items()
                     if abs(exit_cell - start) <= self.max_steps]
            best.append(max([timeout, *walks]))
        return float(np.mean(best))


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--iterations", type=int, default=60, help="policy-gradient updates")
    p.add_argument("--episodes", type=int, default=64, help="episodes per update")
    p.add_argument("--length", type=int, default=10, help="cells in the corridor")
    p.add_argument("--max-steps", type=int, default=20, help="steps before an episode ends")
    p.add_argument("--lr", type=float, default=0.03, help="Adam's learning rate")
    p.add_argument("--entropy", type=float, default=0.01, help="weight of the entropy bonus")
    p.add_argument("--hidden", type=int, default=32, help="width of the policy's hidden layer")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--compile", action="store_true",
                   help="run the update as one compiled program (torch.compile)")
    return p.parse_args(argv)


def one_hot(cells, length):
    return torch.nn.functional.one_hot(torch.as_tensor(cells), length).float()


@torch.no_grad()
def play(policy, env, n):
    """Run n episodes with actions drawn from the policy.  Returns their cells, actions and
    rewards, each (max_steps, n) (numpy; zeros after an episode ends), and which steps were
    played (a boolean mask of the same shape)."""
    cells = env.reset(n)
    shape = (env.max_steps, n)
    visited, actions = np.zeros(shape, np.int64), np.zeros(shape, np.int64)
    rewards, played = np.zeros(shape), np.zeros(shape, bool)
    running = np.ones(n, bool)
    for t in range(env.max_steps):
        dist = Categorical(logits=policy(one_hot(cells, env.length)))
        action = dist.sample().numpy()
        visited[t], actions[t], played[t] = cells, action, running
        cells, reward, at_exit = env.step(cells, action)
        rewards[t] = np.where(running, reward, 0.0)
        cells = np.where(running, cells, visited[t])   # finished episodes stay where they ended
        running &= ~at_exit
        if not running.any():
            break
    return visited, actions, rewards, played


def returns_to_go(rewards):
    """G_t = r_t + r_{t+1} + ... for each step of each episode (time runs along axis 0)."""
    return np.flip(np.cumsum(np.flip(rewards, 0), 0), 0).copy()


def average_return(policy, env, n):
    return float(play(policy, env, n)[2].sum(0).mean())


def make_update(policy, optimizer, entropy_weight):
    """One REINFORCE step on a batch of played steps, a function of fixed-shape tensors (the
    steps after an episode ended are masked out), so that torch.compile takes one program."""
    def update(obs, actions, advantages, mask):
        optimizer.zero_grad()
        dist = Categorical(logits=policy(obs))
        surrogate = dist.log_prob(actions) * advantages + entropy_weight * dist.entropy()
        loss = -(surrogate * mask).sum() / mask.sum()
        loss.backward()
        optimizer.step()
        return loss
    return update


def main(argv=None):
    args = parse_args(argv)
    torch.manual_seed(args.seed)
    env = Corridor(args.length, max_steps=args.max_steps, seed=args.seed)
    policy = nn.Sequential(nn.Linear(args.length, args.hidden), nn.Tanh(),
                           nn.Linear(args.hidden, 2))
    optimizer = torch.optim.Adam(policy.parameters(), lr=args.lr)
    update = make_update(policy, optimizer, args.entropy)
    if args.compile:
        update = torch.compile(update)

    def evaluate():
        # the same 500 start cells every time: a fresh environment with the evaluation seed
        return average_return(policy, Corridor(args.length, max_steps=args.max_steps,
                                               seed=args.seed + 1), 500)

    optimal = env.optimal_return()
    initial = evaluate()
    print(f"corridor of {args.length} cells, {args.episodes} episodes per update; average "
          f"return before training {initial:.3f} (best possible {optimal:.3f})")
    start = time.perf_counter()
    for it in range(1, args.iterations + 1):
        cells, actions, rewards, played = play(policy, env, args.episodes)
        gains = returns_to_go(rewards)
        advantages = np.where(played, gains - gains[played].mean(), 0.0)
        loss = update(one_hot(cells.reshape(-1), args.length),
                      torch.as_tensor(actions.reshape(-1)),
                      torch.as_tensor(advantages.reshape(-1), dtype=torch.float32),
                      torch.as_tensor(played.reshape(-1), dtype=torch.float32))
        if it % max(1, args.iterations // 6) == 0 or it == args.iterations:
            print(f"iteration {it:3d}/{args.iterations}: average return "
                  f"{rewards.sum(0).mean():.3f}, episode length {played.sum(0).mean():.1f}, "
                  f"loss {loss.item():.3f}")
    seconds = time.perf_counter() - start

    final = evaluate()
    print(f"average return after training {final:.3f} (before {initial:.3f}, best possible "
          f"{optimal:.3f}); {args.iterations} updates in {seconds:.1f} s"
          f"{' (compiled update)' if args.compile else ''}")
    print(f"initial_return={initial:.4f} final_return={final:.4f} optimal_return={optimal:.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
