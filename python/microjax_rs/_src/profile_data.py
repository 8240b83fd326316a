"""Reading recorded profiles back (`jax.profiler.ProfileData`).

JAX's `ProfileData` parses the XSpace protobuf its profiler writes. The
profiler here writes Chrome trace-event JSON (`<host>.trace.json.gz`, see
`jax.profiler`), so `ProfileData` reads that: gzipped or plain JSON, from a
file or from bytes. It shows JAX's structure: planes (one per traced
process, named by its `process_name`, e.g. `/host:CPU`), each with lines
(one per thread, named by its `thread_name`, e.g. `python`), each with
events (name, `start_ns`, `duration_ns`, `end_ns`, and `stats`: the event's
args as `(name, value)` pairs).
"""
import gzip
import json


class ProfileEvent:
    """One event of a line: `name`, `start_ns` (from the trace start),
    `duration_ns`, `end_ns` (floats, as JAX's) and `stats`."""

    __slots__ = ("name", "start_ns", "duration_ns", "stats")

    def __init__(self, name, start_ns, duration_ns, stats):
        self.name = name
        self.start_ns = start_ns
        self.duration_ns = duration_ns
        self.stats = stats

    @property
    def end_ns(self):
        return self.start_ns + self.duration_ns

    def __repr__(self):
        return f"ProfileEvent({self.name!r}, start_ns={self.start_ns}, duration_ns={self.duration_ns})"


class ProfileLine:
    """One timeline of a plane (a thread): `name` and its `events` in start order."""

    __slots__ = ("name", "events")

    def __init__(self, name, events):
        self.name = name
        self.events = events

    def __repr__(self):
        return f"ProfileLine({self.name!r}, {len(self.events)} events)"


class ProfilePlane:
    """One plane of a profile (a traced process): `name`, `lines`, `stats`."""

    __slots__ = ("name", "lines", "stats")

    def __init__(self, name, lines, stats=()):
        self.name = name
        self.lines = lines
        self.stats = list(stats)

    def __repr__(self):
        return f"ProfilePlane({self.name!r}, {len(self.lines)} lines)"


def _number(v):
    """A stat value as JAX gives it: an int or float where the text is one."""
    if isinstance(v, str):
        for kind in (int, float):
            try:
                return kind(v)
            except ValueError:
                pass
    return v


def _planes(doc):
    """The planes of a Chrome trace document (see the module doc)."""
    events = doc.get("traceEvents", []) if isinstance(doc, dict) else doc
    if not isinstance(events, list):
        raise ValueError("no trace events")
    process_names, thread_names, by_thread = {}, {}, {}
    for ev in events:
        if not isinstance(ev, dict):
            raise ValueError("a trace event is not an object")
        pid, tid, ph = ev.get("pid", 0), ev.get("tid", 0), ev.get("ph")
        if ph == "M" and ev.get("name") == "process_name":
            process_names[pid] = str(ev.get("args", {}).get("name", pid))
        elif ph == "M" and ev.get("name") == "thread_name":
            thread_names[(pid, tid)] = str(ev.get("args", {}).get("name", tid))
        elif ph == "X":
            stats = [(k, _number(v)) for k, v in (ev.get("args") or {}).items()]
            start, dur = float(ev.get("ts", 0.0)) * 1000.0, float(ev.get("dur", 0.0)) * 1000.0
            by_thread.setdefault(pid, {}).setdefault(tid, []).append(
                ProfileEvent(str(ev.get("name", "")), start, dur, stats))
    planes = []
    for pid in sorted(set(process_names) | set(by_thread), key=str):
        threads = by_thread.get(pid, {})
        tids = sorted(set(threads) | {t for p, t in thread_names if p == pid}, key=str)
        lines = [ProfileLine(thread_names.get((pid, tid), str(tid)),
                             sorted(threads.get(tid, []), key=lambda e: (e.start_ns, -e.duration_ns)))
                 for tid in tids]
        planes.append(ProfilePlane(process_names.get(pid, f"/host:{pid}"), lines))
    return planes


class ProfileData:
    """A recorded profile (JAX's `jax.profiler.ProfileData`):
    `ProfileData(serialized)` / `from_serialized_xspace(serialized)` read the
    bytes of a trace written by `jax.profiler.trace` (gzipped or not),
    `from_file(path)` a trace file; `planes` and `find_plane_with_name`
    give its planes (see the module doc)."""

    def __init__(self, serialized):
        if not isinstance(serialized, (bytes, bytearray, memoryview)):
            raise TypeError(f"ProfileData takes the bytes of a profile, got {type(serialized).__name__}")
        data = bytes(serialized)
        try:
            if data[:2] == b"\x1f\x8b":
                data = gzip.decompress(data)
            self._planes = _planes(json.loads(data.decode("utf-8")))
        except (OSError, EOFError, UnicodeDecodeError, ValueError, TypeError, AttributeError):
            raise RuntimeError("Failed to parse XSpace from array") from None

    @classmethod
    def from_serialized_xspace(cls, serialized_xspace):
        """The profile in `serialized_xspace` (the bytes of a trace file)."""
        return cls(serialized_xspace)

    @classmethod
    def from_file(cls, proto_file_path):
        """The profile in the trace file `proto_file_path`; JAX's
        `JaxRuntimeError` (NOT_FOUND) for a missing file."""
        from ..errors import JaxRuntimeError
        try:
            with open(proto_file_path, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            raise JaxRuntimeError(f"NOT_FOUND: {proto_file_path}; No such file or directory") from None
        return cls(data)

    @property
    def planes(self):
        return list(self._planes)

    def find_plane_with_name(self, name):
        """The plane named `name`, or None."""
        for plane in self._planes:
            if plane.name == name:
                return plane
        return None
