//! Elementwise numeric primitives with params or a bool result:
//! `integer_pow`, `round`, `is_finite`.

use super::RoundingMethod;

crate::declare_params! {
    /// `x ** y` for a static integer `y`.
    pub struct IntegerPow {
        y: i32,
    }
}

crate::declare_params! {
    /// Rounds to an integral value; halfway cases per `rounding_method`.
    pub struct Round {
        rounding_method: RoundingMethod = RoundingMethod::AwayFromZero,
    }
}

/// `isfinite`, producing bool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct IsFinite;

impl IsFinite {
    /// `is_finite` has no params.
    pub fn to_params(&self) -> super::params::ParamList {
        Vec::new()
    }
}
