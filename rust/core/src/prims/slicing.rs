//! Slicing primitives: `slice` (static), `dynamic_slice` and
//! `dynamic_update_slice` (run-time, clamped start indices).

crate::declare_params! {
    /// Static slice `[start, limit)` with optional `strides` per axis.
    pub struct Slice {
        start_indices: Vec<usize>,
        limit_indices: Vec<usize>,
        strides: Option<Vec<usize>>,
    }
}

crate::declare_params! {
    /// `dynamic_slice(operand, *start_indices)`: a `slice_sizes` window at
    /// run-time (clamped) start indices.
    pub struct DynamicSlice {
        slice_sizes: Vec<usize>,
    }
}

/// `dynamic_update_slice(operand, update, *start_indices)`: `update`
/// written at run-time (clamped) start indices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DynamicUpdateSlice;

impl DynamicUpdateSlice {
    /// `dynamic_update_slice` has no params.
    pub fn to_params(&self) -> super::params::ParamList {
        Vec::new()
    }
}
