"""GPU benchmarks of the CUDA executor (not run by `make test`/`make bench`).

    .venv/bin/python benches/gpu.py

* fused elementwise chain over 10^8 float32 vs a device-to-device copy of
  the same bytes (the bandwidth bound: the chain reads and writes once);
* float32 matmul 8192^3 (cuBLAS), and PyTorch's when importable;
* one MLP training step (grad + update) on the device, and JAX's on the
  same GPU when `jax` is importable;
* cuFFT: `rfft` of 2^20 float32, `fft2` of a 1024x1024 complex64 array;
  complex64 matmul 512^3 (cuBLAS `cublasGemmStridedBatchedEx`).

Prints "no GPU" and exits 0 on a machine without a CUDA device.
"""
import sys
import time

import numpy as np

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import _core


def timed(fn, reps=5):
    """Best wall time of `reps` runs (each run waits for its outputs)."""
    fn()
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def run(f, *args):
    """`f` traced once; a runner of it on device 0 that waits for the
    results (a 1-element host copy synchronizes the stream)."""
    cj = jax.make_jaxpr(f)(*args)
    bufs = [_core.gpu_put(jnp.asarray(a), 0) for a in args]

    def go():
        outs = _core.gpu_run(cj._handle, bufs, 0)
        return outs

    return go, bufs


def sync(outs):
    # Waits for the stream without copying anything back, so the measured
    # time is the device work (and the launches) alone.
    outs[0].block_until_ready()


def bench_fused(n=10**8):
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    go, _ = run(lambda x: jnp.tanh(x * 2.0 + 1.0) * jnp.sin(x) - jnp.exp(-x * x), x)
    t = timed(lambda: sync(go()))
    copy, _ = run(lambda x: -x, x)  # one read, one write: the copy bound
    tc = timed(lambda: sync(copy()))
    gbs = 2 * 4 * n / t / 1e9
    print(f"fused chain 1e8 f32: {t * 1e3:.2f} ms ({gbs:.0f} GB/s effective); "
          f"read+write pass {tc * 1e3:.2f} ms")


def bench_matmul(n=8192):
    r = np.random.default_rng(1)
    a = r.standard_normal((n, n)).astype(np.float32)
    b = r.standard_normal((n, n)).astype(np.float32)
    go, _ = run(lambda a, b: a @ b, a, b)
    t = timed(lambda: sync(go()), reps=3)
    print(f"matmul {n}^3 f32 (cuBLAS): {t * 1e3:.1f} ms, {2 * n ** 3 / t / 1e12:.1f} TFLOP/s")
    try:
        import torch
    except ImportError:
        print("  torch not importable: no comparison")
        return
    ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
    tt = timed(lambda: (ta @ tb, torch.cuda.synchronize()), reps=3)
    print(f"  torch: {tt * 1e3:.1f} ms, {2 * n ** 3 / tt / 1e12:.1f} TFLOP/s")


def bench_mlp(batch=4096, width=1024):
    r = np.random.default_rng(2)
    w1 = (r.standard_normal((width, width)) * 0.02).astype(np.float32)
    w2 = (r.standard_normal((width, 1)) * 0.02).astype(np.float32)
    x = r.standard_normal((batch, width)).astype(np.float32)
    y = r.standard_normal((batch, 1)).astype(np.float32)

    def loss(w1, w2, x, y):
        return jnp.mean((jnp.tanh(x @ w1) @ w2 - y) ** 2)

    def step(w1, w2, x, y):
        g1, g2 = jax.grad(loss, argnums=(0, 1))(w1, w2, x, y)
        return w1 - 0.1 * g1, w2 - 0.1 * g2

    host = _core.cuda_host_steps(jax.make_jaxpr(step)(w1, w2, x, y)._handle)
    go, _ = run(step, w1, w2, x, y)
    t = timed(lambda: sync(go()))
    print(f"MLP step batch {batch} width {width}: {t * 1e3:.2f} ms "
          f"({len(host)} equations on the host)")
    try:  # JAX on the same GPU, when installed
        import jax as real_jax
        import jax.numpy as rjnp
    except ImportError:
        print("  jax not importable: no comparison")
        return

    def rloss(w1, w2, x, y):
        return rjnp.mean((rjnp.tanh(x @ w1) @ w2 - y) ** 2)

    def rstep_fn(w1, w2, x, y):
        g1, g2 = real_jax.grad(rloss, argnums=(0, 1))(w1, w2, x, y)
        return w1 - 0.1 * g1, w2 - 0.1 * g2

    rstep = real_jax.jit(rstep_fn)

    args = [real_jax.device_put(a) for a in (w1, w2, x, y)]
    tj = timed(lambda: real_jax.block_until_ready(rstep(*args)))
    print(f"  jax: {tj * 1e3:.2f} ms (microjax_rs / jax = {t / tj:.2f}; JAX's default "
          "GPU matmul precision, TF32)")
    # The same step with strict f32 products, as microjax_rs computes them.
    with real_jax.default_matmul_precision("highest"):
        hstep = real_jax.jit(rstep_fn)
        th = timed(lambda: real_jax.block_until_ready(hstep(*args)))
    print(f"  jax, precision='highest': {th * 1e3:.2f} ms (microjax_rs / jax = {t / th:.2f})")


def bench_complex():
    r = np.random.default_rng(3)
    x = r.standard_normal(2**20).astype(np.float32)
    z = (r.standard_normal((1024, 1024)) + 1j * r.standard_normal((1024, 1024))).astype(np.complex64)
    a = (r.standard_normal((512, 512)) + 1j * r.standard_normal((512, 512))).astype(np.complex64)
    b = (r.standard_normal((512, 512)) + 1j * r.standard_normal((512, 512))).astype(np.complex64)
    rows = [
        ("rfft 2^20 f32 (cuFFT R2C)", jnp.fft.rfft, (x,), 2.5 * 2**20 * 20),
        ("fft2 1024^2 c64 (cuFFT C2C)", jnp.fft.fft2, (z,), 5 * 1024**2 * 20),
        ("matmul 512^3 c64 (cuBLAS)", lambda a, b: a @ b, (a, b), 8 * 512**3),
    ]
    try:
        import torch
        torch_fns = [torch.fft.rfft, torch.fft.fft2, lambda a, b: a @ b]
    except ImportError:
        torch = None
        print("  torch not importable: no comparison")
    for i, (name, f, args, flops) in enumerate(rows):
        host = _core.cuda_host_steps(jax.make_jaxpr(f)(*args)._handle)
        go, _ = run(f, *args)
        t = timed(lambda: sync(go()))
        print(f"{name}: {t * 1e3:.3f} ms, {flops / t / 1e9:.0f} GFLOP/s "
              f"({len(host)} equations on the host)")
        if torch is not None:
            targs = [torch.from_numpy(a).cuda() for a in args]
            tf = torch_fns[i]
            tt = timed(lambda: (tf(*targs), torch.cuda.synchronize()))
            print(f"  torch: {tt * 1e3:.3f} ms (microjax_rs / torch = {t / tt:.2f})")


def main():
    if _core.gpu_device_count() == 0:
        print("no GPU")
        return 0
    info = _core.gpu_device_info(0)
    print(f"device 0: {info['name']} (sm {info['compute_capability']}, "
          f"{info['memory_bytes'] / 2**30:.0f} GiB)")
    bench_fused()
    bench_matmul()
    bench_mlp()
    bench_complex()
    return 0


if __name__ == "__main__":
    sys.exit(main())
