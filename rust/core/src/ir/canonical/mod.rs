//! The *canonical* text form of a jaxpr (the printer, here) and its parser
//! (`parser.rs`).
//!
//! `parse(&canonical(j), &ParseLimits::default()) == Ok(j)` (structural
//! equality) for every well-typed jaxpr without constvars; with constvars,
//! the text declares their avals and [`parse_with_consts`] takes the values.
//! Sub-jaxprs in params (pjit's `jaxpr`) carry their const values inline.
//!
//! ```text
//! microjax-jaxpr 1
//! { lambda v0:f32[3]; v1:f32[5,3] v2:f32[]{weak}. let
//!     v3:f32[5,3] = sin v1
//!     v4:f32[5,3] = mul v3 0x40400000:f32[]
//!     v5:f32[] = reduce_sum[axes=(0,1)] v4
//!     v6:f32[] = pjit[jaxpr={ lambda ; v0:f32[]. let
//!           v1:f32[] = neg v0
//!         in (v1) } name="g"] v5 {io}
//!   in (v5, v6) }
//! ```
//!
//! Grammar (whitespace-insensitive; `vN` is variable N of the enclosing
//! block, so numbering and the `avals` table round-trip exactly):
//!
//! ```text
//! file    := "microjax-jaxpr" VERSION block
//! block   := "{" "lambda" binder* ";" binder* "." "let" eqn* "in"
//!            "(" [atom ("," atom)*] ")" ["unbound" binder*] "}"
//! binder  := VAR ":" type                       -- VAR = v<index>
//! type    := DTYPE "[" [dim ("," dim)*] "]" ["{" "weak" "}"]
//! eqn     := binder* "=" PRIM ["[" (KEY "=" param)* "]"] atom* ["{" "io" "}"]
//! atom    := VAR | lit ":" type
//! lit     := "true" | "false"                   -- bool
//!          | DECIMAL                            -- int dtypes, in range
//!          | HEX                                -- float dtypes: IEEE bits, 4/8/16 digits
//!          | ("bool"|"int"|"uint"|"float") "(" value ")"
//!                                               -- any other Scalar/dtype pairing, exact
//! param   := "None" | "true" | "false" | DECIMAL | "float" "(" HEX64 ")" | STRING
//!          | DTYPE_NAME | "(" [int ("," int)*] ")" | "[" [param ("," param)*] "]"
//!          | block ["with" "[" [HEXBYTES ("," HEXBYTES)*] "]"]
//! ```
//!
//! `unbound` lists entries of the `avals` table no binder mentions, so even
//! such tables survive the round trip. Const data (`with`) is the
//! little-endian bytes of each const, hex encoded.
//!
//! The parser reads untrusted text: a tokenizer plus recursive descent with
//! an explicit depth counter; text length, nesting depth, equation and
//! variable counts, rank and element counts are limited by [`ParseLimits`]
//! inside the parser. It never panics; failures are `Error::Parse` (with
//! line and column) or `Error::Limit`. The result is typechecked.

use super::{Atom, Aval, ClosedJaxpr, Effect, Eqn, Jaxpr, Literal, Scalar, Var};
use crate::array::Buffer;
use crate::dtype::DType;
use crate::error::Result;
use crate::prims::Param;
use half::{bf16, f16};
use std::fmt::Write as _;

pub(crate) mod parser;

pub use parser::{parse, parse_with_consts};

/// First word of every canonical text.
pub const HEADER: &str = "microjax-jaxpr";
/// Version written by [`canonical`] and the only one [`parse`] accepts.
pub const VERSION: u32 = 1;
/// Nesting depth never exceeded whatever [`ParseLimits::max_depth`] says
/// (keeps the recursive descent's stack use bounded).
pub const HARD_MAX_DEPTH: usize = 128;

/// Limits enforced while parsing (untrusted input).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseLimits {
    /// Bytes of text.
    pub max_text_len: usize,
    /// Nesting of sub-jaxprs and param tuples (clamped to [`HARD_MAX_DEPTH`]).
    pub max_depth: usize,
    /// Equations, all blocks together.
    pub max_eqns: usize,
    /// Variables, all blocks together (also bounds every index).
    pub max_vars: usize,
    /// Rank of any type.
    pub max_rank: usize,
    /// Elements of any type.
    pub max_elements: usize,
}

impl Default for ParseLimits {
    fn default() -> ParseLimits {
        ParseLimits {
            max_text_len: 64 << 20,
            max_depth: 64,
            max_eqns: 1 << 20,
            max_vars: 1 << 22,
            max_rank: 32,
            max_elements: 1 << 40,
        }
    }
}

// ---------------------------------------------------------------- printer

/// The canonical text of `j` (const values of the top level not included).
pub fn canonical(j: &ClosedJaxpr) -> String {
    let mut out = format!("{HEADER} {VERSION}\n");
    write_jaxpr(&mut out, &j.jaxpr, 0);
    out.push('\n');
    out
}

/// The canonical text of a bare jaxpr.
pub fn canonical_jaxpr(j: &Jaxpr) -> String {
    let mut out = format!("{HEADER} {VERSION}\n");
    write_jaxpr(&mut out, j, 0);
    out.push('\n');
    out
}

fn write_type(out: &mut String, a: &Aval) {
    out.push_str(&a.short());
    if a.weak_type {
        out.push_str("{weak}");
    }
}

fn write_binder(out: &mut String, j: &Jaxpr, v: Var) {
    let _ = write!(out, "v{}:", v.0);
    match j.avals.get(v.index()) {
        Some(a) => write_type(out, a),
        None => out.push_str("?[]"),
    }
}

fn write_atom(out: &mut String, a: &Atom) {
    match a {
        Atom::Var(v) => {
            let _ = write!(out, "v{}", v.0);
        }
        Atom::Lit(l) => write_literal(out, l),
    }
}

fn write_jaxpr(out: &mut String, j: &Jaxpr, indent: usize) {
    let mut bound = vec![false; j.avals.len()];
    let mut mark = |v: &Var| {
        if let Some(b) = bound.get_mut(v.index()) {
            *b = true;
        }
    };
    j.constvars.iter().for_each(&mut mark);
    j.invars.iter().for_each(&mut mark);
    j.eqns.iter().flat_map(|e| &e.outputs).for_each(&mut mark);

    out.push_str("{ lambda ");
    for (i, &v) in j.constvars.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        write_binder(out, j, v);
    }
    out.push_str("; ");
    for (i, &v) in j.invars.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        write_binder(out, j, v);
    }
    out.push_str(". let");
    let eqn_indent = indent.saturating_add(4);
    for e in &j.eqns {
        out.push('\n');
        out.push_str(&" ".repeat(eqn_indent));
        write_eqn(out, j, e, eqn_indent);
    }
    out.push('\n');
    out.push_str(&" ".repeat(indent.saturating_add(2)));
    out.push_str("in (");
    for (i, a) in j.outvars.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_atom(out, a);
    }
    out.push(')');
    let unbound: Vec<usize> = bound
        .iter()
        .enumerate()
        .filter(|(_, b)| !**b)
        .map(|(i, _)| i)
        .collect();
    if !unbound.is_empty() {
        out.push_str(" unbound");
        for i in unbound {
            out.push(' ');
            write_binder(out, j, Var(u32::try_from(i).unwrap_or(u32::MAX)));
        }
    }
    out.push_str(" }");
}

fn write_eqn(out: &mut String, j: &Jaxpr, e: &Eqn, indent: usize) {
    for &v in &e.outputs {
        write_binder(out, j, v);
        out.push(' ');
    }
    out.push_str("= ");
    out.push_str(e.prim.name());
    let params = e.prim.params();
    if !params.is_empty() {
        out.push('[');
        for (i, (k, p)) in params.iter().enumerate() {
            if i > 0 {
                out.push(' ');
            }
            out.push_str(k);
            out.push('=');
            write_param(out, p, indent.saturating_add(2));
        }
        out.push(']');
    }
    for a in &e.inputs {
        out.push(' ');
        write_atom(out, a);
    }
    match e.effect {
        Effect::None => {}
        Effect::OrderedIo => out.push_str(" {io}"),
    }
}

#[doc(hidden)]
pub fn write_param(out: &mut String, p: &Param, indent: usize) {
    match p {
        Param::None => out.push_str("None"),
        Param::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Param::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Param::Float(f) => {
            let _ = write!(out, "float(0x{:016x})", f.to_bits());
        }
        Param::Str(s) => write_str_lit(out, s),
        Param::DType(d) => out.push_str(d.name()),
        Param::Ints(v) => {
            let items: Vec<String> = v.iter().map(|i| i.to_string()).collect();
            let _ = write!(out, "({})", items.join(","));
        }
        Param::Tuple(items) => {
            out.push('[');
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_param(out, x, indent);
            }
            out.push(']');
        }
        // Not representable as text: the parser rejects the word.
        Param::Callback(c) => {
            let _ = write!(out, "host_callback_{:?}", c.0.name());
        }
        Param::Opaque(o) => {
            let _ = write!(out, "host_value_{:?}", o.0.describe());
        }
        Param::Jaxpr(cj) => {
            write_jaxpr(out, &cj.jaxpr, indent);
            if !cj.consts.is_empty() {
                out.push_str(" with [");
                for (i, c) in cj.consts.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    out.push_str("0x");
                    for b in buffer_to_le(c.buffer()) {
                        let _ = write!(out, "{b:02x}");
                    }
                }
                out.push(']');
            }
        }
    }
}

fn write_str_lit(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// The plain (dtype-implied) spelling of a literal value, when it is exact.
fn plain_literal(l: &Literal) -> Option<String> {
    let d = l.aval.dtype;
    match l.val {
        Scalar::Bool(b) if d == DType::Bool => Some(if b { "true" } else { "false" }.into()),
        Scalar::Int(i) if d.is_signed_int() && int_fits(i, d) => Some(i.to_string()),
        Scalar::UInt(u) if d.is_unsigned_int() && int_fits(u, d) => Some(u.to_string()),
        Scalar::Float(f) => {
            let bits = f.to_bits();
            match d {
                DType::F16 => {
                    let h = f16::from_f64(f);
                    (h.to_f64().to_bits() == bits).then(|| format!("0x{:04x}", h.to_bits()))
                }
                DType::BF16 => {
                    let h = bf16::from_f64(f);
                    (h.to_f64().to_bits() == bits).then(|| format!("0x{:04x}", h.to_bits()))
                }
                DType::F32 => {
                    let s = f as f32;
                    (f64::from(s).to_bits() == bits).then(|| format!("0x{:08x}", s.to_bits()))
                }
                DType::F64 => Some(format!("0x{bits:016x}")),
                _ => None,
            }
        }
        // Complex: the real part's bits, then the imaginary part's, in the
        // width of the parts (16 hex digits for c64, 32 for c128).
        Scalar::Complex(re, im) => match d {
            DType::C64 => {
                let (r, i) = (re as f32, im as f32);
                let exact = f64::from(r).to_bits() == re.to_bits()
                    && f64::from(i).to_bits() == im.to_bits();
                exact.then(|| format!("0x{:08x}{:08x}", r.to_bits(), i.to_bits()))
            }
            DType::C128 => Some(format!("0x{:016x}{:016x}", re.to_bits(), im.to_bits())),
            _ => None,
        },
        _ => None,
    }
}

fn write_literal(out: &mut String, l: &Literal) {
    match plain_literal(l) {
        Some(s) => out.push_str(&s),
        None => {
            let _ = match l.val {
                Scalar::Bool(b) => write!(out, "bool({b})"),
                Scalar::Int(i) => write!(out, "int({i})"),
                Scalar::UInt(u) => write!(out, "uint({u})"),
                Scalar::Float(f) => write!(out, "float(0x{:016x})", f.to_bits()),
                Scalar::Complex(re, im) => {
                    write!(out, "complex(0x{:016x}{:016x})", re.to_bits(), im.to_bits())
                }
            };
        }
    }
    out.push(':');
    write_type(out, &l.aval);
}

/// Whether the integer `v` is in the range of the integer dtype `d` (false
/// for any other dtype).
fn int_fits(v: impl Into<i128>, d: DType) -> bool {
    let v: i128 = v.into();
    match d {
        DType::I8 => i8::try_from(v).is_ok(),
        DType::I16 => i16::try_from(v).is_ok(),
        DType::I32 => i32::try_from(v).is_ok(),
        DType::I64 => i64::try_from(v).is_ok(),
        DType::U8 => u8::try_from(v).is_ok(),
        DType::U16 => u16::try_from(v).is_ok(),
        DType::U32 => u32::try_from(v).is_ok(),
        DType::U64 => u64::try_from(v).is_ok(),
        _ => false,
    }
}

/// Little-endian bytes of a buffer (bool as 0/1, keys as u32 words).
pub fn buffer_to_le(b: &Buffer) -> Vec<u8> {
    b.to_le_bytes()
}

/// A buffer of `n` elements of `dtype` from little-endian bytes (the exact
/// length required; bools must be 0 or 1).
pub fn buffer_from_le(dtype: DType, n: usize, bytes: &[u8]) -> Result<Buffer> {
    Buffer::from_le_bytes("const data", dtype, n, bytes, true)
}
