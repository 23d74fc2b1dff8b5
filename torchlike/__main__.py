"""``python -m torchlike script.py [args]``: run a program written for PyTorch, unmodified, with
torchlike answering every ``import torch`` (NOTE [ torch as an alias ] in _torch_alias.py).

    python -m torchlike train.py --epochs 3       # as `python train.py --epochs 3`
    python -m torchlike -m package.module [args]  # as `python -m package.module`
    python -m torchlike -c "import torch; print(torch.ones(2))"

The program runs as Python would run it: ``__name__ == "__main__"``, ``sys.argv`` is
``[script, *args]``, ``sys.path[0]`` is the script's directory, its exit status is the
process's, and an exception it does not catch prints the traceback Python prints for it (the
program's own frames, not this runner's) and exits with status 1.
"""
import builtins
import importlib.machinery
import os
import runpy
import sys
import types

USAGE = ("usage: python -m torchlike [-m module | -c command | script] [args...]\n"
         "Runs a PyTorch program with torchlike answering `import torch`.")



def _program_traceback(tb):
    """``tb`` without the frames of this runner (those of runpy stay, as ``python -m`` shows
    them)."""
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next
    return tb


def _as_main(**attrs):
    """A fresh ``__main__`` module (Python runs a script or ``-c`` in one)."""
    main = types.ModuleType("__main__")
    main.__dict__.update(__package__=None, __spec__=None, __annotations__={},
                         __builtins__=builtins, **attrs)
    sys.modules["__main__"] = main
    return main


def _run_command(command, args):
    sys.argv = ["-c", *args]
    main = _as_main(__loader__=importlib.machinery.BuiltinImporter)
    exec(compile(command, "<string>", "exec"), main.__dict__)


def _run_script(path, args):
    sys.argv = [path, *args]
    if not os.path.isfile(path):   # a directory or zip file with a __main__.py
        runpy.run_path(path, run_name="__main__")
        return
    # as python: the script's own directory first on the path, its __file__ absolute
    sys.path[0] = os.path.dirname(os.path.realpath(path))
    path = os.path.abspath(path)
    main = _as_main(__file__=path, __cached__=None,
                    __loader__=importlib.machinery.SourceFileLoader("__main__", path))
    with open(path, "rb") as f:
        code = compile(f.read(), path, "exec")
    exec(code, main.__dict__)


def _run_module(name, args):
    sys.argv = [name, *args]
    _as_main()
    # what `python -m` itself calls: the same frames in a traceback, the same messages for a
    # module that cannot be found or run, argv[0] set to the module's file
    runpy._run_module_as_main(name, alter_argv=True)


def main(argv=None):
    """Run ``argv`` (default ``sys.argv[1:]``) as ``python [argv]`` would, with torchlike as
    ``torch``; returns the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    if argv[0] in ("-m", "-c") and len(argv) < 2:
        print(f"Argument expected for the {argv[0]} option\n{USAGE}", file=sys.stderr)
        return 2
    if argv[0] not in ("-m", "-c") and not os.path.exists(argv[0]):
        print(f"{sys.executable}: can't open file {os.path.abspath(argv[0])!r}: [Errno 2] No "
              f"such file or directory", file=sys.stderr)
        return 2
    import torchlike
    torchlike.install_as_torch()
    try:
        if argv[0] == "-c":
            _run_command(argv[1], argv[2:])
        elif argv[0] == "-m":
            _run_module(argv[1], argv[2:])
        else:
            _run_script(argv[0], argv[1:])
    except Exception:
        kind, value, tb = sys.exc_info()
        tb = _program_traceback(tb)
        sys.excepthook(kind, value.with_traceback(tb), tb)   # the hook prints __traceback__
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
