"""The event recorder behind `jax.profiler` (internal).

`ACTIVE` is the one flag the Python dispatch paths read (`core.eval_primitive`,
the eager `jnp` shortcuts, `jit`'s Python call path); it is False unless a
profiler trace is running, so those paths pay one global lookup. While a trace
runs, the Rust fast paths are told to step aside (`_core.set_debug_checks`),
so every eager operation and every jitted call comes through Python, where it
is timed. Events are kept as tuples and turned into Chrome trace-event JSON
only when the trace stops.
"""
import os
import threading
import time

ACTIVE = False

_now = time.perf_counter_ns
_lock = threading.Lock()
_events = []  # (name, start_ns, duration_ns, thread_id, args or None, category)
_threads = {}  # native thread id -> thread name
_start_ns = 0
fresh_trace = set()  # ids of programs traced during this trace whose plan is not built yet


def begin():
    """Starts collecting events (the caller has checked no trace runs)."""
    global ACTIVE, _start_ns
    with _lock:
        _events.clear()
        _threads.clear()
        _start_ns = _now()
        ACTIVE = True
    _route_through_python()


def end():
    """Stops collecting; returns `(start_ns, events, threads)`."""
    global ACTIVE
    with _lock:
        ACTIVE = False
        events, threads = list(_events), dict(_threads)
        _events.clear()
        _threads.clear()
        fresh_trace.clear()
    _route_through_python()
    return _start_ns, events, threads


def _route_through_python():
    """The Rust fast paths serve calls only while no trace is being
    recorded, no NaN/Inf checks are requested and rank promotion is allowed
    (its checks live on the Python paths)."""
    from .. import _core
    from ..config import config

    _core.set_debug_checks(bool(ACTIVE or config.debug_checks
                                or config.read("jax_numpy_rank_promotion") != "allow"))


def record(name, start_ns, end_ns, args=None, category="user"):
    """Adds one complete event (a no-op once the trace has stopped)."""
    if not ACTIVE:
        return
    tid = threading.get_native_id()
    if tid not in _threads:
        _threads[tid] = threading.current_thread().name
    _events.append((name, start_ns, end_ns - start_ns, tid, args, category))


def timed(name, category, fn, *args, **kwargs):
    """`fn(*args, **kwargs)`, recorded as the event `name`."""
    t0 = _now()
    try:
        return fn(*args, **kwargs)
    finally:
        record(name, t0, _now(), None, category)


def chrome_trace(start_ns, events, threads):
    """The events as a Chrome trace-event document (a dict for `json.dump`):
    'X' (complete) events with microsecond timestamps from the trace start,
    and 'M' metadata naming the process and threads, as JAX's profiler
    writes them; Perfetto and chrome://tracing open it."""
    pid = os.getpid()
    out = [{"ph": "M", "pid": pid, "name": "process_name", "args": {"name": "/host:CPU"}},
           {"ph": "M", "pid": pid, "name": "process_sort_index", "args": {"sort_index": 0}}]
    main = threading.main_thread().native_id
    for i, (tid, tname) in enumerate(sorted(threads.items())):
        out.append({"ph": "M", "pid": pid, "tid": tid, "name": "thread_name",
                    "args": {"name": "python" if tid == main else tname}})
        out.append({"ph": "M", "pid": pid, "tid": tid, "name": "thread_sort_index",
                    "args": {"sort_index": i + 1}})
    for name, t0, dur, tid, args, cat in sorted(events, key=lambda e: (e[1], -e[2])):
        ev = {"ph": "X", "pid": pid, "tid": tid, "ts": (t0 - start_ns) / 1000.0, "dur": dur / 1000.0,
              "name": name, "cat": cat}
        if args:
            ev["args"] = {k: str(v) for k, v in args.items()}
        out.append(ev)
    return {"displayTimeUnit": "ns", "metadata": {"highres-ticks": True}, "traceEvents": out}
