//! `conv_general_dilated`: params, shape rule, CPU kernel and the
//! transformation rules, all in `impl Family for ConvParams` at the end of
//! this file; the kernel's im2col helpers are in `kernels.rs` and the
//! transformation rules' helpers in `rules.rs`.
//!
//! * Layouts: `dimension_numbers` holds JAX's `ConvDimensionNumbers` specs
//!   (`lhs_spec = (batch, feature, spatial...)`, `rhs_spec = (out feature,
//!   in feature, spatial...)`, `out_spec = (batch, feature, spatial...)`),
//!   any spatial rank.
//! * Kernel: im2col + `dot_general` (the GEMM kernel). f32/f64 run in
//!   column tiles of about 2 MB, blocks of each group's (batch row, output
//!   position) columns, each multiplied while still in cache and written
//!   straight into the output; other types build the whole column matrix
//!   `(groups, C/G * K, N/B * P)` (K window positions, P output positions)
//!   for one batched product. Columns are read through the lhs strides in
//!   place, so no operand is transposed first; the weights become
//!   `(groups, O/groups, C/G * K)`.
//! * AD: bilinear JVP; both transposes are convolutions with swapped
//!   dimension numbers (lhs: flipped kernel, `lhs_dilation = strides`; rhs:
//!   lhs with the cotangent as kernel), feature groups of one becoming batch
//!   groups of the other, as in JAX.
//! * vmap folds the mapped axis into the batch or feature dimension (JAX's
//!   scheme); cases JAX handles with extra reshapes broadcast the unbatched
//!   operand and fold both.

use super::family::{operands, single_out, BatchOut, Family, JvpOut, Operand, TransposeOut};
use super::params::{Lookup, Param, ParamList};
use super::Primitive;
use crate::array::{checked_size, Buffer, HostArray};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::exec::ExecCtx;
use crate::ir::builder::Builder;
use crate::ir::{Atom, Aval};
use crate::prims::DotGeneral;

mod kernels;
mod rules;

use kernels::{
    conv_tiled, conv_tiled_rows, flat_offsets, im2col, pick, prefers_rows, scatter_out,
    spatial_strides, weights, window_table, Axis, Groups, TileGeometry,
};
use rules::{
    conv, ct_as, empty_batch, reshape_axis_into, reshape_axis_out_of, spec_get, transpose_lhs,
    transpose_rhs,
};

pub(crate) use rules::{axis_geometry, vjp_lhs_padding};

const NAME: &str = "conv_general_dilated";

/// `ConvDimensionNumbers(lhs_spec, rhs_spec, out_spec)`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ConvDims {
    pub lhs_spec: Vec<usize>,
    pub rhs_spec: Vec<usize>,
    pub out_spec: Vec<usize>,
}

impl ConvDims {
    /// `NCH...`, `OIH...`, `NCH...` for rank `n`.
    pub fn identity(n: usize) -> ConvDims {
        let s: Vec<usize> = (0..n).collect();
        ConvDims {
            lhs_spec: s.clone(),
            rhs_spec: s.clone(),
            out_spec: s,
        }
    }
}

/// Params of `conv_general_dilated`, as JAX's.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ConvParams {
    pub window_strides: Vec<usize>,
    pub padding: Vec<(i64, i64)>,
    pub lhs_dilation: Vec<usize>,
    pub rhs_dilation: Vec<usize>,
    pub dims: ConvDims,
    pub feature_group_count: usize,
    pub batch_group_count: usize,
    pub preferred_element_type: Option<DType>,
}

impl ConvParams {
    /// The im2col window geometry of every spatial axis, from the lhs, rhs
    /// and output spatial sizes and the lhs spatial strides.
    fn window_axes(&self, lsp: &[usize], rsp: &[usize], osp: &[usize], lss: &[usize]) -> Vec<Axis> {
        (0..lsp.len())
            .map(|i| {
                let get = |v: &[usize]| v.get(i).copied().unwrap_or(1);
                Axis {
                    size: get(lsp),
                    window: get(rsp),
                    out: get(osp),
                    stride: get(&self.window_strides),
                    lo: self.padding.get(i).map_or(0, |x| x.0),
                    lhs_dil: get(&self.lhs_dilation),
                    rhs_dil: get(&self.rhs_dilation),
                    lhs_stride: get(lss),
                }
            })
            .collect()
    }

    /// Sizes of the grouped problem for lhs shape `ls` and rhs shape `rs`.
    fn groups(&self, ls: &[usize], rs: &[usize]) -> Groups {
        let d = &self.dims;
        let (fg, bg) = (
            self.feature_group_count.max(1),
            self.batch_group_count.max(1),
        );
        let count = fg.saturating_mul(bg);
        Groups {
            count,
            feature: fg > 1,
            cg: at(ls, &d.lhs_spec, 1).checked_div(fg).unwrap_or(0),
            nb: at(ls, &d.lhs_spec, 0).checked_div(bg).unwrap_or(0),
            og: at(rs, &d.rhs_spec, 0).checked_div(count).unwrap_or(0),
        }
    }

    /// A plain convolution of spatial rank `n` (strides 1, no padding).
    pub fn simple(n: usize) -> ConvParams {
        ConvParams {
            window_strides: vec![1; n],
            padding: vec![(0, 0); n],
            lhs_dilation: vec![1; n],
            rhs_dilation: vec![1; n],
            dims: ConvDims::identity(n.saturating_add(2)),
            feature_group_count: 1,
            batch_group_count: 1,
            preferred_element_type: None,
        }
    }
}

/// The f32/f64 convolution in column tiles; `rhs_strides`: the rhs output
/// and input feature strides and the window offsets.
fn tiled(
    ctx: &ExecCtx, lhs: &HostArray, rhs: &HostArray, geo: &TileGeometry<'_>,
    (sro, sri, koffs): (usize, usize, &[usize]), len: usize,
) -> Result<Buffer> {
    Ok(match (lhs.buffer(), rhs.buffer()) {
        (Buffer::F32(l), Buffer::F32(r)) => {
            let w = weights(r, geo.g, sro, sri, koffs)?;
            Buffer::F32(if prefers_rows(geo) {
                conv_tiled_rows(ctx, l, &w, geo, len)?.into()
            } else {
                conv_tiled(ctx, l, &w, geo, len)?.into()
            })
        }
        (Buffer::F64(l), Buffer::F64(r)) => {
            let w = weights(r, geo.g, sro, sri, koffs)?;
            Buffer::F64(if prefers_rows(geo) {
                conv_tiled_rows(ctx, l, &w, geo, len)?.into()
            } else {
                conv_tiled(ctx, l, &w, geo, len)?.into()
            })
        }
        _ => {
            return Err(Error::dtype(
                NAME,
                &[lhs.dtype(), rhs.dtype()],
                "unsupported operand dtypes",
            ))
        }
    })
}

// ----------------------------------------------------------------- params

fn int(n: usize) -> Param {
    Param::Int(i64::try_from(n).unwrap_or(i64::MAX))
}

fn ints(v: &[usize]) -> Param {
    Param::Ints(
        v.iter()
            .map(|&d| i64::try_from(d).unwrap_or(i64::MAX))
            .collect(),
    )
}

fn py_tuple(v: &[usize]) -> String {
    match v {
        [one] => format!("({one},)"),
        _ => {
            let parts: Vec<String> = v.iter().map(|d| d.to_string()).collect();
            format!("({})", parts.join(", "))
        }
    }
}

fn get<'a>(params: &'a [(String, Param)], key: &str) -> Option<&'a Param> {
    params.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

fn bad(key: &'static str, want: &str, got: &Param) -> Error {
    Error::param(NAME, key, format!("expected {want}, got {got:?}"))
}

/// Signed ints of a tuple param (`Ints`, or a `Tuple` of `Int`s).
pub(crate) fn signed_list(prim: &'static str, key: &'static str, p: &Param) -> Result<Vec<i64>> {
    p.int_list().map_err(|bad| {
        let got = bad.unwrap_or(p);
        Error::param(prim, key, format!("expected a tuple of ints, got {got:?}"))
    })
}

/// Non-negative ints of a tuple param.
pub(crate) fn usize_list(prim: &'static str, key: &'static str, p: &Param) -> Result<Vec<usize>> {
    super::params::nonnegative(prim, key, signed_list(prim, key, p)?)
}

/// `((lo, hi), ...)` pairs.
pub(crate) fn pairs(prim: &'static str, key: &'static str, p: &Param) -> Result<Vec<(i64, i64)>> {
    let entries: &[Param] = match p {
        Param::Tuple(v) => v,
        Param::Ints(v) if v.is_empty() => &[],
        other => {
            return Err(Error::param(
                prim,
                key,
                format!("expected a tuple of (lo, hi) pairs, got {other:?}"),
            ))
        }
    };
    entries
        .iter()
        .map(|e| match signed_list(prim, key, e)?.as_slice() {
            [lo, hi] => Ok((*lo, *hi)),
            _ => Err(Error::param(
                prim,
                key,
                format!("expected a (lo, hi) pair, got {e:?}"),
            )),
        })
        .collect()
}

fn need<'a>(params: &'a [(String, Param)], key: &'static str) -> Result<&'a Param> {
    get(params, key).ok_or_else(|| Error::param(NAME, key, "missing"))
}

fn count(params: &[(String, Param)], key: &'static str) -> Result<usize> {
    match get(params, key) {
        None | Some(Param::None) => Ok(1),
        Some(Param::Int(i)) => usize::try_from(*i)
            .map_err(|_| Error::param(NAME, key, format!("must be a positive integer, got {i}"))),
        Some(other) => Err(bad(key, "an int", other)),
    }
}

fn spec_triple(p: &Param) -> Result<ConvDims> {
    let key = "dimension_numbers";
    match p {
        Param::Tuple(v) => match v.as_slice() {
            [l, r, o] => Ok(ConvDims {
                lhs_spec: usize_list(NAME, key, l)?,
                rhs_spec: usize_list(NAME, key, r)?,
                out_spec: usize_list(NAME, key, o)?,
            }),
            _ => Err(bad(key, "(lhs_spec, rhs_spec, out_spec)", p)),
        },
        other => Err(bad(key, "(lhs_spec, rhs_spec, out_spec)", other)),
    }
}

// ----------------------------------------------------------------- shape

/// Size of a dilated axis: `(s - 1) * d + 1`, 0 for an empty axis.
pub(crate) fn dilate(s: usize, d: usize) -> Result<usize> {
    if s == 0 {
        return Ok(0);
    }
    s.saturating_sub(1)
        .checked_mul(d)
        .and_then(|x| x.checked_add(1))
        .ok_or_else(|| Error::Overflow {
            what: "dilation",
            detail: format!("{s} * {d}"),
        })
}

fn to_i64(v: usize) -> Result<i64> {
    i64::try_from(v).map_err(|_| Error::Overflow {
        what: NAME,
        detail: format!("{v}"),
    })
}

/// Output size of one windowed axis: `floor((in + lo + hi - window) /
/// stride) + 1`, or 0 when the window does not fit.
pub(crate) fn window_out_size(
    dilated_in: usize, (lo, hi): (i64, i64), dilated_window: usize, stride: usize,
) -> Result<usize> {
    let padded = to_i64(dilated_in)?
        .checked_add(lo)
        .and_then(|x| x.checked_add(hi))
        .ok_or_else(|| Error::Overflow {
            what: NAME,
            detail: "padding".into(),
        })?;
    let span = padded.saturating_sub(to_i64(dilated_window)?);
    if span < 0 || stride == 0 {
        return Ok(0);
    }
    let span = usize::try_from(span).unwrap_or(0);
    Ok(span.checked_div(stride).unwrap_or(0).saturating_add(1))
}

fn is_permutation(spec: &[usize], n: usize) -> bool {
    let mut seen = vec![false; n];
    spec.len() == n
        && spec.iter().all(|&d| match seen.get_mut(d) {
            Some(s) if !*s => {
                *s = true;
                true
            }
            _ => false,
        })
}

fn at(shape: &[usize], spec: &[usize], k: usize) -> usize {
    spec.get(k)
        .and_then(|&d| shape.get(d))
        .copied()
        .unwrap_or(0)
}

fn spatial(shape: &[usize], spec: &[usize]) -> Vec<usize> {
    spec.iter()
        .skip(2)
        .map(|&d| shape.get(d).copied().unwrap_or(0))
        .collect()
}

fn check_lengths(p: &ConvParams, ns: usize) -> Result<()> {
    let lists: [(&'static str, usize); 4] = [
        ("window_strides", p.window_strides.len()),
        ("padding", p.padding.len()),
        ("lhs_dilation", p.lhs_dilation.len()),
        ("rhs_dilation", p.rhs_dilation.len()),
    ];
    check_list_lengths(NAME, &lists, ns, |len| {
        format!("must have one entry per spatial dimension ({ns}), got {len}")
    })?;
    check_positive(
        NAME,
        &[
            ("window_strides", &p.window_strides),
            ("lhs_dilation", &p.lhs_dilation),
            ("rhs_dilation", &p.rhs_dilation),
        ],
    )
}

/// Every `(key, len)` of `lists` has length `n`; `message(len)` says what
/// the first one that does not was expected to have.
pub(crate) fn check_list_lengths(
    prim: &'static str, lists: &[(&'static str, usize)], n: usize,
    message: impl FnOnce(usize) -> String,
) -> Result<()> {
    match lists.iter().find(|&&(_, len)| len != n) {
        Some(&(key, len)) => Err(Error::param(prim, key, message(len))),
        None => Ok(()),
    }
}

/// Every entry of each named param is positive (strides, dilations,
/// window sizes of convolutions and windowed reductions).
pub(crate) fn check_positive(
    prim: &'static str, params: &[(&'static str, &Vec<usize>)],
) -> Result<()> {
    for (key, v) in params {
        if v.contains(&0) {
            return Err(Error::param(
                prim,
                key,
                format!("entries must be positive, got {v:?}"),
            ));
        }
    }
    Ok(())
}

/// JAX's group-count checks (messages as JAX's).
fn check_groups(p: &ConvParams, lhs: &[usize], rhs: &[usize]) -> Result<()> {
    let (g, bg) = (p.feature_group_count, p.batch_group_count);
    let d = &p.dims;
    let (lhs_b, lhs_f) = (at(lhs, &d.lhs_spec, 0), at(lhs, &d.lhs_spec, 1));
    let (rhs_o, rhs_i) = (at(rhs, &d.rhs_spec, 0), at(rhs, &d.rhs_spec, 1));
    check_group_counts(g, bg)?;
    check_feature_groups(g, (lhs, rhs), (lhs_f, rhs_i, rhs_o))?;
    check_batch_groups(bg, (lhs, rhs), (lhs_b, rhs_o))
}

/// Both group counts positive, at most one of them above 1.
fn check_group_counts(g: usize, bg: usize) -> Result<()> {
    if g == 0 {
        return Err(Error::param(
            NAME,
            "feature_group_count",
            format!("conv_general_dilated feature_group_count must be a positive integer, got {g}"),
        ));
    }
    if bg == 0 {
        return Err(Error::param(
            NAME,
            "batch_group_count",
            format!("conv_general_dilated batch_group_count must be a positive integer, got {bg}"),
        ));
    }
    if g > 1 && bg > 1 {
        return Err(Error::param(
            NAME,
            "batch_group_count",
            format!(
                "At most one of batch_group_count and feature_group_count may be > 1, \
                 got batch_group_count={bg} and feature_group_count={g}"
            ),
        ));
    }
    Ok(())
}

/// `Ok` when `ok`, else the error of param `key` that `message` words.
fn require(ok: bool, key: &'static str, message: impl FnOnce() -> String) -> Result<()> {
    if ok {
        Ok(())
    } else {
        Err(Error::param(NAME, key, message()))
    }
}

/// The rhs output features `rhs_o` are a multiple of the group count `g`
/// (param `key`).
fn check_rhs_out_groups(key: &'static str, g: usize, rhs: &[usize], rhs_o: usize) -> Result<()> {
    require(rhs_o.checked_rem(g) == Some(0), key, || {
        format!(
            "conv_general_dilated rhs output feature dimension size must be a multiple of {key}, \
             but {rhs_o} is not a multiple of {g} (rhs shape {})",
            crate::error::format_shape(rhs)
        )
    })
}

/// `feature_group_count` `g` divides the lhs features `lhs_f` into groups of
/// the rhs input features `rhs_i`, and the rhs output features `rhs_o`.
fn check_feature_groups(
    g: usize, (lhs, rhs): (&[usize], &[usize]), (lhs_f, rhs_i, rhs_o): (usize, usize, usize),
) -> Result<()> {
    let key = "feature_group_count";
    let shapes = || {
        let (l, r) = (
            crate::error::format_shape(lhs),
            crate::error::format_shape(rhs),
        );
        format!("(lhs shape {l}, rhs shape {r})")
    };
    require(lhs_f.checked_rem(g) == Some(0), key, || {
        format!(
            "conv_general_dilated feature_group_count must divide lhs feature dimension size, \
             but {g} does not divide {lhs_f} {}",
            shapes()
        )
    })?;
    require(lhs_f.checked_div(g) == Some(rhs_i), key, || {
        format!(
            "conv_general_dilated lhs feature dimension size divided by feature_group_count must \
             equal the rhs input feature dimension size, but {lhs_f} // {g} != {rhs_i} {}",
            shapes()
        )
    })?;
    check_rhs_out_groups(key, g, rhs, rhs_o)
}

/// `batch_group_count` `bg` divides the lhs batch `lhs_b` and the rhs
/// output features `rhs_o`.
fn check_batch_groups(
    bg: usize, (lhs, rhs): (&[usize], &[usize]), (lhs_b, rhs_o): (usize, usize),
) -> Result<()> {
    let key = "batch_group_count";
    require(lhs_b.checked_rem(bg) == Some(0), key, || {
        format!(
            "conv_general_dilated batch_group_count must divide lhs batch dimension size, but \
             {bg} does not divide {lhs_b} (lhs shape {})",
            crate::error::format_shape(lhs)
        )
    })?;
    check_rhs_out_groups(key, bg, rhs, rhs_o)
}

/// Output shape of the convolution of `lhs` and `rhs` shapes.
pub fn out_shape(p: &ConvParams, lhs: &[usize], rhs: &[usize]) -> Result<Vec<usize>> {
    let n = lhs.len();
    if rhs.len() != n {
        return Err(Error::shape(
            NAME,
            &[lhs, rhs],
            "conv_general_dilated lhs and rhs must have the same number of dimensions",
        ));
    }
    if n < 2 {
        return Err(Error::shape(
            NAME,
            &[lhs, rhs],
            "conv_general_dilated operands must have rank >= 2",
        ));
    }
    let d = &p.dims;
    for (key, spec) in [("lhs_spec", &d.lhs_spec), ("rhs_spec", &d.rhs_spec)]
        .into_iter()
        .chain([("out_spec", &d.out_spec)])
    {
        if !is_permutation(spec, n) {
            return Err(Error::param(
                NAME,
                "dimension_numbers",
                format!("{key} {spec:?} is not a permutation of the {n} operand dimensions"),
            ));
        }
    }
    check_lengths(p, n.saturating_sub(2))?;
    check_groups(p, lhs, rhs)?;
    let mut out = vec![0usize; n];
    let batch = at(lhs, &d.lhs_spec, 0)
        .checked_div(p.batch_group_count)
        .unwrap_or(0);
    let set = |out: &mut Vec<usize>, k: usize, v: usize| {
        if let Some(slot) = d.out_spec.get(k).and_then(|&i| out.get_mut(i)) {
            *slot = v;
        }
    };
    set(&mut out, 0, batch);
    set(&mut out, 1, at(rhs, &d.rhs_spec, 0));
    let (ls, rs) = (spatial(lhs, &d.lhs_spec), spatial(rhs, &d.rhs_spec));
    for (i, (&s, &k)) in ls.iter().zip(&rs).enumerate() {
        let get = |v: &[usize]| v.get(i).copied().unwrap_or(1);
        let size = window_out_size(
            dilate(s, get(&p.lhs_dilation))?,
            p.padding.get(i).copied().unwrap_or((0, 0)),
            dilate(k, get(&p.rhs_dilation))?,
            get(&p.window_strides),
        )?;
        set(&mut out, i.saturating_add(2), size);
    }
    Ok(out)
}

// ----------------------------------------------------------------- family

impl From<ConvParams> for Primitive {
    fn from(c: ConvParams) -> Primitive {
        Primitive::Conv(Box::new(c))
    }
}

impl Family for ConvParams {
    const NAMES: &'static [&'static str] = &[NAME];

    fn name(&self) -> &'static str {
        NAME
    }

    crate::family_identity!(custom_params);

    /// Params as Python sees them, in JAX's order.
    fn params(&self) -> ParamList {
        vec![
            ("window_strides", ints(&self.window_strides)),
            (
                "padding",
                Param::Tuple(
                    self.padding
                        .iter()
                        .map(|&(lo, hi)| Param::Ints(vec![lo, hi]))
                        .collect(),
                ),
            ),
            ("lhs_dilation", ints(&self.lhs_dilation)),
            ("rhs_dilation", ints(&self.rhs_dilation)),
            (
                "dimension_numbers",
                Param::Tuple(vec![
                    ints(&self.dims.lhs_spec),
                    ints(&self.dims.rhs_spec),
                    ints(&self.dims.out_spec),
                ]),
            ),
            ("feature_group_count", int(self.feature_group_count)),
            ("batch_group_count", int(self.batch_group_count)),
            ("precision", Param::None),
            (
                "preferred_element_type",
                self.preferred_element_type
                    .map_or(Param::None, Param::DType),
            ),
        ]
    }

    fn from_params(name: &str, params: &Lookup<'_>) -> Result<Option<ConvParams>> {
        if name != NAME {
            return Ok(None);
        }
        let params = params.list();
        let dtype = match get(params, "preferred_element_type") {
            None | Some(Param::None) => None,
            Some(Param::DType(d)) => Some(*d),
            Some(Param::Str(s)) => Some(DType::from_name(s)?),
            Some(other) => return Err(bad("preferred_element_type", "a dtype", other)),
        };
        let p = ConvParams {
            window_strides: usize_list(NAME, "window_strides", need(params, "window_strides")?)?,
            padding: pairs(NAME, "padding", need(params, "padding")?)?,
            lhs_dilation: usize_list(NAME, "lhs_dilation", need(params, "lhs_dilation")?)?,
            rhs_dilation: usize_list(NAME, "rhs_dilation", need(params, "rhs_dilation")?)?,
            dims: spec_triple(need(params, "dimension_numbers")?)?,
            feature_group_count: count(params, "feature_group_count")?,
            batch_group_count: count(params, "batch_group_count")?,
            preferred_element_type: dtype,
        };
        Ok(Some(p))
    }

    /// `dimension_numbers` as JAX prints it
    /// (`ConvDimensionNumbers(lhs_spec=(0, 1, 2), ...)`).
    fn display_params(&self, params: &mut ParamList) {
        let d = &self.dims;
        let text = format!(
            "ConvDimensionNumbers(lhs_spec={}, rhs_spec={}, out_spec={})",
            py_tuple(&d.lhs_spec),
            py_tuple(&d.rhs_spec),
            py_tuple(&d.out_spec)
        );
        for (k, v) in params.iter_mut() {
            if *k == "dimension_numbers" {
                *v = Param::Str(text.clone());
            }
        }
    }

    fn examples() -> Vec<ConvParams> {
        vec![ConvParams::simple(1)]
    }

    fn abstract_eval(&self, ins: &[Aval]) -> Result<Vec<Aval>> {
        let [l, r] = operands::<_, 2>(NAME, ins)?;
        if l.dtype != r.dtype {
            return Err(Error::dtype(
                NAME,
                &[l.dtype, r.dtype],
                "conv_general_dilated requires lhs and rhs of the same dtype",
            ));
        }
        if !l.dtype.is_numeric() {
            return Err(Error::dtype(
                NAME,
                &[l.dtype],
                "conv_general_dilated requires numeric operands",
            ));
        }
        if let Some(t) = self.preferred_element_type {
            if !t.is_numeric() || t.is_float() != l.dtype.is_float() {
                return Err(Error::dtype(
                    NAME,
                    &[l.dtype, t],
                    "preferred_element_type must be of the operands' kind (float or integer)",
                ));
            }
        }
        let shape = out_shape(self, &l.shape, &r.shape)?;
        let dtype = self.preferred_element_type.unwrap_or(l.dtype);
        Ok(vec![Aval::new(shape, dtype)])
    }

    /// im2col + one batched `dot_general`.
    fn kernel(
        &self, ctx: &ExecCtx, args: &[&HostArray], outs: Vec<Aval>,
    ) -> Result<Vec<HostArray>> {
        let [lhs, rhs] = operands::<_, 2>(NAME, args)?;
        let out = single_out(NAME, outs)?;
        let d = &self.dims;
        let (ls, rs, os) = (lhs.shape(), rhs.shape(), out.shape.as_slice());
        let lstr = super::kernel::row_major_strides(ls)?;
        let rstr = super::kernel::row_major_strides(rs)?;
        let ostr = super::kernel::row_major_strides(os)?;
        let lsp = spatial(ls, &d.lhs_spec);
        let (rsp, osp) = (spatial(rs, &d.rhs_spec), spatial(os, &d.out_spec));
        let lss = spatial_strides(&lstr, &d.lhs_spec);
        let axes = self.window_axes(&lsp, &rsp, &osp, &lss);
        let (kn, pn, table) = window_table(&axes)?;
        let g = self.groups(ls, rs);
        let count = g.count;
        let koffs = flat_offsets(&rsp, &spatial_strides(&rstr, &d.rhs_spec))?;
        let poffs = flat_offsets(&osp, &spatial_strides(&ostr, &d.out_spec))?;
        let (sln, slc) = (pick(&lstr, &d.lhs_spec, 0), pick(&lstr, &d.lhs_spec, 1));
        let (sro, sri) = (pick(&rstr, &d.rhs_spec, 0), pick(&rstr, &d.rhs_spec, 1));
        let dtype_err = || Error::dtype(NAME, &[lhs.dtype()], "unsupported operand dtype");
        let (son, soo) = (pick(&ostr, &d.out_spec, 0), pick(&ostr, &d.out_spec, 1));
        let same_type = self.preferred_element_type.is_none_or(|p| p == lhs.dtype());
        if same_type && matches!(lhs.dtype(), DType::F32 | DType::F64) {
            let geo = TileGeometry {
                g: &g,
                lhs_n: sln,
                lhs_c: slc,
                out_n: son,
                out_o: soo,
                kn,
                pn,
                table: &table,
                poffs: &poffs,
            };
            let buf = tiled(ctx, lhs, rhs, &geo, (sro, sri, &koffs), checked_size(os)?)?;
            return Ok(vec![HostArray::new(out.shape, buf)?]);
        }
        let col_shape = [count, g.cg, kn, g.nb, pn];
        crate::array::budget::check_shape(
            "conv_general_dilated (im2col)",
            &col_shape,
            lhs.dtype(),
        )?;
        let col = crate::with_buffer!(lhs.buffer(),
            v => Buffer::from(im2col(v, &g, sln, slc, kn, pn, &table)?),
            _ => return Err(dtype_err()));
        let w = crate::with_buffer!(rhs.buffer(),
            v => Buffer::from(weights(v, &g, sro, sri, &koffs)?),
            _ => return Err(dtype_err()));
        let ck = g.cg.saturating_mul(kn);
        let col = HostArray::new(vec![count, ck, g.nb.saturating_mul(pn)], col)?;
        let w = HostArray::new(vec![count, g.og, ck], w)?;
        let dot = Primitive::DotGeneral(DotGeneral {
            dims: super::DotDims {
                lhs_contract: vec![2],
                rhs_contract: vec![1],
                lhs_batch: vec![0],
                rhs_batch: vec![0],
            },
            preferred_element_type: self.preferred_element_type,
        });
        let res = super::kernel::eval(ctx, &dot, &[&w, &col])?
            .into_iter()
            .next()
            .ok_or_else(|| Error::InvalidArgument(format!("{NAME}: dot produced no result")))?;
        let len = checked_size(os)?;
        let rows = (count.saturating_mul(g.og), g.nb, pn);
        let buf = crate::with_buffer!(res.buffer(),
            v => Buffer::from(scatter_out(v, len, rows, son, soo, &poffs)?),
            _ => return Err(dtype_err()));
        Ok(vec![HostArray::new(out.shape, buf)?])
    }

    /// Bilinear: `conv(t_lhs, rhs) + conv(lhs, t_rhs)`.
    fn jvp(&self, b: &mut Builder, xs: &[Atom], ts: &[Option<Atom>]) -> JvpOut {
        let ([x, y], [tx, ty]) = (xs, ts) else {
            return Err(Error::arity(NAME, 2, xs.len()));
        };
        let z = conv(b, self.clone(), x.clone(), y.clone())?;
        if !b.aval(&z)?.dtype.is_inexact() {
            return Ok((vec![z], vec![None]));
        }
        let l = match tx {
            Some(t) => Some(conv(b, self.clone(), t.clone(), y.clone())?),
            None => None,
        };
        let r = match ty {
            Some(t) => Some(conv(b, self.clone(), x.clone(), t.clone())?),
            None => None,
        };
        Ok((vec![z], vec![super::jvp::add_opt(b, l, r)?]))
    }

    fn transpose(&self, b: &mut Builder, cts: &[Option<Atom>], ops: &[Operand]) -> TransposeOut {
        let Some(Some(ct)) = cts.first() else {
            return Ok(vec![None; ops.len()]);
        };
        match ops {
            [Operand::Linear(la), Operand::Known(rhs)] => {
                let ct = ct_as(b, ct.clone(), la.dtype)?;
                let t = transpose_lhs(b, self, ct, rhs.clone(), &la.shape)?;
                Ok(vec![Some(t), None])
            }
            [Operand::Known(lhs), Operand::Linear(ra)] => {
                let ct = ct_as(b, ct.clone(), ra.dtype)?;
                let t = transpose_rhs(b, self, ct, lhs.clone(), ra)?;
                Ok(vec![None, Some(t)])
            }
            _ => Err(super::transpose::not_linear_error(
                NAME,
                " (both operands are linear, or neither is)",
            )),
        }
    }

    fn batch(&self, b: &mut Builder, ins: &[Atom], dims: &[Option<usize>], n: usize) -> BatchOut {
        let ([lhs, rhs], [ld, rd]) = (ins, dims) else {
            return Err(Error::arity(NAME, 2, ins.len()));
        };
        let d = &self.dims;
        let (ls, rs, os) = (&d.lhs_spec, &d.rhs_spec, &d.out_spec);
        let (fg, bg) = (self.feature_group_count, self.batch_group_count);
        if n == 0 && (ld.is_some() || rd.is_some()) {
            return empty_batch(b, self, ins, dims);
        }
        match (ld, rd) {
            (None, None) => Ok((
                vec![conv(b, self.clone(), lhs.clone(), rhs.clone())?],
                vec![None],
            )),
            (Some(l), None) if bg == 1 => {
                let new_lhs = reshape_axis_into(b, *l, spec_get(ls, 0), lhs.clone())?;
                let out = conv(b, self.clone(), new_lhs, rhs.clone())?;
                let out = reshape_axis_out_of(b, spec_get(os, 0), n, out)?;
                Ok((vec![out], vec![Some(spec_get(os, 0))]))
            }
            (None, Some(r)) if fg == 1 && bg == 1 => {
                let new_rhs = reshape_axis_into(b, *r, spec_get(rs, 0), rhs.clone())?;
                let out = conv(b, self.clone(), lhs.clone(), new_rhs)?;
                let out = reshape_axis_out_of(b, spec_get(os, 1), n, out)?;
                Ok((vec![out], vec![Some(spec_get(os, 1))]))
            }
            _ => {
                // Both mapped (an unmapped one is broadcast first): the map
                // index becomes the major part of the groups.
                let (lhs, l) = match ld {
                    Some(l) => (lhs.clone(), *l),
                    None => (super::batch::add_batch_axis(b, lhs.clone(), n, 0)?, 0),
                };
                let (rhs, r) = match rd {
                    Some(r) => (rhs.clone(), *r),
                    None => (super::batch::add_batch_axis(b, rhs.clone(), n, 0)?, 0),
                };
                let mut t = self.clone();
                let new_lhs = if bg > 1 {
                    t.batch_group_count = bg.saturating_mul(n);
                    reshape_axis_into(b, l, spec_get(ls, 0), lhs)?
                } else {
                    t.feature_group_count = fg.saturating_mul(n);
                    reshape_axis_into(b, l, spec_get(ls, 1), lhs)?
                };
                let new_rhs = reshape_axis_into(b, r, spec_get(rs, 0), rhs)?;
                let out = conv(b, t, new_lhs, new_rhs)?;
                let out = reshape_axis_out_of(b, spec_get(os, 1), n, out)?;
                Ok((vec![out], vec![Some(spec_get(os, 1))]))
            }
        }
    }
}
