//! `convert_element_type` and `stop_gradient`.

use crate::dtype::DType;

crate::declare_params! {
    /// Converts to `new_dtype` (XLA's rules: float to int truncates and
    /// saturates, NaN to 0; int to int wraps; x to bool is `x != 0`).
    pub struct ConvertElementType {
        new_dtype: DType,
        weak_type: bool = false,
    }
}

/// Identity on values with a zero derivative.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StopGradient;

impl StopGradient {
    /// `stop_gradient` has no params.
    pub fn to_params(&self) -> super::params::ParamList {
        Vec::new()
    }
}
