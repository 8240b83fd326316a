"""Stopping runs: Ctrl-C (SIGINT) during a jitted `while_loop`, a jitted
`fori_loop` of 1024x1024 matmuls and an eager `while_loop` raises
`KeyboardInterrupt` promptly and leaves the process usable; another signal
handler's exception stops a run as that exception; exported programs run
under `export.Limits` (a loop budget by default, an optional timeout).

Each signal scenario runs in a fresh interpreter with a deadline, so a run
that ignores the signal fails the test instead of stalling the suite."""
import os
import select
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import export, lax

# What these tests check does not depend on the default device (conftest.py).
pytestmark = pytest.mark.device_independent

# The child prints READY just before the endless loop starts, then
# INTERRUPTED <seconds> when the KeyboardInterrupt arrives, then checks that
# a following computation gives correct values.
CHILD = textwrap.dedent("""
    import signal, sys, time
    # Python's own Ctrl-C handler even where the parent ignores SIGINT (a
    # background job of a non-interactive shell inherits SIG_IGN).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    import numpy as np
    import microjax_rs as jax
    import microjax_rs.numpy as jnp
    from microjax_rs import lax

    kind = sys.argv[1]
    endless = lambda v: v >= 0  # v + 1 stops growing at 2**24 in float32
    if kind == "jit_while":
        run = lambda: jax.jit(lambda x: lax.while_loop(endless, lambda v: v + 1.0, x))(jnp.float32(0))
    elif kind == "eager_while":
        run = lambda: lax.while_loop(endless, lambda v: v + 1.0, jnp.float32(0))
    elif kind == "jit_fori_matmul":
        a = jnp.ones((1024, 1024), jnp.float32)
        f = jax.jit(lambda a: lax.fori_loop(0, 10**9, lambda i, m: (m @ a) * (1.0 / 1024), a))
        run = lambda: f(a)
    else:
        raise SystemExit(f"unknown kind {kind}")
    print("READY", flush=True)
    try:
        run()
    except KeyboardInterrupt:
        print("INTERRUPTED", flush=True)
    else:
        raise SystemExit("the endless loop returned")
    # The process is usable: the same kind of work gives correct values.
    got = jax.jit(lambda x: lax.while_loop(lambda v: v < 10, lambda v: v + 1.0, x))(jnp.float32(0))
    assert float(got) == 10.0, got
    got = lax.while_loop(lambda v: v < 7, lambda v: v + 2, 1)
    assert int(got) == 7, got
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1024, 1024)).astype(np.float32)
    got = np.asarray(jax.jit(lambda m: lax.fori_loop(0, 2, lambda i, m: m @ m * 0.01, m))(x))
    want = (x @ x * 0.01) @ (x @ x * 0.01) * 0.01
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)
    print("OK", flush=True)
""")


def _read_line(proc, deadline):
    """The child's next stdout line, or None once `deadline` has passed."""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
        if ready:
            return proc.stdout.readline().strip()
    return None


@pytest.mark.parametrize("kind", ["jit_while", "jit_fori_matmul", "eager_while"])
def test_sigint_interrupts_a_running_loop(tmp_path, kind):
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    env = dict(os.environ, RAYON_NUM_THREADS="2")
    env.pop("MICROJAX_FAKE_GPU", None)
    proc = subprocess.Popen([sys.executable, str(script), kind], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, bufsize=1)
    try:
        assert _read_line(proc, time.monotonic() + 60) == "READY"
        time.sleep(0.5)  # inside the loop (tracing a loop takes milliseconds)
        assert proc.poll() is None, "the endless loop ended"
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        line = _read_line(proc, sent + 10)
        latency = time.monotonic() - sent
        assert line == "INTERRUPTED", f"no KeyboardInterrupt within 10 s (got {line!r})"
        # About 20 ms of polling plus one loop step; generous for loaded CI.
        assert latency < 3.0, f"KeyboardInterrupt took {latency:.2f} s"
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"the child hung after the interrupt:\n{out}\n{err}")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, out + err
    assert out.strip().endswith("OK"), out + err


def test_another_signal_handlers_exception_stops_the_run(tmp_path):
    script = tmp_path / "alarm.py"
    script.write_text(textwrap.dedent("""
        import signal, time
        import microjax_rs as jax
        import microjax_rs.numpy as jnp
        from microjax_rs import lax

        class Alarm(Exception):
            pass

        def on_alarm(signum, frame):
            raise Alarm()

        signal.signal(signal.SIGALRM, on_alarm)
        f = jax.jit(lambda x: lax.while_loop(lambda v: v >= 0, lambda v: v + 1.0, x))
        signal.setitimer(signal.ITIMER_REAL, 0.3)
        start = time.monotonic()
        try:
            f(jnp.float32(0))
        except Alarm:
            print("ALARM", time.monotonic() - start, flush=True)
        # A handler that returns normally does not stop a run.
        signal.signal(signal.SIGALRM, lambda s, f: None)
        signal.setitimer(signal.ITIMER_REAL, 0.05)
        g = jax.jit(lambda x: lax.while_loop(lambda v: v < 1e6, lambda v: v + 1.0, x))
        print("DONE", float(g(jnp.float32(0))), flush=True)
    """))
    env = dict(os.environ)
    env.pop("MICROJAX_FAKE_GPU", None)
    try:
        proc = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                              timeout=60)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"the run ignored the alarm:\n{e.stdout}\n{e.stderr}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.split("\n")
    assert lines[0].startswith("ALARM"), proc.stdout
    assert float(lines[0].split()[1]) < 5.0
    assert lines[1] == "DONE 1000000.0", proc.stdout


def _endless_scan(length):
    return jax.jit(lambda x: lax.scan(lambda c, _: (c + 1.0, None), x, None, length=length)[0])


def test_loaded_programs_stop_unbounded_loops_under_default_limits():
    # A loaded program runs under the default loop budget (2**24
    # iterations): a carry-only scan of 2**31 steps is refused before its
    # first step; an endless while stops once its budget is spent.
    x = jnp.float32(0)
    exp = export.deserialize(export.export(_endless_scan(2**31))(x).serialize())
    assert exp.limits == export.Limits()
    assert exp.limits.max_loop_iterations == 2**24
    with pytest.raises(ValueError, match="loop iterations"):
        exp.call(x)
    endless = jax.jit(lambda x: lax.while_loop(lambda v: v >= 0, lambda v: v + 1.0, x))
    exp = export.deserialize(export.export(endless)(x).serialize(),
                             limits=export.Limits(max_loop_iterations=1000))
    with pytest.raises(ValueError, match="loop iterations"):
        exp.call(x)
    # Raised limits: a long scan runs to the end.
    exp = export.deserialize(export.export(_endless_scan(100))(x).serialize(),
                             limits=export.Limits(max_loop_iterations=100))
    assert float(exp.call(x)) == 100.0
    exp.limits = export.Limits(max_loop_iterations=99)
    with pytest.raises(ValueError, match="loop iterations"):
        exp.call(x)


def test_the_step_budget_bounds_an_exported_call():
    # max_steps counts every equation executed, loop iterations included:
    # a budget that admits 100 scan steps stops 1000 of them.
    x = jnp.float32(0)
    assert export.Limits().max_steps == 2**28
    short = export.export(_endless_scan(100))(x)
    steps = next(s for s in range(1, 100_000)
                 if _runs(short, export.Limits(max_steps=s), x))
    assert steps > 100
    assert float(short.call(x)) == 100.0
    long = export.deserialize(export.export(_endless_scan(1000))(x).serialize(),
                              limits=export.Limits(max_steps=steps))
    with pytest.raises(ValueError, match="steps"):
        long.call(x)
    long.limits = export.Limits(max_steps=20 * steps)
    assert float(long.call(x)) == 1000.0


def _runs(exp, limits, x):
    exp.limits = limits
    try:
        exp.call(x)
        return True
    except ValueError:
        return False


def test_pickled_programs_keep_their_limits():
    import pickle

    x = jnp.float32(0)
    limits = export.Limits(max_loop_iterations=2**30, timeout=12.5, max_bytes=2**40,
                           max_depth=20, max_steps=2**33)
    assert pickle.loads(pickle.dumps(limits)) == limits
    exp = export.deserialize(export.export(_endless_scan(100))(x).serialize(), limits=limits)
    back = pickle.loads(pickle.dumps(exp))
    assert back.limits == limits
    assert float(back.call(x)) == 100.0
    # A tight limit travels too: the unpickled copy refuses what the original refuses.
    exp.limits = export.Limits(max_loop_iterations=10)
    back = pickle.loads(pickle.dumps(exp))
    with pytest.raises(ValueError, match="loop iterations"):
        back.call(x)


def test_a_timeout_stops_an_exported_call():
    x = jnp.float32(0)
    exp = export.export(_endless_scan(2**40))(x)
    exp.limits = export.Limits(max_loop_iterations=2**62, timeout=0.1)
    # 2**40 steps: only the deadline makes this call return.
    with pytest.raises(TimeoutError, match="deadline"):
        exp.call(x)
    # A call that finishes in time gives its value; the deadline counts per call.
    exp = export.deserialize(export.export(_endless_scan(1000))(x).serialize(),
                             limits=export.Limits(timeout=30))
    assert float(exp.call(x)) == 1000.0
    assert float(exp.call(x)) == 1000.0
    # Under jit the program is part of the enclosing computation.
    assert float(jax.jit(exp.call)(x)) == 1000.0


def test_limits_are_checked():
    with pytest.raises(ValueError):
        export.Limits(max_loop_iterations=-1)
    with pytest.raises(ValueError):
        export.Limits(timeout=float("nan"))
    with pytest.raises(ValueError):
        export.Limits(max_depth=True)
    with pytest.raises(ValueError):
        export.Limits(max_steps=-5)
    with pytest.raises(TypeError):
        export.deserialize(b"", limits={"timeout": 1})
    # The static bound is checked at load against the given limits.
    x = jnp.ones(1000, jnp.float32)
    data = export.export(jax.jit(lambda v: v * 2))(x).serialize()
    with pytest.raises(ValueError, match="bytes"):
        export.deserialize(data, limits=export.Limits(max_bytes=100))
    np.testing.assert_array_equal(np.asarray(export.deserialize(data).call(x)), np.full(1000, 2.0))
