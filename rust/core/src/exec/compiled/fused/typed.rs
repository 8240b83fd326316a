//! The typed pass of a fusion group: when every member is an f32 (or every
//! member an f64) `vmath` unary op, add/sub/mul/div/max/min or
//! `integer_pow`, the group runs on per-thread scratch registers of one
//! chunk each, reused by liveness, writing straight into the output
//! buffers: no allocation or kernel dispatch per member and chunk.
//! A comparison of such values that only conversions back to the group's
//! type read (`convert(x == y, f32)`: the masks of `max`'s and `relu`'s
//! derivatives) is a member too: its register holds the converted 1 / 0.
//!
//! Each element is computed by the reference kernels' own per-element
//! functions ([`slices`]), so results are bit-identical to the generic pass
//! and to the interpreter, at any chunk size or thread count.

use super::{internal, Arg, Fused, Instr, CHUNK};

use crate::array::{Buffer, HostArray};
use crate::dtype::DType;
use crate::error::Result;
use crate::exec::ExecCtx;
use crate::prims::kernel::slices::{self, Lane, Operand};
use crate::prims::IntegerPow;
use crate::prims::{BinaryOp, CmpOp, Primitive, UnaryOp};
use std::cell::RefCell;
use std::sync::Arc;

/// What a typed member computes.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Unary(UnaryOp),
    Binary(BinaryOp),
    Ipow(i32),
    /// A comparison as 1 / 0 in the group's type (see [`mask_registers`]).
    Compare(CmpOp),
    /// The conversion of such a comparison to the group's type: a copy.
    Copy,
}

/// A typed member: `regs[dst] = kind(args)`, registers already mapped to
/// physical scratch slots; or, when `direct` names a group output, the
/// member writes that output's window itself (its value is the output and
/// no later member reads it), saving the chunk's copy.
#[derive(Debug, Clone)]
struct Op {
    kind: Kind,
    args: Vec<Src>,
    dst: usize,
    direct: Option<usize>,
}

/// Where a typed operand comes from.
#[derive(Debug, Clone, Copy)]
enum Src {
    /// A scratch slot.
    Slot(usize),
    /// A per-element outside input.
    Input(usize),
    /// A rank-0 outside value.
    Scalar(usize),
    /// A literal of the group.
    Lit(usize),
}

/// The element types with a typed pass.
pub trait Elem: Lane {
    fn slice(b: &Buffer) -> Option<&[Self]>;
    fn slice_mut(b: &mut Buffer) -> Option<&mut [Self]>;
}

/// `Elem` for the element type `$t` held by `Buffer::$variant`.
macro_rules! elem {
    ($($t:ty => $variant:ident),*) => {$(
        impl Elem for $t {
            fn slice(b: &Buffer) -> Option<&[$t]> {
                match b {
                    Buffer::$variant(v) => Some(v),
                    _ => None,
                }
            }
            fn slice_mut(b: &mut Buffer) -> Option<&mut [$t]> {
                match b {
                    Buffer::$variant(v) => Some(v),
                    _ => None,
                }
            }
        }
    )*};
}

elem!(f32 => F32, f64 => F64);

/// A group's typed pass (see the module docs).
#[derive(Debug, Clone)]
pub struct Typed {
    dtype: DType,
    ops: Vec<Op>,
    slots: usize,
    /// Per group output, where its value is at the end of a chunk (`None`:
    /// written by its member directly).
    outs: Vec<Option<Src>>,
    /// Elements per chunk: [`CHUNK`], or the largest multiple of the
    /// period of the inputs read through a broadcast below it, so every
    /// chunk of a span starts at the same phase of them and their gathered
    /// chunk is reused ([`Scratch::load`]).
    chunk: usize,
}

impl Typed {
    /// The typed pass of `f`, if every member and value qualifies.
    pub fn build(f: &Fused) -> Option<Typed> {
        let dtype = f
            .instrs
            .iter()
            .map(|i| i.dtype)
            .find(|d| *d != DType::Bool)?;
        if !matches!(dtype, DType::F32 | DType::F64) {
            return None;
        }
        let same = |d: DType| d == dtype;
        let masks = mask_registers(f, dtype);
        if !f.instrs.iter().all(|i| kind(i, dtype, &masks).is_some())
            || !f
                .input_dtypes
                .iter()
                .chain(&f.scalar_dtypes)
                .copied()
                .all(same)
            || !f.lits.iter().all(|l| same(l.dtype()))
            || !f.outputs.iter().all(|o| same(o.dtype))
        {
            return None;
        }
        let last = last_readers(f);
        let mut alloc = Slots::new(f, &last);
        let direct = direct_outputs(f, &last);
        let mut ops = Vec::with_capacity(f.instrs.len());
        for (n, ins) in f.instrs.iter().enumerate() {
            let args = ins
                .args
                .iter()
                .map(|a| alloc.src(*a))
                .collect::<Option<Vec<_>>>()?;
            let dst = alloc.define(ins.dst)?;
            alloc.release_after(n);
            ops.push(Op {
                kind: kind(ins, dtype, &masks)?,
                args,
                dst,
                direct: direct.get(n).copied().flatten(),
            });
        }
        let mut written = vec![false; f.outputs.len()];
        for j in direct.iter().flatten() {
            if let Some(w) = written.get_mut(*j) {
                *w = true;
            }
        }
        let outs = f
            .outputs
            .iter()
            .zip(&written)
            .map(|(o, w)| Some(if *w { None } else { Some(alloc.src(o.arg)?) }))
            .collect::<Option<Vec<_>>>()?;
        Some(Typed {
            dtype,
            ops,
            slots: alloc.count,
            outs,
            chunk: chunk_for(f),
        })
    }

    /// Runs the group (see [`Fused::run`]).
    pub fn run(
        &self, ctx: &ExecCtx, f: &Fused, inputs: &[&HostArray], scalars: &[&HostArray],
    ) -> Result<Vec<Arc<HostArray>>> {
        match self.dtype {
            DType::F32 => self.run_as::<f32>(ctx, f, inputs, scalars),
            _ => self.run_as::<f64>(ctx, f, inputs, scalars),
        }
    }

    fn run_as<T: Pooled>(
        &self, ctx: &ExecCtx, f: &Fused, inputs: &[&HostArray], scalars: &[&HostArray],
    ) -> Result<Vec<Arc<HostArray>>> {
        // Inputs, scalars and literals are read as slices when used (no
        // per-run lists: a loop body runs its groups thousands of times).
        let env = Env {
            f,
            ins: inputs,
            scalars,
        };
        let len = f.len;
        // Every element of every output is written below, so a recycled
        // array (stale contents) serves as well as a fresh one.
        let mut outs = f
            .outputs
            .iter()
            .map(|o| f.output_array(o))
            .collect::<Result<Vec<_>>>()?;
        let (threads, span) = super::span_plan(ctx, len);
        if threads == 1 {
            // One span: the outputs' whole buffers, no window lists.
            let mut scratch = T::acquire(self.slots, f.inputs.len(), self.chunk.min(len));
            let ran = self.run_range(&env, 0, len, &mut Whole(&mut outs), &mut scratch);
            T::release(scratch);
            ran?;
            return Ok(outs);
        }
        let mut bufs = outs
            .iter_mut()
            .map(|h| {
                Arc::get_mut(h)
                    .and_then(|h| T::slice_mut(h.buffer_mut()))
                    .ok_or_else(|| internal("typed output"))
            })
            .collect::<Result<Vec<&mut [T]>>>()?;
        let per_output = bufs
            .iter_mut()
            .map(|w| w.chunks_mut(span).collect::<Vec<_>>())
            .collect::<Vec<_>>();
        let run_span = |(t, mut parts): (usize, Vec<&mut [T]>)| -> Result<()> {
            let start = t.saturating_mul(span);
            let end = start.saturating_add(span).min(len);
            let mut scratch = T::acquire(
                self.slots,
                f.inputs.len(),
                self.chunk.min(end.saturating_sub(start)),
            );
            let ran = self.run_range(&env, start, end, &mut parts, &mut scratch);
            T::release(scratch);
            ran
        };
        super::run_spans(ctx, threads, per_output, run_span)?;
        Ok(outs)
    }

    /// Elements `start..end` chunk by chunk into `parts` (the outputs'
    /// windows starting at `start`).
    fn run_range<T: Elem>(
        &self, env: &Env<'_>, start: usize, end: usize, parts: &mut impl Windows<T>,
        scratch: &mut Scratch<T>,
    ) -> Result<()> {
        let mut s = start;
        while s < end {
            let e = s.saturating_add(self.chunk).min(end);
            let n = e.saturating_sub(s);
            scratch.load(env, s, e)?;
            let at = s.saturating_sub(start);
            for op in &self.ops {
                let arg = |k: usize| -> Result<Operand<'_, T>> {
                    let src = op.args.get(k).ok_or_else(|| internal("operand"))?;
                    scratch.operand(env, *src, s, e)
                };
                if let Some(j) = op.direct {
                    let out = parts
                        .window(j, at, n)
                        .ok_or_else(|| internal("chunk past its window"))?;
                    op.apply(arg, out)?;
                    continue;
                }
                let mut dst = std::mem::take(
                    scratch
                        .slots
                        .get_mut(op.dst)
                        .ok_or_else(|| internal("slot"))?,
                );
                let out = dst.get_mut(..n).ok_or_else(|| internal("slot length"))?;
                let arg = |k: usize| -> Result<Operand<'_, T>> {
                    let src = op.args.get(k).ok_or_else(|| internal("operand"))?;
                    scratch.operand(env, *src, s, e)
                };
                op.apply(arg, out)?;
                if let Some(slot) = scratch.slots.get_mut(op.dst) {
                    *slot = dst;
                }
            }
            for (j, src) in self.outs.iter().enumerate() {
                let Some(src) = src else { continue };
                let window = parts
                    .window(j, at, n)
                    .ok_or_else(|| internal("chunk past its window"))?;
                copy_operand(scratch.operand(env, *src, s, e)?, window)?;
            }
            s = e;
        }
        Ok(())
    }
}

/// [`Typed::chunk`] of `f`: [`CHUNK`] rounded down to a multiple of the
/// common period (`inner * size`, their least common multiple) of the
/// inputs read through a broadcast, when that period is at most half a
/// chunk (a row repeated over a 100x100 group: chunks of 4000).
fn chunk_for(f: &Fused) -> usize {
    fn gcd(a: usize, b: usize) -> usize {
        if b == 0 {
            a
        } else {
            gcd(b, a.checked_rem(b).unwrap_or(0))
        }
    }
    let mut period = 1usize;
    for (_, access) in &f.inputs {
        if in_place(access, f.len) {
            continue;
        }
        let p = access.inner.max(1).saturating_mul(access.size.max(1));
        period = match period
            .checked_div(gcd(period, p))
            .and_then(|q| q.checked_mul(p))
        {
            Some(l) if l <= CHUNK / 2 => l,
            _ => return CHUNK,
        };
    }
    CHUNK
        .saturating_sub(CHUNK.checked_rem(period).unwrap_or(0))
        .max(1)
}

impl Op {
    /// `out = kind(args)` by the reference kernels' slice functions.
    fn apply<'a, T: Elem + 'a>(
        &self, arg: impl Fn(usize) -> Result<Operand<'a, T>>, out: &mut [T],
    ) -> Result<()> {
        let done = match self.kind {
            Kind::Unary(u) => slices::unary(u, arg(0)?, out),
            Kind::Binary(b) => slices::binary(b, arg(0)?, arg(1)?, out),
            Kind::Ipow(y) => {
                slices::integer_pow(y, arg(0)?, out);
                true
            }
            Kind::Compare(c) => {
                slices::compare_as_float(c, arg(0)?, arg(1)?, out);
                true
            }
            Kind::Copy => {
                copy_operand(arg(0)?, out)?;
                true
            }
        };
        if done {
            Ok(())
        } else {
            Err(internal("typed op without a slice kernel"))
        }
    }
}

/// `out = src` (a splat fills it).
fn copy_operand<T: Copy>(src: Operand<'_, T>, out: &mut [T]) -> Result<()> {
    match src {
        Operand::Slice(v) => {
            let v = v
                .get(..out.len())
                .ok_or_else(|| internal("operand length"))?;
            out.copy_from_slice(v);
        }
        Operand::Splat(v) => out.fill(v),
    }
    Ok(())
}

/// Per register, the last member reading it (`None`: no member does).
fn last_readers(f: &Fused) -> Vec<Option<usize>> {
    let mut last: Vec<Option<usize>> = vec![None; f.nregs];
    for (n, ins) in f.instrs.iter().enumerate() {
        for a in &ins.args {
            if let Arg::Reg(r) = a {
                if let Some(l) = last.get_mut(*r) {
                    *l = Some(n);
                }
            }
        }
    }
    last
}

/// Per member, the group output it can write directly: its register is
/// read by exactly one output and by no later member (linear in the
/// group's size).
/// `last_read`: [`last_readers`] of `f`.
fn direct_outputs(f: &Fused, last_read: &[Option<usize>]) -> Vec<Option<usize>> {
    // Per register: the output reading it (`Some(None)`: more than one).
    let mut out_of: Vec<Option<Option<usize>>> = vec![None; f.nregs];
    for (j, o) in f.outputs.iter().enumerate() {
        if let Arg::Reg(r) = o.arg {
            if let Some(slot) = out_of.get_mut(r) {
                *slot = Some(if slot.is_some() { None } else { Some(j) });
            }
        }
    }
    f.instrs
        .iter()
        .enumerate()
        .map(|(n, ins)| {
            let j = out_of.get(ins.dst).copied().flatten().flatten()?;
            let read_later = last_read
                .get(ins.dst)
                .copied()
                .flatten()
                .is_some_and(|l| l > n);
            (!read_later).then_some(j)
        })
        .collect()
}

/// The member kind of `ins` in a group of `dtype`, if the typed pass has a
/// kernel for it; `masks`: [`mask_registers`].
fn kind(ins: &Instr, dtype: DType, masks: &[bool]) -> Option<Kind> {
    let is_mask = |r: usize| masks.get(r).copied().unwrap_or(false);
    if ins.dtype != dtype {
        // Only a comparison kept as a mask has another (boolean) type.
        return match &ins.prim {
            Primitive::Compare(c) if ins.args.len() == 2 && is_mask(ins.dst) => {
                Some(Kind::Compare(*c))
            }
            _ => None,
        };
    }
    match &ins.prim {
        Primitive::Unary(u) if slices::supports_unary(*u) && ins.args.len() == 1 => {
            Some(Kind::Unary(*u))
        }
        Primitive::Binary(b) if slices::supports_binary(*b) && ins.args.len() == 2 => {
            Some(Kind::Binary(*b))
        }
        Primitive::IntegerPow(IntegerPow { y }) if ins.args.len() == 1 => Some(Kind::Ipow(*y)),
        Primitive::ConvertElementType(_) => match ins.args.as_slice() {
            [Arg::Reg(r)] if is_mask(*r) => Some(Kind::Copy),
            _ => None,
        },
        _ => None,
    }
}

/// Per register, whether it is a comparison the typed pass keeps as 1 / 0
/// in `dtype`: a boolean `compare` member that no group output and no
/// member but a conversion to `dtype` reads. (Its operands are then values
/// of `dtype`: every other register, input and literal is checked to be.)
fn mask_registers(f: &Fused, dtype: DType) -> Vec<bool> {
    let mut mask = vec![false; f.nregs];
    for ins in &f.instrs {
        if ins.dtype == DType::Bool && matches!(ins.prim, Primitive::Compare(_)) {
            if let Some(m) = mask.get_mut(ins.dst) {
                *m = true;
            }
        }
    }
    let mut clear = |a: &Arg| {
        if let Arg::Reg(r) = a {
            if let Some(m) = mask.get_mut(*r) {
                *m = false;
            }
        }
    };
    for ins in &f.instrs {
        let converts = ins.dtype == dtype && matches!(ins.prim, Primitive::ConvertElementType(_));
        if !converts {
            ins.args.iter().for_each(&mut clear);
        }
    }
    f.outputs.iter().for_each(|o| clear(&o.arg));
    mask
}

/// Register → scratch-slot mapping by liveness: a register's slot is
/// released after its last reading member (group outputs are never
/// released), and a member's destination is taken before its operands are
/// released, so no kernel writes a slot it reads.
struct Slots {
    map: Vec<Option<usize>>,
    /// Per member, the registers it is the last reader of (ascending; an
    /// output or an unread register is in no list): released after it, so
    /// the allocation is linear in the group's size.
    dying: Vec<Vec<usize>>,
    free: Vec<usize>,
    count: usize,
}

impl Slots {
    /// `last`: [`last_readers`] of `f`.
    fn new(f: &Fused, last: &[Option<usize>]) -> Slots {
        let mut last = last.to_vec();
        for o in &f.outputs {
            if let Arg::Reg(r) = o.arg {
                if let Some(l) = last.get_mut(r) {
                    *l = None;
                }
            }
        }
        let mut dying: Vec<Vec<usize>> = vec![Vec::new(); f.instrs.len()];
        for (reg, l) in last.iter().enumerate() {
            if let Some(list) = l.and_then(|n| dying.get_mut(n)) {
                list.push(reg);
            }
        }
        Slots {
            map: vec![None; f.nregs],
            dying,
            free: Vec::new(),
            count: 0,
        }
    }

    fn define(&mut self, reg: usize) -> Option<usize> {
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                self.count = self.count.checked_add(1)?;
                self.count.checked_sub(1)?
            }
        };
        *self.map.get_mut(reg)? = Some(slot);
        Some(slot)
    }

    fn release_after(&mut self, member: usize) {
        let regs = self.dying.get(member).map_or(&[][..], Vec::as_slice);
        for reg in regs {
            if let Some(Some(slot)) = self.map.get(*reg) {
                self.free.push(*slot);
            }
        }
    }

    fn src(&self, a: Arg) -> Option<Src> {
        Some(match a {
            Arg::Reg(r) => Src::Slot((*self.map.get(r)?)?),
            Arg::Input(k) => Src::Input(k),
            Arg::Scalar(k) => Src::Scalar(k),
            Arg::Lit(k) => Src::Lit(k),
        })
    }
}

/// The values one run reads.
struct Env<'a> {
    f: &'a Fused,
    ins: &'a [&'a HostArray],
    scalars: &'a [&'a HostArray],
}

impl<'a> Env<'a> {
    fn input<T: Elem>(&self, k: usize) -> Result<&'a [T]> {
        self.ins
            .get(k)
            .and_then(|h| T::slice(h.buffer()))
            .ok_or_else(|| internal("typed input of another dtype"))
    }

    fn scalar<T: Elem>(&self, k: usize) -> Result<T> {
        self.scalars
            .get(k)
            .and_then(|h| T::slice(h.buffer()))
            .and_then(|v| v.first().copied())
            .ok_or_else(|| internal("typed scalar"))
    }

    fn lit<T: Elem>(&self, k: usize) -> Result<T> {
        self.f
            .lits
            .get(k)
            .and_then(|h| T::slice(h.buffer()))
            .and_then(|v| v.first().copied())
            .ok_or_else(|| internal("typed literal"))
    }
}

/// The output windows a range of chunks is written to.
trait Windows<T> {
    /// Elements `at..at + n` of output `j`'s window.
    fn window(&mut self, j: usize, at: usize, n: usize) -> Option<&mut [T]>;
}

/// One span's windows of the outputs (threaded runs).
impl<T> Windows<T> for Vec<&mut [T]> {
    fn window(&mut self, j: usize, at: usize, n: usize) -> Option<&mut [T]> {
        self.get_mut(j)?.get_mut(at..at.checked_add(n)?)
    }
}

/// The outputs' whole buffers (one span).
struct Whole<'o>(&'o mut [Arc<HostArray>]);

impl<T: Elem> Windows<T> for Whole<'_> {
    fn window(&mut self, j: usize, at: usize, n: usize) -> Option<&mut [T]> {
        let h = Arc::get_mut(self.0.get_mut(j)?)?;
        T::slice_mut(h.buffer_mut())?.get_mut(at..at.checked_add(n)?)
    }
}

/// One thread's chunk buffers: the scratch slots, and the gathered chunk
/// of every input not read in place (indexed by slot and input number;
/// entries past a group's counts are other groups' and unused by it).
pub struct Scratch<T> {
    slots: Vec<Vec<T>>,
    loaded: Vec<Vec<T>>,
    /// Per loaded input of the current run: the phase (first element's
    /// index modulo the input's period) and length of what `loaded` holds.
    /// A chunk at the same phase, no longer, reads a prefix of it.
    tags: Vec<Option<(usize, usize)>>,
}

/// Per-thread spare scratch, so a group run thousands of times (a loop
/// body) does not allocate its chunk buffers each time. Slots are always
/// written before they are read and gathered inputs are cleared before they
/// are filled, so stale contents never matter.
pub trait Pooled: Elem {
    fn pool() -> &'static std::thread::LocalKey<RefCell<Vec<Scratch<Self>>>>;

    /// Scratch with `slots` slots of at least `chunk` elements.
    fn acquire(slots: usize, inputs: usize, chunk: usize) -> Scratch<Self> {
        let spare = Self::pool()
            .try_with(|p| p.try_borrow_mut().ok().and_then(|mut p| p.pop()))
            .ok()
            .flatten();
        let mut s = spare.unwrap_or(Scratch {
            slots: Vec::new(),
            loaded: Vec::new(),
            tags: Vec::new(),
        });
        // Buffers past this group's counts are kept, not dropped: scratch
        // passes between groups of different sizes (a program's groups
        // in turn), and dropping them made every run allocate, zero and
        // grow them again.
        if s.slots.len() < slots {
            s.slots.resize_with(slots, Vec::new);
        }
        for v in s.slots.iter_mut().take(slots) {
            if v.len() < chunk {
                v.resize(chunk, Self::default());
            }
        }
        // Filled (and grown once) only for inputs read through a broadcast;
        // inputs read in place never allocate.
        if s.loaded.len() < inputs {
            s.loaded.resize_with(inputs, Vec::new);
        }
        // What `loaded` holds is another run's (other inputs, other values).
        s.tags.clear();
        s.tags.resize(inputs, None);
        s
    }

    /// Returns scratch to this thread's pool (a few are kept).
    fn release(s: Scratch<Self>) {
        let _ = Self::pool().try_with(|p| {
            if let Ok(mut p) = p.try_borrow_mut() {
                if p.len() < 4 {
                    p.push(s);
                }
            }
        });
    }
}

thread_local! {
    static SCRATCH_F32: RefCell<Vec<Scratch<f32>>> = const { RefCell::new(Vec::new()) };
    static SCRATCH_F64: RefCell<Vec<Scratch<f64>>> = const { RefCell::new(Vec::new()) };
}

impl Pooled for f32 {
    fn pool() -> &'static std::thread::LocalKey<RefCell<Vec<Scratch<f32>>>> {
        &SCRATCH_F32
    }
}

impl Pooled for f64 {
    fn pool() -> &'static std::thread::LocalKey<RefCell<Vec<Scratch<f64>>>> {
        &SCRATCH_F64
    }
}

impl<T: Elem> Scratch<T> {
    /// Gathers elements `s..e` of the inputs read through a broadcast.
    /// Element `i` of such an input reads its element `(i / inner) %
    /// size`, so the chunk depends only on `s` modulo `inner * size` and
    /// its length: a chunk at the phase of the gathered one, no longer,
    /// is a prefix of it and is not gathered again.
    fn load(&mut self, env: &Env<'_>, s: usize, e: usize) -> Result<()> {
        let n = e.saturating_sub(s);
        let inputs = env
            .f
            .inputs
            .iter()
            .zip(&mut self.loaded)
            .zip(&mut self.tags);
        for (k, (((_, access), buf), tag)) in inputs.enumerate() {
            if in_place(access, env.f.len) {
                continue;
            }
            let period = access.inner.max(1).saturating_mul(access.size.max(1));
            let phase = s.checked_rem(period).unwrap_or(0);
            if matches!(*tag, Some((p, len)) if p == phase && len >= n) {
                continue;
            }
            buf.clear();
            *tag = None;
            super::gather_into(env.input::<T>(k)?, *access, s, e, buf)?;
            *tag = Some((phase, n));
        }
        Ok(())
    }

    fn operand<'s>(
        &'s self, env: &'s Env<'_>, src: Src, s: usize, e: usize,
    ) -> Result<Operand<'s, T>> {
        let n = e.saturating_sub(s);
        Ok(match src {
            Src::Slot(k) => Operand::Slice(
                self.slots
                    .get(k)
                    .and_then(|v| v.get(..n))
                    .ok_or_else(|| internal("slot read"))?,
            ),
            Src::Input(k) => {
                let (_, access) = env.f.inputs.get(k).ok_or_else(|| internal("input"))?;
                let v = if in_place(access, env.f.len) {
                    env.input::<T>(k)?.get(s..e)
                } else {
                    self.loaded.get(k).and_then(|x| x.get(..n))
                };
                Operand::Slice(v.ok_or_else(|| internal("input too short"))?)
            }
            Src::Scalar(k) => Operand::Splat(env.scalar(k)?),
            Src::Lit(k) => Operand::Splat(env.lit(k)?),
        })
    }
}

/// Whether an input with `access` is read element for element.
fn in_place(access: &super::Access, len: usize) -> bool {
    access.inner == 1 && access.size == len
}
