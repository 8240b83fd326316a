//! `threefry2x32`: the Threefry-2x32 counter-based hash (Salmon et al.,
//! "Parallel random numbers: as easy as 1, 2, 3", SC'11) with 20 rounds, as
//! JAX's primitive of that name. Four `uint32` operands `key0, key1, x0, x1`
//! of elementwise-compatible shapes give two `uint32` outputs. It is
//! elementwise (so it batches like one) and has no derivative: its outputs
//! are integers, which carry no tangent, and it is never linear.
//!
//! `jax.random` (Python) builds keys, splitting and sampling on it.

use super::batch::{add_batch_axis, emit_all_at, move_axis};
use super::family::{BatchOut, Family};
use super::shape::elementwise_shape;
use super::Primitive;
use crate::array::{Buffer, HostArray};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::exec::ExecCtx;
use crate::ir::builder::Builder;
use crate::ir::{Atom, Aval};
use crate::prims::BroadcastInDim;

const NAME: &str = "threefry2x32";

/// Rotation distances of the even and odd groups of four rounds.
const ROTATIONS: [[u32; 4]; 2] = [[13, 15, 26, 6], [17, 29, 16, 24]];

/// Skein's key-schedule parity constant for 32-bit words.
const KEY_PARITY: u32 = 0x1BD1_1BDA;

/// Threefry-2x32 with 20 rounds of `counter` under `key`.
pub fn threefry2x32(key: [u32; 2], counter: [u32; 2]) -> [u32; 2] {
    let [k0, k1] = key;
    let mut ks = [k0, k1, k0 ^ k1 ^ KEY_PARITY];
    let mut x = [
        counter[0].wrapping_add(ks[0]),
        counter[1].wrapping_add(ks[1]),
    ];
    // Five groups of four rounds, alternating the rotation sets; after group
    // g (1-based) the schedule injects key words g % 3, (g + 1) % 3 and g.
    for (group, rot) in (1u32..=5).zip(ROTATIONS.iter().cycle()) {
        for &r in rot {
            x[0] = x[0].wrapping_add(x[1]);
            x[1] = x[1].rotate_left(r) ^ x[0];
        }
        ks.rotate_left(1);
        x[0] = x[0].wrapping_add(ks[0]);
        x[1] = x[1].wrapping_add(ks[1]).wrapping_add(group);
    }
    x
}

/// The `threefry2x32` primitive (no params).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Threefry2x32;

impl Family for Threefry2x32 {
    crate::family_identity!(unit: NAME, multiple_results = true);

    /// Two `uint32` arrays of the operands' elementwise shape.
    fn abstract_eval(&self, ins: &[Aval]) -> Result<Vec<Aval>> {
        Error::check_count(NAME, 4, ins.len())?;
        if ins.iter().any(|a| a.dtype != DType::U32) {
            let ds: Vec<DType> = ins.iter().map(|a| a.dtype).collect();
            return Err(Error::dtype(NAME, &ds, "arguments must have uint32 type"));
        }
        let refs: Vec<&Aval> = ins.iter().collect();
        let shape = elementwise_shape(NAME, &refs)?;
        let out = Aval::new(shape, DType::U32);
        Ok(vec![out.clone(), out])
    }

    /// The hash of every element (rank-0 operands broadcast against the
    /// others). The operands are checked by the shape rule.
    fn kernel(
        &self, _ctx: &ExecCtx, args: &[&HostArray], _outs: Vec<Aval>,
    ) -> Result<Vec<HostArray>> {
        let avals: Vec<Aval> = args.iter().map(|a| a.aval()).collect();
        let shape = self
            .abstract_eval(&avals)?
            .into_iter()
            .next()
            .map(|a| a.shape)
            .unwrap_or_default();
        let n = crate::array::checked_size(&shape)?;
        let words = args
            .iter()
            .map(|a| match a.buffer() {
                Buffer::U32(v) => Ok(v.as_slice()),
                other => Err(Error::dtype(NAME, &[other.dtype()], "expected uint32")),
            })
            .collect::<Result<Vec<&[u32]>>>()?;
        // Element i of an operand: itself if it has n elements, else its one value.
        let at = |w: &[u32], i: usize| -> u32 {
            if w.len() == n {
                w.get(i).copied().unwrap_or(0)
            } else {
                w.first().copied().unwrap_or(0)
            }
        };
        let [k0, k1, x0, x1] = words.as_slice() else {
            return Err(Error::arity(NAME, 4, words.len()));
        };
        let (mut y0, mut y1) = (Vec::with_capacity(n), Vec::with_capacity(n));
        for i in 0..n {
            let [a, b] = threefry2x32([at(k0, i), at(k1, i)], [at(x0, i), at(x1, i)]);
            y0.push(a);
            y1.push(b);
        }
        Ok(vec![
            HostArray::new(shape.clone(), Buffer::U32(y0.into()))?,
            HostArray::new(shape, Buffer::U32(y1.into()))?,
        ])
    }

    // Integer outputs: zero tangents.
    crate::zero_derivative_rules!();

    /// The elementwise rule. Batched operands move their mapped axis to the
    /// front; unbatched full-rank operands are broadcast along it; rank-0
    /// unbatched operands stay as they are (the primitive takes them as is).
    fn batch(&self, b: &mut Builder, ins: &[Atom], dims: &[Option<usize>], n: usize) -> BatchOut {
        if ins.len() != dims.len() {
            return Err(Error::InvalidArgument(format!(
                "vmap of {NAME}: one batch dim per operand expected"
            )));
        }
        // The per-example shape: that of the highest-rank operand.
        let mut shape: Vec<usize> = Vec::new();
        for (x, d) in ins.iter().zip(dims) {
            let mut s = b.aval(x)?.shape;
            if let Some(d) = d {
                if *d < s.len() {
                    s.remove(*d);
                }
            }
            if s.len() > shape.len() {
                shape = s;
            }
        }
        let mut full = vec![n];
        full.extend_from_slice(&shape);
        let mut new_ins = Vec::with_capacity(ins.len());
        for (x, d) in ins.iter().zip(dims) {
            let rank = b.aval(x)?.ndim();
            let y = match d {
                Some(d) if rank == full.len() => move_axis(b, x.clone(), *d, 0)?,
                Some(_) => b.add_eqn1(
                    Primitive::BroadcastInDim(BroadcastInDim {
                        shape: full.clone(),
                        broadcast_dimensions: vec![0],
                    }),
                    vec![x.clone()],
                )?,
                None if rank == 0 => x.clone(),
                None => add_batch_axis(b, x.clone(), n, 0)?,
            };
            new_ins.push(y);
        }
        emit_all_at(b, Primitive::from(*self), new_ins, Some(0))
    }
}
