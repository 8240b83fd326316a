//! `microjax_rs._core`: the PyO3 binding of the microjax core.
//!
//! This crate holds no rules. It converts between Python/NumPy and the core's
//! types, maps core errors to the exceptions a JAX user expects, and hosts the
//! hot dispatch paths (Array operators with no trace active, `jit`'s cache
//! lookup) so they never enter Python's trace machinery.
//!
//! No panic may reach Python: every fallible step returns `PyResult`, core
//! errors go through [`to_pyerr`].

mod array;
mod callback;
mod dtypes;
mod dynamic;
mod globals;
mod gpu;
mod grad;
mod ir;
mod jit;
mod memory;
mod ops;
mod prim;
mod stages;
mod staging;
mod trace_cache;
mod tracer;
mod transforms;

use pyo3::exceptions::{PyNameError, PyNotImplementedError, PyTypeError, PyValueError};
use pyo3::prelude::*;

/// Maps a core error to the Python exception a JAX user expects. The message
/// is the core error's `Display`.
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
        | E::UnknownPrimitive(_)
        | E::Overflow { .. }
        | E::Misaligned { .. }
        | E::Parse { .. }
        | E::Format { .. }
        | E::UnboundVar(_)
        | E::Limit(_) => PyValueError::new_err(msg),
        E::NotImplemented(_) => PyNotImplementedError::new_err(msg),
        E::UnboundAxis { .. } => PyNameError::new_err(msg),
        E::AllocationTooLarge { .. } => pyo3::exceptions::PyMemoryError::new_err(msg),
        // A cancelled run (its `CancelToken` set) is a RuntimeError: the
        // run stopped on request, it was not interrupted by a signal.
        E::Device(_) | E::Cancelled => pyo3::exceptions::PyRuntimeError::new_err(msg),
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

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<array::ArrayImpl>()?;
    m.add_class::<prim::Prim>()?;
    m.add_class::<ir::PyBuilder>()?;
    m.add_class::<ir::PyClosedJaxpr>()?;
    m.add_class::<stages::CompiledProgram>()?;
    m.add_class::<jit::JitFunction>()?;
    m.add_class::<callback::PyHostCallback>()?;
    m.add_class::<prim::FastUnary>()?;
    m.add_function(wrap_pyfunction!(array::from_numpy, m)?)?;
    m.add_function(wrap_pyfunction!(array::scalar, m)?)?;
    m.add_function(wrap_pyfunction!(array::full, m)?)?;
    m.add_function(wrap_pyfunction!(globals::set_hooks, m)?)?;
    m.add_function(wrap_pyfunction!(globals::get_hooks, m)?)?;
    m.add_function(wrap_pyfunction!(globals::trace_enter, m)?)?;
    m.add_function(wrap_pyfunction!(globals::trace_exit, m)?)?;
    m.add_function(wrap_pyfunction!(globals::trace_depth, m)?)?;
    m.add_function(wrap_pyfunction!(globals::set_x64, m)?)?;
    m.add_function(wrap_pyfunction!(globals::set_debug_checks, m)?)?;
    m.add_function(wrap_pyfunction!(globals::get_x64, m)?)?;
    m.add_function(wrap_pyfunction!(globals::config_epoch, m)?)?;
    m.add_function(wrap_pyfunction!(globals::set_max_buffer_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(globals::get_max_buffer_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(globals::bump_epoch, m)?)?;
    m.add_function(wrap_pyfunction!(dtypes::result_type, m)?)?;
    m.add_function(wrap_pyfunction!(dtypes::broadcast_shapes, m)?)?;
    m.add_function(wrap_pyfunction!(dtypes::dtype_table, m)?)?;
    m.add_function(wrap_pyfunction!(prim::primitive_names, m)?)?;
    m.add_function(wrap_pyfunction!(prim::primitive_table, m)?)?;
    m.add_function(wrap_pyfunction!(ir::parse, m)?)?;
    m.add_function(wrap_pyfunction!(ir::export_program, m)?)?;
    m.add_function(wrap_pyfunction!(ir::load_program, m)?)?;
    m.add_function(wrap_pyfunction!(ir::set_determinism, m)?)?;
    m.add_function(wrap_pyfunction!(ir::get_determinism, m)?)?;
    m.add_function(wrap_pyfunction!(staging::register_tracer, m)?)?;
    tracer::register(m)?;
    grad::register(m)?;
    transforms::register(m)?;
    memory::register(m)?;
    gpu::register(m)?;
    trace_cache::register(m)?;
    dynamic::register(m)?;
    Ok(())
}
