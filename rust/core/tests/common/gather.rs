//! Gather and scatter primitives from their dimension numbers (shared by
//! the gather/scatter kernel tests and the CUDA lowering tests).
use microjax::prims::gather::{
    GatherDims, GatherParams, Mode, ScatterDims, ScatterOp, ScatterParams,
};
use microjax::{Primitive, Scalar};

/// A gather's dimension numbers (`lax.GatherDimensionNumbers`) and slice
/// sizes.
#[derive(Clone, Copy)]
pub struct GatherSpec<'a> {
    pub offset: &'a [usize],
    pub collapsed: &'a [usize],
    pub map: &'a [usize],
    pub obatch: &'a [usize],
    pub ibatch: &'a [usize],
    pub sizes: &'a [usize],
}

/// `gather` by `g` in `mode`, out-of-bounds slices filled with `fill`
/// (the dtype's default where `None`).
pub fn gather(g: &GatherSpec, mode: Mode, fill: Option<f64>) -> Primitive {
    Primitive::Gather(Box::new(GatherParams {
        dims: GatherDims {
            offset_dims: g.offset.to_vec(),
            collapsed_slice_dims: g.collapsed.to_vec(),
            start_index_map: g.map.to_vec(),
            operand_batching_dims: g.obatch.to_vec(),
            start_indices_batching_dims: g.ibatch.to_vec(),
        },
        slice_sizes: g.sizes.to_vec(),
        indices_are_sorted: false,
        unique_indices: false,
        mode,
        fill_value: fill.map(Scalar::Float),
    }))
}

/// [`gather`] from the dimension numbers, default fill.
pub fn gather_p(
    offset: &[usize], collapsed: &[usize], map: &[usize], obatch: &[usize], ibatch: &[usize],
    sizes: &[usize], mode: Mode,
) -> Primitive {
    let g = GatherSpec {
        offset,
        collapsed,
        map,
        obatch,
        ibatch,
        sizes,
    };
    gather(&g, mode, None)
}

/// `x[idx]` along axis 0 of a 2-d operand with `cols` columns.
pub fn take_rows(cols: usize, mode: Mode) -> Primitive {
    gather_p(&[1], &[0], &[0], &[], &[], &[1, cols], mode)
}

/// `scatter` combining by `op` with the dimension numbers
/// (`lax.ScatterDimensionNumbers`), in `mode`, `unique` indices promised
/// or not.
#[allow(clippy::too_many_arguments)]
pub fn scatter_p(
    op: ScatterOp, window: &[usize], inserted: &[usize], map: &[usize], obatch: &[usize],
    ibatch: &[usize], mode: Mode, unique: bool,
) -> Primitive {
    Primitive::Scatter(Box::new(ScatterParams {
        op,
        dims: ScatterDims {
            update_window_dims: window.to_vec(),
            inserted_window_dims: inserted.to_vec(),
            scatter_dims_to_operand_dims: map.to_vec(),
            operand_batching_dims: obatch.to_vec(),
            scatter_indices_batching_dims: ibatch.to_vec(),
        },
        indices_are_sorted: false,
        unique_indices: unique,
        mode,
    }))
}

/// `x.at[idx].op(u)` of whole rows along axis 0 of a 2-d operand (the
/// transpose of [`take_rows`] for `Add`).
pub fn scatter_rows(op: ScatterOp, mode: Mode) -> Primitive {
    scatter_p(op, &[1], &[0], &[0], &[], &[], mode, false)
}
