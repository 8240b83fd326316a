//! The *display* printer: jaxprs in JAX's `make_jaxpr` grammar.
//!
//! This form is for people and is not parsed back (constants are elided,
//! names are JAX's, some params print abbreviated); the canonical text of
//! [`crate::ir::canonical`] is the form that round-trips through its
//! parser, and the one exported programs carry.
//!
//! ```text
//! { lambda a:f32[3]; b:f32[5,3] c:f32[]. let
//!     d:f32[5,3] = sin b
//!     e:f32[5,3] = mul d 3.0:f32[]
//!     f:f32[] = reduce_sum[axes=(0, 1)] e
//!   in (f,) }
//! ```
//!
//! Conventions (all taken from JAX's printer):
//! * variables are named `a`, `b`, …, `z`, `ba`, `bb`, … in order of binding
//!   (constvars, invars, then each equation's outputs before its sub-jaxprs),
//!   with one counter shared by nested jaxprs so every name is unique;
//! * literals print as `value:type`, floats as Python's `repr` of the value at
//!   the literal's own width (`0.1:f32[]`, not `0.10000000149011612`);
//! * params print as `prim[k=v k2=v2]` sorted by key, as JAX's default
//!   equation printer does; `pjit` prints `name` then `jaxpr` first, as JAX's
//!   pjit rule does. A param list holding a sub-jaxpr breaks over lines;
//! * a jaxpr that fits in 80 columns and holds only one-line equations
//!   prints on one line (`{ lambda ; a:f32[]. let b:f32[] = sin a in (b,) }`).
//!
//! Weak types, literal bit patterns and effects are not shown; the
//! [`canonical`](super::canonical) form carries them.
//!
//! [`display_name_stack`] adds each equation's name stack (its
//! `named_scope`s, see [`name_stack`]) as JAX's `pretty_print(name_stack=True)`
//! does: ` # [outer/inner]` after the line the equation starts on, every
//! annotation of the text aligned to one column (a line holding several
//! equations puts the later annotations on lines of their own).

use super::{Atom, ClosedJaxpr, Eqn, Jaxpr, Literal, Scalar, Var};
use crate::dtype::DType;
use crate::prims::Pjit;
use crate::prims::{Param, Primitive};
use half::{bf16, f16};
use std::collections::HashMap;

/// Width JAX's pretty printer fits one-line jaxprs into.
const WIDTH: usize = 80;

/// JAX's `make_jaxpr` text of a closed jaxpr.
pub fn display(j: &ClosedJaxpr) -> String {
    display_jaxpr(&j.jaxpr)
}

/// JAX's `make_jaxpr` text of a bare jaxpr.
pub fn display_jaxpr(j: &Jaxpr) -> String {
    let mut namer = Namer::default();
    fmt_jaxpr(j, &mut namer, 0, 0)
}

/// Separates an equation's source location from its name stack in its
/// source text (`file:line (function)\u{1f}outer/inner`).
pub const NAME_STACK_SEPARATOR: char = '\u{1f}';

/// The name stack of an equation's source text (`""` when it has none).
pub fn name_stack(source: &super::SourceInfo) -> &str {
    source
        .as_deref()
        .and_then(|s| s.split_once(NAME_STACK_SEPARATOR))
        .map_or("", |(_, names)| names)
}

/// The source text of an equation a transform named `transform` emits for
/// one with source `source`: its name stack wrapped as JAX's (`outer/inner`
/// under `jvp` is `jvp(outer)/inner`, no names `jvp()`), its location kept
/// when `keep_location`. None where `source` is None (a trace recording no
/// sources).
///
/// A traced loop gives thousands of equations one source, so the last few
/// results are kept per thread (keyed by the source's allocation, which the
/// memo holds alive) and a transform of a long program formats each
/// distinct source once.
pub fn transform_source(
    source: &super::SourceInfo, transform: &'static str, keep_location: bool,
) -> super::SourceInfo {
    type Memo = Vec<(std::sync::Arc<str>, &'static str, bool, super::SourceInfo)>;
    thread_local! {
        static MEMO: std::cell::RefCell<(Memo, usize)> = const {
            std::cell::RefCell::new((Vec::new(), 0))
        };
    }
    const SIZE: usize = 4;
    let src = source.as_ref()?;
    let hit = MEMO.with(|m| {
        let m = m.try_borrow().ok()?;
        m.0.iter()
            .find(|(s, t, k, _)| {
                std::sync::Arc::ptr_eq(s, src) && *t == transform && *k == keep_location
            })
            .map(|e| e.3.clone())
    });
    if let Some(out) = hit {
        return out;
    }
    let out = format_transform_source(src, transform, keep_location);
    MEMO.with(|m| {
        if let Ok(mut m) = m.try_borrow_mut() {
            let entry = (src.clone(), transform, keep_location, out.clone());
            let next = m.1;
            match m.0.get_mut(next) {
                Some(slot) => *slot = entry,
                None => m.0.push(entry),
            }
            m.1 = next.checked_add(1).filter(|n| *n < SIZE).unwrap_or(0);
        }
    });
    out
}

fn format_transform_source(text: &str, transform: &str, keep_location: bool) -> super::SourceInfo {
    let (location, names) = text.split_once(NAME_STACK_SEPARATOR).unwrap_or((text, ""));
    let mut depth = 0i32;
    let mut split = names.len();
    for (i, c) in names.char_indices() {
        match c {
            '(' => depth = depth.saturating_add(1),
            ')' => depth = depth.saturating_sub(1),
            '/' if depth == 0 => {
                split = i;
                break;
            }
            _ => {}
        }
    }
    let (first, rest) = names.split_at(split);
    let location = if keep_location { location } else { "" };
    Some(std::sync::Arc::from(format!(
        "{location}{NAME_STACK_SEPARATOR}{transform}({first}){rest}"
    )))
}

// Annotations travel inside the text between these marks until
// `align_annotations` moves them to the end of their lines.
const MARK_OPEN: char = '\u{2}';
const MARK_CLOSE: char = '\u{3}';

/// JAX's `pretty_print(name_stack=True)` text of a closed jaxpr.
pub fn display_name_stack(j: &ClosedJaxpr) -> String {
    let mut namer = Namer {
        annotate: true,
        ..Namer::default()
    };
    align_annotations(&fmt_jaxpr(&j.jaxpr, &mut namer, 0, 0))
}

/// Characters of `s` outside annotation marks.
fn visible_len(s: &str) -> usize {
    let mut inside = false;
    let mut n = 0usize;
    for c in s.chars() {
        match c {
            MARK_OPEN => inside = true,
            MARK_CLOSE => inside = false,
            _ if !inside => n = n.saturating_add(1),
            _ => {}
        }
    }
    n
}

/// A line's text without its marks, and its annotations in order.
fn split_marks(line: &str) -> (String, Vec<String>) {
    let mut text = String::new();
    let mut notes = Vec::new();
    let mut current: Option<String> = None;
    for c in line.chars() {
        match (c, current.as_mut()) {
            (MARK_OPEN, _) => current = Some(String::new()),
            (MARK_CLOSE, Some(_)) => notes.extend(current.take()),
            (_, Some(note)) => note.push(c),
            (_, None) => text.push(c),
        }
    }
    (text, notes)
}

fn align_annotations(text: &str) -> String {
    let lines: Vec<(String, Vec<String>)> = text.split('\n').map(split_marks).collect();
    let col = lines
        .iter()
        .filter(|(_, notes)| !notes.is_empty())
        .map(|(line, _)| line.chars().count())
        .max()
        .unwrap_or(0);
    let mut out: Vec<String> = Vec::with_capacity(lines.len());
    for (line, notes) in lines {
        if notes.is_empty() {
            out.push(line);
            continue;
        }
        for (k, note) in notes.iter().enumerate() {
            let base = if k == 0 { line.as_str() } else { "" };
            let pad = col.saturating_sub(base.chars().count());
            out.push(format!("{base}{} # [{note}]", " ".repeat(pad)));
        }
    }
    out.join("\n")
}

/// JAX's `make_jaxpr` printout (not parsed back: see the module docs).
impl std::fmt::Display for Jaxpr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&display_jaxpr(self))
    }
}

/// JAX's `make_jaxpr` printout (not parsed back: see the module docs).
impl std::fmt::Display for ClosedJaxpr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&display(self))
    }
}

/// JAX's variable name for the `n`-th variable: `a`..`z`, `ba`, `bb`, ….
/// (Base 26 with digits `a`..`z`.)
pub fn alpha_name(n: usize) -> String {
    const ALPHABET: &[u8; 26] = b"abcdefghijklmnopqrstuvwxyz";
    let mut rev: Vec<u8> = Vec::new();
    let mut n = n;
    loop {
        let d = n.wrapping_rem(26);
        rev.push(ALPHABET.get(d).copied().unwrap_or(b'?'));
        n = n.wrapping_div(26);
        if n == 0 {
            break;
        }
    }
    rev.reverse();
    String::from_utf8(rev).unwrap_or_default()
}

/// One counter for the whole print (nested jaxprs continue it).
#[derive(Default)]
struct Namer {
    next: usize,
    /// Whether equations carry their name stack annotations (marked).
    annotate: bool,
}

impl Namer {
    fn fresh(&mut self) -> String {
        let n = self.next;
        self.next = n.saturating_add(1);
        alpha_name(n)
    }
}

/// Names of one jaxpr's variables.
struct Scope<'a> {
    jaxpr: &'a Jaxpr,
    names: HashMap<Var, String>,
}

impl Scope<'_> {
    /// Name for a variable being bound (a fresh one).
    fn bind(&mut self, v: Var, namer: &mut Namer) -> String {
        let name = namer.fresh();
        self.names.insert(v, name.clone());
        name
    }

    /// Name of a variable being used; an unbound one (a malformed program)
    /// still gets a name rather than failing the print.
    fn name(&mut self, v: Var, namer: &mut Namer) -> String {
        if let Some(n) = self.names.get(&v) {
            return n.clone();
        }
        self.bind(v, namer)
    }

    fn ty(&self, v: Var) -> String {
        self.jaxpr
            .avals
            .get(v.index())
            .map_or_else(|| "?".to_string(), |a| a.short())
    }

    fn binder(&mut self, v: Var, namer: &mut Namer) -> String {
        let name = self.bind(v, namer);
        format!("{name}:{}", self.ty(v))
    }

    fn atom(&mut self, a: &Atom, namer: &mut Namer) -> String {
        match a {
            Atom::Var(v) => self.name(*v, namer),
            Atom::Lit(l) => fmt_literal(l),
        }
    }
}

/// `indent`: indentation of the line the jaxpr starts on; `col`: the column
/// it starts at (for the fits-on-one-line decision).
fn fmt_jaxpr(j: &Jaxpr, namer: &mut Namer, indent: usize, col: usize) -> String {
    let mut scope = Scope {
        jaxpr: j,
        names: HashMap::new(),
    };
    let consts: Vec<String> = j
        .constvars
        .iter()
        .map(|&v| scope.binder(v, namer))
        .collect();
    let ins: Vec<String> = j.invars.iter().map(|&v| scope.binder(v, namer)).collect();
    let eqn_indent = indent.saturating_add(4);
    let eqns: Vec<String> = j
        .eqns
        .iter()
        .map(|e| fmt_eqn(e, &mut scope, namer, eqn_indent))
        .collect();
    let outs: Vec<String> = j.outvars.iter().map(|a| scope.atom(a, namer)).collect();
    let outs = fmt_tuple(&outs);
    let head = format!("{{ lambda {}; {}. let", consts.join(" "), ins.join(" "));
    let compact = format!("{head} {} in {outs} }}", eqns.join(" "));
    if !compact.contains('\n') && col.saturating_add(visible_len(&compact)) <= WIDTH {
        return compact;
    }
    let mut out = head;
    let pad = " ".repeat(eqn_indent);
    for e in &eqns {
        out.push('\n');
        out.push_str(&pad);
        out.push_str(e);
    }
    out.push('\n');
    out.push_str(&" ".repeat(indent.saturating_add(2)));
    out.push_str("in ");
    out.push_str(&outs);
    out.push_str(" }");
    out
}

/// Python tuple syntax: `()`, `(x,)`, `(x, y)`.
fn fmt_tuple(items: &[String]) -> String {
    match items {
        [one] => format!("({one},)"),
        _ => format!("({})", items.join(", ")),
    }
}

/// Params in display order: sorted by key (JAX's default); pjit shows
/// `name` and `jaxpr` first (JAX's pjit rule).
fn display_params(prim: &Primitive) -> Vec<(&'static str, Param)> {
    let mut params = prim.display_params();
    params.sort_by(|a, b| a.0.cmp(b.0));
    if matches!(prim, Primitive::Pjit(Pjit { .. })) {
        let rank = |k: &str| match k {
            "name" => 0,
            "jaxpr" => 1,
            _ => 2,
        };
        params.sort_by_key(|(k, _)| rank(k));
    }
    params
}

fn fmt_eqn(e: &Eqn, scope: &mut Scope<'_>, namer: &mut Namer, indent: usize) -> String {
    let outs: Vec<String> = e.outputs.iter().map(|&v| scope.binder(v, namer)).collect();
    let params = display_params(&e.prim);
    let multiline = params.iter().any(|(_, p)| contains_jaxpr(p));
    let inner = indent.saturating_add(2);
    let rendered: Vec<String> = params
        .iter()
        .map(|(k, p)| {
            let col = if multiline {
                inner.saturating_add(k.len()).saturating_add(1)
            } else {
                WIDTH
            };
            let v = fmt_param(p, namer, inner, col, *k == "dimension_numbers", false);
            format!("{k}={v}")
        })
        .collect();
    let mut rhs = e.prim.name().to_string();
    let note = if namer.annotate {
        format!("{MARK_OPEN}{}{MARK_CLOSE}", name_stack(&e.source.0))
    } else {
        String::new()
    };
    if multiline {
        rhs.push('[');
        rhs.push_str(&note);
        for r in &rendered {
            rhs.push('\n');
            rhs.push_str(&" ".repeat(inner));
            rhs.push_str(r);
        }
        rhs.push('\n');
        rhs.push_str(&" ".repeat(indent));
        rhs.push(']');
    } else if !rendered.is_empty() {
        rhs.push('[');
        rhs.push_str(&rendered.join(" "));
        rhs.push(']');
    }
    let ins: Vec<String> = e.inputs.iter().map(|a| scope.atom(a, namer)).collect();
    if !ins.is_empty() {
        rhs.push(' ');
        rhs.push_str(&ins.join(" "));
    }
    if !multiline {
        rhs.push_str(&note);
    }
    if outs.is_empty() {
        rhs
    } else {
        format!("{} = {rhs}", outs.join(" "))
    }
}

fn contains_jaxpr(p: &Param) -> bool {
    match p {
        Param::Jaxpr(_) => true,
        Param::Tuple(items) => items.iter().any(contains_jaxpr),
        _ => false,
    }
}

/// A param value as JAX shows it. `lists`: show int tuples nested in this
/// value as Python lists (JAX's rendering of `dimension_numbers`).
fn fmt_param(
    p: &Param, namer: &mut Namer, indent: usize, col: usize, lists: bool, nested: bool,
) -> String {
    match p {
        Param::None => "None".to_string(),
        Param::Bool(b) => py_bool(*b).to_string(),
        Param::Int(i) => i.to_string(),
        Param::Float(f) => py_float_repr(*f, DType::F64),
        // Python shows a str param bare and a str inside a tuple by its repr.
        Param::Str(s) if nested => format!("'{s}'"),
        Param::Str(s) => s.clone(),
        Param::DType(d) => d.name().to_string(),
        Param::Ints(v) => {
            let items: Vec<String> = v.iter().map(|i| i.to_string()).collect();
            if lists && nested {
                format!("[{}]", items.join(", "))
            } else {
                fmt_tuple(&items)
            }
        }
        // A tuple of jaxprs (`cond`'s branches): one per line, as JAX prints.
        Param::Tuple(items)
            if !items.is_empty() && items.iter().all(|x| matches!(x, Param::Jaxpr(_))) =>
        {
            let inner = indent.saturating_add(2);
            let mut out = String::from("(");
            for x in items {
                if let Param::Jaxpr(j) = x {
                    out.push('\n');
                    out.push_str(&" ".repeat(inner));
                    out.push_str(&fmt_jaxpr(&j.jaxpr, namer, inner, inner));
                }
            }
            out.push('\n');
            out.push_str(&" ".repeat(indent));
            out.push(')');
            out
        }
        Param::Tuple(items) => {
            let items: Vec<String> = items
                .iter()
                .map(|x| fmt_param(x, namer, indent, col, lists, true))
                .collect();
            fmt_tuple(&items)
        }
        Param::Jaxpr(j) => fmt_jaxpr(&j.jaxpr, namer, indent, col),
        Param::Callback(c) => format!("<function {}>", c.0.name()),
        Param::Opaque(o) => o.0.describe(),
    }
}

fn py_bool(b: bool) -> &'static str {
    if b {
        "True"
    } else {
        "False"
    }
}

/// `3.0:f32[]`, `1:i32[]`, `True:bool[]`.
pub fn fmt_literal(l: &Literal) -> String {
    format!("{}:{}", fmt_scalar(l.val, l.aval.dtype), l.aval.short())
}

/// A scalar as Python prints the NumPy scalar of `dtype`.
pub fn fmt_scalar(v: Scalar, dtype: DType) -> String {
    match v {
        Scalar::Bool(b) => py_bool(b).to_string(),
        Scalar::Int(i) => i.to_string(),
        Scalar::UInt(u) => u.to_string(),
        Scalar::Float(f) => py_float_repr(f, dtype),
        Scalar::Complex(re, im) => py_complex_repr(re, im, dtype.real_dtype()),
    }
}

/// Python's `repr` of a complex number with parts rounded to the float
/// type `part` (`(1+2j)`, `3j`, `(-0-1.5j)`): each part as a float repr
/// without a trailing `.0`; a bare imaginary part when the real part is +0.
fn py_complex_repr(re: f64, im: f64, part: DType) -> String {
    let fmt = |v: f64| {
        let s = py_float_repr(v, part);
        match s.strip_suffix(".0") {
            Some(t) => t.to_string(),
            None => s,
        }
    };
    if re == 0.0 && re.is_sign_positive() {
        return format!("{}j", fmt(im));
    }
    let im_s = fmt(im);
    let sign = if im_s.starts_with('-') { "" } else { "+" };
    format!("({}{sign}{im_s}j)", fmt(re))
}

/// Python's `repr` of `v` rounded to the float type `dtype` (any non-float
/// dtype means float64): the shortest decimal that reads back to the same
/// value of that width, positional for exponents in `[-4, 16)` and
/// scientific (`1e-05`, `1.5e+16`) otherwise; `nan`, `inf`, `-inf`, `-0.0`.
pub fn py_float_repr(v: f64, dtype: DType) -> String {
    let w = match dtype {
        DType::F32 => f64::from(v as f32),
        DType::F16 => f16::from_f64(v).to_f64(),
        DType::BF16 => bf16::from_f64(v).to_f64(),
        _ => v,
    };
    if w.is_nan() {
        return "nan".to_string();
    }
    if w.is_infinite() {
        return if w > 0.0 { "inf" } else { "-inf" }.to_string();
    }
    if w == 0.0 {
        return if w.is_sign_negative() { "-0.0" } else { "0.0" }.to_string();
    }
    let sci = match dtype {
        DType::F32 => format!("{:e}", w as f32),
        DType::F16 => {
            let h = f16::from_f64(w);
            shortest_sci(w, |b| f16::from_f64(b).to_bits() == h.to_bits())
        }
        DType::BF16 => {
            let h = bf16::from_f64(w);
            shortest_sci(w, |b| bf16::from_f64(b).to_bits() == h.to_bits())
        }
        _ => format!("{w:e}"),
    };
    sci_to_python(&sci)
}

/// Shortest `{:.p$e}` rendering of `v` that `same` accepts on read-back.
fn shortest_sci(v: f64, same: impl Fn(f64) -> bool) -> String {
    for p in 0..17usize {
        let s = format!("{v:.p$e}");
        if s.parse::<f64>().is_ok_and(&same) {
            return s;
        }
    }
    format!("{v:e}")
}

/// Rust's `1.5e-7` → Python's `1.5e-07`; `1e2` → `100.0`.
fn sci_to_python(s: &str) -> String {
    let (neg, body) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    let Some((mant, exp)) = body.split_once('e') else {
        return s.to_string();
    };
    let Ok(exp) = exp.parse::<i32>() else {
        return s.to_string();
    };
    let digits: String = mant.chars().filter(|c| *c != '.').collect();
    let trimmed = digits.trim_end_matches('0');
    let digits = if trimmed.is_empty() { "0" } else { trimmed };
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    if (-4..16).contains(&exp) {
        if let Ok(e) = usize::try_from(exp) {
            let int_len = e.saturating_add(1);
            match digits.split_at_checked(int_len) {
                Some((int_part, frac)) if !frac.is_empty() => {
                    out.push_str(int_part);
                    out.push('.');
                    out.push_str(frac);
                }
                _ => {
                    out.push_str(digits);
                    out.push_str(&"0".repeat(int_len.saturating_sub(digits.len())));
                    out.push_str(".0");
                }
            }
        } else {
            let zeros = usize::try_from(exp.unsigned_abs())
                .unwrap_or(1)
                .saturating_sub(1);
            out.push_str("0.");
            out.push_str(&"0".repeat(zeros));
            out.push_str(digits);
        }
    } else {
        let mut chars = digits.chars();
        if let Some(first) = chars.next() {
            out.push(first);
        }
        let rest: String = chars.collect();
        if !rest.is_empty() {
            out.push('.');
            out.push_str(&rest);
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        out.push_str(&format!("{:02}", exp.unsigned_abs()));
    }
    out
}
