//! `select_n` and `clamp`: elementwise choices between operands.

/// `select_n(pred, *cases)`: case `pred` of each element (a bool `pred`
/// picks `cases[1]` where true).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SelectN;

impl SelectN {
    /// `select_n` has no params.
    pub fn to_params(&self) -> super::params::ParamList {
        Vec::new()
    }
}

/// `clamp(min, x, max)`; `min`/`max` are rank 0 or shaped like `x`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Clamp;

impl Clamp {
    /// `clamp` has no params.
    pub fn to_params(&self) -> super::params::ParamList {
        Vec::new()
    }
}
