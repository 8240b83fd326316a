"""jax.nn.initializers: values equal JAX's for the same key (recorded from JAX
0.10.2; the normal draws go through erf_inv and orthogonal through a QR, so
those compare within a few ulp), fans, dtypes, errors, and use under jit."""
import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs.nn import initializers as init

# (initializer, key name) -> (dtype, shape, values): recorded from JAX 0.10.2 with
# key = jax.random.key(42) ("key") or jax.random.PRNGKey(3) ("pk").
RECORDED = {
    ("uniform", "pk"): ("float32", (3, 4), [0.00074052572, 0.0093814433, 0.0064895698, 0.0097562093, 0.0027837777, 0.0058293808, 0.0010650551, 0.0038156605, 0.0021091402, 0.0012796223, 0.0073691118, 0.00156129]),
    ("uniform_s", "pk"): ("float16", (5,), [1.1425781, 2.2949219, 0.49804688, 2.96875, 7.7148438]),
    ("normal", "key"): ("float32", (3, 4), [-0.056609232, 0.93426371, 0.59140593, 0.30709183, -0.24806564, 0.43384629, -2.881758, 1.5117198, 1.0428193, 1.8203408, -0.7689932, 2.2796466]),
    ("normal", "pk"): ("float32", (3, 4), [-2.892514, 3.0787621, 0.7650125, 3.9414036, -1.1753348, 0.41883126, -2.4906571, -0.60274059, -1.6065073, -2.2721531, 1.2677035, -2.0209901]),
    ("normal_bf16", "pk"): ("bfloat16", (6,), [-0.00014686584, 0.0073242188, 0.011230469, -0.0087890625, 0.0047302246, -0.0027160645]),
    ("tn", "key"): ("float32", (3, 4), [-0.040524747, 0.66657126, 0.42281562, 0.21976209, -0.17754345, 0.31036121, -1.9733863, 1.0721079, 0.74337822, 1.2847303, -0.5492661, 1.5928309]),
    ("tn", "pk"): ("float32", (3, 4), [-1.9798584, 2.089684, 0.54643571, 2.527101, -0.83682686, 0.29963431, -1.7298331, -0.43089706, -1.1377919, -1.5879061, 0.90173268, -1.4207599]),
    ("tn_lu", "pk"): ("float32", (7,), [-0.84838784, 0.40838736, 0.011090165, 0.46343359, -0.50443769, -0.077158116, -0.78781599]),
    ("glorot_u", "key"): ("float32", (3, 5), [-0.0195556, 0.31141782, 0.20138814, 0.10568295, -0.08548604, 0.14872402, -0.73645163, 0.47654498, 0.3446075, 0.55188972, -0.25927898, 0.64574319, 0.73764819, 0.62376457, -0.038877469]),
    ("glorot_u", "pk"): ("float32", (3, 5), [-0.73776257, 0.75888824, 0.25800112, 0.82379967, -0.38386095, 0.14365296, -0.68155241, -0.20513362, -0.50071162, -0.64438832, 0.41034219, -0.59560204, -0.34483153, -0.42100587, 0.81216699]),
    ("glorot_n", "pk"): ("float32", (4, 3), [-0.80206752, 0.84655935, 0.22136852, 1.0237629, -0.33900991, 0.12138592, -0.7007789, -0.17456225, -0.46093491, -0.64328235, 0.36530414, -0.57556915]),
    ("lecun_u", "pk"): ("float32", (2, 3, 4), [-0.60238063, 0.61962962, 0.21065703, 0.67262965, -0.31342116, 0.11729215, -0.55648524, -0.1674909, -0.4088293, -0.52614087, 0.33504298, -0.48630702, -0.28155375, -0.34374985, 0.66313159, -0.55457276, 0.020432455, 0.12273011, 0.37005034, -0.4180578, 0.22185865, -0.49698603, -0.38579118, 0.57148123]),
    ("lecun_n", "pk"): ("float32", (3, 2, 4), [-0.61258924, 0.64657044, 0.16907302, 0.78191197, -0.25892311, 0.092710041, -0.53522879, -0.13332413, -0.35204488, -0.49131507, 0.27900568, -0.43959823, -0.23017155, -0.28724042, 0.7526713, -0.53231937, 0.016046647, 0.097070076, 0.31268999, -0.36178419, 0.17850737, -0.45291084, -0.32837874, 0.55881125]),
    ("he_u", "key"): ("float32", (3, 2, 4), [-0.031934161, 0.50854319, 0.32886544, 0.17257954, -0.13959812, 0.24286531, -1.2026205, 0.77819467, 0.5627417, 0.90123212, -0.42340082, 1.0544943, 1.2045745, 1.0186033, -0.063486643, 0.90080255, 0.59780079, 0.24521677, -1.2056527, 0.78523421, -0.26992932, -1.0772822, -1.3399515, 0.39365694]),
    ("he_u", "pk"): ("float32", (3, 2, 4), [-1.2047613, 1.2392592, 0.42131406, 1.3452593, -0.62684232, 0.2345843, -1.1129705, -0.3349818, -0.8176586, -1.0522817, 0.67008597, -0.97261405, -0.56310749, -0.6874997, 1.3262632, -1.1091455, 0.040864911, 0.24546021, 0.74010068, -0.8361156, 0.4437173, -0.99397206, -0.77158237, 1.1429625]),
    ("he_n", "pk"): ("float32", (2, 3, 4), [-1.2251785, 1.2931409, 0.33814603, 1.5638239, -0.51784623, 0.18542008, -1.0704576, -0.26664826, -0.70408976, -0.98263013, 0.55801135, -0.87919647, -0.46034309, -0.57448083, 1.5053426, -1.0646387, 0.032093294, 0.19414015, 0.62537998, -0.72356838, 0.35701475, -0.90582168, -0.65675747, 1.1176225]),
    ("vs_geo", "pk"): ("float32", (3, 4), [-0.5494588, 0.58483827, 0.14532095, 0.74870473, -0.22326532, 0.079560734, -0.47312251, -0.11449595, -0.30517039, -0.43161574, 0.24081159, -0.38390508]),
    ("vs_out", "pk"): ("float32", (2, 3, 4), [-0.85189486, 0.87628865, 0.29791403, 0.95124197, -0.44324446, 0.16587615, -0.78698897, -0.2368679, -0.57817197, -0.74407554, 0.47382236, -0.68774199, -0.39817715, -0.48613572, 0.93780971, -0.78428435, 0.028895855, 0.17356658, 0.52333021, -0.591223, 0.31375551, -0.70284438, -0.54559112, 0.80819654]),
    ("kaiming", "pk"): ("float32", (3, 3), [-1.2251785, 1.2931409, 0.33814603, 1.5638239, -0.51784623, 0.18542008, -1.0704576, -0.26664826, -0.70408976]),
    ("xavier", "pk"): ("float32", (3, 3), [-0.85189486, 0.87628865, 0.29791403, 0.95124197, -0.44324446, 0.16587615, -0.78698897, -0.2368679, -0.57817197]),
    ("orth", "key"): ("float32", (3, 5), [-0.01263392, 0.068536244, -0.64314598, 0.40626061, 0.64533633, 0.32122323, -0.087118357, 0.53722334, -0.27549633, 0.72437471, 0.22755994, 0.16116178, 0.45013225, 0.84299856, -0.094751932]),
    ("orth", "pk"): ("float32", (3, 5), [-0.47971702, 0.65367311, -0.41306999, -0.37683159, -0.17307243, 0.64962393, 0.095513083, -0.497298, 0.13658863, -0.55036724, 0.39009532, 0.014572262, -0.40745696, -0.36482993, 0.74060202]),
    ("orth_tall", "pk"): ("float32", (5, 3), [-0.95943403, 1.2992479, 0.78019065, 1.3073462, 0.19102617, 0.029144524, -0.82613999, -0.994596, -0.81491393, -0.75366318, 0.27317727, -0.72965986, -0.34614486, -1.1007345, 1.481204]),
    ("orth_col0", "pk"): ("float32", (3, 2, 4), [-0.41380572, 0.56386083, -0.3563157, -0.32505634, -0.14929292, -0.35421914, 0.20362408, -0.29829702, 0.57657778, -0.032291427, -0.31524771, 0.16583893, -0.39480934, -0.14583772, -0.31792501, -0.51128483, 0.45254681, 0.092029937, -0.51930875, -0.34925735, 0.56934929, 0.0014402912, 0.0084040025, 0.26615462]),
    ("delta", "pk"): ("float32", (3, 2, 4), [0, 0, 0, 0, 0, 0, 0, 0, -0.71129787, 0.18812416, -0.28902647, -0.61247724, 0.45311987, 0.84866279, 0.014643308, -0.27246976, 0, 0, 0, 0, 0, 0, 0, 0]),
}

INITIALIZERS = {
    "uniform": (init.uniform(), (3, 4), None), "uniform_s": (init.uniform(10.0), (5,), jnp.float16),
    "normal": (init.normal(2.0), (3, 4), None), "normal_bf16": (init.normal(), (6,), jnp.bfloat16),
    "tn": (init.truncated_normal(1.5), (3, 4), None),
    "tn_lu": (init.truncated_normal(1.0, lower=-1.0, upper=0.5), (7,), None),
    "glorot_u": (init.glorot_uniform(), (3, 5), None), "glorot_n": (init.glorot_normal(), (4, 3), None),
    "lecun_u": (init.lecun_uniform(), (2, 3, 4), None), "lecun_n": (init.lecun_normal(), (3, 2, 4), None),
    "he_u": (init.he_uniform(in_axis=0, out_axis=(1, 2)), (3, 2, 4), None),
    "he_n": (init.he_normal(batch_axis=0), (2, 3, 4), None),
    "vs_geo": (init.variance_scaling(0.5, "fan_geo_avg", "normal"), (3, 4), None),
    "vs_out": (init.variance_scaling(2.0, "fan_out", "uniform", in_axis=-1, out_axis=-2), (2, 3, 4), None),
    "kaiming": (init.kaiming_normal(), (3, 3), None), "xavier": (init.xavier_uniform(), (3, 3), None),
    "orth": (init.orthogonal(), (3, 5), None), "orth_tall": (init.orthogonal(2.0), (5, 3), None),
    "orth_col0": (init.orthogonal(column_axis=0), (3, 2, 4), None),
    "delta": (init.delta_orthogonal(), (3, 2, 4), None),
}

KEYS = {"key": lambda: jax.random.key(42), "pk": lambda: jax.random.PRNGKey(3)}


def _tol(name, dtype):
    if dtype in ("float16", "bfloat16"):
        return 1e-2
    if name.startswith(("orth", "delta")):
        return 1e-5  # through a QR
    return 2e-6  # normal draws: erf_inv, a few ulp


@pytest.mark.parametrize("name,key", sorted(RECORDED), ids=[f"{n}-{k}" for n, k in sorted(RECORDED)])
@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_values_equal_jax(name, key, mode):
    fn, shape, dtype = INITIALIZERS[name]
    want_dtype, want_shape, values = RECORDED[(name, key)]
    call = (lambda k: fn(k, shape, dtype)) if dtype is not None else (lambda k: fn(k, shape))
    if mode == "jit":
        call = jax.jit(call)
    out = call(KEYS[key]())
    assert str(out.dtype) == want_dtype and out.shape == want_shape
    tol = _tol(name, want_dtype)
    np.testing.assert_allclose(np.asarray(out.astype(jnp.float32)).ravel(), values, rtol=tol, atol=tol)


def test_constant_zeros_ones():
    k = jax.random.key(0)
    np.testing.assert_array_equal(np.asarray(init.constant(-7.0)(k, (2, 3))), np.full((2, 3), -7.0, np.float32))
    assert init.zeros(k, (2, 3)).dtype == np.float32 and init.ones(k, (3,), jnp.float16).dtype == np.float16
    np.testing.assert_array_equal(np.asarray(init.ones(k, (2, 2), jnp.int32)), np.ones((2, 2), np.int32))
    assert init.constant(2, dtype=jnp.int32)(k, (2,)).dtype == np.int32
    assert isinstance(init.zeros, init.Initializer) and isinstance(init.normal(), init.Initializer)


def test_orthogonal_is_orthogonal():
    q = np.asarray(init.orthogonal(scale=3.0)(jax.random.key(1), (4, 6)), np.float64)
    np.testing.assert_allclose(q @ q.T, 9.0 * np.eye(4), atol=1e-5)
    q = np.asarray(init.orthogonal(column_axis=0)(jax.random.key(1), (3, 2, 4)), np.float64)
    flat = np.moveaxis(q, 0, -1).reshape(8, 3)
    np.testing.assert_allclose(flat.T @ flat, np.eye(3), atol=1e-5)
    assert init.orthogonal()(jax.random.key(1), (0, 3)).shape == (0, 3)
    d = np.asarray(init.delta_orthogonal()(jax.random.key(2), (3, 3, 2, 2)))
    assert np.count_nonzero(np.abs(d).sum(axis=(2, 3))) == 1 and np.abs(d[1, 1]).sum() > 0


def test_variance_scaling_statistics():
    # fan_in = 200 * 3 (receptive field): variance 2 / 600
    w = np.asarray(init.variance_scaling(2.0, "fan_in", "uniform")(jax.random.key(5), (3, 200, 300)), np.float64)
    assert abs(w.var() - 2.0 / 600) < 2e-4 and np.abs(w).max() <= np.sqrt(3 * 2.0 / 600) + 1e-6
    w = np.asarray(init.variance_scaling(1.0, "fan_avg", "truncated_normal")(jax.random.key(5), (400, 600)),
                   np.float64)
    assert abs(w.var() - 1.0 / 500) < 1e-4


def test_errors():
    k = jax.random.key(0)
    with pytest.raises(ValueError, match="Can't compute input and output sizes"):
        init.glorot_uniform()(k, (5,))
    with pytest.raises(ValueError, match="invalid mode"):
        init.variance_scaling(1.0, "fan_sum", "normal")(k, (2, 2))
    with pytest.raises(ValueError, match="invalid distribution"):
        init.variance_scaling(1.0, "fan_in", "cauchy")(k, (2, 2))
    with pytest.raises(ValueError, match="at least a 2D shape"):
        init.orthogonal()(k, (3,))
    with pytest.raises(ValueError, match="3D, 4D or 5D"):
        init.delta_orthogonal()(k, (3, 3))
    with pytest.raises(ValueError, match="fan_in"):
        init.delta_orthogonal()(k, (3, 4, 2))


def test_vmap_over_keys():
    keys = jax.random.split(jax.random.key(0), 3)
    out = jax.vmap(lambda k: init.glorot_normal()(k, (2, 3)))(keys)
    for i in range(3):
        np.testing.assert_allclose(np.asarray(out[i]), np.asarray(init.glorot_normal()(keys[i], (2, 3))),
                                   rtol=1e-6)
