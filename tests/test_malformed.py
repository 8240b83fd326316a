"""A corpus of malformed calls over the public API.

Every entry must raise an ordinary `Exception` subclass with a non-empty
message: never pyo3's `PanicException` (a `BaseException`), never an abort
of the process, never a hang. Entries whose exception type JAX fixes assert
that type (TypeError for dtypes and structures, ValueError for shapes,
IndexError for axes and indices, MemoryError for buffers over the
allocation budget). Everything runs in this process: the point is that
nothing aborts it.
"""
import pickle
import re

import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import export, lax, random
from microjax_rs.errors import UnexpectedTracerError

CASES = []


def case(name, fn, exc=Exception, match=None):
    CASES.append((name, fn, exc, match))


X = np.arange(6.0, dtype=np.float32).reshape(2, 3)
V = np.arange(3.0, dtype=np.float32)
I = np.arange(3, dtype=np.int32)
HUGE = 10**12
OVER = 2**63


def raises_only(fn):
    """A callable that forwards to `fn` (keeps lambdas short below)."""
    return fn


# --- wrong shapes to jnp / lax ------------------------------------------------
case("add-shape", lambda: jnp.add(jnp.ones((2, 3)), jnp.ones((4,))), ValueError, "shapes")
case("matmul-shape", lambda: jnp.ones((2, 3)) @ jnp.ones((4, 5)), TypeError)
case("dot-shape", lambda: jnp.dot(jnp.ones(3), jnp.ones(4)), TypeError)
case("reshape-size", lambda: jnp.reshape(jnp.ones(6), (4, 2)), TypeError)
case("reshape-two-minus-one", lambda: jnp.reshape(jnp.ones(6), (-1, -1)))
case("reshape-negative", lambda: jnp.reshape(jnp.ones(6), (-2, -3)))
case("concatenate-shape", lambda: jnp.concatenate([jnp.ones((2, 3)), jnp.ones((2, 4))]), TypeError)
case("concatenate-rank", lambda: jnp.concatenate([jnp.ones((2, 3)), jnp.ones(3)]))
case("concatenate-empty", lambda: jnp.concatenate([]), ValueError)
case("stack-shape", lambda: jnp.stack([jnp.ones(2), jnp.ones(3)]), ValueError)
case("where-shape", lambda: jnp.where(jnp.ones(2) > 0, jnp.ones(3), jnp.ones(4)), ValueError)
case("einsum-bad-spec", lambda: jnp.einsum("ij,jk->ik", jnp.ones((2, 3)), jnp.ones((4, 5))))
case("einsum-bad-letters", lambda: jnp.einsum("i?,j->", jnp.ones(2), jnp.ones(2)))
case("transpose-perm", lambda: jnp.transpose(jnp.ones((2, 3)), (0, 0)), ValueError)
case("transpose-perm-len", lambda: jnp.transpose(jnp.ones((2, 3)), (0,)), ValueError)
case("squeeze-nonunit", lambda: jnp.squeeze(jnp.ones((2, 3)), axis=0), ValueError)
case("expand-dims-axis", lambda: jnp.expand_dims(jnp.ones(3), 5))
case("sum-axis", lambda: jnp.sum(jnp.ones((2, 3)), axis=2))
case("sum-axis-negative", lambda: jnp.sum(jnp.ones((2, 3)), axis=-3))
case("sum-axis-duplicate", lambda: jnp.sum(jnp.ones((2, 3)), axis=(0, 0)), ValueError)
case("mean-axis", lambda: jnp.mean(jnp.ones(3), axis=1))
case("max-axis", lambda: jnp.max(jnp.ones(3), axis=7))
case("argmax-axis", lambda: jnp.argmax(jnp.ones(3), axis=1))
case("cumsum-axis", lambda: jnp.cumsum(jnp.ones(3), axis=1))
case("sort-axis", lambda: jnp.sort(jnp.ones(3), axis=1))
case("argsort-axis", lambda: jnp.argsort(jnp.ones(3), axis=-2))
case("flip-axis", lambda: jnp.flip(jnp.ones(3), axis=1))
case("roll-axis", lambda: jnp.roll(jnp.ones(3), 1, axis=2))
case("moveaxis-axis", lambda: jnp.moveaxis(jnp.ones((2, 3)), 0, 5))
case("swapaxes-axis", lambda: jnp.swapaxes(jnp.ones((2, 3)), 0, 4))
case("take-axis", lambda: jnp.take(jnp.ones(3), I, axis=3))
case("index-too-many-2d", lambda: jnp.ones((2, 3))[0, 0, 0], IndexError)
case("index-too-many", lambda: jnp.ones(3)[0, 0], IndexError)
case("index-bool-mask-shape-2d", lambda: jnp.ones((2, 3))[np.array([True, False, True])], IndexError)
case("index-float", lambda: jnp.ones(3)[1.5], TypeError)  # JAX: TypeError for a float indexer
case("index-string", lambda: jnp.ones(3)["a"])
case("index-two-ellipsis", lambda: jnp.ones((2, 3))[..., ...], IndexError)
case("index-bool-mask-shape", lambda: jnp.ones(3)[np.array([True, False])], IndexError)
case("at-set-shape", lambda: jnp.ones(3).at[0:2].set(jnp.ones(5)))
case("split-uneven", lambda: jnp.split(jnp.ones(5), 2), ValueError)
case("split-axis", lambda: jnp.split(jnp.ones(4), 2, axis=1))
case("tensordot-shape", lambda: jnp.tensordot(jnp.ones((2, 3)), jnp.ones((4, 5)), axes=1), TypeError)
case("broadcast-to-incompatible", lambda: jnp.broadcast_to(jnp.ones(3), (4,)), ValueError)
case("broadcast-to-fewer-dims", lambda: jnp.broadcast_to(jnp.ones((2, 3)), (3,)), ValueError)
case("broadcast-shapes", lambda: jnp.broadcast_shapes((2,), (3,)), ValueError)
case("outer-bad", lambda: jnp.inner(jnp.ones(3), jnp.ones(4)), TypeError)
case("diag-rank3", lambda: jnp.diag(jnp.ones((2, 2, 2))), ValueError)
case("trace-rank1", lambda: jnp.trace(jnp.ones(3)))
case("repeat-negative", lambda: jnp.repeat(jnp.ones(3), -1))
case("pad-negative", lambda: jnp.pad(jnp.ones(3), -1))
case("pad-bad-width-shape", lambda: jnp.pad(jnp.ones(3), ((1, 2), (3, 4))))
case("pad-bad-mode", lambda: jnp.pad(jnp.ones(3), 1, mode="nope"))
case("linalg-inv-nonsquare", lambda: jnp.linalg.inv(jnp.ones((2, 3))))
case("linalg-cholesky-rank1", lambda: jnp.linalg.cholesky(jnp.ones(3)))
case("linalg-solve-shape", lambda: jnp.linalg.solve(jnp.eye(3), jnp.ones(4)))
case("linalg-det-int", lambda: jnp.linalg.det(jnp.ones((2, 3))))
case("conv-shape", lambda: lax.conv(jnp.ones((1, 2, 5)), jnp.ones((3, 4, 2)), (1,), "VALID"))
case("conv-rank", lambda: lax.conv(jnp.ones((1, 2)), jnp.ones((3, 4, 2)), (1,), "VALID"))
case("lax-add-shape", lambda: lax.add(jnp.ones(2), jnp.ones(3)), TypeError)
case("lax-dot-general-dims", lambda: lax.dot_general(jnp.ones((2, 3)), jnp.ones((3, 4)), (((5,), (0,)), ((), ()))))
case("lax-slice-oob", lambda: lax.slice(jnp.ones(3), (0,), (5,)))
case("lax-slice-rank", lambda: lax.slice(jnp.ones(3), (0, 0), (1, 1)))
case("lax-dynamic-slice-size", lambda: lax.dynamic_slice(jnp.ones(3), (0,), (5,)))
case("lax-reduce-axes", lambda: lax.reduce_sum(jnp.ones(3), (4,)) if hasattr(lax, "reduce_sum")
     else lax.reduce(jnp.ones(3), 0.0, lax.add, (4,)))
case("lax-transpose-perm", lambda: lax.transpose(jnp.ones((2, 3)), (1, 1)))
case("lax-broadcast-in-dim-dims", lambda: lax.broadcast_in_dim(jnp.ones(3), (4, 5), (0,)))
case("lax-squeeze-nonunit", lambda: lax.squeeze(jnp.ones((2, 3)), (0,)))
case("lax-concatenate-dim", lambda: lax.concatenate([jnp.ones(3), jnp.ones(3)], 1))
case("lax-select-n-shapes", lambda: lax.select_n(jnp.array(True), jnp.ones(2), jnp.ones(3)))
case("lax-gather-bad", lambda: lax.gather(jnp.ones(3), jnp.zeros((1, 1), jnp.int32),
                                         lax.GatherDimensionNumbers((0,), (0,), (0,)), (5,)))
case("lax-iota-dimension", lambda: lax.broadcasted_iota(jnp.int32, (2, 3), 4))
case("lax-reshape-dims", lambda: lax.reshape(jnp.ones(6), (4, 2)))
case("lax-top-k-too-large", lambda: lax.top_k(jnp.ones(3), 5))
case("lax-reduce-window-rank", lambda: lax.reduce_window(jnp.ones(3), 0.0, lax.add, (2, 2), (1, 1), "VALID"))

# --- wrong dtypes ------------------------------------------------------------
case("dtype-complex256", lambda: jnp.zeros(3, dtype="complex256"), TypeError)
case("dtype-unknown", lambda: jnp.zeros(3, dtype="float7"), TypeError)
case("dtype-object", lambda: jnp.zeros(3, dtype=object), TypeError)
case("asarray-string", lambda: jnp.asarray("abc"), TypeError)
case("asarray-mixed-list", lambda: jnp.asarray([1, "a"]), TypeError)
case("asarray-object", lambda: jnp.asarray(object()), TypeError)
case("asarray-ragged", lambda: jnp.asarray([[1, 2], [3]]))
case("asarray-none", lambda: jnp.asarray(None), TypeError)
case("asarray-dict", lambda: jnp.asarray({"a": 1}), TypeError)
case("sin-string", lambda: jnp.sin("abc"), TypeError)
case("add-object", lambda: jnp.add(jnp.ones(3), object()), TypeError)
case("lax-add-dtypes", lambda: lax.add(jnp.ones(3, jnp.float32), jnp.ones(3, jnp.int32)), TypeError)
case("lax-sin-int", lambda: lax.sin(jnp.ones(3, jnp.int32)), TypeError)
case("bitwise-and-float", lambda: jnp.bitwise_and(jnp.ones(3), jnp.ones(3)), TypeError)
case("left-shift-float", lambda: jnp.left_shift(jnp.ones(3), 1), TypeError)
case("lax-shift-float", lambda: lax.shift_left(jnp.ones(3), jnp.ones(3)), TypeError)
case("lax-convert-bad-dtype", lambda: lax.convert_element_type(jnp.ones(3), "float7"), TypeError)
case("lax-convert-complex256", lambda: lax.convert_element_type(jnp.ones(3), "complex256"), TypeError)
case("lax-dot-dtypes", lambda: lax.dot(jnp.ones(3, jnp.float32), jnp.ones(3, jnp.int32)), TypeError)
case("astype-bad", lambda: jnp.ones(3).astype("nope"), TypeError)
case("invert-float", lambda: jnp.invert(jnp.ones(3)), TypeError)
case("mod-bool-lax", lambda: lax.rem(jnp.array([True]), jnp.array([False])), TypeError)
case("linalg-cholesky-int", lambda: lax.linalg.cholesky(jnp.ones((2, 2), jnp.int32)), TypeError)
case("sort-num-keys", lambda: lax.sort((jnp.ones(3),), num_keys=2))
case("bitcast-bool", lambda: lax.bitcast_convert_type(jnp.ones(3, jnp.int8), jnp.bool_))
case("float-of-array", lambda: float(jnp.ones(3)), TypeError)
case("int-of-array", lambda: int(jnp.ones(3)), TypeError)
case("bool-of-array", lambda: bool(jnp.ones(3)), ValueError)

# --- transforms ----------------------------------------------------------------
case("grad-nonscalar", lambda: jax.grad(lambda x: x * 2)(jnp.ones(3)), TypeError)
case("grad-int-input", lambda: jax.grad(lambda x: x * 2)(3), TypeError)
case("grad-tuple-output", lambda: jax.grad(lambda x: (x, x))(1.0), TypeError)
case("grad-argnums-range", lambda: jax.grad(lambda x: x, argnums=3)(1.0))
case("grad-not-callable", lambda: jax.grad(3)(1.0), TypeError)
case("grad-string-arg", lambda: jax.grad(lambda x: 1.0)("a"), TypeError)
case("grad-has-aux-not-pair", lambda: jax.grad(lambda x: x, has_aux=True)(1.0))
case("value-and-grad-nonscalar", lambda: jax.value_and_grad(lambda x: x)(jnp.ones(2)), TypeError)
case("jvp-structure", lambda: jax.jvp(lambda x: x, (1.0,), (1.0, 2.0)))
case("jvp-not-tuple", lambda: jax.jvp(lambda x: x, 1.0, 1.0), TypeError)
case("jvp-tangent-shape", lambda: jax.jvp(jnp.sin, (jnp.ones(3),), (jnp.ones(4),)), ValueError)
case("jvp-tangent-dtype", lambda: jax.jvp(jnp.sin, (jnp.ones(3),), (jnp.ones(3, jnp.int32),)), TypeError)
case("vjp-cotangent-shape", lambda: jax.vjp(jnp.sin, jnp.ones(3))[1](jnp.ones(4)))
case("vjp-cotangent-structure", lambda: jax.vjp(jnp.sin, jnp.ones(3))[1]((jnp.ones(3), 1.0)))
case("jacfwd-int", lambda: jax.jacfwd(lambda x: x)(3), TypeError)
case("jacrev-int", lambda: jax.jacrev(lambda x: x)(3), TypeError)
case("hessian-int", lambda: jax.hessian(lambda x: x * x)(3), TypeError)
case("linearize-tangent-shape", lambda: jax.linearize(jnp.sin, jnp.ones(3))[1](jnp.ones(4)))
case("linear-transpose-nonlinear", lambda: jax.linear_transpose(jnp.sin, 1.0)(1.0))
case("vmap-in-axes-length", lambda: jax.vmap(lambda a, b: a + b, in_axes=(0,))(jnp.ones(3), jnp.ones(3)), ValueError)
case("vmap-in-axes-range", lambda: jax.vmap(lambda a: a, in_axes=2)(jnp.ones(3)), ValueError)
case("vmap-in-axes-type", lambda: jax.vmap(lambda a: a, in_axes="x")(jnp.ones(3)))
case("vmap-in-axes-float", lambda: jax.vmap(lambda a: a, in_axes=0.5)(jnp.ones(3)))
case("vmap-sizes", lambda: jax.vmap(lambda a, b: a + b)(jnp.ones(3), jnp.ones(4)), ValueError)
case("vmap-scalar", lambda: jax.vmap(lambda a: a)(1.0), ValueError)
case("vmap-no-args", lambda: jax.vmap(lambda: 1.0)(), ValueError)
case("vmap-all-none", lambda: jax.vmap(lambda a: a, in_axes=None)(jnp.ones(3)), ValueError)
case("vmap-out-axes-range", lambda: jax.vmap(lambda a: a, out_axes=3)(jnp.ones(3)), ValueError)
case("vmap-out-axes-none-batched", lambda: jax.vmap(lambda a: a, out_axes=None)(jnp.ones(3)), ValueError)
case("vmap-in-axes-structure", lambda: jax.vmap(lambda d: d["a"], in_axes=({"b": 0},))({"a": jnp.ones(3)}), ValueError)
case("vmap-string-leaf", lambda: jax.vmap(lambda a: a)("abc"), TypeError)
case("vmap-not-callable", lambda: jax.vmap(5)(jnp.ones(3)), TypeError)
case("jit-not-callable", lambda: jax.jit(5), TypeError)
case("jit-string-arg", lambda: jax.jit(lambda a: a)("abc"), TypeError)
case("jit-object-arg", lambda: jax.jit(lambda a: a)(object()), TypeError)
case("jit-unhashable-static", lambda: jax.jit(lambda a, b: a, static_argnums=1)(1.0, np.ones(2)), ValueError)
case("jit-static-argnums-range", lambda: jax.jit(lambda a: a, static_argnums=3)(1.0))
case("jit-output-object", lambda: jax.jit(lambda a: object())(1.0), TypeError)
case("jit-shape-error-inside", lambda: jax.jit(lambda a: a + jnp.ones(4))(jnp.ones(3)), TypeError)
case("jit-concretize-bool", lambda: jax.jit(lambda a: 1 if a > 0 else 2)(1.0), TypeError)
case("jit-concretize-shape", lambda: jax.jit(lambda n: jnp.zeros(n))(3), TypeError)
case("eval-shape-bad", lambda: jax.eval_shape(lambda a: a @ a, jax.ShapeDtypeStruct((2, 3), jnp.float32)), TypeError)
case("make-jaxpr-not-callable", lambda: jax.make_jaxpr(3)(1.0), TypeError)
case("make-jaxpr-object-arg", lambda: jax.make_jaxpr(lambda a: a)(object()), TypeError)
case("make-jaxpr-error-inside", lambda: jax.make_jaxpr(lambda a: a + jnp.ones(4))(jnp.ones(3)), TypeError)
case("checkpoint-bad", lambda: jax.checkpoint(lambda a: a @ a)(jnp.ones((2, 3))), TypeError)
case("pmap-too-many", lambda: jax.pmap(lambda a: a)(jnp.ones((5, 2))), ValueError)

# --- control flow ----------------------------------------------------------------
case("cond-branch-types", lambda: lax.cond(True, lambda: jnp.ones(2), lambda: jnp.ones(3)), TypeError)
case("cond-branch-dtypes", lambda: lax.cond(True, lambda: jnp.ones(2), lambda: jnp.ones(2, jnp.int32)), TypeError)
case("cond-branch-structure", lambda: lax.cond(True, lambda: (1.0, 2.0), lambda: 1.0), TypeError)
case("cond-pred-shape", lambda: lax.cond(jnp.ones(3) > 0, lambda: 1.0, lambda: 2.0), TypeError)
case("cond-pred-string", lambda: lax.cond("yes", lambda: 1.0, lambda: 2.0), TypeError)
case("cond-branch-raises", lambda: lax.cond(True, lambda: 1 / 0, lambda: 1.0), ZeroDivisionError)
case("switch-branch-types", lambda: lax.switch(0, [lambda: jnp.ones(2), lambda: jnp.ones(3)]), TypeError)
case("switch-no-branches", lambda: lax.switch(0, []), ValueError)
case("switch-index-float", lambda: lax.switch(jnp.ones(2), [lambda: 1.0, lambda: 2.0]), TypeError)
case("while-carry-shape", lambda: lax.while_loop(lambda c: c[0] < 3, lambda c: jnp.ones(4), jnp.ones(3)), TypeError)
case("while-carry-dtype", lambda: lax.while_loop(lambda c: c < 3, lambda c: (c + 1).astype(jnp.float32), jnp.zeros((), jnp.int32)), TypeError)
case("while-cond-nonscalar", lambda: lax.while_loop(lambda c: c < 3, lambda c: c + 1, jnp.zeros(2)), TypeError)
case("while-cond-float", lambda: lax.while_loop(lambda c: c * 1.0, lambda c: c + 1, 0.0), TypeError)
case("while-carry-structure", lambda: lax.while_loop(lambda c: c[0] < 3, lambda c: c[0], (1, 2)), TypeError)
case("fori-carry-type", lambda: lax.fori_loop(0, 3, lambda i, c: jnp.ones(5), jnp.ones(3)), TypeError)
case("scan-carry-shape", lambda: lax.scan(lambda c, x: (jnp.ones(4), x), jnp.ones(3), jnp.ones(5)), TypeError)
case("scan-carry-dtype", lambda: lax.scan(lambda c, x: (c.astype(jnp.float32), x), jnp.zeros((), jnp.int32), jnp.ones(5)), TypeError)
case("scan-not-pair", lambda: lax.scan(lambda c, x: c, 0.0, jnp.ones(5)))
case("scan-xs-lengths", lambda: lax.scan(lambda c, x: (c, x), 0.0, (jnp.ones(3), jnp.ones(4))), ValueError)
case("scan-length-mismatch", lambda: lax.scan(lambda c, x: (c, x), 0.0, jnp.ones(3), length=5), ValueError)
case("scan-no-length", lambda: lax.scan(lambda c, x: (c, x), 0.0, None), ValueError)
case("scan-negative-length", lambda: lax.scan(lambda c, x: (c, c), 0.0, None, length=-1))
case("scan-xs-scalar", lambda: lax.scan(lambda c, x: (c, x), 0.0, 1.0), ValueError)
case("scan-string-leaf", lambda: lax.scan(lambda c, x: (c, x), "a", jnp.ones(2)), TypeError)
case("map-leading", lambda: lax.map(lambda t: t[0] + t[1], (jnp.ones(2), jnp.ones(3))), ValueError)
case("cond-under-jit-types", lambda: jax.jit(lambda p: lax.cond(p, lambda: 1.0, lambda: jnp.ones(2)))(True), TypeError)
case("scan-under-vmap-types", lambda: jax.vmap(lambda c0: lax.scan(lambda c, x: (jnp.ones(4), x), c0, jnp.ones(2)))(jnp.ones((2, 3))), TypeError)

# --- pytrees -----------------------------------------------------------------------
case("tree-map-mismatch", lambda: jax.tree_util.tree_map(lambda a, b: a, [1, 2], [1, 2, 3]), ValueError)
case("tree-map-mismatch-dict", lambda: jax.tree_util.tree_map(lambda a, b: a, {"a": 1}, {"b": 1}), ValueError)
case("tree-unflatten-count", lambda: jax.tree_util.tree_unflatten(jax.tree_util.tree_structure([1, 2]), [1]), ValueError)
case("grad-dict-leaf-string", lambda: jax.grad(lambda d: d["a"])({"a": "s"}), TypeError)
case("jit-list-of-objects", lambda: jax.jit(lambda l: l[0])([object()]), TypeError)
case("vjp-ct-dict-mismatch", lambda: jax.vjp(lambda d: d, {"a": 1.0})[1]({"b": 1.0}))
case("jvp-dict-mismatch", lambda: jax.jvp(lambda d: d["a"], ({"a": 1.0},), ({"b": 1.0},)))
case("register-bad-flatten", lambda: _bad_pytree_flatten())
case("tree-transpose-mismatch", lambda: jax.tree_util.tree_transpose(
    jax.tree_util.tree_structure([0, 0]), jax.tree_util.tree_structure((0, 0)), [1, 2]))


def _bad_pytree_flatten():
    class Bad:
        pass

    jax.tree_util.register_pytree_node(Bad, lambda b: 5, lambda aux, ch: Bad())
    return jax.jit(lambda b: b)(Bad())


# --- absurd and overflowing sizes -------------------------------------------------------
case("zeros-huge", lambda: jnp.zeros((HUGE,)), MemoryError, "RESOURCE_EXHAUSTED")
case("ones-huge-2d", lambda: jnp.ones((2**40, 2**40)))
case("zeros-overflow", lambda: jnp.zeros((2**32, 2**32, 2**32)), ValueError)
case("zeros-2pow63", lambda: jnp.zeros((OVER,)))
case("zeros-2pow64", lambda: jnp.zeros((2**64,)))
case("zeros-2pow100", lambda: jnp.zeros((2**100,)))
case("zeros-negative", lambda: jnp.zeros((-1,)), TypeError, "nonnegative")
case("zeros-negative-2d", lambda: jnp.zeros((3, -2)), TypeError)
case("zeros-negative-int", lambda: jnp.zeros(-5), TypeError)
case("zeros-float-shape", lambda: jnp.zeros((1.5,)), TypeError)
case("zeros-string-shape", lambda: jnp.zeros("abc"), TypeError)
case("full-huge", lambda: jnp.full((HUGE,), 1.0), MemoryError)
case("full-huge-int", lambda: jnp.full((HUGE,), 1, dtype=jnp.int32), MemoryError)
case("empty-huge", lambda: jnp.empty((HUGE,)), MemoryError)
case("zeros-like-huge-struct", lambda: jnp.zeros_like(jax.ShapeDtypeStruct((HUGE,), jnp.float32)))
case("ones-huge-bool", lambda: jnp.ones((HUGE, 8), bool), MemoryError)
case("eye-huge", lambda: jnp.eye(10**7), MemoryError)
case("identity-huge", lambda: jnp.identity(10**7), MemoryError)
case("tri-huge", lambda: jnp.tri(10**7), MemoryError)
case("eye-negative", lambda: jnp.eye(-3))
case("arange-huge", lambda: jnp.arange(HUGE * 10), MemoryError)
case("arange-huge-float", lambda: jnp.arange(0.0, 1e13, 0.5), MemoryError)
case("arange-zero-step", lambda: jnp.arange(0, 10, 0))
case("linspace-huge", lambda: jnp.linspace(0.0, 1.0, HUGE), MemoryError)
case("linspace-negative", lambda: jnp.linspace(0.0, 1.0, -1), ValueError)
case("iota-huge", lambda: lax.iota(jnp.float32, HUGE), MemoryError)
case("iota-negative", lambda: lax.iota(jnp.int32, -1))
case("broadcasted-iota-huge", lambda: lax.broadcasted_iota(jnp.int32, (10**7, 10**7), 0), MemoryError)
case("broadcast-to-huge", lambda: jnp.broadcast_to(jnp.ones(1), (10**7, 10**7)), MemoryError)
case("broadcast-to-overflow", lambda: jnp.broadcast_to(jnp.ones(1), (2**40, 2**40)))
case("lax-broadcast-huge", lambda: lax.broadcast(jnp.ones(3), (10**7, 10**7)), MemoryError)
case("lax-broadcast-in-dim-huge", lambda: lax.broadcast_in_dim(jnp.ones(3), (10**7, 10**7, 3), (2,)), MemoryError)
case("lax-broadcast-in-dim-negative", lambda: lax.broadcast_in_dim(jnp.ones(3), (-1, 3), (1,)))
case("tile-huge", lambda: jnp.tile(jnp.ones(3), (10**7, 10**7)), MemoryError)
case("tile-negative", lambda: jnp.tile(jnp.ones(3), -2))
case("repeat-huge", lambda: jnp.repeat(jnp.ones(3), HUGE), MemoryError)
case("pad-huge", lambda: jnp.pad(jnp.ones(3), HUGE), MemoryError)
case("lax-pad-huge", lambda: lax.pad(jnp.ones(3), 0.0, ((HUGE, 0, 0),)), MemoryError)
case("lax-pad-interior-huge", lambda: lax.pad(jnp.ones(3), 0.0, ((0, 0, HUGE),)), MemoryError)
case("lax-pad-negative-interior", lambda: lax.pad(jnp.ones(3), 0.0, ((0, 0, -1),)))
case("lax-pad-overflow", lambda: lax.pad(jnp.ones(3), 0.0, ((OVER, OVER, 0),)))
case("reshape-huge", lambda: jnp.ones(4).reshape(2**32, 2**32), TypeError)
case("reshape-overflow", lambda: jnp.ones(4).reshape(2**63, 2**63))
case("reshape-negative-huge", lambda: jnp.ones(4).reshape(-(2**70)))
case("outer-huge", lambda: jnp.outer(jnp.ones(10**6), jnp.ones(10**7)), MemoryError)
case("meshgrid-huge", lambda: jnp.meshgrid(jnp.ones(10**6), jnp.ones(10**7)), MemoryError)
case("kron-huge", lambda: jnp.kron(jnp.ones((10**4, 10**4)), jnp.ones((10**3, 10**3))), MemoryError)
case("random-normal-huge", lambda: random.normal(random.PRNGKey(0), (HUGE,)))
case("random-uniform-huge", lambda: random.uniform(random.PRNGKey(0), (10**7, 10**7)))
case("random-bits-huge", lambda: random.bits(random.PRNGKey(0), (HUGE,)))
case("random-split-huge", lambda: random.split(random.PRNGKey(0), HUGE))
case("random-negative-shape", lambda: random.normal(random.PRNGKey(0), (-1,)))
case("jit-zeros-huge", lambda: jax.jit(lambda: jnp.zeros((HUGE,)))(), MemoryError)
case("jit-ones-huge-2d", lambda: jax.jit(lambda: jnp.ones((2**40, 2**40)))())
case("jit-broadcast-huge", lambda: jax.jit(lambda a: jnp.broadcast_to(a, (10**7, 10**7)))(jnp.ones(1)), MemoryError)
case("jit-tile-huge", lambda: jax.jit(lambda a: jnp.tile(a, (10**7, 10**7)))(jnp.ones(3)), MemoryError)
case("jit-iota-huge", lambda: jax.jit(lambda: lax.iota(jnp.int32, HUGE))(), MemoryError)
case("jit-twice-huge", lambda: [jax.jit(lambda a: jnp.broadcast_to(a, (10**7, 10**7)).sum())(jnp.ones(1))
                                for _ in range(2)], MemoryError)
case("jit-huge-sum", lambda: jax.jit(lambda a: jnp.broadcast_to(a, (HUGE, 4)).sum())(jnp.ones(4)), MemoryError)
case("vmap-huge-inner", lambda: jax.vmap(lambda a: jnp.broadcast_to(a, (10**6, 10**6)))(jnp.ones((3, 1))), MemoryError)
case("grad-huge-inner", lambda: jax.grad(lambda a: jnp.broadcast_to(a, (10**7, 10**7)).sum())(1.0), MemoryError)
case("scan-huge-length-ys", lambda: lax.scan(lambda c, x: (c, c), 0.0, None, length=HUGE), MemoryError)
case("scan-huge-body", lambda: lax.scan(lambda c, x: (c, jnp.zeros((HUGE,))), 0.0, None, length=2), MemoryError)
case("cond-huge-branch", lambda: lax.cond(True, lambda: jnp.zeros((HUGE,)), lambda: jnp.ones((HUGE,))), MemoryError)
case("while-huge-carry", lambda: lax.while_loop(lambda c: c.sum() < 0, lambda c: c, jnp.zeros((HUGE,))), MemoryError)
case("fori-huge-body", lambda: lax.fori_loop(0, 2, lambda i, c: c + jnp.zeros((HUGE,)).sum(), 0.0), MemoryError)
case("export-huge-output", lambda: export.export(jax.jit(lambda: jnp.zeros((HUGE,))))().call())
case("eval-shape-huge-ok-then-run", lambda: jax.jit(lambda a: jnp.zeros((a.shape[0] * HUGE,)))(jnp.ones(2)), MemoryError)
case("callback-huge-result", lambda: jax.pure_callback(lambda: np.zeros(1, np.float32),
                                                     jax.ShapeDtypeStruct((HUGE,), jnp.float32)))
case("dot-huge-out", lambda: jnp.dot(jnp.ones((10**6, 1)), jnp.ones((1, 10**7))), MemoryError)
# Kernel-internal temporaries (window tables, im2col) are checked too.
case("conv-huge-padding", lambda: lax.conv_general_dilated(jnp.ones((1, 1, 200000)), jnp.ones((1, 1, 200000)), (1,),
                                                          [(200000, 200000)]), MemoryError, "window table")
case("conv-grad-huge-padding", lambda: jax.grad(lambda w: lax.conv_general_dilated(
    jnp.ones((1, 1, 200000)), w, (1,), [(200000, 200000)]).sum())(jnp.ones((1, 1, 200000))), MemoryError)
case("conv-lhs-dilation-huge", lambda: lax.conv_general_dilated(jnp.ones((1, 1, 3)), jnp.ones((1, 1, 2)), (1,),
                                                              [(0, 0)], lhs_dilation=(HUGE,)), MemoryError)
case("convolve-huge", lambda: jnp.convolve(jnp.ones(10**6), jnp.ones(10**6)), MemoryError)
case("reduce-window-huge-padding", lambda: lax.reduce_window(jnp.ones(3), 0.0, lax.add, (1000,), (1,),
                                                             [(10**9, 10**9)]), MemoryError, "window table")
case("reduce-window-base-dilation", lambda: lax.reduce_window(jnp.ones(3), -jnp.inf, lax.max, (1,), (1,), [(0, 0)],
                                                              base_dilation=(HUGE,)), MemoryError)
case("maxpool-grad-huge-padding", lambda: jax.grad(lambda x: lax.reduce_window(
    x, -jnp.inf, lax.max, (2,), (1,), [(10**9, 10**9)]).sum())(jnp.ones(3)), MemoryError)
case("jacfwd-huge", lambda: jax.jacfwd(lambda x: x)(jnp.ones(10**6)), MemoryError)
case("jacrev-huge", lambda: jax.jacrev(lambda x: x)(jnp.ones(10**6)), MemoryError)
case("svd-full-matrices-huge", lambda: jnp.linalg.svd(jnp.ones((1, 10**6)), full_matrices=True), MemoryError)
case("qr-complete-huge", lambda: jnp.linalg.qr(jnp.ones((10**6, 1)), mode="complete"), MemoryError)
case("diag-huge", lambda: jnp.diag(jnp.ones(10**6)), MemoryError)
case("bincount-huge", lambda: jnp.bincount(jnp.array([1, 2]), length=HUGE), MemoryError)
case("vmap-axis-size-huge", lambda: jax.vmap(lambda x: x, in_axes=None, axis_size=HUGE)(jnp.ones(3)), MemoryError)
case("gather-huge-indices", lambda: jnp.ones(3)[jnp.zeros((10**6, 10**6), jnp.int32)], MemoryError)
case("repeat-total-length-huge", lambda: jnp.repeat(jnp.ones(3), 2, total_repeat_length=HUGE), MemoryError)
case("einsum-outer-huge", lambda: jnp.einsum("i,j->ij", jnp.ones(10**6), jnp.ones(10**7)), MemoryError)
case("full-like-huge", lambda: jnp.full_like(jnp.ones(3), 1.0, shape=(HUGE,)), MemoryError)
case("jit-eye-huge", lambda: jax.jit(lambda: jnp.eye(10**7))(), MemoryError)
case("jit-arange-huge", lambda: jax.jit(lambda: jnp.arange(10**13))(), MemoryError)
case("jit-pad-huge", lambda: jax.jit(lambda a: jnp.pad(a, HUGE))(jnp.ones(3)), MemoryError)
case("jit-linspace-huge", lambda: jax.jit(lambda: jnp.linspace(0.0, 1.0, HUGE))(), MemoryError)
case("jit-tile-1d-huge", lambda: jax.jit(lambda a: jnp.tile(a, HUGE))(jnp.ones(3)), MemoryError)
case("concatenate-huge", lambda: jnp.concatenate([jnp.broadcast_to(jnp.ones(1), (HUGE,))] * 2), MemoryError)


# --- leaked tracers ------------------------------------------------------------------------
def _leak(transform):
    box = []

    def f(x):
        box.append(x)
        return x

    transform(f)(jnp.ones(()) if transform is not jax.vmap else jnp.ones(3))
    return box[0]


case("leak-jit-sin", lambda: jnp.sin(_leak(jax.jit)), UnexpectedTracerError)
case("leak-jit-add", lambda: _leak(jax.jit) + 1.0, UnexpectedTracerError)
case("leak-jit-in-jit", lambda: jax.jit(lambda y: y + _leak(jax.jit))(1.0), UnexpectedTracerError)
case("leak-jit-float", lambda: float(_leak(jax.jit)))
case("leak-jit-index", lambda: _leak(jax.vmap)[0])
case("leak-jit-sum", lambda: jnp.sum(_leak(jax.jit)), UnexpectedTracerError)
case("leak-jit-numpy", lambda: np.asarray(_leak(jax.jit)))
case("leak-grad", lambda: jnp.sin(_leak(lambda f: jax.grad(lambda x: f(x) * 1.0))), UnexpectedTracerError)
case("leak-vmap", lambda: jnp.sin(_leak(jax.vmap)), UnexpectedTracerError)
case("leak-make-jaxpr", lambda: jnp.cos(_leak(jax.make_jaxpr)), UnexpectedTracerError)
case("leak-in-cond", lambda: lax.cond(True, lambda: _leak(jax.jit) + 1.0, lambda: 1.0))
case("leak-in-scan", lambda: lax.scan(lambda c, x: (c + _leak(jax.jit), x), 0.0, jnp.ones(2)))
case("leak-grad-of", lambda: jax.grad(lambda x: x * _leak(jax.jit))(1.0))
case("leak-vmap-of", lambda: jax.vmap(lambda x: x * _leak(jax.jit))(jnp.ones(2)))
case("leak-reshape", lambda: _leak(jax.jit).reshape(1), UnexpectedTracerError)


# --- bad custom rules --------------------------------------------------------------------
def _cjvp(rule):
    @jax.custom_jvp
    def f(x):
        return jnp.sin(x)

    f.defjvp(rule)
    return f


def _cvjp(fwd, bwd):
    @jax.custom_vjp
    def f(x):
        return jnp.sin(x)

    f.defvjp(fwd, bwd)
    return f


def _raise(*_):
    raise ValueError("rule failed on purpose")


case("cjvp-rule-not-pair", lambda: jax.grad(_cjvp(lambda p, t: jnp.cos(p[0])))(1.0))
case("cjvp-rule-tangent-shape", lambda: jax.jvp(_cjvp(lambda p, t: (jnp.sin(p[0]), jnp.ones(3))), (1.0,), (1.0,)))
case("cjvp-rule-tangent-dtype", lambda: jax.jvp(_cjvp(lambda p, t: (jnp.sin(p[0]), jnp.ones((), jnp.int32))),
                                                (1.0,), (1.0,)), TypeError)
case("cjvp-rule-primal-shape", lambda: jax.jvp(_cjvp(lambda p, t: (jnp.ones(3), t[0])), (1.0,), (1.0,)))
case("cjvp-rule-raises", lambda: jax.grad(_cjvp(_raise))(1.0), ValueError, "on purpose")
case("cjvp-rule-returns-none", lambda: jax.grad(_cjvp(lambda p, t: None))(1.0))
case("cjvp-rule-structure", lambda: jax.jvp(_cjvp(lambda p, t: ((p[0], p[0]), (t[0], t[0]))), (1.0,), (1.0,)))
case("cjvp-rule-under-jit", lambda: jax.jit(jax.grad(_cjvp(lambda p, t: (jnp.sin(p[0]), jnp.ones(3)))))(1.0))
case("cjvp-not-callable-rule", lambda: jax.grad(_cjvp(5))(1.0))
case("cvjp-fwd-not-pair", lambda: jax.grad(_cvjp(lambda x: jnp.sin(x), lambda r, g: (g,)))(1.0))
case("cvjp-bwd-not-tuple", lambda: jax.grad(_cvjp(lambda x: (jnp.sin(x), x), lambda r, g: g * 2))(1.0), TypeError)
case("cvjp-bwd-count", lambda: jax.grad(_cvjp(lambda x: (jnp.sin(x), x), lambda r, g: (g, g)))(1.0), TypeError)
case("cvjp-bwd-shape", lambda: jax.grad(_cvjp(lambda x: (jnp.sin(x), x), lambda r, g: (jnp.ones(3),)))(1.0), ValueError)
case("cvjp-bwd-dtype-and-shape", lambda: jax.grad(_cvjp(lambda x: (jnp.sin(x), x),
                                                       lambda r, g: (jnp.ones(2, jnp.int32),)))(1.0), ValueError)
case("cvjp-fwd-raises", lambda: jax.grad(_cvjp(_raise, lambda r, g: (g,)))(1.0), ValueError, "on purpose")
case("cvjp-bwd-raises", lambda: jax.grad(_cvjp(lambda x: (jnp.sin(x), x), _raise))(1.0), ValueError, "on purpose")
case("cvjp-fwd-primal-shape", lambda: jax.grad(_cvjp(lambda x: (jnp.ones(3), x), lambda r, g: (g,)))(1.0))
case("cvjp-bwd-none-ok-then-bad", lambda: jax.grad(_cvjp(lambda x: (jnp.sin(x), x), lambda r, g: None))(1.0))
case("cvjp-under-jit", lambda: jax.jit(jax.grad(_cvjp(lambda x: (jnp.sin(x), x), lambda r, g: (jnp.ones(3),))))(1.0))
case("cvjp-jvp", lambda: jax.jvp(_cvjp(lambda x: (jnp.sin(x), x), lambda r, g: (g,)), (1.0,), (1.0,)), TypeError)
case("custom-gradient-bad", lambda: jax.grad(jax.custom_gradient(lambda x: (x, lambda g: (g, g))))(1.0))
case("closure-convert-bad", lambda: jax.closure_convert(lambda x: x @ x, jnp.ones((2, 3))))


# --- bad pure_callback results ---------------------------------------------------------------
def _cb(result, declared=jax.ShapeDtypeStruct((3,), jnp.float32), under=lambda f: f):
    return lambda: under(lambda x: jax.pure_callback(lambda a: result, declared, x))(jnp.ones(3))


case("callback-shape", _cb(np.ones(4, np.float32)))
case("callback-dtype", _cb(np.ones(3, np.int32)), TypeError)
case("callback-none", _cb(None))
case("callback-string", _cb("abc"))
case("callback-object", _cb(object()))
case("callback-structure", _cb((np.ones(3, np.float32), np.ones(3, np.float32))))
case("callback-shape-jit", _cb(np.ones(4, np.float32), under=jax.jit))
case("callback-dtype-jit", _cb(np.ones(3, np.float64), under=jax.jit), TypeError)
case("callback-shape-vmap", lambda: jax.vmap(lambda x: jax.pure_callback(
    lambda a: np.ones(7, np.float32), jax.ShapeDtypeStruct((), jnp.float32), x, vmap_method="sequential"))(jnp.ones(3)))
case("callback-raises", lambda: jax.pure_callback(_raise, jax.ShapeDtypeStruct((), jnp.float32)), ValueError, "on purpose")
case("callback-raises-jit", lambda: jax.jit(lambda: jax.pure_callback(_raise, jax.ShapeDtypeStruct((), jnp.float32)))(),
     ValueError, "on purpose")
case("callback-bad-declared", lambda: jax.pure_callback(lambda: 1.0, "not a shape"))
case("callback-grad", lambda: jax.grad(lambda x: jax.pure_callback(lambda a: a, jax.ShapeDtypeStruct((), jnp.float32), x))(1.0))
case("io-callback-shape", lambda: jax.experimental.io_callback(lambda: np.ones(5, np.float32),
                                                               jax.ShapeDtypeStruct((3,), jnp.float32)))


# --- corrupt exported programs -----------------------------------------------------------------
def _exported():
    f = jax.jit(lambda x, y: {"s": jnp.tanh(x @ y).sum(), "c": lax.scan(lambda c, r: (c + r.sum(), c), 0.0, x)[1]})
    return export.export(f)(np.ones((3, 4), np.float32), np.ones((4, 2), np.float32)).serialize()


BLOB = _exported()
ARGS = (np.ones((3, 4), np.float32), np.ones((4, 2), np.float32))


def _load_and_call(data):
    return lambda: export.deserialize(bytes(data)).call(*ARGS)


for n in (0, 1, 7, 8, 12, 16, 24, 40, len(BLOB) // 3, len(BLOB) // 2, len(BLOB) - 40, len(BLOB) - 1):
    case(f"export-truncated-{n}", _load_and_call(BLOB[:n]), ValueError)
case("export-trailing", _load_and_call(BLOB + b"\0"), ValueError)
case("export-not-bytes", lambda: export.deserialize("MJXPROG"), TypeError)
case("export-none", lambda: export.deserialize(None), TypeError)
case("export-garbage", _load_and_call(np.random.RandomState(1).bytes(500)), ValueError)


def _flip(data, pos, bit):
    b = bytearray(data)
    b[pos % len(b)] ^= 1 << bit
    return b


_rng = np.random.RandomState(7)
for k in range(30):
    pos, bit = int(_rng.randint(len(BLOB))), int(_rng.randint(8))
    # A flip may leave the program valid (a digit of a constant): then the
    # call succeeds and the entry raises its own marker.
    case(f"export-bitflip-{k}", (lambda d: lambda: (_load_and_call(d)(), _flip_survived())[1])(_flip(BLOB, pos, bit)))


def _flip_survived():
    raise LookupError("bit flip left a valid program")


def _with_text(edit):
    """The exported program with its canonical text edited (section length fixed)."""
    text_len = int.from_bytes(BLOB[16:24], "little")
    text = BLOB[24:24 + text_len].decode()
    new = edit(text).encode()
    return BLOB[:16] + len(new).to_bytes(8, "little") + new + BLOB[24 + text_len:]


def _small_program():
    f = jax.jit(lambda x: x + jnp.zeros((1000,), jnp.float32))
    return export.export(f)(np.ones(1000, np.float32)).serialize()


SMALL = _small_program()


def _with_small_text(edit):
    text_len = int.from_bytes(SMALL[16:24], "little")
    text = SMALL[24:24 + text_len].decode()
    new = edit(text).encode()
    return SMALL[:16] + len(new).to_bytes(8, "little") + new + SMALL[24 + text_len:]


case("export-text-huge-dims", lambda: export.deserialize(_with_small_text(
    lambda t: t.replace("1000", "1000000000000"))).call(np.ones(1000, np.float32)))
case("export-text-overflow-dims", lambda: export.deserialize(_with_small_text(
    lambda t: t.replace("1000", str(2**64 + 5)))).call(np.ones(1000, np.float32)))
case("export-text-garbage", lambda: export.deserialize(_with_text(lambda t: "microjax-jaxpr 1\n{ lambda ; ) }")), ValueError)
case("export-text-empty", lambda: export.deserialize(_with_text(lambda t: "")), ValueError)
case("export-text-deep", lambda: export.deserialize(_with_text(lambda t: "(" * 100000)), ValueError)
case("export-text-unknown-prim", lambda: export.deserialize(_with_text(lambda t: t.replace("tanh", "frobnicate"))),
     ValueError)
case("export-text-swap-prim", lambda: export.deserialize(_with_text(lambda t: t.replace("tanh", "iota"))))
case("export-text-bad-type", lambda: export.deserialize(_with_text(lambda t: t.replace("f32", "q32"))))
case("export-call-wrong-shape", lambda: export.deserialize(BLOB).call(np.ones(3, np.float32), np.ones(2, np.float32)),
     ValueError)
case("export-call-wrong-count", lambda: export.deserialize(BLOB).call(np.ones((3, 4), np.float32)))
case("export-call-string", lambda: export.deserialize(BLOB).call("a", "b"), TypeError)


def _endless_while_blob():
    f = jax.jit(lambda x: lax.while_loop(lambda v: v >= 0, lambda v: v + 1.0, x))
    return export.export(f)(np.float32(0)).serialize()


ENDLESS = _endless_while_blob()
case("export-endless-while-loop-limit", lambda: export.deserialize(
    ENDLESS, limits=export.Limits(max_loop_iterations=1000)).call(np.float32(0)), ValueError, "loop iterations")
case("export-endless-while-timeout", lambda: export.deserialize(
    ENDLESS, limits=export.Limits(max_loop_iterations=2**62, timeout=0.05)).call(np.float32(0)), TimeoutError)
case("export-limits-negative", lambda: export.Limits(max_loop_iterations=-1), ValueError)
case("export-limits-timeout-inf", lambda: export.Limits(timeout=float("inf")), ValueError)
case("export-limits-not-limits", lambda: export.deserialize(BLOB, limits=5), TypeError)

# --- bad random keys ---------------------------------------------------------------------------
case("random-key-float", lambda: random.normal(jnp.ones(2), (3,)), TypeError)
case("random-key-shape", lambda: random.normal(jnp.ones(3, jnp.uint32), (3,)), TypeError)
case("random-key-int-scalar", lambda: random.split(jnp.array(3, jnp.uint32)), TypeError)
case("random-key-string", lambda: random.uniform("key"), TypeError)
case("random-seed-float", lambda: random.PRNGKey(1.5), TypeError)
case("random-seed-string", lambda: random.key("a"), TypeError)
case("random-seed-overflow", lambda: random.PRNGKey(2**70), OverflowError)
case("random-split-negative", lambda: random.split(random.PRNGKey(0), -1))
case("random-normal-int-dtype", lambda: random.normal(random.PRNGKey(0), (3,), jnp.int32), ValueError)
case("random-bits-float-dtype", lambda: random.bits(random.PRNGKey(0), (3,), jnp.float32))
case("random-choice-too-many", lambda: random.choice(random.PRNGKey(0), 3, (5,), replace=False), ValueError)
case("random-choice-empty", lambda: random.choice(random.PRNGKey(0), 0, (1,)), ValueError)
case("random-fold-in-string", lambda: random.fold_in(random.PRNGKey(0), "a"), TypeError)
case("random-randint-float-dtype", lambda: random.randint(random.PRNGKey(0), (3,), 0, 5, jnp.float32), TypeError)
case("random-shape-mismatch", lambda: random.uniform(random.PRNGKey(0), (3,), minval=jnp.zeros(4)), TypeError)
case("random-categorical-axis", lambda: random.categorical(random.PRNGKey(0), jnp.ones(3), axis=4))
case("random-typed-key-arith", lambda: random.key(0) + 1, TypeError)
case("random-wrap-bad", lambda: random.wrap_key_data(jnp.ones(3, jnp.uint32)), TypeError)

# --- make_jaxpr / parse / eval_jaxpr inputs ------------------------------------------------------
_CJ = jax.make_jaxpr(lambda a: jnp.sin(a) * 2.0)(jnp.ones(3))
_ZJ = jax.make_jaxpr(lambda: jnp.broadcast_to(jnp.float32(1.0), (5,)) * 2.0)()
case("parse-garbage", lambda: jax.core._closed_from_canonical("not a jaxpr", []), ValueError)
case("parse-empty", lambda: jax.core._closed_from_canonical("", []), ValueError)
case("parse-truncated", lambda: jax.core._closed_from_canonical(_CJ.canonical()[:40], []), ValueError)
case("parse-deep", lambda: jax.core._closed_from_canonical("microjax-jaxpr 1\n" + "{" * 100000, []), ValueError)
case("parse-const-count", lambda: jax.core._closed_from_canonical(_CJ.canonical(), [jnp.ones(2)]))
case("parse-huge-dim", lambda: jax.core._closed_from_canonical(_CJ.canonical().replace("[3]", "[99999999999999999999999]"), []))
case("parse-huge-dim-run", lambda: jax.core.jaxpr_as_fun(jax.core._closed_from_canonical(
    _ZJ.canonical().replace("[5]", f"[{HUGE}]").replace("shape=(5)", f"shape=({HUGE})"), []))(), MemoryError)
case("unpickle-corrupt", lambda: pickle.loads(pickle.dumps(_CJ).replace(b"sin", b"sXn")))
case("eval-jaxpr-arity", lambda: jax.core.eval_jaxpr(_CJ.jaxpr, _CJ.consts))
case("eval-jaxpr-extra-arg", lambda: jax.core.eval_jaxpr(_CJ.jaxpr, _CJ.consts, jnp.ones(3), jnp.ones(3)))
case("jaxpr-as-fun-dtype", lambda: jax.core.jaxpr_as_fun(_CJ)(jnp.ones(3, jnp.int32)))
case("bind-wrong-arity", lambda: lax.sin_p.bind(jnp.ones(3), jnp.ones(3)))
case("bind-bad-param", lambda: lax.reduce_sum_p.bind(jnp.ones(3), axes=(5,)))
case("bind-missing-param", lambda: lax.reduce_sum_p.bind(jnp.ones(3)))
case("bind-object", lambda: lax.add_p.bind(object(), 1.0))

# --- odd argument kinds and out-of-range integers ------------------------------------------------
case("reshape-string", lambda: jnp.reshape(jnp.ones(3), "a"), TypeError)
case("reshape-float", lambda: jnp.ones(3).reshape(1.5), TypeError)
case("fori-string-bound", lambda: lax.fori_loop(0, "a", lambda i, c: c, 0.0), TypeError)
case("grad-argnums-string", lambda: jax.grad(lambda x: x, argnums="a")(1.0), TypeError)
case("einsum-bad-output", lambda: jnp.einsum("ij->k", jnp.ones((2, 2))), ValueError)
case("export-string-arg", lambda: export.export(jax.jit(lambda x: x))("a"), TypeError)
case("export-call-no-args", lambda: export.deserialize(
    export.export(jax.jit(lambda x: x))(1.0).serialize()).call(), ValueError)
case("random-split-bad-shape", lambda: random.split(random.PRNGKey(0), (2, "a")), TypeError)
case("zeros-dtype-int", lambda: jnp.zeros(3, dtype=3), TypeError)
case("convert-dtype-none", lambda: lax.convert_element_type(jnp.ones(3), None), TypeError)
case("cond-operand-count", lambda: lax.cond(True, lambda a: a, lambda a, b: a, 1.0), TypeError)
case("switch-index-overflow", lambda: lax.switch(2**40, [lambda: 1.0, lambda: 2.0]), OverflowError)
case("scan-length-overflow", lambda: jax.jit(lambda: lax.scan(lambda c, x: (c, None), 0.0, None, length=2**70))())
case("while-init-object", lambda: lax.while_loop(lambda c: False, lambda c: c, object()), TypeError)
case("vmap-axis-size-negative", lambda: jax.vmap(lambda x: x, in_axes=None, axis_size=-1)(1.0))
case("collective-unbound-axis", lambda: jax.vmap(lambda x: lax.psum(x, "j"), axis_name="i")(jnp.ones(3)), NameError)
case("dynamic-slice-negative-size", lambda: lax.dynamic_slice(jnp.ones(3), (0,), (-1,)), ValueError)
case("at-set-too-many", lambda: jnp.ones(3).at[0, 0].set(1.0), IndexError)
case("at-set-bool-mask-shape", lambda: jnp.ones(3).at[np.array([True, False])].set(1.0), IndexError)
case("concatenate-axis-huge", lambda: jnp.concatenate([jnp.ones(3)], axis=2**70), ValueError)
case("sum-axis-huge", lambda: jnp.sum(jnp.ones(3), axis=2**70), ValueError)
case("transpose-axis-huge", lambda: jnp.transpose(jnp.ones((2, 3)), (0, 2**70)), ValueError)
case("iota-dimension-huge", lambda: lax.broadcasted_iota(jnp.int32, (2, 3), 2**70))
case("int32-literal-overflow", lambda: jnp.ones(3, jnp.int32) + 2**70, OverflowError)
case("asarray-int-overflow", lambda: jnp.asarray(2**70), OverflowError)
case("full-fill-overflow", lambda: jnp.full(3, 2**70, jnp.int32), OverflowError)
case("integer-pow-negative-int", lambda: lax.integer_pow(jnp.ones(3, jnp.int32), -1), ValueError)

# --- config -----------------------------------------------------------------------------------
case("config-budget-zero", lambda: jax.config.update("microjax_max_buffer_bytes", 0), ValueError)
case("config-budget-string", lambda: jax.config.update("microjax_max_buffer_bytes", "1G"), TypeError)
case("config-unknown", lambda: jax.config.update("jax_no_such_option", 1), AttributeError)

# --- allocations the allocator refuses ----------------------------------------------------------
# With the budget lifted out of the way, 2**61 float32 values (2**63 bytes, more than any one
# allocation may take) are refused by the allocator itself: MemoryError, never an abort.


def over_the_allocator(fn):
    """`fn` run with the buffer budget at its maximum (restored afterwards)."""
    def run():
        before = jax.config.read("microjax_max_buffer_bytes")
        jax.config.update("microjax_max_buffer_bytes", 2**64 - 1)
        try:
            return fn()
        finally:
            jax.config.update("microjax_max_buffer_bytes", before)
    return run


ALLOC = 2**61
case("alloc-zeros", over_the_allocator(lambda: jnp.zeros(ALLOC)), MemoryError, "RESOURCE_EXHAUSTED")
case("alloc-broadcast", over_the_allocator(lambda: jnp.broadcast_to(jnp.ones(1), (ALLOC,))),
     MemoryError, "RESOURCE_EXHAUSTED")
case("alloc-iota", over_the_allocator(lambda: lax.iota(jnp.int32, 2**62)), MemoryError)
case("alloc-jit-sort", over_the_allocator(
    lambda: jax.jit(lambda x: lax.slice(jnp.sort(jnp.broadcast_to(x, (ALLOC,))), (0,), (1,)))(jnp.ones(1))),
    MemoryError, "RESOURCE_EXHAUSTED")
case("alloc-jit-cumsum", over_the_allocator(
    lambda: jax.jit(lambda x: lax.slice(jnp.cumsum(jnp.broadcast_to(x, (ALLOC,))), (0,), (1,)))(jnp.ones(1))),
    MemoryError)


def _class_names(e):
    return [c.__name__ for c in type(e).__mro__]


@pytest.mark.parametrize("fn,exc,match", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_malformed_call_raises_an_ordinary_exception(fn, exc, match):
    try:
        fn()
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:  # noqa: B036 - checking that it is *not* only a BaseException
        assert "PanicException" not in _class_names(e), f"panic: {e!r}"
        assert isinstance(e, Exception), f"{type(e).__name__} is not an Exception: {e!r}"
        assert str(e).strip(), f"empty message from {type(e).__name__}"
        assert isinstance(e, exc), f"expected {exc.__name__}, got {type(e).__name__}: {e}"
        if match is not None:
            assert re.search(match, str(e)), f"{match!r} not in {e}"
    else:
        pytest.fail("no exception raised")


def test_corpus_is_large_and_ids_unique():
    names = [c[0] for c in CASES]
    assert len(names) >= 150
    assert len(set(names)) == len(names)


def test_budget_knob_changes_what_fits():
    before = jax.config.read("microjax_max_buffer_bytes")
    try:
        jax.config.update("microjax_max_buffer_bytes", 4000)
        assert jnp.zeros(1000).shape == (1000,)
        with pytest.raises(MemoryError, match="4004 bytes"):
            jnp.zeros(1001)
        with pytest.raises(MemoryError, match="RESOURCE_EXHAUSTED"):
            jax.jit(lambda a: jnp.broadcast_to(a, (1001,)))(jnp.ones(1))
        with pytest.raises(MemoryError):
            jnp.ones(600) + jnp.ones((2, 600))
    finally:
        jax.config.update("microjax_max_buffer_bytes", before)
    assert jnp.zeros(1001).shape == (1001,)
