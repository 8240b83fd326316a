"""Compare microjax_rs's public API with JAX's, module by module.

    python tools/api_coverage.py                 # the table (markdown) against the recorded names
    python tools/api_coverage.py --missing       # also list each missing name with its tag
    python tools/api_coverage.py --record F      # run with a Python that has the real JAX:
                                                 # write JAX's public names to F (JSON)

JAX's public names are recorded in `tools/jax_api_names.json` (from JAX 0.10.2, by
`--record`), so the comparison runs without JAX installed. A name microjax_rs lacks
is either *owned* by an open piece of work (complex numbers and FFT, scale-out, ...)
or *exempt* with a reason; both lists live in `tools/api_tags.py`.
`tests/test_api_coverage.py` fails when a missing name has no tag, when a tag
names something that exists (a tag cannot outlive the gap it explains), and
when a module's coverage falls below its floor.

Coverage of a module = present / (JAX's names - names owned elsewhere - exempt names).
"""
import argparse
import fnmatch
import importlib
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
NAMES_FILE = os.path.join(HERE, "jax_api_names.json")

# The modules compared, as JAX names them ("jax.Array" is the array type's attributes).
MODULES = (
    "jax", "jax.numpy", "jax.numpy.linalg", "jax.numpy.fft", "jax.lax", "jax.lax.linalg", "jax.nn",
    "jax.nn.initializers", "jax.random", "jax.tree_util", "jax.tree", "jax.dtypes", "jax.flatten_util",
    "jax.test_util", "jax.image", "jax.scipy.special", "jax.scipy.linalg", "jax.scipy.signal",
    "jax.scipy.optimize", "jax.scipy.integrate", "jax.scipy.ndimage", "jax.scipy.interpolate",
    "jax.scipy.cluster.vq", "jax.scipy.spatial.transform", "jax.scipy.fft", "jax.scipy.sparse.linalg",
    "jax.scipy.stats", "jax.experimental.ode", "jax.experimental.checkify", "jax.custom_derivatives",
    "jax.debug", "jax.stages", "jax.export", "jax.sharding", "jax.ad_checkpoint", "jax.typing", "jax.errors",
    "jax.profiler", "jax.ops", "jax.Array",
)


def _is_module(obj):
    return type(obj).__name__ == "module"


def record(path):
    """Write JAX's public names per module (needs the real JAX importable)."""
    import jax
    import jax.numpy as jnp

    modules = list(MODULES)
    stats = importlib.import_module("jax.scipy.stats")
    modules += sorted(getattr(stats, n).__name__ for n in dir(stats)
                      if _is_module(getattr(stats, n)) and getattr(stats, n).__name__.startswith("jax.scipy.stats."))
    out = {"__version__": jax.__version__}
    for name in modules:
        if name == "jax.Array":
            x = jnp.zeros((2, 2))
            out[name] = sorted(n for n in dir(x) if not n.startswith("_"))
            continue
        mod = importlib.import_module(name)
        keep_modules = name in ("jax.scipy.stats",)
        out[name] = sorted(n for n in dir(mod) if not n.startswith("_")
                           and (keep_modules or not _is_module(getattr(mod, n))))
    with open(path, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


def _ours(name):
    """The microjax_rs object standing for JAX module `name` (None when absent)."""
    import microjax_rs

    if name == "jax.Array":
        return microjax_rs.numpy.zeros((2, 2))
    try:
        return importlib.import_module("microjax_rs" + name[len("jax"):])
    except ImportError:
        return None


def _has(obj, attr):
    if obj is None:
        return False
    try:
        return hasattr(obj, attr)
    except Exception:
        return True  # exists but raised on access (e.g. a property of the wrong rank)


def _tag(full, tags):
    for pattern, tag in tags:
        if fnmatch.fnmatchcase(full, pattern):
            return tag
    return None


def compare(names=None):
    """Per module: (total, present, owned, exempt, missing rows [(name, tag-or-None)])."""
    sys.path.insert(0, HERE)
    import api_tags

    if names is None:
        with open(NAMES_FILE) as f:
            names = json.load(f)
    tags = api_tags.patterns()
    rows = {}
    for mod, jax_names in names.items():
        if mod.startswith("__"):
            continue
        ours = _ours(mod)
        present, owned, exempt, missing = 0, 0, 0, []
        for n in jax_names:
            full = f"{mod}.{n}"
            if _has(ours, n):
                present += 1
                continue
            tag = _tag(full, tags)
            if tag is not None and tag[0] == "owned":
                owned += 1
            elif tag is not None and tag[0] == "exempt":
                exempt += 1
            missing.append((full, tag))
        rows[mod] = (len(jax_names), present, owned, exempt, missing)
    return rows


def coverage(row):
    total, present, owned, exempt, _ = row
    denom = total - owned - exempt
    return 1.0 if denom <= 0 else present / denom


def grouped(rows):
    """`rows` with the distribution modules of jax.scipy.stats summed into
    one row, `jax.scipy.stats.<distribution>`."""
    out, dist = {}, None
    for mod, row in rows.items():
        if mod.startswith("jax.scipy.stats."):
            dist = row if dist is None else tuple(a + b for a, b in zip(dist, row))
        else:
            out[mod] = row
    if dist is not None:
        out["jax.scipy.stats.<distribution>"] = dist
    return out


def table(rows):
    lines = ["| module | JAX names | present | owned elsewhere | exempt | to do | coverage |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for mod, row in grouped(rows).items():
        total, present, owned, exempt, missing = row
        todo = sum(1 for _, t in missing if t is None or t[0] == "todo")
        lines.append(f"| `{mod}` | {total} | {present} | {owned} | {exempt} | {todo} | "
                     f"{100 * coverage(row):.0f}% |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--record", metavar="FILE")
    ap.add_argument("--missing", action="store_true")
    args = ap.parse_args(argv)
    if args.record:
        record(args.record)
        return 0
    sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))
    rows = compare()
    print(table(rows))
    if args.missing:
        for mod, row in rows.items():
            for full, tag in row[4]:
                print(f"{full}\t{tag[0] + ': ' + tag[1] if tag else 'UNTAGGED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
