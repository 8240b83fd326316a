//! `microjax_rs._core`: the PyO3 binding of the microjax core.
//!
//! This crate holds no rules. It converts between Python/NumPy and the core's
//! types, maps core errors to the exceptions a JAX user expects, and hosts the
//! hot dispatch paths (Array operators with no trace active, `jit`'s cache
//! lookup) so they never enter Python's trace machinery.
//!
//! No panic may reach Python: every fallible step returns `PyResult`, core
//! errors go through [`to_pyerr`].

/// Adds the `#[pyfunction]`s at the paths listed to the module `$m`.
macro_rules! add_functions {
    ($m:ident; $($f:path),+ $(,)?) => {
        $($m.add_function(pyo3::wrap_pyfunction!($f, $m)?)?;)+
    };
}

/// A new `PyDict` of `key => value` entries, in order (a `PyResult`).
macro_rules! dict_of {
    ($py:expr; $($key:literal => $value:expr),+ $(,)?) => {{
        let d = pyo3::types::PyDict::new($py);
        $(d.set_item($key, $value)?;)+
        pyo3::PyResult::Ok(d)
    }};
}

mod array;
mod aval;
mod callback;
mod dlpack;
mod dtypes;
mod dynamic;
mod fork;
mod globals;
mod gpu;
mod grad;
mod interrupt;
mod ir;
mod jit;
mod memory;
mod mpi;
mod numpy_view;
mod ops;
mod prim;
mod records;
mod stages;
mod staging;
mod trace_cache;
mod tracer;
mod traces;
mod transforms;

use pyo3::exceptions::{
    PyNameError, PyNotImplementedError, PyRuntimeError, PyTypeError, PyValueError,
};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

/// Maps a core error to the Python exception a JAX user expects. The message
/// is the core error's `Display`.
/// Every allocation of the extension is counted, so live-memory budgets
/// (`config.update("microjax_max_live_bytes", n)`, an exported program's
/// `Limits.max_bytes`) see kernel scratch and library workspaces too, and
/// `Device.memory_stats()` reports live and peak bytes.
#[global_allocator]
static ALLOCATOR: microjax::array::live::CountingAlloc = microjax::array::live::CountingAlloc;

pub(crate) fn to_pyerr(e: microjax::Error) -> PyErr {
    use microjax::Error as E;
    let msg = e.to_string();
    match e {
        E::Broadcast { .. } if e.is_type_error() => PyTypeError::new_err(msg),
        E::Broadcast { .. } => PyValueError::new_err(msg),
        E::Shape { .. }
        | E::DType { .. }
        | E::Arity { .. }
        | E::Typecheck(_)
        | E::Unsupported(_) => PyTypeError::new_err(msg),
        E::Param { .. }
        | E::InvalidArgument(_)
        | E::RankPromotion(_)
        | E::UnknownPrimitive(_)
        | E::Overflow { .. }
        | E::Misaligned { .. }
        | E::Parse { .. }
        | E::Format { .. }
        | E::UnboundVar(_)
        | E::Limit(_) => PyValueError::new_err(msg),
        E::NotImplemented(_) => PyNotImplementedError::new_err(msg),
        E::UnboundAxis { .. } => PyNameError::new_err(msg),
        E::AllocationTooLarge { .. } | E::MemoryBudget { .. } => {
            pyo3::exceptions::PyMemoryError::new_err(msg)
        }
        // A cancelled run (its `CancelToken` set) is a RuntimeError: the
        // run stopped on request, it was not interrupted by a signal.
        E::Device(_) | E::Collective(_) | E::Cancelled => {
            pyo3::exceptions::PyRuntimeError::new_err(msg)
        }
        E::DeadlineExceeded => pyo3::exceptions::PyTimeoutError::new_err(msg),
        // The signal handler's own exception (KeyboardInterrupt for Ctrl-C).
        E::Interrupted => interrupt::take_pending()
            .unwrap_or_else(|| pyo3::exceptions::PyKeyboardInterrupt::new_err(msg)),
        // The callback's own exception, unchanged, when it raised one.
        E::HostCallback(_) => callback::take_pending_error()
            .unwrap_or_else(|| pyo3::exceptions::PyRuntimeError::new_err(msg)),
    }
}

/// Extension trait: `result.py()?` maps a core `Result` into a `PyResult`.
pub(crate) trait CoreResultExt<T> {
    fn py(self) -> PyResult<T>;
}

impl<T> CoreResultExt<T> for microjax::Result<T> {
    #[inline]
    fn py(self) -> PyResult<T> {
        self.map_err(to_pyerr)
    }
}

/// A value Python registers once at import (hooks, operator tables, the
/// aval constructor). `what` names it in the errors for a second
/// registration and for a use before the first, e.g. "the grad hooks are".
pub(crate) struct Registered<T> {
    cell: PyOnceLock<T>,
    what: &'static str,
}

impl<T> Registered<T> {
    pub(crate) const fn new(what: &'static str) -> Self {
        Registered {
            cell: PyOnceLock::new(),
            what,
        }
    }

    /// Registers `value`; a RuntimeError where one is registered already.
    pub(crate) fn set(&self, py: Python<'_>, value: T) -> PyResult<()> {
        self.cell
            .set(py, value)
            .map_err(|_| PyRuntimeError::new_err(format!("{} already registered", self.what)))
    }

    /// A RuntimeError where a value is registered already (checked before
    /// reading a registration's parts).
    pub(crate) fn check_unset(&self, py: Python<'_>) -> PyResult<()> {
        match self.cell.get(py) {
            Some(_) => Err(PyRuntimeError::new_err(format!(
                "{} already registered",
                self.what
            ))),
            None => Ok(()),
        }
    }

    /// The registered value; a RuntimeError where none is.
    pub(crate) fn get(&self, py: Python<'_>) -> PyResult<&T> {
        self.cell
            .get(py)
            .ok_or_else(|| PyRuntimeError::new_err(format!("{} not registered", self.what)))
    }
}

/// The one point where Python registers, once each at import, what the
/// binding's Rust paths need of it (the replaceable Array hooks are
/// `set_hooks`'s):
/// * `to_atom=StagingTrace.to_atom`: the atom of an operand that is not a
///   tracer of the trace being staged into (`staging.rs`);
/// * `tracer_operators=(prims, fallbacks)`: the `lax` primitives of the
///   Tracer operators with a native path and their Python fallbacks
///   (`tracer.rs`);
/// * `grad=(ad_trace, new_input, stack, prepare, finish_output, run,
///   grads)`: what the `grad` call path needs of Python (`grad.rs`).
#[pyfunction]
#[pyo3(signature = (**hooks))]
fn register_hooks(py: Python<'_>, hooks: Option<&Bound<'_, pyo3::types::PyDict>>) -> PyResult<()> {
    for (key, value) in hooks.into_iter().flat_map(|h| h.iter()) {
        match key.extract::<String>()?.as_str() {
            "to_atom" => staging::register_to_atom(py, value)?,
            "tracer_operators" => {
                let (prims, fallbacks): (
                    Bound<'_, pyo3::types::PyDict>,
                    Bound<'_, pyo3::types::PyDict>,
                ) = value.extract()?;
                tracer::register_tracer_operators(py, &prims, &fallbacks)?;
            }
            "grad" => grad::register_grad_hooks(py, &value)?,
            other => return Err(PyValueError::new_err(format!("unknown hook {other:?}"))),
        }
    }
    Ok(())
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // The Cargo workspace version: the wheel's version (maturin reads it) and
    // `microjax_rs.__version__` come from this one place.
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<array::ArrayImpl>()?;
    m.add_class::<numpy_view::HostView>()?;
    m.add_function(wrap_pyfunction!(dlpack::from_dlpack_capsule, m)?)?;
    m.add_function(wrap_pyfunction!(ops::eager_binary, m)?)?;
    m.add_class::<prim::Prim>()?;
    m.add_class::<ir::PyBuilder>()?;
    m.add_class::<ir::PyClosedJaxpr>()?;
    m.add_class::<ir::InputSource>()?;
    m.add_class::<stages::CompiledProgram>()?;
    m.add_class::<jit::MethodWrapper>()?;
    m.add_class::<jit::JitFunction>()?;
    m.add_class::<callback::PyHostCallback>()?;
    m.add_class::<prim::FastUnary>()?;
    add_functions!(m; array::from_numpy, array::builtin_numpy_dtype_names, array::scalar, array::full, globals::set_hooks,
        globals::get_hooks, globals::trace_enter, globals::trace_exit, globals::trace_depth,
        globals::set_x64, globals::set_debug_checks, globals::get_x64, globals::config_epoch,
        globals::set_max_buffer_bytes, globals::get_max_buffer_bytes, globals::bump_epoch,
        dtypes::result_type, dtypes::broadcast_shapes, dtypes::dtype_table, prim::primitive_names,
        prim::primitive_table, ir::parse, ir::export_program, ir::check_exportable, ir::load_program, ir::default_program_limits, ir::set_determinism,
        ir::get_determinism, register_hooks);
    tracer::register(m)?;
    grad::register(m)?;
    aval::register(m)?;
    transforms::register(m)?;
    memory::register(m)?;
    gpu::register(m)?;
    trace_cache::register(m)?;
    records::register(m)?;
    traces::register(m)?;
    dynamic::register(m)?;
    interrupt::install();
    fork::register(m)?;
    mpi::register(m)?;
    Ok(())
}
