"""Fits the native-f32 polynomials of `prims/kernels/vmath.rs` and checks
the kernels in simulated f32 arithmetic.

    .venv/bin/python rust/core/tools/fit_vmath32.py [--check] [--reduction]

Each polynomial interpolates its function at the Chebyshev nodes of the
interval (near-minimax; the function evaluated in 80-bit long double, far
more precise than the f32 targets need) and is rounded to f32. The printed arrays are
pasted into vmath.rs. `--check` runs numpy float32 models of the kernels
(IEEE f32 operations, no FMA: the same operation sequence as the Rust code)
over dense grids and prints the max ulp error against the f64 function
rounded to f32; the Rust tests (`vmath_tests.rs`) measure the real bounds.
`--reduction` prints the parts of π/2 for the f32 sin/cos reduction and the
closest approach of an f32 to a multiple of π/2.
"""

import math
import sys
from fractions import Fraction

import numpy as np

F = np.float32


def fit(g, lo, hi, deg):
    """Coefficients (lowest first) of the polynomial interpolating `g` at the
    Chebyshev nodes of [lo, hi] (near-minimax), with `g` evaluated in
    80-bit long double, and its max relative error on a dense grid."""
    n = deg + 1
    u = (lo + hi) / 2 + (hi - lo) / 2 * np.cos(np.pi * (np.arange(n) + 0.5) / n)
    y = g(u.astype(np.longdouble)).astype(np.float64)
    c = np.linalg.solve(np.vander(u, n, increasing=True), y)
    t = np.linspace(lo, hi, 20001)[1:-1].astype(np.longdouble)
    want = g(t)
    got = np.polynomial.polynomial.polyval(t, c.astype(np.longdouble))
    return c, float(np.max(np.abs(got / want - 1)))


def show(name, c, err, what):
    c32 = [float(F(v)) for v in c]
    print(f"/// {what} (degree {len(c) - 1}, fit error {err:.1e}).")
    print(f"const {name}: [f32; {len(c)}] = [")
    for v in c32:
        print(f"    {np.format_float_scientific(F(v), unique=True, trim='-')},")
    print("];")
    return np.array(c32, dtype=F)


def exp_q(r):
    """`(e^r - 1 - r)/r²` by its Taylor series (no cancellation at 0)."""
    term, acc = np.ones_like(r) / 2, np.zeros_like(r)
    for n in range(3, 30):
        acc = acc + term
        term = term * r / n
    return acc


# (π/4)² with a margin: the reduced argument may exceed π/4 by rounding.
PIO4Z = (np.pi / 4 + 1e-3) ** 2


def coefficients():
    ln2h = np.log(2) / 2 + 1e-4
    c = {}
    # e^r = 1 + r + r^2·Q(r), |r| ≤ ln2/2.
    q, e = fit(exp_q, -ln2h, ln2h, 4)
    c["EXP_F32"] = show("EXP_F32", q, e, "`(e^r - 1 - r)/r²` on |r| ≤ ln2/2")
    # tanh(a) = a + a³·T(a²), |a| ≤ TANH_SMALL.
    q, e = fit(lambda z: (np.tanh(np.sqrt(z)) - np.sqrt(z)) / z**1.5, 0, 0.625**2, 5)
    c["TANH_F32"] = show("TANH_F32", q, e, "`(tanh(a) - a)/a³` in `z = a²` on |a| ≤ 0.625")
    q, e = fit(lambda z: (np.sin(np.sqrt(z)) - np.sqrt(z)) / z**1.5, 0, PIO4Z, 3)
    c["SIN_F32"] = show("SIN_F32", q, e, "`(sin(r) - r)/r³` in `z = r²` on |r| ≤ π/4")
    q, e = fit(lambda z: (np.cos(np.sqrt(z)) - 1 + z / 2) / z**2, 0, PIO4Z, 3)
    c["COS_F32"] = show("COS_F32", q, e, "`(cos(r) - 1 + r²/2)/r⁴` in `z = r²` on |r| ≤ π/4")
    # log(1+f) = 2s + s·z·L(z), s = f/(2+f) ≤ (√2-1)/(√2+1), z = s².
    sz = ((np.sqrt(2) - 1) / (np.sqrt(2) + 1) + 1e-4) ** 2
    q, e = fit(lambda z: (2 * np.arctanh(np.sqrt(z)) - 2 * np.sqrt(z)) / z**1.5, 0, sz, 3)
    c["LOG_R_F32"] = show(
        "LOG_R_F32", q, e, "`(2·atanh(s)/s - 2)/s²` in `z = s²` on s ≤ (√2-1)/(√2+1)"
    )
    return c


# ------------------------------------------------------------ f32 models


def horner(x, c):
    acc = np.full_like(x, c[-1])
    for k in c[-2::-1]:
        acc = acc * x + k
    return acc


STEP = 997  # every STEP-th f32 bit pattern in the check

MAGIC = F(12582912.0)  # 1.5·2^23
INV_LN2 = F(1.4426950408889634)
LN2_HI = F(0.693145751953125)  # 16 significant bits
LN2_LO = F(np.log(2) - 0.693145751953125)


def pow2i(k):
    return ((k + 127).astype(np.uint32) << 23).view(F)


def exp_model(x, c):
    x = np.clip(x, F(-104), F(89)).astype(F)
    t = x * INV_LN2 + MAGIC
    k = t.view(np.int32) - MAGIC.view(np.int32)
    kf = t - MAGIC
    r = (x - kf * LN2_HI) - kf * LN2_LO
    p = F(1) + (r + (r * r) * horner(r, c))
    k1 = k >> 1
    return p * pow2i(k1) * pow2i(k - k1)


def tanh_model(x, c):
    a = np.minimum(np.abs(x), F(10))
    z = a * a
    small = a + (a * z) * horner(z, c["TANH_F32"])
    e = exp_model(a + a, c["EXP_F32"])
    large = F(1) - F(2) / (e + F(1))
    return np.copysign(np.where(a < F(0.625), small, large), x)


def ulp_err(got, want):
    def key(v):
        i = v.view(np.int32).astype(np.int64)
        return np.where(i < 0, np.int64(-(2**31)) - i, i)

    return np.abs(key(got) - key(want))


def check(c):
    x = np.arange(0, 2**32, STEP, dtype=np.uint64).astype(np.uint32).view(F)
    x = x[np.isfinite(x)]
    dense = np.linspace(-20, 20, 4_000_001, dtype=F)
    x = np.concatenate([x, dense])
    with np.errstate(all="ignore"):
        for name, model, ref in [
            ("exp", lambda v: exp_model(v, c["EXP_F32"]), np.exp),
            ("tanh", lambda v: tanh_model(v, c), np.tanh),
        ]:
            got = model(x)
            want = ref(x.astype(np.float64)).astype(F)
            e = ulp_err(got, want)
            i = int(np.argmax(e))
            print(f"{name}: max {e[i]} ulp at {x[i]!r}")


PI = Fraction(
    "3.14159265358979323846264338327950288419716939937510582097494459230781640628620899862803482534211706798"
)


def pio2_parts():
    """π/2 as three parts of 15 significant bits (`k·part` exact in f32 for
    |k| < 2^9) plus an f32 rest: `PIO2_A_F32` ... `PIO2_D_F32`."""
    rem, parts = PI / 2, []
    for _ in range(3):
        q = Fraction(2) ** (math.floor(math.log2(rem)) - 14)
        parts.append(Fraction(math.floor(rem / q)) * q)
        rem -= parts[-1]
    parts.append(Fraction(float(F(float(rem)))))
    for name, p in zip("ABCD", parts):
        print(f"const PIO2_{name}_F32: f32 = {np.format_float_scientific(F(float(p)), unique=True)};")


def reduction_worst_case():
    """The f32 closest to a nonzero multiple of π/2 for |x| ≤ 65536 (the
    distance bounds the cancellation in the sin/cos argument reduction)."""
    lo, hi = F(0.7).view(np.uint32), F(65536).view(np.uint32)
    x = np.arange(lo, hi + 1, dtype=np.uint32).view(F).astype(np.float64)
    k = np.rint(x * (2 / np.pi))
    # x - k·PIO2_1 is exact in f64; the rest in 80-bit long double.
    pio2_1, pio2_2, pio2_3 = 1.5707963267341256, 6.077100506303966e-11, 2.0222662487959506e-21
    L = np.longdouble
    r = ((x - k * pio2_1).astype(L) - k.astype(L) * L(pio2_2)) - k.astype(L) * L(pio2_3)
    i = int(np.argmin(np.abs(r)))
    print(f"min |x - k·π/2| = 2^{np.log2(float(abs(r[i]))):.1f} at x = {x[i]!r}")


if __name__ == "__main__":
    coef = coefficients()
    if "--check" in sys.argv:
        check(coef)
    if "--reduction" in sys.argv:
        pio2_parts()
        reduction_worst_case()
