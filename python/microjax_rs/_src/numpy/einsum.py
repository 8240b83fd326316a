"""`einsum`: subscripts parsed to per-operand diagonals and sums, then a
greedy pairwise contraction, each pair one `dot_general`."""
import builtins

from ... import lax
from .indexing import diagonal
from .lax_numpy import astype
from .util import _arr, _aval, _promote_dtypes


def _parse_einsum(subscripts, shapes):
    subscripts = subscripts.replace(" ", "")
    if "->" in subscripts:
        ins, out = subscripts.split("->")
        explicit = True
    else:
        ins, out, explicit = subscripts, None, False
    in_specs = ins.split(",")
    if len(in_specs) != len(shapes):
        raise ValueError(f"einsum: {len(in_specs)} operand subscripts for {len(shapes)} operands")
    letters = set("".join(in_specs).replace(".", ""))
    spare = iter(c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" if c not in letters)
    ell_nd = 0
    for spec, s in zip(in_specs, shapes):
        if "..." in spec:
            ell_nd = builtins.max(ell_nd, len(s) - len(spec.replace("...", "")))
    ell = "".join(next(spare) for _ in range(ell_nd))
    specs = []
    for spec, s in zip(in_specs, shapes):
        if "..." in spec:
            k = len(s) - len(spec.replace("...", ""))
            spec = spec.replace("...", ell[ell_nd - k:] if k else "")
        if len(spec) != len(s):
            raise ValueError(f"einsum: operand with shape {tuple(s)} does not match subscripts {spec!r}")
        specs.append(spec)
    if explicit:
        out = out.replace("...", ell)
    else:
        counts = {}
        for spec in specs:
            for c in spec:
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell))
    return specs, out


def _einsum_single(x, spec, keep):
    """Diagonals of repeated labels, then sums of labels not in `keep`."""
    while True:
        dup = next((c for c in spec if spec.count(c) > 1), None)
        if dup is None:
            break
        i = spec.index(dup)
        j = spec.index(dup, i + 1)
        x = diagonal(x, 0, i, j)  # the diagonal axis goes last
        spec = "".join(c for k, c in enumerate(spec) if k not in (i, j)) + dup
    drop = tuple(k for k, c in enumerate(spec) if c not in keep)
    if drop:
        x = lax.reduce_sum(x, drop)
        spec = "".join(c for k, c in enumerate(spec) if k not in drop)
    return x, spec


def _einsum_pair(x, sx, y, sy, keep):
    batch = [c for c in sx if c in sy and c in keep]
    contract = [c for c in sx if c in sy and c not in keep]
    dn = ((tuple(sx.index(c) for c in contract), tuple(sy.index(c) for c in contract)),
          (tuple(sx.index(c) for c in batch), tuple(sy.index(c) for c in batch)))
    out = lax.dot_general(x, y, dn)
    spec = "".join(batch) + "".join(c for c in sx if c not in batch and c not in contract) \
        + "".join(c for c in sy if c not in batch and c not in contract)
    return out, spec


def einsum(subscripts, *operands, out=None, optimize="optimal", precision=None,
           preferred_element_type=None, _dot_general=None):
    """Einstein summation: the contraction of ``operands`` described by ``subscripts``.

    Args:
      subscripts: e.g. ``'ij,jk->ik'``; an index in several operands and not in the output is
        summed over; ``...`` broadcasts. Without ``->`` the output holds the indices used once,
        in alphabetical order.
      operands: the arrays.
      out: must be None.
      optimize: the contraction order strategy (``'optimal'``, ``'greedy'``, True/False, or a path).
      precision, preferred_element_type: passed to each ``lax.dot_general``.

    Example:
      >>> import microjax_rs.numpy as jnp
      >>> a = jnp.array([[1.0, 2.0], [3.0, 4.0]])
      >>> jnp.einsum('ij,j->i', a, jnp.array([1.0, 1.0]))
      Array([3., 7.], dtype=float32)
      >>> jnp.einsum('ii', a)
      Array(5., dtype=float32)
    """
    lax._canonicalize_precision(precision)
    if not isinstance(subscripts, str):
        raise NotImplementedError("einsum: only the subscripts-string form is supported")
    ops = _promote_dtypes(*[_arr(o) for o in operands])
    shapes = [_aval(o).shape for o in ops]
    specs, out_spec = _parse_einsum(subscripts, shapes)
    sizes = {}
    for spec, s in zip(specs, shapes):
        for c, d in zip(spec, s):
            if sizes.setdefault(c, d) != d:
                if d == 1 or sizes[c] == 1:
                    raise ValueError(f"einsum: size-1 broadcasting of label {c!r} is not supported")
                raise ValueError(f"einsum: label {c!r} has sizes {sizes[c]} and {d} ({shapes})")
    for c in out_spec:
        if c not in sizes:
            raise ValueError(f"einsum: output label {c!r} does not appear in the inputs")
    terms = []
    for i, (x, spec) in enumerate(zip(ops, specs)):
        others = "".join(s for j, s in enumerate(specs) if j != i) + out_spec
        terms.append(_einsum_single(x, spec, others))
    # Greedy pairwise contraction: the pair with the smallest intermediate first.
    while len(terms) > 1:
        best = None
        for i in range(len(terms)):
            for j in range(i + 1, len(terms)):
                rest = "".join(t[1] for k, t in enumerate(terms) if k not in (i, j)) + out_spec
                si, sj = terms[i][1], terms[j][1]
                res = set(c for c in si + sj if c in rest)
                size = 1
                for c in res:
                    size *= sizes[c]
                shared = bool(set(si) & set(sj))
                key = (not shared, size, i, j)
                if best is None or key < best[0]:
                    best = (key, i, j, rest)
        _, i, j, rest = best
        (x, sx), (y, sy) = terms[i], terms[j]
        x, sx = _einsum_single(x, sx, sy + rest)
        y, sy = _einsum_single(y, sy, sx + rest)
        z = _einsum_pair(x, sx, y, sy, rest)
        terms = [t for k, t in enumerate(terms) if k not in (i, j)] + [z]
    x, spec = _einsum_single(*terms[0], out_spec)
    x = lax.transpose(x, tuple(spec.index(c) for c in out_spec))
    if preferred_element_type is not None:
        x = astype(x, preferred_element_type)
    return x


def einsum_path(subscripts, *operands, optimize="greedy"):
    """The contraction order of an ``einsum`` (NumPy's ``einsum_path``).

    Not supported in microjax_rs: always raises NotImplementedError (JAX returns the path and
    a description). ``einsum`` itself chooses its order from ``optimize``.
    """
    raise NotImplementedError("einsum_path is not supported")
