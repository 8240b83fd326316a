//! `broadcast_in_dim`, `reshape`, `transpose` and `squeeze`: the same
//! elements under a new shape or axis order.

use super::kernels;
use crate::array::{checked_size, HostArray};
use crate::error::{Error, Result};
use crate::exec::ExecCtx;
use crate::ir::builder::Builder;
use crate::ir::{Atom, Aval};
use crate::prims::batch::{axes_around, batch_one, emit_batched};
use crate::prims::batch::{insert_axis, move_axis, shift};
use crate::prims::family::unary_kernel;
use crate::prims::family::{emit1, operands, BatchOut, Family, Operand, TransposeOut};
use crate::prims::params::Param;
use crate::prims::shape::{check_axes, drop_dims, gather_dims, is_permutation};
use crate::prims::transpose::{single_ct, transpose_unary};
use crate::prims::ReduceOp;

crate::declare_params! {
    /// Broadcasts to `shape`; operand axis `i` becomes axis
    /// `broadcast_dimensions[i]`.
    pub struct BroadcastInDim {
        shape: Vec<usize>,
        broadcast_dimensions: Vec<usize>,
    }
}

crate::declare_params! {
    /// Same elements in row-major order, new shape.
    pub struct Reshape {
        new_sizes: Vec<usize>,
        const dimensions = Param::None,
    }
}

crate::declare_params! {
    /// Permutes the axes: output axis `i` is operand axis `permutation[i]`.
    pub struct Transpose {
        permutation: Vec<usize>,
    }
}

crate::declare_params! {
    /// Removes the listed size-1 axes.
    pub struct Squeeze {
        dimensions: Vec<usize>,
    }
}

/// `x` reshaped to `shape` (nothing when it has that shape).
fn reshape_to(b: &mut Builder, x: Atom, shape: &[usize]) -> Result<Atom> {
    if b.aval(&x)?.shape == shape {
        return Ok(x);
    }
    emit1(
        b,
        Reshape {
            new_sizes: shape.to_vec(),
        },
        vec![x],
    )
}

/// Transpose of `reshape` and `squeeze`: the cotangent reshaped back to the
/// operand's shape.
fn transpose_reshape(
    name: &'static str, b: &mut Builder, cts: &[Option<Atom>], ops: &[Operand],
) -> TransposeOut {
    transpose_unary(name, b, cts, ops, |b, ct, a| reshape_to(b, ct, &a.shape))
}

/// The kernel, JVP and transpose rules of a family that keeps the data and
/// changes only the shape (`reshape`, `squeeze`): the operand's buffer as
/// is, linear, the cotangent reshaped back.
macro_rules! same_data_rules {
    () => {
        fn kernel(
            &self, _ctx: &ExecCtx, args: &[&HostArray], outs: Vec<Aval>,
        ) -> Result<Vec<HostArray>> {
            crate::prims::family::same_data(self.name(), args, outs)
        }

        crate::jvp_by!(crate::prims::jvp::jvp_linear);

        fn transpose(
            &self, b: &mut Builder, cts: &[Option<Atom>], operands: &[Operand],
        ) -> TransposeOut {
            transpose_reshape(self.name(), b, cts, operands)
        }
    };
}

// ------------------------------------------------------- broadcast_in_dim

impl Family for BroadcastInDim {
    crate::family_identity!(
        "broadcast_in_dim",
        example = BroadcastInDim {
            shape: vec![1],
            broadcast_dimensions: vec![]
        }
    );

    fn abstract_eval(&self, ins: &[Aval]) -> Result<Vec<Aval>> {
        let name = self.name();
        let [x] = operands::<_, 1>(name, ins)?;
        let (shape, bdims) = (&self.shape, &self.broadcast_dimensions);
        if bdims.len() != x.ndim() {
            return Err(Error::shape(
                name,
                &[&x.shape, shape],
                format!("broadcast_dimensions {bdims:?} must have one entry per operand axis"),
            ));
        }
        let increasing = bdims.windows(2).all(|w| matches!(w, [a, b] if a < b));
        if !increasing {
            return Err(Error::param(
                name,
                "broadcast_dimensions",
                format!("{bdims:?} must be strictly increasing"),
            ));
        }
        for (&d, &od) in x.shape.iter().zip(bdims) {
            match shape.get(od) {
                Some(&t) if d == 1 || d == t => {}
                _ => {
                    return Err(Error::shape(
                        name,
                        &[&x.shape, shape],
                        format!("operand axis of size {d} cannot broadcast to output axis {od}"),
                    ))
                }
            }
        }
        checked_size(shape)?;
        Ok(vec![Aval::weak(shape.to_vec(), x.dtype, x.weak_type)])
    }

    fn kernel(
        &self, _ctx: &ExecCtx, args: &[&HostArray], outs: Vec<Aval>,
    ) -> Result<Vec<HostArray>> {
        let name = self.name();
        unary_kernel(name, args, outs, |x| {
            kernels::broadcast_in_dim(x, &self.shape, &self.broadcast_dimensions)
        })
    }

    crate::jvp_by!(crate::prims::jvp::jvp_linear);

    /// Sums over the new axes and over the size-1 operand axes that
    /// expanded, then reshapes to the operand's shape.
    fn transpose(
        &self, b: &mut Builder, cts: &[Option<Atom>], operands: &[Operand],
    ) -> TransposeOut {
        transpose_unary(self.name(), b, cts, operands, |b, ct, a| {
            let (shape, bdims) = (&self.shape, &self.broadcast_dimensions);
            let mut axes: Vec<usize> = Vec::new();
            for d in 0..shape.len() {
                let expanded = match bdims.iter().position(|&bd| bd == d) {
                    None => true,
                    Some(i) => a.shape.get(i) == Some(&1) && shape.get(d) != Some(&1),
                };
                if expanded {
                    axes.push(d);
                }
            }
            let summed = if axes.is_empty() {
                ct
            } else {
                b.reduce(ReduceOp::Sum, ct, axes)?
            };
            reshape_to(b, summed, &a.shape)
        })
    }

    /// The mapped axis goes where it keeps `broadcast_dimensions`
    /// increasing (right after the output axis of the operand axis before
    /// it), so the operand is never transposed.
    fn batch(
        &self, b: &mut Builder, operands: &[Atom], dims: &[Option<usize>], size: usize,
    ) -> BatchOut {
        let name = self.name();
        batch_one(self, b, operands, dims, |b, x, d| {
            let out_d = match d.checked_sub(1) {
                None => 0,
                Some(prev) => self
                    .broadcast_dimensions
                    .get(prev)
                    .ok_or_else(|| super::batch_error(name, "batch dim out of range"))?
                    .saturating_add(1),
            };
            let mut bdims: Vec<usize> = self
                .broadcast_dimensions
                .iter()
                .map(|&o| shift(o, out_d))
                .collect();
            bdims.insert(d.min(bdims.len()), out_d);
            let prim = BroadcastInDim {
                shape: insert_axis(&self.shape, out_d, size),
                broadcast_dimensions: bdims,
            };
            emit_batched(b, prim, vec![x.clone()], Some(out_d))
        })
    }
}

// ---------------------------------------------------------------- reshape

impl Family for Reshape {
    crate::family_identity!("reshape", example = Reshape { new_sizes: vec![1] });

    fn abstract_eval(&self, ins: &[Aval]) -> Result<Vec<Aval>> {
        let name = self.name();
        let new_sizes = &self.new_sizes;
        let [x] = operands::<_, 1>(name, ins)?;
        if checked_size(new_sizes)? != x.size()? {
            return Err(Error::shape(
                name,
                &[&x.shape, new_sizes],
                "reshape must preserve the number of elements",
            ));
        }
        Ok(vec![Aval::weak(new_sizes.clone(), x.dtype, x.weak_type)])
    }

    same_data_rules!();

    /// The mapped axis moves to the front and leads the new sizes.
    fn batch(
        &self, b: &mut Builder, operands: &[Atom], dims: &[Option<usize>], size: usize,
    ) -> BatchOut {
        batch_one(self, b, operands, dims, |b, x, d| {
            let x = move_axis(b, x.clone(), d, 0)?;
            let prim = Reshape {
                new_sizes: insert_axis(&self.new_sizes, 0, size),
            };
            emit_batched(b, prim, vec![x], Some(0))
        })
    }
}

// -------------------------------------------------------------- transpose

impl Family for Transpose {
    crate::family_identity!(
        "transpose",
        example = Transpose {
            permutation: vec![0]
        }
    );

    fn abstract_eval(&self, ins: &[Aval]) -> Result<Vec<Aval>> {
        let name = self.name();
        let permutation = &self.permutation;
        let [x] = operands::<_, 1>(name, ins)?;
        if !is_permutation(permutation, x.ndim()) {
            return Err(Error::param(
                name,
                "permutation",
                format!(
                    "{permutation:?} is not a permutation of the {} axes of {}",
                    x.ndim(),
                    x.short()
                ),
            ));
        }
        let shape = gather_dims(&x.shape, permutation);
        Ok(vec![Aval::weak(shape, x.dtype, x.weak_type)])
    }

    fn kernel(
        &self, _ctx: &ExecCtx, args: &[&HostArray], outs: Vec<Aval>,
    ) -> Result<Vec<HostArray>> {
        let name = self.name();
        unary_kernel(name, args, outs, |x| {
            kernels::transpose(x, &self.permutation)
        })
    }

    crate::jvp_by!(crate::prims::jvp::jvp_linear);

    /// The transpose by the inverse permutation.
    fn transpose(
        &self, b: &mut Builder, cts: &[Option<Atom>], operands: &[Operand],
    ) -> TransposeOut {
        let Some(ct) = single_ct(self.name(), cts)? else {
            return Ok(vec![None; operands.len()]);
        };
        let [Operand::Linear(_)] = operands else {
            return Ok(vec![None; operands.len()]);
        };
        let permutation = &self.permutation;
        let inverse: Vec<usize> = (0..permutation.len())
            .map(|i| permutation.iter().position(|&q| q == i).unwrap_or(i))
            .collect();
        let c = emit1(
            b,
            Transpose {
                permutation: inverse,
            },
            vec![ct],
        )?;
        Ok(vec![Some(c)])
    }

    /// The mapped axis stays where it is; the permutation is extended
    /// around it.
    fn batch(
        &self, b: &mut Builder, operands: &[Atom], dims: &[Option<usize>], _size: usize,
    ) -> BatchOut {
        batch_one(self, b, operands, dims, |b, x, d| {
            let mut perm: Vec<usize> = self.permutation.iter().map(|&k| shift(k, d)).collect();
            perm.insert(d.min(perm.len()), d);
            emit_batched(b, Transpose { permutation: perm }, vec![x.clone()], Some(d))
        })
    }
}

// ---------------------------------------------------------------- squeeze

impl Family for Squeeze {
    crate::family_identity!(
        "squeeze",
        example = Squeeze {
            dimensions: vec![0]
        }
    );

    fn abstract_eval(&self, ins: &[Aval]) -> Result<Vec<Aval>> {
        let name = self.name();
        let dimensions = &self.dimensions;
        let [x] = operands::<_, 1>(name, ins)?;
        check_axes(name, "dimensions", dimensions, x.ndim())?;
        if let Some(d) = dimensions.iter().find(|&&d| x.shape.get(d) != Some(&1)) {
            return Err(Error::shape(
                name,
                &[&x.shape],
                format!("cannot squeeze axis {d} of size other than 1"),
            ));
        }
        Ok(vec![Aval::weak(
            drop_dims(&x.shape, dimensions),
            x.dtype,
            x.weak_type,
        )])
    }

    same_data_rules!();

    /// The squeezed axes shift around the mapped one.
    fn batch(
        &self, b: &mut Builder, operands: &[Atom], dims: &[Option<usize>], _size: usize,
    ) -> BatchOut {
        batch_one(self, b, operands, dims, |b, x, d| {
            let (dimensions, out_d) = axes_around(&self.dimensions, d);
            emit_batched(b, Squeeze { dimensions }, vec![x.clone()], Some(out_d))
        })
    }
}
