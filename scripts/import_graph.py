"""torchlike's import graph against its layers: the circles (modules that import each other,
directly or round a loop) and the upward imports (a module importing one of a higher layer).

    python scripts/import_graph.py [--list]

The layers, lowest first, are the table ``LAYERS`` below (docs/architecture.md §1.1 says what
each holds and which upward references the design needs).  A module may import its own layer
and the layers below it.  An import inside a function runs late, so it breaks no circle at import time, but it is still an upward dependency: both
kinds are counted, apart.  ``--list`` prints every upward import and every circle's modules.
"""
import ast
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = "torchlike"

# (layer, modules), lowest first.  A module belongs to the layer that names it or its package
# (the longest such name wins; names without "torchlike."); a module no layer names (the package
# itself, __main__, testing) is the facade.
LAYERS = (
    ("base", ("_dtype", "_size", "_layout", "_meta", "_device", "_x64", "_settings", "_precision",
              "_quick", "_trace_context", "_info", "version", "torch_version", "return_types",
              "autograd.grad_mode", "autograd.anomaly_mode", "_amp_hook")),
    ("core", ("_tensor", "_tensor_str", "_storage", "_views", "_inplace", "_creation", "_dispatch",
              "_lazy", "_host", "_ahead", "_donate", "autograd.graph", "autograd.engine",
              "autograd.fused")),
    ("ops", ("_ops", "_random")),
    ("library", ("_methods", "_legacy", "_torch_alias", "_device_runtime", "_streams", "autograd",
                 "nn", "optim", "special", "fft", "linalg", "utils", "cuda", "accelerator",
                 "backends", "mps", "xpu", "multiprocessing", "distributed", "amp", "cpu",
                 "distributions", "profiler", "viz")),
    ("programs", ("_compile", "compiler", "func", "export", "serialization", "jit", "onnx", "hub",
                  "utils.checkpoint", "utils.tensorboard")),
)
FACADE = "facade"
RANK = {name: i for i, (name, _) in enumerate(LAYERS + ((FACADE, ()),))}


def layer_of(module):
    short = module[len(PACKAGE) + 1:]
    named = [(len(entry), name) for name, entries in LAYERS for entry in entries
             if short == entry or short.startswith(entry + ".")]
    return max(named)[1] if named else FACADE


def modules():
    """{dotted name: path} for every module of the package."""
    found = {}
    for path in sorted((ROOT / PACKAGE).rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def imports(mods):
    """[(importer, imported, lazy)]: every import of one of the package's modules, ``lazy``
    when it sits inside a function."""
    edges = set()
    for name, path in mods.items():
        here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]

        def targets(node):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    dotted = alias.name
                    while dotted and dotted not in mods:
                        dotted = dotted.rpartition(".")[0]
                    if dotted:
                        yield dotted
                return
            base = ".".join(here[:len(here) - node.level + 1]) if node.level else ""
            source = ".".join(filter(None, (base, node.module)))
            for alias in node.names:
                sub = f"{source}.{alias.name}"
                if sub in mods:
                    yield sub
                elif source in mods:
                    yield source

        def walk(node, lazy):
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.Import, ast.ImportFrom)):
                    edges.update((name, t, lazy) for t in targets(child) if t != name)
                walk(child, lazy or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                       ast.Lambda)))
        walk(ast.parse(path.read_text()), False)
    return sorted(edges)


def upward(edges):
    """The imports of ``edges`` from a module into a higher layer (a package re-exporting its own
    submodule is not one)."""
    return [(a, b, lazy) for a, b, lazy in edges
            if RANK[layer_of(b)] > RANK[layer_of(a)] and not b.startswith(a + ".")]


def circles(names, edges):
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    succ = {n: sorted({b for a, b in edges if a == n}) for n in names}
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]
    for start in names:
        if start in index:
            continue
        work = [(start, iter(succ[start]))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        m = stack.pop()
                        on.discard(m)
                        comp.append(m)
                        if m == node:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
            elif nxt not in index:
                index[nxt] = low[nxt] = counter[0]
                counter[0] += 1
                stack.append(nxt)
                on.add(nxt)
                work.append((nxt, iter(succ[nxt])))
            elif nxt in on:
                low[node] = min(low[node], index[nxt])
    return out


def main(argv):
    mods = modules()
    edges = imports(mods)
    names = sorted(mods)
    top = [(a, b) for a, b, lazy in edges if not lazy]
    up = upward(edges)
    at_import = circles(names, top)
    at_all = circles(names, [(a, b) for a, b, _ in edges])
    print(f"{len(names)} modules, {len(edges)} imports "
          f"({sum(lazy for *_, lazy in edges)} inside functions)")
    for name, _ in LAYERS + ((FACADE, ()),):
        print(f"  layer {name:9s} {sum(layer_of(m) == name for m in names):4d} modules")
    print(f"circles at import time (module-level imports): {len(at_import)}, "
          f"{sum(map(len, at_import))} modules in them")
    print(f"circles counting imports inside functions:   {len(at_all)}, "
          f"{sum(map(len, at_all))} modules in them")
    print(f"upward imports: {sum(not lazy for *_, lazy in up)} module-level, "
          f"{sum(lazy for *_, lazy in up)} inside functions")
    if "--list" in argv:
        for a, b, lazy in up:
            print(f"  up  {a} [{layer_of(a)}] -> {b} [{layer_of(b)}]{' (in a function)' * lazy}")
        for kind, comps in (("import-time", at_import), ("with lazy imports", at_all)):
            for comp in comps:
                print(f"  circle ({kind}, {len(comp)}): {' '.join(comp)}")


if __name__ == "__main__":
    main(sys.argv[1:])
