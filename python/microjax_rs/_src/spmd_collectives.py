"""Collectives between processes inside a multi-process `shard_map` body.

Each is the host callback (an `io_callback`: kept in program order, never
removed) that combines the processes' values through MPI
(`_src/distributed.py`), with its derivative given by `custom_vjp`.

Derivatives across processes follow one convention: the cotangent a process
holds for a value replicated over processes is its share of the total (the
total is the sum over the processes). So the transpose of a sum between
processes sums the shares (`_xsum`), a replicated input of `shard_map` sums its
shares when it leaves (`broadcast_in`), and a replicated output splits its
cotangent into equal shares when it enters (`share_out`): gradients equal those
of the same `shard_map` on one process."""
import numpy as np

from . import distributed

# ------------------------------------------------------------ traced pieces

def _adopt(fn):
    """`fn` returning a fresh NumPy array, its result adopted as an array
    without a copy (the buffer is the callback's own, so nothing else
    writes it)."""
    from .. import numpy as jnp

    def host(*args):
        r = np.asarray(fn(*args))
        if not r.flags.c_contiguous:
            r = r.copy(order="C")  # (ascontiguousarray would make a scalar 1-d)
        return jnp.from_dlpack(r)

    return host


def _io(fn, x):
    from .. import core
    from .._callback import io_callback
    from ..api import ShapeDtypeStruct
    aval = core.get_aval(x)
    return io_callback(_adopt(fn), ShapeDtypeStruct(aval.shape, aval.dtype), x)


def _custom_vjp(fwd_fn, bwd_fn):
    from ..custom_derivatives import custom_vjp
    f = custom_vjp(fwd_fn)
    f.defvjp(lambda x: (fwd_fn(x), None), lambda _, ct: (bwd_fn(ct),))
    return f


def xsum(x, layout, axes, what="psum"):
    """Sum over the processes along `axes`; its transpose sums the shares."""
    comm = layout.comm(axes)
    desc = f"{what} over {sorted(axes)}"

    def host(v):
        return distributed.allreduce(v, "sum", comm, desc)

    def f(v):
        return _io(host, v)

    g = _custom_vjp(f, lambda ct: _xsum_ct(ct, comm, desc))
    return g(x)


def _xsum_ct(ct, comm, desc):
    def host(v):
        return distributed.allreduce(v, "sum", comm, desc + " (transpose)")
    from .. import core
    if core.get_aval(ct).dtype_name == "float0":
        return ct
    return _io(host, ct)


def xextremum(x, layout, axes, op):
    """Maximum/minimum over the processes along `axes`; the derivative goes to
    the processes holding the extremum (split evenly between ties)."""
    from .. import numpy as jnp
    from ..custom_derivatives import custom_vjp
    comm = layout.comm(axes)
    desc = f"p{op} over {sorted(axes)}"

    def host(v):
        return distributed.allreduce(v, op, comm, desc)

    @custom_vjp
    def f(v):
        return _io(host, v)

    def fwd(v):
        y = _io(host, v)
        return y, (v, y)

    def bwd(res, ct):
        v, y = res
        mask = (v == y).astype(ct.dtype)
        count = xsum(mask, layout, axes, desc + " ties")
        return (xsum(ct, layout, axes, desc + " cotangent") * mask / jnp.maximum(count, 1),)

    f.defvjp(fwd, bwd)
    return f(x)


def xgather(x, layout, axis):
    """[processes along `axis`, *x.shape]: every process's `x`, in coordinate order."""
    comm = layout.comm((axis,))
    n = layout.nprocs((axis,))
    from .. import core
    from .. import numpy as jnp
    from .._callback import io_callback
    from ..api import ShapeDtypeStruct
    from ..custom_derivatives import custom_vjp
    desc = f"all_gather over {axis!r}"

    def host(v):
        return distributed.allgather(v, comm, desc)

    def run(v):
        aval = core.get_aval(v)
        return io_callback(_adopt(host), ShapeDtypeStruct((n,) + tuple(aval.shape), aval.dtype), v)

    @custom_vjp
    def f(v):
        return run(v)

    def bwd(_, ct):
        # The shares of every process's cotangent for its own piece.
        total = xsum(ct, layout, (axis,), desc + " transpose")
        k = layout.offset(axis) // layout.box[axis][1]
        return (jnp.take(total, k, axis=0),)

    f.defvjp(lambda v: (run(v), None), bwd)
    return f(x)


def broadcast_in(x, layout, axes):
    """A value replicated over the processes along `axes` entering the body:
    the identity, whose transpose sums the processes' shares."""
    if not axes:
        return x
    desc = f"replicated input over {sorted(axes)}"
    comm = layout.comm(axes)
    g = _custom_vjp(lambda v: v, lambda ct: _xsum_ct(ct, comm, desc))
    return g(x)


def share_out(x, layout, axes):
    """A value replicated over the processes along `axes` leaving the body:
    the identity, whose transpose gives each process an equal share."""
    if not axes:
        return x
    n = layout.nprocs(axes)
    g = _custom_vjp(lambda v: v, lambda ct: ct / n)
    return g(x)


def first_of(x, layout, axes):
    """The value of the process at coordinate 0 along `axes` (`check_vma=False`
    outputs declared replicated)."""
    if not axes:
        return x
    comm = layout.comm(axes)
    desc = f"replicated output over {sorted(axes)}"
    return _io(lambda v: distributed.bcast(v, comm, 0, desc), x)

