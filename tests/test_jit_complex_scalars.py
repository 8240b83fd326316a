"""jit / make_jaxpr take Python complex scalars as arguments (weakly typed
complex64 with x64 off), as JAX. Values recorded from JAX 0.10.2."""
import numpy as np

import microjax_rs as jax
import microjax_rs.numpy as jnp


def test_jit_takes_a_python_complex():
    out = jax.jit(lambda x: x * 2)(1 + 2j)
    assert out.dtype == np.complex64 and out.weak_type
    assert complex(out) == 2 + 4j
    assert bool(jax.jit(jnp.iscomplexobj)(1 + 1j))
    assert float(jax.jit(lambda x: jnp.real(x) + 1)(2 + 1j)) == 3.0
    out = jax.jit(lambda x, y: x * y)(1j, jnp.float32(2))
    assert out.dtype == np.complex64 and complex(out) == 2j


def test_make_jaxpr_of_a_python_complex():
    text = str(jax.make_jaxpr(lambda x: x + 1)(1j))
    assert "a:c64[]" in text and "add a" in text

