//! Control flow on the device (feature `cuda`): the host drives the loop,
//! the values stay in device memory. A `while` runs its cond and body as
//! nested [`CudaPlan`]s; each iteration copies only the one-byte predicate
//! to the host. (`cond` and `scan` are host fallbacks: see
//! docs/DESIGN-NOTES.md, "CUDA executor".)

use super::exec::{CudaPlan, DeviceArray};
use crate::array::Buffer;
use crate::error::{Error, Result};
use crate::ir::ClosedJaxpr;
use std::sync::Arc;

/// A `while` loop whose carries live on the device.
pub(super) struct DeviceWhile {
    cond: CudaPlan,
    body: CudaPlan,
    cond_nconsts: usize,
    body_nconsts: usize,
}

impl DeviceWhile {
    pub(super) fn new(
        cond: &Arc<ClosedJaxpr>,
        body: &Arc<ClosedJaxpr>,
        cond_nconsts: usize,
        body_nconsts: usize,
        ordinal: usize,
    ) -> Result<DeviceWhile> {
        Ok(DeviceWhile {
            cond: CudaPlan::new(cond.clone(), ordinal)?,
            body: CudaPlan::new(body.clone(), ordinal)?,
            cond_nconsts,
            body_nconsts,
        })
    }

    /// Runs the loop on `operands` (cond consts, body consts, initial
    /// carries) and returns the final carries.
    pub(super) fn run(&self, operands: &[DeviceArray]) -> Result<Vec<DeviceArray>> {
        let split = |from: usize, n: usize| {
            from.checked_add(n)
                .and_then(|to| operands.get(from..to))
                .ok_or_else(|| Error::InvalidArgument("while: operand count".into()))
        };
        let cond_consts = split(0, self.cond_nconsts)?;
        let body_consts = split(self.cond_nconsts, self.body_nconsts)?;
        let first = self.cond_nconsts.saturating_add(self.body_nconsts);
        let mut carries: Vec<DeviceArray> = operands.get(first..).unwrap_or_default().to_vec();
        loop {
            let args: Vec<DeviceArray> = cond_consts.iter().chain(&carries).cloned().collect();
            if !predicate(&self.cond.run(&args)?)? {
                return Ok(carries);
            }
            let args: Vec<DeviceArray> = body_consts.iter().chain(&carries).cloned().collect();
            carries = self.body.run(&args)?;
        }
    }
}

/// The boolean scalar the cond program produced (copied to the host).
fn predicate(outs: &[DeviceArray]) -> Result<bool> {
    let [p] = outs else {
        return Err(Error::InvalidArgument(format!(
            "while: cond returned {} values",
            outs.len()
        )));
    };
    match p.to_host()?.buffer() {
        Buffer::Bool(v) if v.len() == 1 => Ok(v.first().copied().unwrap_or(false)),
        _ => Err(Error::InvalidArgument(format!(
            "while: cond returned {}, not a bool scalar",
            p.aval().short()
        ))),
    }
}
