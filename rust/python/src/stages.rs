//! `CompiledProgram`: the compiled CPU plan of a closed jaxpr, held by
//! Python's `jax.stages.Compiled` (runs it, reports its cost and memory
//! analyses and its plan). Everything it reports comes from
//! `microjax::exec::compiled`.

use crate::array::ArrayImpl;
use crate::ir::{wrap_outputs, PyClosedJaxpr};
use crate::CoreResultExt;
use microjax::exec::compiled::Compiled;
use microjax::HostArray;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::Arc;

/// A program compiled once into the CPU executor's plan.
#[pyclass(module = "microjax_rs._core", frozen)]
pub struct CompiledProgram {
    plan: Arc<Compiled>,
}

#[pymethods]
impl CompiledProgram {
    /// Compiles `program` (GIL released).
    #[new]
    fn py_new(py: Python<'_>, program: PyRef<'_, PyClosedJaxpr>) -> PyResult<CompiledProgram> {
        let prog = program.inner.clone();
        drop(program);
        let plan = py.detach(move || Compiled::new(prog)).py()?;
        Ok(CompiledProgram {
            plan: Arc::new(plan),
        })
    }

    /// Runs the plan on `args` with the GIL released.
    fn run(&self, py: Python<'_>, args: Vec<PyRef<'_, ArrayImpl>>) -> PyResult<Vec<ArrayImpl>> {
        for a in &args {
            a.check_live()?;
        }
        let arrs: Vec<Arc<HostArray>> = args.iter().map(|a| a.arr.clone()).collect();
        drop(args);
        let plan = self.plan.clone();
        let outs = py.detach(move || plan.run(&arrs)).py()?;
        let out_avals = self.plan.program().out_avals().py()?;
        wrap_outputs(outs, &out_avals)
    }

    /// The simplified program the plan runs, as text.
    fn simplified_text(&self) -> String {
        microjax::ir::display::display(self.plan.simplified())
    }

    /// `{"flops", "transcendentals", "bytes accessed"}` of one run.
    fn cost_analysis<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let c = self.plan.cost_analysis().py()?;
        dict_of!(py; "flops" => c.flops, "transcendentals" => c.transcendentals,
            "bytes accessed" => c.bytes_accessed)
    }

    /// Argument, output, constant, temporary and peak bytes of one run.
    fn memory_analysis<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let m = self.plan.memory_analysis().py()?;
        dict_of!(py; "argument_size_in_bytes" => m.argument_bytes,
            "output_size_in_bytes" => m.output_bytes, "constant_size_in_bytes" => m.constant_bytes,
            "temp_size_in_bytes" => m.temp_bytes, "peak_bytes" => m.peak_bytes)
    }

    /// What compilation did (`microjax_rs.debug.plan_stats`'s plan keys).
    fn plan_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        plan_stats_dict(py, self.plan.stats())
    }
}

/// The plan keys of `microjax_rs.debug.plan_stats`: equations before and
/// after simplification, fusion groups and their members, typed groups and
/// steps.
pub(crate) fn plan_stats_dict<'py>(
    py: Python<'py>, s: &microjax::exec::compiled::PlanStats,
) -> PyResult<Bound<'py, PyDict>> {
    dict_of!(py; "eqns" => s.eqns_in, "eqns_simplified" => s.eqns_simplified,
        "fusion_groups" => s.groups, "fused_eqns" => s.fused_eqns,
        "typed_groups" => s.typed_groups, "steps" => s.steps)
}
