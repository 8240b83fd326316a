"""Sharding views of concrete arrays: `addressable_shards` (Shard device /
index / replica_id / data), `addressable_data`, `is_fully_addressable`,
`is_fully_replicated`, `devices_indices_map`, and the text picture of
`jax.debug.visualize_array_sharding`, for single-device arrays and for arrays
placed with `device_put(x, NamedSharding(mesh, P(...)))` over several CPU
devices. Expected values recorded from JAX 0.10.2 (8 CPU devices)."""
import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs.sharding import Mesh, NamedSharding, P, SingleDeviceSharding

ALL = slice(None)


@pytest.fixture
def cpus():
    """Eight CPU devices, the CPU the only platform."""
    jax.config.update("jax_num_cpu_devices", 8)
    jax.config.update("jax_platforms", "cpu")
    yield jax.devices("cpu")
    jax.config.update("jax_num_cpu_devices", -1)
    jax.config.update("jax_platforms", None)


def x44():
    return jnp.arange(16.0, dtype=jnp.float32).reshape(4, 4)


def mesh22():
    return jax.make_mesh((2, 2), ("a", "b"))


# recorded from JAX 0.10.2: per spec over the ('a': 2, 'b': 2) mesh of devices 0..3, the
# (device id, index, replica_id) of each addressable shard of a float32[4, 4] array
SHARDS = {
    P("a", "b"): [(0, (slice(0, 2), slice(0, 2)), 0), (1, (slice(0, 2), slice(2, 4)), 0),
                  (2, (slice(2, 4), slice(0, 2)), 0), (3, (slice(2, 4), slice(2, 4)), 0)],
    P("a", None): [(0, (slice(0, 2), ALL), 0), (1, (slice(0, 2), ALL), 1),
                   (2, (slice(2, 4), ALL), 0), (3, (slice(2, 4), ALL), 1)],
    P(None, "b"): [(0, (ALL, slice(0, 2)), 0), (1, (ALL, slice(2, 4)), 0),
                   (2, (ALL, slice(0, 2)), 1), (3, (ALL, slice(2, 4)), 1)],
    P(): [(0, (ALL, ALL), 0), (1, (ALL, ALL), 1), (2, (ALL, ALL), 2), (3, (ALL, ALL), 3)],
    P("b", "a"): [(0, (slice(0, 2), slice(0, 2)), 0), (1, (slice(2, 4), slice(0, 2)), 0),
                  (2, (slice(0, 2), slice(2, 4)), 0), (3, (slice(2, 4), slice(2, 4)), 0)],
    P(("a", "b"), None): [(0, (slice(0, 1), ALL), 0), (1, (slice(1, 2), ALL), 0),
                          (2, (slice(2, 3), ALL), 0), (3, (slice(3, 4), ALL), 0)],
    P(None, ("a", "b")): [(0, (ALL, slice(0, 1)), 0), (1, (ALL, slice(1, 2)), 0),
                          (2, (ALL, slice(2, 3)), 0), (3, (ALL, slice(3, 4)), 0)],
}
# recorded from JAX 0.10.2: `y.addressable_data(1)` for each spec, flattened
DATA_1 = {
    P("a", "b"): [2, 3, 6, 7], P("a", None): list(range(8)), P(None, "b"): [2, 3, 6, 7, 10, 11, 14, 15],
    P(): list(range(16)), P("b", "a"): [8, 9, 12, 13], P(("a", "b"), None): [4, 5, 6, 7],
    P(None, ("a", "b")): [1, 5, 9, 13],
}


def test_single_device_array():
    x = x44()
    assert x.is_fully_addressable is True and x.is_fully_replicated is True
    (shard,) = x.addressable_shards
    assert shard.device == jax.devices("cpu")[0] and shard.index == (ALL, ALL) and shard.replica_id == 0
    np.testing.assert_array_equal(shard.data, np.arange(16.0).reshape(4, 4))
    assert shard.data.devices() == {jax.devices("cpu")[0]}
    assert isinstance(shard, jax.Shard)
    np.testing.assert_array_equal(x.addressable_data(0), x)
    np.testing.assert_array_equal(x.addressable_data(3), x)  # fully replicated: any index, as JAX
    assert len(x.global_shards) == 1
    # recorded from JAX 0.10.2
    assert repr(shard) == ("Shard(device=CpuDevice(id=0), index=(slice(None, None, None), slice(None, None, None)), "
                           "replica_id=0, data=[[ 0.  1.  2.  3.]\n [ 4.  5.  6.  7.]\n [ 8.  9. 10. 11.]\n"
                           " [12. 13. 14. 15.]])")
    s = jnp.float32(3)
    assert [(sh.index, sh.replica_id) for sh in s.addressable_shards] == [((), 0)]
    assert repr(s.addressable_shards[0]) == "Shard(device=CpuDevice(id=0), index=(), replica_id=0, data=3.0)"


@pytest.mark.parametrize("spec", list(SHARDS), ids=str)
def test_named_sharding_shards(cpus, spec):
    x = x44()
    sharding = NamedSharding(mesh22(), spec)
    y = jax.device_put(x, sharding)
    assert y is not x and x.sharding == SingleDeviceSharding(cpus[0], memory_kind="device")
    assert y.sharding == NamedSharding(mesh22(), spec, memory_kind="device")
    assert y.is_fully_addressable is True
    assert y.is_fully_replicated is (spec == P())
    assert y.devices() == set(cpus[:4])
    got = [(sh.device.id, sh.index, sh.replica_id) for sh in y.addressable_shards]
    assert got == SHARDS[spec]
    assert sharding.devices_indices_map((4, 4)) == {cpus[d]: idx for d, idx, _ in SHARDS[spec]}
    full = np.arange(16.0, dtype=np.float32).reshape(4, 4)
    for sh in y.addressable_shards:
        np.testing.assert_array_equal(sh.data, full[sh.index])
        assert sh.data.devices() == {sh.device} and sh.data.dtype == np.float32
    np.testing.assert_array_equal(np.ravel(y.addressable_data(1)), DATA_1[spec])
    np.testing.assert_array_equal(y, full)  # the values are unchanged
    np.testing.assert_array_equal(y * 2, full * 2)
    np.testing.assert_array_equal(jax.jit(lambda a: a + 1)(y), full + 1)


def test_mesh_in_a_permuted_device_order(cpus):
    # recorded from JAX 0.10.2: shards come in mesh order, devices as the mesh holds them
    mesh = Mesh(np.array(cpus[:4])[[3, 1, 2, 0]].reshape(2, 2), ("a", "b"))
    y = jax.device_put(x44(), NamedSharding(mesh, P("a", "b")))
    assert [(sh.device.id, sh.index) for sh in y.addressable_shards] == [
        (3, (slice(0, 2), slice(0, 2))), (1, (slice(0, 2), slice(2, 4))),
        (2, (slice(2, 4), slice(0, 2))), (0, (slice(2, 4), slice(2, 4)))]


def test_mesh_axis_of_size_one_is_whole(cpus):
    # recorded from JAX 0.10.2: a dimension split over an axis of size 1 is slice(None)
    y = jax.device_put(x44(), NamedSharding(jax.make_mesh((1, 4), ("a", "b")), P("a", "b")))
    assert [(sh.device.id, sh.index, sh.replica_id) for sh in y.addressable_shards] == [
        (i, (ALL, slice(i, i + 1)), 0) for i in range(4)]
    assert y.is_fully_replicated is False


def test_one_dimensional_split(cpus):
    y = jax.device_put(jnp.arange(8.0), NamedSharding(jax.make_mesh((4,), ("x",)), P("x")))
    # recorded from JAX 0.10.2
    assert [(sh.device.id, sh.index, sh.replica_id) for sh in y.addressable_shards] == [
        (0, (slice(0, 2),), 0), (1, (slice(2, 4),), 0), (2, (slice(4, 6),), 0), (3, (slice(6, 8),), 0)]
    np.testing.assert_array_equal(y.addressable_data(2), [4.0, 5.0])
    np.testing.assert_array_equal(y.addressable_data(3), [6.0, 7.0])
    with pytest.raises(IndexError):  # JAX: list index out of range
        y.addressable_data(4)
    assert y.device == y.sharding  # JAX 0.10: `.device` of a multi-device array is its sharding


def test_single_device_placement(cpus):
    x = x44()
    y = jax.device_put(x, cpus[2])
    # recorded from JAX 0.10.2
    assert repr(y.sharding) == "SingleDeviceSharding(device=CpuDevice(id=2), memory_kind=device)"
    assert y.device == cpus[2] and y.devices() == {cpus[2]}
    assert y.addressable_shards[0].device == cpus[2] and y.addressable_shards[0].data.devices() == {cpus[2]}
    assert jax.device_put(y, cpus[0]).device == cpus[0]
    assert jax.device_put(x, SingleDeviceSharding(cpus[5])).device == cpus[5]
    assert x.device == cpus[0]  # the source array is not moved
    assert jax.device_put(x) is x


def test_uneven_split_raises_jax_value_error(cpus):
    mesh = jax.make_mesh((4,), ("x",))
    # recorded from JAX 0.10.2 (up to the repr of the sharding)
    with pytest.raises(ValueError, match=r"^Sharding spec \('x',\) implies that array axis 0 is partitioned 4 "
                                         r"times, but does not evenly divide the dimension size 5\. Got "
                                         r"shape: \(5,\) and sharding NamedSharding"):
        jax.device_put(jnp.arange(5.0), NamedSharding(mesh, P("x")))


def test_placement_goes_with_the_array(cpus):
    y = jax.device_put(jnp.arange(4.0), NamedSharding(jax.make_mesh((2,), ("x",)), P("x")))
    from microjax_rs._src import array as placement

    key = id(y)
    assert key in placement._PLACED
    del y
    assert key not in placement._PLACED


def test_tracers_under_jit_see_the_default_device(cpus):
    seen = []

    @jax.jit
    def f(a):
        jax.debug.inspect_array_sharding(a, callback=seen.append)
        return a * 2

    np.testing.assert_array_equal(f(jnp.ones(3)), 2 * np.ones(3))
    assert seen == [SingleDeviceSharding(cpus[0], memory_kind="device")]
# recorded from JAX 0.10.2 (jax.debug.visualize_array_sharding, rich without colour)
PICTURES = {
    "single (4, 4)": """\
┌───────────────────────┐
│                       │
│                       │
│                       │
│                       │
│         CPU 0         │
│                       │
│                       │
│                       │
│                       │
└───────────────────────┘
""",
    "single (5,)": """\
┌───────┐
│ CPU 0 │
└───────┘
""",
    "mesh P('a', 'b')": """\
┌──────────┬──────────┐
│          │          │
│  CPU 0   │  CPU 1   │
│          │          │
│          │          │
├──────────┼──────────┤
│          │          │
│  CPU 2   │  CPU 3   │
│          │          │
│          │          │
└──────────┴──────────┘
""",
    "mesh P('a', None)": """\
┌───────────────────────┐
│                       │
│        CPU 0,1        │
│                       │
│                       │
├───────────────────────┤
│                       │
│        CPU 2,3        │
│                       │
│                       │
└───────────────────────┘
""",
    "mesh P(None, 'b')": """\
┌──────────┬──────────┐
│          │          │
│          │          │
│          │          │
│          │          │
│ CPU 0,2  │ CPU 1,3  │
│          │          │
│          │          │
│          │          │
│          │          │
└──────────┴──────────┘
""",
    "mesh P()": """\
┌───────────────────────┐
│                       │
│                       │
│                       │
│                       │
│      CPU 0,1,2,3      │
│                       │
│                       │
│                       │
│                       │
└───────────────────────┘
""",
    "mesh P('b', 'a')": """\
┌──────────┬──────────┐
│          │          │
│  CPU 0   │  CPU 2   │
│          │          │
│          │          │
├──────────┼──────────┤
│          │          │
│  CPU 1   │  CPU 3   │
│          │          │
│          │          │
└──────────┴──────────┘
""",
    "mesh P(('a', 'b'), None)": """\
┌───────────────────────┐
│         CPU 0         │
├───────────────────────┤
│         CPU 1         │
├───────────────────────┤
│         CPU 2         │
├───────────────────────┤
│         CPU 3         │
└───────────────────────┘
""",
    "mesh P(None, ('a', 'b'))": """\
┌───────┬───────┬───────┬───────┐
│       │       │       │       │
│       │       │       │       │
│       │       │       │       │
│       │       │       │       │
│ CPU 0 │ CPU 1 │ CPU 2 │ CPU 3 │
│       │       │       │       │
│       │       │       │       │
│       │       │       │       │
│       │       │       │       │
└───────┴───────┴───────┴───────┘
""",
    "1-d P('x')": """\
┌───────┬───────┬───────┬───────┐
│ CPU 0 │ CPU 1 │ CPU 2 │ CPU 3 │
└───────┴───────┴───────┴───────┘
""",
    "1-d P()": """\
┌───────────┐
│CPU 0,1,2,3│
└───────────┘
""",
    "mesh P('a', 'b') scale=0.5": """\
┌───────┬───────┐
│ CPU 0 │ CPU 1 │
├───────┼───────┤
│ CPU 2 │ CPU 3 │
└───────┴───────┘
""",
    "single (5,) min_width=20": """\
┌──────────────────┐
│      CPU 0       │
└──────────────────┘
""",
}


def _picture(capsys, arr, **kwargs):
    jax.debug.visualize_array_sharding(arr, **kwargs)
    return capsys.readouterr().out


def test_visualize_single_device(capsys):
    assert _picture(capsys, x44()) == PICTURES["single (4, 4)"]
    assert _picture(capsys, jnp.arange(5.0)) == PICTURES["single (5,)"]
    assert _picture(capsys, jnp.arange(5.0), min_width=20) == PICTURES["single (5,) min_width=20"]


@pytest.mark.parametrize("spec", list(SHARDS), ids=str)
def test_visualize_named_sharding(cpus, capsys, spec):
    y = jax.device_put(x44(), NamedSharding(mesh22(), spec))
    assert _picture(capsys, y) == PICTURES[f"mesh {spec!r}"]


def test_visualize_one_dimensional_and_scaled(cpus, capsys):
    mesh = jax.make_mesh((4,), ("x",))
    assert _picture(capsys, jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("x")))) == PICTURES["1-d P('x')"]
    assert _picture(capsys, jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P()))) == PICTURES["1-d P()"]
    y = jax.device_put(x44(), NamedSharding(mesh22(), P("a", "b")))
    assert _picture(capsys, y, scale=0.5) == PICTURES["mesh P('a', 'b') scale=0.5"]
    jax.debug.visualize_sharding((4, 4), y.sharding, scale=0.5)
    assert capsys.readouterr().out == PICTURES["mesh P('a', 'b') scale=0.5"]


def test_visualize_rejects_other_ranks():
    # recorded from JAX 0.10.2
    for arr in (jnp.ones((2, 2, 2)), jnp.ones(())):
        with pytest.raises(ValueError, match=r"^`visualize_sharding` only works for shapes with 1 and 2 "
                                             r"dimensions\.$"):
            jax.debug.visualize_array_sharding(arr)


def test_with_sharding_constraint_as_jax():
    # behaviour and messages recorded from JAX 0.10.2 (one CPU device)
    from microjax_rs.sharding import AxisType
    wsc = jax.lax.with_sharding_constraint
    x = jnp.arange(16.0).reshape(4, 4)
    auto = jax.make_mesh((1,), ("x",), axis_types=(AxisType.Auto,))
    s = NamedSharding(auto, P("x"))
    y = wsc(x, s)
    np.testing.assert_array_equal(np.asarray(y), np.asarray(x))
    on_cpu = all(d.platform == "cpu" for d in auto.devices.flat)  # (a stand-in GPU: left in place)
    if on_cpu:
        assert (y.sharding.mesh, y.sharding.spec) == (auto, P("x"))
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda v: wsc(v * 2, s))(x)), 2 * np.asarray(x))
    np.testing.assert_array_equal(np.asarray(jax.grad(lambda v: jnp.sum(wsc(v, s) ** 2))(x)), 2 * np.asarray(x))
    np.testing.assert_array_equal(np.asarray(jax.vmap(lambda v: wsc(v + 1, s))(x)), np.asarray(x) + 1)
    a, b = wsc((x, x + 1), NamedSharding(auto, P()))  # a prefix: one sharding for the whole tree
    if on_cpu:
        assert a.sharding.spec == b.sharding.spec == P() and a.sharding.mesh == auto
    np.testing.assert_array_equal(np.asarray(b), np.asarray(x) + 1)
    assert float(wsc(1.0, NamedSharding(auto, P()))) == 1.0
    with pytest.raises(ValueError, match="tree prefix of the corresponding value"):
        wsc((x, x), (s,))
    with pytest.raises(ValueError, match="is only valid for values of rank at least 3, but was applied "
                                         "to a value of rank 2"):
        wsc(x, NamedSharding(auto, P("x", None, None)))
    with pytest.raises(ValueError, match="can only refer to Auto axes of the mesh"):
        wsc(x, NamedSharding(jax.make_mesh((1,), ("x",)), P("x")))  # make_mesh's axes are Explicit
    with pytest.raises(RuntimeError, match="requires a non-empty mesh in context"):
        wsc(x, P("x"))
    with pytest.raises(ValueError, match="got sharding None which is not allowed"):
        wsc(x, None)
    with pytest.raises(TypeError, match="expected to be PartitionSpec instances or None, but got 3"):
        wsc(x, 3)
