"""`jnp.vectorize` (NumPy's generalized-ufunc vectorization) and the other
higher-order array functions built on `vmap`: `apply_along_axis`,
`apply_over_axes`, `fromfunction`."""
import functools
import re

from .lax_numpy import asarray, expand_dims, squeeze

_DIM = r"\w+"
_CORE = rf"(?:{_DIM}(?:,{_DIM})*)?"
_ARG = rf"\({_CORE}\)"
_ARGS = rf"{_ARG}(?:,{_ARG})*"
_SIGNATURE = rf"^{_ARGS}->{_ARGS}$"


def _parse_signature(signature):
    """'(m,n),(n)->(m)' -> ([('m','n'), ('n',)], [('m',)])."""
    sig = re.sub(r"\s+", "", signature)
    if not re.match(_SIGNATURE, sig):
        raise ValueError(f"not a valid gufunc signature: {signature}")
    ins, outs = sig.split("->")
    parse = lambda side: [tuple(re.findall(_DIM, a)) for a in re.findall(_ARG, side)]  # noqa: E731
    return parse(ins), parse(outs)


def _broadcast_loop_shape(shapes):
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(-ndim, 0):
        sizes = {s[i] for s in shapes if len(s) >= -i} - {1}
        if len(sizes) > 1:
            raise ValueError(f"cannot broadcast loop dimensions of shapes {shapes}")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def _core_sizes(args, in_core, error_context):
    sizes = {}
    for arg, core in zip(args, in_core):
        if arg.ndim < len(core):
            raise ValueError(
                f"input with shape {arg.shape} does not have enough dimensions for its core "
                f"dimensions {core} {error_context}")
        for name, size in zip(core, arg.shape[arg.ndim - len(core):]):
            if sizes.setdefault(name, size) != size:
                raise ValueError(
                    f"inconsistent size for core dimension {name!r}: {size} vs {sizes[name]} "
                    f"{error_context}")
    return sizes


def vectorize(pyfunc, *, excluded=frozenset(), signature=None):
    """Vectorize `pyfunc` over leading (loop) dimensions, NumPy-style.

    Without `signature` the function is applied elementwise over the broadcast
    of its arguments; with a gufunc `signature` such as `'(n),(n)->()'` the
    trailing core dimensions go to `pyfunc` and the leading ones are looped
    over (by `vmap`, so the result is one batched computation). `excluded`
    names positional indices or keyword names passed through unvectorized."""
    if any(not isinstance(e, (int, str)) for e in excluded):
        raise TypeError(f"jax.numpy.vectorize can only exclude integer or string arguments, got {excluded!r}")
    if any(isinstance(e, int) and e < 0 for e in excluded):
        raise ValueError(f"excluded={excluded!r} contains negative numbers")

    @functools.wraps(pyfunc)
    def wrapped(*args, **kwargs):
        error_context = f"on vectorized function with excluded={excluded!r} and signature={signature!r}"
        static_pos = {i: a for i, a in enumerate(args) if i in excluded}
        static_kw = {k: v for k, v in kwargs.items() if k in excluded}
        dyn_kw = {k: v for k, v in kwargs.items() if k not in excluded}
        if dyn_kw:
            # JAX vectorizes keyword arguments by position too: append them.
            names = tuple(dyn_kw)
        else:
            names = ()
        dyn_args = [a for i, a in enumerate(args) if i not in excluded] + [dyn_kw[k] for k in names]
        n_pos = len(dyn_args) - len(names)

        def call(*dyn):
            full, it = [], iter(dyn[:n_pos])
            for i in range(len(args)):
                full.append(static_pos[i] if i in static_pos else next(it))
            kw = dict(static_kw)
            kw.update(zip(names, dyn[n_pos:]))
            return pyfunc(*full, **kw)

        dyn_args = [asarray(a) for a in dyn_args]
        if signature is not None:
            in_core, out_core = _parse_signature(signature)
            if len(in_core) != len(dyn_args):
                raise TypeError(
                    f"wrong number of positional arguments: expected {len(in_core)}, got "
                    f"{len(dyn_args)} {error_context}")
        else:
            in_core, out_core = [()] * len(dyn_args), None
        sizes = _core_sizes(dyn_args, in_core, error_context)

        def checked(*xs):
            out = call(*xs)
            if out_core is None:
                return out
            outs = out if isinstance(out, tuple) else (out,)
            if len(outs) != len(out_core):
                raise TypeError(
                    f"output must be a tuple of length {len(out_core)} {error_context}, got {out!r}")
            for o, core in zip(outs, out_core):
                o_shape = asarray(o).shape
                if len(o_shape) != len(core):
                    raise ValueError(
                        f"output shape {o_shape} does not match core dimensions {core} {error_context}")
                for name, size in zip(core, o_shape):
                    if sizes.setdefault(name, size) != size:
                        raise ValueError(
                            f"inconsistent size for core dimension {name!r}: {size} vs {sizes[name]} "
                            f"{error_context}")
            return out

        loop_shapes = [a.shape[:a.ndim - len(c)] for a, c in zip(dyn_args, in_core)]
        loop_shape = _broadcast_loop_shape(loop_shapes)
        squeezed, rev_filled = [], []
        for a, ls in zip(dyn_args, loop_shapes):
            ones = tuple(i for i, s in enumerate(ls) if s == 1)
            squeezed.append(squeeze(a, axis=ones) if ones else a)
            rev_filled.append(((1,) * (len(loop_shape) - len(ls)) + tuple(ls))[::-1])

        from ..._vmap import vmap
        f = checked
        expand = []
        for neg, dim_sizes in enumerate(zip(*rev_filled)):
            in_axes = tuple(None if s == 1 else 0 for s in dim_sizes)
            if all(ax is None for ax in in_axes):
                expand.append(len(loop_shape) - 1 - neg)
            else:
                f = vmap(f, in_axes)
        result = f(*squeezed)
        if not expand:
            return result
        if isinstance(result, tuple):
            return tuple(expand_dims(r, tuple(expand)) for r in result)
        return expand_dims(result, tuple(expand))

    return wrapped


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """`func1d` applied to every 1-D slice of `arr` along `axis` (by `vmap`
    over the other axes); the slice results take the place of that axis."""
    from ..._vmap import vmap
    from .util import _arr, _aval, _canon_axis
    arr = _arr(arr)
    nd = _aval(arr).ndim
    axis = _canon_axis(axis, nd)

    def fn(x):
        return func1d(x, *args, **kwargs)

    for i in range(1, nd - axis):
        fn = vmap(fn, in_axes=i, out_axes=-1)
    for _ in range(axis):
        fn = vmap(fn, in_axes=0, out_axes=0)
    return fn(arr)


def apply_over_axes(func, a, axes):
    """`func(a, axis)` applied for each axis in turn, the result keeping `a`'s
    rank (a dropped axis is put back with length 1)."""
    from .util import _arr, _aval
    a = _arr(a)
    for axis in axes:
        b = _arr(func(a, axis))
        if _aval(b).ndim == _aval(a).ndim:
            a = b
        elif _aval(b).ndim == _aval(a).ndim - 1:
            a = expand_dims(b, axis)
        else:
            raise ValueError("function is not returning an array of the correct shape")
    return a


def fromfunction(function, shape, *, dtype=float, **kwargs):
    """`function(i0, i1, ...)` evaluated on the index grid of `shape` (vmapped
    over each axis; the indices have `dtype`)."""
    from ..._vmap import vmap
    from .lax_numpy import arange
    shape = (int(shape),) if isinstance(shape, int) else tuple(int(s) for s in shape)
    fn = function
    for i in range(len(shape)):
        in_axes = [0 if i == j else None for j in range(len(shape))]
        fn = vmap(fn, in_axes=tuple(in_axes[::-1]))
    return fn(*(arange(s, dtype=dtype) for s in shape), **kwargs)
