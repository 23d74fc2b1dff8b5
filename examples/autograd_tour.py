"""A tour of PyTorch's autograd, run live on torchlike.

Everything below is ordinary PyTorch code; only the import line differs.  Swap it for
``import torch`` and the script prints the same story (object addresses aside).

    python examples/autograd_tour.py [--graph PATH]

``--graph PATH`` also draws the graph of section 2 with ``torchlike.viz.make_dot`` (torchviz's
``make_dot`` for PyTorch): ``.svg`` / ``.png`` / ``.pdf`` through Graphviz's ``dot``, any other
suffix as the DOT text, which needs no Graphviz.
"""
import argparse

import torchlike as torch


def section(title):
    print()
    print(f"== {title} ==")


def show_graph(fn, names, depth=0):
    """Print the backward graph below ``fn`` as an indented tree, by walking next_functions."""
    pad = "    " * depth
    if fn is None:
        # An input that does not require grad: autograd records a hole, not a node.
        print(f"{pad}None  (input without grad)")
        return
    label = type(fn).__name__
    if hasattr(fn, "variable"):
        # AccumulateGrad: the node that writes into a leaf's .grad.
        leaf = fn.variable
        label += f"  -> leaf {names.get(id(leaf), '?')} {tuple(leaf.shape)}"
    print(pad + label)
    for next_fn, _ in fn.next_functions:
        show_graph(next_fn, names, depth + 1)


def draw_graph(y, names, path):
    """Draw the graph behind ``y`` to ``path`` (the picture, or the DOT text)."""
    from torchlike.viz import make_dot   # with PyTorch: from torchviz import make_dot
    graph = make_dot(y, params=names)
    fmt = path.rpartition(".")[2].lower()
    if fmt in ("svg", "png", "pdf"):
        with open(path, "wb") as f:
            f.write(graph.pipe(format=fmt))
    else:
        with open(path, "w") as f:
            f.write(graph.source)
    print(f"drew the graph of y to {path}")


def leaves_and_graph(graph_path=None):
    section("1. Leaf tensors, non-leaf tensors and grad_fn")
    # Tensors we create ourselves are leaves.  requires_grad=True asks autograd to track them.
    a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = torch.tensor(0.5, requires_grad=True)
    c = torch.tensor([10.0, 20.0, 30.0])  # a constant: no gradient wanted
    # Every op on a tracked tensor records a backward node in the result's grad_fn.
    y = ((a * b).exp() + c).sum()
    print("a.is_leaf =", a.is_leaf, "  a.grad_fn =", a.grad_fn)
    print("y.is_leaf =", y.is_leaf, "  y.grad_fn =", type(y.grad_fn).__name__)
    print("y =", y)

    section("2. Walking next_functions: the graph of y = ((a * b).exp() + c).sum()")
    # grad_fn.next_functions points at the nodes of the inputs; following them from the output
    # back to the leaves is exactly the path .backward() takes.
    show_graph(y.grad_fn, {id(a): "a", id(b): "b"})
    # Sum -> Add -> Exp -> Mul -> AccumulateGrad: the first input at every step leads to `a`.
    node = y.grad_fn
    while node.next_functions:
        node = node.next_functions[0][0]
    print("reached", type(node).__name__, "- its .variable is a:", node.variable is a)
    if graph_path:
        draw_graph(y, {"a": a, "b": b}, graph_path)


def accumulation():
    section("3. Gradients accumulate in .grad")
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (x ** 2).sum()  # dy/dx = 2x
    y.backward(retain_graph=True)  # keep the graph: we call backward on it again below
    print("after one backward:   x.grad =", x.grad)
    y.backward()
    print("after two backwards:  x.grad =", x.grad, " (added, not replaced)")
    # This is why training loops zero gradients between steps.  Two ways:
    x.grad.zero_()
    print("after x.grad.zero_(): x.grad =", x.grad)
    x.grad = None
    print("after x.grad = None:  x.grad =", x.grad)

    section("4. The graph is freed by backward unless retain_graph=True")
    z = (x * x).sum()
    z.backward()
    try:
        z.backward()
    except RuntimeError as err:
        print("second backward raised RuntimeError:")
        print("   ", str(err)[:110] + "...")


def hooks():
    section("5. Tensor hooks and retain_grad")
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    h = x * 3  # a non-leaf: its .grad is not kept by default
    h.retain_grad()  # ...unless we ask
    # A hook sees the gradient flowing into a tensor and may replace it by returning a tensor.
    handle = x.register_hook(lambda grad: print("    hook on x saw grad", grad) or grad * 10)
    h.sum().backward()
    print("h.grad (kept by retain_grad) =", h.grad)
    print("x.grad (hook scaled it by 10) =", x.grad)
    handle.remove()


def higher_order():
    section("6. Higher derivatives with create_graph=True")
    # create_graph=True records the backward pass itself, so a gradient can be differentiated again.
    x = torch.tensor(1.5, requires_grad=True)
    y = x ** 3
    (dy,) = torch.autograd.grad(y, x, create_graph=True)  # 3x^2
    (d2y,) = torch.autograd.grad(dy, x, create_graph=True)  # 6x
    (d3y,) = torch.autograd.grad(d2y, x)  # 6
    print(f"x = {x.detach().item()}, y = x**3 = {y.detach().item()}")
    print(f"dy/dx     = 3x^2 = {dy.detach().item()}")
    print(f"d2y/dx2   = 6x   = {d2y.detach().item()}")
    print(f"d3y/dx3   = 6    = {d3y.detach().item()}")


def fit_a_line():
    section("7. Fitting y = 2x + 1 by gradient descent, updates under torch.no_grad()")
    x = torch.linspace(-1.0, 1.0, 32).reshape(32, 1)
    y = 2 * x + 1
    w = torch.zeros(1, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    lr = 0.2
    for step in range(100):
        loss = ((x * w + b - y) ** 2).mean()
        w.grad = None
        b.grad = None
        loss.backward()
        # The update must not be recorded: under no_grad, in-place ops on leaves are allowed.
        with torch.no_grad():
            w -= lr * w.grad
            b -= lr * b.grad
        if step % 25 == 0 or step == 99:
            print(f"step {step:3d}  loss {loss.detach().item():.6f}  w {w.detach().item():.4f}  b {b.detach().item():.4f}")
    print(f"fitted: w = {w.detach().item():.2f}, b = {b.detach().item():.2f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--graph", metavar="PATH",
                        help="draw section 2's graph to PATH (.svg/.png/.pdf: Graphviz; "
                             "otherwise the DOT text)")
    args = parser.parse_args()
    leaves_and_graph(args.graph)
    accumulation()
    hooks()
    higher_order()
    fit_a_line()


if __name__ == "__main__":
    main()
