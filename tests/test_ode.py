"""`jax.experimental.ode.odeint`: values and gradients against values
recorded from JAX 0.10.2 (same Dormand–Prince step-size control, so the
same steps), gradients (adjoint method) against central finite differences
in float64, pytree states, `hmax` / `mxstep`, and jit / vmap."""
import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs.experimental.ode import odeint


def _decay(y, t, k):
    return -k * y + jnp.sin(t)


def _oscillator(s, t, w):
    return {"x": s["v"], "v": -w ** 2 * s["x"]}


_TS = [0.0, 0.5, 1.0, 1.5, 2.0]
_Y0 = [1.0, 2.0]
# recorded from JAX 0.10.2 (x64)
_DECAY = [[1.0, 2.0], [0.8138849972536398, 1.5185730847201986], [0.8625669677107966, 1.3591522716185296],
          [1.0059424761037405, 1.3558802229090383], [1.1185781669931203, 1.365175134662209]]
_DECAY_GRAD = ([5.259456733617116, 9.112354245592622],
               [9.43891558785175, -1.9193822589035798, 0.11118121284594717, 0.7213485812779842, 0.15605260256682743],
               -18.645894047348413)
_DECAY_MXSTEP2 = [[1.0, 2.0], [0.8138359956270446, 1.5185402533704202], [0.8619918002168755, 1.3586798293705795],
                  [1.0034173601917922, 1.3536694662203168], [1.1117603247192982, 1.359022776567544]]
_OSC_TS = [0.0, 0.5, 1.7, 3.0]
_OSC_X = [1.0, 0.5403022356799857, -0.9667979026610392, 0.9601698690924118]
_OSC_V = [0.0, -1.682941902537973, 0.5110822852293228, 0.5588303539768172]
_OSC_GRAD = 0.8382448446069103


def _loss(y0, ts, k):
    return jnp.sum(odeint(_decay, y0, ts, k) ** 2)


def test_values_recorded_from_jax(x64):
    ys = odeint(_decay, jnp.asarray(_Y0), jnp.asarray(_TS), 0.7)
    assert ys.shape == (5, 2) and ys.dtype == np.float64
    np.testing.assert_allclose(np.asarray(ys), _DECAY, rtol=1e-12, atol=1e-13)


def test_gradients_recorded_from_jax_and_finite_differences(x64):
    y0, ts, k = jnp.asarray(_Y0), jnp.asarray(_TS), 0.7
    g_y0, g_ts, g_k = jax.grad(_loss, argnums=(0, 1, 2))(y0, ts, k)
    np.testing.assert_allclose(np.asarray(g_y0), _DECAY_GRAD[0], rtol=1e-10)
    np.testing.assert_allclose(np.asarray(g_ts), _DECAY_GRAD[1], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(float(g_k), _DECAY_GRAD[2], rtol=1e-10)
    eps = 1e-6
    for i in range(2):
        e = np.zeros(2)
        e[i] = eps
        fd = (float(_loss(y0 + e, ts, k)) - float(_loss(y0 - e, ts, k))) / (2 * eps)
        np.testing.assert_allclose(float(g_y0[i]), fd, rtol=1e-6)
    fd = (float(_loss(y0, ts, k + eps)) - float(_loss(y0, ts, k - eps))) / (2 * eps)
    np.testing.assert_allclose(float(g_k), fd, rtol=1e-6)
    for i in (0, 2, 4):
        e = np.zeros(5)
        e[i] = eps
        fd = (float(_loss(y0, ts + e, k)) - float(_loss(y0, ts - e, k))) / (2 * eps)
        np.testing.assert_allclose(float(g_ts[i]), fd, rtol=1e-5, atol=1e-7)


def test_pytree_state_and_hmax_recorded_from_jax(x64):
    state = {"x": jnp.asarray(1.0), "v": jnp.asarray(0.0)}
    out = odeint(_oscillator, state, jnp.asarray(_OSC_TS), 2.0, rtol=1e-6, atol=1e-6, hmax=0.1)
    assert set(out) == {"x", "v"} and out["x"].shape == (4,)
    np.testing.assert_allclose(np.asarray(out["x"]), _OSC_X, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(np.asarray(out["v"]), _OSC_V, rtol=1e-12, atol=1e-13)
    g = jax.grad(lambda w: odeint(_oscillator, state, jnp.asarray(_OSC_TS), w, rtol=1e-6, atol=1e-6,
                                  hmax=0.1)["x"][-1])(2.0)
    np.testing.assert_allclose(float(g), _OSC_GRAD, rtol=1e-9)


def test_mxstep_limits_the_steps_per_interval(x64):
    ys = odeint(_decay, jnp.asarray(_Y0), jnp.asarray(_TS), 0.7, mxstep=2)
    np.testing.assert_allclose(np.asarray(ys), _DECAY_MXSTEP2, rtol=1e-10, atol=1e-11)


def test_float32_logistic_close_to_jax():
    # recorded from JAX 0.10.2 (float32): [0.1, 0.23196931183338165, 0.45085278153419495]
    ys = odeint(lambda y, t: y * (1 - y), jnp.asarray(0.1, jnp.float32), jnp.asarray([0.0, 1.0, 2.0], jnp.float32))
    assert ys.dtype == np.float32
    np.testing.assert_allclose(np.asarray(ys), [0.10000000149011612, 0.23196931183338165, 0.45085278153419495],
                               rtol=1e-5)
    exact = 1.0 / (1.0 + 9.0 * np.exp(-np.array([0.0, 1.0, 2.0])))
    np.testing.assert_allclose(np.asarray(ys), exact, rtol=1e-5)


def test_closed_over_values_are_differentiated(x64):
    # func closes over the value being differentiated (closure_convert hoists it)
    def loss(k):
        return odeint(lambda y, t: -k * y, jnp.asarray(1.0), jnp.asarray([0.0, 1.5]))[-1]

    np.testing.assert_allclose(float(jax.grad(loss)(0.4)), -1.5 * np.exp(-0.6), rtol=1e-7)


def test_jit_and_vmap():
    ts = jnp.asarray(_TS, jnp.float32)
    y0 = jnp.asarray(_Y0, jnp.float32)
    eager = odeint(_decay, y0, ts, 0.7)
    jitted = jax.jit(lambda y0, k: odeint(_decay, y0, ts, k))(y0, 0.7)
    np.testing.assert_allclose(np.asarray(jitted), np.asarray(eager), rtol=1e-6, atol=1e-6)
    batched = jax.vmap(lambda y: odeint(_decay, y, ts, 0.7))(jnp.stack([y0, 2 * y0]))
    want = np.stack([np.asarray(odeint(_decay, y, ts, 0.7)) for y in (y0, 2 * y0)])
    np.testing.assert_allclose(np.asarray(batched), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(eager), _DECAY, rtol=1e-5, atol=1e-6)


def test_errors():
    with pytest.raises(TypeError, match="t must be an array of floats"):
        odeint(_decay, jnp.ones(2), jnp.arange(3), 0.7)
    with pytest.raises(TypeError, match="must be arrays or scalars"):
        odeint(lambda y, t, s: -y, jnp.ones(2), jnp.asarray([0.0, 1.0]), "text")
