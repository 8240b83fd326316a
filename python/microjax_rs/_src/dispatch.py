"""`jax._src.dispatch` at JAX's path.

JAX dispatches ordered effects (ordered `io_callback`s, `debug.print`)
asynchronously and keeps a runtime token per device to wait for them;
`wait_for_tokens()` (registered with `atexit` by JAX) blocks until they
finish. microjax_rs runs every program, callbacks included, synchronously in
the calling thread, so by the time any Python code runs there is nothing
outstanding and `wait_for_tokens()` returns at once."""


def wait_for_tokens():
    """Block until all dispatched ordered effects have run (they already have)."""
    return None


__all__ = ["wait_for_tokens"]
