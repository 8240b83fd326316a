//! Structural hashing for the compile cache.
//!
//! [`structural_key`] hashes a program with every *liftable* literal (a
//! scalar literal of a float dtype used as an equation operand or an output
//! of the top-level jaxpr) replaced by a placeholder that keeps only its
//! aval, and returns the lifted values in program order (equations in order,
//! operands left to right, then outputs). Two programs that differ only in
//! those literal values share a key; [`lift_literals`] turns the literals
//! into leading invars so one compiled program serves both, fed the values
//! as its first arguments. Integer and bool literals stay in the hash (they
//! often act as indices or shapes, which compiled code may specialize on),
//! as do literals inside sub-jaxprs.
//!
//! Equal literals (same bits, same aval) share one lifted input: the values
//! are returned once each, in order of first use, and the hash records which
//! distinct value every placeholder takes, so a program reading one constant
//! in 10^5 places takes one extra input, not 10^5. Two programs share a key
//! only when their literals repeat in the same pattern.
//!
//! The hash is FNV-1a over an explicit little-endian encoding, so it is
//! stable across Rust releases and platforms (std's `DefaultHasher` is not
//! guaranteed to be). A hit must still be confirmed with `==` on the lifted
//! programs. Const *values* are not hashed (their avals are).

use super::{Atom, Aval, ClosedJaxpr, Effect, Jaxpr, Literal, Scalar, Var};
use crate::prims::Param;
use std::collections::HashMap;
use std::sync::Arc;

/// The distinct liftable literals of a program in order of first use, and
/// the slot (index) of each.
#[derive(Debug, Default)]
struct Lifter {
    lits: Vec<Literal>,
    slots: HashMap<Literal, usize>,
}

impl Lifter {
    /// The slot of `l`, a new one for a value not seen before.
    fn slot(&mut self, l: &Literal) -> usize {
        if let Some(&k) = self.slots.get(l) {
            return k;
        }
        let k = self.lits.len();
        self.lits.push(l.clone());
        self.slots.insert(l.clone(), k);
        k
    }
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// 64-bit FNV-1a. Implements [`std::hash::Hasher`] so it can also drive
/// `Hash` impls, but the structural hash feeds it explicit bytes only.
#[derive(Debug, Clone, Copy)]
pub struct Fnv64(u64);

impl Default for Fnv64 {
    fn default() -> Fnv64 {
        Fnv64(FNV_OFFSET)
    }
}

impl std::hash::Hasher for Fnv64 {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(FNV_PRIME);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

impl Fnv64 {
    pub fn new() -> Fnv64 {
        Fnv64::default()
    }

    fn bytes(&mut self, b: &[u8]) {
        std::hash::Hasher::write(self, b);
    }

    fn u8(&mut self, x: u8) {
        self.bytes(&[x]);
    }

    /// A variant's tag byte, then its payload bytes.
    fn tagged(&mut self, tag: u8, payload: &[u8]) {
        self.u8(tag);
        self.bytes(payload);
    }

    fn u64(&mut self, x: u64) {
        self.bytes(&x.to_le_bytes());
    }

    fn usize(&mut self, x: usize) {
        self.u64(u64::try_from(x).unwrap_or(u64::MAX));
    }

    fn str(&mut self, s: &str) {
        self.usize(s.len());
        self.bytes(s.as_bytes());
    }
}

/// Whether a literal is lifted into the runtime table.
pub fn is_liftable(l: &Literal) -> bool {
    l.aval.shape.is_empty() && l.aval.dtype.is_float()
}

/// The structural hash of the program with nothing lifted (literal values
/// included).
pub fn structural_hash(j: &ClosedJaxpr) -> u64 {
    let mut h = Fnv64::new();
    hash_closed(&mut h, j, None);
    std::hash::Hasher::finish(&h)
}

/// Hash of the program with liftable literals' values excluded, and those
/// values in order.
pub fn structural_key(j: &ClosedJaxpr) -> (u64, Vec<Literal>) {
    let mut h = Fnv64::new();
    let mut lifter = Lifter::default();
    hash_closed(&mut h, j, Some(&mut lifter));
    (std::hash::Hasher::finish(&h), lifter.lits)
}

/// The program with each distinct liftable literal replaced by a new leading
/// invar (in the order [`structural_key`] returns them), and the literals. The new
/// vars take fresh indices after the existing ones; existing vars keep
/// theirs. Two programs with equal keys and equal lifted forms run the same
/// compiled code, fed `literals` (as rank-0 arrays) before their arguments.
pub fn lift_literals(j: &ClosedJaxpr) -> (ClosedJaxpr, Vec<Literal>) {
    let src = &j.jaxpr;
    let mut avals = src.avals.clone();
    let mut lifter = Lifter::default();
    let mut new_invars: Vec<Var> = Vec::new();
    let mut lift = |a: &Atom| -> Atom {
        match a {
            Atom::Lit(l) if is_liftable(l) => {
                let k = lifter.slot(l);
                if let Some(v) = new_invars.get(k) {
                    return Atom::Var(*v);
                }
                let v = Var(u32::try_from(avals.len()).unwrap_or(u32::MAX));
                avals.push(l.aval.clone());
                new_invars.push(v);
                Atom::Var(v)
            }
            other => other.clone(),
        }
    };
    let eqns = src
        .eqns
        .iter()
        .map(|e| {
            let mut e = e.clone();
            e.inputs = e.inputs.iter().map(&mut lift).collect();
            e
        })
        .collect();
    let outvars = src.outvars.iter().map(&mut lift).collect();
    new_invars.extend(src.invars.iter().copied());
    let jaxpr = Jaxpr {
        avals,
        constvars: src.constvars.clone(),
        invars: new_invars,
        eqns,
        outvars,
    };
    (
        ClosedJaxpr {
            jaxpr: Arc::new(jaxpr),
            consts: j.consts.clone(),
        },
        lifter.lits,
    )
}

fn hash_closed(h: &mut Fnv64, j: &ClosedJaxpr, lift: Option<&mut Lifter>) {
    h.u8(b'C');
    hash_jaxpr(h, &j.jaxpr, lift);
    h.usize(j.consts.len());
    for c in &j.consts {
        hash_shape(h, c.shape());
        h.str(c.dtype().name());
    }
}

fn hash_shape(h: &mut Fnv64, shape: &[usize]) {
    h.usize(shape.len());
    for &d in shape {
        h.usize(d);
    }
}

fn hash_aval(h: &mut Fnv64, a: &Aval) {
    hash_shape(h, &a.shape);
    h.str(a.dtype.name());
    h.u8(u8::from(a.weak_type));
}

fn hash_vars(h: &mut Fnv64, vs: &[Var]) {
    h.usize(vs.len());
    for v in vs {
        h.u64(u64::from(v.0));
    }
}

fn hash_scalar(h: &mut Fnv64, s: Scalar) {
    match s {
        Scalar::Bool(b) => h.tagged(0, &[u8::from(b)]),
        Scalar::Int(i) => h.tagged(1, &i.to_le_bytes()),
        Scalar::UInt(u) => h.tagged(2, &u.to_le_bytes()),
        Scalar::Float(f) => h.tagged(3, &f.to_bits().to_le_bytes()),
        Scalar::Complex(re, im) => {
            h.u8(4);
            h.u64(re.to_bits());
            h.u64(im.to_bits());
        }
    }
}

fn hash_atom(h: &mut Fnv64, a: &Atom, lift: &mut Option<&mut Lifter>) {
    match a {
        Atom::Var(v) => {
            h.u8(b'v');
            h.u64(u64::from(v.0));
        }
        Atom::Lit(l) => match lift {
            Some(lifter) if is_liftable(l) => {
                h.u8(b'p');
                hash_aval(h, &l.aval);
                h.usize(lifter.slot(l));
            }
            _ => {
                h.u8(b'l');
                hash_aval(h, &l.aval);
                hash_scalar(h, l.val);
            }
        },
    }
}

fn hash_jaxpr(h: &mut Fnv64, j: &Jaxpr, mut lift: Option<&mut Lifter>) {
    h.u8(b'J');
    h.usize(j.avals.len());
    for a in &j.avals {
        hash_aval(h, a);
    }
    hash_vars(h, &j.constvars);
    hash_vars(h, &j.invars);
    h.usize(j.eqns.len());
    for e in &j.eqns {
        h.str(e.prim.name());
        let params = e.prim.params();
        h.usize(params.len());
        for (k, p) in &params {
            h.str(k);
            hash_param(h, p);
        }
        h.usize(e.inputs.len());
        for a in &e.inputs {
            hash_atom(h, a, &mut lift);
        }
        hash_vars(h, &e.outputs);
        h.u8(match e.effect {
            Effect::None => 0,
            Effect::OrderedIo => 1,
        });
    }
    h.usize(j.outvars.len());
    for a in &j.outvars {
        hash_atom(h, a, &mut lift);
    }
}

fn hash_param(h: &mut Fnv64, p: &Param) {
    match p {
        Param::None => h.u8(0),
        Param::Bool(b) => h.tagged(1, &[u8::from(*b)]),
        Param::Int(i) => h.tagged(2, &i.to_le_bytes()),
        Param::Float(f) => h.tagged(3, &f.to_bits().to_le_bytes()),
        Param::Str(s) => {
            h.u8(4);
            h.str(s);
        }
        Param::DType(d) => {
            h.u8(5);
            h.str(d.name());
        }
        Param::Ints(v) => {
            h.u8(6);
            h.usize(v.len());
            for i in v {
                h.bytes(&i.to_le_bytes());
            }
        }
        Param::Tuple(items) => {
            h.u8(7);
            h.usize(items.len());
            for x in items {
                hash_param(h, x);
            }
        }
        Param::Jaxpr(cj) => {
            h.u8(8);
            hash_closed(h, cj, None);
        }
        // Host functions are equal by identity: hash their address.
        Param::Callback(c) => {
            h.u8(9);
            h.u64(std::sync::Arc::as_ptr(&c.0).cast::<u8>() as usize as u64);
        }
        // Host values are equal by identity: hash it.
        Param::Opaque(o) => {
            h.u8(10);
            h.u64(o.0.identity() as u64);
        }
    }
}

/// Multiply-rotate hasher for in-memory cache keys: a word at a time, so
/// much faster than FNV's byte loop, but not stable across builds (never
/// persist its values).
#[derive(Debug, Clone, Copy, Default)]
pub struct FastHasher(u64);

impl FastHasher {
    const K: u64 = 0x517c_c1b7_2722_0a95;

    fn add(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(Self::K);
    }
}

impl std::hash::Hasher for FastHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            for (d, s) in word.iter_mut().zip(chunk) {
                *d = *s;
            }
            self.add(u64::from_le_bytes(word));
        }
    }

    fn write_u8(&mut self, x: u8) {
        self.add(u64::from(x));
    }

    fn write_u32(&mut self, x: u32) {
        self.add(u64::from(x));
    }

    fn write_u64(&mut self, x: u64) {
        self.add(x);
    }

    fn write_usize(&mut self, x: usize) {
        self.add(x as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// In-process key of `j` with its liftable literals' values left out, and
/// those literals in [`lift_literals`]' order: programs with equal keys
/// that are [`same_lifted`] have equal lifted forms. One pass and no copy
/// of the program, for caches probed on every call (un-jitted `grad`).
pub fn lifted_key(j: &ClosedJaxpr) -> (u64, Vec<Literal>) {
    use std::hash::{Hash, Hasher};
    let mut h = FastHasher::default();
    let mut lifter = Lifter::default();
    let src = &j.jaxpr;
    src.avals.hash(&mut h);
    src.constvars.hash(&mut h);
    src.invars.hash(&mut h);
    let mut atom = |h: &mut FastHasher, a: &Atom| match a {
        Atom::Lit(l) if is_liftable(l) => {
            h.write_u8(b'p');
            l.aval.hash(h);
            h.write_usize(lifter.slot(l));
        }
        other => other.hash(h),
    };
    h.write_usize(src.eqns.len());
    for e in &src.eqns {
        e.prim.hash(&mut h);
        h.write_usize(e.inputs.len());
        for a in &e.inputs {
            atom(&mut h, a);
        }
        e.outputs.hash(&mut h);
        e.effect.hash(&mut h);
    }
    h.write_usize(src.outvars.len());
    for a in &src.outvars {
        atom(&mut h, a);
    }
    for c in &j.consts {
        c.shape().hash(&mut h);
        c.dtype().hash(&mut h);
    }
    (h.finish(), lifter.lits)
}

/// Whether `a` and `b` have equal [`lift_literals`] forms: equal programs
/// except for the values of liftable literals (repeating in the same
/// pattern) and source lines.
pub fn same_lifted(a: &ClosedJaxpr, b: &ClosedJaxpr) -> bool {
    let (mut la, mut lb) = (Lifter::default(), Lifter::default());
    let mut atom_eq = |x: &Atom, y: &Atom| match (x, y) {
        (Atom::Lit(l), Atom::Lit(m)) if is_liftable(l) => {
            is_liftable(m) && l.aval == m.aval && la.slot(l) == lb.slot(m)
        }
        _ => x == y,
    };
    let mut atoms_eq = |xs: &[Atom], ys: &[Atom]| {
        xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| atom_eq(x, y))
    };
    let (x, y) = (&*a.jaxpr, &*b.jaxpr);
    let jaxpr_eq = Arc::ptr_eq(&a.jaxpr, &b.jaxpr)
        || (x.avals == y.avals
            && x.constvars == y.constvars
            && x.invars == y.invars
            && x.eqns.len() == y.eqns.len()
            && x.eqns.iter().zip(&y.eqns).all(|(e, f)| {
                e.prim == f.prim
                    && e.outputs == f.outputs
                    && e.effect == f.effect
                    && atoms_eq(&e.inputs, &f.inputs)
            })
            && atoms_eq(&x.outvars, &y.outvars));
    jaxpr_eq && a.consts == b.consts
}
