"""jax.debug.breakpoint, jax.debug.log (and print's JAX 0.10.2 checks), and
tracer-leak checking (jax.checking_leaks / jax_check_tracer_leaks). The
debugger transcripts, log records, messages and exception types were
recorded from JAX 0.10.2."""
import io
import logging

import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import _debugger


class _Recorder:
    """A debugger backend that records the frames it is entered with."""

    def __init__(self):
        self.entries = []

    def __call__(self, frames, thread_id, **kwargs):
        self.entries.append(({k: v for k, v in frames[0].locals.items()}, thread_id, kwargs))


@pytest.fixture
def recorder():
    rec = _Recorder()
    _debugger.register_debugger("test-recorder", rec, -100)
    try:
        yield rec
    finally:
        del _debugger._debuggers["test-recorder"]


def _doubling(backend=None, **kwargs):
    def f(x):
        y = x * 2
        jax.debug.breakpoint(backend=backend, num_frames=1, **kwargs)
        return y
    return f


def test_breakpoint_enters_the_debugger_with_live_values_eagerly_and_under_jit(recorder):
    f = _doubling("test-recorder", note="k")
    x = jnp.asarray([0.0, 1.0, 2.0])
    for g in (f, jax.jit(f)):
        recorder.entries.clear()
        np.testing.assert_allclose(np.asarray(g(x)), np.asarray(x) * 2)
        [(local, thread_id, kwargs)] = recorder.entries
        np.testing.assert_allclose(np.asarray(local["y"]), [0.0, 2.0, 4.0])
        np.testing.assert_allclose(np.asarray(local["x"]), [0.0, 1.0, 2.0])
        assert isinstance(local["y"], jax.Array) and thread_id is None and kwargs == {"note": "k"}


def test_breakpoint_runs_per_member_under_vmap_and_on_primals_under_grad(recorder):
    f = _doubling("test-recorder")
    jax.vmap(f)(np.array([0.0, 1.0], np.float32))
    assert [float(e[0]["y"]) for e in recorder.entries] == [0.0, 2.0]
    recorder.entries.clear()
    g = jax.grad(lambda x: f(x).sum())(np.array([0.0, 1.0], np.float32))
    np.testing.assert_allclose(np.asarray(g), [2.0, 2.0])
    [(local, _, _)] = recorder.entries
    np.testing.assert_allclose(np.asarray(local["y"]), [0.0, 2.0])


def test_breakpoint_token_is_returned_and_orders_the_stop(recorder):
    def f(x):
        y = jnp.sin(x)
        y = jax.debug.breakpoint(backend="test-recorder", num_frames=1, token=y)
        return y + 1
    np.testing.assert_allclose(float(jax.jit(f)(0.5)), np.sin(0.5) + 1, rtol=1e-6)
    assert len(recorder.entries) == 1
    with pytest.raises(ValueError, match="`ordered` and `token` are mutually exclusive arguments."):
        jax.debug.breakpoint(ordered=True, token=1)


def test_unknown_backend_falls_back_to_the_default_cli():
    out = io.StringIO()
    jax.debug.breakpoint(backend="nope", stdin=io.StringIO("c\n"), stdout=out)
    assert out.getvalue() == "Entering jdb:\n(jdb) "


# recorded from JAX 0.10.2 (with this file's path, line and source substituted)
def _cli_transcript(path, source_lines, offset, line):
    src = source_lines[offset]
    shown = [("->  " if i == offset else "    ") + source_lines[i].rstrip("\n")
             for i in range(max(offset - 3, 0), min(offset + 3, len(source_lines)))]
    context = f"> {path}({line})\n" + "\n".join(shown) + "\n"
    return ("Entering jdb:\n(jdb) Array([0., 2., 4.], dtype=float32)\n(jdb) Array([0., 1., 2.], dtype=float32)\n"
            "(jdb) {'a': Array([0., 2., 4.], dtype=float32)}\n"
            f"(jdb) Traceback:\n  File \"{path}\", line {line}\n    {src.strip()}\n"
            f"(jdb) At topmost frame.\n{context}(jdb) {context}"
            "(jdb) *** NameError: name 'zz' is not defined\n(jdb) ")


@pytest.mark.parametrize("jit", [False, True])
def test_cli_debugger_transcript_matches_jax(jit):
    import inspect

    out = io.StringIO()
    commands = "p y\np x\npp {'a': y}\nw\nup\nl\nzz\nc\n"

    def f(x):
        y = x * 2
        jax.debug.breakpoint(stdin=io.StringIO(commands), stdout=out, num_frames=1)
        return y

    (jax.jit(f) if jit else f)(jnp.arange(3.0))
    lines, start = inspect.getsourcelines(f)
    source = "".join(lines).split("\n")
    assert out.getvalue() == _cli_transcript(__file__, source, 2, start + 2)


def test_cli_debugger_quit_exits():
    with pytest.raises(SystemExit):
        jax.debug.breakpoint(stdin=io.StringIO("q\n"), stdout=io.StringIO())


def test_debugger_registry_errors():
    with pytest.raises(ValueError, match='Debugger with name "cli" already registered.'):
        _debugger.register_debugger("cli", lambda *a, **k: None, 0)


# ------------------------------------------------------------ jax.debug.log / print


def _records(caplog):
    return [(r.name, r.levelname, r.getMessage(), r.filename) for r in caplog.records]


def test_log_emits_info_records_at_the_calling_line(caplog):
    caplog.set_level(logging.INFO, logger="microjax_rs.debug")
    jax.debug.log("hello {x} {}", 3, x=jnp.arange(2))
    line = __import__("inspect").currentframe().f_lineno - 1
    jax.jit(lambda x: jax.debug.log("x={x}", x=x))(jnp.ones(2))
    jax.vmap(lambda x: jax.debug.log("v={}", x))(jnp.arange(2))
    jax.debug.log("plain no placeholders")
    jax.debug.log(ordered=True)("two-call {}", 5)
    assert jax.grad(lambda x: (jax.debug.log("g={}", x), x * x)[1])(3.0) == 6.0
    # messages recorded from JAX 0.10.2
    assert [m for _, _, m, _ in _records(caplog)] == [
        "hello [0 1] 3", "x=[1. 1.]", "v=0", "v=1", "plain no placeholders", "two-call 5", "g=3.0"]
    assert {(n, lv, f) for n, lv, _, f in _records(caplog)} == {("microjax_rs.debug", "INFO", "test_debug_tools.py")}
    assert caplog.records[0].lineno == line


def test_log_and_print_check_their_arguments_as_jax():
    with pytest.raises(ValueError, match=r"Unused positional arguments to `jax.debug.print`: \[2\]"):
        jax.debug.print("x {}", 1, 2)
    with pytest.raises(ValueError, match=r"Unused keyword arguments to `jax.debug.print`: \['b'\]"):
        jax.debug.log("x {a}", a=1, b=2)
    with pytest.raises(IndexError):
        jax.debug.print("x {}")
    with pytest.raises(TypeError, match="expected str, got int"):
        jax.debug.print(3)
    with pytest.raises(TypeError, match=r"debug_print received unexpected arguments in the two-call form: "
                                        r"args=\(\) kwargs=\{'x': 1\}"):
        jax.debug.log(x=1)


def test_print_two_call_form_and_skip_format_check(capsys):
    jax.debug.print(ordered=True)("two {}", 5)
    jax.debug.print("{0} {x}", 1, x=2)
    jax.debug.print("plain", 1, 2, skip_format_check=True)
    assert capsys.readouterr().out == "two 5\n1 2\nplain 1 2\n"


def test_print_uses_the_numpy_print_options_of_the_call(capsys):
    with np.printoptions(precision=2):
        jax.jit(lambda x: jax.debug.print("{}", x))(jnp.asarray([1.0 / 3.0]))
    assert capsys.readouterr().out == "[0.33]\n"


# ------------------------------------------------------------ tracer leak checking

_leaked = []
_leaked_global = None


def _storing(x):
    _leaked.append(x)
    return x * 2


def _setting_global(x):
    global _leaked_global
    _leaked_global = x
    return x + 1


@pytest.fixture
def clean_leaks():
    yield
    global _leaked_global
    _leaked.clear()
    _leaked_global = None


@pytest.mark.parametrize("transform, trace_name", [
    (jax.jit, "DynamicJaxprTrace"), (jax.make_jaxpr, "DynamicJaxprTrace"), (jax.vmap, "BatchTrace")])
def test_checking_leaks_reports_a_tracer_stored_in_a_global_list(clean_leaks, transform, trace_name):
    arg = jnp.ones(2) if transform is jax.vmap else 1.0
    with jax.checking_leaks():
        with pytest.raises(jax.errors.UnexpectedTracerError) as e:
            transform(_storing)(arg)
    msg = str(e.value)
    # the first line as JAX 0.10.2 words it; then the tracer and how it is held
    assert msg.startswith(f"Leaked trace {trace_name}. Leaked tracer(s):\n")
    assert "is referred to by <list" in msg and f"{__name__}._leaked" in msg and "_storing" in msg


def test_checking_leaks_reports_a_global_assignment_and_a_local_list(clean_leaks):
    with jax.checking_leaks():
        with pytest.raises(jax.errors.UnexpectedTracerError, match=r"Leaked trace DynamicJaxprTrace") as e:
            jax.jit(_setting_global)(1.0)
        assert f"is referred to by {__name__}._leaked_global" in str(e.value)
        kept = []

        def keep(x):
            kept.append(x)
            return x

        with pytest.raises(jax.errors.UnexpectedTracerError, match="is referred to by local 'kept'"):
            jax.jit(keep)(1.0)


def test_no_leak_no_error_and_results_unchanged(clean_leaks):
    with jax.checking_leaks():
        assert float(jax.jit(lambda x: x + 1)(1.0)) == 2.0
        np.testing.assert_allclose(np.asarray(jax.vmap(lambda x: x * x)(jnp.arange(3.0))), [0.0, 1.0, 4.0])
        assert float(jax.grad(lambda x: jax.jit(jnp.sin)(x))(0.0)) == 1.0
        out = jax.lax.scan(lambda c, x: (c + x, c * x), 0.0, jnp.arange(4.0))
        np.testing.assert_allclose(np.asarray(out[1]), [0.0, 0.0, 2.0, 9.0])
        assert float(_storing(3.0)) == 6.0  # eager: nothing is traced, nothing leaks


def test_differentiation_leaks_are_not_reported_as_in_jax(clean_leaks):
    # recorded from JAX 0.10.2: a tracer stored during eager grad is not reported
    with jax.checking_leaks():
        assert float(jax.grad(_storing)(1.0)) == 2.0


def test_leak_checking_is_off_by_default_and_the_config_option_turns_it_on(clean_leaks):
    assert jax.config.jax_check_tracer_leaks is False
    assert float(jax.jit(_storing)(3.0)) == 6.0  # leaks silently
    with pytest.raises(jax.errors.UnexpectedTracerError, match="Encountered an unexpected tracer"):
        _leaked[0] + 1  # using it later is the error JAX 0.10.2 raises there too
    _leaked.clear()
    jax.config.update("jax_check_tracer_leaks", True)
    try:
        with pytest.raises(jax.errors.UnexpectedTracerError, match="Leaked trace DynamicJaxprTrace"):
            jax.jit(_storing)(2.0)
    finally:
        jax.config.update("jax_check_tracer_leaks", False)
    _leaked.clear()
    with jax.check_tracer_leaks(True):
        with pytest.raises(jax.errors.UnexpectedTracerError):
            jax.jit(_storing)(4.0)
    assert jax.config.jax_check_tracer_leaks is False

    @jax.check_tracer_leaks(True)
    def decorated():
        return jax.jit(_storing)(5.0)

    with pytest.raises(jax.errors.UnexpectedTracerError):
        decorated()


def test_jax_src_debugger_is_the_same_debugger_at_jax_paths():
    # What libraries import: `from jax._src.debugger import core as debugger_core`
    # (JAX 0.10.2 has `breakpoint`, `core` and `cli_debugger` there).
    import microjax_rs._src as src
    from microjax_rs._src.debugger import cli_debugger
    from microjax_rs._src.debugger import core as debugger_core

    assert src.debugger.breakpoint is jax.debug.breakpoint
    assert debugger_core.register_debugger is _debugger.register_debugger
    assert debugger_core.DebuggerFrame is _debugger.DebuggerFrame
    assert debugger_core.get_debugger("cli") is cli_debugger.run_debugger
    rec = _Recorder()
    debugger_core.register_debugger("via-jax-src", rec, -200)
    try:
        assert debugger_core._debugger_registry["via-jax-src"] == (-200, rec)
        assert debugger_core.get_debugger("via-jax-src") is rec
        jax.jit(_doubling("via-jax-src"))(jnp.float32(3.0))
        assert rec.entries and float(rec.entries[0][0]["y"]) == 6.0
    finally:
        del debugger_core._debugger_registry["via-jax-src"]
