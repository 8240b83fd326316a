//! The device plan: what each equation of a simplified program becomes on a
//! GPU. Pure (no CUDA types), so the whole decision is tested everywhere;
//! the runtime (`exec`, feature `cuda`) only carries it out.
//!
//! * fusion groups of the compiled CPU plan, and single elementwise
//!   equations, → generated kernels ([`super::codegen`]);
//! * reductions, cumulative ops, `iota`, `threefry2x32` → generated kernels
//!   ([`super::kernels`]);
//! * `dot_general` of f32/f64 whose batch axes lead and whose contracting
//!   axes are one contiguous run on each side → cuBLAS ([`GemmSpec`]);
//! * standalone reshapes/squeezes → a new view of the same buffer;
//! * `transpose`, `slice`, `rev`, `pad`, `concatenate`, `dynamic_slice`,
//!   `dynamic_update_slice` → generated kernels ([`super::structural`]);
//! * `gather`, and scatters whose windows cannot overlap → generated
//!   kernels ([`super::indexing`]);
//! * `fft` of complex64/complex128 (and float32/float64 for `RFFT`) over
//!   one to three trailing axes → cuFFT, inverse transforms scaled by a
//!   generated kernel ([`super::fft`]);
//! * complex64/complex128 elements through all of the above, except the
//!   orderings (`max`/`min` reductions, scans and scatters, arg
//!   reductions: lexicographic in JAX), which stay on the host;
//! * `process_allreduce`, `process_allgather`, `process_broadcast` → NCCL
//!   on the device's stream ([`super::collective`]; 16-bit integer and
//!   half-float reductions on the host);
//! * `cond`, `while`, `scan` → driven from the host over device plans of
//!   their sub-programs ([`super::driver`]);
//! * everything else (other scatters, sorts, linear algebra, f16/bf16
//!   transforms, ...) → the host: inputs copied back, the equation run
//!   by the compiled CPU executor, outputs copied up (correct, slow).

use super::codegen::{self, c_type, group_kernel, KernelSource, Lowering};
use super::collective::{collective_spec, CollectiveSpec};
use super::fft::{self, FftSpec};
use super::indexing::{self, IndexedShapes};
use super::kernels;
use super::structural;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::exec::compiled::fusion::{self, broadcast_access, Group};
use crate::exec::compiled::simplify;
use crate::ir::{Atom, Aval, ClosedJaxpr, Eqn, Jaxpr, Var};
use crate::prims::{
    ArgReduce, BroadcastInDim, Concatenate, Cumulative, DotGeneral, DynamicSlice,
    DynamicUpdateSlice, Iota, Pad, Reduce, Reshape, Rev, Slice, Squeeze, StopGradient, Transpose,
};
use crate::prims::{DotDims, Primitive};

/// One step of a device plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceStep {
    /// A generated kernel (`eqns`: the equations it computes).
    Kernel {
        eqns: Vec<usize>,
        kernel: KernelSource,
    },
    /// A cuBLAS (strided batched) GEMM for equation `eqn`.
    Gemm { eqn: usize, spec: GemmSpec },
    /// A `cond`, `while` or `scan` driven from the host: its sub-programs
    /// run as device plans of their own, its values stay on the device.
    Control { eqn: usize },
    /// A scatter: `out` starts as a device copy of `operand`, then `kernel`
    /// combines the updates into it.
    Scatter {
        eqn: usize,
        operand: Var,
        kernel: KernelSource,
    },
    /// A cuFFT transform for equation `eqn` (its inverse scaling kernel in
    /// the spec).
    Fft { eqn: usize, spec: FftSpec },
    /// A collective between processes for equation `eqn`, through NCCL
    /// ([`super::collective`]).
    Collective { eqn: usize, spec: CollectiveSpec },
    /// `out` is `input`'s buffer under a new shape.
    Alias { eqn: usize, input: Var, out: Var },
    /// Equation `eqn` runs on the host.
    Host { eqn: usize, reason: &'static str },
}

/// A row-major batched matrix product `out[b] = lhs[b] · rhs[b]` with `lhs[b]`
/// stored `m×k` (or `k×m` when `lhs_transposed`) and `rhs[b]` stored `k×n`
/// (or `n×k` when `rhs_transposed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GemmSpec {
    pub dtype: DType,
    pub batch: usize,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub lhs_transposed: bool,
    pub rhs_transposed: bool,
}

/// Product of `shape[range]`.
fn prod(shape: &[usize], from: usize, to: usize) -> Option<usize> {
    shape
        .get(from..to)?
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
}

/// Whether `axes` is `start, start+1, ...`.
fn is_run(axes: &[usize], start: usize) -> bool {
    axes.iter()
        .enumerate()
        .all(|(j, &a)| start.checked_add(j) == Some(a))
}

/// The free axes and the contracting run of one operand: `Some(transposed)`
/// when the contracting axes are the trailing run (`false`: `[.., free,
/// contract]`) or the run right after the batch axes (`true`).
fn operand_layout(rank: usize, nb: usize, contract: &[usize]) -> Option<bool> {
    let nc = contract.len();
    if is_run(contract, rank.checked_sub(nc)?) {
        Some(false)
    } else if is_run(contract, nb) {
        Some(true)
    } else {
        None
    }
}

/// The cuBLAS form of a `dot_general`, `None` when it has none.
pub fn gemm_spec(
    dims: &DotDims, lhs: &[usize], rhs: &[usize], dtypes: [DType; 3],
) -> Option<GemmSpec> {
    let [dl, dr, dout] = dtypes;
    if dl != dr || dl != dout || !matches!(dl, DType::F32 | DType::F64 | DType::C64 | DType::C128) {
        return None;
    }
    let nb = dims.lhs_batch.len();
    if !is_run(&dims.lhs_batch, 0) || !is_run(&dims.rhs_batch, 0) || dims.rhs_batch.len() != nb {
        return None;
    }
    if dims.lhs_contract.len() != dims.rhs_contract.len() {
        return None;
    }
    // `Some(false)`: contracting axes trailing ([.., free, k]).
    let lhs_k_first = operand_layout(lhs.len(), nb, &dims.lhs_contract)?;
    // The rhs prefers `[.., k, n]` (not transposed) when both layouts fit
    // (a vector, or a single free element).
    let rhs_k_first =
        is_run(&dims.rhs_contract, nb) || operand_layout(rhs.len(), nb, &dims.rhs_contract)?;
    let batch = prod(lhs, 0, nb)?;
    let k = dims
        .lhs_contract
        .iter()
        .try_fold(1usize, |acc, &ax| acc.checked_mul(*lhs.get(ax)?))?;
    let free = |shape: &[usize], contract: &[usize]| {
        (nb..shape.len())
            .filter(|ax| !contract.contains(ax))
            .try_fold(1usize, |acc, ax| acc.checked_mul(*shape.get(ax)?))
    };
    let m = free(lhs, &dims.lhs_contract)?;
    let n = free(rhs, &dims.rhs_contract)?;
    // An empty contraction is a fill with zeros: left to the host.
    if k == 0 {
        return None;
    }
    let ok_i32 = |v: usize| i32::try_from(v).is_ok();
    if ![batch, m, n, k].into_iter().all(ok_i32) {
        return None;
    }
    Some(GemmSpec {
        dtype: dl,
        batch,
        m,
        n,
        k,
        lhs_transposed: lhs_k_first,
        rhs_transposed: !rhs_k_first,
    })
}

/// How an equation outside any fusion group runs.
fn single_step(jx: &Jaxpr, i: usize, eqn: &Eqn) -> Result<DeviceStep> {
    let out = match eqn.outputs.as_slice() {
        [o] => Some((*o, jx.aval(*o)?)),
        _ => None,
    };
    match &eqn.prim {
        Primitive::Reduce(_)
        | Primitive::Cumulative(_)
        | Primitive::Arg(_)
        | Primitive::Iota(_) => reduction_step(jx, i, eqn, out),
        Primitive::Threefry2x32(_)
        | Primitive::Gather(_)
        | Primitive::Scatter(_)
        | Primitive::DotGeneral(_) => indexed_step(jx, i, eqn, out),
        Primitive::Process(c) => match eqn.inputs.as_slice() {
            [x] => match var_aval(jx, x) {
                Some((_, xa)) => match collective_spec(c, xa) {
                    Ok(Some(spec)) => Ok(DeviceStep::Collective { eqn: i, spec }),
                    Ok(None) => host_step(i, "an identity the simplifier keeps"),
                    Err(reason) => host_step(i, reason),
                },
                None => host_step(i, "a collective of a literal"),
            },
            _ => host_step(i, "collective operands"),
        },
        Primitive::Fft(p) => match (eqn.inputs.as_slice(), out) {
            ([x], Some((o, oa))) => match var_aval(jx, x) {
                Some((_, xa)) => match fft::fft_spec(p, xa, oa, o)? {
                    Some(spec) => Ok(DeviceStep::Fft { eqn: i, spec }),
                    None => host_step(i, "fft that cuFFT does not take (f16/bf16, empty)"),
                },
                None => host_step(i, "fft of a literal"),
            },
            _ => host_step(i, "fft operands"),
        },
        _ => movement_step(jx, i, eqn, out),
    }
}

/// A host step of equation `i`, for `reason`.
fn host_step(i: usize, reason: &'static str) -> Result<DeviceStep> {
    Ok(DeviceStep::Host { eqn: i, reason })
}

/// The variable of `a` and its aval (`None` for a literal).
fn var_aval<'a>(jx: &'a Jaxpr, a: &Atom) -> Option<(Var, &'a Aval)> {
    match a {
        Atom::Var(v) => jx.aval(*v).ok().map(|x| (*v, x)),
        Atom::Lit(_) => None,
    }
}

/// Equation `i` as a kernel of its own when it is an elementwise one, else
/// on the host.
fn fallback_step(jx: &Jaxpr, i: usize, eqn: &Eqn) -> Result<DeviceStep> {
    match singleton_group(jx, i, eqn)? {
        Some(g) => group_step(jx, &g),
        None => host_step(i, "no device lowering"),
    }
}

/// `single_step` of reductions, cumulative ops, arg reductions and `iota`.
fn reduction_step(
    jx: &Jaxpr, i: usize, eqn: &Eqn, out: Option<(Var, &Aval)>,
) -> Result<DeviceStep> {
    match (&eqn.prim, eqn.inputs.as_slice(), out) {
        (Primitive::Reduce(Reduce { op, axes }), [x], Some((o, oa))) => match var_aval(jx, x) {
            Some((v, xa)) if kernels::reduce_lowers(*op, xa.dtype) && xa.dtype == oa.dtype => {
                let kernel = kernels::reduce_kernel(*op, xa.dtype, &xa.shape, axes, v, o)?;
                Ok(DeviceStep::Kernel {
                    eqns: vec![i],
                    kernel,
                })
            }
            _ => host_step(i, "reduction of a literal, or complex max/min"),
        },
        (Primitive::Cumulative(Cumulative { op, axis, reverse }), [x], Some((o, _))) => {
            match var_aval(jx, x) {
                Some((v, xa)) if kernels::cumulative_lowers(*op, xa.dtype) => {
                    let kernel = kernels::cumulative_kernel(
                        *op, xa.dtype, &xa.shape, *axis, *reverse, v, o,
                    )?;
                    Ok(DeviceStep::Kernel {
                        eqns: vec![i],
                        kernel,
                    })
                }
                _ => host_step(i, "cumlogsumexp, bool elements, or complex cummax/cummin"),
            }
        }
        (
            Primitive::Arg(ArgReduce {
                op,
                axis,
                index_dtype,
            }),
            [x],
            Some((o, _)),
        ) => match var_aval(jx, x) {
            Some((v, xa)) if kernels::accumulates_on_device(xa.dtype) => Ok(DeviceStep::Kernel {
                eqns: vec![i],
                kernel: kernels::arg_kernel(*op, xa.dtype, &xa.shape, *axis, *index_dtype, (v, o))?,
            }),
            _ => host_step(i, "argmax/argmin of a literal or of complex elements"),
        },
        (
            Primitive::Iota(Iota {
                dtype,
                shape,
                dimension,
            }),
            [],
            Some((o, _)),
        ) if c_type(*dtype).is_some() || dtype.is_complex() => Ok(DeviceStep::Kernel {
            eqns: vec![i],
            kernel: kernels::iota_kernel(*dtype, shape, *dimension, o)?,
        }),
        _ => fallback_step(jx, i, eqn),
    }
}

/// `single_step` of `threefry2x32`, `gather`, scatters and `dot_general`.
fn indexed_step(jx: &Jaxpr, i: usize, eqn: &Eqn, out: Option<(Var, &Aval)>) -> Result<DeviceStep> {
    match (&eqn.prim, eqn.inputs.as_slice(), out) {
        (Primitive::Threefry2x32(_), [a, b, c, d], None) => threefry_step(jx, i, eqn, [a, b, c, d]),
        (Primitive::Gather(g), [Atom::Var(x), Atom::Var(idx)], Some((o, oa))) => {
            let Some(shapes) = IndexedShapes::of(jx.aval(*x)?, jx.aval(*idx)?, &oa.shape) else {
                return host_step(i, "gather of f16/bf16/key elements or non-integer indices");
            };
            Ok(DeviceStep::Kernel {
                eqns: vec![i],
                kernel: indexing::gather_kernel(g, &shapes, [*x, *idx, o])?,
            })
        }
        (Primitive::Scatter(sp), [Atom::Var(x), Atom::Var(idx), Atom::Var(u)], Some((o, _))) => {
            let ua = jx.aval(*u)?;
            let Some(shapes) = IndexedShapes::of(jx.aval(*x)?, jx.aval(*idx)?, &ua.shape) else {
                return host_step(i, "scatter of f16/bf16/key elements or non-integer indices");
            };
            if !indexing::scatter_combines(sp.op, shapes.dtype) {
                return host_step(i, "complex scatter-min/max (a lexicographic order)");
            }
            if !indexing::scatter_lowers(sp, shapes.operand.len(), &ua.shape) {
                return host_step(
                    i,
                    "scatter whose windows can overlap (an indexed axis with a window)",
                );
            }
            Ok(DeviceStep::Scatter {
                eqn: i,
                operand: *x,
                kernel: indexing::scatter_kernel(sp, &shapes, [*idx, *u, o])?,
            })
        }
        (
            Primitive::DotGeneral(DotGeneral {
                dims,
                preferred_element_type: _,
            }),
            [x, y],
            Some((_, oa)),
        ) => match (var_aval(jx, x), var_aval(jx, y)) {
            (Some((_, xa)), Some((_, ya))) => {
                match gemm_spec(dims, &xa.shape, &ya.shape, [xa.dtype, ya.dtype, oa.dtype]) {
                    Some(spec) => Ok(DeviceStep::Gemm { eqn: i, spec }),
                    None => host_step(i, "dot_general that is not a batched f32/f64/c64/c128 GEMM"),
                }
            }
            _ => host_step(i, "dot_general of a literal"),
        },
        _ => fallback_step(jx, i, eqn),
    }
}

/// `single_step` of control flow, data movement and broadcasts (and of
/// every other primitive: `fallback_step`).
fn movement_step(jx: &Jaxpr, i: usize, eqn: &Eqn, out: Option<(Var, &Aval)>) -> Result<DeviceStep> {
    match (&eqn.prim, eqn.inputs.as_slice(), out) {
        (Primitive::Control(_), _, _) => Ok(DeviceStep::Control { eqn: i }),
        (
            Primitive::Transpose(Transpose { .. })
            | Primitive::Slice(Slice { .. })
            | Primitive::Rev(Rev { .. })
            | Primitive::Pad(Pad { .. })
            | Primitive::Concatenate(Concatenate { .. })
            | Primitive::DynamicSlice(DynamicSlice { .. })
            | Primitive::DynamicUpdateSlice(DynamicUpdateSlice),
            ins,
            Some((o, _)),
        ) => structural_step(
            jx,
            i,
            ins,
            o,
            "data movement of keys/float0, or of a literal array",
        ),
        (
            Primitive::Reshape(Reshape { .. })
            | Primitive::Squeeze(Squeeze { .. })
            | Primitive::StopGradient(StopGradient),
            [Atom::Var(x)],
            Some((o, _)),
        ) => Ok(DeviceStep::Alias {
            eqn: i,
            input: *x,
            out: o,
        }),
        // A broadcast that only adds unit axes is a reshape.
        (Primitive::BroadcastInDim(BroadcastInDim { .. }), [Atom::Var(x)], Some((o, oa)))
            if jx.aval(*x)?.size()? == oa.size()? =>
        {
            Ok(DeviceStep::Alias {
                eqn: i,
                input: *x,
                out: o,
            })
        }
        // Other broadcasts: fused-style when the input is read through a
        // simple access, else an index-mapping kernel.
        (Primitive::BroadcastInDim(BroadcastInDim { .. }), ins, Some((o, _))) => {
            match singleton_group(jx, i, eqn)? {
                Some(g) => group_step(jx, &g),
                None => structural_step(jx, i, ins, o, "broadcast of keys/float0"),
            }
        }
        _ => fallback_step(jx, i, eqn),
    }
}

/// The index-mapping kernel of data-movement equation `i`, or a host step
/// for `reason` when it has none.
fn structural_step(
    jx: &Jaxpr, i: usize, ins: &[Atom], out: Var, reason: &'static str,
) -> Result<DeviceStep> {
    let eqn = jx
        .eqns
        .get(i)
        .ok_or_else(|| Error::InvalidArgument("cuda plan: equation index".into()))?;
    match structural::structural_kernel(jx, &eqn.prim, ins, out) {
        Ok(Some(kernel)) => Ok(DeviceStep::Kernel {
            eqns: vec![i],
            kernel,
        }),
        Ok(None) | Err(Error::Unsupported(_)) => Ok(DeviceStep::Host { eqn: i, reason }),
        Err(e) => Err(e),
    }
}

fn threefry_step(jx: &Jaxpr, i: usize, eqn: &Eqn, ins: [&Atom; 4]) -> Result<DeviceStep> {
    let [o0, o1] = eqn.outputs.as_slice() else {
        return Ok(DeviceStep::Host {
            eqn: i,
            reason: "threefry2x32 output count",
        });
    };
    let len = jx.aval(*o0)?.size()?;
    let mut vars = Vec::with_capacity(4);
    for a in ins {
        let Atom::Var(v) = a else {
            return Ok(DeviceStep::Host {
                eqn: i,
                reason: "threefry2x32 of a literal",
            });
        };
        vars.push((*v, jx.aval(*v)?.size()?));
    }
    let [a, b, c, d] = vars.as_slice() else {
        return Err(Error::InvalidArgument("threefry2x32 operands".into()));
    };
    Ok(DeviceStep::Kernel {
        eqns: vec![i],
        kernel: kernels::threefry_kernel([*a, *b, *c, *d], [*o0, *o1], len),
    })
}

/// A one-member group for an elementwise equation the CPU fusion left alone
/// (its operands full-shape or scalars, or a lowerable broadcast).
fn singleton_group(jx: &Jaxpr, i: usize, eqn: &Eqn) -> Result<Option<Group>> {
    let [o] = eqn.outputs.as_slice() else {
        return Ok(None);
    };
    let oa = jx.aval(*o)?;
    let in_dtype = match eqn.inputs.last() {
        Some(Atom::Var(v)) => jx.aval(*v)?.dtype,
        Some(Atom::Lit(l)) => l.aval.dtype,
        None => return Ok(None),
    };
    if codegen::lowering(&eqn.prim, in_dtype, oa.dtype) != Lowering::Kernel {
        return Ok(None);
    }
    let fits = match (&eqn.prim, eqn.inputs.as_slice()) {
        (
            Primitive::BroadcastInDim(BroadcastInDim {
                shape,
                broadcast_dimensions,
            }),
            [Atom::Var(x)],
        ) => broadcast_access(&jx.aval(*x)?.shape, shape, broadcast_dimensions).is_some(),
        (
            Primitive::BroadcastInDim(BroadcastInDim { .. })
            | Primitive::Reshape(Reshape { .. })
            | Primitive::Squeeze(Squeeze { .. }),
            _,
        ) => false,
        (_, ins) => ins.iter().all(|a| match a {
            Atom::Var(v) => jx
                .aval(*v)
                .is_ok_and(|x| x.shape == oa.shape || x.shape.is_empty()),
            Atom::Lit(_) => true,
        }),
    };
    Ok(fits.then(|| Group {
        shape: oa.shape.clone(),
        members: vec![i],
    }))
}

/// A group's kernel step, or host steps for its members when a member has
/// no lowering.
fn group_step(jx: &Jaxpr, g: &Group) -> Result<DeviceStep> {
    match group_kernel(jx, g) {
        Ok(Some(kernel)) => Ok(DeviceStep::Kernel {
            eqns: g.members.clone(),
            kernel,
        }),
        Ok(None) | Err(Error::Unsupported(_)) => Ok(DeviceStep::Host {
            eqn: g.members.first().copied().unwrap_or(0),
            reason: "elementwise member without a device lowering",
        }),
        Err(e) => Err(e),
    }
}

/// The device plan of a simplified program, in execution order (a group
/// runs at its last member's position, as in the CPU plan).
pub fn device_plan(jx: &Jaxpr) -> Result<Vec<DeviceStep>> {
    let groups = fusion::find_groups(jx)?;
    let owner = fusion::group_owners(jx.eqns.len(), &groups);
    let mut steps = Vec::new();
    for (i, eqn) in jx.eqns.iter().enumerate() {
        match owner.get(i).copied().flatten() {
            Some((g, true)) => {
                let group = groups
                    .get(g)
                    .ok_or_else(|| Error::InvalidArgument("cuda plan: group index".into()))?;
                match group_step(jx, group)? {
                    DeviceStep::Host { reason, .. } => {
                        // Every member on the host, in program order.
                        for &m in &group.members {
                            steps.push(DeviceStep::Host { eqn: m, reason });
                        }
                    }
                    step => steps.push(step),
                }
            }
            Some((_, false)) => {}
            None => steps.push(single_step(jx, i, eqn)?),
        }
    }
    Ok(steps)
}

/// The simplified program and its device plan.
pub fn plan_program(prog: &ClosedJaxpr) -> Result<(ClosedJaxpr, Vec<DeviceStep>)> {
    let simple = simplify::simplify(prog)?;
    let steps = device_plan(&simple.jaxpr)?;
    Ok((simple, steps))
}

/// The sources of every generated kernel of `prog`'s device plan, in plan
/// order, a control-flow equation's sub-program kernels at its position
/// (the branches; cond then body; the body) (`_core.cuda_kernel_sources`).
pub fn kernel_sources(prog: &ClosedJaxpr) -> Result<Vec<KernelSource>> {
    let (simple, steps) = plan_program(prog)?;
    let mut out = Vec::new();
    for step in steps {
        match step {
            DeviceStep::Kernel { kernel, .. } | DeviceStep::Scatter { kernel, .. } => {
                out.push(kernel)
            }
            DeviceStep::Fft { spec, .. } => out.extend(spec.scale),
            DeviceStep::Control { eqn } => {
                if let Some(Primitive::Control(c)) = simple.jaxpr.eqns.get(eqn).map(|e| &e.prim) {
                    for sub in c.sub_jaxprs() {
                        out.extend(kernel_sources(sub)?);
                    }
                }
            }
            _ => {}
        }
    }
    Ok(out)
}

/// Every equation of `prog`'s device plan that runs on the host, also
/// inside control-flow sub-programs, as `"<primitive>: <reason>"` in plan
/// order (`_core.cuda_host_steps`: why a program is slow on a GPU).
pub fn host_steps(prog: &ClosedJaxpr) -> Result<Vec<String>> {
    let (simple, steps) = plan_program(prog)?;
    let mut out = Vec::new();
    for step in steps {
        let prim = |eqn: usize| simple.jaxpr.eqns.get(eqn).map(|e| &e.prim);
        match step {
            DeviceStep::Host { eqn, reason } => {
                let name = prim(eqn).map_or("?", Primitive::name);
                out.push(format!("{name}: {reason}"));
            }
            DeviceStep::Control { eqn } => {
                if let Some(Primitive::Control(c)) = prim(eqn) {
                    for sub in c.sub_jaxprs() {
                        out.extend(host_steps(sub)?);
                    }
                }
            }
            _ => {}
        }
    }
    Ok(out)
}
