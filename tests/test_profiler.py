"""jax.profiler: trace / start_trace / stop_trace write a Chrome trace-event
file in JAX's layout (log_dir/plugins/profile/<run>/<host>.trace.json.gz)
with events for jit compiles, program runs, eager operations and the
user's annotations; JAX's errors for a second start and a stop without a
trace (recorded from JAX 0.10.2)."""
import gzip
import inspect
import json
import pathlib
import socket
import threading

import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import profiler
from microjax_rs._src import profiling


def _load(log_dir, name="*.trace.json.gz"):
    files = sorted(pathlib.Path(log_dir).glob(f"plugins/profile/*/{name}"))
    assert len(files) == 1, files
    with gzip.open(files[0], "rt") as f:
        return files[0], json.load(f)


def _complete(doc):
    return [e for e in doc["traceEvents"] if e["ph"] == "X"]


def _named(doc, name):
    return [e for e in _complete(doc) if e["name"] == name]


def test_signatures_match_jax():
    # recorded from JAX 0.10.2 (inspect.signature)
    assert list(inspect.signature(profiler.trace).parameters) == [
        "log_dir", "create_perfetto_link", "create_perfetto_trace", "profiler_options"]
    assert list(inspect.signature(profiler.start_trace).parameters) == [
        "log_dir", "create_perfetto_link", "create_perfetto_trace", "profiler_options"]
    assert list(inspect.signature(profiler.stop_trace).parameters) == []
    assert list(inspect.signature(profiler.annotate_function).parameters) == ["func", "name", "decorator_kwargs"]
    assert jax.profiler is profiler


def test_stop_without_a_trace_raises_runtime_error():
    with pytest.raises(RuntimeError, match="^No profile started$"):
        jax.profiler.stop_trace()


def test_second_start_raises_and_the_first_trace_still_stops(tmp_path):
    jax.profiler.start_trace(tmp_path / "a")
    try:
        with pytest.raises(RuntimeError, match=r"^Profile has already been started\. Only one profile may be "
                                               r"run at a time\.$"):
            jax.profiler.start_trace(tmp_path / "b")
    finally:
        assert jax.profiler.stop_trace() is None
    path, doc = _load(tmp_path / "a")
    assert not (tmp_path / "b").exists()
    with pytest.raises(RuntimeError, match="No profile started"):
        jax.profiler.stop_trace()


def test_trace_file_layout_and_format(tmp_path):
    with jax.profiler.trace(str(tmp_path)):
        jnp.sin(jnp.ones(4))
    path, doc = _load(tmp_path)
    assert path.name == f"{socket.gethostname()}.trace.json.gz"
    run = path.parent.name  # YYYY_MM_DD_HH_MM_SS, as JAX names a run
    assert len(run) == 19 and run.replace("_", "").isdigit() and run.count("_") == 5
    assert doc["displayTimeUnit"] == "ns" and doc["metadata"] == {"highres-ticks": True}
    meta = [e for e in doc["traceEvents"] if e["ph"] == "M"]
    assert {"name": "process_name", "ph": "M", "pid": meta[0]["pid"], "args": {"name": "/host:CPU"}} in meta
    names = {e["args"]["name"] for e in meta if e["name"] == "thread_name"}
    assert names == {"python"}
    for e in _complete(doc):
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int)
        assert e["ts"] >= 0 and e["dur"] >= 0


def test_jit_compile_execute_and_plan_events(tmp_path):
    # On the CPU executor, whose plan build is an event (also when a GPU,
    # or the suite's stand-in GPU, is the default device).
    f = jax.jit(lambda x: jnp.sin(x) * 2.0 + 1.0)
    with jax.default_device(jax.devices("cpu")[0]):
        x = jnp.arange(8, dtype=jnp.float32)
        with jax.profiler.trace(tmp_path):
            first = f(x)
            second = f(x)
    expect = np.sin(np.arange(8, dtype=np.float32)) * 2 + 1
    np.testing.assert_allclose(first, expect, rtol=1e-6)
    np.testing.assert_allclose(second, expect, rtol=1e-6)
    _, doc = _load(tmp_path)
    calls = _named(doc, "PjitFunction(<lambda>)")
    assert len(calls) == 2
    (compile_ev,) = _named(doc, "jit_compile(<lambda>)")
    assert compile_ev["cat"] == "compile" and compile_ev["args"] == {"shapes": "f32[8]"}
    (tr,) = _named(doc, "trace_to_jaxpr(<lambda>)")
    (lo,) = _named(doc, "lower(<lambda>)")
    (plan,) = _named(doc, "build_plan(<lambda>)")  # built once, on the compiling call
    runs = _named(doc, "execute(<lambda>)")
    assert len(runs) == 2

    def inside(inner, outer):
        return outer["ts"] <= inner["ts"] and inner["ts"] + inner["dur"] <= outer["ts"] + outer["dur"] + 1e-3

    # the compile is part of the first call only; tracing comes before lowering
    assert inside(compile_ev, calls[0]) and not inside(compile_ev, calls[1])
    assert inside(tr, compile_ev) and inside(lo, compile_ev) and tr["ts"] <= lo["ts"]
    assert inside(runs[0], calls[0]) and inside(runs[1], calls[1]) and inside(plan, calls[0])
    assert all(e["dur"] > 0 for e in (compile_ev, tr, runs[0], calls[0], calls[1]))


def test_eager_operations_are_recorded(tmp_path):
    a = jnp.ones(8, dtype=jnp.float32)
    with jax.profiler.trace(tmp_path):
        b = a + a
        c = jnp.sin(a)
        d = jnp.exp(b)
    np.testing.assert_allclose(b, 2 * np.ones(8))
    np.testing.assert_allclose(c, np.sin(np.ones(8)), rtol=1e-6)
    np.testing.assert_allclose(d, np.exp(2 * np.ones(8)), rtol=1e-6)
    _, doc = _load(tmp_path)
    eager = [e["name"] for e in _complete(doc) if e["cat"] == "eager"]
    assert eager == ["add", "sin", "exp"]


def test_annotations(tmp_path):
    @jax.profiler.annotate_function
    def scaled(x):
        """Doubles."""
        return x * 2

    @jax.profiler.annotate_function
    def other(x):
        return x

    with jax.profiler.trace(tmp_path):
        with jax.profiler.TraceAnnotation("outer", foo=1, bar="x"):
            for step in range(3):
                with jax.profiler.StepTraceAnnotation("train", step_num=step):
                    assert scaled(step) == 2 * step
        jax.profiler.annotate_function(other, name="renamed", tag=7)(1)
    assert scaled.__name__ == "scaled" and scaled.__doc__ == "Doubles."
    _, doc = _load(tmp_path)
    (outer,) = _named(doc, "outer")
    assert outer["args"] == {"foo": "1", "bar": "x"}  # JAX writes annotation args as strings
    steps = _named(doc, "train")
    assert [s["args"] for s in steps] == [{"step_num": str(i)} for i in range(3)]
    qual = "test_annotations.<locals>.scaled"
    assert len(_named(doc, qual)) == 3 and "args" not in _named(doc, qual)[0]
    assert _named(doc, "renamed")[0]["args"] == {"tag": "7"}
    for s in steps:
        assert outer["ts"] <= s["ts"] and s["ts"] + s["dur"] <= outer["ts"] + outer["dur"]


def test_annotations_without_a_trace_record_nothing(tmp_path):
    with jax.profiler.TraceAnnotation("idle"):
        pass
    assert jax.profiler.annotate_function(lambda: 3)() == 3
    with jax.profiler.trace(tmp_path):
        pass
    _, doc = _load(tmp_path)
    assert _complete(doc) == []


def test_trace_stops_when_the_body_raises(tmp_path):
    with pytest.raises(ZeroDivisionError):
        with jax.profiler.trace(tmp_path / "one"):
            with jax.profiler.TraceAnnotation("before"):
                pass
            1 / 0
    assert not profiling.ACTIVE
    _, doc = _load(tmp_path / "one")
    assert len(_named(doc, "before")) == 1
    with jax.profiler.trace(tmp_path / "two"):  # a new trace can start
        pass


def test_no_events_after_the_trace_stops(tmp_path):
    f = jax.jit(lambda x: x + 1)
    x = jnp.ones(3)
    with jax.profiler.trace(tmp_path):
        f(x)
    assert not profiling.ACTIVE
    f(x)
    jnp.sin(x)
    assert profiling._events == []
    _, doc = _load(tmp_path)
    assert len(_named(doc, "PjitFunction(<lambda>)")) == 1


def test_debug_nans_toggled_during_a_trace_keeps_recording(tmp_path):
    a = jnp.ones(4)
    with jax.profiler.trace(tmp_path):
        jax.config.update("jax_debug_nans", True)
        jax.config.update("jax_debug_nans", False)
        jnp.cos(a)
    _, doc = _load(tmp_path)
    assert [e["name"] for e in _complete(doc) if e["cat"] == "eager"] == ["cos"]


def test_perfetto_trace_file(tmp_path, capsys):
    with jax.profiler.trace(tmp_path, create_perfetto_trace=True):
        jnp.sin(jnp.ones(2))
    _, doc = _load(tmp_path)
    _, perfetto = _load(tmp_path, "perfetto_trace.json.gz")
    assert "metadata" not in perfetto and perfetto["traceEvents"] == doc["traceEvents"]
    assert capsys.readouterr().out == ""
    with jax.profiler.trace(tmp_path / "link", create_perfetto_link=True):
        pass
    assert "perfetto_trace.json.gz" in capsys.readouterr().out
    _load(tmp_path / "link", "perfetto_trace.json.gz")


def test_events_of_other_threads_carry_their_thread(tmp_path):
    def work():
        with jax.profiler.TraceAnnotation("in-thread"):
            jnp.sin(jnp.ones(2))

    with jax.profiler.trace(tmp_path):
        t = threading.Thread(target=work, name="worker-thread")
        t.start()
        t.join()
        with jax.profiler.TraceAnnotation("in-main"):
            pass
    _, doc = _load(tmp_path)
    (a,) = _named(doc, "in-thread")
    (b,) = _named(doc, "in-main")
    assert a["tid"] != b["tid"]
    names = {e["tid"]: e["args"]["name"] for e in doc["traceEvents"] if e.get("name") == "thread_name"}
    assert names[a["tid"]] == "worker-thread" and names[b["tid"]] == "python"


def test_aot_compiled_call_is_recorded(tmp_path):
    def g(x):
        return x * 3.0

    with jax.profiler.trace(tmp_path):
        compiled = jax.jit(g).lower(jnp.ones(3)).compile()
        out = compiled(jnp.ones(3))
    np.testing.assert_allclose(out, 3 * np.ones(3))
    _, doc = _load(tmp_path)
    assert len(_named(doc, "build_plan(g)")) == 1 and len(_named(doc, "execute(g)")) == 1


def test_log_dir_is_named_by_its_str(tmp_path, monkeypatch):
    # JAX 0.10.2 takes str(log_dir): start_trace(3) writes under ./3
    monkeypatch.chdir(tmp_path)
    jax.profiler.start_trace(3)
    jax.profiler.stop_trace()
    _load(tmp_path / "3")
