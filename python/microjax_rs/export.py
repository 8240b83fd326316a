"""`jax.export`: serialize a jitted function's program for later use in
Python or, with no Python at all, from Rust (`microjax::export::Program`).

    exp = export.export(jax.jit(f))(x, y)       # trace once
    data = exp.serialize()                       # bytes (format: rust/core/src/export.rs)
    exp2 = export.deserialize(data)
    exp2.call(x, y)                              # same results as f(x, y)

The bytes hold the canonical jaxpr text, the constants in a little-endian
binary section, the determinism mode and the pytree structure of the
arguments and results (standard containers only: tuple, list, dict, None).

`export` records the active `microjax_determinism` mode ("default" or
"portable"); `Exported.call` (eagerly) and Rust's `Program::run` run the
program in it. Under a trace the program is staged into the enclosing
computation and runs in that computation's mode.
"""
import json

from . import _core, core
from .config import config
from .core import ClosedJaxpr, ShapedArray, Tracer
from .tree_util import tree_flatten, tree_unflatten

__all__ = ["Exported", "export", "deserialize"]

_TREE_VERSION = 1


class _Leaf:
    pass


_LEAF = _Leaf()


def _encode_tree(treedef):
    """A JSON-able description of a pytree of standard containers."""
    sample = tree_unflatten(treedef, [_LEAF] * treedef.num_leaves)

    def enc(x):
        if x is _LEAF:
            return "*"
        if x is None:
            return None
        if type(x) is tuple:
            return {"t": [enc(c) for c in x]}
        if type(x) is list:
            return {"l": [enc(c) for c in x]}
        if type(x) is dict:
            if not all(isinstance(k, str) for k in x):
                raise ValueError("export: dict keys of arguments and results must be strings")
            return {"d": [[k, enc(x[k])] for k in sorted(x)]}
        raise ValueError(
            f"export: cannot serialize the pytree node type {type(x).__name__}; "
            "arguments and results must be arrays in tuples, lists, dicts or None")

    return enc(sample)


def _decode_tree(desc):
    def dec(d):
        if d == "*":
            return 0
        if d is None:
            return None
        if isinstance(d, dict) and len(d) == 1:
            (tag, items), = d.items()
            if tag == "t":
                return tuple(dec(c) for c in items)
            if tag == "l":
                return [dec(c) for c in items]
            if tag == "d":
                return {k: dec(v) for k, v in items}
        raise ValueError(f"export: malformed pytree description {d!r}")

    return tree_flatten(dec(desc))[1]


def _aval_desc(a):
    return [list(a.shape), a.dtype_name, bool(a.weak_type)]


class Exported:
    """A traced program with the pytree structure of its arguments and
    results (`jax.export.Exported`)."""

    def __init__(self, fun_name, closed, in_tree, out_tree, determinism="default"):
        self.fun_name = fun_name
        self._closed = closed  # _core.ClosedJaxpr
        self.in_tree = in_tree
        self.out_tree = out_tree
        self.determinism = determinism
        self.in_avals = tuple(ShapedArray.from_triple(t) for t in closed.in_avals())
        self.out_avals = tuple(ShapedArray.from_triple(t) for t in closed.out_avals())

    @property
    def jaxpr(self):
        return ClosedJaxpr(self._closed)

    def __repr__(self):
        ins = ", ".join(a.str_short() for a in self.in_avals)
        outs = ", ".join(a.str_short() for a in self.out_avals)
        return f"Exported({self.fun_name}: ({ins}) -> ({outs}))"

    def serialize(self, vjp_order=0):
        """The program as bytes (see rust/core/src/export.rs for the format)."""
        if vjp_order:
            raise NotImplementedError("export: serializing VJPs (vjp_order > 0) is not supported")
        meta = json.dumps({
            "version": _TREE_VERSION,
            "fun_name": self.fun_name,
            "in_tree": _encode_tree(self.in_tree),
            "out_tree": _encode_tree(self.out_tree),
        })
        return _core.export_program(self._closed, self.determinism, meta)

    def call(self, *args, **kwargs):
        """Runs the program on arguments of the exported structure and types
        (under a trace it is staged as one `pjit`, so it composes with `jit`,
        `grad` and `vmap`)."""
        leaves, in_tree = tree_flatten((args, kwargs))
        if in_tree != self.in_tree:
            raise ValueError(
                f"The invocation args and kwargs must have the same pytree structure as the "
                f"exported function: got {in_tree}, expected {self.in_tree}")
        for k, (x, want) in enumerate(zip(leaves, self.in_avals)):
            got = core.get_aval(x)
            if tuple(got.shape) != tuple(want.shape) or got.dtype_name != want.dtype_name:
                raise ValueError(
                    f"Exported {self.fun_name}: argument {k} has type {got.str_short()} "
                    f"but the exported function takes {want.str_short()}")
        if core.current_trace() is not None or any(isinstance(x, Tracer) for x in leaves):
            outs = core.Primitive("pjit").bind(*leaves, jaxpr=self.jaxpr, name=self.fun_name)
        else:
            vals = [core.to_array(x, want.dtype) for x, want in zip(leaves, self.in_avals)]
            outs = self._closed.run(vals, self.determinism)
        return tree_unflatten(self.out_tree, outs)

    def __reduce__(self):
        return (deserialize, (self.serialize(),))


def export(fun_jit, *, platforms=None, disabled_checks=()):
    """`export(jit(f))(*args, **kwargs)` traces `f` for those arguments'
    shapes and dtypes (abstract `ShapeDtypeStruct`s are fine) and returns an
    `Exported`."""
    impl = getattr(fun_jit, "_impl", None)
    if impl is None:
        raise ValueError(f"Function to be exported must be the result of `jit` but is: {fun_jit!r}")
    if platforms is not None and any(p not in ("cpu",) for p in platforms):
        raise ValueError(f"export: unsupported platforms {platforms}; only 'cpu' is available")

    def do_export(*args, **kwargs):
        from .api import _bind_static, _check_leaf, _split_static, trace_to_jaxpr

        dyn, statics = _split_static(args, impl.static_argnums)
        kw_statics = {k: v for k, v in kwargs.items() if k in impl.static_argnames}
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in impl.static_argnames}
        f = _bind_static(impl.fun, statics, len(args)) if statics else impl.fun
        if kw_statics:
            import functools

            f = functools.partial(f, **kw_statics)
        leaves, in_tree = tree_flatten((tuple(dyn), dyn_kwargs))
        for x in leaves:
            _check_leaf(x)
        closed, out_tree, captures = trace_to_jaxpr(f, leaves, in_tree, impl.name)
        if captures:
            raise ValueError("export: the function closes over values of an enclosing "
                             "transformation; export it outside of jit/grad/vmap")
        exp = Exported(impl.name, closed, in_tree, out_tree,
                       config.read("microjax_determinism"))
        _encode_tree(in_tree)  # fail now, not at serialize(), on unsupported pytrees
        _encode_tree(out_tree)
        return exp

    return do_export


def deserialize(blob):
    """The `Exported` of bytes written by `Exported.serialize()`."""
    closed, meta, determinism = _core.load_program(bytes(blob))
    try:
        info = json.loads(meta)
        if info.get("version") != _TREE_VERSION:
            raise ValueError(f"unsupported metadata version {info.get('version')!r}")
        in_tree = _decode_tree(info["in_tree"])
        out_tree = _decode_tree(info["out_tree"])
        name = info.get("fun_name", "<exported>")
    except (ValueError, KeyError, TypeError) as e:
        raise ValueError(f"export.deserialize: malformed metadata: {e}") from None
    return Exported(name, closed, in_tree, out_tree, determinism)
