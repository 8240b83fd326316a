"""jax.nn beyond the operator table: derivatives at the kinks (JAX's custom
JVPs of relu / relu6 and the tie rules of its compositions), dtype rules, and
dot_product_attention's gradients, transforms and errors. Expected values are
recorded from JAX 0.10.2 unless computed with NumPy here."""
import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.nn as nn
import microjax_rs.numpy as jnp

# (function, point) -> (first, second derivative), recorded from JAX 0.10.2 (float32).
KINKS = {
    ("relu", 0.0): (0.0, 0.0), ("relu", -1.0): (0.0, 0.0), ("relu", 1.0): (1.0, 0.0),
    ("relu6", 0.0): (0.0, 0.0), ("relu6", 6.0): (0.0, 0.0), ("relu6", 3.0): (1.0, 0.0),
    ("relu6", 7.0): (0.0, 0.0),
    ("hard_tanh", -1.0): (1.0, 0.0), ("hard_tanh", 1.0): (1.0, 0.0),
    ("leaky_relu", 0.0): (1.0, 0.0), ("elu", 0.0): (1.0, 1.0), ("celu", 0.0): (1.0, 0.25),
    ("selu", 0.0): (1.7580993175506592, 1.7580993175506592),
    ("sparse_plus", -1.0): (0.0, 0.0), ("sparse_plus", 1.0): (1.0, 0.0),
    ("sparse_sigmoid", -1.0): (0.25, 0.0), ("sparse_sigmoid", 1.0): (0.25, 0.0), ("sparse_sigmoid", 0.0): (0.5, 0.0),
    ("hard_sigmoid", -3.0): (0.0, 0.0), ("hard_sigmoid", 3.0): (0.0, 0.0),
    ("hard_silu", -3.0): (0.0, 0.0), ("hard_silu", 3.0): (1.0, 0.0),
    ("log1mexp", 0.5): (1.5414940118789673, -3.9176976680755615), ("log1mexp", 1.0): (0.5819767117500305,
                                                                                       -0.9206736087799072),
    ("squareplus", 0.0): (0.5, 0.25), ("mish", 0.0): (0.6000000238418579, 0.6399999856948853),
    ("gelu", 0.0): (0.5, 0.7978845834732056), ("soft_sign", 0.0): (1.0, -2.0), ("silu", 0.0): (0.5, 0.5),
    ("log_sigmoid", 0.0): (0.5, -0.25), ("softplus", 0.0): (0.5, 0.25), ("sigmoid", 0.0): (0.25, 0.0),
}


@pytest.mark.parametrize("name,x", sorted(KINKS), ids=[f"{n}@{x}" for n, x in sorted(KINKS)])
def test_derivatives_at_kinks(name, x):
    f = getattr(nn, name)
    d1, d2 = KINKS[(name, x)]
    np.testing.assert_allclose(float(jax.grad(f)(x)), d1, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(float(jax.grad(jax.grad(f))(x)), d2, rtol=1e-6, atol=1e-7)
    # the same under jit and vmap
    np.testing.assert_allclose(float(jax.jit(jax.grad(f))(x)), d1, rtol=1e-6, atol=1e-7)
    g = jax.vmap(jax.grad(f))(jnp.array([x, x], jnp.float32))
    np.testing.assert_allclose(np.asarray(g), [d1, d1], rtol=1e-6, atol=1e-7)


def test_relu_grad_at_zero_in_products():
    # x * relu(x) at 0: derivative relu(0) + 0 * relu'(0) = 0; second derivative 2 relu'(0) = 0 (JAX).
    f = lambda x: x * nn.relu(x)
    assert float(jax.grad(f)(0.0)) == 0.0
    assert float(jax.grad(jax.grad(f))(0.0)) == 0.0
    assert float(jax.grad(jax.grad(f))(2.0)) == 2.0


def test_relu_family_values_and_dtypes():
    x = np.array([-np.inf, -2.0, -0.0, 0.0, 0.5, 6.0, 7.0, np.inf, np.nan], np.float32)
    np.testing.assert_array_equal(np.asarray(nn.relu(x)), np.maximum(x, 0))
    np.testing.assert_array_equal(np.asarray(nn.relu6(x)), np.minimum(np.maximum(x, 0), 6))
    np.testing.assert_array_equal(np.asarray(nn.hard_tanh(x)), np.clip(x, -1, 1))
    xi = np.array([-3, 0, 2, 9], np.int32)
    # recorded from JAX 0.10.2: relu and hard_tanh keep int32, relu6 (min with 6.0) gives float32
    assert nn.relu(xi).dtype == np.int32 and nn.hard_tanh(xi).dtype == np.int32
    assert nn.relu6(xi).dtype == np.float32
    np.testing.assert_array_equal(np.asarray(nn.relu6(xi)), [0.0, 0.0, 2.0, 6.0])
    np.testing.assert_array_equal(np.asarray(nn.hard_tanh(xi)), [-1, 0, 1, 1])


def test_softplus_extremes():
    x = np.array([-np.inf, -100.0, 0.0, 100.0, np.inf], np.float32)
    np.testing.assert_allclose(np.asarray(nn.softplus(x)), np.logaddexp(x, 0).astype(np.float32), rtol=1e-6)
    g = jax.vmap(jax.grad(nn.softplus))(jnp.array([-100.0, 0.0, 100.0, np.inf]))
    np.testing.assert_allclose(np.asarray(g), [0.0, 0.5, 1.0, 1.0], atol=1e-30)


def test_softmax_where_gradients():
    # recorded from JAX 0.10.2
    w = jnp.array([True, False, True])
    g = jax.grad(lambda x: nn.softmax(x, where=w)[0])(jnp.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(np.asarray(g), [0.10499357, 0.0, -0.10499357], rtol=1e-6)
    g = jax.grad(lambda x: nn.log_softmax(x, where=w)[0])(jnp.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(np.asarray(g), [0.8807971, 0.0, -0.880797], rtol=1e-6)
    g = jax.grad(lambda x: nn.softmax(x)[0])(jnp.array([1.0, -np.inf, 3.0]))
    np.testing.assert_allclose(np.asarray(g), [0.10499357, 0.0, -0.10499357], rtol=1e-6)


def test_standardize_unknown_algorithm():
    with pytest.raises(ValueError, match="Unknown algorithm"):
        nn.standardize(jnp.ones(3), algorithm="slow")


# ----------------------------------------------------------------- attention

_Q = jnp.sin(jnp.arange(24.0)).reshape(1, 3, 2, 4)
_K = jnp.cos(jnp.arange(16.0)).reshape(1, 4, 1, 4)
_V = jnp.sin(jnp.arange(16.0) * 0.7).reshape(1, 4, 1, 4)

# grad of sum(attention(q, k, v, is_causal=True) ** 2), recorded from JAX 0.10.2
_GRADS = (
    [0.0] * 8 + [0.50890625, 0.07898057, -0.4235595, -0.53668094, -0.5853287, -0.0908411, 0.48716536,
                 0.6172743, 0.24716534, -0.29318225, -0.56397945, -0.31625652, 0.53938806, 0.06733739,
                 -0.46662292, -0.57157224],
    [0.76857686, 0.18090566, -0.5730893, -0.80018866, -0.7053703, 0.05859701, 0.7686905, 0.7720535,
     -0.06320667, -0.23950286, -0.19560121, 0.02813528] + [0.0] * 4,
    [-0.03809658, 4.0814323, 6.281401, 5.527128, 0.3405127, -0.05702576, -0.4277438, -0.59728736,
     -0.3929889, 0.2083006, 0.7116234, 0.88025826] + [0.0] * 4,
)


def _loss(q, k, v):
    return (nn.dot_product_attention(q, k, v, is_causal=True) ** 2).sum()


@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_attention_gradients_recorded(mode):
    g = jax.grad(_loss, argnums=(0, 1, 2))
    if mode == "jit":
        g = jax.jit(g)
    for got, want in zip(g(_Q, _K, _V), _GRADS):
        np.testing.assert_allclose(np.asarray(got).ravel(), want, rtol=2e-5, atol=2e-6)


def test_attention_gradients_match_composition():
    rng = np.random.default_rng(0)
    q, k, v = (rng.normal(size=(2, 3, 2, 4)).astype(np.float32) for _ in range(3))
    bias = rng.normal(size=(2, 2, 3, 3)).astype(np.float32)

    def composed(q, k, v, bias):
        logits = jnp.einsum("btnh,bsnh->bnts", q, k) / 2.0 + bias
        return jnp.einsum("bnts,bsnh->btnh", nn.softmax(logits, axis=-1), v)

    for argnum in range(4):
        g1 = jax.grad(lambda *a: (nn.dot_product_attention(*a) ** 2).sum(), argnums=argnum)(q, k, v, bias)
        g2 = jax.grad(lambda *a: (composed(*a) ** 2).sum(), argnums=argnum)(q, k, v, bias)
        np.testing.assert_allclose(np.asarray(g1), np.asarray(g2), rtol=1e-4, atol=1e-5)


def test_attention_vmap_and_residual():
    out = nn.dot_product_attention(_Q, _K, _V, is_causal=True)
    got = jax.vmap(lambda q: nn.dot_product_attention(q[None], _K, _V, is_causal=True)[0])(
        jnp.concatenate([_Q, _Q]))
    np.testing.assert_allclose(np.asarray(got), np.concatenate([np.asarray(out)] * 2), rtol=1e-6, atol=1e-7)
    enc, lse = nn.dot_product_attention(_Q, _K, _V, is_causal=True, return_residual=True)
    assert lse.shape == (1, 3, 2)
    np.testing.assert_allclose(np.asarray(enc), np.asarray(out), rtol=1e-6)
    # the first query sees only the first key: logsumexp of one logit
    logit0 = np.asarray(_Q)[0, 0] @ np.asarray(_K)[0, 0, 0] / 2.0
    np.testing.assert_allclose(np.asarray(lse)[0, 0], logit0, rtol=1e-5)


def test_attention_cudnn_unavailable():
    # JAX raises RuntimeError ("cuDNN is not detected.") without a cuDNN GPU.
    with pytest.raises(RuntimeError):
        nn.dot_product_attention(_Q, _K, _V, implementation="cudnn")
