"""Pass counts of two pytest-json-report files of the array API test suite
(tools/array_api_tests.sh): microjax_rs's first, JAX's second. Prints the
totals, the counts per test file, and the tests that fail for one project
only."""
import collections
import json
import sys


def outcomes(path):
    """Test id -> outcome ("passed", "failed", "error", "skipped", ...)."""
    with open(path) as f:
        report = json.load(f)
    out = {}
    for t in report["tests"]:
        failed = any(t.get(stage, {}).get("outcome") == "failed" for stage in ("setup", "teardown"))
        out[t["nodeid"]] = "error" if failed else t["outcome"]
    return out


def counts(results):
    """(passed, failed or errored, skipped) of a {test id: outcome} map."""
    c = collections.Counter(results.values())
    return c["passed"], c["failed"] + c["error"], c["skipped"] + c["xfailed"]


def line(name, results):
    passed, failed, skipped = counts(results)
    ran = passed + failed
    frac = passed / ran if ran else float("nan")
    return f"{name:<12} passed {passed:5d}  failed {failed:5d}  skipped {skipped:5d}  pass fraction {frac:.4f}"


def main(ours_path, jax_path):
    ours, theirs = outcomes(ours_path), outcomes(jax_path)
    print(line("microjax_rs", ours))
    print(line("jax", theirs))
    files = sorted({t.split("::")[0] for t in ours} | {t.split("::")[0] for t in theirs})
    print("\nper file (passed/ran): microjax_rs | jax")
    for f in files:
        o = {k: v for k, v in ours.items() if k.startswith(f + "::")}
        j = {k: v for k, v in theirs.items() if k.startswith(f + "::")}
        po, fo, _ = counts(o)
        pj, fj, _ = counts(j)
        print(f"  {f:<55} {po:4d}/{po + fo:<4d} | {pj:4d}/{pj + fj:<4d}")
    bad = ("failed", "error")
    only_ours = sorted(t for t, v in ours.items() if v in bad and theirs.get(t) not in bad)
    only_jax = sorted(t for t, v in theirs.items() if v in bad and ours.get(t) not in bad)
    both = sorted(t for t, v in ours.items() if v in bad and theirs.get(t) in bad)
    for title, ids in (("failing for microjax_rs only", only_ours), ("failing for jax only", only_jax),
                       ("failing for both", both)):
        print(f"\n{title} ({len(ids)}):")
        for t in ids:
            print("  " + t)


if __name__ == "__main__":
    main(*sys.argv[1:3])
