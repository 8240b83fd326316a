"""Docstring coverage of microjax_rs's public callables, per namespace.

    python tools/docstring_coverage.py            # the table (markdown)
    python tools/docstring_coverage.py --missing  # also list each callable without a docstring

Public callable: a name in the module's namespace (its `__all__`, else every
name not starting with `_`) bound to a function or a callable object; classes,
modules and typing aliases are not counted. A re-export counts once per
namespace group (`jnp.linalg.matmul` and `jnp.matmul` are one object). A
docstring counts when it is the object's own: a callable instance showing only
its class's generic text does not. "From NumPy" counts the callables that are
NumPy's own objects re-exported (their docstrings are NumPy's).
`tests/test_docstrings.py` holds the floors these numbers must stay above.
"""
import argparse
import importlib
import os
import pkgutil
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))

GROUPS = {
    "microjax_rs": ["microjax_rs"],
    "numpy": ["microjax_rs.numpy", "microjax_rs.numpy.linalg", "microjax_rs.numpy.fft"],
    "lax": ["microjax_rs.lax", "microjax_rs.lax.linalg"],
    "nn": ["microjax_rs.nn", "microjax_rs.nn.initializers"],
    "random": ["microjax_rs.random"],
    "scipy": None,  # every public module under microjax_rs.scipy
}


def scipy_modules():
    import microjax_rs.scipy as scipy

    names = ["microjax_rs.scipy"]
    for info in pkgutil.walk_packages(scipy.__path__, "microjax_rs.scipy."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    return names


def public_callables(mod):
    """(name, object) for each public callable of `mod` that counts."""
    names = getattr(mod, "__all__", None)
    if names is None:
        names = [n for n in dir(mod) if not n.startswith("_")]
    out = []
    for name in names:
        if name.startswith("_"):
            continue
        obj = getattr(mod, name, None)
        if obj is None or not callable(obj):
            continue
        if isinstance(obj, (types.ModuleType, type)) or type(obj).__module__ == "typing":
            continue
        out.append((name, obj))
    return out


def has_own_doc(obj):
    text = getattr(obj, "__doc__", None)
    if not text or not text.strip():
        return False
    if isinstance(obj, (types.FunctionType, types.BuiltinFunctionType, types.MethodType)):
        return True
    return not any(getattr(cls, "__doc__", None) == text for cls in type(obj).__mro__[1:])


def from_numpy(obj):
    return str(getattr(obj, "__module__", "") or "").split(".")[0] == "numpy"


def coverage(group):
    """(documented, total, from_numpy, missing names) over the group's unique callables."""
    names = GROUPS[group] if GROUPS[group] is not None else scipy_modules()
    seen, documented, numpy_count, missing = set(), 0, 0, []
    for modname in names:
        mod = importlib.import_module(modname)
        for name, obj in public_callables(mod):
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            numpy_count += from_numpy(obj)
            if has_own_doc(obj):
                documented += 1
            else:
                missing.append(f"{modname}.{name}")
    return documented, len(seen), numpy_count, missing


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--missing", action="store_true", help="list the callables without a docstring")
    args = ap.parse_args(argv)
    rows, total_doc, total = [], 0, 0
    missing_all = []
    for group in GROUPS:
        d, n, npy, missing = coverage(group)
        total_doc += d
        total += n
        missing_all += missing
        rows.append(f"| {group} | {d}/{n} | {100.0 * d / n:.1f}% | {npy} |")
    print("| namespace | documented | coverage | from NumPy |")
    print("|---|---|---|---|")
    print("\n".join(rows))
    print(f"| **total** | {total_doc}/{total} | {100.0 * total_doc / total:.1f}% | |")
    if args.missing and missing_all:
        print("\nWithout a docstring:")
        print("\n".join(f"  {m}" for m in missing_all))
    return 0


if __name__ == "__main__":
    sys.exit(main())
