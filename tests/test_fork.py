"""Processes made after the parent ran threaded kernels: `os.fork()` and
the `fork` / `forkserver` / `spawn` start methods of `multiprocessing`.

The parent runs every kind of parallel kernel first (so its thread pool
exists with running workers), then the child runs them again. Before the
core owned its kernel pool, a forked child waited forever on the parent's
rayon workers, which do not exist in the child. Each scenario runs in a
fresh interpreter with a deadline, so a hang fails the test instead of
stalling the suite."""
import os
import subprocess
import sys
import textwrap

import pytest

# What these tests check does not depend on the default device (conftest.py).
pytestmark = pytest.mark.device_independent

# Kernels large enough to split over threads: GEMM, a fused elementwise
# group, a batched FFT, a faer factorization, a fresh jit compile. Each
# returns a float checked against NumPy in the same process.
WORKLOAD = textwrap.dedent("""
    import numpy as np
    import microjax_rs as jax
    import microjax_rs.numpy as jnp

    def workload(seed):
        rng = np.random.default_rng(seed)
        a = rng.standard_normal((512, 512)).astype(np.float32)
        x = rng.standard_normal(1 << 21).astype(np.float32)
        z = (rng.standard_normal((64, 1024)) + 1j * rng.standard_normal((64, 1024))).astype(np.complex64)
        m = rng.standard_normal((384, 384)) + 384 * np.eye(384)
        b = rng.standard_normal(384)
        got = [
            float(jnp.sum(jnp.asarray(a) @ jnp.asarray(a))),
            float(jnp.sum(jax.jit(lambda v: jnp.tanh(v) * 2.0 + 1.0)(x))),
            float(jnp.sum(jnp.abs(jnp.fft.fft(jnp.asarray(z), axis=-1)))),
            float(jnp.sum(jnp.linalg.solve(jnp.asarray(m, dtype=jnp.float32), jnp.asarray(b, dtype=jnp.float32)))),
            float(jax.jit(lambda v, s=seed: jnp.sum(v * (s + 1)))(jnp.ones(1 << 20))),
            float(jnp.sum(jnp.linalg.eigh(jnp.asarray(m[:16, :16] + m[:16, :16].T, dtype=jnp.float32))[0])),
        ]
        want = [
            float(np.sum(a.astype(np.float64) @ a.astype(np.float64))),
            float(np.sum(np.tanh(x.astype(np.float64)) * 2.0 + 1.0)),
            float(np.sum(np.abs(np.fft.fft(z.astype(np.complex128), axis=-1)))),
            float(np.sum(np.linalg.solve(m, b))),
            float((1 << 20) * (seed + 1)),
            float(np.trace(m[:16, :16] + m[:16, :16].T)),
        ]
        np.testing.assert_allclose(got, want, rtol=2e-3)
        return seed
""")


def _run(tmp_path, main, timeout=180):
    (tmp_path / "fork_workload.py").write_text(WORKLOAD)
    (tmp_path / "scenario.py").write_text(textwrap.dedent(main))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env.get("PYTHONPATH", "")])
    env.setdefault("RAYON_NUM_THREADS", "2")
    try:
        proc = subprocess.run([sys.executable, str(tmp_path / "scenario.py")], env=env,
                              capture_output=True, text=True, timeout=timeout, cwd=tmp_path)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"the scenario hung (no exit within {timeout} s); output so far:\n"
                    f"{e.stdout}\n{e.stderr}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_os_fork_after_threaded_kernels(tmp_path):
    out = _run(tmp_path, """
        import os, time
        from fork_workload import workload
        workload(0)
        pid = os.fork()
        if pid == 0:
            try:
                workload(1)
                os._exit(0)
            except BaseException as e:
                print("child failed:", repr(e), flush=True)
                os._exit(3)
        deadline = time.monotonic() + 120
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() > deadline:
                os.kill(pid, 9)
                raise SystemExit("the forked child hung")
            time.sleep(0.05)
        assert os.waitstatus_to_exitcode(status) == 0, status
        workload(2)  # the parent still runs after its child
        print("ok")
    """)
    assert out.strip().endswith("ok")


def test_fork_in_child_of_child(tmp_path):
    # A child that forks again rebuilds its pool once more.
    out = _run(tmp_path, """
        import os
        from fork_workload import workload
        workload(0)
        pid = os.fork()
        if pid == 0:
            workload(1)
            pid2 = os.fork()
            if pid2 == 0:
                workload(2)
                os._exit(0)
            _, st = os.waitpid(pid2, 0)
            os._exit(os.waitstatus_to_exitcode(st))
        _, st = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(st) == 0, st
        print("ok")
    """)
    assert out.strip().endswith("ok")


@pytest.mark.parametrize("method", ["fork", "forkserver", "spawn"])
def test_multiprocessing_pool(tmp_path, method):
    out = _run(tmp_path, f"""
        import multiprocessing as mp
        import warnings
        from fork_workload import workload

        if __name__ == "__main__":
            workload(0)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)  # fork with threads
                ctx = mp.get_context({method!r})
                with ctx.Pool(2) as pool:
                    got = pool.map_async(workload, [1, 2, 3]).get(timeout=150)
            assert got == [1, 2, 3], got
            print("ok")
    """)
    assert out.strip().endswith("ok")


def test_fork_while_another_thread_compiles(tmp_path):
    # A thread keeps making new programs (trace cache, compile cache, buffer
    # pool and staging all taken and released in a loop) while the main
    # thread forks again and again: each child computes right, in time.
    out = _run(tmp_path, """
        import os, threading, time
        import numpy as np
        import microjax_rs as jax
        import microjax_rs.numpy as jnp

        stop = threading.Event()
        made = [0]

        def hammer():
            k = 0
            while not stop.is_set():
                k += 1
                n = (k % 61) + 1
                f = jax.jit(lambda v, k=k: jnp.sin(v) * k + jnp.sum(v))
                f(jnp.ones((n,), jnp.float32))
                jax.grad(lambda v, k=k: jnp.sum(jnp.tanh(v) * k))(jnp.ones((n,), jnp.float32))
                if k % 50 == 0:
                    jax.clear_caches()
                made[0] = k

        t = threading.Thread(target=hammer, daemon=True)
        t.start()
        while made[0] < 5:
            time.sleep(0.01)
        x = np.linspace(-1.0, 1.0, 1000).astype(np.float32)
        for i in range(30):
            pid = os.fork()
            if pid == 0:
                try:
                    got = np.asarray(jax.jit(lambda v: jnp.tanh(v) * (i + 2.0) + 1.0)(jnp.asarray(x)))
                    np.testing.assert_allclose(got, np.tanh(x) * (i + 2.0) + 1.0, rtol=1e-5, atol=1e-6)
                    g = np.asarray(jax.grad(lambda v: jnp.sum(jnp.sin(v) * 3.0))(jnp.asarray(x)))
                    np.testing.assert_allclose(g, np.cos(x) * 3.0, rtol=1e-5, atol=1e-6)
                    os._exit(0)
                except BaseException as e:
                    print("child failed:", repr(e), flush=True)
                    os._exit(3)
            deadline = time.monotonic() + 60
            while True:
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    break
                if time.monotonic() > deadline:
                    os.kill(pid, 9)
                    raise SystemExit(f"forked child {i} hung")
                time.sleep(0.005)
            assert os.waitstatus_to_exitcode(status) == 0, (i, status)
        stop.set()
        t.join(timeout=60)
        assert made[0] > 5
        print("ok")
    """)
    assert out.strip().endswith("ok")
