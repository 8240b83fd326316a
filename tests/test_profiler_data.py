"""`jax.profiler.ProfileData` reading our traces, the device memory profile
(a gzipped pprof protocol buffer), the profiler server and subprocess
registration; errors as JAX 0.10.2's."""
import glob
import gzip
import json
import socket
import subprocess
import sys
import threading
import time
import urllib.request

import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
import microjax_rs.profiler as P
from microjax_rs.errors import JaxRuntimeError


def _free_port():
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def _recorded_trace(tmp_path):
    x = jnp.ones(3)
    with P.trace(str(tmp_path)):
        with P.TraceAnnotation("step", a=1, tag="t"):
            jnp.sin(x).block_until_ready()
    files = glob.glob(str(tmp_path / "plugins" / "profile" / "*" / "*.trace.json.gz"))
    assert len(files) == 1
    return files[0]


def test_profile_data_reads_a_trace_file(tmp_path):
    path = _recorded_trace(tmp_path)
    data = P.ProfileData.from_file(path)
    assert [p.name for p in data.planes] == ["/host:CPU"]
    plane = data.find_plane_with_name("/host:CPU")
    assert isinstance(plane, P.ProfilePlane) and data.find_plane_with_name("nope") is None
    (line,) = plane.lines
    assert line.name == "python"
    events = {e.name: e for e in line.events}
    step, sin = events["step"], events["sin"]
    assert isinstance(step, P.ProfileEvent)
    # stats as JAX's: (name, value) pairs, numbers as numbers (recorded from JAX 0.10.2: [('a', 1)])
    assert sorted(step.stats) == [("a", 1), ("tag", "t")]
    assert step.start_ns <= sin.start_ns and sin.end_ns <= step.end_ns
    assert step.end_ns == pytest.approx(step.start_ns + step.duration_ns) and sin.duration_ns > 0
    # the same from bytes, gzipped or not, and through the constructor
    raw = open(path, "rb").read()
    for blob in (raw, gzip.decompress(raw)):
        for make in (P.ProfileData, P.ProfileData.from_serialized_xspace):
            again = make(blob).find_plane_with_name("/host:CPU").lines[0]
            assert [e.name for e in again.events] == [e.name for e in line.events]


def test_profile_data_errors_as_jax(tmp_path):
    # recorded from JAX 0.10.2
    with pytest.raises(JaxRuntimeError, match="NOT_FOUND: .*No such file or directory"):
        P.ProfileData.from_file(str(tmp_path / "missing.pb"))
    with pytest.raises(RuntimeError, match="Failed to parse XSpace from array"):
        P.ProfileData.from_serialized_xspace(b"garbage\xff")
    with pytest.raises(TypeError):
        P.ProfileData()


# ---------------------------------------------------------------- memory profile


def _fields(buf):
    """The (field number, value) pairs of a protocol buffer message: ints for
    varints, bytes for length-delimited fields."""
    out, i = [], 0
    while i < len(buf):
        key, i = _varint(buf, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            v, i = _varint(buf, i)
        elif wire == 2:
            n, i = _varint(buf, i)
            v, i = buf[i:i + n], i + n
        else:
            raise AssertionError(f"unexpected wire type {wire}")
        out.append((field, v))
    return out


def _varint(buf, i):
    shift = value = 0
    while True:
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, i


def _packed(v):
    vals, i = [], 0
    while i < len(v):
        x, i = _varint(v, i)
        vals.append(x)
    return vals


def _decode_profile(blob):
    """{function name: (count, bytes, {label: value})} and the sample types of a pprof profile."""
    msg = _fields(gzip.decompress(blob))
    strings = [v.decode() for f, v in msg if f == 6]
    assert strings[0] == ""
    sample_types = [tuple(strings[x] for _, x in _fields(v)) for f, v in msg if f == 1]
    functions = {dict(_fields(v))[1]: strings[dict(_fields(v))[2]] for f, v in msg if f == 5}
    locations = {}
    for f, v in msg:
        if f == 4:
            loc = _fields(v)
            locations[dict(loc)[1]] = [functions[dict(_fields(line))[1]] for k, line in loc if k == 4]
    samples = {}
    for f, v in msg:
        if f == 2:
            s = _fields(v)
            (loc,) = _packed(dict(s)[1])
            count, nbytes = _packed(dict(s)[2])
            labels = {strings[dict(_fields(lab))[1]]: strings[dict(_fields(lab))[2]] for k, lab in s if k == 3}
            samples[locations[loc][0]] = (count, nbytes, labels)
    return sample_types, samples


def test_device_memory_profile_is_a_pprof_of_live_arrays(tmp_path):
    held = [jnp.ones((123, 7)), jnp.zeros((123, 7)), jnp.arange(17, dtype=jnp.int32)]
    sample_types, samples = _decode_profile(P.device_memory_profile())
    # JAX's sample types and labels (recorded from JAX 0.10.2)
    assert sample_types == [("allocations", "count"), ("space", "bytes")]
    count, nbytes, labels = samples["f32[123,7]"]
    assert count >= 2 and nbytes == count * 123 * 7 * 4
    assert labels == {"kind": "buffer", "device": "cpu:0"}
    assert samples["i32[17]"][1] >= 17 * 4
    path = tmp_path / "memory.prof"
    P.save_device_memory_profile(str(path))
    assert "f32[123,7]" in _decode_profile(path.read_bytes())[1]
    del held


# ---------------------------------------------------------------- server


def test_server_serves_traces_and_stops():
    port = _free_port()
    server = P.start_server(port)
    try:
        assert server.port == port
        with pytest.raises(ValueError, match="Only one profiler server can be active at a time."):
            P.start_server(_free_port())
        x = jnp.ones(4)

        def work():
            time.sleep(0.2)
            for _ in range(3):
                jnp.cos(x).block_until_ready()
        t = threading.Thread(target=work)
        t.start()
        body = urllib.request.urlopen(f"http://localhost:{port}/profile?duration_ms=1500", timeout=30).read()
        t.join()
        names = [e.name for line in P.ProfileData(body).planes[0].lines for e in line.events]
        assert names.count("cos") == 3
    finally:
        P.stop_server()
    with pytest.raises(OSError):
        socket.create_connection(("localhost", port), timeout=2).close()
    with pytest.raises(ValueError, match="No active profiler server."):
        P.stop_server()


def test_server_trace_does_not_clash_with_start_trace(tmp_path):
    port = _free_port()
    P.start_server(port)
    try:
        P.start_trace(str(tmp_path))
        try:
            with pytest.raises(urllib.error.HTTPError) as e:
                urllib.request.urlopen(f"http://localhost:{port}/start", timeout=10)
            assert e.value.code == 409
        finally:
            P.stop_trace()
    finally:
        P.stop_server()


def test_register_subprocess_merges_its_events(tmp_path):
    port = _free_port()
    with pytest.raises(JaxRuntimeError, match="DEADLINE_EXCEEDED"):
        P.register_subprocess(12345, port)
    child_code = ("import time, microjax_rs.numpy as jnp, microjax_rs.profiler as P\n"
                  f"P.start_server({port})\nprint('ready', flush=True)\n"
                  "for _ in range(400):\n    jnp.tan(jnp.ones(2)).block_until_ready(); time.sleep(0.02)\n")
    child = subprocess.Popen([sys.executable, "-c", child_code], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "ready"
        unregister = P.register_subprocess(child.pid, port)
        with P.trace(str(tmp_path)):
            jnp.sin(jnp.ones(2)).block_until_ready()
            time.sleep(0.5)
        unregister()
    finally:
        child.kill()
        child.wait()
    (path,) = glob.glob(str(tmp_path / "plugins" / "profile" / "*" / "*.trace.json.gz"))
    with gzip.open(path, "rt") as f:
        pids = {e["pid"] for e in json.load(f)["traceEvents"] if e.get("name") == "tan"}
    assert pids == {child.pid}
    planes = P.ProfileData.from_file(path).planes
    assert len(planes) == 2
    names = [{e.name for line in p.lines for e in line.events} for p in planes]
    assert any("sin" in n for n in names) and any("tan" in n for n in names)


def test_memory_profile_arrays_survive_jit():
    f = jax.jit(lambda x: x * 2)
    y = f(np.ones((31, 3), np.float32))
    _, samples = _decode_profile(P.device_memory_profile())
    assert samples["f32[31,3]"][0] >= 1
    del y
