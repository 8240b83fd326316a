"""Times building, compiling and loading long straight-line programs, to
check those steps stay linear in program size (run by hand; figures go in
benches/RESULTS.md, never into test assertions).

    python tools/program_scaling.py [--sizes 100000,200000] [--grad] [--load]

Per size n: an elementwise chain of n equations on a (16,) float32 input;
`compile` is `jit(f).lower(x).compile()` less the trace, `grad compile` the
same for `grad(lambda x: sum(f(x)))`, `load` is `export.deserialize` of the
serialized program. The ratio column is each time over the previous size's.
"""
import argparse
import sys
import time

import numpy as np


def chain(n):
    def f(x):
        for i in range(n // 2):
            x = x * 1.0001 if i % 2 else x + 0.5
            x = -x
        return x
    return f


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="50000,100000")
    ap.add_argument("--grad", action="store_true")
    ap.add_argument("--load", action="store_true")
    ap.add_argument("--compile", action="store_true")
    args = ap.parse_args()
    sys.setrecursionlimit(100000)
    import microjax_rs as jax
    import microjax_rs.numpy as jnp
    from microjax_rs import export

    x = np.linspace(0, 1, 16, dtype=np.float32)
    prev = {}
    for n in [int(s) for s in args.sizes.split(",")]:
        f = chain(n)
        row = {}
        if args.compile:
            t_trace, lowered = timed(lambda: jax.jit(f).lower(x))
            row["trace"] = t_trace
            row["compile"], _ = timed(lowered.compile)
        if args.grad:
            g = jax.grad(lambda x: jnp.sum(f(x)))
            t_trace, lowered = timed(lambda: jax.jit(g).lower(x))
            row["grad trace"] = t_trace
            row["grad compile"], _ = timed(lowered.compile)
        if args.load:
            exp = export.export(jax.jit(f))(x)
            row["serialize"], blob = timed(exp.serialize)
            row["load"], loaded = timed(lambda: export.deserialize(blob))
            want = np.asarray(jax.jit(f)(x))
            got = np.asarray(loaded.call(x))
            assert np.allclose(got, want), "loaded program computes something else"
        parts = []
        for k, v in row.items():
            r = f" (x{v / prev[k]:.2f})" if k in prev and prev[k] > 0 else ""
            parts.append(f"{k} {v:.3f}s{r}")
        print(f"n={n}: " + ", ".join(parts), flush=True)
        prev = row


if __name__ == "__main__":
    main()
