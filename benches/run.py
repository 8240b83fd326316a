"""microjax_rs micro-benchmarks against NumPy (and JAX / PyTorch when importable),
all measured in one process so the ratios are comparable.

    .venv/bin/python benches/run.py                       # print the table
    .venv/bin/python benches/run.py --write benches/RESULTS.md

Timing: `timeit` with a statement string (no per-call lambda overhead),
loop count calibrated so one sample takes >= --min-time seconds, after a
warm-up; each cell is the median per-call time of --repeat samples (the
minimum is kept in the JSON output), the libraries' samples interleaved
round by round (`measure_interleaved`). Every case checks once that all
frameworks compute the same values before timing.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import sys
import time
import timeit

# Thread pools are sized when NumPy's BLAS (OpenBLAS / MKL / OpenMP) and
# microjax_rs's rayon pool start, so pin them before either loads: every row
# compares the libraries on the same 2 threads (the linear-algebra rows'
# conditions). An explicit setting in the environment wins.
for _var in ("RAYON_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "2")

import numpy as np  # noqa: E402 - after the thread pinning above

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# ----------------------------------------------------------------- frameworks


def _import_optional(name):
    try:
        return __import__(name)
    except Exception:
        return None


def load_frameworks(use_jax: bool, use_torch: bool):
    import microjax_rs

    fw = {"microjax": microjax_rs, "numpy": np}
    if use_jax:
        jax = _import_optional("jax")
        if jax is not None:
            jax.config.update("jax_platforms", "cpu")
            fw["jax"] = jax
    if use_torch:
        torch = _import_optional("torch")
        if torch is not None:
            # The same thread count as the other libraries (OMP_NUM_THREADS
            # above sets it too; an explicit call leaves no doubt).
            torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
            fw["torch"] = torch
    return fw


# ----------------------------------------------------------------- timing


def calibrate(stmt: str, ns: dict, *, min_time: float, warmup: int = 3):
    """A timer for `stmt` and the loop count that makes one sample take >= `min_time`."""
    timer = timeit.Timer(stmt, globals=ns)
    timer.timeit(warmup)
    number = 1
    while True:
        t = timer.timeit(number)
        if t >= min_time or number >= 1 << 24:
            break
        number = max(number * 2, int(number * min_time / max(t, 1e-9) * 1.1))
    return timer, number


def measure_interleaved(timers: dict, *, repeat: int, settle: float = 0.0):
    """Median and best per-call seconds of each library's statement over `repeat` rounds.

    A round takes one sample of every library, in an order rotated each round
    (so none always follows the same one): a slow spell of a shared machine
    falls on every column alike instead of on whichever library was being
    timed. Before each sample the process sleeps `settle` seconds, so the
    worker threads of the library sampled before (NumPy's BLAS, PyTorch's
    OpenMP, which spin for a while after their work) have gone idle.
    """
    names = list(timers)
    samples = {name: [] for name in names}
    failed = {}
    for r in range(repeat):
        shift = r % max(len(names), 1)
        for name in names[shift:] + names[:shift]:
            if name in failed:
                continue
            timer, number = timers[name]
            if settle > 0 and len(names) > 1:
                time.sleep(settle)
            try:
                samples[name].append(timer.timeit(number) / number)
            except Exception as e:  # noqa: BLE001 - reported as the library's cell
                failed[name] = e
    out = {}
    for name in names:
        if name in failed:
            e = failed[name]
            out[name] = {"error": f"{type(e).__name__}: {e}"}
        else:
            out[name] = {"median_s": statistics.median(samples[name]), "min_s": min(samples[name])}
    return out


# ----------------------------------------------------------------- cases
# Each case: name, target (text, check on (microjax_s, numpy_s)), and per
# framework a (setup(fw) -> namespace, stmt) pair. The namespace's `check()`
# returns the value to compare across frameworks.


def _leaves(v):
    """The arrays of a (nested) tuple or list result, in order."""
    if isinstance(v, (tuple, list)):
        return [leaf for item in v for leaf in _leaves(item)]
    return [v]


def _to_np(x):
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    return np.asarray(x)


def _mlp_data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 64)).astype(np.float32)
    w = (rng.standard_normal((64, 64)) / 8).astype(np.float32)
    b = rng.standard_normal(64).astype(np.float32)
    return x, w, b


def _vec8(seed):
    return np.random.default_rng(seed).standard_normal(8).astype(np.float32)


def setup_eager_add(name, fw):
    a, b = _vec8(1), _vec8(2)
    if name == "microjax":
        jnp = fw.numpy
        ns = {"a": jnp.asarray(a), "b": jnp.asarray(b)}
        return ns, "a + b"
    if name == "numpy":
        return {"a": a, "b": b}, "a + b"
    if name == "jax":
        jnp = fw.numpy
        return {"a": jnp.asarray(a), "b": jnp.asarray(b)}, "(a + b).block_until_ready()"
    if name == "torch":
        return {"a": fw.from_numpy(a), "b": fw.from_numpy(b)}, "a + b"


def setup_eager_sin(name, fw):
    a = _vec8(3)
    if name == "microjax":
        return {"a": fw.numpy.asarray(a), "sin": fw.numpy.sin}, "sin(a)"
    if name == "numpy":
        return {"a": a, "sin": np.sin}, "sin(a)"
    if name == "jax":
        return {"a": fw.numpy.asarray(a), "sin": fw.numpy.sin}, "sin(a).block_until_ready()"
    if name == "torch":
        return {"a": fw.from_numpy(a), "sin": fw.sin}, "sin(a)"


def _setup_eager_unary_1m(fn_name):
    """Eager `jnp.<fn_name>(a)` on f32[10^6] (the `vmath` SIMD kernels)."""

    def setup(name, fw):
        a = np.random.default_rng(4).uniform(-5, 5, 1_000_000).astype(np.float32)
        if name == "microjax":
            return {"a": fw.numpy.asarray(a), "f": getattr(fw.numpy, fn_name)}, "f(a)"
        if name == "numpy":
            return {"a": a, "f": getattr(np, fn_name)}, "f(a)"
        if name == "jax":
            return {"a": fw.numpy.asarray(a), "f": getattr(fw.numpy, fn_name)}, "f(a).block_until_ready()"
        if name == "torch":
            return {"a": fw.from_numpy(a), "f": getattr(fw, fn_name)}, "f(a)"

    return setup


def setup_jit_identity(name, fw):
    a, b, c = _vec8(4), _vec8(5), _vec8(6)
    if name == "microjax":
        jnp = fw.numpy
        f = fw.jit(lambda x, y, z: (x, y, z))
        ns = {"f": f, "a": jnp.asarray(a), "b": jnp.asarray(b), "c": jnp.asarray(c)}
        f(ns["a"], ns["b"], ns["c"])
        return ns, "f(a, b, c)"
    if name == "jax":
        jnp = fw.numpy
        f = fw.jit(lambda x, y, z: (x, y, z))
        ns = {"f": f, "a": jnp.asarray(a), "b": jnp.asarray(b), "c": jnp.asarray(c), "jax": fw}
        return ns, "jax.block_until_ready(f(a, b, c))"
    return None


def _mlp(np_like):
    return lambda x, w, b: np_like.tanh(x @ w + b)


def setup_jit_mlp(name, fw):
    x, w, b = _mlp_data()
    if name == "microjax":
        jnp = fw.numpy
        f = fw.jit(_mlp(jnp))
        ns = {"f": f, "x": jnp.asarray(x), "w": jnp.asarray(w), "b": jnp.asarray(b)}
        return ns, "f(x, w, b)"
    if name == "numpy":
        return {"f": _mlp(np), "x": x, "w": w, "b": b}, "f(x, w, b)"
    if name == "jax":
        f = fw.jit(_mlp(fw.numpy))
        ns = {"f": f, "x": fw.numpy.asarray(x), "w": fw.numpy.asarray(w), "b": fw.numpy.asarray(b)}
        return ns, "f(x, w, b).block_until_ready()"
    if name == "torch":
        ns = {"f": _mlp(fw), "x": fw.from_numpy(x), "w": fw.from_numpy(w), "b": fw.from_numpy(b)}
        return ns, "f(x, w, b)"


def setup_first_call(name, fw):
    x, w, b = _mlp_data()
    if name not in ("microjax", "jax"):
        return None
    jnp = fw.numpy

    def fresh():
        # A new function object and a new jit wrapper every call: no
        # per-function cache can hit (a structural compile cache still may).
        def f(x, w, b):
            return jnp.tanh(x @ w + b)

        return fw.jit(f)

    ns = {"fresh": fresh, "x": jnp.asarray(x), "w": jnp.asarray(w), "b": jnp.asarray(b)}
    if name == "jax":
        ns["jax"] = fw
        return ns, "jax.block_until_ready(fresh()(x, w, b))"
    return ns, "fresh()(x, w, b)"


# -- transformations -----------------------------------------------------------


def _sincos_f(np_like):
    return lambda x: np_like.sin(x) * np_like.exp(x) + np_like.tanh(x)


def setup_grad_scalar(name, fw):
    x = np.float32(0.7)
    if name == "microjax" or name == "jax":
        jnp = fw.numpy
        g = fw.grad(_sincos_f(jnp))
        ns = {"g": g, "x": jnp.asarray(x)}
        if name == "jax":
            return ns, "g(x).block_until_ready()"
        return ns, "g(x)"
    if name == "numpy":
        # The derivative written out by hand: cos·exp + sin·exp + 1 − tanh².
        ns = {"np": np, "x": x}
        return ns, "np.cos(x) * np.exp(x) + np.sin(x) * np.exp(x) + (np.float32(1) - np.tanh(x) ** 2)"
    if name == "torch":
        torch = fw
        f = _sincos_f(torch)
        xt = torch.tensor(float(x), requires_grad=True)
        ns = {"torch": torch, "f": f, "x": xt}
        return ns, "torch.autograd.grad(f(x), x)[0]"


def _tanh3_data():
    return (np.random.default_rng(7).standard_normal(100) / 2).astype(np.float32)


def setup_hessian_tanh3(name, fw):
    x = _tanh3_data()
    if name == "microjax" or name == "jax":
        jnp = fw.numpy
        h = fw.hessian(lambda v: jnp.sum(jnp.tanh(v) ** 3))
        ns = {"h": h, "x": jnp.asarray(x)}
        if name == "jax":
            return ns, "h(x).block_until_ready()"
        return ns, "h(x)"
    if name == "numpy":
        # d²/dx² tanh³ = (6t − 12t³)(1 − t²) on the diagonal, t = tanh x.
        def h(v):
            t = np.tanh(v)
            return np.diag((6 * t - 12 * t**3) * (1 - t * t))

        return {"h": h, "x": x}, "h(x)"
    if name == "torch":
        torch = fw
        f = lambda v: torch.sum(torch.tanh(v) ** 3)  # noqa: E731
        ns = {"H": torch.autograd.functional.hessian, "f": f, "x": torch.from_numpy(x)}
        return ns, "H(f, x)"


def _linreg_data():
    rng = np.random.default_rng(11)
    w = (rng.standard_normal(256) / 16).astype(np.float32)
    xs = rng.standard_normal((1024, 256)).astype(np.float32)
    ys = rng.standard_normal(1024).astype(np.float32)
    return w, xs, ys


def setup_per_example_grads(name, fw):
    w, xs, ys = _linreg_data()
    if name == "microjax" or name == "jax":
        jnp = fw.numpy

        def loss(w, x, y):
            r = jnp.dot(x, w) - y
            return 0.5 * r * r

        f = fw.jit(fw.vmap(fw.grad(loss), in_axes=(None, 0, 0)))
        ns = {"f": f, "w": jnp.asarray(w), "xs": jnp.asarray(xs), "ys": jnp.asarray(ys)}
        if name == "jax":
            return ns, "f(w, xs, ys).block_until_ready()"
        return ns, "f(w, xs, ys)"
    if name == "numpy":
        # Batched by hand: per-example gradient (x·w − y)·x.
        def f(w, xs, ys):
            return (xs @ w - ys)[:, None] * xs

        return {"f": f, "w": w, "xs": xs, "ys": ys}, "f(w, xs, ys)"
    if name == "torch":
        torch = fw
        func = getattr(torch, "func", None)
        if func is None:
            return None

        def loss(w, x, y):
            r = torch.dot(x, w) - y
            return 0.5 * r * r

        f = func.vmap(func.grad(loss), in_dims=(None, 0, 0))
        ns = {"f": f, "w": torch.from_numpy(w), "xs": torch.from_numpy(xs), "ys": torch.from_numpy(ys)}
        return ns, "f(w, xs, ys)"


# -- control flow ---------------------------------------------------------------


def _scan_data():
    rng = np.random.default_rng(5)
    w = (rng.standard_normal((64, 64)) / 8).astype(np.float32)
    c0 = rng.standard_normal(64).astype(np.float32)
    return w, c0


def setup_scan_tanh(name, fw, matrix_left=False):
    """1000 steps of `carry = tanh(carry @ W)` (or `tanh(W @ carry)`), W f32[64,64]."""
    w, c0 = _scan_data()
    step = (lambda w, c: w @ c) if matrix_left else (lambda w, c: c @ w)
    if name in ("microjax", "jax"):
        jnp, lax = fw.numpy, fw.lax

        def f(w, c):
            return lax.scan(lambda c, _: (jnp.tanh(step(w, c)), None), c, None, length=1000)[0]

        ns = {"f": fw.jit(f), "w": jnp.asarray(w), "c": jnp.asarray(c0)}
        if name == "jax":
            return ns, "f(w, c).block_until_ready()"
        return ns, "f(w, c)"
    if name == "numpy":
        def f(w, c):
            for _ in range(1000):
                c = np.tanh(step(w, c))
            return c

        return {"f": f, "w": w, "c": c0}, "f(w, c)"
    return None


def setup_scan_compile(name, fw):
    """A fresh `jit` of the 1000-step scan: trace + compile + one run."""
    w, c0 = _scan_data()
    if name not in ("microjax", "jax"):
        return None
    jnp, lax = fw.numpy, fw.lax

    def fresh():
        def f(w, c):
            return lax.scan(lambda c, _: (jnp.tanh(c @ w), None), c, None, length=1000)[0]

        return fw.jit(f)

    ns = {"fresh": fresh, "w": jnp.asarray(w), "c": jnp.asarray(c0)}
    if name == "jax":
        ns["jax"] = fw
        return ns, "jax.block_until_ready(fresh()(w, c))"
    return ns, "fresh()(w, c)"


# -- compiled executor ----------------------------------------------------------


def _ew_f(np_like):
    return lambda x: np_like.tanh(x * 2 + 1) * np_like.sin(x) - np_like.exp(-x * x)


def setup_elementwise_1e7(name, fw):
    """`tanh(x*2+1)*sin(x) - exp(-x*x)` over 10**7 f32."""
    x = (np.random.default_rng(3).standard_normal(10**7)).astype(np.float32)
    if name in ("microjax", "jax"):
        f = fw.jit(_ew_f(fw.numpy))
        ns = {"f": f, "x": fw.numpy.asarray(x)}
        return ns, ("f(x).block_until_ready()" if name == "jax" else "f(x)")
    if name == "numpy":
        return {"f": _ew_f(np), "x": x}, "f(x)"
    if name == "torch":
        return {"f": _ew_f(fw), "x": fw.from_numpy(x)}, "f(x)"


def setup_matmul_1024(name, fw):
    rng = np.random.default_rng(4)
    a = rng.standard_normal((1024, 1024)).astype(np.float32)
    b = rng.standard_normal((1024, 1024)).astype(np.float32)
    return _matmul_setup(name, fw, a, b)


def _matmul_setup(name, fw, a, b):
    """`a @ b` in framework `name`: jitted for microjax/JAX, eager for NumPy/PyTorch."""
    if name in ("microjax", "jax"):
        f = fw.jit(lambda a, b: a @ b)
        ns = {"f": f, "a": fw.numpy.asarray(a), "b": fw.numpy.asarray(b)}
        return ns, ("f(a, b).block_until_ready()" if name == "jax" else "f(a, b)")
    if name == "numpy":
        return {"a": a, "b": b}, "a @ b"
    if name == "torch":
        return {"a": fw.from_numpy(a), "b": fw.from_numpy(b)}, "a @ b"


def setup_matmul_c64_512(name, fw):
    """jit `a @ b` on complex64 512 x 512 against NumPy's (OpenBLAS cgemm)."""
    rng = np.random.default_rng(5)

    def c64():
        return (rng.standard_normal((512, 512)) + 1j * rng.standard_normal((512, 512))).astype(np.complex64)

    a, b = c64(), c64()
    return _matmul_setup(name, fw, a, b)


def _setup_fft(fn_name, make_input):
    """jit `jnp.fft.<fn_name>(x)` against `numpy.fft.<fn_name>` (pocketfft)."""

    def setup(name, fw):
        x = make_input(np.random.default_rng(21))
        if name in ("microjax", "jax"):
            f = fw.jit(getattr(fw.numpy.fft, fn_name))
            ns = {"f": f, "x": fw.numpy.asarray(x)}
            return ns, ("f(x).block_until_ready()" if name == "jax" else "f(x)")
        if name == "numpy":
            return {"f": getattr(np.fft, fn_name), "x": x}, "f(x)"
        if name == "torch":
            return {"f": getattr(fw.fft, fn_name), "x": fw.from_numpy(x)}, "f(x)"

    return setup


def _signal_2e20(rng):
    return rng.standard_normal(1 << 20).astype(np.float32)


def _image_1024(rng):
    re, im = rng.standard_normal((2, 1024, 1024))
    return (re + 1j * im).astype(np.complex64)


def _mlp_train_data():
    rng = np.random.default_rng(12)
    params = (
        (rng.standard_normal((784, 512)) / 28).astype(np.float32),
        np.zeros(512, np.float32),
        (rng.standard_normal((512, 10)) / 22).astype(np.float32),
        np.zeros(10, np.float32),
    )
    x = rng.standard_normal((128, 784)).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 128)]
    return params, x, y


def _mlp_train_step(fw):
    jnp = fw.numpy

    def loss(params, x, y):
        w1, b1, w2, b2 = params
        h = jnp.maximum(x @ w1 + b1, 0.0)
        logits = h @ w2 + b2
        m = jnp.max(logits, axis=1, keepdims=True)
        lse = jnp.log(jnp.sum(jnp.exp(logits - m), axis=1, keepdims=True)) + m
        return -jnp.mean(jnp.sum(y * (logits - lse), axis=1))

    def step(params, x, y):
        value, grads = fw.value_and_grad(loss)(params, x, y)
        return value, tuple(p - 0.01 * g for p, g in zip(params, grads))

    return step


def _np_mlp_step(params, x, y):
    w1, b1, w2, b2 = params
    z = x @ w1 + b1
    h = np.maximum(z, 0.0)
    logits = h @ w2 + b2
    m = logits.max(axis=1, keepdims=True)
    e = np.exp(logits - m)
    s = e.sum(axis=1, keepdims=True)
    lse = np.log(s) + m
    n = x.shape[0]
    value = -np.mean(np.sum(y * (logits - lse), axis=1))
    dlogits = (e / s - y) / n
    dw2 = h.T @ dlogits
    db2 = dlogits.sum(axis=0)
    dh = dlogits @ w2.T
    dz = dh * (z > 0)
    dw1 = x.T @ dz
    db1 = dz.sum(axis=0)
    grads = (dw1, db1, dw2, db2)
    return value, tuple(p - np.float32(0.01) * g for p, g in zip(params, grads))


def setup_mlp_train(name, fw):
    """One SGD step of a 784-512-10 MLP, batch 128."""
    params, x, y = _mlp_train_data()
    if name in ("microjax", "jax"):
        jnp = fw.numpy
        step = fw.jit(_mlp_train_step(fw))
        ns = {"step": step, "p": tuple(jnp.asarray(t) for t in params),
              "x": jnp.asarray(x), "y": jnp.asarray(y), "jax": fw}
        if name == "jax":
            return ns, "jax.block_until_ready(step(p, x, y))"
        return ns, "step(p, x, y)"
    if name == "numpy":
        return {"step": _np_mlp_step, "p": params, "x": x, "y": y}, "step(p, x, y)"
    if name == "torch":
        torch = fw
        tp = [torch.from_numpy(t.copy()).requires_grad_(True) for t in params]
        tx, ty = torch.from_numpy(x), torch.from_numpy(y)

        def step(p, x, y):
            w1, b1, w2, b2 = p
            logits = torch.relu(x @ w1 + b1) @ w2 + b2
            loss = -(y * torch.log_softmax(logits, dim=1)).sum(dim=1).mean()
            grads = torch.autograd.grad(loss, p)
            with torch.no_grad():
                return loss, tuple(q - 0.01 * g for q, g in zip(p, grads))

        return {"step": step, "p": tp, "x": tx, "y": ty}, "step(p, x, y)"


def mlp_peak_memory(fw):
    """Peak bytes one compiled MLP train step holds (`debug.plan_stats`:
    every buffer once, measured after each step of the plan) against the
    bytes the step cannot do without: the parameters, the batch (x and y),
    one gradient per parameter, and the activations the backward pass
    reads (the hidden layer's pre-activation and the logits, f32[128,512]
    and f32[128,10]). New parameters are not counted: they could take the
    gradients' buffers."""
    params, x, y = _mlp_train_data()
    jnp = fw.numpy
    p = tuple(jnp.asarray(t) for t in params)
    st = fw.debug.plan_stats(_mlp_train_step(fw), p, jnp.asarray(x), jnp.asarray(y))
    activations = (128 * 512 + 128 * 10) * 4
    need = 2 * sum(t.nbytes for t in params) + x.nbytes + y.nbytes + activations
    return {"peak_bytes": st["peak_bytes"], "need_bytes": need, "ratio": st["peak_bytes"] / need}


def setup_mlp_train_first_call(name, fw):
    """A fresh `jit` of the MLP train step: trace + transform + compile + one run."""
    if name not in ("microjax", "jax"):
        return None
    params, x, y = _mlp_train_data()
    jnp = fw.numpy
    ns = {"fresh": lambda: fw.jit(_mlp_train_step(fw)), "p": tuple(jnp.asarray(t) for t in params),
          "x": jnp.asarray(x), "y": jnp.asarray(y), "jax": fw}
    if name == "jax":
        return ns, "jax.block_until_ready(fresh()(p, x, y))"
    return ns, "fresh()(p, x, y)"


def setup_hessian_jit(name, fw):
    """Jitted `hessian(sum(tanh(x)**3))`, x of 100."""
    x = _tanh3_data()
    if name in ("microjax", "jax"):
        jnp = fw.numpy
        h = fw.jit(fw.hessian(lambda v: jnp.sum(jnp.tanh(v) ** 3)))
        ns = {"h": h, "x": jnp.asarray(x)}
        return ns, ("h(x).block_until_ready()" if name == "jax" else "h(x)")
    if name == "numpy":
        def h(v):
            t = np.tanh(v)
            return np.diag((6 * t - 12 * t**3) * (1 - t * t))

        return {"h": h, "x": x}, "h(x)"
def _conv_data():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((32, 64, 32, 32)).astype(np.float32)
    w = (rng.standard_normal((64, 64, 3, 3)) / 24).astype(np.float32)
    return x, w


def _np_conv_same_3x3(x, w):
    """NumPy reference: padded sliding windows contracted with the kernel."""
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    win = np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(2, 3))  # n c h w i j
    return np.tensordot(win, w, axes=((1, 4, 5), (1, 2, 3))).transpose(0, 3, 1, 2)


def setup_conv_fwd(name, fw):
    """jit 3x3 SAME conv, NCHW x f32[32,64,32,32], OIHW w f32[64,64,3,3]."""
    x, w = _conv_data()
    if name in ("microjax", "jax"):
        lax, jnp = fw.lax, fw.numpy
        f = fw.jit(lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME"))
        ns = {"f": f, "x": jnp.asarray(x), "w": jnp.asarray(w)}
        return ns, "f(x, w)" if name == "microjax" else "f(x, w).block_until_ready()"
    if name == "numpy":
        return {"f": _np_conv_same_3x3, "x": x, "w": w}, "f(x, w)"
    if name == "torch":
        torch = fw
        f = lambda x, w: torch.nn.functional.conv2d(x, w, padding=1)  # noqa: E731
        return {"f": f, "x": torch.from_numpy(x), "w": torch.from_numpy(w), "torch": torch}, "f(x, w)"
    return None


def setup_conv_bwd(name, fw):
    """jit grad of sum(conv(x, w)**2) w.r.t. x and w (both transposes)."""
    x, w = _conv_data()
    if name in ("microjax", "jax"):
        lax, jnp = fw.lax, fw.numpy

        def loss(x, w):
            return jnp.sum(lax.conv_general_dilated(x, w, (1, 1), "SAME") ** 2)

        f = fw.jit(fw.grad(loss, argnums=(0, 1)))
        ns = {"f": f, "x": jnp.asarray(x), "w": jnp.asarray(w), "jax": fw}
        return ns, "f(x, w)" if name == "microjax" else "jax.block_until_ready(f(x, w))"
    if name == "torch":
        torch = fw
        xt, wt = torch.from_numpy(x).requires_grad_(), torch.from_numpy(w).requires_grad_()

        def f(x, w):
            y = torch.nn.functional.conv2d(x, w, padding=1)
            return torch.autograd.grad((y * y).sum(), (x, w))

        return {"f": f, "x": xt, "w": wt}, "f(x, w)"
    if name == "numpy":
        def f(x, w):
            gy = 2 * _np_conv_same_3x3(x, w)
            xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
            win = np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(2, 3))
            gw = np.tensordot(gy, win, axes=((0, 2, 3), (0, 2, 3)))
            gx = _np_conv_same_3x3(gy, w[:, :, ::-1, ::-1].transpose(1, 0, 2, 3))
            return gx, gw

        return {"f": f, "x": x, "w": w}, "f(x, w)"
    return None


def _linalg_operands(kind, n):
    """float32 operands of an n x n linear-algebra row: a general matrix, a
    symmetric positive definite one (`eigh`, `cholesky`), or a well
    conditioned system with one right-hand side (`solve`)."""
    rng = np.random.default_rng(n)
    x = rng.standard_normal((n, n))
    if kind in ("eigh", "cholesky"):
        return ((x @ x.T) / n + np.eye(n)).astype(np.float32), None
    if kind == "solve":
        a = x / np.sqrt(n) + 2.0 * np.eye(n)
        return a.astype(np.float32), rng.standard_normal(n).astype(np.float32)
    return x.astype(np.float32), None


# (numpy.linalg call, jnp.linalg call, index of the output compared: the
# eigenvalues, singular values and R, which LAPACK's conventions fix)
_LINALG_CALLS = {
    "eigh": ("np.linalg.eigh(a)[0]", "jnp.linalg.eigh(a)", 0),
    "svd": ("np.linalg.svd(a, full_matrices=False)[1]", "jnp.linalg.svd(a, full_matrices=False)", 1),
    "qr": ("np.linalg.qr(a)[1]", "jnp.linalg.qr(a)", 1),
    "cholesky": ("np.linalg.cholesky(a)", "jnp.linalg.cholesky(a)", None),
    "solve": ("np.linalg.solve(a, b)", "jnp.linalg.solve(a, b)", None),
}


def _setup_linalg(kind, n):
    """jit `jnp.linalg.<kind>` on float32 n x n against `numpy.linalg.<kind>`
    (LAPACK), both on 2 threads."""

    def setup(name, fw):
        a, b = _linalg_operands(kind, n)
        np_call, jnp_call, part = _LINALG_CALLS[kind]
        if name == "numpy":
            return {"np": np, "a": a, "b": b}, np_call
        if name not in ("microjax", "jax"):
            return None
        jnp = fw.numpy
        params = "a" if b is None else "a, b"
        body = eval(f"lambda {params}: {jnp_call}", {"jnp": jnp})  # noqa: S307 - our own text
        ns = {"f": fw.jit(body), "a": jnp.asarray(a), "b": None if b is None else jnp.asarray(b)}
        stmt = f"f({params})" + ("" if part is None else f"[{part}]")
        return ns, (stmt + ".block_until_ready()" if name == "jax" else stmt)

    return setup


def _linalg_cases():
    rows = []
    for kind in ("eigh", "svd", "qr", "cholesky", "solve"):
        factor = 1.5 if kind in ("eigh", "svd") else 1.2
        for n in (256, 1024):
            rows.append((f"linalg_{kind}_{n}", f"jit `jnp.linalg.{kind}`, f32[{n},{n}], 2 threads; NumPy (LAPACK)",
                         *_times_reference(factor), _setup_linalg(kind, n), 5))
    return rows


def _times_reference(factor):
    """A target of at most `factor` times the reference's (NumPy's) time."""
    return f"<= {factor}x NumPy", lambda mj, ref: ref is not None and mj <= factor * ref


def _at_most(seconds, text):
    """A target of at most `seconds` a call: (its text, its check(mj_s, np_s))."""
    return text, lambda mj, ref: mj <= seconds


def _reference_or_faster(text):
    """A target of at most the reference's (NumPy's) time: (its text, its check(mj_s, np_s))."""
    return text, lambda mj, ref: ref is not None and mj <= ref


CASES = [
    # (key, description, target text, target check(mj_s, np_s), setup, min_time scale)
    ("eager_add_8", "eager `a + b`, two f32[8]", *_at_most(1.0e-6, "<= 1.0 µs"), setup_eager_add, 1),
    ("eager_sin_8", "eager `jnp.sin(a)`, f32[8]", *_at_most(1.0e-6, "<= 1.0 µs"), setup_eager_sin, 1),
    ("eager_exp_1m", "eager `jnp.exp(a)`, f32[10^6]", *_at_most(2.0e-3, "<= 2 ms"), _setup_eager_unary_1m("exp"), 1),
    ("eager_tanh_1m", "eager `jnp.tanh(a)`, f32[10^6]", *_at_most(2.0e-3, "<= 2 ms"),
     _setup_eager_unary_1m("tanh"), 1),
    ("jit_identity_3", "jit dispatch, 3-arg identity, f32[8]", *_at_most(2.0e-6, "<= 2 µs"), setup_jit_identity, 1),
    ("jit_mlp_steady", "jit `tanh(x @ w + b)`, x f32[32,64], w f32[64,64], b f32[64]; NumPy eager",
     *_reference_or_faster("<= NumPy eager"), setup_jit_mlp, 1),
    ("jit_mlp_first_call", "fresh `jit` + first call (trace + compile) of the same function",
     *_at_most(1.0e-3, "<= 1 ms"), setup_first_call, 10),
    ("grad_scalar", "un-jitted `grad(sin(x)*exp(x)+tanh(x))`, x f32[]; NumPy: hand-written derivative",
     *_at_most(30e-6, "<= 30 µs"), setup_grad_scalar, 1),
    ("hessian_tanh3_100", "un-jitted `hessian(sum(tanh(x)**3))`, x f32[100]; NumPy: hand-written diagonal",
     *_at_most(1e-3, "<= 1 ms"), setup_hessian_tanh3, 5),
    ("per_example_grads", "`jit(vmap(grad(loss), in_axes=(None,0,0)))`, linear regression, 1024 examples, "
     "dim 256; NumPy: batched by hand", *_reference_or_faster("<= NumPy"), setup_per_example_grads, 1),
    ("scan_tanh_1000", "jit `scan` of 1000 steps `c = tanh(c @ W)`, W f32[64,64]; NumPy: Python loop",
     *_at_most(0.45e-3, "<= 0.45 ms (JAX here)"), setup_scan_tanh, 5),
    ("scan_tanh_left_1000", "jit `scan` of 1000 steps `c = tanh(W @ c)` (matrix on the left), W f32[64,64]; "
     "NumPy: Python loop", *_at_most(0.45e-3, "<= 0.45 ms (JAX here)"),
     lambda name, fw: setup_scan_tanh(name, fw, matrix_left=True), 5),
    ("scan_tanh_1000_first_call", "fresh `jit` + first call of that scan (trace + compile + run)",
     *_at_most(5e-3, "<= 5 ms"), setup_scan_compile, 5),
    ("elementwise_1e7", "jit `tanh(x*2+1)*sin(x) - exp(-x*x)`, x f32[10^7]; NumPy eager",
     "<= 25 ms and <= 0.27x NumPy", lambda mj, ref: mj <= 25e-3 and (ref is None or mj <= 0.27 * ref),
     setup_elementwise_1e7, 5),
    ("rfft_2e20", "jit `jnp.fft.rfft(x)`, x f32[2^20]; NumPy: numpy.fft.rfft (pocketfft)",
     "<= 1.5x NumPy", lambda mj, ref: ref is not None and mj <= 1.5 * ref, _setup_fft("rfft", _signal_2e20), 5),
    ("fft2_1024", "jit `jnp.fft.fft2(x)`, x c64[1024,1024]; NumPy: numpy.fft.fft2 (pocketfft)",
     "<= 1.5x NumPy", lambda mj, ref: ref is not None and mj <= 1.5 * ref, _setup_fft("fft2", _image_1024), 5),
    ("matmul_1024", "jit `a @ b`, f32[1024,1024] x f32[1024,1024]",
     *_reference_or_faster(">= NumPy (GFLOP/s)"), setup_matmul_1024, 5),
    ("matmul_c64_512", "jit `a @ b`, c64[512,512] x c64[512,512]", *_times_reference(1.2),
     setup_matmul_c64_512, 5),
    ("mlp_train_step", "jit `value_and_grad` + SGD, MLP 784-512-10, batch 128; NumPy: hand-written backprop",
     *_reference_or_faster("<= NumPy"), setup_mlp_train, 5),
    ("mlp_train_first_call", "fresh `jit` + first call of that train step (trace + AD + compile + run)",
     *_at_most(10e-3, "<= 10 ms"), setup_mlp_train_first_call, 10),
    ("hessian_jit_100", "jit `hessian(sum(tanh(x)**3))`, x f32[100]; NumPy: hand-written diagonal",
     *_at_most(100e-6, "<= 100 µs"), setup_hessian_jit, 1),
    ("conv3x3_fwd", "jit 3x3 SAME conv, NCHW f32[32,64,32,32] x OIHW f32[64,64,3,3]; NumPy: sliding windows "
     "+ tensordot", *_reference_or_faster("<= NumPy"), setup_conv_fwd, 5),
    ("conv3x3_bwd", "jit `grad(sum(conv(x, w)**2), argnums=(0, 1))` of that conv (forward + both transposes)",
     *_reference_or_faster("<= NumPy (hand-written gradient)"), setup_conv_bwd, 5),
    *_linalg_cases(),
]


def run_case(case, fws, args):
    key, _desc, _target, _check, setup, scale = case
    results, values, timers = {}, {}, {}
    for name, fw in fws.items():
        try:
            made = setup(name, fw)
            if made is None:
                continue
            ns, stmt = made
            values[name] = eval(stmt, ns)  # noqa: S307 - our own statement strings
            timers[name] = calibrate(stmt, ns, min_time=args.min_time * scale)
        except Exception as e:  # a missing feature is a table cell, not a crash
            results[name] = {"error": f"{type(e).__name__}: {e}"}
            print(f"[{key}] {name}: {type(e).__name__}: {e}", file=sys.stderr)
    for name, r in measure_interleaved(timers, repeat=args.repeat, settle=args.settle).items():
        results[name] = r
        if "error" in r:
            print(f"[{key}] {name}: {r['error']}", file=sys.stderr)
    # Same values everywhere (loose: different libraries, different math).
    ref = values.get("numpy", values.get("jax"))
    for name, v in values.items():
        if ref is None or v is ref:
            continue
        a = [_to_np(t) for t in _leaves(v)]
        r = [_to_np(t) for t in _leaves(ref)]
        # Absolute slack scaled by the result's magnitude: long f32 sums (a
        # 1024-term dot product, a convolution's weight gradient over 32k
        # terms) round differently in every library.
        ok = len(a) == len(r) and all(
            p.shape == q.shape
            and np.allclose(p, q, rtol=1e-4, atol=1e-5 * max(1.0, float(np.abs(q).max(initial=0))))
            for p, q in zip(a, r)
        )
        if not ok and "error" not in results.get(name, {}):
            results[name]["mismatch"] = True
            print(f"[{key}] {name}: result differs from reference", file=sys.stderr)
    return results


# ----------------------------------------------------------------- report


def _loadavg():
    """`uptime`'s load averages (1, 5, 15 min): other processes share the machine."""
    try:
        return "/".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:
        return "unknown"


def machine_info():
    model = platform.processor() or "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {
        "load_start": _loadavg(),
        "cpu": model,
        "nproc": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    }


def _us(r):
    if r is None:
        return "—"
    if "error" in r:
        return "error"
    txt = f"{r['median_s'] * 1e6:.2f}" if r["median_s"] < 1e-3 else f"{r['median_s'] * 1e6:.0f}"
    return txt + (" (mismatch)" if r.get("mismatch") else "")


def render(all_results, fws, info):
    extra = [n for n in ("jax", "torch") if n in fws]
    versions = {n: getattr(fw, "__version__", "?") for n, fw in fws.items()}
    head = ["case", "target", "microjax µs", "NumPy µs", "microjax / NumPy"]
    head += [{"jax": "JAX µs", "torch": "PyTorch µs"}[n] for n in extra]
    head += ["meets target"]
    rows = []
    for case in CASES:
        key, desc, target, check, *_ = case
        res = all_results[key]
        mj, ref = res.get("microjax"), res.get("numpy")
        mj_s = mj.get("median_s") if mj and "error" not in mj else None
        ref_s = ref.get("median_s") if ref and "error" not in ref else None
        ratio = f"{mj_s / ref_s:.2f}" if mj_s and ref_s else "—"
        met = "—" if mj_s is None else ("yes" if check(mj_s, ref_s) and not mj.get("mismatch") else "no")
        row = [f"{desc}", target, _us(mj), _us(ref), ratio] + [_us(res.get(n)) for n in extra] + [met]
        rows.append(row)
    lines = [
        "# microjax_rs benchmarks",
        "",
        "Generated by `make bench` (`benches/run.py`); every number below comes from one run, in one",
        "process. Cells are the median per-call time of several `timeit` samples after a warm-up,",
        "the libraries' samples taken in turn, round by round, so a slow spell of the machine falls",
        "on every column of a row alike (with a pause of `--settle` seconds before each sample, so",
        "the threads of the library sampled before have gone idle);",
        "`—` means not applicable (NumPy has no jit), `error` means the case raised (see stderr).",
        "",
        f"Machine: {info['cpu']}, {info['nproc']} cores; Python {info['python']}; {info['platform']}.  ",
        f"Date: {info['date']}.  ",
        f"Load average (1/5/15 min, as `uptime`): {info['load_start']} at start, "
        f"{info.get('load_end', '?')} at end (the machine is shared; other jobs inflate times).  ",
        "Versions: " + ", ".join(f"{n} {v}" for n, v in versions.items()) + ".  ",
        "Threads: " + ", ".join(f"{v}={os.environ.get(v, '?')}" for v in
                                ("RAYON_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"))
        + ("; `torch.set_num_threads` the same" if "torch" in fws else "")
        + ("; JAX's CPU client sizes its pool by the cores" if "jax" in fws else "") + ".",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "|".join("---" for _ in head) + "|",
    ]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    mem = all_results.get("mlp_train_step", {}).get("microjax_memory")
    mem_lines = ([f"    live bytes of one train step (debug.plan_stats): {mem['peak_bytes'] / 1e6:.2f} MB against",
                  f"    {mem['need_bytes'] / 1e6:.2f} MB the step needs ({mem['ratio']:.2f}x, target <= 1.5x): "
                  "parameters, batch, one"] if mem else
                 ["    live bytes of one train step: not measured in this run; what the step needs:",
                  "    parameters, batch, one"])
    lines += [
        "",
        "Notes:",
        "- First call: a fresh function object and a fresh `jit` wrapper per call, so per-function",
        "  caches never hit; the structural compile cache does (same program, same argument",
        "  types): the rows time trace + transform + a cache hit, the plan is built once.",
        "- Un-jitted grad: every call traces `f` (no caching of `f`); each traced operation",
        "  is one Rust call (`Builder.stage`: operands, equation, output tracers, AD record),",
        "  eager grad stages without source lines (finding the user's frame materializes",
        "  Python frames), and the traced program is lifted, transformed (cached by",
        "  structure) and run as one forward+backward `value_and_grad` program in one Rust",
        "  call (this staging took the row from 88-150 µs to 35-60 µs). `Tracer` is a Rust",
        "  class; float arithmetic on the tracers of an eager AD trace (jnp unary functions,",
        "  `+ - * /` of one aval) is staged and recorded in Rust with no Python frame; `grad`",
        "  with an int argnums is a Rust `GradFunction` that enters the trace, calls `f`,",
        "  builds and runs the program itself; the transform cache is probed by a one-pass",
        "  key with no copy of the program; eager traces hold no tracer<->trace reference",
        "  cycle (one the collector could not see leaked every trace). With the tracer in",
        "  Rust the row went from 35-60 µs to 16-23 µs.",
        "- Un-jitted hessian: the programs nested transforms produce run under the outer",
        "  batch/AD trace by partial evaluation (the part reading none of its tracers runs",
        "  below, the rest is spliced in one call) instead of being replayed equation by",
        "  equation in Python, and the jacobian's identity rows are cached per shape:",
        "  0.84-1.5 ms -> 0.5-0.85 ms.",
        "- Eager `exp` / `tanh` of f32[10^6]: one vector-math pass (exp 0.45, tanh 0.78 ns/element",
        "  on one core) split over the kernel pool's threads into an output from the host buffer",
        "  pool (perf before: one thread, and a 4 MB zeroing pass ~12% of the call); interleaved",
        "  A/B runs: exp 0.71 -> 0.37 ms, tanh 0.97 -> 0.56 ms (NumPy 0.53 / 0.42 in those runs).",
        "- JAX timings include `block_until_ready()`; PyTorch runs eager on CPU.",
        "- grad / hessian rows are un-jitted: every call traces, transforms (Rust) and runs;",
        "  the NumPy column is the derivative written out by hand, so the ratio is the price of",
        "  automatic differentiation, not of the arithmetic.",
        "- Per-example grads: the NumPy column is the hand-batched `(X @ w - y)[:, None] * X`.",
        "  Its last product is a batched outer product (1024 batches of 1x1 @ 1x256) on the",
        "  register kernel, whose output was zero-filled first (perf: the fill ~30% of the",
        "  call); the small kernels write every element, so their output now comes from the",
        "  host pool unfilled: 130 -> 97 µs in interleaved A/B runs of the release build.",
        "  Both products then ran on one thread: the outer product ~60% of the call, the",
        "  1024x256 matvec (gemm) ~24%. The small kernels now split a product over the",
        "  threads from 65,536 elements (whole batches, or one matrix's rows; same bits), and",
        "  packed matrix-vector products of every size take the row-dot kernel (gemm ran them",
        "  on one thread: a 4096x4096 one 3.3 -> 1.7 ms): 103-118 -> 57-85 µs.",
        "- jit runs on the compiled CPU executor from the second call of a signature (the first",
        "  call runs the reference interpreter while the plan is built). Profiles (perf) behind",
        "  the rows that miss their targets:",
        "  - scan: loop bodies run through a `Looped` runner (consts bound once, the value",
        "    table kept, carries moved in and results out), single steps write into recycled",
        "    arrays, the 64x64 matvec's layout is planned once (PackedDot) and a one-chunk fused",
        "    group writes straight into its outputs. Fastest single call 0.75-0.95 -> 0.33 ms;",
        "    the row's median is 0.37-0.64 ms when the scan runs alone and 0.9-1.4 ms when it",
        "    follows the per-example-grads row in one process (NumPy's Python loop slows by",
        "    the same factor there, so it is the machine, not the plan). perf: matvec kernel",
        "    ~27%, tanh ~10%, the per-thread recycle bin ~10%; the interrupt poll's clock",
        "    reads were ~13% (a read at every loop head and plan step) and are now taken at",
        "    one checkpoint in up to eight while checkpoints come densely. With the matrix on the left",
        "    (`W @ c`) the product is a matrix-vector one: it ran on the register kernel's",
        "    k-ordered sums, one scalar chain per row (a jitted 64x64 `W @ c` 17 µs against",
        "    2.5 µs for `c @ W`); it now runs a row-dot kernel (16 partial sums per row, four",
        "    rows per step sharing the vector's loads): 2-4 µs, the scan 15 -> 1.4 ms. That",
        "    kernel then spent most of its time outside the multiply-adds: the four rows'",
        "    iterators and partial sums lived on the stack and each row's pairwise tree ran",
        "    alone; the rows are now walked in lockstep (accumulators in registers) and the",
        "    four trees run straight-line, vectorized together (same bits): the `W @ c`",
        "    scan 0.95-1.7 -> 0.55-0.57 ms in interleaved A/B runs of the release build,",
        "    within 1.2x of `c @ W`. On AVX2 the trees then ran across rows: the partial",
        "    sums of eight rows are transposed with shuffles, so each vector add is one",
        "    tree step of eight rows (one row's tree alone is mostly horizontal shuffles;",
        "    same bits): a scan of a bare 64x64 `W @ c` 0.63-0.72 -> 0.36-0.38 ms.",
        "    The walk per iteration was then ~155 ns of a ~330 ns step (perf: locked reference",
        "    count operations on results and freed values, the thread's recycle bin, a clock",
        "    read at every third checkpoint). A loop body now keeps its own arrays (each step's",
        "    freed value returns to that step, a read carry to the step computing its",
        "    successor), moves results out instead of cloning them, and small steps share one",
        "    checkpoint: 20,000-step scans 334 -> ~300 ns/step (`c @ W`), 471 -> ~400",
        "    (`W @ c`). What is left of `tanh(c @ W)`: the product ~110 ns (64 dependent vector",
        "    adds per output block; mul and add stay separate for the reference kernel's bits,",
        "    XLA's matvec alone is ~190 ns here), tanh ~45 ns, the walk ~140 ns.",
        "    `W @ c` with `W` a loop constant: from the loop's second iteration the step",
        "    multiplies a copy of `W` packed column by column (`FixedMatrix`), so each vector",
        "    load holds one column element of 16 rows, the rows' 16 partial sums are vectors",
        "    across rows and their pairwise tree is vector adds, no horizontal sums (same bits",
        "    as the row kernel). The 64x64 f32 product alone 266 -> 124 ns (AVX-512); scans",
        "    of a bare `W @ c` 334-359 -> 227-289 µs, of `tanh(W @ c)` 426-481 -> 318-391 µs",
        "    (interleaved processes; this machine's timings swing up to 2x within a process).",
        "  - conv: f32/f64 convolutions run in column tiles of about 2 MB (blocks of the",
        "    (image, output position) columns), each gathered and multiplied by faer's",
        "    matmul while in cache, instead of one 75 MB column matrix, a product and a",
        "    scatter pass; the tiles are gathered and multiplied in parallel (one tile per",
        "    thread, the results written on the calling thread). A window wider than its",
        "    output (the weight gradient: a 32x32 window, a 3x3 output) is gathered along",
        "    the window instead, in row tiles of column chunks whose products are summed in",
        "    chunk order: that transpose took 158 ms of the gradient (runs of 3 elements",
        "    copied, the 8 MB weight matrix streamed once per tile), now 28-36 ms. Forward",
        "    about 30 ms, 1.6-2x PyTorch's direct (mkldnn) kernels; the gradient 1.6x.",
        "    perf of the forward then: GEMM micro-kernels ~49% of the samples, gemm's",
        "    packing of each tile ~14%, the gathers' and writes' copies ~14%, zeroing the",
        "    output ~5%. With the batch the output's outermost axis, each image is now one",
        "    parallel task that gathers, multiplies and writes its own tiles (the results",
        "    waited for the calling thread between waves before), the tiles' runs are",
        "    found once for all images, and the output comes from the host pool (every",
        "    element is written): forward 21.1 -> 15.7 ms, the gradient 74 -> 48 ms",
        "    (same-process runs against PyTorch: forward 1.77x -> 1.65x, gradient",
        "    1.41x -> 1.11x PyTorch's; in the two benchmark runs after the change 2.0x /",
        "    1.7x and 1.46x / 1.45x). Tried and dropped: reading stride-1 convolutions",
        "    from a zero-padded copy of the input with the output laid on the padded grid",
        "    (one contiguous copy per window row instead of runs of 32; 6% more product",
        "    columns), and the same for the weight gradient's window: no faster on one",
        "    thread (42.7 -> 49 ms forward): the copies are bandwidth-bound, not",
        "    call-bound. What is left is the im2col copy and gemm's packing of it (two",
        "    passes over the 75 MB column matrix, in cache-sized tiles); a direct kernel",
        "    reading the image in place would remove both.",
        "  - 10^7 elementwise: one fused typed pass over 2 threads; sin/tanh/exp now run in",
        "    native-f32 lanes (exp 0.45, tanh 0.78, sin 1.5 ns/element on one core, was 1.0 /",
        "    1.4 / 1.7 in f64 lanes), about 13 ms of the row on two threads; the 40 MB output",
        "    comes from the host buffer pool (pool off against on: 59.5 -> 45.4 ms and",
        "    57.0 -> 50.3 ms, load 2-3). Profiled (perf, AMD EPYC AVX2 VM): the pass is",
        "    compute-bound in the three kernels, sin 26%, tanh 21%, exp 11% of the samples,",
        "    the six arithmetic members ~14%; in cache on one core sin 2.06, tanh 1.57,",
        "    exp 0.88 ns/element on this machine, which with the arithmetic is the whole",
        "    one-thread time (53-61 ms); two threads 32-35 ms (1.7x). The memory floor is",
        "    ~6 ms (NumPy's copyto of 40 MB, one core). The members whose value is an output",
        "    write the output's window directly (it was a per-chunk copy, 6% of the samples):",
        "    31.5 against 31.8-36.3 ms minima. The kernels were then latency-bound, not",
        "    port-bound: a vector's Horner chain is ~30 dependent operations and the",
        "    scheduler holds about three loop iterations of it (perf: the samples pile up at",
        "    the chain's end). The f32 polynomials are now evaluated by Estrin's scheme (same",
        "    operations plus x^2, half the depth; same bits at every SIMD level, within the",
        "    documented ulp bounds): in cache on one core exp 0.80 -> 0.57, tanh 1.13 -> 0.84, sin",
        "    1.58 -> 1.23 ns/element, the whole expression 3.9 -> 3.0 ns/element",
        "    (interleaved runs); the row 20-26 ms from run to run here.",
        "  - MLP train step and the small `tanh(x @ w + b)`: the weight gradient `x^T @ g` of",
        "    `x @ w` is emitted by the transpose rule as that product (operands swapped)",
        "    instead of `g^T @ x` and a 784x512 transpose (0.3-0.5 ms): the step 3.7-4.4 ->",
        "    2.4-2.8 ms in interleaved A/B runs, within 1.0-1.2x of JAX and PyTorch from run to",
        "    run here; its two 128x784x512 products are most of it. GEMM: real products moved from the gemm crate to faer's matmul",
        "    (private-gemm kernels; 1024^3 f32 on this AVX2 machine 28 -> 18 ms and the train step",
        "    6.1 -> 4.4 ms, medians of five interleaved A/B runs); the buffer pool is neutral here (2.80 -> 2.75",
        "    and 4.14 -> 4.15 ms off/on; glibc already reuses freed blocks under 32 MiB). Peak",
        *mem_lines,
        "    gradient per parameter and the activations the backward pass reads",
        "    (f32[128,512] and f32[128,10]); new parameters not counted (they could take",
        "    the gradients' buffers). The ReLU layer's derivative masks",
        "    (`convert(z == max(z, 0), f32)` and the tie at 0) kept that 128x512 group off the",
        "    typed fused pass (a boolean member): it ran member by member with a buffer per",
        "    member and chunk, 220 µs. A comparison that only its conversion back to float",
        "    reads is now a typed member holding 1 / 0 (same bits): 69 µs, every group of the",
        "    step typed, step medians 2.98-3.04 -> 2.66-2.92 ms in interleaved A/B runs on this",
        "    AVX-512 machine. perf then: GEMM micro-kernels ~60% of the samples (both products",
        "    run at JAX's speed alone: 0.75-0.99 ms against 0.75-0.98 ms), the rest the",
        "    fused groups, memset of fresh outputs (~3%) and thread hand-offs. Products that",
        "    faer or gemm overwrite now take their output from the host buffer pool (no zeroing",
        "    pass): memset 2.7% -> 0.2% of the samples, step medians 1.95 -> 1.76-1.91 ms. Alone,",
        "    JAX's 128x784x512 product is 0.41-0.46 ms here against ours 0.50-0.61 ms (x @ w;",
        "    x^T @ g is even); the rest of the gap is the non-GEMM time (fused groups, small",
        "    products, thread wake-ups: ~0.6 ms against JAX's ~0.25 ms). On this AVX-512",
        "    machine the gemm crate's kernels beat faer's up to 2^26 multiply-adds (f32,",
        "    medians of three interleaved runs, faer / gemm: 32x64x64 4.9 / 4.0 µs,",
        "    256^3 168 / 160 µs, 128x784x512 574 / 540 µs; even above), so real products of",
        "    that size run on gemm on AVX-512 CPUs (faer stays on AVX2, where it was the",
        "    faster at every size): in same-process runs against JAX the train step went",
        "    from 1.35-1.44x to 1.09-1.11x JAX's, and the small `tanh(x @ w + b)` from",
        "    1.01-1.03x to 0.90-0.98x NumPy's (the machine slow at the time: NumPy 6.8-9.8 µs).",
        "    The 1024^3 row then missed PyTorch's speed: both libraries called alternately in",
        "    one process against PyTorch's product (MKL), gemm's f32 kernels on 2 threads ran",
        "    at 1.01-1.07x PyTorch's time, faer's at 1.15-1.31x (on one thread the three were",
        "    even: the gap is faer's split over two threads), and gemm led at 256^3 to 2048^3;",
        "    so every f32 product runs on gemm on AVX-512 CPUs. In f64 faer led up to 768^3",
        "    (gemm 1.2-1.6x slower at 256^3), gemm from 1024^3: f64 products take gemm from",
        "    2^30 multiply-adds.",
        "  - jitted hessian: its program builds the identity matrix it seeds the Jacobian",
        "    with (two int32 iotas, `eq`, a conversion: 100x100 each) on every call; the",
        "    iota fill alone was 11% of the profile. The plan builder now computes small",
        "    input-independent values into constants once (same kernels, at most 1 MiB each,",
        "    16 MiB a program): 77-130 -> 36-55 µs in interleaved A/B runs of the release",
        "    build. perf then: the fused groups' per-thread scratch was dropped and rebuilt",
        "    whenever a group with more slots followed one with fewer (allocation, zeroing,",
        "    regrowth ~6% of the call), and seven row vectors broadcast over 100x100 were",
        "    gathered chunk by chunk (memcpy ~15%). Scratch now keeps its buffers, and a",
        "    group with broadcast inputs runs in chunks of a multiple of their common period",
        "    (4000 here) and gathers each once per run (later chunks at the same phase read a",
        "    prefix): 41-42 -> 37-38 µs, then 48-51 -> 41-45 µs (machine slower). What is left:",
        "    the 100x100 transpose (~14%), the elementwise kernels themselves.",
        "",
    ]
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--write", metavar="PATH", help="write the Markdown table to PATH")
    p.add_argument("--json", metavar="PATH", help="write raw results as JSON")
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--min-time", type=float, default=0.02, help="seconds per sample (first-call case: x10)")
    p.add_argument("--settle", type=float, default=0.1,
                   help="seconds to sleep before each sample (other libraries' threads go idle)")
    p.add_argument("--no-jax", action="store_true")
    p.add_argument("--no-torch", action="store_true")
    p.add_argument("--only", nargs="*", help="case keys to run")
    args = p.parse_args(argv)

    fws = load_frameworks(not args.no_jax, not args.no_torch)
    info = machine_info()
    all_results = {}
    for case in CASES:
        if args.only and case[0] not in args.only:
            all_results[case[0]] = {}
            continue
        all_results[case[0]] = run_case(case, fws, args)
        print(f"{case[0]}: " + ", ".join(f"{n}={_us(r)}" for n, r in all_results[case[0]].items()), flush=True)
        if case[0] == "mlp_train_step" and "microjax" in fws:
            mem = mlp_peak_memory(fws["microjax"])
            all_results[case[0]]["microjax_memory"] = mem
            print(f"mlp_train_step peak memory: {mem['peak_bytes'] / 1e6:.2f} MB against "
                  f"{mem['need_bytes'] / 1e6:.2f} MB needed ({mem['ratio']:.2f}x, target <= 1.5x)")
    info["load_end"] = _loadavg()
    text = render(all_results, fws, info)
    print()
    print(text)
    if args.write:
        with open(args.write, "w", encoding="utf-8") as f:
            f.write(text)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"machine": info, "results": all_results}, f, indent=2)
    failed = [k for k, r in all_results.items() if "error" in r.get("microjax", {})]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
