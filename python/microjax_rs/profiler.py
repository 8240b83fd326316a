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
protobuf, no Python-function tracer and no device (kernel) timeline;
`ProfileData` reads the trace files written here. `start_server` serves
traces over HTTP (not the TensorFlow profiler's gRPC protocol), and
`device_memory_profile` is a pprof profile of the live arrays by type (see
the modules under `_src`).
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

from ._src import profiler_server as _profiler_server
from ._src import profiling as _profiling
from ._src.memory_profile import device_memory_profile as _device_memory_profile
from ._src.profile_data import ProfileData, ProfileEvent, ProfilePlane
from ._src.profiler_server import ProfilerServer, register_subprocess, start_server, stop_server  # noqa: F401

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
    # as JAX: any object names the directory by its str()
    _begin({"log_dir": os.fspath(log_dir) if isinstance(log_dir, os.PathLike) else str(log_dir),
            "perfetto": bool(create_perfetto_trace or create_perfetto_link), "link": bool(create_perfetto_link)})


def _begin(session):
    """Starts recording for `session` (and the registered subprocesses)."""
    global _session
    with _state_lock:
        if _session is not None:
            raise RuntimeError("Profile has already been started. Only one profile may be run at a time.")
        _session = session
        _profiling.begin()
    _profiler_server.start_subprocesses()


def _end(remote=False):
    """Stops recording: `(session, trace document)` with the registered
    subprocesses' events. `remote`: the trace the server started (else the
    one `start_trace` started)."""
    global _session
    with _state_lock:
        if _session is None or bool(_session.get("remote")) != remote:
            raise RuntimeError("No profile started")
        session, _session = _session, None
        start_ns, events, threads = _profiling.end()
    doc = _profiling.chrome_trace(start_ns, events, threads)
    doc["traceEvents"].extend(_profiler_server.subprocess_events())
    return session, doc


def _begin_recording():
    """A trace the profiler server records (no files)."""
    _begin({"remote": True})


def _end_recording():
    """Stops the server's trace: the gzipped trace document."""
    _, doc = _end(remote=True)
    return gzip.compress(json.dumps(doc).encode("utf-8"))


def stop_trace():
    """Stops the running trace and writes it; raises JAX's
    `RuntimeError("No profile started")` when none runs. Returns None."""
    session, doc = _end()
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


def device_memory_profile(backend=None):
    """The device memory profile: a gzipped pprof protocol buffer of the
    live arrays grouped by type and device (JAX's records each allocation's
    Python stack instead; see `_src/memory_profile.py`). `pprof` reads it."""
    return _device_memory_profile()


def save_device_memory_profile(filename, backend=None):
    """Writes `device_memory_profile()` to `filename`."""
    profile = device_memory_profile(backend)
    with open(filename, "wb") as f:
        f.write(profile)


_profiler_server.begin_recording = _begin_recording
_profiler_server.end_recording = _end_recording

__all__ = ["ProfileData", "ProfileEvent", "ProfileOptions", "ProfilePlane", "StepTraceAnnotation", "TraceAnnotation",
           "annotate_function", "device_memory_profile", "register_subprocess", "save_device_memory_profile",
           "start_server", "start_trace", "stop_server", "stop_trace", "trace"]
