"""`jax_check_tracer_leaks` / `jax.checking_leaks()`: tracers that outlive
their transformation are reported when it ends.

With the option on, every staging trace (`jit`, `make_jaxpr`, the traces of
rules and loop bodies) and every batch trace (`vmap`) is checked as it is
left: after a garbage collection, each of its tracers still held is followed
up its referrers. A holder that is a module's global, a frame of user code or
a container reached from one is a leak, and UnexpectedTracerError names the
trace, the tracers and how each is held. References from microjax_rs' own
frames and globals (the transformation's locals and caches) are not leaks.
Differentiation traces are not checked (JAX 0.10.2 does not report those
either); their leaked tracers raise when used, as always.
"""
import gc
import os
import sys
import types

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_MAX_NODES = 20000  # referrers followed per tracer before giving up (no leak reported)

# Trace class names as JAX's messages call them.
_JAX_TRACE_NAMES = {"StagingTrace": "DynamicJaxprTrace"}


def _internal_file(filename):
    return os.path.abspath(filename).startswith(_PACKAGE_DIR + os.sep)


def _module_globals():
    """id(module.__dict__) -> module name, for every loaded module."""
    out = {}
    for name, mod in list(sys.modules.items()):
        d = getattr(mod, "__dict__", None)
        if isinstance(d, dict):
            out[id(d)] = name
    return out


def _edge(holder, held, modules):
    """How `holder` refers to `held`, as a short text."""
    if isinstance(holder, dict):
        key = next((k for k, v in holder.items() if v is held), "?")
        owner = modules.get(id(holder))
        if owner is not None:
            return f"{owner}.{key}"
        return f"<dict {id(holder)}>[{key!r}]"
    if isinstance(holder, (list, tuple)):
        idx = next((i for i, v in enumerate(holder) if v is held), "?")
        return f"<{type(holder).__name__} {id(holder)}>[{idx}]"
    if isinstance(holder, types.FrameType):
        value = held.cell_contents if isinstance(held, types.CellType) else held
        name = next((k for k, v in holder.f_locals.items() if v is value), "?")
        code = holder.f_code
        return f"local {name!r} of {code.co_name} at {code.co_filename}:{holder.f_lineno}"
    return f"<{type(holder).__name__} {id(holder)}>"


def _holder_path(tracer, ignore, modules, running):
    """The chain of referrers from `tracer` to a user-visible holder (a
    module global of user code, a frame of user code), or None. `running`:
    id(object) -> frame, for the locals of running user frames (the garbage
    collector does not see those as referrers)."""
    parents = {id(tracer): None}
    objs = {id(tracer): tracer}
    ignore = ignore | {id(parents), id(objs)}
    frontier = [tracer]
    ignore.add(id(frontier))
    while frontier and len(parents) < _MAX_NODES:
        nxt = []
        ignore.add(id(nxt))
        for obj in frontier:
            frame = running.get(id(obj))
            if frame is not None:
                return _chain(obj, parents, objs, frame, modules)
            refs = gc.get_referrers(obj)
            ignore.add(id(refs))
            for r in refs:
                rid = id(r)
                if rid in ignore or rid in parents:
                    continue
                if isinstance(r, types.FrameType):
                    if _internal_file(r.f_code.co_filename):
                        continue
                    return _chain(obj, parents, objs, r, modules)
                if rid in modules:
                    if modules[rid].split(".")[0] == __name__.split(".")[0]:
                        continue  # microjax_rs' own caches
                    return _chain(obj, parents, objs, r, modules)
                if _is_trace_or_tracer(r):
                    continue
                parents[rid] = id(obj)
                objs[rid] = r
                nxt.append(r)
            del refs
        frontier = nxt
    return None


def _chain(obj, parents, objs, root, modules):
    lines = []
    holder = root
    cur = obj
    steps = []
    while cur is not None:
        steps.append((holder, cur))
        parent_id = parents[id(cur)]
        holder, cur = cur, (objs[parent_id] if parent_id is not None else None)
    for holder, held in reversed(steps):
        lines.append(f"{_describe(held)} is referred to by {_edge(holder, held, modules)}")
    return lines


def _describe(x):
    return f"<{type(x).__name__} {id(x)}>"


def _is_trace_or_tracer(x):
    from .. import core

    return isinstance(x, core.Tracer) or hasattr(x, "process_primitive")


def check_trace(trace):
    """Raises UnexpectedTracerError when tracers of `trace` (just left) are
    still held from user code."""
    if not getattr(trace, "leak_checked", False):
        return
    from .. import core

    gc.collect()
    modules = _module_globals()
    # Frame objects of the running calls, so their locals are seen as referrers.
    frames = []
    f = sys._getframe()
    while f is not None:
        frames.append(f)
        f = f.f_back
    running = {}
    for fr in frames:
        if not _internal_file(fr.f_code.co_filename):
            for v in fr.f_locals.values():
                running.setdefault(id(v), fr)
    tracers = [r for r in gc.get_referrers(trace) if isinstance(r, core.Tracer) and r._trace is trace]
    ignore = {id(tracers), id(modules), id(frames), id(running)}
    found = []
    for t in tracers:
        path = _holder_path(t, ignore, modules, running)
        if path is not None:
            found.append((t, path))
    del tracers, frames, f, running
    if not found:
        return
    kind = _JAX_TRACE_NAMES.get(type(trace).__name__, type(trace).__name__)
    parts = [f"Leaked trace {kind}. Leaked tracer(s):\n"]
    for t, path in found:
        parts.append(repr(t))
        parts.append(f"The tracer was created while tracing the function {trace.fun_name}.")
        parts.extend(path)
    raise core.UnexpectedTracerError("\n".join(parts) + "\n")
