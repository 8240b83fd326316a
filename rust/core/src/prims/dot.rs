//! `dot_general`: contraction over paired axes with batch axes.

use super::params::Param;
use super::DotDims;
use crate::dtype::DType;

crate::declare_params! {
    /// Contracts `dimension_numbers`' paired axes; the output is batch axes,
    /// then lhs free axes, then rhs free axes.
    pub struct DotGeneral {
        dims: DotDims as dimension_numbers,
        const precision = Param::None,
        preferred_element_type: Option<DType>,
    }
}
