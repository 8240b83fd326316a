//! The only `unsafe` of the CUDA runtime: uninitialized allocation, kernel
//! launches, cuBLAS and cuFFT calls. Each function checks sizes first so that the
//! device never reads or writes outside a buffer it was given.

#![allow(unsafe_code)]

use super::codegen::KernelSource;
use super::fft::{CufftType, FftSpec};
use super::probe::{device_error, guarded};
use super::steps::GemmSpec;
use crate::dtype::DType;
use crate::error::{Error, Result};
use cudarc::cublas::sys::cublasOperation_t;
use cudarc::cublas::{CudaBlas, Gemm, GemmConfig, StridedBatchedConfig};
use cudarc::cufft::CudaFft;
use cudarc::driver::{
    CudaFunction, CudaSlice, CudaStream, DriverError, LaunchConfig, PushKernelArg,
};
use std::sync::Arc;

/// `class` bytes of uninitialized device memory.
pub(super) fn alloc_bytes(
    stream: &Arc<CudaStream>, class: usize,
) -> std::result::Result<CudaSlice<u8>, DriverError> {
    // SAFETY: the memory is uninitialized; every kernel writes each output
    // element before it is read, and host copies read only the bytes a
    // producer wrote (`DeviceBuffer::bytes`).
    unsafe { stream.alloc::<u8>(class) }
}

/// Threads per block of every generated kernel.
const BLOCK: u32 = 256;
/// At most this many blocks; the grid-stride loop covers the rest.
const MAX_BLOCKS: usize = 1 << 16;

/// Launches generated kernel `k` (`f`) over its `k.len` work items with
/// `ins` and `outs` (in parameter order), each holding the bytes the kernel
/// reads or writes.
pub(super) fn launch_kernel(
    stream: &Arc<CudaStream>, f: &CudaFunction, k: &KernelSource, ins: &[&CudaSlice<u8>],
    outs: &[&CudaSlice<u8>],
) -> Result<()> {
    if ins.len() != k.inputs.len() || outs.len() != k.outputs.len() {
        return Err(Error::Device(format!(
            "kernel {}: {} inputs and {} outputs given for {} and {}",
            k.name,
            ins.len(),
            outs.len(),
            k.inputs.len(),
            k.outputs.len()
        )));
    }
    if k.len == 0 {
        return Ok(());
    }
    let n = i64::try_from(k.len)
        .map_err(|_| Error::Device(format!("kernel {}: {} work items", k.name, k.len)))?;
    let blocks = k.len.div_ceil(BLOCK as usize).clamp(1, MAX_BLOCKS);
    let cfg = LaunchConfig {
        grid_dim: (u32::try_from(blocks).unwrap_or(1), 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut b = stream.launch_builder(f);
    for s in ins.iter().chain(outs) {
        b.arg(*s);
    }
    b.arg(&n);
    // SAFETY: the parameter list matches the generated signature (inputs,
    // outputs, `long long n`), and the caller sized every buffer for the
    // elements the kernel indexes (`runtime::DeviceBuffer::bytes`).
    unsafe { b.launch(cfg) }.map_err(|e| device_error(&format!("launch of {}", k.name), e))?;
    Ok(())
}

fn op(transposed: bool) -> cublasOperation_t {
    if transposed {
        cublasOperation_t::CUBLAS_OP_T
    } else {
        cublasOperation_t::CUBLAS_OP_N
    }
}

fn c_int(v: usize) -> Result<i32> {
    i32::try_from(v).map_err(|_| Error::Device(format!("cuBLAS dimension {v} exceeds i32")))
}

fn c_long(a: usize, b: usize) -> Result<i64> {
    a.checked_mul(b)
        .and_then(|p| i64::try_from(p).ok())
        .ok_or_else(|| Error::Device("cuBLAS stride overflows".into()))
}

/// The cuBLAS configuration of a row-major product: cuBLAS is column-major,
/// so it computes `outᵀ = rhsᵀ · lhsᵀ` (operands swapped, `m` and `n`
/// exchanged); a row-major `k×n` rhs is a column-major `n×k` matrix as is.
fn strided_config<T>(s: &GemmSpec, one: T, zero: T) -> Result<StridedBatchedConfig<T>> {
    let (m, n, k) = (c_int(s.m)?, c_int(s.n)?, c_int(s.k)?);
    Ok(StridedBatchedConfig {
        gemm: GemmConfig {
            transa: op(s.rhs_transposed),
            transb: op(s.lhs_transposed),
            m: n,
            n: m,
            k,
            alpha: one,
            lda: if s.rhs_transposed { k } else { n },
            ldb: if s.lhs_transposed { m } else { k },
            beta: zero,
            ldc: n,
        },
        batch_size: c_int(s.batch)?,
        stride_a: c_long(s.k, s.n)?,
        stride_b: c_long(s.m, s.k)?,
        stride_c: c_long(s.m, s.n)?,
    })
}

/// `out := lhs · rhs` by cuBLAS (strided batched): f32/f64 through
/// `sgemm`/`dgemm`, complex64/complex128 through `cublasGemmStridedBatchedEx`
/// with `CUDA_C_32F`/`CUDA_C_64F` operands (`cgemm`/`zgemm`'s arithmetic).
pub(super) fn gemm(
    blas: &CudaBlas, stream: &CudaStream, s: &GemmSpec, lhs: &CudaSlice<u8>, rhs: &CudaSlice<u8>,
    out: &mut CudaSlice<u8>,
) -> Result<()> {
    let count = |a: usize, b: usize| {
        a.checked_mul(b)
            .and_then(|x| x.checked_mul(s.batch))
            .ok_or_else(|| Error::Device("cuBLAS operand size overflows".into()))
    };
    let (nl, nr, no) = (count(s.m, s.k)?, count(s.k, s.n)?, count(s.m, s.n)?);
    if no == 0 {
        return Ok(());
    }
    let short = || Error::Device("cuBLAS operand shorter than its matrix".into());
    // The strided batched GEMM on views of element type `$t`.
    macro_rules! gemm {
        ($t:ty, $one:expr, $zero:expr) => {{
            let cfg = strided_config(s, $one, $zero)?;
            // SAFETY: f32 and f64 are valid for any bit pattern; each view
            // covers exactly the elements of its batched matrix (checked by
            // `transmute`, which returns None when the buffer is shorter).
            unsafe {
                let a = rhs.transmute::<$t>(nr).ok_or_else(short)?;
                let b = lhs.transmute::<$t>(nl).ok_or_else(short)?;
                let mut c = out.transmute_mut::<$t>(no).ok_or_else(short)?;
                blas.gemm_strided_batched(cfg, &a, &b, &mut c)
            }
        }};
    }
    match s.dtype {
        DType::F32 => gemm!(f32, 1.0f32, 0.0f32),
        DType::F64 => gemm!(f64, 1.0f64, 0.0f64),
        DType::C64 | DType::C128 => {
            return complex_gemm(blas, stream, s, [nl, nr, no], [lhs, rhs], out);
        }
        other => {
            return Err(Error::Device(format!(
                "cuBLAS GEMM of {} elements",
                other.name()
            )))
        }
    }
    .map_err(|e| device_error("cuBLAS gemm", e))
}

/// The complex strided batched GEMM of [`gemm`] (`counts`: the elements of
/// lhs, rhs and out over the batch).
fn complex_gemm(
    blas: &CudaBlas, stream: &CudaStream, s: &GemmSpec, counts: [usize; 3],
    [lhs, rhs]: [&CudaSlice<u8>; 2], out: &mut CudaSlice<u8>,
) -> Result<()> {
    use cudarc::cublas::result::gemm_strided_batched_ex;
    use cudarc::cublas::sys::{cublasComputeType_t, cublasGemmAlgo_t, cudaDataType};
    use cudarc::driver::{DevicePtr, DevicePtrMut};
    use std::ffi::c_void;
    let wide = s.dtype == DType::C128;
    let (ty, compute, width) = if wide {
        (
            cudaDataType::CUDA_C_64F,
            cublasComputeType_t::CUBLAS_COMPUTE_64F,
            16usize,
        )
    } else {
        (
            cudaDataType::CUDA_C_32F,
            cublasComputeType_t::CUBLAS_COMPUTE_32F,
            8usize,
        )
    };
    let [nl, nr, no] = counts;
    let fits = |buf: &CudaSlice<u8>, n: usize| n.checked_mul(width).is_some_and(|b| b <= buf.len());
    if !(fits(lhs, nl) && fits(rhs, nr) && fits(out, no)) {
        return Err(Error::Device(
            "cuBLAS operand shorter than its matrix".into(),
        ));
    }
    // alpha = 1, beta = 0 in the compute type (host memory, read before the call returns).
    let (one64, zero64) = ([1.0f64, 0.0], [0.0f64, 0.0]);
    let (one32, zero32) = ([1.0f32, 0.0], [0.0f32, 0.0]);
    let (alpha, beta): (*const c_void, *const c_void) = if wide {
        (one64.as_ptr().cast(), zero64.as_ptr().cast())
    } else {
        (one32.as_ptr().cast(), zero32.as_ptr().cast())
    };
    let cfg = strided_config(s, 0u8, 0u8)?;
    let g = cfg.gemm;
    let (a, _ra) = rhs.device_ptr(stream);
    let (b, _rb) = lhs.device_ptr(stream);
    let (c, _rc) = out.device_ptr_mut(stream);
    // SAFETY: the three buffers hold at least the elements the strided
    // batched product reads and writes (checked above); alpha and beta point
    // at two values of the compute type that outlive the call.
    unsafe {
        gemm_strided_batched_ex(
            *blas.handle(),
            g.transa,
            g.transb,
            g.m,
            g.n,
            g.k,
            alpha,
            a as *const c_void,
            ty,
            g.lda,
            cfg.stride_a,
            b as *const c_void,
            ty,
            g.ldb,
            cfg.stride_b,
            beta,
            c as *mut c_void,
            ty,
            g.ldc,
            cfg.stride_c,
            cfg.batch_size,
            compute,
            cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
        )
    }
    .map_err(|e| device_error("cuBLAS complex gemm", e))
}

/// A cuFFT plan for `spec` on `stream`: `cufftPlanMany` with the basic
/// (tightly packed, row-major) layout, `batch` transforms of `lengths`.
pub(super) fn fft_plan(spec: &FftSpec, stream: &Arc<CudaStream>) -> Result<CudaFft> {
    use cudarc::cufft::sys::cufftType;
    let int = |v: usize| {
        i32::try_from(v).map_err(|_| Error::Device(format!("cuFFT extent {v} exceeds i32")))
    };
    let n = spec
        .lengths
        .iter()
        .map(|&l| int(l))
        .collect::<Result<Vec<i32>>>()?;
    let batch = int(spec.batch)?;
    let ty = match spec.cufft {
        CufftType::C2C => cufftType::CUFFT_C2C,
        CufftType::R2C => cufftType::CUFFT_R2C,
        CufftType::C2R => cufftType::CUFFT_C2R,
        CufftType::Z2Z => cufftType::CUFFT_Z2Z,
        CufftType::D2Z => cufftType::CUFFT_D2Z,
        CufftType::Z2D => cufftType::CUFFT_Z2D,
    };
    let stream = stream.clone();
    guarded(move || CudaFft::plan_many(&n, None, 1, 0, None, 1, 0, ty, batch, stream))
        .ok_or_else(|| Error::Device("cuFFT panicked (library missing?)".into()))?
        .map_err(|e| device_error("cuFFT plan creation", e))
}

/// Runs `plan` (made by [`fft_plan`] for `spec`) from `input` into
/// `output`, unnormalized, on `stream`. A complex-to-real transform
/// overwrites its input: the caller passes a buffer of its own then.
pub(super) fn run_fft(
    plan: &CudaFft, spec: &FftSpec, stream: &Arc<CudaStream>, input: &CudaSlice<u8>,
    output: &mut CudaSlice<u8>,
) -> Result<()> {
    use cudarc::cufft::result as fft;
    use cudarc::cufft::sys::{cufftComplex, cufftDoubleComplex};
    use cudarc::driver::{DevicePtr, DevicePtrMut};
    let (ib, ob) = spec.cufft.element_bytes();
    let fits = |buf: &CudaSlice<u8>, n: usize, b: usize| {
        n.checked_mul(b).is_some_and(|bytes| bytes <= buf.len())
    };
    if !(fits(input, spec.in_len, ib) && fits(output, spec.out_len, ob)) {
        return Err(Error::Device(
            "cuFFT operand shorter than its transform".into(),
        ));
    }
    stream
        .context()
        .bind_to_thread()
        .map_err(|e| device_error("context bind", e))?;
    let dir = if spec.inverse() { 1 } else { -1 };
    let h = plan.handle();
    let (i, _ri) = input.device_ptr(stream);
    let (o, _ro) = output.device_ptr_mut(stream);
    // SAFETY: the plan was made for `spec` (its type, lengths and batch),
    // and both buffers hold at least the elements the batched transform
    // reads and writes (checked above); cuFFT writes the input of a
    // complex-to-real transform only, which the caller owns.
    unsafe {
        match spec.cufft {
            CufftType::C2C => fft::exec_c2c(h, i as *mut cufftComplex, o as *mut cufftComplex, dir),
            CufftType::R2C => fft::exec_r2c(h, i as *mut f32, o as *mut cufftComplex),
            CufftType::C2R => fft::exec_c2r(h, i as *mut cufftComplex, o as *mut f32),
            CufftType::Z2Z => fft::exec_z2z(
                h,
                i as *mut cufftDoubleComplex,
                o as *mut cufftDoubleComplex,
                dir,
            ),
            CufftType::D2Z => fft::exec_d2z(h, i as *mut f64, o as *mut cufftDoubleComplex),
            CufftType::Z2D => fft::exec_z2d(h, i as *mut cufftDoubleComplex, o as *mut f64),
        }
    }
    .map_err(|e| device_error(&format!("cuFFT {} transform", spec.cufft.name()), e))
}
