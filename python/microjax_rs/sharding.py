"""`jax.sharding`: how an array's elements are laid out over devices.

microjax_rs runs every array whole on one device, so the shardings here
describe that case faithfully: a `SingleDeviceSharding` for a concrete array,
and for an abstract value (`jax.typeof(x).sharding`) a `NamedSharding` over the
empty `AbstractMesh` with an all-`None` (replicated) `PartitionSpec`, as JAX
gives outside any mesh context. `Mesh` / `NamedSharding` over several devices
can be built and inspected, and `device_put(x, NamedSharding(mesh, spec))`
records that layout for the new array (`x.sharding`, `x.addressable_shards`,
`jax.debug.visualize_array_sharding`) though its values stay whole in host
memory (see `_src/array.py`).
"""
import enum
import math
import threading

import numpy as np

from ._src.device_types import Device


class AxisType(enum.Enum):
    """How a mesh axis is partitioned: by the compiler (`Auto`), by the
    program's types (`Explicit`) or by hand (`Manual`)."""

    Auto = enum.auto()
    Explicit = enum.auto()
    Manual = enum.auto()


class PartitionSpec(tuple):
    """Per array dimension, the mesh axis name(s) it is split over, or `None`
    (replicated along that dimension)."""

    UNCONSTRAINED = "unconstrained"

    def __new__(cls, *partitions, unreduced=frozenset(), reduced=frozenset()):
        for p in partitions:
            if not (p is None or p is cls.UNCONSTRAINED or isinstance(p, (str, tuple))):
                raise TypeError(
                    "PartitionSpec entries must be None, a mesh axis name or a tuple of names, "
                    f"got {p!r}")
        obj = super().__new__(cls, partitions)
        obj.unreduced = frozenset(unreduced)
        obj.reduced = frozenset(reduced)
        return obj

    def __repr__(self):
        return "P(" + ", ".join(map(repr, self)) + ")"

    def __reduce__(self):
        return (PartitionSpec, tuple(self))

    def __eq__(self, other):
        # As JAX: entry by entry (P('x') != P('x', None)), though both hash
        # alike (`_canon`), and a plain tuple compares by its entries.
        if isinstance(other, PartitionSpec):
            return (tuple(self) == tuple(other) and self.unreduced == other.unreduced
                    and self.reduced == other.reduced)
        if isinstance(other, tuple):
            return tuple(self) == other
        return NotImplemented

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self):
        return hash(_canon(self))

    def _normalized_spec_for_aval(self, ndim):
        return PartitionSpec(*(tuple(self) + (None,) * (ndim - len(self))))


def _canon(spec):
    # Trailing `None`s do not change a spec (P('x') == P('x', None)), and a
    # one-name tuple is that name.
    parts = [p[0] if isinstance(p, tuple) and len(p) == 1 else p for p in spec]
    while parts and parts[-1] is None:
        parts.pop()
    return tuple(parts)


P = PartitionSpec


class _ComparedByIdentity:
    """Equality and hash by `_identity()`: instances of the same class with
    equal identity tuples are equal."""

    __slots__ = ()

    def __eq__(self, other):
        return isinstance(other, type(self)) and self._identity() == other._identity()

    def __hash__(self):
        return hash((type(self).__name__, self._identity()))


class _BaseMesh:
    @property
    def shape(self):
        return dict(zip(self.axis_names, self.axis_sizes))

    @property
    def shape_tuple(self):
        return tuple(zip(self.axis_names, self.axis_sizes))

    @property
    def size(self):
        return math.prod(self.axis_sizes)

    @property
    def empty(self):
        return len(self.axis_names) == 0

    @property
    def are_all_axes_auto(self):
        return all(t == AxisType.Auto for t in self.axis_types)

    @property
    def are_all_axes_explicit(self):
        return all(t == AxisType.Explicit for t in self.axis_types)

    @property
    def are_all_axes_manual(self):
        return all(t == AxisType.Manual for t in self.axis_types)

    def _axis_types_of(self, axis_types, n):
        if axis_types is None:
            return (AxisType.Auto,) * n
        if isinstance(axis_types, AxisType):
            return (axis_types,) * n
        axis_types = tuple(axis_types)
        if len(axis_types) != n:
            raise ValueError(f"{n} mesh axes need {n} axis_types, got {len(axis_types)}")
        return axis_types


class AbstractMesh(_ComparedByIdentity, _BaseMesh):
    """Mesh axis names and sizes without devices (the mesh of an abstract value)."""

    def __init__(self, axis_sizes, axis_names, axis_types=None):
        self.axis_sizes = tuple(int(s) for s in axis_sizes)
        self.axis_names = tuple(axis_names)
        if len(self.axis_sizes) != len(self.axis_names):
            raise ValueError("AbstractMesh: axis_sizes and axis_names differ in length")
        self.axis_types = self._axis_types_of(axis_types, len(self.axis_names))

    @property
    def abstract_mesh(self):
        return self

    def _identity(self):
        return (self.axis_sizes, self.axis_names, self.axis_types)

    def __repr__(self):
        sizes = ", ".join(f"'{n}': {s}" for n, s in self.shape_tuple)
        types = ", ".join(f"AxisType.{t.name}" for t in self.axis_types)
        return f"AbstractMesh(({sizes}{',' if len(self.axis_names) == 1 else ''}), axis_types=({types}))"


class Mesh(_ComparedByIdentity, _BaseMesh):
    """An n-d array of devices with a name per axis."""

    def __init__(self, devices, axis_names, axis_types=None):
        if isinstance(axis_names, str):
            axis_names = (axis_names,)
        self.devices = np.asarray(devices, dtype=object)
        self.axis_names = tuple(axis_names)
        if self.devices.ndim != len(self.axis_names):
            raise ValueError(
                f"Mesh: devices.ndim == {self.devices.ndim} but {len(self.axis_names)} axis names given")
        if len(set(self.axis_names)) != len(self.axis_names):
            raise ValueError(f"Mesh: repeated axis names {self.axis_names}")
        self.axis_types = self._axis_types_of(axis_types, len(self.axis_names))

    @property
    def axis_sizes(self):
        return tuple(self.devices.shape)

    @property
    def device_ids(self):
        return np.vectorize(lambda d: d.id, otypes=[int])(self.devices)

    @property
    def local_devices(self):
        return list(self.devices.flat)

    @property
    def abstract_mesh(self):
        return AbstractMesh(self.axis_sizes, self.axis_names, self.axis_types)

    def __enter__(self):
        _mesh_stack().append(self)
        return self

    def __exit__(self, *exc):
        stack = _mesh_stack()
        if stack and stack[-1] is self:
            stack.pop()
        return False

    def _identity(self):
        return (self.axis_names, self.axis_types, self.devices.shape, tuple(self.devices.flat))

    def __repr__(self):
        axes = ", ".join(f"'{n}': {s}" for n, s in self.shape_tuple)
        types = ", ".join(t.name for t in self.axis_types)
        return f"Mesh({axes}, axis_types=({types}{',' if len(self.axis_types) == 1 else ''}))"


class Sharding:
    """Base class: how an array is laid out over `device_set`."""

    @property
    def device_set(self):
        raise NotImplementedError

    @property
    def is_fully_replicated(self):
        raise NotImplementedError

    @property
    def memory_kind(self):
        return None

    @property
    def addressable_devices(self):
        return set(self.device_set)  # one process: every device is addressable

    @property
    def is_fully_addressable(self):
        return True

    @property
    def num_devices(self):
        return len(self.device_set)

    def shard_shape(self, global_shape):
        raise NotImplementedError

    def devices_indices_map(self, global_shape):
        """Per device (in the sharding's device order), the tuple of slices
        of an array of `global_shape` it holds."""
        raise NotImplementedError

    def addressable_devices_indices_map(self, global_shape):
        """`devices_indices_map` of the devices this process addresses (all
        of them: one process)."""
        return self.devices_indices_map(global_shape)


class SingleDeviceSharding(_ComparedByIdentity, Sharding):
    """The whole array on one device."""

    def __init__(self, device, *, memory_kind=None):
        if not isinstance(device, Device):
            raise TypeError(f"SingleDeviceSharding needs a Device, got {device!r}")
        self._device = device
        self._memory_kind = memory_kind

    @property
    def device_set(self):
        return {self._device}

    @property
    def is_fully_replicated(self):
        return True

    @property
    def memory_kind(self):
        return self._memory_kind

    def shard_shape(self, global_shape):
        return tuple(global_shape)

    def devices_indices_map(self, global_shape):
        """`{device: (slice(None),) * ndim}`: the device holds everything."""
        return {self._device: (slice(None),) * len(global_shape)}

    def _identity(self):
        return (self._device, self._memory_kind)

    def __repr__(self):
        return f"SingleDeviceSharding(device={self._device!r}, memory_kind={self._memory_kind})"


class NamedSharding(_ComparedByIdentity, Sharding):
    """Array dimensions split over named `mesh` axes as `spec` says."""

    def __init__(self, mesh, spec, *, memory_kind=None):
        if not isinstance(mesh, (Mesh, AbstractMesh)):
            raise TypeError(f"NamedSharding needs a Mesh, got {mesh!r}")
        if not isinstance(spec, PartitionSpec):
            spec = PartitionSpec(*spec) if isinstance(spec, (tuple, list)) else spec
        if not isinstance(spec, PartitionSpec):
            raise TypeError(f"NamedSharding needs a PartitionSpec, got {spec!r}")
        for p in spec:
            for name in (p if isinstance(p, tuple) else (p,)):
                if name is not None and name is not PartitionSpec.UNCONSTRAINED and name not in mesh.axis_names:
                    raise ValueError(f"PartitionSpec {spec} names axis {name!r} not in {mesh}")
        self.mesh = mesh
        self.spec = spec
        self._memory_kind = memory_kind

    def _used_axes(self):
        out = []
        for p in self.spec:
            if p is None or p is PartitionSpec.UNCONSTRAINED:
                continue
            out.extend(p if isinstance(p, tuple) else (p,))
        return out

    @property
    def device_set(self):
        if isinstance(self.mesh, AbstractMesh):
            raise ValueError("a NamedSharding over an AbstractMesh has no devices")
        return set(self.mesh.devices.flat)

    @property
    def is_fully_replicated(self):
        sizes = self.mesh.shape
        return all(sizes[a] == 1 for a in self._used_axes())

    @property
    def memory_kind(self):
        return self._memory_kind

    def _dim_axes(self, ndim):
        """Per array dimension, the mesh axis names it is split over (major
        first; empty when not split)."""
        axes = []
        for p in tuple(self.spec)[:ndim] + (None,) * (ndim - len(self.spec)):
            if p is None or p is PartitionSpec.UNCONSTRAINED:
                axes.append(())
            else:
                axes.append(p if isinstance(p, tuple) else (p,))
        return axes

    def _parts(self, global_shape):
        """`(axis names, number of pieces)` per dimension of `global_shape`;
        raises JAX's ValueError when a dimension does not split evenly."""
        sizes = self.mesh.shape
        out = []
        for i, (dim, names) in enumerate(zip(global_shape, self._dim_axes(len(global_shape)))):
            n = math.prod(sizes[a] for a in names)
            if dim % n:
                raise ValueError(
                    f"Sharding spec {tuple(self.spec)} implies that array axis {i} is partitioned {n} times, "
                    f"but does not evenly divide the dimension size {dim}. Got shape: {tuple(global_shape)} "
                    f"and sharding {self!r}")
            out.append((names, n))
        return out

    def shard_shape(self, global_shape):
        return tuple(dim // n for dim, (_, n) in zip(global_shape, self._parts(global_shape)))

    def devices_indices_map(self, global_shape):
        """Per device of the mesh (row-major mesh order), the tuple of
        slices it holds: a dimension split `n` ways over mesh axes gives
        device at mesh coordinates `c` the piece numbered by `c` over those
        axes (the first named axis the most significant); a dimension not
        split (or split over axes of size 1) is `slice(None)` whole."""
        if not isinstance(self.mesh, Mesh):
            raise ValueError("a NamedSharding over an AbstractMesh has no devices")
        global_shape = tuple(global_shape)
        parts = self._parts(global_shape)
        sizes = self.mesh.shape
        out = {}
        for coords in np.ndindex(*self.mesh.devices.shape):
            at = dict(zip(self.mesh.axis_names, coords))
            index = []
            for dim, (names, n) in zip(global_shape, parts):
                if n == 1:
                    index.append(slice(None))
                    continue
                k = 0
                for a in names:
                    k = k * sizes[a] + at[a]
                step = dim // n
                index.append(slice(k * step, (k + 1) * step))
            out[self.mesh.devices[coords]] = tuple(index)
        return out

    def _identity(self):
        return (self.mesh, self.spec, self._memory_kind)

    def __repr__(self):
        kind = "" if self._memory_kind is None else f", memory_kind={self._memory_kind}"
        return f"NamedSharding(mesh={self.mesh!r}, spec={self.spec!r}{kind})"


_MESH_CTX = threading.local()
_GLOBAL_MESH = [None]


def _mesh_stack():
    stack = getattr(_MESH_CTX, "stack", None)
    if stack is None:
        stack = _MESH_CTX.stack = []
    return stack


def get_mesh():
    """The mesh of the innermost `with mesh:` / `use_mesh(mesh)` / `jax.set_mesh(mesh)`
    context (None outside every one)."""
    stack = _mesh_stack()
    return stack[-1] if stack else _GLOBAL_MESH[0]


def get_abstract_mesh():
    """The abstract mesh of the current mesh context (an empty `AbstractMesh` outside one)."""
    m = get_mesh()
    if m is None:
        return _EMPTY_MESH
    return m if isinstance(m, AbstractMesh) else m.abstract_mesh


class _MeshContext:
    def __init__(self, mesh, previous_global=None, set_global=False):
        self.mesh = mesh
        self.previous_global = previous_global
        self.set_global = set_global

    def __enter__(self):
        _mesh_stack().append(self.mesh)
        return self.mesh

    def __exit__(self, *exc):
        stack = _mesh_stack()
        if stack and stack[-1] is self.mesh:
            stack.pop()
        if self.set_global:
            _GLOBAL_MESH[0] = self.previous_global
        return False


def use_mesh(mesh):
    """Context manager: `mesh` is the current mesh inside it (`shard_map` without
    `mesh=` uses it)."""
    if not isinstance(mesh, (Mesh, AbstractMesh)):
        raise ValueError(f"use_mesh expects a Mesh or AbstractMesh, got {type(mesh).__name__}")
    return _MeshContext(mesh)


def set_mesh(mesh):
    """`jax.set_mesh`: makes `mesh` the current mesh of the process; as a context manager,
    restores the previous one on exit."""
    if mesh is not None and not isinstance(mesh, (Mesh, AbstractMesh)):
        raise ValueError(f"set_mesh expects a Mesh or AbstractMesh, got {type(mesh).__name__}")
    prev = _GLOBAL_MESH[0]
    _GLOBAL_MESH[0] = mesh
    return _MeshContext(mesh, prev, set_global=True) if mesh is not None else _MeshContext(None, prev, True)


class _InferType:
    """`jax.sharding.Infer`: `shard_map`'s default `in_specs`, read from the arguments."""

    def __repr__(self):
        return "Infer"


Infer = _InferType()


def _aval_sharding(ndim):
    """The sharding of an abstract value outside any mesh (JAX's default)."""
    return NamedSharding(_EMPTY_MESH, PartitionSpec(*([None] * ndim)))


_EMPTY_MESH = AbstractMesh((), ())

__all__ = ["AbstractMesh", "AxisType", "Infer", "Mesh", "NamedSharding", "P", "PartitionSpec",
           "Sharding", "SingleDeviceSharding", "get_abstract_mesh", "get_mesh", "set_mesh",
           "use_mesh"]
