//! Windowed reductions: `reduce_window_sum`, `reduce_window_max`,
//! `reduce_window_min`, and the selections behind max/min-pool gradients,
//! `select_and_gather_add` (the tangent of the selected element of each
//! window) and `select_and_scatter_add` (its transpose: each window's value
//! added at its selected position).
//!
//! * Geometry as XLA's `ReduceWindow`: the operand is dilated by
//!   `base_dilation`, padded by `padding` (padding reads the reduction's
//!   identity), and windows of `window_dimensions` dilated by
//!   `window_dilation` step by `window_strides`.
//! * Selection (`select_prim` `ge` for max, `le` for min) considers only
//!   operand elements (never padding): the first element of the window (row
//!   major) that beats every later one by `select_prim` wins, so ties go to
//!   the first; a window of padding only selects nothing (tangent 0). The
//!   gather and the scatter share this choice, so they are exact transposes.
//! * AD as JAX: `reduce_window_sum` is linear (transpose: the cotangent
//!   padded with `stride - 1` interior zeros, then a `reduce_window_sum`
//!   striding by `base_dilation`); max/min's tangent is
//!   `select_and_gather_add(t, x)`; gather and scatter transpose into each
//!   other (only without dilation, as JAX). vmap adds a leading unit window.

use super::conv::{axis_geometry, dilate, pairs, usize_list, vjp_lhs_padding, window_out_size};
use super::family::{arity_error, single_out, BatchOut, Family, JvpOut, Operand, TransposeOut};
use super::params::Lookup;
use super::params::{Param, ParamList};
use super::Primitive;
use crate::array::{checked_size, Buffer, HostArray};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::exec::ExecCtx;
use crate::ir::builder::Builder;
use crate::ir::{Atom, Aval};
use crate::prims::{ConvertElementType, Pad};

/// The monoid of a windowed reduction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WindowReduce {
    Sum,
    Max,
    Min,
}

/// `select_prim`: `ge` selects maxima, `le` minima.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Select {
    Ge,
    Le,
}

impl Select {
    fn name(self) -> &'static str {
        match self {
            Select::Ge => "ge",
            Select::Le => "le",
        }
    }
}

/// Window geometry (one entry per operand axis).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct WindowParams {
    pub window_dimensions: Vec<usize>,
    pub window_strides: Vec<usize>,
    pub padding: Vec<(i64, i64)>,
    pub base_dilation: Vec<usize>,
    pub window_dilation: Vec<usize>,
}

impl WindowParams {
    /// Non-overlapping-free default: the given window, unit everything else.
    pub fn simple(window: Vec<usize>, strides: Vec<usize>) -> WindowParams {
        let n = window.len();
        WindowParams {
            window_dimensions: window,
            window_strides: strides,
            padding: vec![(0, 0); n],
            base_dilation: vec![1; n],
            window_dilation: vec![1; n],
        }
    }

    fn undilated(&self) -> bool {
        self.base_dilation.iter().all(|&d| d == 1) && self.window_dilation.iter().all(|&d| d == 1)
    }

    /// The same windows with a leading unit window axis (vmap).
    fn with_leading_axis(&self) -> WindowParams {
        let front = |v: &[usize]| {
            let mut o = vec![1];
            o.extend_from_slice(v);
            o
        };
        let mut padding = vec![(0, 0)];
        padding.extend_from_slice(&self.padding);
        WindowParams {
            window_dimensions: front(&self.window_dimensions),
            window_strides: front(&self.window_strides),
            padding,
            base_dilation: front(&self.base_dilation),
            window_dilation: front(&self.window_dilation),
        }
    }
}

/// The primitives of this family.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum WindowOp {
    Reduce {
        op: WindowReduce,
        w: WindowParams,
    },
    /// `select_and_gather_add(tangents, operand)`.
    SelectAndGatherAdd {
        select: Select,
        w: WindowParams,
    },
    /// `select_and_scatter_add(source, operand)` (no dilation).
    SelectAndScatterAdd {
        select: Select,
        w: WindowParams,
    },
}

pub const NAMES: [&str; 5] = [
    "reduce_window_sum",
    "reduce_window_max",
    "reduce_window_min",
    "select_and_gather_add",
    "select_and_scatter_add",
];

impl WindowOp {
    fn geometry(&self) -> &WindowParams {
        match self {
            WindowOp::Reduce { w, .. }
            | WindowOp::SelectAndGatherAdd { w, .. }
            | WindowOp::SelectAndScatterAdd { w, .. } => w,
        }
    }
}

// ----------------------------------------------------------------- params

fn get<'a>(params: &'a [(String, Param)], key: &str) -> Option<&'a Param> {
    params.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

fn need<'a>(
    prim: &'static str, params: &'a [(String, Param)], key: &'static str,
) -> Result<&'a Param> {
    get(params, key).ok_or_else(|| Error::param(prim, key, "missing"))
}

/// A dilation list, all ones when absent or `None`.
fn dilation(
    prim: &'static str, params: &[(String, Param)], key: &'static str, n: usize,
) -> Result<Vec<usize>> {
    match get(params, key) {
        None | Some(Param::None) => Ok(vec![1; n]),
        Some(p) => usize_list(prim, key, p),
    }
}

fn geometry(prim: &'static str, params: &[(String, Param)]) -> Result<WindowParams> {
    let window_dimensions = usize_list(
        prim,
        "window_dimensions",
        need(prim, params, "window_dimensions")?,
    )?;
    let n = window_dimensions.len();
    Ok(WindowParams {
        window_strides: usize_list(
            prim,
            "window_strides",
            need(prim, params, "window_strides")?,
        )?,
        padding: pairs(prim, "padding", need(prim, params, "padding")?)?,
        base_dilation: dilation(prim, params, "base_dilation", n)?,
        window_dilation: dilation(prim, params, "window_dilation", n)?,
        window_dimensions,
    })
}

fn select_param(prim: &'static str, params: &[(String, Param)]) -> Result<Select> {
    match need(prim, params, "select_prim")? {
        Param::Str(s) if s == "ge" || s == "ge_p" => Ok(Select::Ge),
        Param::Str(s) if s == "le" || s == "le_p" => Ok(Select::Le),
        other => Err(Error::param(
            prim,
            "select_prim",
            format!("expected 'ge' or 'le', got {other:?}"),
        )),
    }
}

// ----------------------------------------------------------------- shape

fn check_geometry(prim: &'static str, w: &WindowParams, shape: &[usize]) -> Result<()> {
    let n = shape.len();
    let lists: [(&'static str, usize); 5] = [
        ("window_dimensions", w.window_dimensions.len()),
        ("window_strides", w.window_strides.len()),
        ("padding", w.padding.len()),
        ("base_dilation", w.base_dilation.len()),
        ("window_dilation", w.window_dilation.len()),
    ];
    super::conv::check_list_lengths(prim, &lists, n, |len| {
        format!(
            "must have one entry per operand dimension; operand shape {} has rank {n}, got {len} \
             entries",
            crate::error::format_shape(shape)
        )
    })?;
    super::conv::check_positive(
        prim,
        &[
            ("window_dimensions", &w.window_dimensions),
            ("window_strides", &w.window_strides),
            ("base_dilation", &w.base_dilation),
            ("window_dilation", &w.window_dilation),
        ],
    )
}

/// Shape of the windowed reduction of an operand of `shape`.
pub fn reduced_shape(prim: &'static str, w: &WindowParams, shape: &[usize]) -> Result<Vec<usize>> {
    check_geometry(prim, w, shape)?;
    let mut out = Vec::with_capacity(shape.len());
    for (i, &s) in shape.iter().enumerate() {
        let g = |v: &[usize]| v.get(i).copied().unwrap_or(1);
        let padded_ok = {
            let p = w.padding.get(i).copied().unwrap_or((0, 0));
            let din = i64::try_from(dilate(s, g(&w.base_dilation))?).unwrap_or(i64::MAX);
            let dw = i64::try_from(dilate(g(&w.window_dimensions), g(&w.window_dilation))?)
                .unwrap_or(i64::MAX);
            // JAX's floor((padded - window) / stride) + 1 must not be negative.
            let stride = i64::try_from(g(&w.window_strides)).unwrap_or(i64::MAX);
            din.saturating_add(p.0)
                .saturating_add(p.1)
                .saturating_add(stride)
                >= dw
        };
        if !padded_ok {
            return Err(Error::shape(
                prim,
                &[shape],
                format!(
                    "the (dilated) window {:?} is larger than the padded operand along axis {i}",
                    w.window_dimensions
                ),
            ));
        }
        out.push(window_out_size(
            dilate(s, g(&w.base_dilation))?,
            w.padding.get(i).copied().unwrap_or((0, 0)),
            dilate(g(&w.window_dimensions), g(&w.window_dilation))?,
            g(&w.window_strides),
        )?);
    }
    Ok(out)
}

fn numeric(prim: &'static str, a: &Aval) -> Result<()> {
    if a.dtype.is_numeric() {
        Ok(())
    } else {
        Err(Error::dtype(prim, &[a.dtype], "requires a numeric operand"))
    }
}

// ----------------------------------------------------------------- kernels

const HOLE: usize = usize::MAX;

/// For every output position (flat) and window position (flat), the flat
/// operand index read, or `HOLE` for padding and dilation holes.
fn window_table(w: &WindowParams, shape: &[usize], out: &[usize]) -> Result<(usize, Vec<usize>)> {
    let strides = super::kernel::row_major_strides(shape)?;
    let kn = checked_size(&w.window_dimensions)?;
    let pn = checked_size(out)?;
    crate::array::budget::check_shape("reduce_window (window table)", &[pn, kn], DType::U64)?;
    let entries = pn.checked_mul(kn).ok_or_else(|| Error::Overflow {
        what: "reduce_window",
        detail: format!("{pn} windows of {kn}"),
    })?;
    let mut table = crate::array::alloc::filled("reduce_window (window table)", 0usize, entries)?;
    // Axis by axis: the offset of axis i is added to every entry.
    let mut p_inner = pn;
    let mut k_inner = kn;
    for (i, &size) in shape.iter().enumerate() {
        let g = |v: &[usize]| v.get(i).copied().unwrap_or(1);
        let (od, kd) = (out.get(i).copied().unwrap_or(1), g(&w.window_dimensions));
        p_inner = p_inner.checked_div(od).unwrap_or(0);
        k_inner = k_inner.checked_div(kd).unwrap_or(0);
        let lo = w.padding.get(i).map_or(0, |x| x.0);
        let (stride, bd, wd) = (
            g(&w.window_strides),
            g(&w.base_dilation),
            g(&w.window_dilation),
        );
        let st = strides.get(i).copied().unwrap_or(0);
        for (e, slot) in table.iter_mut().enumerate() {
            if *slot == HOLE {
                continue;
            }
            let p = e.checked_div(kn).unwrap_or(0);
            let k = e.checked_rem(kn).unwrap_or(0);
            let o = p
                .checked_div(p_inner)
                .and_then(|x| x.checked_rem(od))
                .unwrap_or(0);
            let kk = k
                .checked_div(k_inner)
                .and_then(|x| x.checked_rem(kd))
                .unwrap_or(0);
            let pos = i64::try_from(
                o.saturating_mul(stride)
                    .saturating_add(kk.saturating_mul(wd)),
            )
            .unwrap_or(i64::MAX)
            .saturating_sub(lo);
            let idx = usize::try_from(pos).ok().and_then(|pos| {
                (pos.checked_rem(bd) == Some(0))
                    .then(|| pos.checked_div(bd))
                    .flatten()
                    .filter(|&j| j < size)
            });
            *slot = match idx {
                Some(j) => slot.saturating_add(j.saturating_mul(st)),
                None => HOLE,
            };
        }
    }
    Ok((kn, table))
}

/// Element operations of the window kernels.
trait Elem: Copy + PartialOrd + Default {
    fn plus(self, o: Self) -> Self;
    fn lowest() -> Self;
    fn highest() -> Self;
    fn is_nan(self) -> bool;
}

macro_rules! int_elem {
    ($($t:ty),*) => {$(
        impl Elem for $t {
            fn plus(self, o: Self) -> Self { self.wrapping_add(o) }
            fn lowest() -> Self { <$t>::MIN }
            fn highest() -> Self { <$t>::MAX }
            fn is_nan(self) -> bool { false }
        }
    )*};
}
int_elem!(i8, i16, i32, i64, u8, u16, u32, u64);

macro_rules! float_elem {
    ($($t:ty),*) => {$(
        impl Elem for $t {
            fn plus(self, o: Self) -> Self { self + o }
            fn lowest() -> Self { <$t>::NEG_INFINITY }
            fn highest() -> Self { <$t>::INFINITY }
            fn is_nan(self) -> bool { <$t>::is_nan(self) }
        }
    )*};
}
float_elem!(f32, f64);

fn combine<T: Elem>(op: WindowReduce, a: T, b: T) -> T {
    match op {
        WindowReduce::Sum => a.plus(b),
        // NaN propagates (XLA's max/min).
        WindowReduce::Max => {
            if a.is_nan() || a >= b {
                a
            } else {
                b
            }
        }
        WindowReduce::Min => {
            if a.is_nan() || a <= b {
                a
            } else {
                b
            }
        }
    }
}

fn identity<T: Elem>(op: WindowReduce) -> T {
    match op {
        WindowReduce::Sum => T::default(),
        WindowReduce::Max => T::lowest(),
        WindowReduce::Min => T::highest(),
    }
}

fn reduce<T: Elem>(x: &[T], kn: usize, table: &[usize], op: WindowReduce) -> Vec<T> {
    let init = identity::<T>(op);
    if kn == 0 {
        return Vec::new();
    }
    table
        .chunks(kn)
        .map(|win| {
            win.iter().fold(init, |acc, &i| {
                let v = if i == HOLE {
                    init
                } else {
                    x.get(i).copied().unwrap_or(init)
                };
                combine(op, acc, v)
            })
        })
        .collect()
}

/// The selected operand index of one window.
fn selected<T: Elem>(x: &[T], win: &[usize], select: Select) -> Option<usize> {
    let mut best: Option<(usize, T)> = None;
    for &i in win.iter().filter(|&&i| i != HOLE) {
        let Some(&v) = x.get(i) else { continue };
        best = match best {
            Some((bi, bv)) => {
                let keep = match select {
                    Select::Ge => bv >= v,
                    Select::Le => bv <= v,
                };
                if keep {
                    Some((bi, bv))
                } else {
                    Some((i, v))
                }
            }
            None => Some((i, v)),
        };
    }
    best.map(|(i, _)| i)
}

fn gather_add<T: Elem>(t: &[T], x: &[T], kn: usize, table: &[usize], select: Select) -> Vec<T> {
    if kn == 0 {
        return Vec::new();
    }
    table
        .chunks(kn)
        .map(|win| {
            selected(x, win, select)
                .and_then(|i| t.get(i).copied())
                .unwrap_or_default()
        })
        .collect()
}

fn scatter_add<T: Elem>(s: &[T], x: &[T], kn: usize, table: &[usize], select: Select) -> Vec<T> {
    let mut out = vec![T::default(); x.len()];
    if kn == 0 {
        return out;
    }
    for (win, &v) in table.chunks(kn).zip(s) {
        if let Some(slot) = selected(x, win, select).and_then(|i| out.get_mut(i)) {
            *slot = slot.plus(v);
        }
    }
    out
}

fn convert(ctx: &ExecCtx, x: &HostArray, dtype: DType) -> Result<HostArray> {
    if x.dtype() == dtype {
        return Ok(x.clone());
    }
    let p = Primitive::ConvertElementType(ConvertElementType {
        new_dtype: dtype,
        weak_type: false,
    });
    super::kernel::eval(ctx, &p, &[x])?
        .into_iter()
        .next()
        .ok_or_else(|| Error::InvalidArgument("convert produced no result".into()))
}

macro_rules! dispatch {
    ($buf:expr, $v:ident => $body:expr, $err:expr) => {
        match $buf {
            Buffer::I8($v) => Buffer::from($body),
            Buffer::I16($v) => Buffer::from($body),
            Buffer::I32($v) => Buffer::from($body),
            Buffer::I64($v) => Buffer::from($body),
            Buffer::U8($v) => Buffer::from($body),
            Buffer::U16($v) => Buffer::from($body),
            Buffer::U32($v) => Buffer::from($body),
            Buffer::U64($v) => Buffer::from($body),
            Buffer::F32($v) => Buffer::from($body),
            Buffer::F64($v) => Buffer::from($body),
            _ => return Err($err),
        }
    };
}

/// The same-dtype partner buffer of `x`'s variant.
macro_rules! partner {
    ($other:expr, $variant:ident) => {
        match $other {
            Buffer::$variant(v) => v.as_slice(),
            _ => &[],
        }
    };
}

/// `$f(partner, v, $args..)` on the f32/f64/i32/i64 values `v` of array
/// `$x`, with `partner` the same-dtype values of array `$other`;
/// `$other_dtype` otherwise.
macro_rules! with_partner {
    ($f:ident, $x:expr, $other:expr, ($($arg:expr),*), $other_dtype:expr) => {
        match $x.buffer() {
            Buffer::F32(v) => Buffer::from($f(partner!($other.buffer(), F32), v, $($arg),*)),
            Buffer::F64(v) => Buffer::from($f(partner!($other.buffer(), F64), v, $($arg),*)),
            Buffer::I32(v) => Buffer::from($f(partner!($other.buffer(), I32), v, $($arg),*)),
            Buffer::I64(v) => Buffer::from($f(partner!($other.buffer(), I64), v, $($arg),*)),
            _ => $other_dtype,
        }
    };
}

fn compute(op: &WindowOp, args: &[&HostArray], out: &Aval) -> Result<Buffer> {
    let name = op.name();
    let err = || Error::dtype(name, &[out.dtype], "unsupported dtype");
    Ok(match (op, args) {
        (WindowOp::Reduce { op: r, w }, [x]) => {
            let (kn, table) = window_table(w, x.shape(), &out.shape)?;
            dispatch!(x.buffer(), v => reduce(v, kn, &table, *r), err())
        }
        (WindowOp::SelectAndGatherAdd { select, w }, [t, x]) => {
            let (kn, table) = window_table(w, x.shape(), &out.shape)?;
            with_partner!(gather_add, x, t, (kn, &table, *select), return Err(err()))
        }
        (WindowOp::SelectAndScatterAdd { select, w }, [s, x]) => {
            let (kn, table) = window_table(w, x.shape(), s.shape())?;
            with_partner!(scatter_add, x, s, (kn, &table, *select), return Err(err()))
        }
        _ => return Err(Error::arity(name, 2, args.len())),
    })
}

// ----------------------------------------------------------------- rules

fn emit(b: &mut Builder, op: WindowOp, ins: Vec<Atom>) -> Result<Atom> {
    b.add_eqn1(Primitive::Window(Box::new(op)), ins)
}

fn t_reduce_window_sum(b: &mut Builder, w: &WindowParams, ct: Atom, x: &Aval) -> Result<Atom> {
    let ct_shape = b.aval(&ct)?.shape;
    let pads = vjp_lhs_padding(&axis_geometry(
        &x.shape,
        &w.window_dimensions,
        &w.window_strides,
        &ct_shape,
        &w.padding,
        &w.base_dilation,
        &w.window_dilation,
    )?);
    let padding_config = pads
        .iter()
        .zip(&w.window_strides)
        .map(|(&(lo, hi), &s)| (lo, hi, i64::try_from(s.saturating_sub(1)).unwrap_or(0)))
        .collect();
    let zero = Builder::lit(x.dtype, 0.0);
    let padded = b.add_eqn1(Primitive::Pad(Pad { padding_config }), vec![ct, zero])?;
    let n = x.shape.len();
    let op = WindowOp::Reduce {
        op: WindowReduce::Sum,
        w: WindowParams {
            window_dimensions: w.window_dimensions.clone(),
            window_strides: w.base_dilation.clone(),
            padding: vec![(0, 0); n],
            base_dilation: vec![1; n],
            window_dilation: w.window_dilation.clone(),
        },
    };
    emit(b, op, vec![padded])
}

impl Family for WindowOp {
    const NAMES: &'static [&'static str] = &NAMES;

    fn name(&self) -> &'static str {
        match self {
            WindowOp::Reduce {
                op: WindowReduce::Sum,
                ..
            } => "reduce_window_sum",
            WindowOp::Reduce {
                op: WindowReduce::Max,
                ..
            } => "reduce_window_max",
            WindowOp::Reduce {
                op: WindowReduce::Min,
                ..
            } => "reduce_window_min",
            WindowOp::SelectAndGatherAdd { .. } => "select_and_gather_add",
            WindowOp::SelectAndScatterAdd { .. } => "select_and_scatter_add",
        }
    }

    crate::family_identity!(custom_params);

    fn params(&self) -> ParamList {
        let w = self.geometry();
        let ints = |v: &[usize]| {
            Param::Ints(
                v.iter()
                    .map(|&d| i64::try_from(d).unwrap_or(i64::MAX))
                    .collect(),
            )
        };
        let padding = Param::Tuple(
            w.padding
                .iter()
                .map(|&(lo, hi)| Param::Ints(vec![lo, hi]))
                .collect(),
        );
        let mut out: ParamList = Vec::new();
        match self {
            WindowOp::SelectAndGatherAdd { select, .. }
            | WindowOp::SelectAndScatterAdd { select, .. } => {
                out.push(("select_prim", Param::Str(select.name().into())));
            }
            WindowOp::Reduce { .. } => {}
        }
        out.push(("window_dimensions", ints(&w.window_dimensions)));
        out.push(("window_strides", ints(&w.window_strides)));
        out.push(("padding", padding));
        if !matches!(self, WindowOp::SelectAndScatterAdd { .. }) {
            out.push(("base_dilation", ints(&w.base_dilation)));
            out.push(("window_dilation", ints(&w.window_dilation)));
        }
        out
    }

    fn from_params(name: &str, params: &Lookup<'_>) -> Result<Option<WindowOp>> {
        let params = params.list();
        let Some(prim) = NAMES.iter().copied().find(|n| *n == name) else {
            return Ok(None);
        };
        let w = geometry(prim, params)?;
        let op = match prim {
            "reduce_window_sum" => WindowOp::Reduce {
                op: WindowReduce::Sum,
                w,
            },
            "reduce_window_max" => WindowOp::Reduce {
                op: WindowReduce::Max,
                w,
            },
            "reduce_window_min" => WindowOp::Reduce {
                op: WindowReduce::Min,
                w,
            },
            "select_and_gather_add" => WindowOp::SelectAndGatherAdd {
                select: select_param(prim, params)?,
                w,
            },
            _ => WindowOp::SelectAndScatterAdd {
                select: select_param(prim, params)?,
                w,
            },
        };
        Ok(Some(op))
    }

    fn display_params(&self, _params: &mut ParamList) {}

    fn examples() -> Vec<WindowOp> {
        let w = WindowParams::simple(vec![2], vec![1]);
        let mut out: Vec<WindowOp> = [WindowReduce::Sum, WindowReduce::Max, WindowReduce::Min]
            .into_iter()
            .map(|op| WindowOp::Reduce { op, w: w.clone() })
            .collect();
        out.push(WindowOp::SelectAndGatherAdd {
            select: Select::Ge,
            w: w.clone(),
        });
        out.push(WindowOp::SelectAndScatterAdd {
            select: Select::Ge,
            w,
        });
        out
    }

    fn abstract_eval(&self, ins: &[Aval]) -> Result<Vec<Aval>> {
        let prim = self.name();
        match (self, ins) {
            (WindowOp::Reduce { w, .. }, [x]) => {
                numeric(prim, x)?;
                let shape = reduced_shape(prim, w, &x.shape)?;
                Ok(vec![Aval::weak(shape, x.dtype, x.weak_type)])
            }
            (WindowOp::SelectAndGatherAdd { w, .. }, [t, x]) => {
                numeric(prim, x)?;
                if t.dtype != x.dtype || t.shape != x.shape {
                    return Err(Error::shape(
                        prim,
                        &[&t.shape, &x.shape],
                        format!(
                            "tangents and operand must have one shape and dtype; got dtypes {} and {}",
                            t.dtype, x.dtype
                        ),
                    ));
                }
                Ok(vec![Aval::new(reduced_shape(prim, w, &x.shape)?, x.dtype)])
            }
            (WindowOp::SelectAndScatterAdd { w, .. }, [s, x]) => {
                numeric(prim, x)?;
                if !w.undilated() {
                    return Err(Error::param(
                        prim,
                        "window_dilation",
                        "select_and_scatter_add takes no dilation",
                    ));
                }
                let want = reduced_shape(prim, w, &x.shape)?;
                if s.dtype != x.dtype || s.shape != want {
                    return Err(Error::shape(
                        prim,
                        &[&s.shape, &x.shape],
                        format!(
                            "source must have the operand's dtype and its windowed shape {}",
                            crate::error::format_shape(&want)
                        ),
                    ));
                }
                Ok(vec![Aval::new(x.shape.clone(), x.dtype)])
            }
            _ => Err(Error::Arity {
                prim,
                expected: if matches!(self, WindowOp::Reduce { .. }) {
                    1
                } else {
                    2
                },
                got: ins.len(),
            }),
        }
    }

    /// Half floats compute in f32 and round once.
    fn kernel(
        &self, ctx: &ExecCtx, args: &[&HostArray], outs: Vec<Aval>,
    ) -> Result<Vec<HostArray>> {
        let out = single_out(self.name(), outs)?;
        if matches!(out.dtype, DType::F16 | DType::BF16) {
            let wide: Vec<HostArray> = args
                .iter()
                .map(|a| convert(ctx, a, DType::F32))
                .collect::<Result<_>>()?;
            let refs: Vec<&HostArray> = wide.iter().collect();
            let wide_out = Aval::new(out.shape.clone(), DType::F32);
            let r = HostArray::new(out.shape.clone(), compute(self, &refs, &wide_out)?)?;
            return Ok(vec![convert(ctx, &r, out.dtype)?]);
        }
        Ok(vec![HostArray::new(
            out.shape.clone(),
            compute(self, args, &out)?,
        )?])
    }

    fn jvp(&self, b: &mut Builder, xs: &[Atom], ts: &[Option<Atom>]) -> JvpOut {
        let op = self.clone();
        let z = emit(b, op.clone(), xs.to_vec())?;
        if !b.aval(&z)?.dtype.is_inexact() {
            return Ok((vec![z], vec![None]));
        }
        let t = match (&op, xs, ts) {
            (WindowOp::Reduce { op: r, w }, [x], [t]) => match (r, t) {
                (_, None) => None,
                (WindowReduce::Sum, Some(t)) => Some(emit(b, op.clone(), vec![t.clone()])?),
                (WindowReduce::Max | WindowReduce::Min, Some(t)) => {
                    let select = if *r == WindowReduce::Max {
                        Select::Ge
                    } else {
                        Select::Le
                    };
                    let g = WindowOp::SelectAndGatherAdd {
                        select,
                        w: w.clone(),
                    };
                    Some(emit(b, g, vec![t.clone(), x.clone()])?)
                }
            },
            // Linear in the first operand; the selection is piecewise constant
            // in the operand.
            (
                WindowOp::SelectAndGatherAdd { .. } | WindowOp::SelectAndScatterAdd { .. },
                [_, x],
                [t, _],
            ) => match t {
                Some(t) => Some(emit(b, op.clone(), vec![t.clone(), x.clone()])?),
                None => None,
            },
            _ => return Err(arity_error(self.name(), xs.len(), ts.len())),
        };
        Ok((vec![z], vec![t]))
    }

    fn transpose(&self, b: &mut Builder, cts: &[Option<Atom>], ops: &[Operand]) -> TransposeOut {
        let op = self;
        let Some(Some(ct)) = cts.first() else {
            return Ok(vec![None; ops.len()]);
        };
        let name = op.name();
        match (op, ops) {
            (
                WindowOp::Reduce {
                    op: WindowReduce::Sum,
                    w,
                },
                [Operand::Linear(x)],
            ) => Ok(vec![Some(t_reduce_window_sum(b, w, ct.clone(), x)?)]),
            (
                WindowOp::SelectAndGatherAdd { select, w },
                [Operand::Linear(_), Operand::Known(x)],
            ) => {
                if !w.undilated() {
                    return Err(Error::NotImplemented(format!(
                        "{name}: transposing a dilated select_and_gather_add (the gradient of a \
                         dilated max/min reduce_window) is not implemented"
                    )));
                }
                let s = WindowOp::SelectAndScatterAdd {
                    select: *select,
                    w: w.clone(),
                };
                Ok(vec![Some(emit(b, s, vec![ct.clone(), x.clone()])?), None])
            }
            (
                WindowOp::SelectAndScatterAdd { select, w },
                [Operand::Linear(_), Operand::Known(x)],
            ) => {
                let g = WindowOp::SelectAndGatherAdd {
                    select: *select,
                    w: w.clone(),
                };
                Ok(vec![Some(emit(b, g, vec![ct.clone(), x.clone()])?), None])
            }
            _ => Err(super::transpose::not_linear_error(name, "")),
        }
    }

    fn batch(&self, b: &mut Builder, ins: &[Atom], dims: &[Option<usize>], n: usize) -> BatchOut {
        let op = self;
        if dims.iter().all(Option::is_none) {
            return Ok((vec![emit(b, op.clone(), ins.to_vec())?], vec![None]));
        }
        let front = super::batch::all_batch_first(b, ins, dims, n)?;
        let lifted = match op {
            WindowOp::Reduce { op, w } => WindowOp::Reduce {
                op: *op,
                w: w.with_leading_axis(),
            },
            WindowOp::SelectAndGatherAdd { select, w } => WindowOp::SelectAndGatherAdd {
                select: *select,
                w: w.with_leading_axis(),
            },
            WindowOp::SelectAndScatterAdd { select, w } => WindowOp::SelectAndScatterAdd {
                select: *select,
                w: w.with_leading_axis(),
            },
        };
        Ok((vec![emit(b, lifted, front)?], vec![Some(0)]))
    }
}
