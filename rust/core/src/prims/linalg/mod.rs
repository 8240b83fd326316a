//! Dense linear algebra with `jax.lax.linalg`'s primitives, names, params and
//! output conventions: `cholesky`, `triangular_solve`, `lu`, `qr`, `eigh`,
//! `svd`, and the nonsymmetric `eig`, `hessenberg` and `schur` (shape,
//! kernel, params and transformation rules).
//!
//! Every operand is a stack of matrices `[..., m, n]` (leading batch
//! dimensions), float32, float64, complex64 or complex128 (`eigh`/`svd`
//! return real eigen-/singular values; `eig` complex results; `schur` the
//! real Schur form of a real operand). Complex operands run on faer and the
//! LAPACK-convention kernels of `lapack` (complex QR, the LU fallback,
//! Hessenberg) and `schur`, a real `schur` on `real_schur`; under
//! `Determinism::Portable` the faer-backed ops on complex operands and `eig`
//! are an error (NotImplementedError), while `hessenberg` and `schur` (plain
//! loops) run. The real operands' other kernels:
//! `dense` on `faer` in the operand's precision (the default mode: blocked,
//! SIMD, with a constant partition count so the bits do not depend on the
//! thread count), and `portable`, plain deterministic f64 loops for
//! `Determinism::Portable` (Cholesky–Banachiewicz, LAPACK-style
//! partial-pivot LU, Householder QR, cyclic Jacobi `eigh`, one-sided Jacobi
//! `svd`). Both follow LAPACK's conventions as JAX's CPU results do
//! (`getrf` pivots: first largest, zero pivots leave the column unscaled;
//! `geqrf`/`orgqr` reflectors; eigenvalues ascending, singular values
//! descending). Failures follow LAPACK/JAX: a matrix that is not positive
//! definite gives a Cholesky factor of NaNs, a singular triangular solve
//! gives infinities/NaNs, non-finite inputs give NaNs; nothing is an error
//! except shapes and dtypes.
//!
//! JVP rules follow JAX's derivations and are emitted with existing
//! primitives (`dot_general`, `triangular_solve`, masks from `iota`), so their
//! tangent parts are linear and transpose with the existing rules;
//! `triangular_solve` is linear in `b` and transposes to a solve with
//! `transpose_a` flipped. Batching moves the mapped axis to the front.

use super::family::{emit, emit1, finish_all, BatchOut, Family, JvpOut, Operand, TransposeOut};
use super::params::{Lookup, Param, ParamList};
use crate::array::{Buffer, HostArray};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::exec::ExecCtx;
use crate::ir::builder::Builder;
use crate::ir::{Atom, Aval, Effect};

pub(crate) mod dense;
mod eig;
pub(crate) mod lapack;
pub(crate) mod portable;
pub(crate) mod real_schur;
mod rules;
pub(crate) mod schur;

pub use dense::PARTITIONS;

/// The `triangular_solve` flags the kernels and rules read.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct SolveOpts {
    pub left_side: bool,
    pub lower: bool,
    pub transpose_a: bool,
    pub unit_diagonal: bool,
}

impl LinalgOp {
    /// The flags of a `triangular_solve` the kernels and rules read (all
    /// false for the other primitives).
    pub(super) fn solve_opts(&self) -> SolveOpts {
        match *self {
            LinalgOp::TriangularSolve {
                left_side,
                lower,
                transpose_a,
                unit_diagonal,
                ..
            } => SolveOpts {
                left_side,
                lower,
                transpose_a,
                unit_diagonal,
            },
            _ => SolveOpts {
                left_side: false,
                lower: false,
                transpose_a: false,
                unit_diagonal: false,
            },
        }
    }
}
use rules::{jvp_cholesky, jvp_eig, jvp_eigh, jvp_lu, jvp_qr, jvp_svd, jvp_triangular_solve};

/// The primitives of this family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LinalgOp {
    /// `cholesky(a) -> l`: lower factor of `a` (only its lower triangle is read).
    Cholesky,
    /// `triangular_solve(a, b) -> x` with `op(a) x = b` (left side) or
    /// `x op(a) = b`; only the `lower` (or upper) triangle of `a` is read.
    TriangularSolve {
        left_side: bool,
        lower: bool,
        transpose_a: bool,
        conjugate_a: bool,
        unit_diagonal: bool,
    },
    /// `lu(a) -> (lu, pivots int32[..., min(m, n)], permutation int32[..., m])`.
    Lu,
    /// `qr(a) -> (q, r)`.
    Qr { full_matrices: bool },
    /// `eigh(a) -> (v, w)`: eigenvectors in columns, eigenvalues ascending
    /// when `sort_eigenvalues`.
    Eigh { lower: bool, sort_eigenvalues: bool },
    /// `svd(a) -> (s, u, vt)`, or `(s,)` without `compute_uv`.
    Svd {
        full_matrices: bool,
        compute_uv: bool,
    },
    /// `eig(a) -> (w, vl?, vr?)`: eigenvalues and the requested left / right
    /// eigenvectors (columns), all complex.
    Eig {
        left: bool,
        right: bool,
        enable_eigvec_derivs: bool,
    },
    /// `hessenberg(a) -> (packed, taus)`: LAPACK `gehrd`'s reduction.
    Hessenberg,
    /// `schur(a) -> (t, vs?)`: the Schur form and, with
    /// `compute_schur_vectors`, the unitary `vs` (`a = vs t vsᴴ`); a real
    /// operand gets its real Schur form (2x2 blocks for conjugate pairs).
    Schur { compute_schur_vectors: bool },
}

// ----------------------------------------------------------------- params

fn flag(p: &Lookup, key: &'static str, default: bool) -> Result<bool> {
    Ok(p.opt_bool(key)?.unwrap_or(default))
}

/// Params JAX has that we accept only at their default (`None`/`False`).
fn only_default(prim: &'static str, p: &Lookup, key: &'static str) -> Result<()> {
    match p.get(key) {
        None | Some(Param::None) | Some(Param::Bool(false)) => Ok(()),
        Some(other) => Err(Error::param(
            prim,
            key,
            format!("only the default is supported, got {other:?}"),
        )),
    }
}

// ----------------------------------------------------------------- nonsymmetric

impl LinalgOp {
    /// The output avals of `eig`, `hessenberg` and `schur`.
    fn nonsymmetric_avals(&self, ins: &[Aval]) -> Result<Vec<Aval>> {
        let name = self.name();
        let a = one_operand(name, ins)?;
        let (lead, n) = square_dims(name, a)?;
        Ok(match *self {
            LinalgOp::Eig { left, right, .. } => {
                let c = a.dtype.complex_dtype().unwrap_or(DType::C64);
                let vectors = usize::from(left).saturating_add(usize::from(right));
                let mut outs = vec![Aval::new(with_tail(lead, &[n]), c)];
                outs.extend(std::iter::repeat_n(Aval::new(a.shape.clone(), c), vectors));
                outs
            }
            LinalgOp::Schur {
                compute_schur_vectors,
            } => vec![
                Aval::new(a.shape.clone(), a.dtype);
                usize::from(compute_schur_vectors).saturating_add(1)
            ],
            _ => vec![
                Aval::new(a.shape.clone(), a.dtype),
                Aval::new(with_tail(lead, &[n.saturating_sub(1)]), a.dtype),
            ],
        })
    }

    /// The outputs of `eig`, `hessenberg` and `schur` (`None` for the other ops).
    /// `eig` runs on faer, which `Determinism::Portable` excludes.
    fn nonsymmetric(&self, ctx: &ExecCtx, args: &[&HostArray]) -> Result<Option<Vec<Buffer>>> {
        let name = self.name();
        let a = || args.first().copied().ok_or(Error::arity(name, 1, 0));
        match *self {
            LinalgOp::Eig { left, right, .. } => {
                if ctx.is_portable() {
                    return Err(Error::NotImplemented(
                        "eig is not supported under Determinism::Portable \
                         (it runs on faer's kernels, the default mode)"
                            .into(),
                    ));
                }
                eig::eig_buffers(name, a()?, eig::Want { left, right }).map(Some)
            }
            LinalgOp::Hessenberg => eig::hessenberg_buffers(name, a()?).map(Some),
            LinalgOp::Schur {
                compute_schur_vectors,
            } => eig::schur_buffers(name, a()?, compute_schur_vectors).map(Some),
            _ => Ok(None),
        }
    }
}

// ----------------------------------------------------------------- shape

/// The larger of the two trailing (matrix) dimensions of `shape`.
fn matrix_width(shape: &[usize]) -> usize {
    shape.iter().rev().take(2).copied().max().unwrap_or(0)
}

/// `(batch dims, rows, cols)` of a float32/float64/complex64/complex128
/// operand of rank >= 2.
fn matrix_dims<'a>(name: &'static str, a: &'a Aval) -> Result<(&'a [usize], usize, usize)> {
    if !matches!(a.dtype, DType::F32 | DType::F64 | DType::C64 | DType::C128) {
        return Err(Error::dtype(
            name,
            &[a.dtype],
            "requires a float32, float64, complex64 or complex128 operand",
        ));
    }
    match a.shape.as_slice() {
        [lead @ .., m, n] => Ok((lead, *m, *n)),
        _ => Err(Error::shape(
            name,
            &[&a.shape],
            "requires an operand of rank >= 2 (a stack of matrices)",
        )),
    }
}

fn square_dims<'a>(name: &'static str, a: &'a Aval) -> Result<(&'a [usize], usize)> {
    let (lead, m, n) = matrix_dims(name, a)?;
    if m != n {
        return Err(Error::shape(
            name,
            &[&a.shape],
            "requires square matrices in the last two dimensions",
        ));
    }
    Ok((lead, n))
}

fn with_tail(lead: &[usize], tail: &[usize]) -> Vec<usize> {
    lead.iter().chain(tail).copied().collect()
}

fn one_operand<'a>(name: &'static str, ins: &'a [Aval]) -> Result<&'a Aval> {
    match ins {
        [a] => Ok(a),
        _ => Err(Error::arity(name, 1, ins.len())),
    }
}

/// The output aval of `triangular_solve(a, b)`.
fn solve_aval(name: &'static str, left_side: bool, ins: &[Aval]) -> Result<Aval> {
    let [a, b] = ins else {
        return Err(Error::arity(name, 2, ins.len()));
    };
    let (a_lead, m) = square_dims(name, a)?;
    let (b_lead, br, bc) = matrix_dims(name, b)?;
    if a.dtype != b.dtype {
        return Err(Error::dtype(
            name,
            &[a.dtype, b.dtype],
            "a and b must have the same dtype",
        ));
    }
    let solved = if left_side { br } else { bc };
    if a_lead != b_lead || solved != m {
        return Err(Error::shape(
            name,
            &[&a.shape, &b.shape],
            "a must be [..., m, m] and b [..., m, n] (left_side) or [..., n, m] with equal batch dimensions",
        ));
    }
    Ok(Aval::new(b.shape.clone(), b.dtype))
}

impl Family for LinalgOp {
    const NAMES: &'static [&'static str] = &[
        "cholesky",
        "triangular_solve",
        "lu",
        "qr",
        "eigh",
        "svd",
        "eig",
        "hessenberg",
        "schur",
    ];

    fn name(&self) -> &'static str {
        match self {
            LinalgOp::Cholesky => "cholesky",
            LinalgOp::TriangularSolve { .. } => "triangular_solve",
            LinalgOp::Lu => "lu",
            LinalgOp::Qr { .. } => "qr",
            LinalgOp::Eigh { .. } => "eigh",
            LinalgOp::Svd { .. } => "svd",
            LinalgOp::Eig { .. } => "eig",
            LinalgOp::Hessenberg => "hessenberg",
            LinalgOp::Schur { .. } => "schur",
        }
    }

    /// Everything but `cholesky` and `triangular_solve` returns a list.
    fn multiple_results(&self) -> bool {
        !matches!(self, LinalgOp::Cholesky | LinalgOp::TriangularSolve { .. })
    }

    fn effect(&self) -> Effect {
        Effect::None
    }

    /// Params as Python sees them (`eqn.params`), JAX's names.
    fn params(&self) -> ParamList {
        match *self {
            LinalgOp::Cholesky | LinalgOp::Lu | LinalgOp::Hessenberg => Vec::new(),
            LinalgOp::Eig {
                left,
                right,
                enable_eigvec_derivs,
            } => vec![
                ("compute_left_eigenvectors", Param::Bool(left)),
                ("compute_right_eigenvectors", Param::Bool(right)),
                ("enable_eigvec_derivs", Param::Bool(enable_eigvec_derivs)),
                ("implementation", Param::None),
            ],
            LinalgOp::Schur {
                compute_schur_vectors,
            } => vec![
                ("compute_schur_vectors", Param::Bool(compute_schur_vectors)),
                ("select_callable", Param::None),
                ("sort_eig_vals", Param::Bool(false)),
            ],
            LinalgOp::TriangularSolve { conjugate_a, .. } => {
                let o = self.solve_opts();
                vec![
                    ("conjugate_a", Param::Bool(conjugate_a)),
                    ("left_side", Param::Bool(o.left_side)),
                    ("lower", Param::Bool(o.lower)),
                    ("transpose_a", Param::Bool(o.transpose_a)),
                    ("unit_diagonal", Param::Bool(o.unit_diagonal)),
                ]
            }
            LinalgOp::Qr { full_matrices } => vec![
                ("full_matrices", Param::Bool(full_matrices)),
                ("pivoting", Param::Bool(false)),
                ("use_magma", Param::None),
            ],
            LinalgOp::Eigh {
                lower,
                sort_eigenvalues,
            } => vec![
                ("lower", Param::Bool(lower)),
                ("sort_eigenvalues", Param::Bool(sort_eigenvalues)),
                ("subset_by_index", Param::None),
            ],
            LinalgOp::Svd {
                full_matrices,
                compute_uv,
            } => vec![
                ("algorithm", Param::None),
                ("compute_uv", Param::Bool(compute_uv)),
                ("full_matrices", Param::Bool(full_matrices)),
                ("subset_by_index", Param::None),
            ],
        }
    }

    fn from_params(name: &str, p: &Lookup<'_>) -> Result<Option<LinalgOp>> {
        Ok(Some(match name {
            "cholesky" => LinalgOp::Cholesky,
            "lu" => LinalgOp::Lu,
            "hessenberg" => LinalgOp::Hessenberg,
            "schur" => {
                only_default("schur", p, "select_callable")?;
                only_default("schur", p, "sort_eig_vals")?;
                LinalgOp::Schur {
                    compute_schur_vectors: flag(p, "compute_schur_vectors", true)?,
                }
            }
            "eig" => {
                only_default("eig", p, "implementation")?;
                LinalgOp::Eig {
                    left: flag(p, "compute_left_eigenvectors", true)?,
                    right: flag(p, "compute_right_eigenvectors", true)?,
                    enable_eigvec_derivs: flag(p, "enable_eigvec_derivs", false)?,
                }
            }
            "triangular_solve" => LinalgOp::TriangularSolve {
                left_side: flag(p, "left_side", false)?,
                lower: flag(p, "lower", false)?,
                transpose_a: flag(p, "transpose_a", false)?,
                conjugate_a: flag(p, "conjugate_a", false)?,
                unit_diagonal: flag(p, "unit_diagonal", false)?,
            },
            "qr" => {
                only_default("qr", p, "pivoting")?;
                LinalgOp::Qr {
                    full_matrices: flag(p, "full_matrices", true)?,
                }
            }
            "eigh" => {
                only_default("eigh", p, "subset_by_index")?;
                LinalgOp::Eigh {
                    lower: flag(p, "lower", true)?,
                    sort_eigenvalues: flag(p, "sort_eigenvalues", true)?,
                }
            }
            "svd" => {
                only_default("svd", p, "subset_by_index")?;
                only_default("svd", p, "algorithm")?;
                LinalgOp::Svd {
                    full_matrices: flag(p, "full_matrices", true)?,
                    compute_uv: flag(p, "compute_uv", true)?,
                }
            }
            _ => return Ok(None),
        }))
    }

    fn display_params(&self, _params: &mut ParamList) {}

    fn examples() -> Vec<LinalgOp> {
        vec![
            LinalgOp::Cholesky,
            LinalgOp::TriangularSolve {
                left_side: true,
                lower: true,
                transpose_a: false,
                conjugate_a: false,
                unit_diagonal: false,
            },
            LinalgOp::Lu,
            LinalgOp::Qr {
                full_matrices: false,
            },
            LinalgOp::Eigh {
                lower: true,
                sort_eigenvalues: true,
            },
            LinalgOp::Svd {
                full_matrices: false,
                compute_uv: true,
            },
            LinalgOp::Eig {
                left: false,
                right: true,
                enable_eigvec_derivs: false,
            },
            LinalgOp::Hessenberg,
            LinalgOp::Schur {
                compute_schur_vectors: true,
            },
        ]
    }

    fn abstract_eval(&self, ins: &[Aval]) -> Result<Vec<Aval>> {
        let name = self.name();
        Ok(match *self {
            LinalgOp::TriangularSolve { left_side, .. } => {
                vec![solve_aval(name, left_side, ins)?]
            }
            LinalgOp::Cholesky => {
                let a = one_operand(name, ins)?;
                square_dims(name, a)?;
                vec![Aval::new(a.shape.clone(), a.dtype)]
            }
            LinalgOp::Lu => {
                let a = one_operand(name, ins)?;
                let (lead, m, n) = matrix_dims(name, a)?;
                vec![
                    Aval::new(a.shape.clone(), a.dtype),
                    Aval::new(with_tail(lead, &[m.min(n)]), DType::I32),
                    Aval::new(with_tail(lead, &[m]), DType::I32),
                ]
            }
            LinalgOp::Qr { full_matrices } => {
                let a = one_operand(name, ins)?;
                let (lead, m, n) = matrix_dims(name, a)?;
                let k = if full_matrices { m } else { m.min(n) };
                vec![
                    Aval::new(with_tail(lead, &[m, k]), a.dtype),
                    Aval::new(with_tail(lead, &[k, n]), a.dtype),
                ]
            }
            LinalgOp::Eigh { .. } => {
                let a = one_operand(name, ins)?;
                let (lead, n) = square_dims(name, a)?;
                vec![
                    Aval::new(a.shape.clone(), a.dtype),
                    Aval::new(with_tail(lead, &[n]), a.dtype.real_dtype()),
                ]
            }
            LinalgOp::Eig { .. } | LinalgOp::Hessenberg | LinalgOp::Schur { .. } => {
                self.nonsymmetric_avals(ins)?
            }
            LinalgOp::Svd {
                full_matrices,
                compute_uv,
            } => {
                let a = one_operand(name, ins)?;
                let dt = a.dtype;
                let (lead, m, n) = matrix_dims(name, a)?;
                let k = m.min(n);
                let s = Aval::new(with_tail(lead, &[k]), dt.real_dtype());
                if !compute_uv {
                    return Ok(vec![s]);
                }
                let (uc, vr) = if full_matrices { (m, n) } else { (k, k) };
                vec![
                    s,
                    Aval::new(with_tail(lead, &[m, uc]), dt),
                    Aval::new(with_tail(lead, &[vr, n]), dt),
                ]
            }
        })
    }

    fn kernel(
        &self, ctx: &ExecCtx, args: &[&HostArray], outs: Vec<Aval>,
    ) -> Result<Vec<HostArray>> {
        let dtype = args.first().map_or(DType::F32, |a| a.dtype());
        // faer's parallel loops run on the kernel pool; small matrices run
        // sequentially, without the hand-off to its threads.
        let width = args
            .iter()
            .map(|a| matrix_width(a.shape()))
            .max()
            .unwrap_or(0);
        let on_pool = |f: &(dyn Fn() -> Result<Option<Vec<Buffer>>> + Sync)| {
            if dense::runs_parallel(self, width) {
                crate::exec::pool::install(f)
            } else {
                f()
            }
        };
        if let Some(bufs) = on_pool(&|| self.nonsymmetric(ctx, args))? {
            return finish_all(self.name(), outs, bufs);
        }
        if ctx.is_portable() && dtype.is_complex() {
            return Err(Error::NotImplemented(format!(
                "{}: complex operands are not supported under Determinism::Portable \
                 (the portable kernels are real; the default mode computes them)",
                self.name()
            )));
        }
        let fast = if ctx.is_portable() {
            None
        } else {
            on_pool(&|| dense::eval_buffers(self, args))?
        };
        let bufs = match fast {
            Some(bufs) => bufs,
            None => portable::eval_buffers(self, args, dtype)?,
        };
        finish_all(self.name(), outs, bufs)
    }

    fn jvp(&self, b: &mut Builder, xs: &[Atom], ts: &[Option<Atom>]) -> JvpOut {
        let op = *self;
        let primal_tangent = match (xs.first(), ts.first()) {
            (Some(x), Some(Some(t))) => Some((x.clone(), t.clone())),
            _ => None,
        };
        match (op, primal_tangent) {
            (LinalgOp::TriangularSolve { .. }, _) => {
                jvp_triangular_solve(op, op.solve_opts(), b, xs, ts)
            }
            (_, None) => {
                let outs = emit(b, op, xs.to_vec())?;
                let none = vec![None; outs.len()];
                Ok((outs, none))
            }
            (LinalgOp::Cholesky, Some((x, t))) => jvp_cholesky(b, x, t),
            (LinalgOp::Eig { .. }, Some((x, t))) => jvp_eig(op, b, x, t),
            (LinalgOp::Hessenberg | LinalgOp::Schur { .. }, Some(_)) => Err(Error::NotImplemented(
                format!("Differentiation rule for '{}' not implemented", op.name()),
            )),
            (LinalgOp::Lu, Some((x, t))) => jvp_lu(b, x, t),
            (LinalgOp::Qr { full_matrices }, Some((x, t))) => jvp_qr(b, x, t, full_matrices),
            (LinalgOp::Eigh { .. }, Some((x, t))) => jvp_eigh(op, b, x, t),
            (
                LinalgOp::Svd {
                    full_matrices,
                    compute_uv,
                },
                Some((x, t)),
            ) => jvp_svd(b, x, t, full_matrices, compute_uv),
        }
    }

    /// `triangular_solve` is linear in `b` (with `a` known): its transpose
    /// solves with `transpose_a` flipped.
    fn transpose(&self, b: &mut Builder, cts: &[Option<Atom>], ops: &[Operand]) -> TransposeOut {
        let LinalgOp::TriangularSolve {
            left_side,
            lower,
            transpose_a,
            conjugate_a,
            unit_diagonal,
        } = *self
        else {
            return super::family::transpose_not_linear(self.name());
        };
        let (Some(Operand::Known(a)), Some(Operand::Linear(_))) = (ops.first(), ops.get(1)) else {
            return Err(super::transpose::not_linear_error(
                "triangular_solve",
                " (only b may be linear)",
            ));
        };
        let Some(Some(ct)) = cts.first() else {
            return Ok(vec![None, None]);
        };
        let flipped = LinalgOp::TriangularSolve {
            left_side,
            lower,
            transpose_a: !transpose_a,
            conjugate_a,
            unit_diagonal,
        };
        let ct_b = emit1(b, flipped, vec![a.clone(), ct.clone()])?;
        Ok(vec![None, Some(ct_b)])
    }

    /// Every operand gets the mapped axis in front (the ops take leading
    /// batch dimensions; an unbatched `triangular_solve` operand is
    /// broadcast).
    fn batch(&self, b: &mut Builder, ins: &[Atom], dims: &[Option<usize>], n: usize) -> BatchOut {
        let op = *self;
        if dims.iter().all(Option::is_none) {
            let outs = emit(b, op, ins.to_vec())?;
            let d = vec![None; outs.len()];
            return Ok((outs, d));
        }
        let front = super::batch::all_batch_first(b, ins, dims, n)?;
        let outs = emit(b, op, front)?;
        let d = vec![Some(0); outs.len()];
        Ok((outs, d))
    }
}
