//! CUDA C source for the compiled plan's fusion groups (no CUDA types: this
//! module is compiled and tested everywhere).
//!
//! Contract: one `extern "C" __global__` kernel per fusion group of
//! [`fusion::find_groups`] over the simplified program, a grid-stride loop
//! with 64-bit indices over the group's element count; parameters are the
//! outside inputs in first-read order (`in0, in1, ...`, each read at
//! `(i / inner) % size`, see [`Access`]), then the escaping outputs in
//! member order (`out0, ...`), then `n`. The text depends only on the
//! program, and the kernel is named `mj_<16 hex digits>` from an FNV-1a
//! hash of the text with the name left out, so the same plan gives the same
//! bytes and the same name. Members without a device lowering
//! ([`lowering`]) make the whole group a host fallback.

use super::complex;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::exec::compiled::fusion::{self, broadcast_access, Access, Group};
use crate::exec::compiled::simplify;
use crate::ir::{Atom, ClosedJaxpr, Eqn, Jaxpr, Scalar, Var};
use crate::prims::{BinaryOp, CmpOp, Primitive, RoundingMethod, UnaryOp};
use crate::prims::{
    BroadcastInDim, Clamp, ConvertElementType, IntegerPow, IsFinite, Reshape, Round, SelectN,
    Squeeze,
};
use std::fmt::Write;

/// How an equation runs on the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lowering {
    /// Emitted into a generated elementwise kernel.
    Kernel,
    /// Copied to the host and run by the CPU kernel; the reason is
    /// documented in docs/DESIGN-NOTES.md ("CUDA executor").
    HostFallback(&'static str),
}

/// One generated kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelSource {
    pub name: String,
    pub source: String,
    /// Outside inputs (variables of the simplified program) and how each is
    /// read.
    pub inputs: Vec<(Var, Access)>,
    /// Escaping member outputs, in parameter order.
    pub outputs: Vec<Var>,
    pub len: usize,
}

fn unsupported(what: String) -> Error {
    Error::Unsupported(format!("cuda codegen: {what}"))
}

/// The C type of a dtype's elements, `None` for dtypes without a device
/// lowering (f16/bf16, float0, keys) and for complex dtypes (their
/// elementwise kernels use [`super::complex`]'s structs; the data-movement
/// kernels do not take them).
pub fn c_type(d: DType) -> Option<&'static str> {
    Some(match d {
        DType::Bool => "bool",
        DType::I8 => "signed char",
        DType::I16 => "short",
        DType::I32 => "int",
        DType::I64 => "long long",
        DType::U8 => "unsigned char",
        DType::U16 => "unsigned short",
        DType::U32 => "unsigned int",
        DType::U64 => "unsigned long long",
        DType::F32 => "float",
        DType::F64 => "double",
        DType::F16 | DType::BF16 | DType::C64 | DType::C128 | DType::Float0 | DType::Key => {
            return None
        }
    })
}

/// Whether `d` is a 16-bit float: stored as its bits (`unsigned short`),
/// computed in `float`, every result rounded back to 16 bits (to nearest,
/// ties to even), as the CPU kernels round each op.
pub(super) fn is_half(d: DType) -> bool {
    matches!(d, DType::F16 | DType::BF16)
}

/// The C type an elementwise kernel computes `d` in (complex dtypes as
/// the structs of [`super::complex`]).
fn compute_type(d: DType) -> Option<&'static str> {
    c_type_or(d, "float")
}

/// The C type `d` is stored as in device memory.
fn storage_type(d: DType) -> Option<&'static str> {
    c_type_or(d, "unsigned short")
}

/// The C type of `d`, with `half` standing for the 16-bit float dtypes.
fn c_type_or(d: DType, half: &'static str) -> Option<&'static str> {
    if d.is_complex() {
        complex::c_type(d)
    } else if is_half(d) {
        Some(half)
    } else {
        c_type(d)
    }
}

/// `float` ↔ f16/bf16 bits (to nearest, ties to even; NaNs become quiet
/// NaNs with their top payload bits, as the CPU converts, infinities and overflow give infinities),
/// plain integer arithmetic so that no CUDA header is needed. Put in front
/// of a kernel that uses them.
pub(super) const HALF_HELPERS: &str = r#"__device__ __forceinline__ float mj_f16_to_f32(unsigned short h) {
  unsigned int s = ((unsigned int)h & 0x8000u) << 16;
  unsigned int e = ((unsigned int)h >> 10) & 0x1fu;
  unsigned int m = (unsigned int)h & 0x3ffu;
  if (e == 0u) {
    float f = (float)m * 5.9604644775390625e-8f;
    return s ? -f : f;
  }
  if (e == 31u) return __uint_as_float(s | (m ? 0x7fc00000u : 0x7f800000u) | (m << 13));
  return __uint_as_float(s | ((e + 112u) << 23) | (m << 13));
}
__device__ __forceinline__ unsigned short mj_f32_to_f16(float f) {
  unsigned int x = __float_as_uint(f);
  unsigned int s = (x >> 16) & 0x8000u;
  unsigned int a = x & 0x7fffffffu;
  if (a > 0x7f800000u) return (unsigned short)(s | 0x7e00u | ((a >> 13) & 0x3ffu));
  if (a >= 0x477ff000u) return (unsigned short)(s | 0x7c00u);
  if (a < 0x38800000u) return (unsigned short)(s | (unsigned int)rintf(__uint_as_float(a) * 16777216.0f));
  return (unsigned short)(s | ((a + 0xc8000fffu + ((a >> 13) & 1u)) >> 13));
}
__device__ __forceinline__ float mj_bf16_to_f32(unsigned short h) {
  unsigned int x = (unsigned int)h << 16;
  return __uint_as_float((x & 0x7fffffffu) > 0x7f800000u ? (x | 0x400000u) : x);
}
__device__ __forceinline__ unsigned short mj_f32_to_bf16(float f) {
  unsigned int x = __float_as_uint(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((x >> 16) | 0x40u);
  return (unsigned short)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
"#;

/// `(load, store)` function names of a 16-bit float.
pub(super) fn half_fns(d: DType) -> (&'static str, &'static str) {
    if d == DType::BF16 {
        ("mj_bf16_to_f32", "mj_f32_to_bf16")
    } else {
        ("mj_f16_to_f32", "mj_f32_to_f16")
    }
}

/// CUDA's name of a float math function for `d` (`expf` / `exp`).
fn math(name: &str, d: DType) -> String {
    if d == DType::F32 || is_half(d) {
        format!("{name}f")
    } else {
        name.to_string()
    }
}

/// Whether `prim` on operands of dtype `d` (the first operand's) producing
/// `out` is emitted into a kernel.
pub fn lowering(prim: &Primitive, d: DType, out: DType) -> Lowering {
    if d.is_complex() || out.is_complex() {
        return complex::lowering(prim, d, out);
    }
    if compute_type(d).is_none() || compute_type(out).is_none() {
        return Lowering::HostFallback("float0 and key elements stay on the host");
    }
    if is_half(out) && d == DType::F64 {
        // Through float would round twice.
        return Lowering::HostFallback("f64 to f16/bf16 converts");
    }
    match prim {
        Primitive::Unary(op) => match op {
            UnaryOp::Digamma => Lowering::HostFallback("digamma has no CUDA math function"),
            UnaryOp::PopulationCount | UnaryOp::Clz
                if !matches!(d, DType::I32 | DType::U32 | DType::I64 | DType::U64) =>
            {
                Lowering::HostFallback("popc/clz of 8/16-bit integers")
            }
            _ => Lowering::Kernel,
        },
        Primitive::Binary(op) => match op {
            BinaryOp::Polygamma => Lowering::HostFallback("polygamma has no CUDA math function"),
            BinaryOp::ShiftLeft | BinaryOp::ShiftRightLogical | BinaryOp::ShiftRightArithmetic => {
                Lowering::HostFallback("out-of-range shift counts are undefined in C")
            }
            BinaryOp::Div | BinaryOp::Rem if !d.is_float() => {
                Lowering::HostFallback("integer division by zero is undefined in C")
            }
            BinaryOp::Pow if !d.is_float() => Lowering::HostFallback("integer pow"),
            BinaryOp::Nextafter if is_half(d) => {
                Lowering::HostFallback("nextafter of f16/bf16 (steps of 16-bit ulps)")
            }
            _ => Lowering::Kernel,
        },
        Primitive::Special(_) => Lowering::HostFallback("special functions have no CUDA kernel"),
        Primitive::ConvertElementType(ConvertElementType { .. })
            if d.is_float() && !out.is_float() && out != DType::Bool =>
        {
            Lowering::HostFallback("float to integer of NaN/out-of-range values is undefined in C")
        }
        // The product is unrolled into the kernel text (a squaring per
        // bit), so huge exponents would make huge sources.
        Primitive::IntegerPow(IntegerPow { y }) if y.unsigned_abs() > 64 => {
            Lowering::HostFallback("integer_pow with |y| > 64")
        }
        Primitive::BroadcastInDim(BroadcastInDim { .. })
        | Primitive::Reshape(Reshape { .. })
        | Primitive::Squeeze(Squeeze { .. }) => Lowering::Kernel,
        p if fusion::is_elementwise(p) => Lowering::Kernel,
        _ => Lowering::HostFallback("not an elementwise primitive"),
    }
}

/// A C literal of `v` in dtype `d`.
pub(super) fn c_literal(v: Scalar, d: DType) -> Result<String> {
    if d.is_complex() {
        return complex::literal(v, d);
    }
    let ty = compute_type(d).ok_or_else(|| unsupported(format!("literal of {d:?}")))?;
    Ok(match v {
        Scalar::Bool(b) => format!("(({ty}){})", u8::from(b)),
        Scalar::Int(i) => format!("(({ty}){i}LL)"),
        Scalar::UInt(u) => format!("(({ty}){u}ULL)"),
        Scalar::Float(f) if f.is_nan() => {
            format!("(({ty})__longlong_as_double(0x7ff8000000000000LL))")
        }
        Scalar::Float(f) if f.is_infinite() => {
            let sign = if f < 0.0 { "-" } else { "" };
            format!("(({ty}){sign}__longlong_as_double(0x7ff0000000000000LL))")
        }
        // `{:e}` prints the shortest text that reads back to the same f64.
        Scalar::Float(f) => format!("(({ty}){f:e})"),
        Scalar::Complex(..) => return Err(unsupported(format!("complex literal of {d:?}"))),
    })
}

/// The C expression of one unary op.
fn unary_expr(op: UnaryOp, d: DType, x: &str) -> String {
    let f = |n: &str| format!("{}({x})", math(n, d));
    match op {
        UnaryOp::Neg => format!("(-{x})"),
        UnaryOp::Square => format!("({x} * {x})"),
        UnaryOp::Abs if d.is_float() => f("fabs"),
        UnaryOp::Abs => format!("({x} < 0 ? -{x} : {x})"),
        UnaryOp::Sign if d.is_float() => {
            format!("({x} != {x} ? {x} : ({x} > 0 ? 1 : ({x} < 0 ? -1 : {x})))")
        }
        UnaryOp::Sign => format!("(({x} > 0) - ({x} < 0))"),
        UnaryOp::Not if d == DType::Bool => format!("(!{x})"),
        UnaryOp::Not => format!("(~{x})"),
        UnaryOp::Logistic => format!("(1 / (1 + {}(-{x})))", math("exp", d)),
        UnaryOp::ErfInv => f("erfinv"),
        UnaryOp::PopulationCount if matches!(d, DType::I64 | DType::U64) => {
            format!("__popcll({x})")
        }
        UnaryOp::PopulationCount => format!("__popc({x})"),
        UnaryOp::Clz if matches!(d, DType::I64 | DType::U64) => format!("__clzll({x})"),
        UnaryOp::Clz => format!("__clz({x})"),
        // Every other unary op has a CUDA math function of its own name.
        _ => f(op.name()),
    }
}

pub(super) fn binary_expr(op: BinaryOp, d: DType, x: &str, y: &str) -> String {
    let nan_first = |pick: &str| {
        if d.is_float() {
            format!("({x} != {x} ? {x} : ({y} != {y} ? {y} : ({x} {pick} {y} ? {x} : {y})))")
        } else {
            format!("({x} {pick} {y} ? {x} : {y})")
        }
    };
    match op {
        BinaryOp::Add => format!("({x} + {y})"),
        BinaryOp::Sub => format!("({x} - {y})"),
        BinaryOp::Mul => format!("({x} * {y})"),
        BinaryOp::Div => format!("({x} / {y})"),
        BinaryOp::Max => nan_first(">"),
        BinaryOp::Min => nan_first("<"),
        BinaryOp::And => format!("({x} & {y})"),
        BinaryOp::Or => format!("({x} | {y})"),
        BinaryOp::Xor => format!("({x} ^ {y})"),
        BinaryOp::Rem => format!("{}({x}, {y})", math("fmod", d)),
        _ => format!("{}({x}, {y})", math(op.name(), d)),
    }
}

fn compare_op(op: CmpOp) -> &'static str {
    match op {
        CmpOp::Eq => "==",
        CmpOp::Ne => "!=",
        CmpOp::Lt => "<",
        CmpOp::Le => "<=",
        CmpOp::Gt => ">",
        CmpOp::Ge => ">=",
    }
}

/// Kernel sources for every fusion group of `prog` (simplified first, as the
/// compiled CPU plan does), in program order; groups with a host-fallback
/// member are left out.
pub fn kernel_sources(prog: &ClosedJaxpr) -> Result<Vec<KernelSource>> {
    let simple = simplify::simplify(prog)?;
    let jx = &simple.jaxpr;
    let groups = fusion::find_groups(jx)?;
    let mut out = Vec::new();
    for g in &groups {
        if let Some(k) = group_kernel(jx, g)? {
            out.push(k);
        }
    }
    Ok(out)
}

/// Whether `v` is read outside the group's members or is a program output.
fn escapes(jx: &Jaxpr, group: &Group, v: Var) -> bool {
    let read_outside = jx.eqns.iter().enumerate().any(|(i, e)| {
        !group.members.contains(&i)
            && e.inputs
                .iter()
                .any(|a| matches!(a, Atom::Var(w) if *w == v))
    });
    read_outside
        || jx
            .outvars
            .iter()
            .any(|a| matches!(a, Atom::Var(w) if *w == v))
}

/// Emitter state for one group.
#[derive(Default)]
struct Emit {
    body: String,
    /// Input parameters, in reading order.
    params: Vec<String>,
    /// Output parameters: they follow every input in the signature, the
    /// order in which launches pass the buffers.
    out_params: Vec<String>,
    inputs: Vec<(Var, Access)>,
    /// C expression of each variable bound so far.
    bound: Vec<(Var, String)>,
    /// The group's element count: an input of exactly that many elements
    /// read in order is indexed by `i` alone.
    len: usize,
}

impl Emit {
    fn lookup(&self, v: Var) -> Option<&str> {
        self.bound
            .iter()
            .find(|(w, _)| *w == v)
            .map(|(_, s)| s.as_str())
    }

    /// The expression reading outside value `v` through `access`.
    fn input(&mut self, v: Var, d: DType, access: Access) -> Result<String> {
        let ty = compute_type(d).ok_or_else(|| unsupported(format!("input of {d:?}")))?;
        let stored = storage_type(d).ok_or_else(|| unsupported(format!("input of {d:?}")))?;
        let k = self.inputs.len();
        self.params
            .push(format!("const {stored}* __restrict__ in{k}"));
        self.inputs.push((v, access));
        let name = format!("a{k}");
        let index = match access {
            Access { size: 1, .. } => "0".to_string(),
            Access { inner: 1, size } if size == self.len => "i".to_string(),
            Access { inner: 1, size } => format!("i % {size}LL"),
            Access { inner, size } => format!("(i / {inner}LL) % {size}LL"),
        };
        let load = format!("in{k}[{index}]");
        let load = if is_half(d) {
            format!("{}({load})", half_fns(d).0)
        } else {
            load
        };
        let _ = writeln!(self.body, "    const {ty} {name} = {load};");
        Ok(name)
    }

    fn operand(&mut self, jx: &Jaxpr, a: &Atom, len: usize) -> Result<String> {
        match a {
            Atom::Lit(l) => c_literal(l.val, l.aval.dtype),
            Atom::Var(v) => {
                if let Some(s) = self.lookup(*v) {
                    return Ok(s.to_string());
                }
                let aval = jx.aval(*v)?;
                let size = aval.size()?;
                let access = if size == len {
                    Access { inner: 1, size }
                } else if size == 1 {
                    Access { inner: 1, size: 1 }
                } else {
                    return Err(unsupported(format!(
                        "operand of {size} elements in a group of {len}"
                    )));
                };
                let e = self.input(*v, aval.dtype, access)?;
                self.bound.push((*v, e.clone()));
                Ok(e)
            }
        }
    }
}

/// The kernel of one group, `None` when a member has no device lowering.
pub fn group_kernel(jx: &Jaxpr, group: &Group) -> Result<Option<KernelSource>> {
    let len = crate::array::checked_size(&group.shape)?;
    let mut em = Emit {
        len,
        ..Emit::default()
    };
    let mut outputs = Vec::new();
    let mut stores = String::new();
    for (m, &i) in group.members.iter().enumerate() {
        let eqn = jx
            .eqns
            .get(i)
            .ok_or_else(|| unsupported("member index".into()))?;
        let [out] = eqn.outputs.as_slice() else {
            return Err(unsupported(format!(
                "{} with several outputs",
                eqn.prim.name()
            )));
        };
        let out_aval = jx.aval(*out)?;
        let in_dtype = match eqn.inputs.last() {
            Some(a) => match a {
                Atom::Var(v) => jx.aval(*v)?.dtype,
                Atom::Lit(l) => l.aval.dtype,
            },
            None => out_aval.dtype,
        };
        if let Lowering::HostFallback(_) = lowering(&eqn.prim, in_dtype, out_aval.dtype) {
            return Ok(None);
        }
        let Some(expr) = member_value(&mut em, jx, eqn, (in_dtype, out_aval.dtype), len)? else {
            return Ok(None);
        };
        store_member(
            &mut em,
            jx,
            group,
            (m, *out),
            out_aval.dtype,
            &expr,
            (&mut outputs, &mut stores),
        )?;
    }
    em.body.push_str(&stores);
    let mut params = em.params;
    params.append(&mut em.out_params);
    Ok(Some(finish(params, &em.body, em.inputs, outputs, len)))
}

/// The C expression of group member `eqn` (of input and output dtypes
/// `in_dtype`, `out_dtype`), `None` when it has no device lowering.
fn member_value(
    em: &mut Emit, jx: &Jaxpr, eqn: &Eqn, (in_dtype, out_dtype): (DType, DType), len: usize,
) -> Result<Option<String>> {
    Ok(Some(match &eqn.prim {
        Primitive::BroadcastInDim(BroadcastInDim {
            shape,
            broadcast_dimensions,
        }) => {
            let [Atom::Var(x)] = eqn.inputs.as_slice() else {
                return Ok(None);
            };
            match em.lookup(*x) {
                Some(s) => s.to_string(),
                None => {
                    let xa = jx.aval(*x)?;
                    let Some(access) = broadcast_access(&xa.shape, shape, broadcast_dimensions)
                    else {
                        return Ok(None);
                    };
                    em.input(*x, xa.dtype, access)?
                }
            }
        }
        Primitive::Reshape(Reshape { .. }) | Primitive::Squeeze(Squeeze { .. }) => {
            let [a] = eqn.inputs.as_slice() else {
                return Ok(None);
            };
            em.operand(jx, a, len)?
        }
        prim => {
            let mut args = Vec::with_capacity(eqn.inputs.len());
            for a in &eqn.inputs {
                args.push(em.operand(jx, a, len)?);
            }
            match member_expr(prim, in_dtype, out_dtype, &args)? {
                Some(e) => e,
                None => return Ok(None),
            }
        }
    }))
}

/// Binds member `m`'s output `out` (of dtype `od`) to `expr` in the kernel
/// body and, when it escapes the group, adds its output parameter and its
/// store (to `stores`, written after every member).
fn store_member(
    em: &mut Emit, jx: &Jaxpr, group: &Group, (m, out): (usize, Var), od: DType, expr: &str,
    (outputs, stores): (&mut Vec<Var>, &mut String),
) -> Result<()> {
    let ty = compute_type(od).ok_or_else(|| unsupported("output dtype".into()))?;
    let stored = storage_type(od).ok_or_else(|| unsupported("output dtype".into()))?;
    let name = format!("v{m}");
    if is_half(od) {
        // Rounded to 16 bits now, as the CPU rounds each op's result.
        let (load, store) = half_fns(od);
        let _ = writeln!(em.body, "    const {ty} {name} = {load}({store}({expr}));");
    } else {
        let _ = writeln!(em.body, "    const {ty} {name} = {expr};");
    }
    em.bound.push((out, name.clone()));
    if escapes(jx, group, out) {
        let k = outputs.len();
        outputs.push(out);
        em.out_params.push(format!("{stored}* __restrict__ out{k}"));
        let value = if is_half(od) {
            format!("{}({name})", half_fns(od).1)
        } else {
            name.clone()
        };
        let _ = writeln!(stores, "    out{k}[i] = {value};");
    }
    Ok(())
}

/// Names the kernel from the hash of its text (with the name left out) and
/// packages it.
pub(super) fn finish(
    mut params: Vec<String>, body: &str, inputs: Vec<(Var, Access)>, outputs: Vec<Var>, len: usize,
) -> KernelSource {
    params.push("long long n".to_string());
    let name = format!(
        "mj_{:016x}",
        fnv1a(kernel_text("KERNEL", &params, body).as_bytes())
    );
    KernelSource {
        source: kernel_text(&name, &params, body),
        name,
        inputs,
        outputs,
        len,
    }
}

/// A grid-stride kernel over `i in 0..n` (64-bit indices) running `body`
/// (lines indented by four spaces) for each `i`.
pub(super) fn kernel_text(name: &str, params: &[String], body: &str) -> String {
    let mut s = String::new();
    if body.contains("mj_f16_") || body.contains("mj_bf16_") || body.contains("mj_f32_to_") {
        s.push_str(HALF_HELPERS);
    }
    if params.iter().any(|p| p.contains("mj_c")) || body.contains("mj_c") {
        s.push_str(complex::COMPLEX_HELPERS);
    }
    let _ = writeln!(
        s,
        "extern \"C\" __global__ void {name}({}) {{",
        params.join(", ")
    );
    s.push_str("  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;\n");
    s.push_str("       i += (long long)blockDim.x * gridDim.x) {\n");
    s.push_str(body);
    s.push_str("  }\n}\n");
    s
}

/// The expression of an elementwise member.
fn member_expr(prim: &Primitive, d: DType, out: DType, args: &[String]) -> Result<Option<String>> {
    if (d.is_complex() || out.is_complex()) && !matches!(prim, Primitive::SelectN(SelectN)) {
        return complex::member_expr(prim, d, out, args);
    }
    let out_ty = compute_type(out).ok_or_else(|| unsupported("output dtype".into()))?;
    let e = match (prim, args) {
        (Primitive::Unary(op), [x]) => format!("({out_ty}){}", unary_expr(*op, d, x)),
        (Primitive::Binary(op), [x, y]) => format!("({out_ty}){}", binary_expr(*op, d, x, y)),
        (Primitive::Compare(op), [x, y]) => format!("({x} {} {y})", compare_op(*op)),
        (Primitive::IntegerPow(IntegerPow { y }), [x]) => integer_pow(x, *y, out_ty),
        (Primitive::SelectN(SelectN), [p, cases @ ..]) => {
            let mut e = cases
                .last()
                .cloned()
                .ok_or_else(|| unsupported("select_n without cases".into()))?;
            for (k, c) in cases.iter().enumerate().rev().skip(1) {
                e = format!("({p} == {k} ? {c} : {e})");
            }
            e
        }
        (Primitive::ConvertElementType(ConvertElementType { .. }), [x]) if out == DType::Bool => {
            format!("({x} != 0)")
        }
        (Primitive::ConvertElementType(ConvertElementType { .. }), [x]) => format!("({out_ty}){x}"),
        (Primitive::Clamp(Clamp), [lo, x, hi]) => {
            format!("({x} < {lo} ? {lo} : ({x} > {hi} ? {hi} : {x}))")
        }
        (Primitive::IsFinite(IsFinite), [x]) => format!("isfinite({x})"),
        (Primitive::Round(Round { rounding_method }), [x]) => match rounding_method {
            RoundingMethod::AwayFromZero => format!("{}({x})", math("round", d)),
            RoundingMethod::ToNearestEven => format!("{}({x})", math("rint", d)),
        },
        _ => return Ok(None),
    };
    Ok(Some(e))
}

/// `x ** |y|` by square-and-multiply unrolled at generation time, as a C
/// expression over `x` (None for `y == 0`). Shared by the real and complex
/// `integer_pow` lowerings.
pub(super) fn unrolled_power(x: &str, y: i32) -> Option<String> {
    let mut n = y.unsigned_abs();
    let mut acc: Option<String> = None;
    let mut base = x.to_string();
    while n > 0 {
        if n & 1 == 1 {
            acc = Some(match acc {
                Some(a) => format!("({a} * {base})"),
                None => base.clone(),
            });
        }
        n >>= 1;
        if n > 0 {
            base = format!("({base} * {base})");
        }
    }
    acc
}

/// `x ** y` by square-and-multiply unrolled at generation time (the same
/// multiplication order as the CPU kernel's loop is not promised: GPU
/// results are compared at tolerance).
fn integer_pow(x: &str, y: i32, ty: &str) -> String {
    let p = unrolled_power(x, y).unwrap_or_else(|| format!("(({ty})1)"));
    if y < 0 {
        format!("(({ty})1 / {p})")
    } else {
        format!("(({ty}){p})")
    }
}

/// 64-bit FNV-1a: a stable hash (the std hasher is not stable across
/// releases).
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}
