//! CUDA executor (device probe always; the runtime behind cargo feature
//! `cuda`). `codegen` is always compiled: it turns the compiled plan's
//! fusion groups into CUDA C source with no CUDA types, so its output is
//! tested on machines without a GPU.
//!
//! Without the `cuda` feature, or without a driver / NVRTC / cuBLAS, or
//! without a device, [`device_count`] is 0 and [`device_info`] is an
//! `Error::Device("no CUDA device ...")`; nothing here panics.

pub mod bytes;
pub mod codegen;
pub mod collective;
pub mod complex;
pub mod driver;
pub mod fft;
pub mod indexing;
pub mod kernels;
pub mod steps;
pub mod structural;

#[cfg(feature = "cuda")]
mod control;
#[cfg(feature = "cuda")]
mod exec;
#[cfg(feature = "cuda")]
mod launch;
#[cfg(feature = "cuda")]
pub mod nccl;
#[cfg(feature = "cuda")]
mod probe;
#[cfg(feature = "cuda")]
mod runtime;

#[cfg(feature = "cuda")]
pub use exec::{to_device, CudaPlan, DeviceArray};
pub use fft::{CufftType, FftSpec};
#[cfg(feature = "cuda")]
pub use probe::nvrtc_present;

/// The GPU device registry's lock for [`crate::exec::fork`], if free (a
/// unit when no device was opened yet).
#[cfg(feature = "cuda")]
pub fn try_hold() -> Option<Box<dyn std::any::Any>> {
    runtime::try_hold()
}
#[cfg(feature = "cuda")]
pub use runtime::{cache_path, compile as nvrtc_compile, nvrtc_options, size_class};
pub use steps::{device_plan, host_steps, kernel_sources, DeviceStep, GemmSpec};

use crate::error::{Error, Result};

/// What the driver reports about one device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceInfo {
    pub ordinal: usize,
    pub name: String,
    /// `(major, minor)`, e.g. `(9, 0)` for an H100.
    pub compute_capability: (u32, u32),
    pub memory_bytes: usize,
}

/// Number of usable CUDA devices (0 without the feature, the libraries or a
/// device).
pub fn device_count() -> usize {
    #[cfg(feature = "cuda")]
    {
        probe::device_count()
    }
    #[cfg(not(feature = "cuda"))]
    {
        0
    }
}

/// Name, compute capability and memory of device `ordinal`.
pub fn device_info(ordinal: usize) -> Result<DeviceInfo> {
    let count = device_count();
    if ordinal >= count {
        return Err(no_device(ordinal, count));
    }
    #[cfg(feature = "cuda")]
    {
        probe::device_info(ordinal)
    }
    #[cfg(not(feature = "cuda"))]
    {
        Err(no_device(ordinal, count))
    }
}

/// The error every device entry point returns when there is no device.
pub fn no_device(ordinal: usize, count: usize) -> Error {
    let why = if cfg!(feature = "cuda") {
        "no driver, NVRTC or cuBLAS library, or no such device"
    } else {
        "microjax was built without the `cuda` feature"
    };
    Error::Device(format!(
        "no CUDA device {ordinal} ({count} device(s) found: {why})"
    ))
}
