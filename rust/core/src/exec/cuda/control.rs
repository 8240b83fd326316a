//! Control flow on the device (feature `cuda`): the host drives the loop
//! ([`super::driver`]), the values stay in device memory. Sub-programs
//! (branches, cond and body) are nested [`CudaPlan`]s. Per iteration only a
//! scalar crosses to the host: a `while` predicate, a `cond` index; a
//! `scan` reads its `xs` rows and writes its `ys` rows with device-to-device
//! copies.

use super::driver::{self, LoopMemory};
use super::exec::{CudaPlan, DeviceArray};
use super::runtime::Device;
use crate::error::{Error, Result};
use crate::ir::{Aval, Scalar};
use crate::prims::control::{ControlFlow, Scan};
use crate::prims::Family;
use std::sync::Arc;

/// A control-flow equation planned for one device.
pub(super) enum DeviceControl {
    Cond(Vec<CudaPlan>),
    While {
        cond: CudaPlan,
        body: CudaPlan,
        nconsts: (usize, usize),
    },
    Scan {
        scan: Scan,
        body: CudaPlan,
        y_avals: Vec<Aval>,
    },
}

impl DeviceControl {
    /// Plans `c` (its operands of `in_avals`) for device `ordinal`.
    pub(super) fn new(c: &ControlFlow, in_avals: &[Aval], ordinal: usize) -> Result<DeviceControl> {
        let plan = |j: &Arc<crate::ir::ClosedJaxpr>| CudaPlan::new(j.clone(), ordinal);
        Ok(match c {
            ControlFlow::Cond { branches } => {
                DeviceControl::Cond(branches.iter().map(plan).collect::<Result<_>>()?)
            }
            ControlFlow::While {
                cond_jaxpr,
                body_jaxpr,
                cond_nconsts,
                body_nconsts,
            } => DeviceControl::While {
                cond: plan(cond_jaxpr)?,
                body: plan(body_jaxpr)?,
                nconsts: (*cond_nconsts, *body_nconsts),
            },
            ControlFlow::Scan(s) => {
                let outs = Family::abstract_eval(c, in_avals)?;
                DeviceControl::Scan {
                    scan: s.clone(),
                    body: plan(&s.jaxpr)?,
                    y_avals: outs.get(s.num_carry..).unwrap_or_default().to_vec(),
                }
            }
        })
    }

    /// Runs the equation on `operands` (on `device`), results on the device.
    pub(super) fn run(
        &self, ctx: &crate::exec::ExecCtx, device: &Arc<Device>, operands: &[DeviceArray],
    ) -> Result<Vec<DeviceArray>> {
        let mem = DeviceMemory { device };
        match self {
            DeviceControl::Cond(branches) => driver::run_cond(ctx, &mem, branches, operands),
            DeviceControl::While {
                cond,
                body,
                nconsts,
            } => driver::run_while(ctx, &mem, cond, body, *nconsts, operands),
            DeviceControl::Scan {
                scan,
                body,
                y_avals,
            } => driver::run_scan(ctx, &mem, scan, body, y_avals, operands),
        }
    }
}

/// Device memory as the drivers see it.
struct DeviceMemory<'a> {
    device: &'a Arc<Device>,
}

impl LoopMemory for DeviceMemory<'_> {
    type Value = DeviceArray;
    type Plan = CudaPlan;

    fn run(
        &self, ctx: &crate::exec::ExecCtx, plan: &CudaPlan, args: &[DeviceArray],
    ) -> Result<Vec<DeviceArray>> {
        plan.run_in(ctx, args)
    }

    fn scalar(&self, v: &DeviceArray) -> Result<Scalar> {
        let host = v.to_host()?;
        Scalar::from_buffer(host.buffer(), 0).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "control flow: {} where a scalar was expected",
                v.aval().short()
            ))
        })
    }

    fn row(&self, x: &DeviceArray, i: usize) -> Result<DeviceArray> {
        x.row(self.device, i)
    }

    fn alloc(&self, aval: &Aval) -> Result<DeviceArray> {
        DeviceArray::alloc(self.device, aval.clone())
    }

    fn write_row(&self, dst: &mut DeviceArray, i: usize, y: &DeviceArray) -> Result<()> {
        dst.write_row(self.device, i, y)
    }
}
