"""Collectives between processes inside a multi-process `shard_map` body.

Each is one of the core's `process_*` primitives (`prims/process.rs`): the
compiled program calls MPI itself (`exec/mpi.rs`), on the communicator of the
processes that differ only along the collective's mesh axes
(`_src/spmd.AxisLayout.comm`, registered with the core by
`_src/distributed.core_comm`). They keep program order, are never removed, and
are differentiated and batched by the core's rules, also inside `scan`,
`while_loop` and `cond` bodies.

Derivatives across processes follow one convention: the cotangent a process
holds for a value replicated over processes is its share of the total (the
total is the sum over the processes). So the transpose of a sum between
processes sums the shares, a replicated input of `shard_map` sums its shares
when it leaves (`broadcast_in`: `process_pvary`), and a replicated output
splits its cotangent into equal shares when it enters (`share_out`:
`process_share`): gradients equal those of the same `shard_map` on one
process. All are the core's rules, so forward mode and higher orders work too."""
from ..core import Primitive
from . import distributed

process_allreduce_p = Primitive("process_allreduce")
process_allgather_p = Primitive("process_allgather")
process_broadcast_p = Primitive("process_broadcast")
process_pvary_p = Primitive("process_pvary")
process_share_p = Primitive("process_share")


def _comm(layout, axes):
    return distributed.core_comm(layout.comm(axes))


def xsum(x, layout, axes, what="psum"):
    """Sum over the processes along `axes`; its transpose sums the shares."""
    return process_allreduce_p.bind(x, op="sum", comm=_comm(layout, axes),
                                    what=f"{what} over {sorted(axes)}")


def xextremum(x, layout, axes, op):
    """Maximum/minimum over the processes along `axes`; the derivative goes to
    the processes holding the extremum (split evenly between ties)."""
    return process_allreduce_p.bind(x, op=op, comm=_comm(layout, axes),
                                    what=f"p{op} over {sorted(axes)}")


def xgather(x, layout, axis):
    """[processes along `axis`, *x.shape]: every process's `x`, in coordinate order."""
    return process_allgather_p.bind(x, comm=_comm(layout, (axis,)),
                                    processes=layout.nprocs((axis,)),
                                    what=f"all_gather over {axis!r}")


def broadcast_in(x, layout, axes):
    """A value replicated over the processes along `axes` entering the body:
    the identity, whose transpose sums the processes' shares."""
    if not axes:
        return x
    return process_pvary_p.bind(x, comm=_comm(layout, axes),
                                what=f"replicated input over {sorted(axes)}")


def share_out(x, layout, axes):
    """A value replicated over the processes along `axes` leaving the body:
    the identity, whose transpose gives each process an equal share."""
    if not axes:
        return x
    return process_share_p.bind(x, processes=layout.nprocs(axes))


def first_of(x, layout, axes):
    """The value of the process at coordinate 0 along `axes` (`check_vma=False`
    outputs declared replicated)."""
    if not axes:
        return x
    return process_broadcast_p.bind(x, comm=_comm(layout, axes), root=0,
                                    what=f"replicated output over {sorted(axes)}")
