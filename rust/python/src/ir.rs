//! `Builder` and `ClosedJaxpr` handles: jaxprs are built, inspected, printed,
//! parsed and run through these.

use crate::array::ArrayImpl;
use crate::dtypes::dtype_from_name;
use crate::prim::Prim;
use crate::CoreResultExt;
use microjax::exec::{self, interp};
use microjax::export::{Determinism, Limits, Program};
use microjax::ir::canonical::{self, ParseLimits};
use microjax::ir::display;
use microjax::{Atom, Aval, Effect, HostArray, Var};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyList, PyString};
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

pub(crate) use crate::records::{atom_from_py, aval_to_py, py_to_aval};
use crate::records::{
    atom_to_py, literal_to_py, staged_var, var_from_py, AvalRecord, EqnRecord, JaxprStructure,
};

pub(crate) fn effect_name(e: Effect) -> &'static str {
    match e {
        Effect::None => "none",
        Effect::OrderedIo => "ordered_io",
    }
}

/// A jaxpr under construction (`microjax::Builder` behind a mutex).
#[pyclass(frozen, name = "Builder", module = "microjax_rs")]
pub struct PyBuilder {
    inner: Mutex<microjax::Builder>,
}

impl PyBuilder {
    pub(crate) fn lock(&self) -> PyResult<MutexGuard<'_, microjax::Builder>> {
        self.inner
            .lock()
            .map_err(|_| PyValueError::new_err("builder state poisoned"))
    }
}

#[pymethods]
impl PyBuilder {
    #[new]
    pub(crate) fn new() -> PyBuilder {
        PyBuilder {
            inner: Mutex::new(microjax::Builder::new()),
        }
    }

    /// A new input variable; returns its id.
    #[pyo3(signature = (shape, dtype_name, weak = false))]
    fn add_input(&self, shape: Vec<usize>, dtype_name: &str, weak: bool) -> PyResult<u32> {
        let aval = Aval::weak(shape, dtype_from_name(dtype_name)?, weak);
        Ok(self.lock()?.add_input(aval).py()?.0)
    }

    /// A new input variable for the array `value` and its tracer of `trace`.
    fn input_tracer<'py>(
        &self, trace: &Bound<'py, PyAny>, value: PyRef<'py, ArrayImpl>,
    ) -> PyResult<Bound<'py, PyAny>> {
        crate::staging::input_tracer(self, trace, &value)
    }

    /// A new constvar holding the array's value (and its weak type).
    fn add_const(&self, value: PyRef<'_, ArrayImpl>) -> PyResult<u32> {
        let (arr, weak) = (value.arr.clone(), value.weak);
        Ok(self.lock()?.add_const(arr, weak).py()?.0)
    }

    /// Appends `outs = prim inputs`; returns a `StagedVar` per output.
    #[pyo3(signature = (prim, inputs, source = None))]
    fn add_eqn<'py>(
        &self, py: Python<'py>, prim: PyRef<'_, Prim>, inputs: &Bound<'py, PyAny>,
        source: Option<String>,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let atoms = inputs
            .try_iter()?
            .map(|a| atom_from_py(&a?))
            .collect::<PyResult<Vec<Atom>>>()?;
        let src: Option<Arc<str>> = source.map(Arc::from);
        let (vars, avals) = crate::staging::add_eqn(self, prim.prim.clone(), atoms, src)?;
        vars.iter()
            .zip(&avals)
            .map(|(v, a)| staged_var(py, *v, a))
            .collect()
    }

    /// Stages `outs = prim args` in `trace` (whose builder this is) and
    /// returns its output tracer (a list of them when `multiple`). With
    /// `record = (eqn_of, prim, params)`, every output variable maps to
    /// `(prim, params, args, output vars)` in `eqn_of` (AD traces evaluate
    /// known values from these records). See `staging.rs`.
    #[pyo3(signature = (trace, prim, args, source, multiple, record = None))]
    #[allow(clippy::type_complexity)]
    fn stage<'py>(
        &self, trace: &Bound<'py, PyAny>, prim: PyRef<'_, Prim>, args: &Bound<'py, PyAny>,
        source: Option<&Bound<'py, PyString>>, multiple: bool,
        record: Option<(Bound<'py, PyDict>, Bound<'py, PyAny>, Bound<'py, PyAny>)>,
    ) -> PyResult<Bound<'py, PyAny>> {
        crate::staging::stage(self, trace, prim, args, source, multiple, record)
    }

    /// The `Aval` of a variable.
    fn aval<'py>(
        &self, py: Python<'py>, var_id: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let v = var_from_py(var_id)?;
        let a = self.lock()?.aval(&Atom::Var(v)).py()?;
        Ok(aval_to_py(py, &a)?.into_any())
    }

    fn num_eqns(&self) -> PyResult<usize> {
        Ok(self.lock()?.num_eqns())
    }

    /// Appends a whole closed jaxpr fed by `inputs` (var ids or literals);
    /// returns its outputs: a `StagedVar` per variable, a `Literal` per
    /// literal output.
    fn splice<'py>(
        &self, py: Python<'py>, closed: PyRef<'_, PyClosedJaxpr>, inputs: &Bound<'py, PyAny>,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let atoms = inputs
            .try_iter()?
            .map(|a| atom_from_py(&a?))
            .collect::<PyResult<Vec<Atom>>>()?;
        let mut b = self.lock()?;
        let outs = microjax::ir::splice::splice(&mut b, &closed.inner, &atoms).py()?;
        outs.iter()
            .map(|o| match o {
                Atom::Var(v) => staged_var(py, *v, &b.aval(o).py()?),
                Atom::Lit(l) => literal_to_py(py, l),
            })
            .collect()
    }

    /// Finishes the program with the given outputs (var ids or literals).
    fn build(&self, outvars: &Bound<'_, PyAny>) -> PyResult<PyClosedJaxpr> {
        let atoms = outvars
            .try_iter()?
            .map(|a| atom_from_py(&a?))
            .collect::<PyResult<Vec<Atom>>>()?;
        let j = self.lock()?.build(atoms).py()?;
        Ok(PyClosedJaxpr { inner: Arc::new(j) })
    }
}

/// Where one input of a program rewired by `ClosedJaxpr.rewire_inputs`
/// comes from: `Input(index)` (input `index` of the original program),
/// `Const(index)` (its const `index`, now an input) or `Unused(aval)` (a
/// new input of that `Aval` the program does not read).
#[pyclass(frozen, name = "InputSource", module = "microjax_rs._core")]
pub(crate) enum InputSource {
    Input { index: usize },
    Const { index: usize },
    Unused { aval: Py<PyAny> },
}

/// A closed jaxpr (immutable, shared).
#[pyclass(frozen, name = "ClosedJaxpr", module = "microjax_rs")]
pub struct PyClosedJaxpr {
    pub(crate) inner: Arc<microjax::ClosedJaxpr>,
}

/// Runs a closed jaxpr on host arrays with the GIL released, through the
/// structural compile cache (interpreted first, compiled from the second
/// sighting; `exec::cache`).
pub(crate) fn run_detached(
    py: Python<'_>, prog: &Arc<microjax::ClosedJaxpr>, args: Vec<Arc<HostArray>>,
) -> PyResult<Vec<Arc<HostArray>>> {
    let prog = prog.clone();
    let epoch = crate::globals::epoch();
    py.detach(move || microjax::exec::cache::global().run(&prog, &args, epoch))
        .py()
}

/// Pairs program outputs with the weak flags of the output avals.
pub(crate) fn wrap_outputs(
    outs: Vec<Arc<HostArray>>, out_avals: &[Aval],
) -> PyResult<Vec<ArrayImpl>> {
    if outs.len() != out_avals.len() {
        return Err(PyValueError::new_err(format!(
            "program returned {} outputs for {} output avals",
            outs.len(),
            out_avals.len()
        )));
    }
    Ok(outs
        .into_iter()
        .zip(out_avals)
        .map(|(h, a)| ArrayImpl::new(h, a.weak_type))
        .collect())
}

#[pymethods]
impl PyClosedJaxpr {
    /// JAX's `make_jaxpr` text.
    fn display(&self) -> String {
        display::display(&self.inner)
    }

    /// JAX's `pretty_print(name_stack=True)` text: each equation's
    /// `named_scope` names after it.
    fn display_name_stack(&self) -> String {
        display::display_name_stack(&self.inner)
    }

    /// The canonical text (`parse(canonical()) == self`).
    fn canonical(&self) -> String {
        canonical::canonical(&self.inner)
    }

    fn __str__(&self) -> String {
        self.display()
    }

    fn __repr__(&self) -> String {
        self.display()
    }

    /// The program with its float literals turned into leading inputs, and
    /// those literals' values (rank-0 arrays): programs that differ only in
    /// literal values share one lifted program (and one transform / compile).
    fn lift_literals(&self) -> PyResult<(PyClosedJaxpr, Vec<ArrayImpl>)> {
        let (lifted, lits) = microjax::ir::hash::lift_literals(&self.inner);
        let values = lits
            .iter()
            .map(|l| {
                let arr = l.to_array().py()?;
                Ok(ArrayImpl::new(Arc::new(arr), l.aval.weak_type))
            })
            .collect::<PyResult<Vec<ArrayImpl>>>()?;
        Ok((
            PyClosedJaxpr {
                inner: Arc::new(lifted),
            },
            values,
        ))
    }

    /// The program with rewired inputs (equations untouched): one
    /// `InputSource` per input of the result. Control flow uses it to
    /// hoist a body's consts into operands and to give every `cond` branch
    /// the same signature.
    fn rewire_inputs(
        &self, py: Python<'_>, spec: Vec<Bound<'_, InputSource>>,
    ) -> PyResult<PyClosedJaxpr> {
        use microjax::ir::rewire::{self, rewire_inputs};
        let spec = spec
            .iter()
            .map(|s| match s.get() {
                InputSource::Input { index } => Ok(rewire::InputSource::Invar(*index)),
                InputSource::Const { index } => Ok(rewire::InputSource::Const(*index)),
                InputSource::Unused { aval } => {
                    py_to_aval(aval.bind(py)).map(rewire::InputSource::Unused)
                }
            })
            .collect::<PyResult<Vec<_>>>()?;
        Ok(PyClosedJaxpr {
            inner: Arc::new(rewire_inputs(&self.inner, &spec).py()?),
        })
    }

    fn in_avals<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, AvalRecord>>> {
        let avals = self.inner.in_avals().py()?;
        avals.iter().map(|a| aval_to_py(py, a)).collect()
    }

    fn out_avals<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, AvalRecord>>> {
        let avals = self.inner.out_avals().py()?;
        avals.iter().map(|a| aval_to_py(py, a)).collect()
    }

    /// The constvars' values as arrays (weak flags from their avals).
    fn consts(&self) -> PyResult<Vec<ArrayImpl>> {
        let j = &self.inner.jaxpr;
        self.inner
            .consts
            .iter()
            .zip(&j.constvars)
            .map(|(c, v)| Ok(ArrayImpl::new(c.clone(), j.aval(*v).py()?.weak_type)))
            .collect()
    }

    fn num_eqns(&self) -> usize {
        self.inner.jaxpr.eqns.len()
    }

    /// The program's `JaxprStructure`: avals by var id, constvars, invars,
    /// `Eqn`s and outvars (atoms are var ids or `Literal`s).
    fn structure<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, JaxprStructure>> {
        let j = &self.inner.jaxpr;
        let ids = |vars: &[Var]| -> PyResult<Py<PyAny>> {
            Ok(PyList::new(py, vars.iter().map(|v| v.0))?
                .into_any()
                .unbind())
        };
        let atoms = |atoms: &[Atom]| -> PyResult<Py<PyAny>> {
            let items = atoms
                .iter()
                .map(|a| atom_to_py(py, a))
                .collect::<PyResult<Vec<_>>>()?;
            Ok(PyList::new(py, items)?.into_any().unbind())
        };
        let avals = j
            .avals
            .iter()
            .map(|a| aval_to_py(py, a))
            .collect::<PyResult<Vec<_>>>()?;
        let eqns = PyList::empty(py);
        for e in &j.eqns {
            let prim = Prim {
                prim: e.prim.clone(),
            };
            let src: Option<String> = e.source.0.as_ref().map(|s| s.to_string());
            let eqn = EqnRecord {
                prim: Bound::new(py, prim)?.into_any().unbind(),
                inputs: atoms(&e.inputs)?,
                outputs: ids(&e.outputs)?,
                source: src.into_pyobject(py)?.into_any().unbind(),
                effect: effect_name(e.effect).into_pyobject(py)?.into_any().unbind(),
            };
            eqns.append(eqn)?;
        }
        let structure = JaxprStructure {
            avals: PyList::new(py, avals)?.into_any().unbind(),
            constvars: ids(&j.constvars)?,
            invars: ids(&j.invars)?,
            eqns: eqns.into_any().unbind(),
            outvars: atoms(&j.outvars)?,
        };
        Bound::new(py, structure)
    }

    /// Compiles the program, runs it once on `args` (GIL released) and
    /// returns what the plan is and the memory the run held, as a dict.
    fn plan_stats<'py>(
        &self, py: Python<'py>, args: Vec<PyRef<'_, ArrayImpl>>,
    ) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
        let arrs: Vec<Arc<HostArray>> = args.iter().map(|a| a.arr.clone()).collect();
        drop(args);
        let prog = self.inner.clone();
        let (plan, run) = py
            .detach(move || {
                let plan = microjax::exec::compiled::Compiled::new(prog)?;
                let (_, run) = plan.run_profiled(&arrs)?;
                Ok::<_, microjax::Error>((plan.stats().clone(), run))
            })
            .py()?;
        let d = crate::stages::plan_stats_dict(py, &plan)?;
        d.set_item("peak_bytes", run.peak_bytes)?;
        d.set_item("arg_bytes", run.arg_bytes)?;
        d.set_item("out_bytes", run.out_bytes)?;
        Ok(d)
    }

    /// Evaluates the program on `args` with the GIL released, in the
    /// determinism mode named (`"default"`/`"portable"`; None: the
    /// process-wide one), stopping with a ValueError after
    /// `max_loop_iterations` loop iterations (`while` bodies and `scan`
    /// steps together) or `max_steps` equations executed (loop iterations
    /// included), a TimeoutError after `timeout` seconds, and a MemoryError
    /// when the run would add more than `max_bytes` live bytes (kernel
    /// scratch included).
    #[pyo3(signature = (args, determinism=None, max_loop_iterations=None, timeout=None, max_steps=None, max_bytes=None))]
    #[allow(clippy::too_many_arguments)]
    fn run(
        &self, py: Python<'_>, args: Vec<PyRef<'_, ArrayImpl>>, determinism: Option<&str>,
        max_loop_iterations: Option<u64>, timeout: Option<f64>, max_steps: Option<u64>,
        max_bytes: Option<u64>,
    ) -> PyResult<Vec<ArrayImpl>> {
        for a in &args {
            a.check_live()?;
        }
        let arrs: Vec<Arc<HostArray>> = args.iter().map(|a| a.arr.clone()).collect();
        drop(args);
        let out_avals = self.inner.out_avals().py()?;
        let timeout = timeout.map(duration_from_secs).transpose()?;
        let limited = max_loop_iterations.is_some() || max_steps.is_some() || max_bytes.is_some();
        let outs = match (determinism, limited, timeout) {
            (None, false, None) => run_detached(py, &self.inner, arrs)?,
            _ => {
                let mode = match determinism {
                    Some(name) => determinism_from_name(name)?,
                    None => exec::default_determinism(),
                };
                let prog = self.inner.clone();
                py.detach(move || {
                    let mut ctx = exec::ExecCtx::current_default().with_determinism(mode);
                    if let Some(n) = max_loop_iterations {
                        ctx = ctx.with_max_loop_iterations(n);
                    }
                    if let Some(n) = max_steps {
                        ctx = ctx.with_max_steps(n);
                    }
                    if let Some(t) = timeout {
                        ctx = ctx.with_timeout(t);
                    }
                    if let Some(n) = max_bytes {
                        ctx = ctx.with_max_run_bytes(n);
                    }
                    interp::eval_closed_in(&ctx, &prog, &arrs)
                })
                .py()?
            }
        };
        wrap_outputs(outs, &out_avals)
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> Py<PyAny> {
        let py = other.py();
        match other.cast::<PyClosedJaxpr>() {
            Ok(o) => PyBool::new(py, *self.inner == *o.get().inner)
                .to_owned()
                .into_any()
                .unbind(),
            Err(_) => py.NotImplemented(),
        }
    }

    fn __ne__(&self, other: &Bound<'_, PyAny>) -> Py<PyAny> {
        let py = other.py();
        match other.cast::<PyClosedJaxpr>() {
            Ok(o) => PyBool::new(py, *self.inner != *o.get().inner)
                .to_owned()
                .into_any()
                .unbind(),
            Err(_) => py.NotImplemented(),
        }
    }

    fn __hash__(&self) -> u64 {
        let mut h = DefaultHasher::new();
        self.inner.hash(&mut h);
        h.finish()
    }
}

/// Parses canonical jaxpr text (default limits). A program with constvars
/// takes their values as `consts` (arrays, in constvar order).
#[pyfunction]
#[pyo3(signature = (text, consts = None))]
pub(crate) fn parse(
    py: Python<'_>, text: &str, consts: Option<Vec<PyRef<'_, ArrayImpl>>>,
) -> PyResult<PyClosedJaxpr> {
    let text = text.to_owned();
    let consts: Vec<Arc<HostArray>> = consts
        .unwrap_or_default()
        .iter()
        .map(|a| a.arr.clone())
        .collect();
    let j = py
        .detach(move || canonical::parse_with_consts(&text, consts, &ParseLimits::default()))
        .py()?;
    Ok(PyClosedJaxpr { inner: Arc::new(j) })
}

fn determinism_from_name(name: &str) -> PyResult<Determinism> {
    match name {
        "default" => Ok(Determinism::Default),
        "portable" => Ok(Determinism::Portable),
        other => Err(PyValueError::new_err(format!(
            "determinism must be 'default' or 'portable', got {other:?}"
        ))),
    }
}

fn determinism_name(d: Determinism) -> &'static str {
    match d {
        Determinism::Default => "default",
        Determinism::Portable => "portable",
    }
}

/// Sets the process-wide determinism mode (`config.update(
/// "microjax_determinism", ...)`): `"default"` or `"portable"`.
#[pyfunction]
pub(crate) fn set_determinism(mode: &str) -> PyResult<()> {
    exec::set_default_determinism(determinism_from_name(mode)?);
    Ok(())
}

/// The process-wide default determinism mode (what a run that names none
/// uses).
#[pyfunction]
pub(crate) fn get_determinism() -> &'static str {
    determinism_name(exec::default_determinism())
}

/// Serializes a closed program in the export format (`microjax::export`).
#[pyfunction]
pub(crate) fn export_program<'py>(
    py: Python<'py>, closed: PyRef<'_, PyClosedJaxpr>, determinism: &str, metadata: &str,
) -> PyResult<Bound<'py, PyBytes>> {
    let bytes =
        Program::to_bytes(&closed.inner, determinism_from_name(determinism)?, metadata).py()?;
    Ok(PyBytes::new(py, &bytes))
}

/// A timeout in seconds as a `Duration` (a ValueError unless finite and
/// not negative).
fn duration_from_secs(secs: f64) -> PyResult<Duration> {
    Duration::try_from_secs_f64(secs).map_err(|_| {
        PyValueError::new_err(format!(
            "timeout must be a finite number of seconds >= 0, got {secs}"
        ))
    })
}

/// The default limits of a loaded program (`microjax::export::Limits`):
/// `(max_bytes, max_loop_iterations, max_depth, max_steps)`.
#[pyfunction]
pub(crate) fn default_program_limits() -> (usize, u64, usize, u64) {
    let l = Limits::default();
    (l.max_bytes, l.max_loop_iterations, l.max_depth, l.max_steps)
}

/// Refuses (`ValueError`) a program the loader would refuse
/// (`microjax::export::check_exportable`): what `export` checks when it
/// traces, before anything is serialized.
#[pyfunction]
pub(crate) fn check_exportable(closed: PyRef<'_, PyClosedJaxpr>) -> PyResult<()> {
    microjax::export::check_exportable(&closed.inner).py()
}

/// Loads exported bytes (validated as `Program::from_bytes` does, the
/// static bound checked against `max_bytes` and `max_depth` when given):
/// `(ClosedJaxpr, metadata, determinism)`.
#[pyfunction]
#[pyo3(signature = (data, max_bytes=None, max_depth=None))]
pub(crate) fn load_program(
    py: Python<'_>, data: &[u8], max_bytes: Option<usize>, max_depth: Option<usize>,
) -> PyResult<(PyClosedJaxpr, String, &'static str)> {
    let data = data.to_vec();
    let defaults = Limits::default();
    let limits = Limits {
        max_bytes: max_bytes.unwrap_or(defaults.max_bytes),
        max_depth: max_depth.unwrap_or(defaults.max_depth),
        ..defaults
    };
    let prog = py
        .detach(move || Program::from_bytes_with(&data, &ParseLimits::default(), limits))
        .py()?;
    Ok((
        PyClosedJaxpr {
            inner: prog.jaxpr().clone(),
        },
        prog.metadata().to_string(),
        determinism_name(prog.determinism()),
    ))
}
