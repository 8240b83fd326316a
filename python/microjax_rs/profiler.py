"""`jax.profiler`: record what a program spends its time on.

    with jax.profiler.trace("/tmp/logs"):
        with jax.profiler.TraceAnnotation("step"):
            f(x).block_until_ready()

writes `/tmp/logs/plugins/profile/<YYYY_MM_DD_HH_MM_SS>/<host>.trace.json.gz`,
JAX's layout: gzipped Chrome trace-event JSON, which Perfetto
(ui.perfetto.dev), chrome://tracing and TensorBoard's trace viewer open. It
holds complete ('X') events, microsecond timestamps from the trace start,
for

* every `jit` call (`PjitFunction(f)`), its compile on a cache miss
  (`jit_compile(f)`, made of `trace_to_jaxpr(f)` and `lower(f)`, then
  `build_plan(f)` when the executor's plan is built), and each run of the
  compiled program (`execute(f)`);
* every eagerly dispatched primitive (`sin`, `add`, ... category "eager");
* the user's `TraceAnnotation` / `StepTraceAnnotation` / `annotate_function`
  spans, their keyword arguments as the event's `args` (as strings, as JAX).

While no trace runs, the dispatch paths pay one flag check; while one runs,
the Rust fast paths step aside so every call is seen (calls are slower while
recording, as under JAX's profiler). Unlike JAX's profiler there is no XPlane
protobuf, no Python-function tracer and no device (kernel) timeline.
"""
import contextlib
import functools
import gzip
import json
import os
import pathlib
import socket
import threading
import time

from ._src import profiling as _profiling

_state_lock = threading.Lock()
_session = None  # dict(log_dir, perfetto) while a trace runs


class ProfileOptions:
    """Options of a profiler session (accepted for JAX's signature; the
    recorder here has no tracer levels to set)."""

    def __init__(self):
        self.host_tracer_level = 2
        self.python_tracer_level = 0
        self.enable_hlo_proto = False
        self.start_timestamp_ns = 0
        self.duration_ms = 0
        self.repository_path = ""


def start_trace(log_dir, create_perfetto_link=False, create_perfetto_trace=False, profiler_options=None):
    """Starts recording a trace that `stop_trace` writes under `log_dir`.

    Only one trace runs at a time: starting a second raises JAX's
    `RuntimeError("Profile has already been started. Only one profile may be
    run at a time.")`. `create_perfetto_trace=True` also writes
    `perfetto_trace.json.gz` (the trace without its metadata block) next to
    the trace; `create_perfetto_link=True` does the same and prints where
    the file is (it does not serve it or wait for a browser, as JAX does).
    """
    global _session
    with _state_lock:
        if _session is not None:
            raise RuntimeError("Profile has already been started. Only one profile may be run at a time.")
        # as JAX: any object names the directory by its str()
        _session = {"log_dir": os.fspath(log_dir) if isinstance(log_dir, os.PathLike) else str(log_dir), "perfetto": bool(create_perfetto_trace or create_perfetto_link),
                    "link": bool(create_perfetto_link)}
        _profiling.begin()


def stop_trace():
    """Stops the running trace and writes it; raises JAX's
    `RuntimeError("No profile started")` when none runs. Returns None."""
    global _session
    with _state_lock:
        if _session is None:
            raise RuntimeError("No profile started")
        session, _session = _session, None
        start_ns, events, threads = _profiling.end()
    doc = _profiling.chrome_trace(start_ns, events, threads)
    run_dir = pathlib.Path(session["log_dir"]).absolute() / "plugins" / "profile" / time.strftime("%Y_%m_%d_%H_%M_%S")
    run_dir.mkdir(parents=True, exist_ok=True)
    with gzip.open(run_dir / f"{socket.gethostname()}.trace.json.gz", "wt", encoding="utf-8") as f:
        json.dump(doc, f)
    if session["perfetto"]:
        perfetto = run_dir / "perfetto_trace.json.gz"
        with gzip.open(perfetto, "wt", encoding="utf-8") as f:
            json.dump({k: v for k, v in doc.items() if k != "metadata"}, f)
        if session["link"]:
            print(f"Perfetto trace written to {perfetto}: open it at https://ui.perfetto.dev")


@contextlib.contextmanager
def trace(log_dir, create_perfetto_link=False, create_perfetto_trace=False, profiler_options=None):
    """Context manager: `start_trace(log_dir, ...)` on entry, `stop_trace()`
    on exit (also when the body raises)."""
    start_trace(log_dir, create_perfetto_link, create_perfetto_trace, profiler_options)
    try:
        yield
    finally:
        stop_trace()


class TraceAnnotation:
    """`with TraceAnnotation("name", key=value):` marks a span of the trace
    (an event named `name`, its keyword arguments as args); costs a flag
    check when no trace runs. Usable as a decorator context too."""

    __slots__ = ("name", "kwargs", "_t0")

    def __init__(self, name, **kwargs):
        self.name = name
        self.kwargs = kwargs
        self._t0 = 0

    def __enter__(self):
        if _profiling.ACTIVE:
            self._t0 = _profiling._now()
        return self

    def __exit__(self, *exc):
        if self._t0:
            _profiling.record(self.name, self._t0, _profiling._now(), self.kwargs or None, "user")
            self._t0 = 0
        return False


class StepTraceAnnotation(TraceAnnotation):
    """A `TraceAnnotation` for one training step: `StepTraceAnnotation(
    "train", step_num=i)` (trace viewers group the steps by `step_num`)."""

    __slots__ = ()

    def __init__(self, name, **kwargs):
        super().__init__(name, **kwargs)


def annotate_function(func, name=None, **decorator_kwargs):
    """Decorator: every call of `func` is a trace event named `name`
    (default: the function's qualified name), `decorator_kwargs` its args."""
    name = name or getattr(func, "__qualname__", None) or func.__name__

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with TraceAnnotation(name, **decorator_kwargs):
            return func(*args, **kwargs)

    return wrapper


__all__ = ["ProfileOptions", "StepTraceAnnotation", "TraceAnnotation", "annotate_function", "start_trace",
           "stop_trace", "trace"]
