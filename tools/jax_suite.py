"""Run JAX's own test files against microjax_rs and compare case by case with
real JAX.

    python tools/jax_suite.py --tests DIR --ours OUT/ours [--jax-python PY --jax-out OUT/jax] FILE...

DIR is the `tests/` folder of a JAX 0.10.2 checkout (fetched for the
measurement, never committed). Each FILE (e.g. `nn_test.py`) runs under pytest
with `jax` mapped to microjax_rs (tools/jax_suite_plugin.py calls
`microjax_rs.install_as_jax()`), JUnit XML written to OUT/ours. With
`--jax-python` the same files also run under that interpreter's real JAX. The
report is, per file: the cases real JAX passes on CPU, and how many of those
pass here. `JAX_NUM_GENERATED_CASES` (default 10) picks the same sampled cases
in both runs (`microjax_rs._src.test_util.sample_product`).
"""
import argparse
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _run(python, tests, name, out, ours):
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    env.setdefault("JAX_NUM_GENERATED_CASES", "10")
    cmd = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={out}/{name}.xml", name]
    if ours:
        env["PYTHONPATH"] = os.pathsep.join([HERE, os.path.join(ROOT, "python"), env.get("PYTHONPATH", "")])
        cmd[3:3] = ["-p", "jax_suite_plugin"]
    os.makedirs(out, exist_ok=True)
    subprocess.run(cmd, cwd=tests, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


# A failure of this kind needs complex numbers (another piece of work).
_COMPLEX = ("complex dtypes are not supported", "complex numbers are not supported", "has no attribute 'wofz'",
            "has no attribute 'sph_harm_y'")


def results(path):
    """{case id: 'pass' | 'fail' | 'complex' | 'skip'} from a JUnit XML file
    (empty if absent); 'complex' is a failure that needs complex numbers."""
    if not os.path.exists(path):
        return {}
    out = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        key = f"{case.get('classname')}::{case.get('name')}"
        kinds = {child.tag for child in case}
        if "skipped" in kinds:
            out[key] = "skip"
        elif kinds & {"failure", "error"}:
            text = " ".join((child.get("message") or "") + (child.text or "") for child in case)
            out[key] = "complex" if any(c in text for c in _COMPLEX) else "fail"
        else:
            out[key] = "pass"
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tests", required=True)
    ap.add_argument("--ours", required=True)
    ap.add_argument("--jax-python")
    ap.add_argument("--jax-out")
    ap.add_argument("--no-run", action="store_true", help="only compare existing XML files")
    ap.add_argument("files", nargs="+")
    args = ap.parse_args(argv)
    print("| file | cases real JAX passes | pass here | fraction | of them needing complex numbers | "
          "fraction without those |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in args.files:
        if not args.no_run:
            _run(sys.executable, args.tests, name, args.ours, ours=True)
            if args.jax_python:
                _run(args.jax_python, args.tests, name, args.jax_out, ours=False)
        stem = os.path.join("{}", name + ".xml")
        theirs = results(stem.format(args.jax_out)) if args.jax_out else {}
        ours = results(stem.format(args.ours))
        passed_there = [k for k, v in theirs.items() if v == "pass"]
        passed_both = [k for k in passed_there if ours.get(k) == "pass"]
        complex_ = [k for k in passed_there if ours.get(k) == "complex"]
        frac = len(passed_both) / len(passed_there) if passed_there else 0.0
        rest = len(passed_there) - len(complex_)
        frac_rest = len(passed_both) / rest if rest else 0.0
        print(f"| `{name}` | {len(passed_there)} | {len(passed_both)} | {100 * frac:.1f}% | {len(complex_)} | "
              f"{100 * frac_rest:.1f}% |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
