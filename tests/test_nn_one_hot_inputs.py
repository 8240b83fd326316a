"""jax.nn.one_hot input forms, as JAX 0.10.2: a list of class indices is
accepted, and a traced `num_classes` raises ConcretizationTypeError naming
the argument."""
import numpy as np

import microjax_rs as jax


def test_one_hot_of_a_list_and_a_traced_num_classes():
    # as JAX 0.10.2: a list input is accepted; a traced num_classes names the argument
    np.testing.assert_array_equal(np.asarray(jax.nn.one_hot([0, 1, 2], 3)), np.eye(3, dtype=np.float32))
    try:
        jax.jit(jax.nn.one_hot)(3, 5)
    except jax.errors.ConcretizationTypeError as e:
        assert "in jax.nn.one_hot argument `num_classes`" in str(e)
    else:
        raise AssertionError("ConcretizationTypeError not raised")
