//! The parser of the canonical text form: a tokenizer and a recursive-descent
//! `Parser` with explicit limits, plus the printer/parser round-trip tests.

use super::{buffer_from_le, int_fits, ParseLimits, HARD_MAX_DEPTH, HEADER, VERSION};
use crate::array::{checked_size, HostArray};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ir::typecheck::typecheck;
use crate::ir::{
    Atom, Aval, ClosedJaxpr, Effect, Eqn, Jaxpr, Literal, Scalar, SourceInfoField, Var,
};
use crate::prims::{Param, Primitive};
use half::{bf16, f16};
use std::collections::BTreeMap;
use std::sync::Arc;

// ---------------------------------------------------------------- parser

/// Parses canonical text of a program without constvars (typechecked).
pub fn parse(text: &str, limits: &ParseLimits) -> Result<ClosedJaxpr> {
    parse_with_consts(text, Vec::new(), limits)
}

/// Parses canonical text whose top-level constvars take `consts` (count and
/// avals checked), then typechecks the program.
pub fn parse_with_consts(
    text: &str, consts: Vec<Arc<HostArray>>, limits: &ParseLimits,
) -> Result<ClosedJaxpr> {
    let jaxpr = parse_structure(text, limits)?;
    if consts.len() != jaxpr.constvars.len() {
        return Err(Error::InvalidArgument(format!(
            "the program declares {} constants but {} were given",
            jaxpr.constvars.len(),
            consts.len()
        )));
    }
    let cj = ClosedJaxpr::new(jaxpr, consts);
    typecheck(&cj)?;
    Ok(cj)
}

/// Parses the structure only (no typecheck, no const values).
fn parse_structure(text: &str, limits: &ParseLimits) -> Result<Jaxpr> {
    if text.len() > limits.max_text_len {
        return Err(Error::Limit(format!(
            "program text of {} bytes exceeds the limit of {}",
            text.len(),
            limits.max_text_len
        )));
    }
    let toks = lex(text)?;
    let mut p = Parser {
        text,
        toks,
        pos: 0,
        max_depth: limits.max_depth.min(HARD_MAX_DEPTH),
        limits: limits.clone(),
        n_eqns: 0,
        n_vars: 0,
        end: end_position(text),
    };
    p.expect_word(HEADER)?;
    let (ver, pos) = p.word()?;
    if ver.parse::<u32>().ok() != Some(VERSION) {
        return Err(perr(
            pos,
            format!("unsupported version {ver:?} (this reader reads {VERSION})"),
        ));
    }
    let jaxpr = p.block(0)?;
    if let Some(t) = p.peek() {
        return Err(perr(t.pos, "unexpected text after the program".into()));
    }
    Ok(jaxpr)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pos {
    line: usize,
    col: usize,
}

pub fn perr(pos: Pos, msg: String) -> Error {
    Error::Parse {
        line: pos.line,
        col: pos.col,
        msg,
    }
}

pub fn end_position(text: &str) -> Pos {
    let mut pos = Pos { line: 1, col: 1 };
    for b in text.bytes() {
        advance(&mut pos, b);
    }
    pos
}

fn advance(pos: &mut Pos, b: u8) {
    if b == b'\n' {
        pos.line = pos.line.saturating_add(1);
        pos.col = 1;
    } else {
        pos.col = pos.col.saturating_add(1);
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    /// A run of word bytes: `text[start..end]`.
    Word(usize, usize),
    Str(String),
    Punct(u8),
}

#[derive(Debug, Clone)]
pub struct Token {
    pub tok: Tok,
    pub pos: Pos,
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'<' | b'>' | b'+' | b'-')
}

pub fn lex(text: &str) -> Result<Vec<Token>> {
    let bytes = text.as_bytes();
    let mut toks = Vec::new();
    let mut i = 0usize;
    let mut pos = Pos { line: 1, col: 1 };
    while let Some(&b) = bytes.get(i) {
        let start = pos;
        match b {
            b' ' | b'\t' | b'\n' | b'\r' => {
                advance(&mut pos, b);
                i = i.saturating_add(1);
            }
            b'{' | b'}' | b'[' | b']' | b'(' | b')' | b',' | b':' | b';' | b'=' | b'.' => {
                toks.push(Token {
                    tok: Tok::Punct(b),
                    pos: start,
                });
                advance(&mut pos, b);
                i = i.saturating_add(1);
            }
            b'"' => {
                advance(&mut pos, b);
                i = i.saturating_add(1);
                let (s, next) = lex_string(bytes, i, &mut pos, start)?;
                i = next;
                toks.push(Token {
                    tok: Tok::Str(s),
                    pos: start,
                });
            }
            b if is_word_byte(b) => {
                let begin = i;
                while let Some(&c) = bytes.get(i) {
                    if !is_word_byte(c) {
                        break;
                    }
                    advance(&mut pos, c);
                    i = i.saturating_add(1);
                }
                toks.push(Token {
                    tok: Tok::Word(begin, i),
                    pos: start,
                });
            }
            _ => {
                let c = text.get(i..).and_then(|s| s.chars().next()).unwrap_or('?');
                return Err(perr(start, format!("unexpected character {c:?}")));
            }
        }
    }
    Ok(toks)
}

/// A string body from `i` (after the opening quote); returns the string and
/// the index after the closing quote.
fn lex_string(bytes: &[u8], mut i: usize, pos: &mut Pos, start: Pos) -> Result<(String, usize)> {
    let mut out: Vec<u8> = Vec::new();
    loop {
        let Some(&b) = bytes.get(i) else {
            return Err(perr(start, "unterminated string".into()));
        };
        advance(pos, b);
        i = i.saturating_add(1);
        match b {
            b'"' => break,
            b'\\' => {
                let Some(&e) = bytes.get(i) else {
                    return Err(perr(start, "unterminated string".into()));
                };
                advance(pos, e);
                i = i.saturating_add(1);
                match e {
                    b'"' => out.push(b'"'),
                    b'\\' => out.push(b'\\'),
                    b'n' => out.push(b'\n'),
                    b't' => out.push(b'\t'),
                    b'r' => out.push(b'\r'),
                    b'u' => {
                        if bytes.get(i) != Some(&b'{') {
                            return Err(perr(*pos, "expected '{' after \\u".into()));
                        }
                        advance(pos, b'{');
                        i = i.saturating_add(1);
                        let mut code: u32 = 0;
                        let mut digits = 0usize;
                        loop {
                            let Some(&h) = bytes.get(i) else {
                                return Err(perr(start, "unterminated string".into()));
                            };
                            advance(pos, h);
                            i = i.saturating_add(1);
                            if h == b'}' {
                                break;
                            }
                            let d = (h as char)
                                .to_digit(16)
                                .ok_or_else(|| perr(*pos, "bad hex digit in \\u{...}".into()))?;
                            digits = digits.saturating_add(1);
                            if digits > 6 {
                                return Err(perr(*pos, "too many digits in \\u{...}".into()));
                            }
                            code = code.wrapping_shl(4) | d;
                        }
                        let c = char::from_u32(code)
                            .ok_or_else(|| perr(*pos, format!("invalid code point {code:#x}")))?;
                        let mut buf = [0u8; 4];
                        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                    }
                    _ => return Err(perr(*pos, format!("unknown escape \\{}", e as char))),
                }
            }
            _ => out.push(b),
        }
    }
    let s = String::from_utf8(out).map_err(|_| perr(start, "string is not UTF-8".into()))?;
    Ok((s, i))
}

pub struct Parser<'a> {
    pub text: &'a str,
    pub toks: Vec<Token>,
    pub pos: usize,
    pub max_depth: usize,
    pub limits: ParseLimits,
    pub n_eqns: usize,
    pub n_vars: usize,
    pub end: Pos,
}

/// Variables of one block: index → aval, in index order.
#[derive(Default)]
struct Scope {
    vars: BTreeMap<u32, Aval>,
}

impl<'a> Parser<'a> {
    pub fn peek(&self) -> Option<&Token> {
        self.toks.get(self.pos)
    }

    fn peek_at(&self, k: usize) -> Option<&Token> {
        self.toks.get(self.pos.saturating_add(k))
    }

    fn here(&self) -> Pos {
        self.peek().map_or(self.end, |t| t.pos)
    }

    fn bump(&mut self) {
        self.pos = self.pos.saturating_add(1);
    }

    fn word_text(&self, t: &Token) -> Option<&'a str> {
        match t.tok {
            Tok::Word(s, e) => self.text.get(s..e),
            _ => None,
        }
    }

    fn peek_word(&self) -> Option<&'a str> {
        self.peek().and_then(|t| self.word_text(t))
    }

    fn peek_word_at(&self, k: usize) -> Option<&'a str> {
        self.peek_at(k).and_then(|t| self.word_text(t))
    }

    fn is_punct(&self, c: u8) -> bool {
        self.is_punct_at(0, c)
    }

    fn is_punct_at(&self, k: usize, c: u8) -> bool {
        matches!(self.peek_at(k), Some(Token { tok: Tok::Punct(p), .. }) if *p == c)
    }

    fn describe_next(&self) -> String {
        match self.peek() {
            None => "end of text".into(),
            Some(t) => match &t.tok {
                Tok::Punct(p) => format!("{:?}", *p as char),
                Tok::Str(_) => "a string".into(),
                Tok::Word(..) => format!("{:?}", self.word_text(t).unwrap_or("")),
            },
        }
    }

    fn unexpected(&self, want: &str) -> Error {
        perr(
            self.here(),
            format!("expected {want}, found {}", self.describe_next()),
        )
    }

    /// Comma-separated items up to the punct `close`, which it consumes;
    /// `item` reads one, given how many came before it.
    fn comma_list<T>(
        &mut self, close: u8, mut item: impl FnMut(&mut Self, usize) -> Result<T>,
    ) -> Result<Vec<T>> {
        let mut v = Vec::new();
        if !self.is_punct(close) {
            loop {
                v.push(item(self, v.len())?);
                if !self.is_punct(b',') {
                    break;
                }
                self.bump();
            }
        }
        self.expect_punct(close)?;
        Ok(v)
    }

    fn expect_punct(&mut self, c: u8) -> Result<()> {
        if self.is_punct(c) {
            self.bump();
            Ok(())
        } else {
            Err(self.unexpected(&format!("{:?}", c as char)))
        }
    }

    fn expect_word(&mut self, w: &str) -> Result<()> {
        if self.peek_word() == Some(w) {
            self.bump();
            Ok(())
        } else {
            Err(self.unexpected(&format!("{w:?}")))
        }
    }

    /// Any word, with its position.
    fn word(&mut self) -> Result<(&'a str, Pos)> {
        let pos = self.here();
        match self.peek_word() {
            Some(w) => {
                self.bump();
                Ok((w, pos))
            }
            None => Err(self.unexpected("a word")),
        }
    }

    fn check_depth(&self, depth: usize) -> Result<()> {
        if depth > self.max_depth {
            let p = self.here();
            return Err(Error::Limit(format!(
                "nesting deeper than {} at line {}, column {}",
                self.max_depth, p.line, p.col
            )));
        }
        Ok(())
    }

    // ---- blocks

    fn block(&mut self, depth: usize) -> Result<Jaxpr> {
        self.check_depth(depth)?;
        self.expect_punct(b'{')?;
        self.expect_word("lambda")?;
        let mut scope = Scope::default();
        let mut constvars = Vec::new();
        while !self.is_punct(b';') {
            constvars.push(self.binder(&mut scope)?);
        }
        self.bump();
        let mut invars = Vec::new();
        while !self.is_punct(b'.') {
            invars.push(self.binder(&mut scope)?);
        }
        self.bump();
        self.expect_word("let")?;
        let mut eqns = Vec::new();
        while self.peek_word() != Some("in") {
            eqns.push(self.eqn(&mut scope, depth)?);
        }
        self.bump();
        self.expect_punct(b'(')?;
        let mut outvars = Vec::new();
        if !self.is_punct(b')') {
            outvars.push(self.atom(&scope)?);
            while self.is_punct(b',') {
                self.bump();
                outvars.push(self.atom(&scope)?);
            }
        }
        self.expect_punct(b')')?;
        if self.peek_word() == Some("unbound") {
            self.bump();
            while !self.is_punct(b'}') {
                self.binder(&mut scope)?;
            }
        }
        let close = self.here();
        self.expect_punct(b'}')?;
        let mut avals = Vec::with_capacity(scope.vars.len());
        for (i, (k, a)) in scope.vars.into_iter().enumerate() {
            if usize::try_from(k).ok() != Some(i) {
                return Err(perr(
                    close,
                    format!("variable numbering has a gap: v{i} is never declared"),
                ));
            }
            avals.push(a);
        }
        Ok(Jaxpr {
            avals,
            constvars,
            invars,
            eqns,
            outvars,
        })
    }

    /// The index of a `v<digits>` word, if it is one.
    fn var_index(w: &str) -> Option<&str> {
        let digits = w.strip_prefix('v')?;
        (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())).then_some(digits)
    }

    fn var_ref(&mut self) -> Result<(Var, Pos)> {
        let (w, pos) = self.word()?;
        let digits = Self::var_index(w)
            .ok_or_else(|| perr(pos, format!("expected a variable (v<index>), found {w:?}")))?;
        let idx = digits
            .parse::<u32>()
            .ok()
            .filter(|&i| usize::try_from(i).is_ok_and(|i| i < self.limits.max_vars));
        match idx {
            Some(i) => Ok((Var(i), pos)),
            None => Err(Error::Limit(format!(
                "variable {w} at line {}, column {} exceeds the limit of {} variables",
                pos.line, pos.col, self.limits.max_vars
            ))),
        }
    }

    fn binder(&mut self, scope: &mut Scope) -> Result<Var> {
        let (v, pos) = self.var_ref()?;
        self.expect_punct(b':')?;
        let aval = self.ty()?;
        if scope.vars.contains_key(&v.0) {
            return Err(perr(pos, format!("variable v{} declared twice", v.0)));
        }
        self.n_vars = self.n_vars.saturating_add(1);
        if self.n_vars > self.limits.max_vars {
            return Err(Error::Limit(format!(
                "more than {} variables (line {}, column {})",
                self.limits.max_vars, pos.line, pos.col
            )));
        }
        scope.vars.insert(v.0, aval);
        Ok(v)
    }

    fn ty(&mut self) -> Result<Aval> {
        let (name, pos) = self.word()?;
        let dtype = DType::from_name(name).map_err(|e| perr(pos, e.to_string()))?;
        self.expect_punct(b'[')?;
        let shape = self.comma_list(b']', |p, k| {
            let (w, dpos) = p.word()?;
            let d = w
                .parse::<usize>()
                .map_err(|_| perr(dpos, format!("bad dimension {w:?}")))?;
            if k >= p.limits.max_rank {
                return Err(Error::Limit(format!(
                    "rank above {} at line {}, column {}",
                    p.limits.max_rank, dpos.line, dpos.col
                )));
            }
            Ok(d)
        })?;
        let within = checked_size(&shape)
            .ok()
            .is_some_and(|n| n <= self.limits.max_elements);
        if !within {
            return Err(Error::Limit(format!(
                "type at line {}, column {} has more than {} elements",
                pos.line, pos.col, self.limits.max_elements
            )));
        }
        let mut weak = false;
        if self.is_punct(b'{') && self.peek_word_at(1) == Some("weak") && self.is_punct_at(2, b'}')
        {
            self.pos = self.pos.saturating_add(3);
            weak = true;
        }
        Ok(Aval::weak(shape, dtype, weak))
    }

    // ---- equations

    fn eqn(&mut self, scope: &mut Scope, depth: usize) -> Result<Eqn> {
        let start = self.here();
        self.n_eqns = self.n_eqns.saturating_add(1);
        if self.n_eqns > self.limits.max_eqns {
            return Err(Error::Limit(format!(
                "more than {} equations (line {}, column {})",
                self.limits.max_eqns, start.line, start.col
            )));
        }
        let mut outputs = Vec::new();
        while !self.is_punct(b'=') {
            outputs.push(self.binder(scope)?);
        }
        self.bump();
        let (name, name_pos) = self.word()?;
        let params = if self.is_punct(b'[') {
            self.params(depth)?
        } else {
            Vec::new()
        };
        let mut inputs = Vec::new();
        loop {
            match self.peek() {
                None => break,
                Some(Token {
                    tok: Tok::Punct(_), ..
                }) => break,
                Some(_) => {}
            }
            match self.peek_word() {
                Some("in") => break,
                Some(w) if Self::var_index(w).is_some() && self.is_punct_at(1, b':') => break,
                _ => inputs.push(self.atom(scope)?),
            }
        }
        let mut effect = Effect::None;
        if self.is_punct(b'{') && self.peek_word_at(1) == Some("io") && self.is_punct_at(2, b'}') {
            self.pos = self.pos.saturating_add(3);
            effect = Effect::OrderedIo;
        }
        let prim =
            Primitive::from_params(name, &params).map_err(|e| perr(name_pos, e.to_string()))?;
        Ok(Eqn {
            prim,
            inputs,
            outputs,
            effect,
            source: SourceInfoField(None),
        })
    }

    fn atom(&mut self, scope: &Scope) -> Result<Atom> {
        if let Some(w) = self.peek_word() {
            if Self::var_index(w).is_some() {
                let (v, pos) = self.var_ref()?;
                if !scope.vars.contains_key(&v.0) {
                    return Err(perr(pos, format!("unknown variable v{}", v.0)));
                }
                return Ok(Atom::Var(v));
            }
        }
        self.literal().map(Atom::Lit)
    }

    fn literal(&mut self) -> Result<Literal> {
        let (w, pos) = self.word()?;
        let tagged =
            matches!(w, "bool" | "int" | "uint" | "float" | "complex") && self.is_punct(b'(');
        let (raw, tag) = if tagged {
            self.bump();
            let (inner, _) = self.word()?;
            self.expect_punct(b')')?;
            (inner, Some(w))
        } else {
            (w, None)
        };
        self.expect_punct(b':')?;
        let aval = self.ty()?;
        let d = aval.dtype;
        let bad = |what: &str| {
            perr(
                pos,
                format!("bad {what} literal {raw:?} of type {}", aval.short()),
            )
        };
        let val = match tag {
            Some("bool") => Scalar::Bool(parse_bool(raw).ok_or_else(|| bad("bool"))?),
            Some("int") => Scalar::Int(raw.parse::<i64>().map_err(|_| bad("int"))?),
            Some("uint") => Scalar::UInt(raw.parse::<u64>().map_err(|_| bad("uint"))?),
            Some("complex") => {
                let (re, im) = parse_hex_pair(raw, 16).ok_or_else(|| bad("complex"))?;
                Scalar::Complex(f64::from_bits(re), f64::from_bits(im))
            }
            None if d.is_complex() => plain_complex(raw, d).ok_or_else(|| bad("complex"))?,
            Some(_) => Scalar::Float(f64::from_bits(
                parse_hex(raw, 16).ok_or_else(|| bad("float"))?,
            )),
            None if d == DType::Bool => Scalar::Bool(parse_bool(raw).ok_or_else(|| bad("bool"))?),
            None if d.is_signed_int() => {
                let i = raw.parse::<i64>().map_err(|_| bad("integer"))?;
                if !int_fits(i, d) {
                    return Err(bad("out-of-range"));
                }
                Scalar::Int(i)
            }
            None if d.is_unsigned_int() => {
                let u = raw.parse::<u64>().map_err(|_| bad("integer"))?;
                if !int_fits(u, d) {
                    return Err(bad("out-of-range"));
                }
                Scalar::UInt(u)
            }
            None => {
                let digits = d.itemsize().saturating_mul(2);
                let bits = parse_hex(raw, digits).ok_or_else(|| bad("float"))?;
                let v = match d {
                    DType::F16 => u16::try_from(bits).ok().map(|b| f16::from_bits(b).to_f64()),
                    DType::BF16 => u16::try_from(bits)
                        .ok()
                        .map(|b| bf16::from_bits(b).to_f64()),
                    DType::F32 => u32::try_from(bits)
                        .ok()
                        .map(|b| f64::from(f32::from_bits(b))),
                    DType::F64 => Some(f64::from_bits(bits)),
                    _ => None,
                };
                Scalar::Float(v.ok_or_else(|| bad("float"))?)
            }
        };
        Ok(Literal { val, aval })
    }

    // ---- params

    fn params(&mut self, depth: usize) -> Result<Vec<(String, Param)>> {
        self.expect_punct(b'[')?;
        let mut out = Vec::new();
        while !self.is_punct(b']') {
            let (k, _) = self.word()?;
            self.expect_punct(b'=')?;
            let v = self.param(depth)?;
            out.push((k.to_string(), v));
        }
        self.bump();
        Ok(out)
    }

    pub fn param(&mut self, depth: usize) -> Result<Param> {
        let pos = self.here();
        let Some(t) = self.peek() else {
            return Err(self.unexpected("a parameter value"));
        };
        match &t.tok {
            Tok::Str(s) => {
                let s = s.clone();
                self.bump();
                Ok(Param::Str(s))
            }
            Tok::Punct(b'(') => {
                self.bump();
                let v = self.comma_list(b')', |p, _| {
                    let (w, wpos) = p.word()?;
                    w.parse::<i64>()
                        .map_err(|_| perr(wpos, format!("bad integer {w:?}")))
                })?;
                Ok(Param::Ints(v))
            }
            Tok::Punct(b'[') => {
                let inner = depth.saturating_add(1);
                self.check_depth(inner)?;
                self.bump();
                let v = self.comma_list(b']', |p, _| p.param(inner))?;
                Ok(Param::Tuple(v))
            }
            Tok::Punct(b'{') => {
                let jaxpr = self.block(depth.saturating_add(1))?;
                let consts = self.const_data(&jaxpr, pos)?;
                Ok(Param::Jaxpr(Arc::new(ClosedJaxpr::new(jaxpr, consts))))
            }
            Tok::Punct(_) => Err(self.unexpected("a parameter value")),
            Tok::Word(..) => {
                let (w, wpos) = self.word()?;
                match w {
                    "None" => Ok(Param::None),
                    "true" => Ok(Param::Bool(true)),
                    "false" => Ok(Param::Bool(false)),
                    "float" if self.is_punct(b'(') => {
                        self.bump();
                        let (h, hpos) = self.word()?;
                        let bits = parse_hex(h, 16)
                            .ok_or_else(|| perr(hpos, format!("bad float bits {h:?}")))?;
                        self.expect_punct(b')')?;
                        Ok(Param::Float(f64::from_bits(bits)))
                    }
                    _ if w.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '+') => w
                        .parse::<i64>()
                        .map(Param::Int)
                        .map_err(|_| perr(wpos, format!("bad integer {w:?}"))),
                    _ => DType::from_name(w)
                        .map(Param::DType)
                        .map_err(|_| perr(wpos, format!("unknown parameter value {w:?}"))),
                }
            }
        }
    }

    /// `with [0x.., 0x..]` after a nested block: its const values.
    fn const_data(&mut self, j: &Jaxpr, pos: Pos) -> Result<Vec<Arc<HostArray>>> {
        if self.peek_word() != Some("with") {
            if j.constvars.is_empty() {
                return Ok(Vec::new());
            }
            return Err(perr(
                pos,
                format!(
                    "a nested jaxpr with {} constvars needs `with [...]` data",
                    j.constvars.len()
                ),
            ));
        }
        self.bump();
        self.expect_punct(b'[')?;
        let mut out = Vec::new();
        let mut vars = j.constvars.iter();
        while !self.is_punct(b']') {
            if !out.is_empty() {
                self.expect_punct(b',')?;
            }
            let (w, wpos) = self.word()?;
            let bytes = parse_hex_bytes(w)
                .ok_or_else(|| perr(wpos, "bad const data (want 0x<hex bytes>)".into()))?;
            let aval = vars
                .next()
                .and_then(|v| j.avals.get(v.index()))
                .ok_or_else(|| perr(wpos, "more const data than constvars".into()))?;
            let n = checked_size(&aval.shape).map_err(|e| perr(wpos, e.to_string()))?;
            let buf =
                buffer_from_le(aval.dtype, n, &bytes).map_err(|e| perr(wpos, e.to_string()))?;
            let arr =
                HostArray::new(aval.shape.clone(), buf).map_err(|e| perr(wpos, e.to_string()))?;
            out.push(Arc::new(arr));
        }
        self.bump();
        if out.len() != j.constvars.len() {
            return Err(perr(
                pos,
                format!(
                    "{} const values for {} constvars",
                    out.len(),
                    j.constvars.len()
                ),
            ));
        }
        Ok(out)
    }
}

fn parse_bool(w: &str) -> Option<bool> {
    match w {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

/// `0x` followed by 1..=`max_digits` hex digits.
pub fn parse_hex(w: &str, max_digits: usize) -> Option<u64> {
    let h = w.strip_prefix("0x")?;
    if h.is_empty() || h.len() > max_digits.min(16) {
        return None;
    }
    u64::from_str_radix(h, 16)
        .ok()
        .filter(|_| h.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// A plain complex literal of dtype `d`: the bits of its real then its
/// imaginary part, each in the width of the parts.
fn plain_complex(raw: &str, d: DType) -> Option<Scalar> {
    let (re, im) = parse_hex_pair(raw, d.itemsize())?;
    if d == DType::C64 {
        let part = |b: u64| u32::try_from(b).ok().map(|b| f64::from(f32::from_bits(b)));
        let (re, im) = part(re).zip(part(im))?;
        return Some(Scalar::Complex(re, im));
    }
    Some(Scalar::Complex(f64::from_bits(re), f64::from_bits(im)))
}

/// `0x` followed by exactly `2 * digits` hex digits, read as two numbers of
/// `digits` digits each (the parts of a complex literal).
fn parse_hex_pair(w: &str, digits: usize) -> Option<(u64, u64)> {
    let h = w.strip_prefix("0x")?;
    if digits == 0 || digits > 16 || h.len() != digits.checked_mul(2)? {
        return None;
    }
    if !h.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let (a, b) = h.split_at(digits);
    Some((
        u64::from_str_radix(a, 16).ok()?,
        u64::from_str_radix(b, 16).ok()?,
    ))
}

/// `0x` followed by an even number of hex digits.
pub fn parse_hex_bytes(w: &str) -> Option<Vec<u8>> {
    let h = w.strip_prefix("0x")?.as_bytes();
    if h.len() % 2 != 0 {
        return None;
    }
    h.chunks_exact(2)
        .map(|pair| {
            let hi = (char::from(*pair.first()?)).to_digit(16)?;
            let lo = (char::from(*pair.get(1)?)).to_digit(16)?;
            u8::try_from(hi.checked_mul(16)?.checked_add(lo)?).ok()
        })
        .collect()
}
