//! Executors: the reference interpreter (the oracle) and the compiled CPU
//! executor (`jit`, exported programs and control-flow bodies run on it).

pub mod budget;
pub mod cache;
pub mod compiled;
pub mod cuda;
pub mod determinism;
pub mod interp;
pub mod limits;
pub mod pool;

pub use determinism::{determinism, set_default_determinism, with_determinism, Determinism};

use crate::array::HostArray;
use crate::error::Result;
use std::sync::Arc;

/// Something that runs a closed program on shared values: the reference
/// interpreter's [`interp::Prepared`] or a [`compiled::Compiled`] plan.
/// Control-flow primitives run their bodies through it.
pub trait Runner: Send + Sync {
    /// Runs the program on `args`, returning its outputs.
    fn run(&self, args: &[Arc<HostArray>]) -> Result<Vec<Arc<HostArray>>>;
}

impl Runner for interp::Prepared {
    fn run(&self, args: &[Arc<HostArray>]) -> Result<Vec<Arc<HostArray>>> {
        interp::Prepared::run(self, args)
    }
}
