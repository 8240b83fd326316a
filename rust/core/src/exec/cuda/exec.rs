//! Device arrays and the CUDA plan (feature `cuda`).
//!
//! [`CudaPlan::new`] simplifies the program as the compiled CPU plan does,
//! asks [`super::steps::device_plan`] what each equation becomes, loads the
//! generated kernels (NVRTC, cached) and compiles a CPU plan for every
//! equation that runs on the host. [`CudaPlan::run`] keeps every value on
//! the device; a host step copies its inputs down, runs, and copies its
//! outputs up. Values are dropped (their memory back to the allocator)
//! after their last reader.

use super::bytes;
use super::codegen::KernelSource;
use super::collective::{self, CollectiveSpec};
use super::control::DeviceControl;
use super::fft::{CufftType, FftSpec};
use super::launch;
use super::nccl;
use super::runtime::{self, Device, DeviceBuffer};
use super::steps::{self, DeviceStep, GemmSpec};
use crate::array::HostArray;
use crate::error::{Error, Result};
use crate::exec::compiled::Compiled;
use crate::ir::{Atom, Aval, ClosedJaxpr, Jaxpr, Var};
use crate::prims::Primitive;
use cudarc::driver::CudaFunction;
use std::sync::Arc;

/// An array resident in one device's memory: a shared buffer and its aval.
#[derive(Debug, Clone)]
pub struct DeviceArray {
    buf: Arc<DeviceBuffer>,
    aval: Aval,
}

impl DeviceArray {
    pub fn shape(&self) -> &[usize] {
        &self.aval.shape
    }

    pub fn dtype(&self) -> crate::DType {
        self.aval.dtype
    }

    pub fn aval(&self) -> &Aval {
        &self.aval
    }

    /// The device ordinal holding the array.
    pub fn ordinal(&self) -> usize {
        self.buf.device.ordinal
    }

    /// Waits until the work that writes this array has finished on its
    /// device (JAX's `block_until_ready`), copying nothing.
    pub fn block_until_ready(&self) -> Result<()> {
        self.buf.device.synchronize()
    }

    /// The array copied to host memory.
    pub fn to_host(&self) -> Result<HostArray> {
        let raw = self.buf.device.download(&self.buf)?;
        bytes::array_from_bytes(self.aval.shape.clone(), self.aval.dtype, &raw)
    }

    /// A new array of `aval` on `device` (contents undefined until written).
    pub(super) fn alloc(device: &Arc<Device>, aval: Aval) -> Result<DeviceArray> {
        let n = bytes::nbytes(aval.dtype, aval.size()?)?;
        Ok(DeviceArray {
            buf: Arc::new(device.alloc(n)?),
            aval,
        })
    }

    /// The aval of one row along the leading axis, the row count and the
    /// bytes per row.
    fn row_layout(&self) -> Result<(Aval, usize, usize)> {
        let (&rows, rest) = self.aval.shape.split_first().ok_or_else(|| {
            Error::InvalidArgument(format!("row of a scalar {}", self.aval.short()))
        })?;
        let row = Aval::weak(rest.to_vec(), self.aval.dtype, self.aval.weak_type);
        let per = bytes::nbytes(row.dtype, row.size()?)?;
        Ok((row, rows, per))
    }

    fn row_offset(&self, i: usize, rows: usize, per: usize) -> Result<usize> {
        i.checked_mul(per)
            .filter(|_| i < rows)
            .ok_or_else(|| Error::InvalidArgument(format!("row {i} of {}", self.aval.short())))
    }

    /// Row `i` along the leading axis, copied into a new array.
    pub(super) fn row(&self, device: &Arc<Device>, i: usize) -> Result<DeviceArray> {
        let (row, rows, per) = self.row_layout()?;
        let at = self.row_offset(i, rows, per)?;
        let mut out = DeviceArray::alloc(device, row)?;
        let dst = Arc::get_mut(&mut out.buf).ok_or_else(|| internal("fresh row shared"))?;
        device.copy(&self.buf, at, dst, 0, per)?;
        Ok(out)
    }

    /// Overwrites row `i` with `y` (this array's buffer must not be shared:
    /// a `scan`'s `ys` while the loop fills them).
    pub(super) fn write_row(
        &mut self, device: &Arc<Device>, i: usize, y: &DeviceArray,
    ) -> Result<()> {
        let (row, rows, per) = self.row_layout()?;
        if row.shape != y.aval.shape || row.dtype != y.aval.dtype {
            return Err(Error::InvalidArgument(format!(
                "row of {} written with {}",
                self.aval.short(),
                y.aval.short()
            )));
        }
        let at = self.row_offset(i, rows, per)?;
        let dst = Arc::get_mut(&mut self.buf)
            .ok_or_else(|| internal("rows written into a shared buffer"))?;
        device.copy(&y.buf, 0, dst, at, per)
    }

    fn with_aval(&self, aval: Aval) -> DeviceArray {
        DeviceArray {
            buf: self.buf.clone(),
            aval,
        }
    }
}

/// `h` copied to device `ordinal`.
pub fn to_device(h: &HostArray, ordinal: usize) -> Result<DeviceArray> {
    upload(&runtime::device(ordinal)?, h)
}

fn upload(dev: &Arc<Device>, h: &HostArray) -> Result<DeviceArray> {
    let buf = dev.upload(&bytes::to_bytes(h.buffer()))?;
    Ok(DeviceArray {
        buf: Arc::new(buf),
        aval: h.aval(),
    })
}

/// A step with its loaded kernel or compiled host plan.
enum Step {
    Kernel {
        kernel: KernelSource,
        func: CudaFunction,
    },
    Scatter {
        operand: Var,
        kernel: KernelSource,
        func: CudaFunction,
    },
    Gemm {
        spec: GemmSpec,
        lhs: Var,
        rhs: Var,
        out: Var,
    },
    Alias {
        input: Var,
        out: Var,
    },
    Fft {
        spec: FftSpec,
        input: Var,
        out: Var,
        /// The inverse transforms' scaling kernel.
        scale: Option<(KernelSource, CudaFunction)>,
    },
    Control {
        control: DeviceControl,
        ins: Vec<Atom>,
        outs: Vec<Var>,
    },
    /// A collective between processes: through NCCL when its communicator
    /// has one on this device, else `host` (MPI on the host).
    Collective {
        spec: CollectiveSpec,
        input: Var,
        out: Var,
        host: Compiled,
    },
    Host {
        plan: Compiled,
        ins: Vec<Var>,
        outs: Vec<Var>,
    },
}

impl Step {
    fn reads(&self) -> Vec<Var> {
        match self {
            Step::Kernel { kernel, .. } => kernel.inputs.iter().map(|(v, _)| *v).collect(),
            Step::Scatter {
                operand, kernel, ..
            } => std::iter::once(*operand)
                .chain(kernel.inputs.iter().map(|(v, _)| *v))
                .collect(),
            Step::Gemm { lhs, rhs, .. } => vec![*lhs, *rhs],
            Step::Alias { input, .. }
            | Step::Fft { input, .. }
            | Step::Collective { input, .. } => vec![*input],
            Step::Control { ins, .. } => ins.iter().filter_map(Atom::var).collect(),
            Step::Host { ins, .. } => ins.clone(),
        }
    }
}

/// A program compiled for one CUDA device.
pub struct CudaPlan {
    original: Arc<ClosedJaxpr>,
    prog: ClosedJaxpr,
    device: Arc<Device>,
    consts: Vec<DeviceArray>,
    steps: Vec<Step>,
    /// Per step, the values whose last reader it is.
    frees: Vec<Vec<Var>>,
    host_steps: usize,
}

impl std::fmt::Debug for CudaPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "CudaPlan({} steps, {} on the host, {:?})",
            self.steps.len(),
            self.host_steps,
            self.device
        )
    }
}

fn internal(what: &str) -> Error {
    Error::InvalidArgument(format!("cuda plan: {what}"))
}

/// A one-equation program running equation `i` of `jx` (same variable
/// numbering), its operands as parameters.
fn host_program(jx: &Jaxpr, i: usize) -> Result<(ClosedJaxpr, Vec<Var>, Vec<Var>)> {
    let eqn = jx.eqns.get(i).ok_or_else(|| internal("equation index"))?;
    let mut ins: Vec<Var> = Vec::new();
    for a in &eqn.inputs {
        if let Atom::Var(v) = a {
            if !ins.contains(v) {
                ins.push(*v);
            }
        }
    }
    let outs = eqn.outputs.clone();
    let sub = Jaxpr {
        avals: jx.avals.clone(),
        constvars: Vec::new(),
        invars: ins.clone(),
        eqns: vec![eqn.clone()],
        outvars: outs.iter().map(|v| Atom::Var(*v)).collect(),
    };
    let closed = ClosedJaxpr {
        jaxpr: Arc::new(sub),
        consts: Vec::new(),
    };
    Ok((closed, ins, outs))
}

impl CudaPlan {
    /// Compiles `prog` for device `ordinal`.
    pub fn new(prog: Arc<ClosedJaxpr>, ordinal: usize) -> Result<CudaPlan> {
        let device = runtime::device(ordinal)?;
        let (simple, plan) = steps::plan_program(&prog)?;
        let jx = simple.jaxpr.clone();
        let mut out = Vec::with_capacity(plan.len());
        let mut host_steps = 0usize;
        for step in plan {
            out.push(match step {
                DeviceStep::Kernel { kernel, .. } => {
                    let func = device.function(&kernel)?;
                    Step::Kernel { kernel, func }
                }
                DeviceStep::Scatter {
                    operand, kernel, ..
                } => {
                    let func = device.function(&kernel)?;
                    Step::Scatter {
                        operand,
                        kernel,
                        func,
                    }
                }
                DeviceStep::Gemm { eqn, spec } => {
                    let e = jx.eqns.get(eqn).ok_or_else(|| internal("gemm index"))?;
                    match (e.inputs.as_slice(), e.outputs.as_slice()) {
                        ([Atom::Var(lhs), Atom::Var(rhs)], [o]) => Step::Gemm {
                            spec,
                            lhs: *lhs,
                            rhs: *rhs,
                            out: *o,
                        },
                        _ => return Err(internal("gemm operands")),
                    }
                }
                DeviceStep::Alias { input, out, .. } => Step::Alias { input, out },
                DeviceStep::Control { eqn } => control_step(&jx, eqn, ordinal)?,
                DeviceStep::Collective { eqn, spec } => collective_step(&jx, eqn, spec)?,
                DeviceStep::Fft { eqn, spec } => match fft_step(&device, &jx, eqn, spec)? {
                    Some(step) => step,
                    None => {
                        host_steps = host_steps.saturating_add(1);
                        host_step(&jx, eqn)?
                    }
                },
                DeviceStep::Host { eqn, .. } => {
                    host_steps = host_steps.saturating_add(1);
                    host_step(&jx, eqn)?
                }
            });
        }
        let consts = simple
            .consts
            .iter()
            .map(|c| upload(&device, c))
            .collect::<Result<Vec<_>>>()?;
        let frees = last_uses(&jx, &out);
        Ok(CudaPlan {
            original: prog,
            prog: simple,
            device,
            consts,
            steps: out,
            frees,
            host_steps,
        })
    }

    /// The program as given.
    pub fn program(&self) -> &Arc<ClosedJaxpr> {
        &self.original
    }

    /// Equations that run on the host.
    pub fn host_steps(&self) -> usize {
        self.host_steps
    }

    /// The device ordinal the plan runs on.
    pub fn ordinal(&self) -> usize {
        self.device.ordinal
    }

    /// Runs the plan on device arrays of its device (outputs stay there),
    /// in a context with the process-wide defaults.
    pub fn run(&self, args: &[DeviceArray]) -> Result<Vec<DeviceArray>> {
        self.run_in(&crate::exec::ExecCtx::current_default(), args)
    }

    /// Runs the plan on device arrays of its device in `ctx`.
    pub fn run_in(
        &self, ctx: &crate::exec::ExecCtx, args: &[DeviceArray],
    ) -> Result<Vec<DeviceArray>> {
        let jx = &self.prog.jaxpr;
        self.check_args(jx, args)?;
        let mut env: Vec<Option<DeviceArray>> = vec![None; jx.avals.len()];
        let bound = jx
            .constvars
            .iter()
            .zip(&self.consts)
            .chain(jx.invars.iter().zip(args));
        for (v, val) in bound {
            *slot(&mut env, *v)? = Some(val.clone());
        }
        for (step, frees) in self.steps.iter().zip(&self.frees) {
            ctx.take_step()?;
            self.run_step(ctx, jx, step, &mut env)?;
            for v in frees {
                *slot(&mut env, *v)? = None;
            }
        }
        jx.outvars
            .iter()
            .map(|a| match a {
                Atom::Var(v) => read(&env, *v).cloned(),
                Atom::Lit(l) => upload(&self.device, &l.to_array()?),
            })
            .collect()
    }

    fn check_args(&self, jx: &Jaxpr, args: &[DeviceArray]) -> Result<()> {
        crate::exec::check_program_args(
            "cuda program",
            jx,
            args.iter().map(|a| (a.shape(), a.dtype())),
        )?;
        for a in args {
            if a.ordinal() != self.device.ordinal {
                return Err(Error::Device(format!(
                    "cuda program compiled for device {} given an array on device {}",
                    self.device.ordinal,
                    a.ordinal()
                )));
            }
        }
        Ok(())
    }

    fn new_array(&self, jx: &Jaxpr, v: Var) -> Result<DeviceArray> {
        DeviceArray::alloc(&self.device, jx.aval(v)?.clone())
    }

    fn run_step(
        &self, ctx: &crate::exec::ExecCtx, jx: &Jaxpr, step: &Step, env: &mut [Option<DeviceArray>],
    ) -> Result<()> {
        match step {
            Step::Kernel { kernel, func } => self.run_kernel(jx, kernel, func, env),
            Step::Scatter {
                operand,
                kernel,
                func,
            } => self.run_scatter(jx, *operand, kernel, func, env),
            Step::Gemm {
                spec,
                lhs,
                rhs,
                out,
            } => self.run_gemm(jx, spec, (*lhs, *rhs), *out, env),
            Step::Alias { input, out } => {
                let a = read(env, *input)?.with_aval(jx.aval(*out)?.clone());
                *slot(env, *out)? = Some(a);
                Ok(())
            }
            Step::Fft {
                spec,
                input,
                out,
                scale,
            } => self.run_fft(jx, spec, (*input, *out), scale.as_ref(), env),
            Step::Control { control, ins, outs } => self.run_control(ctx, control, ins, outs, env),
            Step::Collective {
                spec,
                input,
                out,
                host,
            } => self.run_collective(ctx, jx, spec, (*input, *out), host, env),
            Step::Host { plan, ins, outs } => self.run_host(ctx, plan, ins, outs, env),
        }
    }

    /// A collective between processes into a fresh `out`: through NCCL
    /// (after the mismatch check, when it is on), or on the host when no
    /// NCCL communicator was registered for its communicator and device.
    fn run_collective(
        &self, ctx: &crate::exec::ExecCtx, jx: &Jaxpr, spec: &CollectiveSpec,
        (input, out): (Var, Var), host: &Compiled, env: &mut [Option<DeviceArray>],
    ) -> Result<()> {
        let Some(comm) = nccl::lookup(spec.comm, &self.device)? else {
            return self.run_host(ctx, host, &[input], &[out], env);
        };
        if crate::exec::mpi::checks() {
            crate::exec::mpi::communicator(spec.comm)?.check(&spec.check)?;
        }
        let buf = collective::run_collective(&comm, spec, &read(env, input)?.buf)?;
        *slot(env, out)? = Some(DeviceArray {
            buf: Arc::new(buf),
            aval: jx.aval(out)?.clone(),
        });
        Ok(())
    }

    /// A generated kernel writing fresh output arrays.
    fn run_kernel(
        &self, jx: &Jaxpr, kernel: &KernelSource, func: &CudaFunction,
        env: &mut [Option<DeviceArray>],
    ) -> Result<()> {
        let outs = kernel
            .outputs
            .iter()
            .map(|v| self.new_array(jx, *v))
            .collect::<Result<Vec<_>>>()?;
        {
            let ins = kernel
                .inputs
                .iter()
                .map(|(v, _)| read(env, *v).and_then(|a| a.buf.slice()))
                .collect::<Result<Vec<_>>>()?;
            let out_slices = outs
                .iter()
                .map(|a| a.buf.slice())
                .collect::<Result<Vec<_>>>()?;
            launch::launch_kernel(&self.device.stream, func, kernel, &ins, &out_slices)?;
        }
        for (v, a) in kernel.outputs.iter().zip(outs) {
            *slot(env, *v)? = Some(a);
        }
        Ok(())
    }

    /// A scatter kernel updating a fresh copy of `operand` in place.
    fn run_scatter(
        &self, jx: &Jaxpr, operand: Var, kernel: &KernelSource, func: &CudaFunction,
        env: &mut [Option<DeviceArray>],
    ) -> Result<()> {
        let [o] = kernel.outputs.as_slice() else {
            return Err(internal("scatter output count"));
        };
        let mut out = self.new_array(jx, *o)?;
        {
            let x = read(env, operand)?;
            let dst = Arc::get_mut(&mut out.buf)
                .ok_or_else(|| internal("fresh scatter output shared"))?;
            self.device.copy(&x.buf, 0, dst, 0, x.buf.bytes)?;
            let ins = kernel
                .inputs
                .iter()
                .map(|(v, _)| read(env, *v).and_then(|a| a.buf.slice()))
                .collect::<Result<Vec<_>>>()?;
            launch::launch_kernel(&self.device.stream, func, kernel, &ins, &[out.buf.slice()?])?;
        }
        *slot(env, *o)? = Some(out);
        Ok(())
    }

    /// A cuBLAS GEMM of `lhs` and `rhs` into a fresh `out`.
    fn run_gemm(
        &self, jx: &Jaxpr, spec: &GemmSpec, (lhs, rhs): (Var, Var), out: Var,
        env: &mut [Option<DeviceArray>],
    ) -> Result<()> {
        let aval = jx.aval(out)?.clone();
        let n = bytes::nbytes(aval.dtype, aval.size()?)?;
        let mut buf = self.device.alloc(n)?;
        {
            let l = read(env, lhs)?.buf.slice()?;
            let r = read(env, rhs)?.buf.slice()?;
            launch::gemm(
                &self.device.blas,
                &self.device.stream,
                spec,
                l,
                r,
                buf.slice_mut()?,
            )?;
        }
        *slot(env, out)? = Some(DeviceArray {
            buf: Arc::new(buf),
            aval,
        });
        Ok(())
    }

    /// A cuFFT transform of `input` into a fresh `out`, then the inverse
    /// scaling in place (a complex-to-real transform reads a device copy
    /// of its input: cuFFT overwrites it).
    fn run_fft(
        &self, jx: &Jaxpr, spec: &FftSpec, (input, out): (Var, Var),
        scale: Option<&(KernelSource, CudaFunction)>, env: &mut [Option<DeviceArray>],
    ) -> Result<()> {
        let mut o = self.new_array(jx, out)?;
        {
            let x = read(env, input)?;
            let dst =
                Arc::get_mut(&mut o.buf).ok_or_else(|| internal("fresh fft output shared"))?;
            if matches!(spec.cufft, CufftType::C2R | CufftType::Z2D) {
                let mut scratch = self.device.alloc(x.buf.bytes)?;
                self.device.copy(&x.buf, 0, &mut scratch, 0, x.buf.bytes)?;
                self.device.run_fft(spec, &scratch, dst)?;
            } else {
                self.device.run_fft(spec, &x.buf, dst)?;
            }
            if let Some((kernel, func)) = scale {
                launch::launch_kernel(&self.device.stream, func, kernel, &[], &[o.buf.slice()?])?;
            }
        }
        *slot(env, out)? = Some(o);
        Ok(())
    }

    /// A control-flow equation, driven from the host (literal operands
    /// uploaded).
    fn run_control(
        &self, ctx: &crate::exec::ExecCtx, control: &DeviceControl, ins: &[Atom], outs: &[Var],
        env: &mut [Option<DeviceArray>],
    ) -> Result<()> {
        let operands = ins
            .iter()
            .map(|a| match a {
                Atom::Var(v) => read(env, *v).cloned(),
                Atom::Lit(l) => upload(&self.device, &l.to_array()?),
            })
            .collect::<Result<Vec<_>>>()?;
        let results = control.run(ctx, &self.device, &operands)?;
        if results.len() != outs.len() {
            return Err(internal("control flow output count"));
        }
        for (v, a) in outs.iter().zip(results) {
            *slot(env, *v)? = Some(a);
        }
        Ok(())
    }

    /// An equation run on the host: inputs copied back, outputs copied up.
    fn run_host(
        &self, ctx: &crate::exec::ExecCtx, plan: &Compiled, ins: &[Var], outs: &[Var],
        env: &mut [Option<DeviceArray>],
    ) -> Result<()> {
        let host = ins
            .iter()
            .map(|v| read(env, *v).and_then(|a| a.to_host()).map(Arc::new))
            .collect::<Result<Vec<_>>>()?;
        let results = plan.run_in(ctx, &host)?;
        if results.len() != outs.len() {
            return Err(internal("host step output count"));
        }
        for (v, h) in outs.iter().zip(results) {
            *slot(env, *v)? = Some(upload(&self.device, &h)?);
        }
        Ok(())
    }
}

/// The host step of equation `i`: a compiled CPU plan of it alone.
fn host_step(jx: &Jaxpr, i: usize) -> Result<Step> {
    let (sub, ins, outs) = host_program(jx, i)?;
    Ok(Step::Host {
        plan: Compiled::new(Arc::new(sub))?,
        ins,
        outs,
    })
}

/// The step of collective equation `i`, with its host plan for a
/// communicator without NCCL.
fn collective_step(jx: &Jaxpr, i: usize, spec: CollectiveSpec) -> Result<Step> {
    let Step::Host { plan, ins, outs } = host_step(jx, i)? else {
        return Err(internal("collective host plan"));
    };
    match (ins.as_slice(), outs.as_slice()) {
        ([input], [out]) => Ok(Step::Collective {
            spec,
            input: *input,
            out: *out,
            host: plan,
        }),
        _ => Err(internal("collective operands")),
    }
}

/// The cuFFT step of `fft` equation `i`, `None` (a host step) when the
/// device has no cuFFT library or no plan for the transform.
fn fft_step(device: &Arc<Device>, jx: &Jaxpr, i: usize, spec: FftSpec) -> Result<Option<Step>> {
    if !device.has_cufft || device.fft_plan(&spec).is_err() {
        return Ok(None);
    }
    let eqn = jx.eqns.get(i).ok_or_else(|| internal("fft index"))?;
    let (input, out) = match (eqn.inputs.as_slice(), eqn.outputs.as_slice()) {
        ([Atom::Var(x)], [o]) => (*x, *o),
        _ => return Ok(None),
    };
    let scale = match &spec.scale {
        Some(k) => Some((k.clone(), device.function(k)?)),
        None => None,
    };
    Ok(Some(Step::Fft {
        spec,
        input,
        out,
        scale,
    }))
}

/// The step of control-flow equation `i` (`cond`, `while`, `scan`), its
/// sub-programs planned for the same device.
fn control_step(jx: &Jaxpr, i: usize, ordinal: usize) -> Result<Step> {
    let eqn = jx.eqns.get(i).ok_or_else(|| internal("control index"))?;
    let Primitive::Control(c) = &eqn.prim else {
        return Err(internal("control step of another primitive"));
    };
    let in_avals = eqn
        .inputs
        .iter()
        .map(|a| match a {
            Atom::Var(v) => jx.aval(*v).cloned(),
            Atom::Lit(l) => Ok(l.aval.clone()),
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Step::Control {
        control: DeviceControl::new(c, &in_avals, ordinal)?,
        ins: eqn.inputs.clone(),
        outs: eqn.outputs.clone(),
    })
}

fn slot(env: &mut [Option<DeviceArray>], v: Var) -> Result<&mut Option<DeviceArray>> {
    env.get_mut(v.index())
        .ok_or_else(|| Error::UnboundVar(format!("#{}", v.0)))
}

fn read(env: &[Option<DeviceArray>], v: Var) -> Result<&DeviceArray> {
    env.get(v.index())
        .and_then(Option::as_ref)
        .ok_or_else(|| Error::UnboundVar(format!("#{}", v.0)))
}

/// Per step, the variables it reads last (program outputs are never freed).
fn last_uses(jx: &Jaxpr, steps: &[Step]) -> Vec<Vec<Var>> {
    let mut last: Vec<Option<usize>> = vec![None; jx.avals.len()];
    for (i, s) in steps.iter().enumerate() {
        for v in s.reads() {
            if let Some(slot) = last.get_mut(v.index()) {
                *slot = Some(i);
            }
        }
    }
    for a in &jx.outvars {
        if let Atom::Var(v) = a {
            if let Some(slot) = last.get_mut(v.index()) {
                *slot = None;
            }
        }
    }
    let mut frees = vec![Vec::new(); steps.len()];
    for (v, l) in last.iter().enumerate() {
        if let (Some(i), Ok(idx)) = (l, u32::try_from(v)) {
            if let Some(f) = frees.get_mut(*i) {
                f.push(Var(idx));
            }
        }
    }
    frees
}
