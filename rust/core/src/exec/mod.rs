//! Executors: the reference interpreter (the oracle) and, later, the
//! compiled CPU and CUDA executors.

pub mod interp;
pub mod limits;
