"""Fork safety of the extension's global locks.

`fork()` copies only the thread that calls it: a lock another thread held
at that moment (a jit compile updating the trace cache or the compile
cache, a buffer going back to the pool) would stay held in the child, whose
first use of it would hang. These `os.register_at_fork` handlers take every
global lock of the extension and of the Rust core, in one fixed order,
just before the fork (waiting for the critical sections in flight to end;
never blocking while the GIL is held), and release them on both sides after
it (`rust/python/src/fork.rs`, `rust/core/src/exec/fork.rs`). The kernel
thread pool is rebuilt in the child on first use (`rust/core/src/exec/pool.rs`).
"""
import os

from . import _core


def _register():
    register = getattr(os, "register_at_fork", None)
    if register is not None:
        register(before=_core.fork_prepare, after_in_parent=_core.fork_release,
                 after_in_child=_core.fork_release)


_register()
