"""`lax.linalg` functions on structured matrices and Householder
reflectors, composed from other primitives: `tridiagonal_solve`,
`householder_product`, `ormqr`, `tridiagonal`, `symmetric_product`,
`cholesky_update`, and the algorithm enums `EighImplementation` and
`SvdAlgorithm`.

Written with `lax` operations only (this layer never imports jax.numpy).
Derivatives come from the compositions (a scan for `tridiagonal_solve`,
products of reflectors for the Householder functions), so forward and
reverse mode, jit and vmap all apply."""
import enum

import numpy as np

from .. import core
from ._array_ops import _dtype_name as _dtype, _lax, _shape


def _bc(*xs):
    """The operands broadcast to one shape (NumPy rules; Python scalars take
    the dtype of the first array)."""
    lax = _lax()
    like = next(x for x in xs if not isinstance(x, (bool, int, float)))
    xs = [lax._weak_like(x, like) if isinstance(x, (bool, int, float)) else lax._arr(x) for x in xs]
    shape = lax.broadcast_shapes(*(_shape(x) for x in xs))
    out = []
    for x in xs:
        s = _shape(x)
        if s == shape:
            out.append(x)
            continue
        lead = len(shape) - len(s)
        keep = [i for i, d in enumerate(s) if d == shape[lead + i]]
        x = lax.reshape(x, [s[i] for i in keep])
        out.append(lax.broadcast_in_dim(x, shape, [lead + i for i in keep]))
    return out


def _add(a, b):
    return _lax().add(*_bc(a, b))


def _sub(a, b):
    return _lax().sub(*_bc(a, b))


def _mul(a, b):
    return _lax().mul(*_bc(a, b))


def _div(a, b):
    return _lax().div(*_bc(a, b))


def _where(c, a, b):
    return _lax().select(*_bc(c, a, b))


def _swap(x):
    """The last two axes swapped."""
    nd = len(_shape(x))
    return _lax().transpose(x, tuple(range(nd - 2)) + (nd - 1, nd - 2))


def _mm(a, b):
    """`a @ b` over matching leading batch axes."""
    nd = len(_shape(a))
    batch = tuple(range(nd - 2))
    return _lax().dot_general(a, b, (((nd - 1,), (nd - 2,)), (batch, batch)))


def _eye(n, m, name):
    lax = _lax()
    return lax.convert_element_type(core.to_array(np.eye(n, m)), name)


def _last(x, i):
    """`x[..., i]`."""
    return _lax().index_in_dim(x, i, axis=len(_shape(x)) - 1, keepdims=False)


def _sum_last(x):
    return _lax().reduce_sum(x, (len(_shape(x)) - 1,))


def _frobenius(x):
    lax = _lax()
    return lax.sqrt(lax.reduce_sum(lax.mul(x, x), tuple(range(len(_shape(x))))))


def _tril(x, k=0):
    lax = _lax()
    n, m = _shape(x)[-2:]
    keep = np.tril(np.ones((n, m), bool), k)
    return _where(core.to_array(keep), x, lax.full_like(x, 0))


class EighImplementation(enum.Enum):
    """Which symmetric eigensolver `eigh` uses on accelerators; microjax_rs
    runs one (Jacobi-free, LAPACK-style) algorithm whatever is asked."""

    QR = "qr"
    JACOBI = "jacobi"
    QDWH = "qdwh"


class SvdAlgorithm(enum.Enum):
    """Which SVD algorithm `svd` uses on accelerators; microjax_rs runs one
    algorithm whatever is asked."""

    DEFAULT = "default"
    QR = "QR"
    JACOBI = "Jacobi"
    POLAR = "polar"
    DIVIDE_AND_CONQUER = "divide_and_conquer"


# ----------------------------------------------------------------- tridiagonal_solve


def tridiagonal_solve(dl, d, du, b, *, perturb_singular=False):
    """Solves `A x = b` for the tridiagonal `A` with sub-diagonal `dl`
    (`dl[..., 0]` unused), diagonal `d` and super-diagonal `du`
    (`du[..., -1]` unused); `b` is `(..., n, k)`. Thomas' algorithm as a
    scan over the rows (no pivoting)."""
    lax = _lax()
    dl, d, du, b = (lax._arr(v) for v in (dl, d, du, b))
    shapes = [_shape(v) for v in (dl, d, du)]
    if len(set(shapes)) != 1:
        raise TypeError("tridiagonal_solve requires that all diagonal arguments have the same shape.")
    bshape = _shape(b)
    if len(bshape) < 2:
        raise TypeError(f"Input 3 to tridiagonal_solve must have rank at least 2, but got shape={bshape}")
    dshape = shapes[0]
    if len(dshape) < 1 or bshape[:-1] != dshape:
        raise TypeError("tridiagonal_solve requires that the leading ndim-1 dimensions of b equal the "
                        f"dimensions of the diagonal arguments, got {bshape} and {dshape}.")
    names = {core.get_aval(v).dtype_name for v in (dl, d, du, b)}
    if len(names) != 1:
        raise TypeError(f"tridiagonal_solve requires that all arguments have the same dtype, got {sorted(names)}")
    n = dshape[-1]
    if n == 0:
        return b
    nd = len(dshape)
    to_front = (nd - 1,) + tuple(range(nd - 1))
    # rows first: diagonals (n, ...), right-hand sides (n, ..., k)
    dl_s, d_s, du_s = (lax.transpose(v, to_front) for v in (dl, d, du))
    b_s = lax.transpose(b, (nd - 1,) + tuple(range(nd - 1)) + (nd,))
    col = lambda v: lax.expand_dims(v, (len(_shape(v)),))  # noqa: E731
    row = lambda v, i: lax.index_in_dim(v, i, keepdims=False)  # noqa: E731
    c0 = lax.div(row(du_s, 0), row(d_s, 0))
    y0 = _div(row(b_s, 0), col(row(d_s, 0)))

    def forward(carry, r):
        c_prev, y_prev = carry
        l_i, d_i, u_i, b_i = r
        m = lax.sub(d_i, lax.mul(l_i, c_prev))
        c_i = lax.div(u_i, m)
        y_i = _div(_sub(b_i, _mul(col(l_i), y_prev)), col(m))
        return (c_i, y_i), (c_i, y_i)

    rest = lambda v: lax.slice_in_dim(v, 1, n)  # noqa: E731
    _, (cs, ys) = lax.scan(forward, (c0, y0), (rest(dl_s), rest(d_s), rest(du_s), rest(b_s)))
    cs = lax.concatenate([lax.expand_dims(c0, (0,)), cs], 0)
    ys = lax.concatenate([lax.expand_dims(y0, (0,)), ys], 0)
    last = row(ys, n - 1)

    def backward(x_next, r):
        c_i, y_i = r
        x_i = _sub(y_i, _mul(col(c_i), x_next))
        return x_i, x_i

    head = lambda v: lax.slice_in_dim(v, 0, n - 1)  # noqa: E731
    _, xs = lax.scan(backward, last, (head(cs), head(ys)), reverse=True)
    x = lax.concatenate([xs, lax.expand_dims(last, (0,))], 0)
    return lax.transpose(x, tuple(range(1, nd)) + (0, nd))


# ----------------------------------------------------------------- Householder reflectors


def _reflector(a, taus, i):
    """`(v, tau)` of reflector `i` stored LAPACK-style in the columns of `a`
    (`v[i] = 1`, zeros above, `a[i+1:, i]` below); batched over leading axes."""
    col = _last(a, i)
    rows = core.to_array(np.arange(_shape(col)[-1]))
    lax = _lax()
    v = _where(lax.lt(rows, lax._weak_like(i, rows)), lax.full_like(col, 0),
               _where(lax.eq(rows, lax._weak_like(i, rows)), lax.full_like(col, 1), col))
    return v, _last(taus, i)


def _apply_left(v, tau, c):
    """`(I - tau v vᵀ) c` for `c` of shape (..., m, k)."""
    lax = _lax()
    nd = len(_shape(c))
    vc = lax.reduce_sum(_mul(lax.expand_dims(v, (nd - 1,)), c), (nd - 2,))  # (..., k)
    tv = _mul(lax.expand_dims(tau, (nd - 2,)), v)  # (..., m)
    return _sub(c, _mul(lax.expand_dims(tv, (nd - 1,)), lax.expand_dims(vc, (nd - 2,))))


def _check_reflectors(name, a, taus):
    lax = _lax()
    a, taus = lax._arr(a), lax._arr(taus)
    ash, tsh = _shape(a), _shape(taus)
    if len(ash) < 2:
        raise ValueError(f"{name} requires at least a matrix, got shape {ash}")
    if tsh[:-1] != ash[:-2] or tsh[-1] > min(ash[-2:]):
        raise ValueError(f"{name}: taus of shape {tsh} do not match the reflectors of shape {ash}")
    return a, taus


def ormqr(a, taus, c, *, left=True, transpose=False):
    """`Q c`, `Qᵀ c`, `c Q` or `c Qᵀ` for the `m x m` orthogonal `Q = H_0 ... H_{k-1}`
    whose reflectors `a` and `taus` hold (LAPACK's geqrf format)."""
    lax = _lax()
    a, taus = _check_reflectors("ormqr", a, taus)
    c = lax._arr(c)
    k = _shape(taus)[-1]
    nd = c.ndim
    swap = tuple(range(nd - 2)) + (nd - 1, nd - 2)
    if not left:
        # c Q = (Qᵀ cᵀ)ᵀ and c Qᵀ = (Q cᵀ)ᵀ
        return lax.transpose(ormqr(a, taus, lax.transpose(c, swap), left=True, transpose=not transpose), swap)
    # Q c applies H_{k-1} first; Qᵀ c applies H_0 first (real reflectors are symmetric)
    order = range(k) if transpose else range(k - 1, -1, -1)
    for i in order:
        v, tau = _reflector(a, taus, i)
        c = _apply_left(v, tau, c)
    return c


def householder_product(a, taus):
    """The first `n` columns of `Q = H_0 ... H_{k-1}` (an `m x n` matrix with
    orthonormal columns) from reflectors in LAPACK's geqrf format."""
    lax = _lax()
    a, taus = _check_reflectors("householder_product", a, taus)
    ash = _shape(a)
    m, n = ash[-2:]
    if n > m:
        raise ValueError(f"householder_product requires m >= n, got shape {ash}")
    name = core.get_aval(a).dtype_name
    eye = lax.broadcast_in_dim(lax.convert_element_type(core.to_array(np.eye(m, n)), name),
                               ash, (len(ash) - 2, len(ash) - 1))
    return ormqr(a, taus, eye)


def tridiagonal(a, *, lower=True):
    """Householder reduction of a symmetric matrix to tridiagonal form,
    `(arr, d, e, taus)` in LAPACK's sytrd layout: `d` the diagonal, `e` the
    off-diagonal, the reflectors stored below (`lower`) or above the
    off-diagonal of `arr`, `taus` their scales."""
    lax = _lax()
    a = lax._arr(a)
    ash = _shape(a)
    if len(ash) < 2 or ash[-1] != ash[-2]:
        raise ValueError(f"tridiagonal requires square matrices, got shape {ash}")
    n = ash[-1]
    nd = len(ash)
    if not lower:
        # the upper form reduces from the last column backward: the lower form of
        # the matrix with rows and columns reversed, reversed back
        rev = (nd - 2, nd - 1)
        arr, d, e, taus = tridiagonal(lax.rev(a, rev), lower=True)
        arr = lax.rev(arr, rev)
        return arr, lax.rev(d, (nd - 2,)), lax.rev(e, (nd - 2,)), _upper_taus(taus, n, nd)
    name = _dtype(a)
    batch = ash[:-2]
    work = a
    es, taus, tails = [], [], []
    for j in range(n - 1):
        x = lax.slice_in_dim(_last(work, j), j + 1, n, axis=nd - 2)  # (..., n-j-1)
        alpha = _last(x, 0)
        tail = lax.slice_in_dim(x, 1, n - j - 1, axis=nd - 2)
        tail_norm2 = _sum_last(lax.mul(tail, tail))
        norm = lax.sqrt(lax.add(lax.mul(alpha, alpha), tail_norm2))
        beta = _where(lax.ge(alpha, lax._weak_like(0, alpha)), lax.neg(norm), norm)
        trivial = lax.eq(tail_norm2, lax._weak_like(0, tail_norm2))
        one, zero = lax.full_like(alpha, 1), lax.full_like(alpha, 0)
        safe = _where(trivial, one, lax.sub(alpha, beta))
        tau = _where(trivial, zero, lax.div(lax.sub(beta, alpha), _where(trivial, one, beta)))
        beta = _where(trivial, alpha, beta)
        v_tail = _div(tail, lax.expand_dims(safe, (nd - 2,)))
        v = lax.concatenate([lax.full(batch + (j + 1,), 0, name), lax.full(batch + (1,), 1, name), v_tail], nd - 2)
        # two-sided update A <- H A H with H = I - tau v vᵀ
        t = lax.expand_dims(tau, (nd - 2,))
        p = _mul(t, lax.reduce_sum(_mul(work, lax.expand_dims(v, (nd - 2,))), (nd - 1,)))
        pv = lax.expand_dims(_sum_last(lax.mul(p, v)), (nd - 2,))
        k = _sub(p, _mul(_mul(_mul(0.5, t), pv), v))
        outer = lambda a_, b_: _mul(lax.expand_dims(a_, (nd - 1,)), lax.expand_dims(b_, (nd - 2,)))  # noqa: E731
        work = _sub(_sub(work, outer(v, k)), outer(k, v))
        es.append(beta)
        taus.append(tau)
        tails.append(v_tail)
    rows = np.arange(n)[:, None]
    cols = np.arange(n)[None, :]
    d = lax.concatenate([lax.expand_dims(_last(_last(work, i), i), (nd - 2,)) for i in range(n)], nd - 2)
    stack = lambda xs: (lax.concatenate([lax.expand_dims(x, (nd - 2,)) for x in xs], nd - 2) if xs  # noqa: E731
                        else lax.full(batch + (0,), 0, name))
    e, tau_arr = stack(es), stack(taus)
    arr = _where(core.to_array(rows == cols), lax.expand_dims(d, (nd - 2,)), a)
    for j in range(n - 1):
        col = lax.concatenate([lax.full(batch + (j + 1,), 0, name), lax.expand_dims(es[j], (nd - 2,)), tails[j]],
                              nd - 2)
        arr = _where(core.to_array((cols == j) & (rows > j)), lax.expand_dims(col, (nd - 1,)), arr)
    return arr, d, e, tau_arr


def _upper_taus(taus, n, nd):
    lax = _lax()
    return lax.rev(taus, (nd - 2,)) if n > 1 else taus


# ----------------------------------------------------------------- products and updates


def symmetric_product(a_matrix, c_matrix, *, alpha=1.0, beta=0.0, symmetrize_output=False):
    """`alpha * A Aᵀ + beta * C`; with `symmetrize_output` the lower triangle
    mirrored into the upper one."""
    lax = _lax()
    a, c = lax._arr(a_matrix), lax._arr(c_matrix)
    ash, csh = _shape(a), _shape(c)
    if len(ash) < 2 or csh != ash[:-1] + (ash[-2],):
        raise ValueError(f"symmetric_product: c_matrix must have shape {ash[:-1] + (ash[-2],)}, got {csh}")
    nd = len(ash)
    batch = tuple(range(nd - 2))
    aat = lax.dot_general(a, a, (((nd - 1,), (nd - 1,)), (batch, batch)))
    out = lax.add(lax.mul(lax._weak_like(float(alpha), aat), aat), lax.mul(lax._weak_like(float(beta), c), c))
    if not symmetrize_output:
        return out
    return _add(_tril(out), _swap(_tril(out, -1)))


def cholesky_update(r_matrix, w_vector):
    """The upper Cholesky factor of `Rᵀ R + w wᵀ`, from the upper factor `R`."""
    lax = _lax()
    from . import linalg

    r, w = lax._arr(r_matrix), lax._arr(w_vector)
    rsh, wsh = _shape(r), _shape(w)
    if len(rsh) != 2 or rsh[0] != rsh[1] or wsh != rsh[:1]:
        raise ValueError(f"cholesky_update expects a square R and a vector of its size, got {rsh} and {wsh}")
    gram = _add(_mm(_swap(r), r), _mul(lax.expand_dims(w, (1,)), lax.expand_dims(w, (0,))))
    return _swap(linalg.cholesky(gram))


# ----------------------------------------------------------------- polar decomposition


def _halley_schedule(eps, max_iterations):
    """The dynamically weighted Halley coefficients `(a, b, c)` of the
    iterations that move the lower bound `l` of the scaled singular values
    up to 1, starting from `l = eps` (a static schedule)."""
    l, tol_l, out = eps, 10.0 * eps / 2.0, []
    while l + tol_l < 1 and len(out) < max_iterations:
        l2 = l * l
        dd = (4 * (1 / l2 - 1) / l2) ** (1 / 3)
        sqd = (1.0 + dd) ** 0.5
        a = sqd + (2 - dd + 2 * (2 - l2) / (l2 * sqd)) ** 0.5
        b = (a - 1) ** 2 / 4
        c = a + b - 1
        l = l * (a + b * l2) / (1 + c * l2)
        out.append((a, b, c))
    return out


def _halley_qr(u, a, b, c):
    """One step through the QR factors of `[sqrt(c) u; I]` (for large `c`)."""
    from . import concatenate, slice_in_dim
    from . import linalg

    m, n = _shape(u)
    stacked = concatenate([_mul(c ** 0.5, u), _eye(n, n, _dtype(u))], 0)
    q, _ = linalg.qr(stacked, full_matrices=False)
    e = b / c
    prod = _mm(slice_in_dim(q, 0, m), _swap(slice_in_dim(q, m, m + n)))
    return _add(_mul(e, u), _mul((a - e) / c ** 0.5, prod))


def _halley_cholesky(u, a, b, c):
    """One step through the Cholesky factor of `I + c uᵀu`."""
    from . import linalg

    n = _shape(u)[1]
    y = linalg.cholesky(_add(_mul(c, _mm(_swap(u), u)), _eye(n, n, _dtype(u))), symmetrize_input=False)
    z = linalg.triangular_solve(y, _swap(u), left_side=True, lower=True)
    z = _swap(linalg.triangular_solve(y, z, left_side=True, lower=True, transpose_a=True))
    e = b / c
    return _add(_mul(e, u), _mul(a - e, z))


def qdwh(x, *, is_hermitian=False, max_iterations=None, eps=None, dynamic_shape=None):
    """Polar decomposition `x = u h` (`u` with orthonormal columns, `h`
    symmetric positive semidefinite) by the QR-based dynamically weighted
    Halley iteration: `(u, h, num_iters, is_converged)`. `x` is `m x n` with
    `m >= n`; the iteration stops when an update moves `u` by less than
    `(5 eps)^(1/3)` (Frobenius norm) or after `max_iterations` (default 10)."""
    lax = _lax()
    if dynamic_shape is not None:
        raise NotImplementedError("qdwh: dynamic_shape is not supported")
    x = lax._arr(x)
    shape = _shape(x)
    if len(shape) != 2:
        raise ValueError(f"qdwh requires a matrix, got shape {shape}")
    if shape[0] < shape[1]:
        raise ValueError("The input matrix of shape M x N must have M >= N.")
    max_iterations = 10 if max_iterations is None else int(max_iterations)
    eps = float(np.finfo(np.dtype(core.get_aval(x).dtype_name)).eps) if eps is None else float(eps)
    ax = lax.abs(x)
    one_norm = lax.reduce_max(lax.reduce_sum(ax, (0,)), (0,))
    inf_norm = lax.reduce_max(lax.reduce_sum(ax, (1,)), (0,))
    scale = _where(lax.eq(one_norm, lax._weak_like(0, one_norm)), lax.full_like(one_norm, 1),
                   lax.mul(lax.rsqrt(one_norm), lax.rsqrt(inf_norm)))
    u = _mul(x, scale)
    tol_norm = (10.0 * eps / 2.0) ** (1 / 3)
    not_converged = core.to_array(np.bool_(True))
    schedule = _halley_schedule(eps, max_iterations)
    for a, b, c in schedule:
        prev = u
        u = _halley_qr(u, a, b, c) if c > 100 else _halley_cholesky(u, a, b, c)
        if c <= 100:
            not_converged = lax.gt(_frobenius(lax.sub(u, prev)), lax._weak_like(tol_norm, u))

    def cond(state):
        k, _, going = state
        return lax.bitwise_and(going, lax.lt(k, np.int32(max_iterations)))

    def body(state):
        k, v, _ = state
        nxt = _halley_cholesky(v, 3.0, 1.0, 3.0)
        return lax.add(k, np.int32(1)), nxt, lax.gt(_frobenius(lax.sub(nxt, v)), lax._weak_like(tol_norm, v))

    start = core.to_array(np.int32(len(schedule)))
    num_iters, u, not_converged = lax.while_loop(cond, body, (start, u, not_converged))
    u = _sub(_mul(1.5, u), _mul(0.5, _mm(u, _mm(_swap(u), u))))
    h = _mm(_swap(u), x)
    h = _mul(0.5, _add(h, _swap(h)))
    return u, h, num_iters, lax.bitwise_not(not_converged)
