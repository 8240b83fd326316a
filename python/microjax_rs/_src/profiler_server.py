"""The profiler server (`jax.profiler.start_server` / `stop_server`) and
subprocess registration (`jax.profiler.register_subprocess`).

JAX's server speaks the TensorFlow profiler's gRPC protocol. This one is an
HTTP server on `localhost:<port>` (a thread serving requests) that records
traces on request, in the format `jax.profiler.trace` writes:

* `GET /profile?duration_ms=N` records for N milliseconds (default 1000)
  and answers the gzipped Chrome trace (`ProfileData` reads it);
* `GET /start` starts recording, `GET /stop` stops and answers the trace
  (how a parent process's `start_trace`/`stop_trace` reaches the servers of
  its registered subprocesses); 409 while a trace already runs / none runs.

`register_subprocess(pid, port)` checks that the subprocess's server
answers on `localhost:port` and registers it: while registered, every trace
this process records (by `jax.profiler.trace` or through its own server)
starts and stops the subprocess's recording too, and the trace holds the
subprocess's events (as its own process/plane). The function it returns
unregisters it.
"""
import gzip
import http.server
import json
import threading
import urllib.error
import urllib.request

_lock = threading.Lock()
_server = None
_subprocesses = {}  # pid -> port
# `jax.profiler` sets these: start a trace the server records; stop it and
# return the gzipped trace (each raises RuntimeError when it cannot).
begin_recording = None
end_recording = None


class ProfilerServer:
    """A running profiler server (`start_server`'s result): `port`, and the
    HTTP server thread serving it."""

    def __init__(self, port):
        self._httpd = http.server.ThreadingHTTPServer(("localhost", port), _Handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="jax-profiler-server",
                                        daemon=True)
        self._thread.start()

    def _close(self):
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()

    def __repr__(self):
        return f"ProfilerServer(port={self.port})"


class _Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):  # no request log on stderr
        pass

    def _answer(self, code, body=b"", content_type="text/plain"):
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):  # noqa: N802 - http.server's name
        from urllib.parse import parse_qs, urlparse

        url = urlparse(self.path)
        try:
            if url.path == "/profile":
                ms = float(parse_qs(url.query).get("duration_ms", ["1000"])[0])
                begin_recording()
                threading.Event().wait(max(ms, 0.0) / 1000.0)
                body = end_recording()
            elif url.path == "/start":
                begin_recording()
                body = b""
            elif url.path == "/stop":
                body = end_recording()
            else:
                self._answer(404, b"unknown request")
                return
        except RuntimeError as e:
            self._answer(409, str(e).encode("utf-8"))
            return
        self._answer(200, body, "application/gzip" if body else "text/plain")


def start_server(port, requires_backend=True):
    """Starts the profiler server on `localhost:port` (see the module doc);
    JAX's ValueError when one is already running."""
    global _server
    with _lock:
        if _server is not None:
            raise ValueError("Only one profiler server can be active at a time.")
        _server = ProfilerServer(int(port))
        return _server


def stop_server():
    """Stops the running profiler server and closes its port; JAX's
    ValueError when none runs."""
    global _server
    with _lock:
        if _server is None:
            raise ValueError("No active profiler server.")
        server, _server = _server, None
    server._close()


def _request(port, path, timeout=10.0):
    with urllib.request.urlopen(f"http://localhost:{port}{path}", timeout=timeout) as r:
        return r.read()


def register_subprocess(pid, port):
    """Registers the profiler server of the subprocess `pid` on
    `localhost:port` (see the module doc); returns the function that
    unregisters it. JAX's `JaxRuntimeError` when nothing answers there."""
    from ..errors import JaxRuntimeError

    pid, port = int(pid), int(port)
    try:
        _request(port, "/ping", timeout=5.0)
    except urllib.error.HTTPError:
        pass  # a profiler server answered (404 for the unknown request)
    except OSError:
        raise JaxRuntimeError(f"DEADLINE_EXCEEDED: Timeout while connecting to localhost:{port}") from None
    with _lock:
        _subprocesses[pid] = port

    def unregister():
        with _lock:
            if _subprocesses.get(pid) == port:
                del _subprocesses[pid]
    return unregister


def start_subprocesses():
    """Starts the registered subprocesses' recording (those that fail are skipped)."""
    with _lock:
        ports = list(_subprocesses.values())
    for port in ports:
        try:
            _request(port, "/start")
        except OSError:
            pass


def subprocess_events():
    """Stops the registered subprocesses' recording; their trace events."""
    with _lock:
        ports = list(_subprocesses.values())
    events = []
    for port in ports:
        try:
            doc = json.loads(gzip.decompress(_request(port, "/stop")))
        except (OSError, ValueError):
            continue
        events.extend(doc.get("traceEvents", []))
    return events
