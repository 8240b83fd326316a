"""`lax.custom_root` and `lax.custom_linear_solve`: solvers whose derivatives
come from the equation they solve, not from the solver's iterations.

`custom_root` differentiates by the implicit function theorem: at a root
`x*` of `f(x, θ) = 0`, `dx* = -(∂f/∂x)⁻¹ ∂f/∂θ dθ`, the inverse applied by
`tangent_solve`. `custom_linear_solve` differentiates `x = A⁻¹ b`:
`dx = A⁻¹ (db - dA x)`, and transposes `A⁻¹` with `transpose_solve` (or
`solve` itself when `symmetric`). Values `f`, `matvec` and the solvers close
over are hoisted into explicit arguments (`closure_convert`); derivatives flow
through `f`'s / `matvec`'s and the right-hand side, never through the
solvers' own values (as in JAX)."""
from ..tree_util import tree_flatten, tree_map, tree_structure


def _api():
    from .. import _grad, custom_derivatives

    return _grad, custom_derivatives


def _stop(tree):
    from . import stop_gradient

    return stop_gradient(tree)


def _check_structure(what, got, want):
    got_tree, want_tree = tree_structure(got), tree_structure(want)
    if got_tree != want_tree:
        raise TypeError(f"{what} output must have the same structure as its input, got {got_tree} and {want_tree}")


def custom_root(f, initial_guess, solve, tangent_solve, has_aux=False):
    """The root `solve(f, initial_guess)` of `f`, differentiable through the
    implicit function theorem: `tangent_solve(g, y)` must solve the linear
    `g(x) = y` (g is `f`'s derivative at the root). With `has_aux`, `solve`
    returns `(root, aux)` and `aux` carries no derivative."""
    _grad, cd = _api()
    f_conv, f_consts = cd.closure_convert(f, initial_guess)
    _check_structure("f", f(initial_guess), initial_guess)

    def run_solve(x0):
        out = solve(f, x0)
        return out if has_aux else (out, None)

    solve_conv, s_consts = cd.closure_convert(run_solve, initial_guess)

    @cd.custom_jvp
    def root(fc, sc, x0):
        return solve_conv(x0, *sc)[0]

    def root_jvp(primals, tangents):
        fc, sc, x0 = primals
        dfc = tangents[0]
        x = root(fc, sc, x0)
        if fc:
            _, rhs = _grad.jvp(lambda *c: f_conv(x, *c), tuple(fc), tuple(dfc))
        else:
            rhs = tree_map(lambda v: v * 0, x)

        def g(v):
            return _grad.jvp(lambda y: f_conv(y, *fc), (x,), (v,))[1]

        return x, tangent_solve(g, tree_map(lambda r: -r, rhs))

    root.defjvp(root_jvp)
    x = root(list(f_consts), list(s_consts), initial_guess)
    if has_aux:
        return x, _stop(solve_conv(initial_guess, *s_consts)[1])
    return x


def _transpose_error():
    return TypeError("transpose_solve required for backwards mode automatic differentiation of "
                     "custom_linear_solve")


def custom_linear_solve(matvec, b, solve, transpose_solve=None, symmetric=False, has_aux=False):
    """`x = solve(matvec, b)`, the solution of the linear `matvec(x) = b`,
    differentiated as `A⁻¹ b` (implicit differentiation; the solver's steps are
    never differentiated). Reverse mode needs `transpose_solve(vecmat, b)` (the
    solve of the transposed system), or `symmetric=True` to reuse `solve`.
    With `has_aux`, `solve` returns `(x, aux)`."""
    _grad, cd = _api()
    b_leaves, _ = tree_flatten(b)
    _check_structure("matvec", matvec(b), b)
    mv_conv, mv_consts = cd.closure_convert(matvec, b)

    def run_solve(rhs):
        out = solve(matvec, rhs)
        return out if has_aux else (out, None)

    solve_conv, s_consts = cd.closure_convert(run_solve, b)
    if symmetric and transpose_solve is None:
        t_conv, t_consts = solve_conv, s_consts
    elif transpose_solve is not None:
        def vecmat(y):
            (ct,) = _grad.linear_transpose(matvec, b)(y)
            return ct

        def run_transpose(rhs):
            out = transpose_solve(vecmat, rhs)
            return out if has_aux else (out, None)

        t_conv, t_consts = cd.closure_convert(run_transpose, b)
    else:
        t_conv, t_consts = None, []

    def apply_solve(res, rhs):
        return solve_conv(rhs, *res[0])[0]

    def apply_transpose(res, ct):
        if t_conv is None:
            raise _transpose_error()
        return t_conv(ct, *res[1])[0]

    @cd.custom_jvp
    def linear_solve(mc, sc, tc, rhs):
        return solve_conv(rhs, *sc)[0]

    def linear_solve_jvp(primals, tangents):
        mc, sc, tc, rhs = primals
        dmc, drhs = tangents[0], tangents[3]
        x = linear_solve(mc, sc, tc, rhs)
        if mc:
            _, dmv = _grad.jvp(lambda *c: mv_conv(x, *c), tuple(mc), tuple(dmc))
            drhs = tree_map(lambda u, v: u - v, drhs, dmv)
        res = (list(sc), list(tc))
        return x, cd.linear_call(apply_solve, apply_transpose, res, drhs)

    linear_solve.defjvp(linear_solve_jvp)
    if not b_leaves:
        return b
    x = linear_solve(list(mv_consts), list(s_consts), list(t_consts), b)
    if has_aux:
        return x, _stop(solve_conv(b, *s_consts)[1])
    return x
