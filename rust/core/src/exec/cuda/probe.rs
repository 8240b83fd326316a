//! Device probe through cudarc with dynamic loading. cudarc *panics* when a
//! library it loads is missing, so every first touch of a library runs
//! inside `catch_unwind`, and any failure reads as "no CUDA device".
//!
//! This is the only module of the probe with `unsafe`: cudarc's
//! `is_culib_present` functions are `unsafe fn` (they dlopen the library).

use super::DeviceInfo;
use crate::error::{Error, Result};
use cudarc::driver::CudaContext;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs `f`, turning a panic into `None`.
pub(super) fn guarded<T>(f: impl FnOnce() -> T) -> Option<T> {
    catch_unwind(AssertUnwindSafe(f)).ok()
}

/// Whether the driver, NVRTC and cuBLAS libraries can all be loaded.
#[allow(unsafe_code)]
fn libraries_present() -> bool {
    // SAFETY: each call only tries to dlopen the library and reports
    // whether it loaded; a missing library panics, which `guarded` catches.
    let driver = guarded(|| unsafe { cudarc::driver::sys::is_culib_present() });
    let nvrtc = guarded(|| unsafe { cudarc::nvrtc::sys::is_culib_present() });
    let cublas = guarded(|| unsafe { cudarc::cublas::sys::is_culib_present() });
    [driver, nvrtc, cublas].iter().all(|p| *p == Some(true))
}

/// Whether the cuFFT library loads (checked when a device is set up: a
/// device without it runs `fft` on the host).
#[allow(unsafe_code)]
pub(super) fn cufft_present() -> bool {
    // SAFETY: as in `libraries_present`.
    guarded(|| unsafe { cudarc::cufft::sys::is_culib_present() }) == Some(true)
}

/// Whether the NVRTC library loads (code generation can be checked by
/// compiling to PTX without a GPU or a driver).
#[allow(unsafe_code)]
pub fn nvrtc_present() -> bool {
    // SAFETY: as in `libraries_present`.
    guarded(|| unsafe { cudarc::nvrtc::sys::is_culib_present() }) == Some(true)
}

pub(super) fn device_count() -> usize {
    if !libraries_present() {
        return 0;
    }
    match guarded(CudaContext::device_count) {
        Some(Ok(n)) => usize::try_from(n).unwrap_or(0),
        _ => 0,
    }
}

/// The error of a failed CUDA operation `op`.
pub(super) fn device_error(op: &str, e: impl std::fmt::Debug) -> Error {
    Error::Device(format!("CUDA {op} failed: {e:?}"))
}

pub(super) fn device_info(ordinal: usize) -> Result<DeviceInfo> {
    let info = guarded(|| -> Result<DeviceInfo> {
        let ctx = CudaContext::new(ordinal).map_err(|e| device_error("context creation", e))?;
        let name = ctx.name().map_err(|e| device_error("device name", e))?;
        let (major, minor) = ctx
            .compute_capability()
            .map_err(|e| device_error("compute capability", e))?;
        let memory_bytes = ctx
            .total_mem()
            .map_err(|e| device_error("total memory", e))?;
        Ok(DeviceInfo {
            ordinal,
            name,
            compute_capability: (
                u32::try_from(major).unwrap_or(0),
                u32::try_from(minor).unwrap_or(0),
            ),
            memory_bytes,
        })
    });
    info.unwrap_or_else(|| Err(super::no_device(ordinal, 0)))
}
