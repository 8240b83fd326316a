"""Run JAX's own test files against microjax_rs and compare case by case with
real JAX.

    python tools/jax_suite.py --tests DIR --ours OUT/ours [--jax-python PY --jax-out OUT/jax] FILE...

DIR is the `tests/` folder of a JAX 0.10.2 checkout (fetched for the
measurement, never committed). Each FILE (e.g. `nn_test.py`) runs under pytest
with `jax` mapped to microjax_rs (tools/jax_suite_plugin.py calls
`microjax_rs.install_as_jax()`), JUnit XML written to OUT/ours. With
`--jax-python` the same files also run under that interpreter's real JAX. The
report is, per file: the cases real JAX passes on CPU, how many of those
pass here, and how many fail for a reason set aside (`EXCLUDED`: complex
ordering, complex linear algebra, JAX's narrow dtypes).
`JAX_NUM_GENERATED_CASES` (default 10) picks the same sampled cases in both
runs (`microjax_rs._src.test_util.sample_product`).
"""
import argparse
import os
import re
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


# Failures set aside in the report, each owned by other work: (label, patterns
# of the failure text). The first match names a failure's group.
EXCLUDED = (
    ("complex ordering", (r"does not accept dtype complex", r"unsupported operand dtype; got dtypes \(complex",
                          r"requires numeric or bool operands; got dtypes \(complex", r"has no attribute 'sort_complex'",
                          r"reduce_(max|min|argmax|argmin)\w*: requires .*complex", r"Invalid integer data type 'c'")),
    ("complex linear algebra", (r"complex eigenvalues",
                                r"(svd|lu|qr|eigh?|cholesky|triangular_solve|schur|hessenberg)\w* requires .*complex")),
    ("narrow dtypes", (r"dtype '(u?int[124]|float[468]_\w+)' is not supported",)),
)


def _group(text):
    for label, patterns in EXCLUDED:
        if any(re.search(p, text) for p in patterns):
            return label
    return "fail"


def results(path):
    """{case id: 'pass' | 'fail' | 'skip' | an EXCLUDED label} from a JUnit
    XML file (empty if absent); a case reported twice (subtests) keeps its
    first failure."""
    if not os.path.exists(path):
        return {}
    out = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        key = f"{case.get('classname')}::{case.get('name')}"
        kinds = {child.tag for child in case}
        if "skipped" in kinds:
            status = "skip"
        elif kinds & {"failure", "error"}:
            status = _group(" ".join((child.get("message") or "") + (child.text or "") for child in case))
        else:
            status = "pass"
        if out.get(key, "pass") in ("pass", "skip"):
            out[key] = status
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
    labels = [label for label, _ in EXCLUDED]
    print("| file | cases real JAX passes | pass here | fraction | " + " | ".join(f"excluded: {x}" for x in labels)
          + " | fraction without the excluded |")
    print("|---|" + "---:|" * (4 + len(labels)))
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
        excluded = [sum(1 for k in passed_there if ours.get(k) == label) for label in labels]
        rest = len(passed_there) - sum(excluded)
        frac = len(passed_both) / len(passed_there) if passed_there else 0.0
        frac_rest = len(passed_both) / rest if rest else 0.0
        print(f"| `{name}` | {len(passed_there)} | {len(passed_both)} | {100 * frac:.1f}% | "
              + " | ".join(str(n) for n in excluded) + f" | {100 * frac_rest:.1f}% |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
