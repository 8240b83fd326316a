//! CUDA entry points of the binding: device probe, host↔device copies,
//! running a closed jaxpr on a device, and the generated kernel sources.
//! Conversion and dispatch only; device work runs with the GIL released.
//! Without a GPU (or a driver), `gpu_device_count()` is 0 and every device
//! operation raises `RuntimeError("no CUDA device ...")`.

use crate::array::ArrayImpl;
use crate::ir::PyClosedJaxpr;
use crate::CoreResultExt;
use microjax::exec::cuda::{self, CudaPlan, DeviceArray};
use microjax::ClosedJaxpr;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};
use std::sync::{Arc, Mutex};

/// An array in one GPU's memory.
#[pyclass(frozen, name = "GpuBuffer", module = "microjax_rs")]
pub struct GpuBuffer {
    arr: DeviceArray,
    /// JAX's weak type flag, carried as `ArrayImpl` carries it.
    weak: bool,
}

#[pymethods]
impl GpuBuffer {
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.arr.shape().iter().copied())
    }

    /// The dtype's name (`"float32"`, ...), as `ArrayImpl.dtype_name`.
    #[getter]
    fn dtype(&self) -> &'static str {
        self.arr.dtype().name()
    }

    #[getter]
    fn weak_type(&self) -> bool {
        self.weak
    }

    #[getter]
    fn ordinal(&self) -> usize {
        self.arr.ordinal()
    }

    /// Waits until the device work writing this buffer has finished
    /// (copies nothing; the GIL is released while waiting).
    fn block_until_ready(&self, py: Python<'_>) -> PyResult<()> {
        let arr = self.arr.clone();
        py.detach(move || arr.block_until_ready()).py()
    }

    /// The array copied back to host memory.
    fn to_host(&self, py: Python<'_>) -> PyResult<ArrayImpl> {
        let arr = self.arr.clone();
        let h = py.detach(move || arr.to_host()).py()?;
        Ok(ArrayImpl::new(Arc::new(h), self.weak))
    }

    fn __repr__(&self) -> String {
        format!(
            "GpuBuffer(shape={:?}, dtype={}, ordinal={})",
            self.arr.shape(),
            self.arr.dtype().name(),
            self.arr.ordinal()
        )
    }
}

/// Usable CUDA devices (0 without a driver or a device; never raises).
#[pyfunction]
pub fn gpu_device_count(py: Python<'_>) -> usize {
    py.detach(cuda::device_count)
}

/// `{"name", "compute_capability": (major, minor), "memory_bytes",
/// "ordinal"}` of device `ordinal`.
#[pyfunction]
pub fn gpu_device_info(py: Python<'_>, ordinal: usize) -> PyResult<Bound<'_, PyDict>> {
    let info = py.detach(move || cuda::device_info(ordinal)).py()?;
    let d = PyDict::new(py);
    d.set_item("name", info.name)?;
    d.set_item("compute_capability", info.compute_capability)?;
    d.set_item("memory_bytes", info.memory_bytes)?;
    d.set_item("ordinal", info.ordinal)?;
    Ok(d)
}

/// `x` copied to device `ordinal`.
#[pyfunction]
pub fn gpu_put(py: Python<'_>, x: PyRef<'_, ArrayImpl>, ordinal: usize) -> PyResult<GpuBuffer> {
    x.check_live()?;
    let (h, weak) = (x.arr.clone(), x.weak);
    let arr = py.detach(move || cuda::to_device(&h, ordinal)).py()?;
    Ok(GpuBuffer { arr, weak })
}

type PlanCache = Vec<(Arc<ClosedJaxpr>, usize, Arc<CudaPlan>)>;

/// Plans of recently run programs (keyed by program identity and device).
static PLANS: Mutex<PlanCache> = Mutex::new(Vec::new());
const PLAN_CACHE_SIZE: usize = 64;

/// The plan cache's lock if it is free now (`crate::fork`).
pub(crate) fn try_hold() -> Option<Box<dyn std::any::Any>> {
    crate::fork::try_lock(&PLANS)
}

fn plan_for(prog: &Arc<ClosedJaxpr>, ordinal: usize) -> microjax::Result<Arc<CudaPlan>> {
    let poisoned = || microjax::Error::Device("CUDA plan cache lock poisoned".into());
    {
        let cache = PLANS.lock().map_err(|_| poisoned())?;
        if let Some((_, _, p)) = cache
            .iter()
            .find(|(q, o, _)| Arc::ptr_eq(q, prog) && *o == ordinal)
        {
            return Ok(p.clone());
        }
    }
    let plan = Arc::new(CudaPlan::new(prog.clone(), ordinal)?);
    let mut cache = PLANS.lock().map_err(|_| poisoned())?;
    if cache.len() >= PLAN_CACHE_SIZE {
        cache.remove(0);
    }
    cache.push((prog.clone(), ordinal, plan.clone()));
    Ok(plan)
}

/// Runs `prog` on device `ordinal` with arguments already there; the
/// results stay on the device.
#[pyfunction]
pub fn gpu_run(
    py: Python<'_>, prog: PyRef<'_, PyClosedJaxpr>, args: Vec<PyRef<'_, GpuBuffer>>, ordinal: usize,
) -> PyResult<Vec<GpuBuffer>> {
    let prog = prog.inner.clone();
    let args: Vec<DeviceArray> = args.iter().map(|b| b.arr.clone()).collect();
    let outs = py
        .detach(move || plan_for(&prog, ordinal)?.run(&args))
        .py()?;
    Ok(outs
        .into_iter()
        .map(|arr| GpuBuffer {
            weak: arr.aval().weak_type,
            arr,
        })
        .collect())
}

/// Drops every cached device plan (`clear_caches`).
#[pyfunction]
pub fn gpu_plan_cache_clear() {
    let plans = PLANS.lock().map(|mut c| std::mem::take(&mut *c));
    drop(plans);
}

/// The CUDA C source of every kernel the device plan of `prog` generates
/// (no GPU needed).
#[pyfunction]
pub fn cuda_kernel_sources(prog: PyRef<'_, PyClosedJaxpr>) -> PyResult<Vec<String>> {
    let ks = cuda::kernel_sources(&prog.inner).py()?;
    Ok(ks.into_iter().map(|k| k.source).collect())
}

/// Every equation of `prog`'s device plan that would run on the host (also
/// inside `cond`/`while`/`scan` bodies), as `"<primitive>: <reason>"` (no
/// GPU needed).
#[pyfunction]
pub fn cuda_host_steps(prog: PyRef<'_, PyClosedJaxpr>) -> PyResult<Vec<String>> {
    cuda::host_steps(&prog.inner).py()
}

/// Whether the NCCL library loads (GPU collectives between processes;
/// without it they run on the host through MPI). Never raises.
#[pyfunction]
pub fn nccl_available(py: Python<'_>) -> bool {
    py.detach(cuda::nccl::present)
}

/// A new NCCL unique id (bytes), made by one process of a communicator and
/// sent to the others.
#[pyfunction]
pub fn nccl_unique_id(py: Python<'_>) -> PyResult<Bound<'_, PyBytes>> {
    let id = py.detach(cuda::nccl::unique_id).py()?;
    Ok(PyBytes::new(py, &id))
}

/// Makes the NCCL communicator of the registered MPI communicator `comm` on
/// device `ordinal` from the unique id every process passes (collective:
/// returns when every process of `comm` has called it; the GIL is released
/// meanwhile). With `rank` and `size`, those are used and no MPI
/// communicator `comm` is needed (one process alone, or NCCL started by
/// other means).
#[pyfunction]
#[pyo3(signature = (comm, ordinal, id, rank=None, size=None))]
pub fn register_nccl_communicator(
    py: Python<'_>, comm: u32, ordinal: usize, id: Vec<u8>, rank: Option<usize>,
    size: Option<usize>,
) -> PyResult<()> {
    py.detach(move || match (rank, size) {
        (Some(rank), Some(size)) => cuda::nccl::register_ranks(comm, ordinal, &id, rank, size),
        _ => cuda::nccl::register(comm, ordinal, &id),
    })
    .py()
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<GpuBuffer>()?;
    add_functions!(m; gpu_device_count, gpu_device_info, gpu_put, gpu_run, gpu_plan_cache_clear,
        cuda_kernel_sources, cuda_host_steps, nccl_available, nccl_unique_id,
        register_nccl_communicator);
    Ok(())
}
