//! Structural primitives: data movement with static shapes
//! (`broadcast_in_dim`, `reshape`, `transpose`, `squeeze`, `rev`, `iota`,
//! `pad`, `concatenate`), one [`Family`] impl per param struct.
//!
//! This file holds `iota` and `rev` and the helpers the impls share;
//! `shape_ops.rs` holds `broadcast_in_dim`, `reshape`, `transpose` and
//! `squeeze`, `pad_concat.rs` `pad` and `concatenate`. The CPU kernels are in
//! `prims/kernels/structural.rs`.

mod pad_concat;
mod shape_ops;

pub use pad_concat::{Concatenate, Pad};
pub use shape_ops::{BroadcastInDim, Reshape, Squeeze, Transpose};

use super::batch::{batch_error, batch_one, emit_batched, shift, unbatched};
use super::family::TransposeOut;
use super::family::{emit1, finish, operands, unary_kernel, BatchOut, Family, JvpOut, Operand};
use super::jvp::jvp_linear_prefix;
use super::kernel::structural as kernels;
use super::shape::check_axes;
use super::transpose::transpose_unary;
use crate::array::{checked_size, HostArray};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::exec::ExecCtx;
use crate::ir::builder::Builder;
use crate::ir::{Atom, Aval};

crate::declare_params! {
    /// Reverses the order of elements along `dimensions`.
    pub struct Rev {
        dimensions: Vec<usize>,
    }
}

crate::declare_params! {
    /// `0, 1, 2, ...` along `dimension` of an array of `shape`.
    pub struct Iota {
        dtype: DType,
        shape: Vec<usize>,
        dimension: usize,
    }
}

// ------------------------------------------------------------ shared helpers

// ------------------------------------------------------------------- iota

impl Family for Iota {
    crate::family_identity!(
        "iota",
        example = Iota {
            dtype: DType::I32,
            shape: vec![1],
            dimension: 0
        }
    );

    /// No operands; a numeric (or complex) array of `shape`.
    fn abstract_eval(&self, ins: &[Aval]) -> Result<Vec<Aval>> {
        let name = self.name();
        let Iota {
            dtype,
            shape,
            dimension,
        } = self;
        operands::<_, 0>(name, ins)?;
        if *dimension >= shape.len() {
            return Err(Error::param(
                name,
                "dimension",
                format!("{dimension} out of range for shape {shape:?}"),
            ));
        }
        if !(dtype.is_numeric() || dtype.is_complex()) {
            return Err(Error::dtype(name, &[*dtype], "requires a numeric dtype"));
        }
        checked_size(shape)?;
        Ok(vec![Aval::new(shape.clone(), *dtype)])
    }

    fn kernel(
        &self, _ctx: &ExecCtx, _args: &[&HostArray], outs: Vec<Aval>,
    ) -> Result<Vec<HostArray>> {
        let buf = kernels::iota(self.dtype, &self.shape, self.dimension)?;
        finish(self.name(), outs, buf)
    }

    // Integer (index) values: zero tangents.
    crate::zero_derivative_rules!(not_differentiable);

    /// No operands, so nothing is batched: the equation as is.
    fn batch(
        &self, b: &mut Builder, operands: &[Atom], _dims: &[Option<usize>], _size: usize,
    ) -> BatchOut {
        unbatched(self, b, operands)
    }
}

// -------------------------------------------------------------------- rev

impl Family for Rev {
    crate::family_identity!(
        "rev",
        example = Rev {
            dimensions: vec![0]
        }
    );

    fn abstract_eval(&self, ins: &[Aval]) -> Result<Vec<Aval>> {
        let name = self.name();
        let [x] = operands::<_, 1>(name, ins)?;
        check_axes(name, "dimensions", &self.dimensions, x.ndim())?;
        Ok(vec![x.clone()])
    }

    fn kernel(
        &self, _ctx: &ExecCtx, args: &[&HostArray], outs: Vec<Aval>,
    ) -> Result<Vec<HostArray>> {
        unary_kernel(self.name(), args, outs, |x| {
            kernels::rev(x, &self.dimensions)
        })
    }

    /// Linear: the tangent reversed the same way.
    fn jvp(&self, b: &mut Builder, primals: &[Atom], tangents: &[Option<Atom>]) -> JvpOut {
        jvp_linear_prefix(self, 1, b, primals, tangents)
    }

    /// `rev` is its own transpose.
    fn transpose(
        &self, b: &mut Builder, cts: &[Option<Atom>], operands: &[Operand],
    ) -> TransposeOut {
        transpose_unary(self.name(), b, cts, operands, |b, ct, _a| {
            emit1(b, self.clone(), vec![ct])
        })
    }

    /// The reversed axes shift around the mapped one.
    fn batch(
        &self, b: &mut Builder, operands: &[Atom], dims: &[Option<usize>], _size: usize,
    ) -> BatchOut {
        batch_one(self, b, operands, dims, |b, x, d| {
            let dimensions = self.dimensions.iter().map(|&k| shift(k, d)).collect();
            emit_batched(b, Rev { dimensions }, vec![x.clone()], Some(d))
        })
    }
}
