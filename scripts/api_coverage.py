"""How much of PyTorch's user-facing API torchlike has, per namespace, measured against real torch.

    python scripts/api_coverage.py [--missing] [--excluded] [NAMESPACE ...]

Prints, for each namespace (torch, Tensor, nn, nn.functional, linalg, special, fft, or those
named), "have/total (pct)"; --missing lists the user-facing names torchlike lacks, --excluded the
names the filter below leaves out, with the reason.

A name of ``dir(torch_namespace)`` is user-facing when all of these hold (checked in this order;
the first that fails is the reason --excluded gives):
  1. public: no leading underscore;
  2. part of the namespace's API, not something it merely holds: not a module (submodules are
     namespaces of their own), not a dict, str or bool (docstring fragments such as
     ``special.common_args``, build flags such as ``torch.has_lapack``), not an object defined
     outside torch (``typing.Optional``, ``collections.abc.Callable``, ``builtins.int`` as
     ``F.DType``) or in torch's TorchScript/override plumbing (``torch._jit_internal``,
     ``torch.overrides``), and, outside the torch namespace, not ``torch.Tensor`` re-exported;
  3. not TorchScript's or the override protocol's machinery: a pybind11 class or an instance of
     one (``torch.Graph``, ``torch.FileCheck``, ``torch.AVG``), or one of INTERNAL below;
  4. documented, for a function: its docstring says more than a bare signature line (pybind11's
     automatic ``f(arg0: ...) -> ...``).  What PyTorch leaves undocumented is plumbing: the
     in-place twins of torch functions (``torch.exp_``; ``Tensor.exp_`` is documented), backend
     kernels (``torch.native_layer_norm``), TorchScript's bindings (``torch.parse_ir``),
     autocast's internal state, the removed ``torch.eig`` / ``Tensor.symeig``.  Classes
     (``torch.Size``, whose C type has no docstring), data attributes (``Tensor.dtype``) and
     constants (``torch.pi``) need none;
  5. not deprecated: its docstring does not say "`X` is deprecated" / "This function (class) is
     deprecated" (``torch.norm``, ``torch.qr``, ``F.upsample``, ``nn.UpsamplingNearest2d``), and
     it is not one of DEPRECATED below (deprecated where no docstring says so);
  6. not in a family outside torchlike's scope (a dense-tensor library on XLA):
     quantization (``quantize*``/``*quantized*``, ``q_*``, ``qint*``/``quint*``, ``int_repr``,
     ``qscheme`` and its values), sparse and nested layouts (a name containing "sparse" or
     "nested", ``coalesce``, ``indices``/``values``, ``crow_indices``..., ``*smm``/``spmm``,
     ``jagged``, ``to_padded_tensor``), vendor kernels (a name with a cudnn, miopen, mkldnn,
     fbgemm, vulkan, ipu, mtia or maia part), symbolic shapes (``sym_*``, ``Sym*``), the shell
     dtypes PyTorch defines for tensor subclasses and gives no kernels (``bits8``, ``int1`` to
     ``int7``, ``uint1`` to ``uint7``), and
     functionalization's view-copy twins (``NAME_copy`` where NAME is an ATen op, a view:
     ``torch.view_copy``, ``torch.alias_copy``).

A user-facing name counts as present when ``getattr(torchlike_namespace, name)`` exists and, where
torch's object is callable, is callable too.
"""
import argparse
import inspect
import re
import sys
import types
import warnings

NAMESPACES = ("torch", "Tensor", "nn", "nn.functional", "linalg", "special", "fft")

_SIGNATURE_ONLY = re.compile(r"^\w+\(.*\)( -> .*)?$")
_DEPRECATED = re.compile(r"(:(func|meth|class):`[~\w.]+`|torch\.[\w.]+|This (function|class)) "
                         r"is deprecated")
# torch's own plumbing that no rule above names (torch namespace unless qualified)
INTERNAL = {"StorageBase", "DisableTorchFunction", "DisableTorchFunctionSubclass", "FatalError",
            "JITException", "PRIVATE_OPS", "Tensor.output_nr", "nn.functional.has_torch_function",
            "nn.functional.has_torch_function_unary", "nn.functional.has_torch_function_variadic"}
# deprecated without a docstring that says so: typed storages (PyTorch's storage docs), nn.Container
# and nn.NLLLoss2d (their constructors warn), Tensor.volatile (always False, warns)
DEPRECATED = {"TypedStorage", "Storage", "nn.Container", "nn.NLLLoss2d", "Tensor.volatile"}
_FOREIGN_MODULES = ("typing", "collections", "builtins", "abc", "torch._jit_internal",
                    "torch.overrides")
_QUANT = re.compile(r"quantiz|_quant$|qint|quint|^q_|^int_repr$|qscheme|^per_(tensor|channel)_|"
                    r"^choose_qparams")
_SPARSE = re.compile(r"sparse|^(coalesce|is_coalesced|indices|values|crow_indices|col_indices|"
                     r"ccol_indices|row_indices|dense_dim|to_dense|[dh]?smm|hspmm|spmm|"
                     r"saddmm|sspaddmm|jagged|to_padded_tensor)$|nested")
_VENDOR = re.compile(r"(^|_)(cudnn|miopen|mkldnn|fbgemm|vulkan|ipu|mtia|maia)(_|$)")
_SYMBOLIC = re.compile(r"^(sym_|Sym)")
_SHELL = re.compile(r"^(bit|bits\d.*|u?int[1-7])$")


def torch_namespace(torch, path):
    obj = torch
    for part in path.split(".") if path != "torch" else ():
        obj = getattr(obj, part)
    return obj


def _doc(obj):
    doc = getattr(obj, "__doc__", None)
    return doc.strip() if isinstance(doc, str) else ""


def _is_pybind(obj):
    kind = obj if isinstance(obj, type) else type(obj)
    return any(type(k).__name__ == "pybind11_type" for k in kind.__mro__)


def _is_data(obj):
    """An attribute read for its value (Tensor.dtype, torch.float32, torch.pi), not called."""
    return isinstance(obj, (property, types.GetSetDescriptorType, types.MemberDescriptorType)) \
        or not callable(obj)


def exclusion(torch, path, ns, name):
    """Why ``name`` of torch's namespace ``path`` is not user-facing (None when it is)."""
    if name.startswith("_"):
        return "private"
    obj = inspect.getattr_static(ns, name) if path == "Tensor" else getattr(ns, name)
    if isinstance(obj, (types.ModuleType, dict, str, bool)):
        return "not API (module, dict, str or bool)"
    module = getattr(obj, "__module__", None) if isinstance(obj, type) or callable(obj) else \
        getattr(type(obj), "__module__", None)   # an instance: the module of its class
    if module == "builtins" and not (isinstance(obj, type) or callable(obj)):
        module = None   # a constant (torch.pi) or a descriptor (Tensor.dtype)
    if isinstance(module, str) and module.split(".")[0] in _FOREIGN_MODULES or \
            module in _FOREIGN_MODULES:
        return f"defined outside the namespace ({module})"
    if path != "torch" and obj is torch.Tensor:
        return "torch.Tensor re-exported"
    qualified = name if path == "torch" else f"{path}.{name}"
    if qualified in INTERNAL or not isinstance(obj, (int, float)) and _is_pybind(obj):
        return "TorchScript or override machinery"
    function = isinstance(obj, (types.FunctionType, types.BuiltinFunctionType,
                                types.MethodDescriptorType, types.WrapperDescriptorType,
                                types.ClassMethodDescriptorType, staticmethod, classmethod))
    doc = _doc(obj)
    if function and (not doc or _SIGNATURE_ONLY.match(doc)):
        return "undocumented"
    if _DEPRECATED.search(doc) or qualified in DEPRECATED or (
            path == "torch" and name.endswith("Storage") and name != "UntypedStorage"):
        return "deprecated"
    if _QUANT.search(name):
        return "quantization"
    if _SPARSE.search(name):
        return "sparse or nested layout"
    if _VENDOR.search(name):
        return "vendor kernel"
    if _SYMBOLIC.search(name):
        return "symbolic shapes"
    if _SHELL.search(name):
        return "shell dtype"
    if name.endswith("_copy") and hasattr(torch.ops.aten, name[:-len("_copy")]):
        return "view-copy twin"
    return None


def measure(path):
    """(user-facing names, the ones torchlike has, {excluded name: reason}) for ``path``."""
    import torch
    import torchlike
    ns = torch_namespace(torch, path)
    mine = torch_namespace(torchlike, path)
    names, excluded = [], {}
    for name in dir(ns):
        reason = exclusion(torch, path, ns, name)
        if reason is None:
            names.append(name)
        elif reason != "private":
            excluded[name] = reason
    have = []
    for name in names:
        try:
            got = getattr(mine, name)
        except Exception:   # noqa: BLE001 - a property raising on the class is absent too
            continue
        ref = inspect.getattr_static(ns, name) if path == "Tensor" else getattr(ns, name)
        if _is_data(ref) or callable(got):
            have.append(name)
    return names, have, excluded


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("namespaces", nargs="*", metavar="NAMESPACE",
                        help=f"namespaces to measure, of {', '.join(NAMESPACES)} (default: all)")
    parser.add_argument("--missing", action="store_true", help="list the missing names")
    parser.add_argument("--excluded", action="store_true",
                        help="list the names the filter leaves out, with the reason")
    args = parser.parse_args(argv)
    for path in args.namespaces:
        if path not in NAMESPACES:
            parser.error(f"unknown namespace {path!r}: choose from {', '.join(NAMESPACES)}")
    warnings.simplefilter("ignore")
    for path in args.namespaces or NAMESPACES:
        names, have, excluded = measure(path)
        print(f"{path:14s} {len(have):4d}/{len(names):<4d} ({100 * len(have) / len(names):.1f}%)")
        if args.missing:
            missing = sorted(set(names) - set(have))
            if missing:
                print("  missing: " + " ".join(missing))
        if args.excluded:
            by_reason = {}
            for name, reason in excluded.items():
                by_reason.setdefault(reason, []).append(name)
            for reason, items in sorted(by_reason.items()):
                print(f"  excluded, {reason}: " + " ".join(items))
    return 0


if __name__ == "__main__":
    sys.exit(main())
