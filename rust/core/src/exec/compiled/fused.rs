//! Running a fusion group: one pass over the group's elements in chunks of
//! [`CHUNK`], every member evaluated on the chunk by the reference kernel
//! (so a fused group computes bit for bit what the unfused equations do),
//! the chunk's intermediates staying in cache. Large groups split their
//! chunks over threads; chunk boundaries are fixed by the size alone, so
//! results do not depend on the thread count.

use super::fusion::{broadcast_access, Access, Group};
use crate::array::{checked_size, Buffer, HostArray};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::exec::ExecCtx;
use crate::ir::{Atom, Jaxpr, Var};
use crate::prims::{kernel, Primitive};
use crate::prims::{BroadcastInDim, Reshape, Squeeze};
use rayon::prelude::*;
use std::collections::HashMap;
use std::sync::Arc;

mod typed;

use crate::exec::pool::elementwise_spans as span_plan;
pub use crate::exec::pool::{ELEMENTWISE_CHUNK as CHUNK, ELEMENTWISE_PAR_MIN as PAR_MIN};

/// A member's operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Arg {
    /// Value of an earlier member.
    Reg(usize),
    /// An outside value read through its access pattern.
    Input(usize),
    /// A rank-0 outside value, passed whole.
    Scalar(usize),
    /// A literal (index into `lits`).
    Lit(usize),
}

#[derive(Debug, Clone)]
struct Instr {
    prim: Primitive,
    args: Vec<Arg>,
    dst: usize,
    /// The member's output dtype.
    dtype: DType,
}

/// A compiled fusion group.
#[derive(Debug, Clone)]
pub struct Fused {
    shape: Vec<usize>,
    len: usize,
    /// Outside values read per element, with their access pattern.
    inputs: Vec<(Var, Access)>,
    input_dtypes: Vec<DType>,
    /// Rank-0 outside values.
    scalars: Vec<Var>,
    scalar_dtypes: Vec<DType>,
    lits: Vec<HostArray>,
    instrs: Vec<Instr>,
    nregs: usize,
    outputs: Vec<Output>,
    /// The allocation-free pass, when the group qualifies.
    typed: Option<typed::Typed>,
}

/// While a group is built: what each variable produced or read so far maps
/// to (keyed by variable index; sized by the group, not the program, so
/// building every group of a program is linear in its size), and where each
/// outside value already sits in `inputs` / `scalars`.
#[derive(Default)]
struct Bound {
    args: HashMap<usize, Arg>,
    inputs: HashMap<(Var, Access), usize>,
    scalars: HashMap<Var, usize>,
}

impl Bound {
    fn get(&self, v: Var) -> Option<Arg> {
        self.args.get(&v.index()).copied()
    }
}

/// A value the group hands to the rest of the program.
#[derive(Debug, Clone)]
struct Output {
    arg: Arg,
    var: Var,
    dtype: DType,
    shape: Vec<usize>,
}

fn internal(what: &str) -> Error {
    Error::InvalidArgument(format!("fused group: {what}"))
}

impl Fused {
    /// Builds the pass for `group` of `jx`; `escapes[v]` says whether
    /// variable `v` is read outside the group (or is a program output).
    pub fn new(jx: &Jaxpr, group: &Group, escapes: &[bool]) -> Result<Fused> {
        let len = checked_size(&group.shape)?;
        let mut f = Fused {
            shape: group.shape.clone(),
            len,
            inputs: Vec::new(),
            input_dtypes: Vec::new(),
            scalars: Vec::new(),
            scalar_dtypes: Vec::new(),
            lits: Vec::new(),
            instrs: Vec::new(),
            nregs: 0,
            outputs: Vec::new(),
            typed: None,
        };
        let mut bound = Bound::default();
        for &i in &group.members {
            let eqn = jx
                .eqns
                .get(i)
                .ok_or_else(|| internal("member out of range"))?;
            let [out] = eqn.outputs.as_slice() else {
                return Err(internal("member with several outputs"));
            };
            let arg = f.member_arg(jx, eqn, *out, &mut bound)?;
            bound.args.insert(out.index(), arg);
            if escapes.get(out.index()).copied().unwrap_or(true) {
                let aval = jx.aval(*out)?;
                f.outputs.push(Output {
                    arg,
                    var: *out,
                    dtype: aval.dtype,
                    shape: aval.shape.clone(),
                });
            }
        }
        f.typed = typed::Typed::build(&f);
        Ok(f)
    }

    /// What a member equation's output maps to: an input access for a
    /// broadcast of a value from outside the group, the operand itself for a
    /// reshape, else a new register computed by one instruction.
    fn member_arg(
        &mut self, jx: &Jaxpr, eqn: &crate::ir::Eqn, out: Var, bound: &mut Bound,
    ) -> Result<Arg> {
        Ok(match &eqn.prim {
            Primitive::BroadcastInDim(BroadcastInDim {
                shape,
                broadcast_dimensions,
            }) => {
                let [Atom::Var(x)] = eqn.inputs.as_slice() else {
                    return Err(internal("broadcast of a literal"));
                };
                match bound.get(*x) {
                    // A member's value of the same element count: the
                    // broadcast only adds unit axes.
                    Some(arg) => arg,
                    None => {
                        let xs = &jx.aval(*x)?.shape;
                        let access = broadcast_access(xs, shape, broadcast_dimensions)
                            .ok_or_else(|| internal("unsupported broadcast"))?;
                        self.input(bound, *x, access, jx.aval(*x)?.dtype)
                    }
                }
            }
            // The reshaped value holds the group's elements: an outside
            // operand is read per element even when it is rank 0 (a rank-0
            // `Scalar` would reach the member kernels with the wrong shape,
            // e.g. as a `select_n` case beside full-shape cases).
            Primitive::Reshape(Reshape { .. }) | Primitive::Squeeze(Squeeze { .. }) => {
                match eqn.inputs.as_slice() {
                    [Atom::Var(v)] if bound.get(*v).is_none() => {
                        let access = Access {
                            inner: 1,
                            size: self.len,
                        };
                        self.input(bound, *v, access, jx.aval(*v)?.dtype)
                    }
                    [a] => self.operand(jx, bound, a)?,
                    _ => return Err(internal("reshape arity")),
                }
            }
            prim => {
                let args = eqn
                    .inputs
                    .iter()
                    .map(|a| self.operand(jx, bound, a))
                    .collect::<Result<Vec<_>>>()?;
                let dst = self.nregs;
                self.nregs = self.nregs.saturating_add(1);
                self.instrs.push(Instr {
                    prim: prim.clone(),
                    args,
                    dst,
                    dtype: jx.aval(out)?.dtype,
                });
                Arg::Reg(dst)
            }
        })
    }

    fn input(&mut self, bound: &mut Bound, v: Var, access: Access, dtype: DType) -> Arg {
        let next = self.inputs.len();
        let k = *bound.inputs.entry((v, access)).or_insert(next);
        if k == next {
            self.inputs.push((v, access));
            self.input_dtypes.push(dtype);
        }
        Arg::Input(k)
    }

    fn operand(&mut self, jx: &Jaxpr, bound: &mut Bound, a: &Atom) -> Result<Arg> {
        match a {
            Atom::Lit(l) => {
                self.lits.push(l.to_array()?);
                Ok(Arg::Lit(self.lits.len().saturating_sub(1)))
            }
            Atom::Var(v) => {
                if let Some(arg) = bound.get(*v) {
                    return Ok(arg);
                }
                let aval = jx.aval(*v)?;
                if aval.shape.is_empty() && !self.shape.is_empty() {
                    let next = self.scalars.len();
                    let k = *bound.scalars.entry(*v).or_insert(next);
                    if k == next {
                        self.scalars.push(*v);
                        self.scalar_dtypes.push(aval.dtype);
                    }
                    Ok(Arg::Scalar(k))
                } else {
                    Ok(self.input(
                        bound,
                        *v,
                        Access {
                            inner: 1,
                            size: self.len,
                        },
                        aval.dtype,
                    ))
                }
            }
        }
    }

    /// Whether the group runs by its typed pass.
    /// Elementwise work of one run: elements times instructions.
    pub fn work(&self) -> usize {
        self.len.saturating_mul(self.instrs.len().max(1))
    }

    pub fn is_typed(&self) -> bool {
        self.typed.is_some()
    }

    /// Outside variables the group reads (per-element inputs, then scalars).
    pub fn reads(&self) -> impl Iterator<Item = Var> + '_ {
        self.inputs
            .iter()
            .map(|(v, _)| *v)
            .chain(self.scalars.iter().copied())
    }

    /// Variables the group defines for the rest of the program.
    pub fn writes(&self) -> impl Iterator<Item = Var> + '_ {
        self.outputs.iter().map(|o| o.var)
    }

    /// Runs the group on the values of [`Fused::reads`], in order; returns
    /// the values of [`Fused::writes`].
    pub fn run(&self, ctx: &ExecCtx, reads: &[&HostArray]) -> Result<Vec<Arc<HostArray>>> {
        if reads.len() != self.inputs.len().saturating_add(self.scalars.len()) {
            return Err(internal("operand count"));
        }
        let (inputs, scalars) = reads.split_at(self.inputs.len());
        if let Some(t) = &self.typed {
            return t.run(ctx, self, inputs, scalars);
        }
        if self.len <= CHUNK {
            let outs = self.eval_chunk(ctx, inputs, scalars, 0, self.len, true)?;
            return outs
                .into_iter()
                .zip(&self.outputs)
                .map(|(h, o)| HostArray::new(o.shape.clone(), h.into_buffer()).map(Arc::new))
                .collect();
        }
        let mut bufs = self
            .outputs
            .iter()
            .map(|o| crate::array::pool::take(o.dtype, self.len))
            .collect::<Result<Vec<_>>>()?;
        let (threads, span) = span_plan(ctx, self.len);
        let per_output = bufs
            .iter_mut()
            .map(|b| split(b, span))
            .collect::<Result<Vec<_>>>()?;
        let run_span = |(t, mut parts): (usize, Vec<PartMut<'_>>)| -> Result<()> {
            let start = t.saturating_mul(span);
            let end = start.saturating_add(span).min(self.len);
            let mut s = start;
            while s < end {
                let e = s.saturating_add(CHUNK).min(end);
                let outs = self.eval_chunk(ctx, inputs, scalars, s, e, false)?;
                for (part, h) in parts.iter_mut().zip(&outs) {
                    part.write(s.saturating_sub(start), h.buffer())?;
                }
                s = e;
            }
            Ok(())
        };
        run_spans(ctx, threads, per_output, run_span)?;
        self.wrap_outputs(bufs)
    }

    /// The output buffers as the group's output arrays.
    /// An array for output `o` whose every element the caller overwrites:
    /// a recycled one when the thread's bin has one, else zeros.
    fn output_array(&self, o: &Output) -> Result<Arc<HostArray>> {
        match super::recycle::take(o.dtype, &o.shape) {
            Some(h) => Ok(h),
            // Large outputs come from the host buffer pool (stale contents
            // too: every element is written).
            None => HostArray::new(
                o.shape.clone(),
                crate::array::pool::take(o.dtype, self.len)?,
            )
            .map(Arc::new),
        }
    }

    fn wrap_outputs(&self, bufs: Vec<Buffer>) -> Result<Vec<Arc<HostArray>>> {
        bufs.into_iter()
            .zip(&self.outputs)
            .map(|(b, o)| HostArray::new(o.shape.clone(), b).map(Arc::new))
            .collect()
    }

    /// Elements `s..e` of every group output. `whole`: the chunk is the
    /// whole group, so full-shape inputs are used in place and the results
    /// have the group's shape.
    fn eval_chunk(
        &self, ctx: &ExecCtx, inputs: &[&HostArray], scalars: &[&HostArray], s: usize, e: usize,
        whole: bool,
    ) -> Result<Vec<HostArray>> {
        let loaded: Vec<Option<HostArray>> = self
            .inputs
            .iter()
            .zip(inputs)
            .map(|(&(_, access), x)| {
                let in_place =
                    access.inner == 1 && access.size == self.len && x.shape() == self.shape;
                if whole && in_place {
                    Ok(None)
                } else {
                    load(x, access, s, e, whole.then_some(&self.shape)).map(Some)
                }
            })
            .collect::<Result<_>>()?;
        let mut regs: Vec<Option<HostArray>> = vec![None; self.nregs];
        for ins in &self.instrs {
            let args = ins
                .args
                .iter()
                .map(|a| self.arg(a, &regs, &loaded, inputs, scalars))
                .collect::<Result<Vec<&HostArray>>>()?;
            let mut out = kernel::eval(ctx, &ins.prim, &args)?;
            let mut value = out.pop().ok_or_else(|| internal("no kernel output"))?;
            // A member computed from rank-0 operands alone is rank 0; it
            // joins only a group of one element, whose other members hold
            // the chunk's shape: give it that shape, so later members
            // (`select_n` cases) see equal shapes.
            if value.shape().is_empty() && !self.shape.is_empty() {
                let shape = if whole {
                    self.shape.clone()
                } else {
                    vec![e.saturating_sub(s)]
                };
                value = value.reshaped(shape)?;
            }
            if let Some(slot) = regs.get_mut(ins.dst) {
                *slot = Some(value);
            }
        }
        // Registers are moved out (no copy) unless an output repeats one.
        let mut outs = Vec::with_capacity(self.outputs.len());
        for o in &self.outputs {
            let taken = match o.arg {
                Arg::Reg(r) => regs.get_mut(r).and_then(Option::take),
                _ => None,
            };
            match taken {
                Some(h) => outs.push(h),
                None => {
                    let prev = self.outputs.iter().zip(&outs).find(|(p, _)| p.arg == o.arg);
                    match prev {
                        Some((_, h)) => outs.push(h.clone()),
                        None => {
                            outs.push(self.arg(&o.arg, &regs, &loaded, inputs, scalars)?.clone())
                        }
                    }
                }
            }
        }
        Ok(outs)
    }

    /// The value of `a` in the current chunk.
    fn arg<'s>(
        &'s self, a: &Arg, regs: &'s [Option<HostArray>], loaded: &'s [Option<HostArray>],
        inputs: &'s [&'s HostArray], scalars: &'s [&'s HostArray],
    ) -> Result<&'s HostArray> {
        match *a {
            Arg::Reg(r) => regs
                .get(r)
                .and_then(Option::as_ref)
                .ok_or_else(|| internal("register read before write")),
            Arg::Input(k) => match loaded.get(k) {
                Some(Some(h)) => Ok(h),
                Some(None) => inputs.get(k).copied().ok_or_else(|| internal("input")),
                None => Err(internal("input index")),
            },
            Arg::Scalar(k) => scalars.get(k).copied().ok_or_else(|| internal("scalar")),
            Arg::Lit(k) => self.lits.get(k).ok_or_else(|| internal("literal")),
        }
    }
}

/// Regroups each output's span windows into one list per span and runs
/// `run((span index, windows))` on every span, over threads when
/// `threads > 1`.
fn run_spans<P: Send>(
    ctx: &ExecCtx, threads: usize, per_output: Vec<Vec<P>>,
    run: impl Fn((usize, Vec<P>)) -> Result<()> + Sync + Send,
) -> Result<()> {
    let mut per_span: Vec<Vec<P>> = Vec::new();
    for windows in per_output {
        for (t, part) in windows.into_iter().enumerate() {
            if per_span.len() <= t {
                per_span.push(Vec::new());
            }
            if let Some(s) = per_span.get_mut(t) {
                s.push(part);
            }
        }
    }
    if threads > 1 {
        // Workers run inside the caller's context (its SIMD level).
        crate::exec::pool::install(|| {
            per_span
                .into_par_iter()
                .enumerate()
                .try_for_each(|span| ctx.enter(|| run(span)))
        })
    } else {
        per_span.into_iter().enumerate().try_for_each(run)
    }
}

/// Elements `s..e` of the group as read from `x` through `access`, shaped
/// `shape` (the whole group) or as a vector.
fn load(
    x: &HostArray, access: Access, s: usize, e: usize, shape: Option<&Vec<usize>>,
) -> Result<HostArray> {
    let n = e.saturating_sub(s);
    let buf = crate::with_buffer!(x.buffer(), v => {
        let mut out = Vec::with_capacity(n);
        gather_into(v, access, s, e, &mut out)?;
        Buffer::from(out)
    }, _ => return Err(internal("input of an opaque type")));
    let shape = shape.cloned().unwrap_or_else(|| vec![n]);
    HostArray::new(shape, buf)
}

/// Appends elements `s..e` of the group as read from `v` through
/// `access` to `out`.
fn gather_into<T: Copy>(
    v: &[T], access: Access, s: usize, e: usize, out: &mut Vec<T>,
) -> Result<()> {
    let size = access.size.max(1);
    let inner = access.inner.max(1);
    // Runs of consecutive operand elements (inner == 1) or of one repeated
    // element (inner > 1), copied a run at a time.
    let mut i = s;
    while i < e {
        let left = e.saturating_sub(i);
        let q = i.checked_div(inner).unwrap_or(0);
        let j = q.checked_rem(size).unwrap_or(0);
        if inner == 1 {
            let take = size.saturating_sub(j).min(left).max(1);
            let run = v
                .get(j..j.saturating_add(take))
                .ok_or_else(|| internal("input too short"))?;
            out.extend_from_slice(run);
            i = i.saturating_add(take);
        } else {
            let take = inner
                .saturating_sub(i.checked_rem(inner).unwrap_or(0))
                .min(left)
                .max(1);
            let x = *v.get(j).ok_or_else(|| internal("input too short"))?;
            out.extend(std::iter::repeat_n(x, take));
            i = i.saturating_add(take);
        }
    }
    Ok(())
}

/// A typed mutable window of an output buffer.
enum PartMut<'a> {
    Bool(&'a mut [bool]),
    I8(&'a mut [i8]),
    I16(&'a mut [i16]),
    I32(&'a mut [i32]),
    I64(&'a mut [i64]),
    U8(&'a mut [u8]),
    U16(&'a mut [u16]),
    U32(&'a mut [u32]),
    U64(&'a mut [u64]),
    F16(&'a mut [half::f16]),
    BF16(&'a mut [half::bf16]),
    F32(&'a mut [f32]),
    F64(&'a mut [f64]),
    C64(&'a mut [crate::array::C32]),
    C128(&'a mut [crate::array::C64]),
}

macro_rules! for_parts {
    ($($var:ident),*) => {
        /// `buf` cut into windows of `span` elements.
        fn split(buf: &mut Buffer, span: usize) -> Result<Vec<PartMut<'_>>> {
            let span = span.max(1);
            Ok(match buf {
                $(Buffer::$var(v) => v.chunks_mut(span).map(PartMut::$var).collect(),)*
                Buffer::Float0(_) | Buffer::Key(_) => return Err(internal("opaque output")),
            })
        }

        impl PartMut<'_> {
            /// Copies `src` into the window at offset `at`.
            fn write(&mut self, at: usize, src: &Buffer) -> Result<()> {
                match (self, src) {
                    $((PartMut::$var(d), Buffer::$var(v)) => {
                        let end = at.checked_add(v.len()).ok_or_else(|| internal("offset"))?;
                        d.get_mut(at..end)
                            .ok_or_else(|| internal("chunk past its window"))?
                            .copy_from_slice(v);
                        Ok(())
                    })*
                    _ => Err(internal("chunk of another dtype")),
                }
            }
        }
    };
}
for_parts!(Bool, I8, I16, I32, I64, U8, U16, U32, U64, F16, BF16, F32, F64, C64, C128);
