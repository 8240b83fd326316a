//! Per-device runtime state (feature `cuda`): one context, one stream and
//! one cuBLAS handle per device, a caching allocator and the kernel cache.
//!
//! * Allocator: device memory is untyped bytes. A request is rounded up to
//!   its size class (powers of two from 256 bytes to 1 MiB, then multiples
//!   of 2 MiB); a dropped buffer goes back to its class's free list. When
//!   the driver refuses an allocation the free lists are released and the
//!   allocation retried once.
//! * Kernels: by name (the name is a hash of the source, see
//!   [`super::codegen`]) in memory; PTX on disk under
//!   `$XDG_CACHE_HOME` (or `~/.cache`)`/microjax_rs/cuda/<hash>-sm<XY>.ptx`.
//!   NVRTC compiles for `compute_XY` of the device with `--fmad=false`, so
//!   no multiply-add is contracted and a kernel's bits do not depend on the
//!   compiler's choices.
//! * cuFFT plans: made on first use, when the cuFFT library loads (probed
//!   once per device: without it `fft` runs on the host), kept in a
//!   bounded least-recently-used cache ([`super::fft::PlanCache`]).
//! * Everything runs on the device's one stream, in order; host copies
//!   synchronize it.

use super::codegen::KernelSource;
use super::fft::{FftSpec, PlanCache, PlanKey, PLAN_CACHE_SIZE};
use super::launch;
use super::probe::{device_error, guarded};
use crate::error::{Error, Result};
use cudarc::cublas::CudaBlas;
use cudarc::cufft::CudaFft;
use cudarc::driver::{CudaContext, CudaFunction, CudaSlice, CudaStream};
use cudarc::nvrtc::{CompileOptions, Ptx};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// One device's state.
pub(super) struct Device {
    pub(super) ordinal: usize,
    pub(super) ctx: Arc<CudaContext>,
    pub(super) stream: Arc<CudaStream>,
    pub(super) blas: CudaBlas,
    /// `(major, minor)` compute capability.
    pub(super) arch: (i32, i32),
    free: Mutex<HashMap<usize, Vec<CudaSlice<u8>>>>,
    functions: Mutex<HashMap<String, CudaFunction>>,
    /// Whether the cuFFT library loaded.
    pub(super) has_cufft: bool,
    fft_plans: Mutex<PlanCache<FftPlan>>,
}

/// A cached cuFFT plan; locked while it runs (one execution at a time per
/// plan, as cuFFT requires of a plan shared between threads).
pub(super) type FftPlan = Arc<Mutex<CudaFft>>;

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CudaDevice({})", self.ordinal)
    }
}

fn lock<T>(m: &Mutex<T>) -> Result<MutexGuard<'_, T>> {
    m.lock()
        .map_err(|_| Error::Device("CUDA runtime: a lock was poisoned".into()))
}

static DEVICES: OnceLock<Mutex<HashMap<usize, Arc<Device>>>> = OnceLock::new();

/// The registry's guard if it is free (see [`super::try_hold`]).
pub(super) fn try_hold() -> Option<Box<dyn std::any::Any>> {
    match DEVICES.get() {
        None => Some(Box::new(())),
        Some(m) => crate::exec::fork::try_guard(m).map(|g| Box::new(g) as Box<dyn std::any::Any>),
    }
}

/// The state of device `ordinal`, created on first use.
pub(super) fn device(ordinal: usize) -> Result<Arc<Device>> {
    let count = super::device_count();
    if ordinal >= count {
        return Err(super::no_device(ordinal, count));
    }
    let map = DEVICES.get_or_init(|| Mutex::new(HashMap::new()));
    let mut map = lock(map)?;
    if let Some(d) = map.get(&ordinal) {
        return Ok(d.clone());
    }
    let dev = guarded(|| Device::new(ordinal)).unwrap_or_else(|| {
        Err(Error::Device(format!(
            "CUDA device {ordinal}: setup panicked"
        )))
    })?;
    let dev = Arc::new(dev);
    map.insert(ordinal, dev.clone());
    Ok(dev)
}

/// The allocation size class of a request of `bytes`.
pub fn size_class(bytes: usize) -> usize {
    const MIB: usize = 1 << 20;
    const CHUNK: usize = 2 << 20;
    if bytes <= MIB {
        bytes.max(256).next_power_of_two()
    } else {
        bytes.div_ceil(CHUNK).saturating_mul(CHUNK)
    }
}

impl Device {
    fn new(ordinal: usize) -> Result<Device> {
        let ctx = CudaContext::new(ordinal).map_err(|e| device_error("context creation", e))?;
        let arch = ctx
            .compute_capability()
            .map_err(|e| device_error("compute capability", e))?;
        let stream = ctx.default_stream();
        let blas = CudaBlas::new(stream.clone()).map_err(|e| device_error("cuBLAS init", e))?;
        Ok(Device {
            ordinal,
            ctx,
            stream,
            blas,
            arch,
            free: Mutex::new(HashMap::new()),
            functions: Mutex::new(HashMap::new()),
            has_cufft: super::probe::cufft_present(),
            fft_plans: Mutex::new(PlanCache::new(PLAN_CACHE_SIZE)),
        })
    }

    /// The cuFFT plan of `spec` (cached; an error without the library).
    pub(super) fn fft_plan(&self, spec: &FftSpec) -> Result<FftPlan> {
        if !self.has_cufft {
            return Err(Error::Device(format!(
                "CUDA device {}: the cuFFT library did not load",
                self.ordinal
            )));
        }
        lock(&self.fft_plans)?.get_or_make(&PlanKey::of(spec), || {
            Ok(Arc::new(Mutex::new(launch::fft_plan(spec, &self.stream)?)))
        })
    }

    /// Runs `spec`'s transform from `input` into `output` (unnormalized;
    /// `input` is overwritten by a complex-to-real transform).
    pub(super) fn run_fft(
        &self, spec: &FftSpec, input: &DeviceBuffer, output: &mut DeviceBuffer,
    ) -> Result<()> {
        let plan = self.fft_plan(spec)?;
        let plan = lock(&plan)?;
        launch::run_fft(
            &plan,
            spec,
            &self.stream,
            input.slice()?,
            output.slice_mut()?,
        )
    }

    /// A buffer of at least `bytes` bytes (contents undefined).
    pub(super) fn alloc(self: &Arc<Self>, bytes: usize) -> Result<DeviceBuffer> {
        let class = size_class(bytes);
        let reused = lock(&self.free)?.get_mut(&class).and_then(Vec::pop);
        let slice = match reused {
            Some(s) => s,
            None => match launch::alloc_bytes(&self.stream, class) {
                Ok(s) => s,
                Err(_) => {
                    // Give the cached buffers back to the driver and retry.
                    lock(&self.free)?.clear();
                    launch::alloc_bytes(&self.stream, class).map_err(|e| {
                        Error::Device(format!(
                            "CUDA allocation of {bytes} bytes on device {} failed: {e:?}",
                            self.ordinal
                        ))
                    })?
                }
            },
        };
        Ok(DeviceBuffer {
            slice: Some(slice),
            bytes,
            device: self.clone(),
        })
    }

    fn release(&self, slice: CudaSlice<u8>) {
        let class = slice.len();
        if let Ok(mut free) = self.free.lock() {
            free.entry(class).or_default().push(slice);
        }
    }

    /// Copies `bytes` into a new device buffer.
    pub(super) fn upload(self: &Arc<Self>, bytes: &[u8]) -> Result<DeviceBuffer> {
        let mut buf = self.alloc(bytes.len())?;
        if !bytes.is_empty() {
            let dst = buf.slice_mut()?;
            self.stream
                .memcpy_htod(bytes, dst)
                .map_err(|e| device_error("host-to-device copy", e))?;
        }
        Ok(buf)
    }

    /// Copies `n` bytes from `src` at byte `from` to `dst` at byte `to`, on
    /// the stream (device to device). Both ranges are checked against the
    /// bytes in use first: cudarc asserts on a short destination.
    pub(super) fn copy(
        &self, src: &DeviceBuffer, from: usize, dst: &mut DeviceBuffer, to: usize, n: usize,
    ) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        let range = |at: usize, len: usize| {
            at.checked_add(n)
                .filter(|end| *end <= len)
                .map(|end| at..end)
                .ok_or_else(|| {
                    Error::Device(format!(
                        "device copy of {n} bytes at {at} outside a buffer of {len}"
                    ))
                })
        };
        let (rs, rd) = (range(from, src.bytes)?, range(to, dst.bytes)?);
        let outside = || Error::Device("device copy outside its allocation".into());
        let s = src.slice()?.try_slice(rs).ok_or_else(outside)?;
        let mut d = dst.slice_mut()?.try_slice_mut(rd).ok_or_else(outside)?;
        self.stream
            .memcpy_dtod(&s, &mut d)
            .map_err(|e| device_error("device-to-device copy", e))
    }

    /// Waits until every operation queued on the stream has finished.
    pub(super) fn synchronize(&self) -> Result<()> {
        self.stream
            .synchronize()
            .map_err(|e| device_error("stream synchronize", e))
    }

    /// The contents of `buf` on the host (waits for the stream).
    pub(super) fn download(&self, buf: &DeviceBuffer) -> Result<Vec<u8>> {
        if buf.bytes == 0 {
            return Ok(Vec::new());
        }
        let view = buf
            .slice()?
            .try_slice(0..buf.bytes)
            .ok_or_else(|| Error::Device("device buffer shorter than its contents".into()))?;
        // The host copy is allocated fallibly (cudarc's `clone_dtoh` would
        // not be), exactly as long as the view.
        let mut out = crate::array::alloc::filled("device-to-host copy", 0u8, buf.bytes)?;
        self.stream
            .memcpy_dtoh(&view, &mut out)
            .map_err(|e| device_error("device-to-host copy", e))?;
        self.stream
            .synchronize()
            .map_err(|e| device_error("stream synchronize", e))?;
        Ok(out)
    }

    /// The loaded function of `k`, compiled (or read from the disk cache)
    /// on first use.
    pub(super) fn function(&self, k: &KernelSource) -> Result<CudaFunction> {
        if let Some(f) = lock(&self.functions)?.get(&k.name) {
            return Ok(f.clone());
        }
        let path = cache_path(&k.name, self.arch);
        let cached = path
            .as_ref()
            .and_then(|p| std::fs::read_to_string(p).ok())
            .and_then(|src| self.load(&src, &k.name).ok());
        let f = match cached {
            Some(f) => f,
            None => {
                let ptx = compile(&k.source, self.arch)?;
                if let Some(p) = &path {
                    // The disk cache is an optimization: failures to write
                    // it are ignored.
                    if let Some(dir) = p.parent() {
                        let _ = std::fs::create_dir_all(dir);
                    }
                    let _ = std::fs::write(p, &ptx);
                }
                self.load(&ptx, &k.name)?
            }
        };
        lock(&self.functions)?.insert(k.name.clone(), f.clone());
        Ok(f)
    }

    fn load(&self, ptx: &str, name: &str) -> Result<CudaFunction> {
        let module = self
            .ctx
            .load_module(Ptx::from_src(ptx))
            .map_err(|e| device_error("module load", e))?;
        module
            .load_function(name)
            .map_err(|e| device_error("function lookup", e))
    }
}

/// `--gpu-architecture=compute_XY` and `--fmad=false`: the NVRTC options of
/// every kernel.
pub fn nvrtc_options(arch: (i32, i32)) -> Vec<String> {
    vec![
        format!("--gpu-architecture=compute_{}{}", arch.0, arch.1),
        "--fmad=false".to_string(),
    ]
}

/// NVRTC-compiles `source` to PTX text.
pub fn compile(source: &str, arch: (i32, i32)) -> Result<String> {
    let opts = CompileOptions {
        options: nvrtc_options(arch),
        ..Default::default()
    };
    let ptx = guarded(|| cudarc::nvrtc::compile_ptx_with_opts(source, opts))
        .ok_or_else(|| Error::Device("NVRTC panicked (library missing?)".into()))?
        .map_err(|e| device_error("NVRTC compile", e))?;
    Ok(ptx.to_src())
}

/// `<cache>/microjax_rs/cuda/<hash>-sm<XY>.ptx`, `None` without a home.
pub fn cache_path(name: &str, arch: (i32, i32)) -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    let hash = name.trim_start_matches("mj_");
    Some(
        base.join("microjax_rs")
            .join("cuda")
            .join(format!("{hash}-sm{}{}.ptx", arch.0, arch.1)),
    )
}

/// A device allocation; dropping it returns the memory to its device's
/// free list.
pub(super) struct DeviceBuffer {
    slice: Option<CudaSlice<u8>>,
    /// Bytes in use (the allocation may be larger: its size class).
    pub(super) bytes: usize,
    pub(super) device: Arc<Device>,
}

impl std::fmt::Debug for DeviceBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DeviceBuffer({} bytes on {:?})", self.bytes, self.device)
    }
}

impl DeviceBuffer {
    pub(super) fn slice(&self) -> Result<&CudaSlice<u8>> {
        self.slice
            .as_ref()
            .ok_or_else(|| Error::Device("device buffer already released".into()))
    }

    pub(super) fn slice_mut(&mut self) -> Result<&mut CudaSlice<u8>> {
        self.slice
            .as_mut()
            .ok_or_else(|| Error::Device("device buffer already released".into()))
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        if let Some(s) = self.slice.take() {
            self.device.release(s);
        }
    }
}
