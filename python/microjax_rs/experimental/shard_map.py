"""`jax.experimental.shard_map` (JAX's older spelling of `jax.shard_map`)."""
from .._shard_map import shard_map as _shard_map

__all__ = ["shard_map"]


def shard_map(f, mesh, in_specs, out_specs, check_rep=True, auto=frozenset()):
    """`jax.shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs,
    check_vma=check_rep)`; mesh axes in `auto` are left unmapped."""
    names = frozenset(a for a in mesh.axis_names if a not in auto)
    return _shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs,
                      axis_names=names if auto else frozenset(), check_vma=check_rep)
