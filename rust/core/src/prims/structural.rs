//! Structural primitives: data movement with static shapes
//! (`broadcast_in_dim`, `reshape`, `transpose`, `squeeze`, `rev`, `iota`,
//! `pad`, `concatenate`).

use super::params::Param;
use crate::dtype::DType;

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

crate::declare_params! {
    /// `pad(operand, padding_value)` with `(lo, hi, interior)` per axis;
    /// negative `lo`/`hi` remove elements.
    pub struct Pad {
        padding_config: Vec<(i64, i64, i64)>,
    }
}

crate::declare_params! {
    /// Joins N operands along `dimension`.
    pub struct Concatenate {
        dimension: usize,
    }
}
