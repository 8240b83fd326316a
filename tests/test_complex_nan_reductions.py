"""NaN-skipping reductions on complex arrays (a complex value is NaN when
either part is): nansum, nanprod, nanmean, nanvar, nanstd, nancumsum and
nancumprod skip those elements, as NumPy."""
import numpy as np
import pytest

import microjax_rs.numpy as jnp

X = np.array([[1 + 2j, np.nan + 1j, 2 - 1j], [complex(3, np.nan), 0.5 + 0.5j, -1 + 0j]], np.complex64)


@pytest.mark.parametrize("name", ["nansum", "nanprod", "nanmean", "nanvar", "nanstd", "nancumsum", "nancumprod"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_complex_nan_reductions_match_numpy(name, axis):
    got = np.asarray(getattr(jnp, name)(X, axis=axis))
    np.testing.assert_allclose(got, getattr(np, name)(X, axis=axis), rtol=1e-5, atol=1e-6)
