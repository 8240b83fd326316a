//! CUDA C for the data-movement primitives: `transpose`, `slice`, `rev`,
//! `pad`, `concatenate`, `dynamic_slice`, `dynamic_update_slice`, and the
//! broadcasts the fused kernels cannot read (a literal, or kept axes that
//! are not one run). Each is
//! one thread per output element reading the input element its
//! coordinates map to (every shape and stride a constant of the text).
//! Elements are moved, never computed, so every dtype with a device
//! storage type works (f16/bf16 as their bits, complex64/complex128 as
//! `mj_cx` structs). Semantics follow the CPU
//! kernels: `pad` takes negative low/high padding, dynamic starts are
//! clamped so the window fits.

use super::codegen::{c_literal, c_type, finish, KernelSource};
use super::kernels::{strides, unsupported};
use crate::array::checked_size;
use crate::dtype::DType;
use crate::error::Result;
use crate::exec::compiled::fusion::Access;
use crate::ir::{Atom, Aval, Jaxpr, Scalar, Var};
use crate::prims::Primitive;
use crate::prims::{
    BroadcastInDim, Concatenate, DynamicSlice, DynamicUpdateSlice, Pad, Rev, Slice, Transpose,
};
use std::fmt::Write;

/// The C type elements of `d` are moved as (f16/bf16 as their bits,
/// complex elements as [`super::complex`]'s structs).
fn moved_type(d: DType) -> Option<&'static str> {
    match d {
        DType::F16 | DType::BF16 => Some("unsigned short"),
        _ => c_type(d).or_else(|| super::complex::c_type(d)),
    }
}

/// A literal in the moved representation of `d`.
fn moved_literal(v: Scalar, d: DType) -> Result<String> {
    let bits = |b: u16| format!("((unsigned short){b})");
    match d {
        DType::F16 => Ok(bits(half::f16::from_f64(v.as_f64()).to_bits())),
        DType::BF16 => Ok(bits(half::bf16::from_f64(v.as_f64()).to_bits())),
        _ => c_literal(v, d),
    }
}

fn to_i64(v: usize) -> Result<i64> {
    i64::try_from(v).map_err(|_| unsupported(format!("extent {v}")))
}

/// Emitter state: parameters in order, the Var inputs, the body.
struct Emit<'a> {
    jx: &'a Jaxpr,
    params: Vec<String>,
    inputs: Vec<(Var, Access)>,
    body: String,
}

impl Emit<'_> {
    /// A pointer parameter for input atom `a` (a variable), or `None` for a
    /// literal (the caller folds it into the text).
    fn pointer(&mut self, a: &Atom) -> Result<Option<String>> {
        let Atom::Var(v) = a else {
            return Ok(None);
        };
        let aval = self.jx.aval(*v)?;
        let ty = moved_type(aval.dtype)
            .ok_or_else(|| unsupported(format!("elements of {}", aval.dtype.name())))?;
        let k = self.inputs.len();
        let name = format!("in{k}");
        self.params.push(format!("const {ty}* __restrict__ {name}"));
        let size = aval.size()?;
        self.inputs.push((*v, Access { inner: 1, size }));
        Ok(Some(name))
    }

    /// The C expression of scalar operand `a` (its element 0) as `long
    /// long`, an index.
    fn index(&mut self, a: &Atom) -> Result<String> {
        match a {
            Atom::Lit(l) => Ok(format!("{}LL", l.val.as_i64())),
            Atom::Var(v) => {
                let d = self.jx.aval(*v)?.dtype;
                if !d.is_int() {
                    return Err(unsupported(format!("index of {}", d.name())));
                }
                let p = self
                    .pointer(a)?
                    .ok_or_else(|| unsupported("index operand".into()))?;
                Ok(if d == DType::U64 {
                    // Above i64::MAX reads as i64::MAX, as on the CPU.
                    format!("({p}[0] > 9223372036854775807ULL ? 9223372036854775807LL : (long long){p}[0])")
                } else {
                    format!("(long long){p}[0]")
                })
            }
        }
    }

    /// The C expression of element `e` of array operand `a`.
    fn element(&mut self, a: &Atom, e: &str) -> Result<String> {
        match self.pointer(a)? {
            Some(p) => Ok(format!("{p}[{e}]")),
            None => Err(unsupported("literal array operand".into())),
        }
    }

    /// `c0, c1, ...`: the output coordinates of work item `i`.
    fn coords(&mut self, shape: &[usize]) -> Result<()> {
        for (p, (&size, &stride)) in shape.iter().zip(&strides(shape)?).enumerate() {
            let _ = writeln!(
                self.body,
                "    const long long c{p} = (i / {stride}LL) % {}LL;",
                size.max(1)
            );
        }
        Ok(())
    }
}

fn sum(terms: &[String]) -> String {
    if terms.is_empty() {
        "0LL".to_string()
    } else {
        terms.join(" + ")
    }
}

fn aval_of<'a>(jx: &'a Jaxpr, a: &'a Atom) -> Result<&'a Aval> {
    match a {
        Atom::Var(v) => jx.aval(*v),
        Atom::Lit(l) => Ok(&l.aval),
    }
}

/// The kernel of structural equation `prim(ins) -> out`, `None` for other
/// primitives and for operands the device cannot hold (keys, float0).
pub fn structural_kernel(
    jx: &Jaxpr, prim: &Primitive, ins: &[Atom], out: Var,
) -> Result<Option<KernelSource>> {
    let oa = jx.aval(out)?;
    let Some(ty) = moved_type(oa.dtype) else {
        return Ok(None);
    };
    let mut em = Emit {
        jx,
        params: Vec::new(),
        inputs: Vec::new(),
        body: String::new(),
    };
    em.coords(&oa.shape)?;
    let value = match (prim, ins) {
        (Primitive::Transpose(Transpose { permutation }), [x]) => {
            let st = strides(&aval_of(jx, x)?.shape)?;
            let terms: Vec<String> = permutation
                .iter()
                .enumerate()
                .map(|(p, &a)| format!("c{p} * {}LL", st.get(a).copied().unwrap_or(0)))
                .collect();
            em.element(x, &sum(&terms))?
        }
        (
            Primitive::Slice(Slice {
                start_indices,
                strides: steps,
                ..
            }),
            [x],
        ) => slice_value(&mut em, x, start_indices, steps.as_deref())?,
        (Primitive::Rev(Rev { dimensions }), [x]) => rev_value(&mut em, x, dimensions)?,
        (
            Primitive::BroadcastInDim(BroadcastInDim {
                broadcast_dimensions,
                ..
            }),
            [x],
        ) => match x {
            Atom::Lit(l) => moved_literal(l.val, oa.dtype)?,
            Atom::Var(_) => broadcast_value(&mut em, x, broadcast_dimensions)?,
        },
        (Primitive::Pad(Pad { padding_config }), [x, pad]) => {
            pad_value(&mut em, x, pad, padding_config)?
        }
        (Primitive::Concatenate(Concatenate { dimension }), parts) => {
            concatenate(&mut em, parts, *dimension)?
        }
        (Primitive::DynamicSlice(DynamicSlice { slice_sizes }), [x, starts @ ..]) => {
            dynamic_slice_value(&mut em, x, slice_sizes, starts)?
        }
        (Primitive::DynamicUpdateSlice(DynamicUpdateSlice), [x, u, starts @ ..]) => {
            update_slice(&mut em, x, u, starts)?
        }
        _ => return Ok(None),
    };
    em.params.push(format!("{ty}* __restrict__ out0"));
    let _ = writeln!(em.body, "    out0[i] = {value};");
    let len = checked_size(&oa.shape)?;
    Ok(Some(finish(em.params, &em.body, em.inputs, vec![out], len)))
}

/// The element of `x` at the offset summing `term(em, a, n, stride)` over
/// its axes `a` (of size `n`); an axis whose term is `None` adds nothing.
fn element_by_axis(
    em: &mut Emit, x: &Atom,
    mut term: impl FnMut(&mut Emit, usize, usize, usize) -> Result<Option<String>>,
) -> Result<String> {
    let xa = aval_of(em.jx, x)?;
    let st = strides(&xa.shape)?;
    let mut terms = Vec::new();
    for (a, (&n, &stride)) in xa.shape.iter().zip(&st).enumerate() {
        terms.extend(term(em, a, n, stride)?);
    }
    em.element(x, &sum(&terms))
}

/// `slice`: the input element at `start + c * step` on every axis.
fn slice_value(
    em: &mut Emit, x: &Atom, start_indices: &[usize], steps: Option<&[usize]>,
) -> Result<String> {
    element_by_axis(em, x, |_, a, _, stride| {
        let step = steps.and_then(|s| s.get(a).copied()).unwrap_or(1);
        let term = |start| format!("({start}LL + c{a} * {step}LL) * {stride}LL");
        Ok(start_indices.get(a).map(term))
    })
}

/// `rev`: the input element at `n - 1 - c` on the reversed axes.
fn rev_value(em: &mut Emit, x: &Atom, dimensions: &[usize]) -> Result<String> {
    element_by_axis(em, x, |_, a, n, stride| {
        Ok(Some(if dimensions.contains(&a) {
            format!("({}LL - c{a}) * {stride}LL", n.saturating_sub(1))
        } else {
            format!("c{a} * {stride}LL")
        }))
    })
}

/// `broadcast_in_dim` of a variable: input axis `k` read at output
/// coordinate `broadcast_dimensions[k]`.
fn broadcast_value(em: &mut Emit, x: &Atom, broadcast_dimensions: &[usize]) -> Result<String> {
    element_by_axis(em, x, |_, a, n, stride| {
        // A unit input axis is broadcast: always its element 0.
        let p = broadcast_dimensions.get(a).filter(|_| n != 1);
        Ok(p.map(|p| format!("c{p} * {stride}LL")))
    })
}

/// `dynamic_slice`: the input element at `s + c`, each start `s` clamped
/// so the slice stays in bounds.
fn dynamic_slice_value(
    em: &mut Emit, x: &Atom, slice_sizes: &[usize], starts: &[Atom],
) -> Result<String> {
    element_by_axis(em, x, |em, a, n, stride| {
        let (Some(&size), Some(idx)) = (slice_sizes.get(a), starts.get(a)) else {
            return Ok(None);
        };
        let hi = to_i64(n.saturating_sub(size))?;
        let s = em.index(idx)?;
        let _ = writeln!(em.body, "    long long s{a} = {s};");
        let _ = writeln!(
            em.body,
            "    s{a} = s{a} < 0 ? 0 : (s{a} > {hi}LL ? {hi}LL : s{a});"
        );
        Ok(Some(format!("(s{a} + c{a}) * {stride}LL")))
    })
}

/// `pad`: the input element at `(c - lo) / (interior + 1)` when that is a
/// whole in-range coordinate on every axis, else the padding value.
fn pad_value(em: &mut Emit, x: &Atom, pad: &Atom, config: &[(i64, i64, i64)]) -> Result<String> {
    let xa = aval_of(em.jx, x)?.clone();
    let st = strides(&xa.shape)?;
    let _ = writeln!(em.body, "    bool ok = true;");
    let _ = writeln!(em.body, "    long long off = 0;");
    for (a, ((&(lo, _, interior), &n), &stride)) in
        config.iter().zip(&xa.shape).zip(&st).enumerate()
    {
        let step = interior
            .checked_add(1)
            .filter(|s| *s > 0)
            .ok_or_else(|| unsupported(format!("interior padding {interior}")))?;
        let n = to_i64(n)?;
        let _ = writeln!(em.body, "    {{");
        let _ = writeln!(em.body, "      const long long t = c{a} - ({lo}LL);");
        let _ = writeln!(
            em.body,
            "      ok = ok && t >= 0 && t % {step}LL == 0 && t / {step}LL < {n}LL;"
        );
        let _ = writeln!(em.body, "      off += (t / {step}LL) * {stride}LL;");
        let _ = writeln!(em.body, "    }}");
    }
    let fill = match pad {
        Atom::Lit(l) => moved_literal(l.val, xa.dtype)?,
        Atom::Var(_) => em.element(pad, "0")?,
    };
    let from = em.element(x, "off")?;
    Ok(format!("ok ? {from} : {fill}"))
}

/// `concatenate`: the part whose range along `dim` holds the coordinate.
fn concatenate(em: &mut Emit, parts: &[Atom], dim: usize) -> Result<String> {
    let mut at = 0usize;
    let mut cases = Vec::new();
    for p in parts {
        let pa = aval_of(em.jx, p)?.clone();
        let st = strides(&pa.shape)?;
        let n = *pa
            .shape
            .get(dim)
            .ok_or_else(|| unsupported(format!("concatenate axis {dim}")))?;
        let terms: Vec<String> = st
            .iter()
            .enumerate()
            .map(|(a, s)| {
                if a == dim {
                    format!("(c{a} - {at}LL) * {s}LL")
                } else {
                    format!("c{a} * {s}LL")
                }
            })
            .collect();
        let e = em.element(p, &sum(&terms))?;
        at = at
            .checked_add(n)
            .ok_or_else(|| unsupported("size overflow".into()))?;
        cases.push((at, e));
    }
    let Some((_, last)) = cases.pop() else {
        return Err(unsupported("concatenate of nothing".into()));
    };
    Ok(cases.iter().rev().fold(last, |rest, (end, e)| {
        format!("(c{dim} < {end}LL ? {e} : {rest})")
    }))
}

/// `dynamic_update_slice`: the update inside its clamped window, the
/// operand elsewhere.
fn update_slice(em: &mut Emit, x: &Atom, u: &Atom, starts: &[Atom]) -> Result<String> {
    let xa = aval_of(em.jx, x)?.clone();
    let ua = aval_of(em.jx, u)?.clone();
    let ust = strides(&ua.shape)?;
    let _ = writeln!(em.body, "    bool inside = true;");
    let _ = writeln!(em.body, "    long long uoff = 0;");
    for (a, ((&n, &m), idx)) in xa.shape.iter().zip(&ua.shape).zip(starts).enumerate() {
        let hi = to_i64(n.saturating_sub(m))?;
        let s = em.index(idx)?;
        let _ = writeln!(em.body, "    {{");
        let _ = writeln!(em.body, "      long long s = {s};");
        let _ = writeln!(em.body, "      s = s < 0 ? 0 : (s > {hi}LL ? {hi}LL : s);");
        let _ = writeln!(
            em.body,
            "      inside = inside && c{a} >= s && c{a} < s + {m}LL;"
        );
        let _ = writeln!(
            em.body,
            "      uoff += (c{a} - s) * {}LL;",
            ust.get(a).copied().unwrap_or(0)
        );
        let _ = writeln!(em.body, "    }}");
    }
    let from_u = em.element(u, "uoff")?;
    let from_x = em.element(x, "i")?;
    Ok(format!("inside ? {from_u} : {from_x}"))
}
