//! The allocation budget: the most bytes one buffer may take.
//!
//! A shape is checked *before* anything is allocated (checked arithmetic for
//! elements × item size), so an absurd shape (`zeros((10**12,))`,
//! `broadcast_to(x, (10**7, 10**7))`) is a typed [`Error::AllocationTooLarge`]
//! instead of an allocator abort. The checks sit at the central points: the
//! output avals of every eager kernel ([`crate::prims::kernel::eval`]), every
//! equation the reference interpreter runs, every value a compiled plan names
//! (once, when the plan is built), the buffer constructors (which also probe
//! large allocations with `try_reserve_exact`, so an allocation the OS
//! refuses is an error too), loaded constants, and the conv and
//! reduce_window index tables, which outgrow their outputs.
//!
//! The budget is process-wide. Its default is the machine's physical memory
//! (`MemTotal` of `/proc/meminfo`), or 2^40 bytes where that is unreadable;
//! [`set_max_buffer_bytes`] changes it (Python:
//! `config.update("microjax_max_buffer_bytes", n)`).

use crate::dtype::DType;
use crate::error::{format_shape, Error, Result};
use crate::ir::Aval;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// Budget used when physical memory cannot be read.
pub const FALLBACK_BUDGET: u64 = 1 << 40;

/// The budget set by [`set_max_buffer_bytes`]; 0 means "the default".
static OVERRIDE: AtomicU64 = AtomicU64::new(0);

/// The default, read once.
static DEFAULT: OnceLock<u64> = OnceLock::new();

/// `MemTotal` of `/proc/meminfo` in bytes, when readable.
fn physical_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let mut words = line.split_whitespace().skip(1);
    let value: u64 = words.next()?.parse().ok()?;
    match words.next() {
        Some("kB") => value.checked_mul(1024),
        None => Some(value),
        Some(_) => None,
    }
}

/// The default budget: physical memory, else [`FALLBACK_BUDGET`].
pub fn default_max_buffer_bytes() -> u64 {
    *DEFAULT.get_or_init(|| {
        physical_memory()
            .filter(|&b| b > 0)
            .unwrap_or(FALLBACK_BUDGET)
    })
}

/// The current budget in bytes.
pub fn max_buffer_bytes() -> u64 {
    match OVERRIDE.load(Ordering::Relaxed) {
        0 => default_max_buffer_bytes(),
        n => n,
    }
}

/// Sets the budget (`None` restores the default). A zero budget is an
/// `InvalidArgument` error: no rank-0 value would fit.
pub fn set_max_buffer_bytes(bytes: Option<u64>) -> Result<()> {
    match bytes {
        Some(0) => Err(Error::InvalidArgument(
            "the max buffer budget must be a positive number of bytes".into(),
        )),
        Some(n) => {
            OVERRIDE.store(n, Ordering::Relaxed);
            Ok(())
        }
        None => {
            OVERRIDE.store(0, Ordering::Relaxed);
            Ok(())
        }
    }
}

/// Bytes of `elements` values of `dtype` (no overflow: computed in u128).
pub fn bytes_of(elements: usize, dtype: DType) -> u128 {
    let n = u128::try_from(elements).unwrap_or(u128::MAX);
    let width = u128::try_from(dtype.itemsize()).unwrap_or(u128::MAX);
    n.saturating_mul(width)
}

fn too_large(what: &str, shape: String, dtype: DType, bytes: u128) -> Error {
    too_large_for(what, shape, dtype, bytes, max_buffer_bytes())
}

fn too_large_for(what: &str, shape: String, dtype: DType, bytes: u128, budget: u64) -> Error {
    Error::AllocationTooLarge {
        what: what.to_string(),
        shape,
        dtype: dtype.name(),
        bytes,
        budget,
    }
}

/// Checks that `elements` values of `dtype` fit the budget (`shape` is only
/// for the message, computed on failure).
pub fn check_elements(
    what: &str, elements: usize, dtype: DType, shape: impl FnOnce() -> String,
) -> Result<()> {
    check_elements_within(what, elements, dtype, shape, max_buffer_bytes())
}

/// [`check_elements`] against `budget` bytes (a run's own budget).
pub fn check_elements_within(
    what: &str, elements: usize, dtype: DType, shape: impl FnOnce() -> String, budget: u64,
) -> Result<()> {
    let bytes = bytes_of(elements, dtype);
    if bytes > u128::from(budget) {
        return Err(too_large_for(what, shape(), dtype, bytes, budget));
    }
    Ok(())
}

/// Checks a buffer of `shape` and `dtype` against the budget; a shape whose
/// element count overflows is [`Error::Overflow`].
pub fn check_shape(what: &str, shape: &[usize], dtype: DType) -> Result<()> {
    let n = crate::array::checked_size(shape)?;
    check_elements(what, n, dtype, || format_shape(shape))
}

/// Checks a value of type `aval` against the budget.
#[inline]
pub fn check_aval(what: &str, aval: &Aval) -> Result<()> {
    check_shape(what, &aval.shape, aval.dtype)
}

/// Checks every aval of `avals` (a program's value table, an equation's
/// outputs) against the budget.
pub fn check_avals<'a>(what: &str, avals: impl IntoIterator<Item = &'a Aval>) -> Result<()> {
    check_avals_within(what, avals, max_buffer_bytes())
}

/// [`check_avals`] against `budget` bytes (a run's own budget, which the
/// executors pass from their context).
pub fn check_avals_within<'a>(
    what: &str, avals: impl IntoIterator<Item = &'a Aval>, budget: u64,
) -> Result<()> {
    avals.into_iter().try_for_each(|a| {
        let n = crate::array::checked_size(&a.shape)?;
        check_elements_within(what, n, a.dtype, || format_shape(&a.shape), budget)
    })
}

/// Outputs from this many bytes on are probed by [`check_and_probe_avals_within`].
const PROBE_BYTES: u128 = 1 << 20;

/// [`check_avals_within`], then, when the values together take 1 MiB or
/// more, asks the allocator for that many bytes (fallibly) and releases
/// them: a kernel about to build outputs the OS would refuse returns
/// [`Error::AllocationTooLarge`] instead of aborting in an infallible
/// `collect` (the elementwise kernels build their outputs that way; kernels
/// with scratch reserve it through [`crate::array::alloc`]). The executors
/// call this before every kernel.
pub fn check_and_probe_avals_within<'a>(
    what: &str, avals: impl IntoIterator<Item = &'a Aval> + Clone, budget: u64,
) -> Result<()> {
    check_avals_within(what, avals.clone(), budget)?;
    let mut total: u128 = 0;
    let mut last: Option<&Aval> = None;
    for a in avals {
        let n = crate::array::checked_size(&a.shape)?;
        total = total.saturating_add(bytes_of(n, a.dtype));
        last = Some(a);
    }
    if total < PROBE_BYTES {
        return Ok(());
    }
    let refused = || {
        let (shape, dtype) = last.map_or((String::new(), DType::U8), |a| {
            (format_shape(&a.shape), a.dtype)
        });
        too_large_for(what, shape, dtype, total, budget)
    };
    let bytes = usize::try_from(total).map_err(|_| refused())?;
    crate::array::live::admit(what, bytes)?;
    drop(
        crate::array::alloc::with_capacity::<u8>(what, bytes).map_err(|e| match e {
            Error::MemoryBudget { .. } => e,
            _ => refused(),
        })?,
    );
    Ok(())
}

/// Probes `bytes` of kernel scratch that a kernel then allocates
/// infallibly (the f32 copies half-precision kernels compute in): checked
/// against the live-memory budgets, then reserved fallibly and released,
/// so an allocation the OS would refuse is [`Error::AllocationTooLarge`]
/// instead of an abort. Free under 1 MiB.
pub fn probe_scratch(what: &str, bytes: usize) -> Result<()> {
    if (bytes as u128) < PROBE_BYTES {
        return Ok(());
    }
    crate::array::live::admit(what, bytes)?;
    drop(crate::array::alloc::with_capacity::<u8>(what, bytes)?);
    Ok(())
}

/// Bytes of the f32 copies a half-precision kernel makes of `buffers`
/// (and of one result like them): 4 bytes per element of each buffer and
/// of the result. 0 when none of them is f16 or bf16.
pub fn half_widening_bytes(buffers: &[&crate::array::Buffer]) -> usize {
    use crate::array::Buffer;
    if !buffers
        .iter()
        .any(|b| matches!(b, Buffer::F16(_) | Buffer::BF16(_)))
    {
        return 0;
    }
    let elements = buffers
        .iter()
        .map(|b| b.len())
        .fold(0usize, usize::saturating_add);
    let widest = buffers.iter().map(|b| b.len()).max().unwrap_or(0);
    elements.saturating_add(widest).saturating_mul(4)
}

/// A vector of `n` copies of `value`, checked against the budget (the
/// central buffer constructors use it); an allocation the OS refuses is an
/// error too ([`crate::array::alloc::filled`]).
pub fn filled<T: Clone>(what: &str, dtype: DType, value: T, n: usize) -> Result<Vec<T>> {
    check_elements(what, n, dtype, || format!("({n},)"))?;
    crate::array::alloc::filled(what, value, n).map_err(|e| match e {
        Error::MemoryBudget { .. } => e,
        _ => too_large(what, format!("({n},)"), dtype, bytes_of(n, dtype)),
    })
}
