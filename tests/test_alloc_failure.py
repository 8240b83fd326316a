"""An allocation the OS refuses is a MemoryError, never an abort.

Each case runs in a child interpreter whose address space is capped
(`RLIMIT_AS`) a little above what it has mapped after a warm-up, so the
operation's large buffer cannot be allocated. The child must catch
`MemoryError`, then compute something small correctly and exit 0; an
allocator abort (SIGABRT, "memory allocation of N bytes failed") fails the
test. Thread pools and malloc arenas count against the cap, so the child
runs with two kernel threads and two arenas, and the warm-up runs every op
on small inputs first.
"""
import os
import subprocess
import sys
import textwrap

import pytest

# What these tests check does not depend on the default device (conftest.py).
pytestmark = pytest.mark.device_independent

resource = pytest.importorskip("resource", reason="RLIMIT_AS needs the resource module")

if not hasattr(resource, "RLIMIT_AS") or not os.path.exists("/proc/self/status"):
    pytest.skip("RLIMIT_AS or /proc/self/status is unavailable on this platform",
                allow_module_level=True)

MIB = 1 << 20

CHILD = r'''
import resource
import sys

import numpy as np

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import lax


def vm_size():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    raise SystemExit("no VmSize")


def conv(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), "SAME")


sort_jit = jax.jit(jnp.sort)
# Warm-up: every path below on small inputs (thread pools, caches, arenas).
small = jnp.ones(4096)
jnp.sort(small).block_until_ready()
sort_jit(small).block_until_ready()
jnp.concatenate([small, small]).block_until_ready()
jnp.cumsum(small).block_until_ready()
(jnp.ones((64, 64)).T + 0).block_until_ready()
conv(jnp.ones((1, 2, 16, 16)), jnp.ones((2, 2, 5, 5))).block_until_ready()
# faer's matmul reserves its packing workspace (twice the L3 size of address
# space, never touched until used) on each thread's first product: one product
# on this thread and one split over the pool's threads.
(jnp.ones((64, 64)) @ jnp.ones((64, 64))).block_until_ready()
(jnp.ones((256, 256)) @ jnp.ones((256, 256))).block_until_ready()
jnp.asarray(np.ones(4096, np.float32)).block_until_ready()

{setup}
limit = vm_size() + {margin}
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
try:
    out = {op}
    out.block_until_ready()
except MemoryError as e:
    print("MemoryError:", str(e)[:300])
else:
    print("no MemoryError: the cap did not bite", out.shape)
    sys.exit(3)
del big
# Still usable: a small computation of every kind above, checked.
v = np.arange(1000, dtype=np.float32)[::-1].copy()
assert np.array_equal(np.asarray(jnp.sort(jnp.asarray(v))), np.sort(v))
assert np.array_equal(np.asarray(sort_jit(jnp.asarray(v))), np.sort(v))
assert np.allclose(np.asarray(jnp.cumsum(jnp.asarray(v))), np.cumsum(v))
m = np.arange(12.0, dtype=np.float32).reshape(3, 4)
assert np.array_equal(np.asarray(jnp.asarray(m).T + 1), m.T + 1)
print("ok")
'''

# (setup run before the cap, the operation, the headroom above VmSize).
# Every operation needs well over its headroom: 256 MiB inputs, so a
# 256 MiB output or a larger scratch buffer (sort keys, concatenate picks,
# im2col) cannot be allocated.
CASES = {
    "sort": ("big = jnp.ones(2**26)", "jnp.sort(big)", 160 * MIB),
    "sort_jit": ("big = jnp.ones(2**26)", "sort_jit(big)", 160 * MIB),
    "concatenate": ("big = jnp.ones(2**26)", "jnp.concatenate([big, big])", 160 * MIB),
    "cumsum": ("big = jnp.ones(2**26)", "jnp.cumsum(big)", 160 * MIB),
    # The transpose fits; the sum's output does not.
    "transpose_add": ("big = jnp.ones((2**13, 2**13))", "big.T + 0", 320 * MIB),
    # A 256 MiB output (its window table alone takes 800 MiB).
    "conv": ("big = jnp.ones((1, 16, 2048, 2048)); w = jnp.ones((16, 16, 5, 5))",
             "conv(big, w)", 160 * MIB),
    "asarray_numpy": ("big = np.ones(2**26, np.float32)", "jnp.asarray(big)", 160 * MIB),
    "asarray_numpy_strided": ("big = np.ones((2**13, 2**13), np.float32).T",
                              "jnp.asarray(big)", 160 * MIB),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_refused_allocation_is_memory_error(name):
    setup, op, margin = CASES[name]
    src = CHILD.replace("{setup}", setup).replace("{op}", op).replace("{margin}", str(margin))
    env = dict(os.environ, RAYON_NUM_THREADS="2", MALLOC_ARENA_MAX="2")
    proc = subprocess.run([sys.executable, "-c", src], env=env, capture_output=True,
                          text=True, timeout=120)
    detail = f"rc={proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr[-3000:]}"
    assert proc.returncode == 0, detail
    assert "MemoryError:" in proc.stdout and proc.stdout.rstrip().endswith("ok"), detail
