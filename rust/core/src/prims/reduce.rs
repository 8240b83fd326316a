//! Reductions over axes (`reduce_sum`, ...), the index of the extreme
//! element (`argmax`, `argmin`) and inclusive scans (`cumsum`, ...).

use super::params::{Lookup, ParamField, ParamList};
use super::{ArgOp, CumOp, ReduceOp};
use crate::dtype::DType;
use crate::error::{Error, Result};

crate::declare_params! {
    /// `op` over `axes`.
    pub struct Reduce {
        @name op: ReduceOp,
        axes: Vec<usize>,
    }
}

/// `argmax` / `argmin` along one axis (JAX's params: `axes=(axis,)`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ArgReduce {
    pub op: ArgOp,
    pub axis: usize,
    pub index_dtype: DType,
}

impl ArgReduce {
    /// The params JAX shows: the axis as a one-element `axes` tuple.
    pub fn to_params(&self) -> ParamList {
        vec![
            ("axes", vec![self.axis].to_param()),
            ("index_dtype", self.index_dtype.to_param()),
        ]
    }

    /// Reads the params (exactly one axis) and the op from the name.
    pub fn read(p: &Lookup<'_>) -> Result<ArgReduce> {
        let op = ArgOp::from_name(p.name())
            .ok_or_else(|| Error::UnknownPrimitive(p.name().to_string()))?;
        let axes = p.dims("axes")?;
        let [axis] = axes.as_slice() else {
            return Err(Error::param(
                op.name(),
                "axes",
                format!("expected exactly one axis, got {axes:?}"),
            ));
        };
        Ok(ArgReduce {
            op,
            axis: *axis,
            index_dtype: p.dtype("index_dtype")?,
        })
    }
}

crate::declare_params! {
    /// Inclusive scan along `axis` (from the end when `reverse`).
    pub struct Cumulative {
        @name op: CumOp,
        axis: usize,
        reverse: bool = false,
    }
}
