//! Host callbacks: `pure_callback`, `io_callback` and `debug_callback`.
//!
//! The function called is a [`HostFn`] (the Python binding implements it
//! around a Python callable; a Rust program may implement it too). The core
//! calls it on the evaluating thread with the operands and checks what it
//! returns against the declared result types.
//!
//! * `pure_callback[callback, result_avals, vmap_method]`: no effect (DCE may
//!   remove it); not differentiable (JAX's `ValueError`); vmap per `vmap_method`:
//!   `sequential` (a `scan` calling it once per member), `expand_dims`
//!   (one call, unbatched operands get a unit axis), `broadcast_all` (one call,
//!   every operand broadcast); without one, JAX's error.
//! * `io_callback[callback, result_avals, ordered]` and
//!   `debug_callback[callback]` (no results): ordered I/O effect, so they are
//!   never removed and keep program order, also inside loop bodies. An
//!   `io_callback` is not differentiable and an ordered one not batchable
//!   (JAX's `ValueError`s); a debug callback runs on the primal values under
//!   JVP. Under vmap they run once per member (a `scan`).
//!
//! Programs holding a callback cannot be exported or printed canonically.

use super::control::{ControlFlow, Scan};
use super::family::{emit, transpose_not_linear, BatchOut, Family, JvpOut, Operand, TransposeOut};
use super::kernel::shared_call;
use super::params::{Lookup, Param, ParamList};
use super::Primitive;
use crate::array::HostArray;
use crate::error::{Error, Result};
use crate::exec::ExecCtx;
use crate::ir::builder::Builder;
use crate::ir::{Atom, Aval, Effect};
use crate::prims::batch::{add_batch_axis, move_axis};
use std::sync::Arc;

/// A function of the host program the evaluator may call.
pub trait HostFn: Send + Sync + std::fmt::Debug {
    /// Calls the function. Results are checked by the caller; they are
    /// shared, so a function may hand back arrays it already holds without
    /// copying them.
    fn call(&self, args: &[Arc<HostArray>]) -> Result<Vec<Arc<HostArray>>>;
    /// A name for printing (`<function f>`).
    fn name(&self) -> String;
    /// For a binding to recover its own type (the Python callable).
    fn as_any(&self) -> &dyn std::any::Any;
}

/// A host function that returns zeros of the declared types (the rule
/// listings' example; Rust programs may use it as a placeholder).
#[derive(Debug)]
pub struct ZerosHostFn(pub Vec<Aval>);

impl HostFn for ZerosHostFn {
    fn call(&self, _args: &[Arc<HostArray>]) -> Result<Vec<Arc<HostArray>>> {
        self.0
            .iter()
            .map(|a| HostArray::zeros(a.shape.clone(), a.dtype).map(Arc::new))
            .collect()
    }
    fn name(&self) -> String {
        "zeros".into()
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// A shared host function; equal (and hashed) by identity.
#[derive(Debug, Clone)]
pub struct HostCallback(pub Arc<dyn HostFn>);

impl PartialEq for HostCallback {
    fn eq(&self, other: &HostCallback) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for HostCallback {}

impl std::hash::Hash for HostCallback {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        std::ptr::hash(Arc::as_ptr(&self.0).cast::<u8>(), state);
    }
}

/// How `vmap` batches a `pure_callback` (JAX's `vmap_method`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VmapMethod {
    Sequential,
    ExpandDims,
    BroadcastAll,
}

impl VmapMethod {
    pub fn name(self) -> &'static str {
        match self {
            VmapMethod::Sequential => "sequential",
            VmapMethod::ExpandDims => "expand_dims",
            VmapMethod::BroadcastAll => "broadcast_all",
        }
    }

    pub fn from_name(s: &str) -> Result<VmapMethod> {
        match s {
            "sequential" => Ok(VmapMethod::Sequential),
            "expand_dims" => Ok(VmapMethod::ExpandDims),
            "broadcast_all" => Ok(VmapMethod::BroadcastAll),
            other => Err(Error::param(
                "pure_callback",
                "vmap_method",
                format!("must be 'sequential', 'expand_dims' or 'broadcast_all', got {other:?}"),
            )),
        }
    }
}

/// The callback primitives.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Callback {
    Pure {
        callback: HostCallback,
        result_avals: Vec<Aval>,
        vmap_method: Option<VmapMethod>,
    },
    Io {
        callback: HostCallback,
        result_avals: Vec<Aval>,
        ordered: bool,
    },
    Debug {
        callback: HostCallback,
    },
}

impl Callback {
    fn callback(&self) -> &HostCallback {
        match self {
            Callback::Pure { callback, .. }
            | Callback::Io { callback, .. }
            | Callback::Debug { callback } => callback,
        }
    }

    pub fn result_avals(&self) -> &[Aval] {
        match self {
            Callback::Pure { result_avals, .. } | Callback::Io { result_avals, .. } => result_avals,
            Callback::Debug { .. } => &[],
        }
    }
}

/// Calls the host function and checks its results.
pub fn eval(c: &Callback, args: &[Arc<HostArray>]) -> Result<Vec<Arc<HostArray>>> {
    let outs = c.callback().0.call(args)?;
    let want = c.result_avals();
    if outs.len() != want.len() {
        return Err(Error::InvalidArgument(format!(
            "{}: the callback returned {} values, {} were declared",
            c.name(),
            outs.len(),
            want.len()
        )));
    }
    for (k, (o, w)) in outs.iter().zip(want).enumerate() {
        if o.shape() != w.shape.as_slice() || o.dtype() != w.dtype {
            return Err(Error::InvalidArgument(format!(
                "{}: result {k} of the callback is {} but {} was declared",
                c.name(),
                o.aval().short(),
                w.short()
            )));
        }
    }
    Ok(outs)
}

/// Pure callbacks have no effect; `io_callback` and `debug_callback` are
/// ordered.
fn callback_effect(c: &Callback) -> Effect {
    match c {
        Callback::Pure { .. } => Effect::None,
        Callback::Io { .. } | Callback::Debug { .. } => Effect::OrderedIo,
    }
}

impl Family for Callback {
    crate::family_names!(
        Callback::Pure { .. } => "pure_callback",
        Callback::Io { .. } => "io_callback",
        Callback::Debug { .. } => "debug_callback",
    );

    crate::family_identity!(
        custom_params,
        multiple_results = true,
        effect = callback_effect
    );

    /// Params as JAX shows them.
    fn params(&self) -> ParamList {
        let avals = |v: &[Aval]| {
            Param::Tuple(
                v.iter()
                    .map(|a| {
                        Param::Tuple(vec![
                            Param::Ints(
                                a.shape
                                    .iter()
                                    .map(|&d| i64::try_from(d).unwrap_or(i64::MAX))
                                    .collect(),
                            ),
                            Param::DType(a.dtype),
                        ])
                    })
                    .collect(),
            )
        };
        let cb = Param::Callback(self.callback().clone());
        match self {
            Callback::Pure {
                result_avals,
                vmap_method,
                ..
            } => vec![
                ("callback", cb),
                ("result_avals", avals(result_avals)),
                (
                    "vmap_method",
                    vmap_method.map_or(Param::None, |m| Param::Str(m.name().into())),
                ),
            ],
            Callback::Io {
                result_avals,
                ordered,
                ..
            } => vec![
                ("callback", cb),
                ("ordered", Param::Bool(*ordered)),
                ("result_avals", avals(result_avals)),
            ],
            Callback::Debug { .. } => vec![("callback", cb)],
        }
    }

    /// Rebuilds a callback primitive from params (`None` for other names).
    fn from_params(name: &str, p: &Lookup<'_>) -> Result<Option<Callback>> {
        let callback = || match p.get("callback") {
            Some(Param::Callback(c)) => Ok(c.clone()),
            _ => Err(Error::param(
                "callback",
                "callback",
                "a host function is required (callbacks cannot be parsed from text)",
            )),
        };
        let avals = || -> Result<Vec<Aval>> {
            let bad = || Error::param("callback", "result_avals", "expected ((shape, dtype), ...)");
            match p.get("result_avals") {
                None | Some(Param::None) => Ok(Vec::new()),
                Some(Param::Tuple(items)) => items
                    .iter()
                    .map(|it| match it {
                        Param::Tuple(pair) => match pair.as_slice() {
                            [Param::Ints(shape), Param::DType(d)] => Ok(Aval::new(
                                shape
                                    .iter()
                                    .map(|&s| usize::try_from(s).map_err(|_| bad()))
                                    .collect::<Result<_>>()?,
                                *d,
                            )),
                            [Param::Tuple(e), Param::DType(d)] if e.is_empty() => {
                                Ok(Aval::new(Vec::new(), *d))
                            }
                            _ => Err(bad()),
                        },
                        _ => Err(bad()),
                    })
                    .collect(),
                Some(Param::Ints(v)) if v.is_empty() => Ok(Vec::new()),
                Some(_) => Err(bad()),
            }
        };
        Ok(Some(match name {
            "pure_callback" => Callback::Pure {
                callback: callback()?,
                result_avals: avals()?,
                vmap_method: p
                    .opt_str("vmap_method")?
                    .map(|s| VmapMethod::from_name(&s))
                    .transpose()?,
            },
            "io_callback" => Callback::Io {
                callback: callback()?,
                result_avals: avals()?,
                ordered: p.opt_bool("ordered")?.unwrap_or(false),
            },
            "debug_callback" => Callback::Debug {
                callback: callback()?,
            },
            _ => return Ok(None),
        }))
    }

    fn display_params(&self, _params: &mut ParamList) {}

    /// One instance of each callback primitive (for rule listings).
    fn examples() -> Vec<Callback> {
        let f = HostCallback(Arc::new(ZerosHostFn(Vec::new())));
        vec![
            Callback::Pure {
                callback: f.clone(),
                result_avals: Vec::new(),
                vmap_method: Some(VmapMethod::Sequential),
            },
            Callback::Io {
                callback: f.clone(),
                result_avals: Vec::new(),
                ordered: true,
            },
            Callback::Debug { callback: f },
        ]
    }

    /// The declared result types.
    fn abstract_eval(&self, _ins: &[Aval]) -> Result<Vec<Aval>> {
        Ok(self.result_avals().to_vec())
    }

    /// Calls the host function (checking its results).
    fn kernel(
        &self, _ctx: &ExecCtx, args: &[&HostArray], outs: Vec<Aval>,
    ) -> Result<Vec<HostArray>> {
        shared_call(self.name(), args, outs, |args| eval(self, args))
    }

    /// Pure and I/O callbacks have none (JAX's `ValueError`s); a debug
    /// callback runs on the primal values (it has no results).
    fn jvp(&self, b: &mut Builder, xs: &[Atom], _ts: &[Option<Atom>]) -> JvpOut {
        match self {
            Callback::Pure { .. } => {
                return Err(Error::InvalidArgument(
                    "Pure callbacks do not support JVP. Please use `jax.custom_jvp` to use \
                     callbacks while taking gradients."
                        .into(),
                ))
            }
            Callback::Io { .. } => {
                return Err(Error::InvalidArgument(
                    "IO callbacks do not support JVP.".into(),
                ))
            }
            Callback::Debug { .. } => {}
        }
        let outs = emit(b, self.clone(), xs.to_vec())?;
        let n = outs.len();
        Ok((outs, vec![None; n]))
    }

    /// Callbacks are never linear.
    fn transpose(&self, _b: &mut Builder, _cts: &[Option<Atom>], _ops: &[Operand]) -> TransposeOut {
        transpose_not_linear(self.name())
    }

    fn batch(&self, b: &mut Builder, ins: &[Atom], dims: &[Option<usize>], n: usize) -> BatchOut {
        let method = match self {
            Callback::Pure { vmap_method, .. } => vmap_method.ok_or_else(|| {
                Error::Unsupported(
                    "vmap of pure_callback requires the `vmap_method` argument ('sequential', \
                 'expand_dims' or 'broadcast_all')"
                        .into(),
                )
            })?,
            Callback::Io { ordered: true, .. } => {
                return Err(Error::InvalidArgument(
                    "Cannot `vmap` ordered IO callback.".into(),
                ))
            }
            Callback::Io { .. } | Callback::Debug { .. } => VmapMethod::Sequential,
        };
        let nout = self.result_avals().len();
        match method {
            VmapMethod::Sequential => sequential(self, b, ins, dims, n),
            VmapMethod::ExpandDims | VmapMethod::BroadcastAll => {
                let mut args = Vec::with_capacity(ins.len());
                for (x, d) in ins.iter().zip(dims) {
                    args.push(match (d, method) {
                        (Some(d), _) => move_axis(b, x.clone(), *d, 0)?,
                        (None, VmapMethod::ExpandDims) => add_batch_axis(b, x.clone(), 1, 0)?,
                        (None, _) => add_batch_axis(b, x.clone(), n, 0)?,
                    });
                }
                let batched = batched_avals(self.result_avals(), n);
                let prim = Primitive::Callback(Callback::Pure {
                    callback: self.callback().clone(),
                    result_avals: batched,
                    vmap_method: Some(method),
                });
                let outs = b
                    .add_eqn(prim, args, None)?
                    .into_iter()
                    .map(Atom::Var)
                    .collect();
                Ok((outs, vec![Some(0); nout]))
            }
        }
    }
}

fn batched_avals(avals: &[Aval], n: usize) -> Vec<Aval> {
    avals
        .iter()
        .map(|a| {
            let mut shape = vec![n];
            shape.extend_from_slice(&a.shape);
            Aval::new(shape, a.dtype)
        })
        .collect()
}

/// One call per member, in order: a `scan` over the batched operands whose
/// body is the unbatched callback.
fn sequential(
    c: &Callback, b: &mut Builder, ins: &[Atom], dims: &[Option<usize>], n: usize,
) -> Result<(Vec<Atom>, Vec<Option<usize>>)> {
    let mut consts = Vec::new();
    let mut xs = Vec::new();
    let mut body = Builder::new();
    let mut const_vars = Vec::new();
    let mut x_vars = Vec::new();
    let mut order = Vec::with_capacity(ins.len());
    for (x, d) in ins.iter().zip(dims) {
        let aval = b.aval(x)?;
        match d {
            None => {
                order.push((true, const_vars.len()));
                const_vars.push(aval);
                consts.push(x.clone());
            }
            Some(d) => {
                let moved = move_axis(b, x.clone(), *d, 0)?;
                let mut row = aval.clone();
                if *d < row.shape.len() {
                    row.shape.remove(*d);
                }
                order.push((false, x_vars.len()));
                x_vars.push(row);
                xs.push(moved);
            }
        }
    }
    let cvars = body.add_inputs(const_vars)?;
    let xvars = body.add_inputs(x_vars)?;
    let args = order
        .iter()
        .map(|(is_const, k)| {
            let v = if *is_const { &cvars } else { &xvars };
            v.get(*k)
                .cloned()
                .ok_or(Error::arity("callback", *k, v.len()))
        })
        .collect::<Result<Vec<_>>>()?;
    let outs: Vec<Atom> = body
        .add_eqn(Primitive::Callback(c.clone()), args, None)?
        .into_iter()
        .map(Atom::Var)
        .collect();
    let body = body.build(outs)?;
    let num_consts = consts.len();
    let mut operands = consts;
    operands.extend(xs);
    let nops = operands.len();
    let scan = Primitive::Control(ControlFlow::Scan(Scan {
        jaxpr: Arc::new(body),
        length: n,
        reverse: false,
        num_consts,
        num_carry: 0,
        linear: vec![false; nops],
        unroll: 1,
    }));
    let outs: Vec<Atom> = b
        .add_eqn(scan, operands, None)?
        .into_iter()
        .map(Atom::Var)
        .collect();
    let k = outs.len();
    Ok((outs, vec![Some(0); k]))
}

/// Whether a program (or a param of it) holds a host callback.
pub fn holds_callback(j: &crate::ir::Jaxpr) -> bool {
    fn param(p: &super::params::Param) -> bool {
        use super::params::Param;
        match p {
            Param::Callback(_) => true,
            Param::Jaxpr(sub) => holds_callback(&sub.jaxpr),
            Param::Tuple(items) => items.iter().any(param),
            _ => false,
        }
    }
    j.eqns
        .iter()
        .any(|e| e.prim.params().iter().any(|(_, p)| param(p)))
}
