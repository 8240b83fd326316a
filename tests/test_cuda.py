"""The CUDA executor through the binding.

Code generation (`_core.cuda_kernel_sources`) runs everywhere. Device tests
compare GPU results with the CPU (jit) at per-dtype tolerances and skip when
`_core.gpu_device_count() == 0`.
"""
import re

import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import _core, lax

HAS_GPU = _core.gpu_device_count() > 0
needs_gpu = pytest.mark.skipif(not HAS_GPU, reason="no CUDA device")
RTOL = {np.dtype("float32"): 2e-5, np.dtype("float64"): 1e-12}


def signature_params(src):
    return re.search(r"void mj_[0-9a-f]{16}\((.*?)\) \{", src, re.S).group(1).split(", ")


def assert_inputs_before_outputs(src):
    """Launches pass every input buffer, then every output, then `n`: the
    generated signature must list its parameters in that order."""
    params = signature_params(src)
    kinds = ["n" if p == "long long n" else "in" if p.startswith("const ") else "out"
             for p in params]
    assert kinds[-1] == "n" and kinds.count("n") == 1, params
    assert kinds[:-1] == sorted(kinds[:-1]), f"an output parameter before an input: {params}"


def kernels(f, *args):
    srcs = _core.cuda_kernel_sources(jax.make_jaxpr(f)(*args)._handle)
    for src in srcs:
        assert_inputs_before_outputs(src)
    return srcs


def kernel_names(srcs):
    return [re.search(r"void (mj_[0-9a-f]{16})\(", s).group(1) for s in srcs]


def rng(seed=0):
    return np.random.default_rng(seed)


# -- code generation (no GPU needed) -------------------------------------------


def test_fused_chain_is_one_grid_stride_kernel():
    x = jnp.asarray(rng().standard_normal((4, 8)).astype(np.float32))
    (src,) = kernels(lambda x: jnp.tanh(x * 2.0 + 1.0) * jnp.sin(x) - jnp.exp(-x * x), x)
    assert src.startswith('extern "C" __global__ void mj_')
    assert "i += (long long)blockDim.x * gridDim.x" in src
    for fn in ("tanhf(", "sinf(", "expf("):
        assert fn in src
    # One input, one output, the element count last.
    assert "const float* __restrict__ in0, float* __restrict__ out0, long long n)" in src


def test_outputs_stored_before_a_later_read_still_follow_every_input():
    # nanmean fuses `not(isnan x)` (an escaping output) with a later read of
    # the zeros it selects against: the second input's parameter must still
    # come before the first output's.
    x = jnp.asarray(rng().standard_normal((3, 4)).astype(np.float32))
    srcs = kernels(lambda x: jnp.nanmean(x, axis=0), x)
    multi = [s for s in srcs if len(signature_params(s)) > 3]
    assert multi, srcs
    assert any("in1" in s and "out1" in s for s in multi)
    m = jnp.asarray(rng(1).standard_normal((4, 5)) > 0)
    kernels(lambda m: jnp.argwhere(m, size=6), m)
    kernels(lambda x: jnp.cov(x), x)


def test_sources_are_deterministic_and_names_follow_text():
    x = jnp.asarray(np.ones((3, 5), np.float32))
    a = kernels(lambda x: jnp.cos(x) + 1.0, x)
    b = kernels(lambda x: jnp.cos(x) + 1.0, x)
    c = kernels(lambda x: jnp.sin(x) + 1.0, x)
    assert a == b
    assert kernel_names(a) != kernel_names(c)
    assert len(kernel_names(a)) == 1


def test_bias_broadcast_reads_through_index_arithmetic():
    x = jnp.asarray(np.ones((4, 3), np.float32))
    b = jnp.asarray(np.ones((3,), np.float32))
    (src,) = kernels(lambda x, b: jnp.maximum(x + b, 0.0), x, b)
    # The bias (read first, by the broadcast) repeats every row; x is read
    # in order.
    assert "in0[i % 3LL]" in src and "in1[i]" in src


def test_reduction_runs_one_thread_per_output_in_order():
    x = jnp.asarray(np.ones((4, 3), np.float32))
    (src,) = kernels(lambda x: jnp.sum(x, axis=1), x)
    assert "for (long long r = 0; r < 3LL; ++r)" in src
    assert "acc = r == 0 ? x : (float)(acc + x);" in src


def test_matmul_goes_to_cublas_and_bias_tanh_to_a_kernel():
    x = jnp.asarray(np.ones((2, 3), np.float32))
    w = jnp.asarray(np.ones((3, 4), np.float32))
    b = jnp.asarray(np.ones((4,), np.float32))
    assert kernels(lambda x, w: x @ w, x, w) == []
    (src,) = kernels(lambda x, w, b: jnp.tanh(x @ w + b), x, w, b)
    assert "tanhf(" in src


def test_threefry_bits_kernel():
    srcs = kernels(lambda k: jax.random.bits(k, (16,)), jax.random.PRNGKey(0))
    assert any("0x1BD11BDAu" in s for s in srcs)


def test_while_loop_lists_its_cond_and_body_kernels():
    x = jnp.asarray(np.ones((6, 5), np.float32))

    def f(x):
        return lax.while_loop(lambda c: c[0, 0] < 10.0, lambda c: jnp.sin(c) * 1.5 + 2.0, x)

    srcs = kernels(f, x)
    assert any("sinf(" in s for s in srcs)
    assert any(" < " in s for s in srcs)


def test_gather_and_scatter_add_are_kernels():
    table = jnp.asarray(np.ones((10, 4), np.float32))
    idx = jnp.asarray(np.array([3, 1, 3], np.int32))
    srcs = kernels(lambda t, i: jax.grad(lambda t: jnp.sum(t[i] ** 2))(t), table, idx)
    gathers = [s for s in srcs if "ok ? in_x[off]" in s]
    scatters = [s for s in srcs if "for (long long g = 0; g < 3LL; ++g)" in s]
    assert len(gathers) == 1 and len(scatters) == 1, srcs


def test_half_precision_kernels_carry_their_conversions():
    x = jnp.asarray(np.ones((8,), np.float16))
    (src,) = kernels(lambda x: jnp.exp(x) * x, x)
    assert "mj_f16_to_f32(in0[i])" in src and "out0[i] = mj_f32_to_f16(" in src
    assert src.index("mj_f32_to_f16(float f)") < src.index('extern "C"')
    # dtype= keeps the sum in bfloat16 (without it jnp.sum accumulates in float32, as JAX).
    (src,) = kernels(lambda x: jnp.sum(x, dtype=jnp.bfloat16), jnp.asarray(np.ones((8,), jnp.bfloat16)))
    assert "mj_bf16_to_f32(" in src and "float acc" in src


def host_steps(f, *args):
    return _core.cuda_host_steps(jax.make_jaxpr(f)(*args)._handle)


def test_training_programs_run_entirely_on_the_device():
    r = rng(20)
    w1 = jnp.asarray(r.standard_normal((8, 16)).astype(np.float32))
    w2 = jnp.asarray(r.standard_normal((16, 4)).astype(np.float32))
    x = jnp.asarray(r.standard_normal((32, 8)).astype(np.float32))
    labels = jnp.asarray(r.integers(0, 4, 32).astype(np.int32))
    emb = jnp.asarray(r.standard_normal((100, 8)).astype(np.float32))

    def loss(w1, w2, x, labels):
        logits = jnp.tanh(x @ w1) @ w2
        logp = jax.nn.log_softmax(logits)
        return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=1))

    def step(w1, w2, x, labels):
        g1, g2 = jax.grad(loss, argnums=(0, 1))(w1, w2, x, labels)
        return w1 - 0.1 * g1, w2 - 0.1 * g2

    assert host_steps(step, w1, w2, x, labels) == []
    # Embedding lookups and their gradient (gather, scatter-add), slicing,
    # padding, concatenation, a scan.
    ids = jnp.asarray(r.integers(0, 100, (6, 5)).astype(np.int32))

    def seq_loss(emb, ids):
        e = emb[ids]                                   # (6, 5, 8)
        e = jnp.concatenate([e[:, ::-1], jnp.pad(e[:, 1:], ((0, 0), (0, 1), (0, 0)))], axis=2)
        h, _ = lax.scan(lambda c, v: (jnp.tanh(c + v), None), jnp.zeros((6, 16)), e.transpose(1, 0, 2))
        return jnp.sum(h ** 2)

    assert host_steps(jax.grad(seq_loss), emb, ids) == []


def test_host_steps_name_the_primitive_and_why():
    x = jnp.asarray(np.arange(6.0, dtype=np.float32))
    assert host_steps(lambda x: jnp.sort(x) + 1.0, x) == ["sort: no device lowering"]
    assert host_steps(lambda x: lax.fori_loop(0, 2, lambda i, c: jnp.sort(c), x), x) == [
        "sort: no device lowering"]


def test_host_fallback_has_no_kernel():
    x = jnp.asarray(np.arange(6.0, dtype=np.float32))
    assert kernels(lambda x: jnp.sort(x), x) == []


def test_float64_uses_double_math():
    with _x64():
        x = jnp.asarray(np.ones((5,), np.float64))
        (src,) = kernels(lambda x: jnp.exp(x) * 2.0 + 1.0, x)
    assert "exp(" in src and "expf(" not in src
    assert "const double* __restrict__ in0" in src


class _x64:
    def __enter__(self):
        self.old = jax.config.jax_enable_x64
        jax.config.update("jax_enable_x64", True)

    def __exit__(self, *exc):
        jax.config.update("jax_enable_x64", self.old)


# -- no device -----------------------------------------------------------------


@pytest.mark.skipif(HAS_GPU, reason="a CUDA device is present")
def test_without_a_gpu_device_ops_raise_runtime_error():
    assert _core.gpu_device_count() == 0
    x = jnp.asarray(np.ones((2,), np.float32))
    with pytest.raises(RuntimeError, match="no CUDA device 0"):
        _core.gpu_put(x, 0)
    with pytest.raises(RuntimeError, match="no CUDA device 0"):
        _core.gpu_device_info(0)


# -- on a GPU ------------------------------------------------------------------


def gpu_vs_cpu(f, *args, rtol=None, atol=1e-6):
    cj = jax.make_jaxpr(f)(*args)
    bufs = [_core.gpu_put(jnp.asarray(a), 0) for a in args]
    outs = _core.gpu_run(cj._handle, bufs, 0)
    with jax.default_device(jax.devices("cpu")[0]):  # the reference on the CPU
        want = jax.jit(f)(*args)
    want = want if isinstance(want, (tuple, list)) else [want]
    assert len(outs) == len(want)
    for g, w in zip(outs, want):
        w = np.asarray(w)
        g = np.asarray(g.to_host())
        assert g.shape == w.shape and g.dtype == w.dtype
        tol = rtol if rtol is not None else RTOL.get(w.dtype, 0)
        np.testing.assert_allclose(g, w, rtol=tol, atol=atol if tol else 0)


@needs_gpu
def test_gpu_device_info():
    info = _core.gpu_device_info(0)
    assert info["memory_bytes"] > 0 and len(info["compute_capability"]) == 2


@needs_gpu
def test_gpu_put_roundtrip_every_dtype():
    for dt in ("bool", "int8", "int32", "uint32", "int64", "float16", "float32", "float64"):
        a = (rng(1).standard_normal((3, 7)) * 10).astype(dt)
        buf = _core.gpu_put(jnp.asarray(a), 0)
        assert buf.shape == (3, 7) and buf.ordinal == 0
        np.testing.assert_array_equal(np.asarray(buf.to_host()), np.asarray(jnp.asarray(a)))


@needs_gpu
def test_gpu_fused_elementwise():
    x = rng(2).standard_normal((1000, 37)).astype(np.float32)
    gpu_vs_cpu(lambda x: jnp.tanh(x * 2.0 + 1.0) * jnp.sin(x) - jnp.exp(-x * x), x)
    gpu_vs_cpu(lambda x: jnp.where(x > 0, jnp.sqrt(jnp.abs(x)), x ** 3), x)


@needs_gpu
def test_gpu_matmul_and_batched():
    a = rng(3).standard_normal((64, 48)).astype(np.float32)
    b = rng(4).standard_normal((48, 80)).astype(np.float32)
    gpu_vs_cpu(lambda a, b: a @ b, a, b, rtol=1e-4, atol=1e-4)
    gpu_vs_cpu(lambda a, b: a.T @ b.T.T, a.T.copy(), b, rtol=1e-4, atol=1e-4)
    p = rng(5).standard_normal((5, 16, 8)).astype(np.float32)
    q = rng(6).standard_normal((5, 8, 12)).astype(np.float32)
    gpu_vs_cpu(lambda p, q: jnp.einsum("bij,bjk->bik", p, q), p, q, rtol=1e-4, atol=1e-4)


@needs_gpu
def test_gpu_reductions_and_cumsum():
    x = rng(7).standard_normal((33, 17, 5)).astype(np.float32)
    gpu_vs_cpu(lambda x: jnp.sum(x, axis=(0, 2)), x, rtol=1e-4, atol=1e-4)
    gpu_vs_cpu(lambda x: (jnp.max(x, axis=1), jnp.min(x), jnp.prod(x[:3, :3, 0])), x)
    gpu_vs_cpu(lambda x: jnp.cumsum(x, axis=1), x, rtol=1e-4, atol=1e-4)


@needs_gpu
def test_gpu_scan():
    x = rng(8).standard_normal((20, 4)).astype(np.float32)

    def f(x):
        def body(c, xi):
            c = jnp.tanh(c * 0.5 + xi)
            return c, c.sum()

        return lax.scan(body, jnp.zeros(4, np.float32), x)

    gpu_vs_cpu(f, x, rtol=1e-5)


@needs_gpu
def test_gpu_while_loop_keeps_carries_on_device():
    x = rng(10).standard_normal((6, 5)).astype(np.float32)

    def f(x):
        def body(ic):
            i, c = ic
            return i + 1, jnp.sin(c) * 1.5 + i

        return lax.while_loop(lambda ic: ic[0] < 7, body, (0, x))

    gpu_vs_cpu(f, x)


@needs_gpu
def test_gpu_mlp_step():
    r = rng(9)
    w1 = r.standard_normal((8, 16)).astype(np.float32) * 0.3
    w2 = r.standard_normal((16, 1)).astype(np.float32) * 0.3
    x = r.standard_normal((32, 8)).astype(np.float32)
    y = r.standard_normal((32, 1)).astype(np.float32)

    def loss(w1, w2, x, y):
        return jnp.mean((jnp.tanh(x @ w1) @ w2 - y) ** 2)

    def step(w1, w2, x, y):
        g1, g2 = jax.grad(loss, argnums=(0, 1))(w1, w2, x, y)
        return w1 - 0.1 * g1, w2 - 0.1 * g2

    gpu_vs_cpu(step, w1, w2, x, y, rtol=1e-4, atol=1e-5)


@needs_gpu
def test_gpu_random_bits_match_cpu_exactly():
    key = jax.random.PRNGKey(42)
    cj = jax.make_jaxpr(lambda k: jax.random.bits(k, (1000,)))(key)
    (out,) = _core.gpu_run(cj._handle, [_core.gpu_put(jnp.asarray(key), 0)], 0)
    np.testing.assert_array_equal(np.asarray(out.to_host()), np.asarray(jax.random.bits(key, (1000,))))


@needs_gpu
def test_gpu_cond_switch_and_fori():
    x = rng(11).standard_normal((7, 3)).astype(np.float32)
    for k in (0, 1, 2, 5):
        gpu_vs_cpu(lambda x, k: lax.switch(k, [jnp.sin, jnp.cos, lambda v: v * 2.0], x), x, np.int32(k))
    gpu_vs_cpu(lambda x: lax.fori_loop(0, 4, lambda i, c: c * 0.5 + i, x), x)


@needs_gpu
def test_gpu_gather_scatter_and_their_gradients():
    table = rng(12).standard_normal((50, 8)).astype(np.float32)
    idx = np.array([3, 7, 3, 49, 0, 7], np.int32)
    gpu_vs_cpu(lambda t, i: t[i], table, idx)
    gpu_vs_cpu(lambda t, i: jax.grad(lambda t: jnp.sum(jnp.tanh(t[i]) ** 2))(t), table, idx,
               rtol=1e-5)
    gpu_vs_cpu(lambda t, i: t.at[i].set(0.0).at[i, 2].add(5.0), table, idx)
    gpu_vs_cpu(lambda t, i: jnp.take_along_axis(t, i[:, None] % 8, axis=1), table[:6], idx)


@needs_gpu
def test_gpu_half_precision():
    x = rng(13).standard_normal((300, 7)).astype(np.float32)
    for dt in (np.float16, jnp.bfloat16):
        tol = 1e-2 if dt is np.float16 else 8e-2
        xh = x.astype(dt)
        gpu_vs_cpu(lambda v: jnp.tanh(v * 2.0) * jnp.sin(v), xh, rtol=tol, atol=tol)
        gpu_vs_cpu(lambda v: (jnp.sum(v, axis=0), jnp.max(v), jnp.cumsum(v, axis=1)), xh,
                   rtol=tol, atol=tol)
        gpu_vs_cpu(lambda v: v.astype(np.float32) * 3.0, xh)


@needs_gpu
def test_gpu_repeated_runs_are_bit_identical():
    x = rng(14).standard_normal((513, 129)).astype(np.float32)
    f = jax.jit(lambda x: (jnp.sum(jnp.tanh(x) * x, axis=0), x @ x.T, jnp.cumsum(x, axis=0)))
    g = jax.device_put(x, jax.devices("gpu")[0])
    first = [np.asarray(o) for o in f(g)]
    for _ in range(3):
        for a, b in zip(first, f(g)):
            np.testing.assert_array_equal(a, np.asarray(b))


@needs_gpu
def test_gpu_eager_ops_stay_on_the_device():
    from microjax_rs._devices import GpuArray

    x = rng(15).standard_normal((64, 32)).astype(np.float32)
    g = jax.device_put(x, jax.devices("gpu")[0])
    out = jax.nn.softmax(jnp.tanh(g) @ g.T, axis=-1)[::2].sum(axis=0)
    assert isinstance(out, GpuArray)
    t = np.tanh(x) @ x.T
    e = np.exp(t - t.max(axis=-1, keepdims=True))
    want = (e / e.sum(axis=-1, keepdims=True))[::2].sum(axis=0)
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-4, atol=1e-5)


@needs_gpu
def test_gpu_block_until_ready_waits_without_copying():
    x = rng(16).standard_normal((512, 512)).astype(np.float32)
    g = jax.device_put(x, jax.devices("gpu")[0])
    out = jax.jit(lambda a: jnp.tanh(a @ a) + 1.0)(g)
    assert out.block_until_ready() is out
    assert jax.block_until_ready([out]) == [out]
    np.testing.assert_allclose(np.asarray(out), np.tanh(x @ x) + 1.0, rtol=1e-4, atol=1e-4)
    out.delete()
    with pytest.raises(RuntimeError, match="deleted"):
        out.block_until_ready()


def _collectives(comm):
    """A program of every device collective between processes over `comm`
    (bound directly, as a multi-process shard_map binds them)."""
    from microjax_rs._src import spmd_collectives as sc

    def f(x):
        return (sc.process_allreduce_p.bind(x, op="sum", comm=comm, what="psum"),
                sc.process_allreduce_p.bind(x > 2, op="max", comm=comm, what="pmax"),
                sc.process_allreduce_p.bind(x.astype(jnp.int32), op="min", comm=comm, what="pmin"),
                sc.process_allgather_p.bind(x.astype(jnp.float16), comm=comm, processes=1,
                                            what="all_gather"),
                sc.process_broadcast_p.bind(x * (1 + 2j), comm=comm, root=0, what="broadcast"))
    return f


def test_collectives_between_processes_plan_as_device_collectives():
    from microjax_rs._src import spmd_collectives as sc
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    steps = _core.cuda_host_steps(jax.make_jaxpr(_collectives(3))(x)._handle)
    assert not any(s.startswith("process_") for s in steps), steps
    # A half-float sum is reduced in float32 on the host, as without a GPU.
    half = jax.make_jaxpr(lambda x: sc.process_allreduce_p.bind(
        x.astype(jnp.float16), op="sum", comm=3, what="psum"))(x)
    assert [s for s in _core.cuda_host_steps(half._handle) if s.startswith("process_")] == \
        ["process_allreduce: a half-float reduction (accumulated in float32 as on the host)"]


@needs_gpu
def test_nccl_collectives_of_one_process_run_on_the_gpu():
    if not _core.nccl_available():
        pytest.skip("the NCCL library (libnccl.so.2) does not load")
    comm = 4000  # names this NCCL communicator (no MPI communicator is needed)
    _core.register_nccl_communicator(comm, 0, _core.nccl_unique_id(), 0, 1)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    outs = jax.jit(_collectives(comm))(jax.device_put(x, jax.devices("gpu")[0]))
    assert all(o.device.platform == "gpu" for o in outs)
    s, m, mn, g, b = (np.asarray(o) for o in outs)
    # One process: each collective is the identity (the gather adds an axis).
    np.testing.assert_array_equal(s, x)
    np.testing.assert_array_equal(m, x > 2)
    np.testing.assert_array_equal(mn, x.astype(np.int32))
    assert g.dtype == np.float16 and g.shape == (1, 2, 3)
    np.testing.assert_array_equal(g[0], x.astype(np.float16))
    np.testing.assert_array_equal(b, x * (1 + 2j))
