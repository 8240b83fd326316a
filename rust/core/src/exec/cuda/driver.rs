//! Control flow driven from the host over values that stay where they are
//! (device memory): `cond` copies its branch index to the host, `while` its
//! predicate, and `scan` slices `xs` rows and writes `ys` rows in place,
//! each through a [`LoopMemory`]. No CUDA types here, so the loop logic is
//! tested on every machine with host memory standing in for the device
//! (`tests` below); `control.rs` implements the trait for CUDA.

use crate::error::{Error, Result};
use crate::exec::ExecCtx;
use crate::ir::{Aval, Scalar};
use crate::prims::control::Scan;

/// What a host-driven loop needs from the memory its values live in.
pub trait LoopMemory {
    /// An array in that memory (cheap to clone: shared).
    type Value: Clone;
    /// A compiled sub-program (a branch, a loop's cond or body).
    type Plan;

    /// Runs `plan` on `args` in the enclosing run's `ctx`.
    fn run(
        &self, ctx: &ExecCtx, plan: &Self::Plan, args: &[Self::Value],
    ) -> Result<Vec<Self::Value>>;
    /// The first element of `v`, copied to the host.
    fn scalar(&self, v: &Self::Value) -> Result<Scalar>;
    /// Row `i` of `x` along its leading axis, as a new array.
    fn row(&self, x: &Self::Value, i: usize) -> Result<Self::Value>;
    /// A new array of `aval` whose rows the loop writes before anyone reads.
    fn alloc(&self, aval: &Aval) -> Result<Self::Value>;
    /// Overwrites row `i` of `dst` (fresh from [`LoopMemory::alloc`]) with `y`.
    fn write_row(&self, dst: &mut Self::Value, i: usize, y: &Self::Value) -> Result<()>;
}

fn operands<'a, V>(prim: &'static str, args: &'a [V], from: usize, n: usize) -> Result<&'a [V]> {
    from.checked_add(n)
        .and_then(|to| args.get(from..to))
        .ok_or(Error::Arity {
            prim,
            expected: from.saturating_add(n),
            got: args.len(),
        })
}

/// `cond`: the branch the first operand selects (clamped into range, as
/// XLA does) runs on the other operands.
pub fn run_cond<M: LoopMemory>(
    ctx: &ExecCtx, mem: &M, branches: &[M::Plan], args: &[M::Value],
) -> Result<Vec<M::Value>> {
    let (index, ops) = args.split_first().ok_or(Error::arity("cond", 1, 0))?;
    let i = mem.scalar(index)?.as_i64();
    let last = branches
        .len()
        .checked_sub(1)
        .ok_or(Error::arity("cond", 1, 0))?;
    let k = usize::try_from(i.max(0)).unwrap_or(last).min(last);
    let branch =
        branches
            .get(k)
            .ok_or(Error::arity("cond", k.saturating_add(1), branches.len()))?;
    mem.run(ctx, branch, ops)
}

/// `while`: operands are the cond's consts, the body's consts, the initial
/// carries; the final carries come back. Each iteration counts against
/// the run's loop budget ([`ExecCtx::take_loop_iteration`]) as on the
/// CPU.
pub fn run_while<M: LoopMemory>(
    ctx: &ExecCtx, mem: &M, cond: &M::Plan, body: &M::Plan, nconsts: (usize, usize),
    args: &[M::Value],
) -> Result<Vec<M::Value>> {
    let (cc, bc) = nconsts;
    let cond_consts = operands("while", args, 0, cc)?;
    let body_consts = operands("while", args, cc, bc)?;
    let mut carries: Vec<M::Value> = args
        .get(cc.saturating_add(bc)..)
        .unwrap_or_default()
        .to_vec();
    loop {
        let ins: Vec<M::Value> = cond_consts.iter().chain(&carries).cloned().collect();
        let pred = match mem.run(ctx, cond, &ins)?.as_slice() {
            [p] => mem.scalar(p)?.as_bool(),
            outs => return Err(Error::arity("while", 1, outs.len())),
        };
        if !pred {
            return Ok(carries);
        }
        ctx.take_loop_iteration()?;
        let ins: Vec<M::Value> = body_consts.iter().chain(&carries).cloned().collect();
        carries = mem.run(ctx, body, &ins)?;
    }
}

/// `scan`: operands are consts, initial carries, `xs`; results the final
/// carries then the stacked `ys` (`y_avals`, leading axis `s.length`).
pub fn run_scan<M: LoopMemory>(
    ctx: &ExecCtx, mem: &M, s: &Scan, body: &M::Plan, y_avals: &[Aval], args: &[M::Value],
) -> Result<Vec<M::Value>> {
    let consts = operands("scan", args, 0, s.num_consts)?;
    let mut carries = operands("scan", args, s.num_consts, s.num_carry)?.to_vec();
    let xs = args
        .get(s.num_consts.saturating_add(s.num_carry)..)
        .unwrap_or_default();
    let mut ys = y_avals
        .iter()
        .map(|a| mem.alloc(a))
        .collect::<Result<Vec<_>>>()?;
    for step in 0..s.length {
        ctx.take_loop_iteration()?;
        let i = s.row(step);
        let mut ins: Vec<M::Value> = consts.iter().chain(&carries).cloned().collect();
        for x in xs {
            ins.push(mem.row(x, i)?);
        }
        let mut outs = mem.run(ctx, body, &ins)?;
        Error::check_count("scan", s.num_carry.saturating_add(ys.len()), outs.len())?;
        let step_ys = outs.split_off(s.num_carry);
        for (dst, y) in ys.iter_mut().zip(&step_ys) {
            mem.write_row(dst, i, y)?;
        }
        carries = outs;
    }
    carries.extend(ys);
    Ok(carries)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::cast_precision_loss)]
mod tests {
    //! The drivers over host memory, against the CPU executor's own
    //! control flow on the same programs.
    use super::*;
    use crate::array::{Buffer, HostArray};
    use crate::exec::compiled::Compiled;
    use crate::ir::builder::Builder;
    use crate::ir::{Atom, ClosedJaxpr};
    use crate::prims::control::{self, ControlFlow};
    use crate::prims::kernel::rows;
    use crate::prims::{BinaryOp, CmpOp, Family, Primitive};
    use crate::DType;
    use std::sync::Arc;

    struct Host;

    impl LoopMemory for Host {
        type Value = Arc<HostArray>;
        type Plan = Compiled;

        fn run(
            &self, ctx: &ExecCtx, plan: &Compiled, args: &[Arc<HostArray>],
        ) -> Result<Vec<Arc<HostArray>>> {
            plan.run_in(ctx, args)
        }

        fn scalar(&self, v: &Arc<HostArray>) -> Result<Scalar> {
            Scalar::from_buffer(v.buffer(), 0).ok_or_else(|| Error::InvalidArgument("empty".into()))
        }

        fn row(&self, x: &Arc<HostArray>, i: usize) -> Result<Arc<HostArray>> {
            Ok(Arc::new(rows::take_row(x, i)?))
        }

        fn alloc(&self, aval: &Aval) -> Result<Arc<HostArray>> {
            Ok(Arc::new(HostArray::zeros(aval.shape.clone(), aval.dtype)?))
        }

        fn write_row(&self, dst: &mut Arc<HostArray>, i: usize, y: &Arc<HostArray>) -> Result<()> {
            let d = Arc::get_mut(dst).ok_or_else(|| Error::InvalidArgument("shared".into()))?;
            rows::write_row(d.buffer_mut(), i, y)
        }
    }

    fn f32s(shape: &[usize], v: Vec<f32>) -> Arc<HostArray> {
        Arc::new(HostArray::new(shape.to_vec(), Buffer::F32(v.into())).unwrap())
    }

    fn input(b: &mut Builder, shape: &[usize]) -> Atom {
        Atom::Var(b.add_input(Aval::new(shape.to_vec(), DType::F32)).unwrap())
    }

    /// `(a, b) -> op(a, b)` over f32 values of `shape`.
    fn binary(op: BinaryOp, shape: &[usize]) -> Arc<ClosedJaxpr> {
        let mut b = Builder::new();
        let (x, y) = (input(&mut b, shape), input(&mut b, shape));
        let z = b.binary(op, x, y).unwrap();
        Arc::new(b.build(vec![z]).unwrap())
    }

    fn values(v: &[Arc<HostArray>]) -> Vec<Buffer> {
        v.iter().map(|a| a.buffer().clone()).collect()
    }

    #[test]
    fn cond_runs_the_clamped_branch() {
        let branches = [binary(BinaryOp::Add, &[2]), binary(BinaryOp::Mul, &[2])];
        let plans: Vec<Compiled> = branches
            .iter()
            .map(|b| Compiled::new(b.clone()).unwrap())
            .collect();
        let c = ControlFlow::Cond {
            branches: branches.to_vec(),
        };
        let (a, b) = (f32s(&[2], vec![1.0, 2.0]), f32s(&[2], vec![3.0, 4.0]));
        for index in [-3, 0, 1, 7] {
            let idx = Arc::new(HostArray::scalar(Scalar::Int(index), DType::I32).unwrap());
            let args = [idx, a.clone(), b.clone()];
            let ours = run_cond(&ExecCtx::default(), &Host, &plans, &args).unwrap();
            let cpu = control::eval(&ExecCtx::default(), &c, &args).unwrap();
            assert_eq!(values(&ours), values(&cpu), "index {index}");
        }
        let idx = Arc::new(HostArray::scalar(Scalar::Int(-1), DType::I32).unwrap());
        let out = run_cond(&ExecCtx::default(), &Host, &plans, &[idx, a, b]).unwrap();
        assert_eq!(values(&out), vec![Buffer::F32(vec![4.0, 6.0].into())]);
    }

    /// One const, one carry, one `xs`, two `ys`:
    /// `carry' = carry * c + x`, `ys = (carry', x + carry)`.
    fn affine_scan(length: usize, reverse: bool) -> Scan {
        let mut b = Builder::new();
        let c = input(&mut b, &[3]);
        let carry = input(&mut b, &[3]);
        let x = input(&mut b, &[3]);
        let cc = b.binary(BinaryOp::Mul, carry.clone(), c).unwrap();
        let next = b.binary(BinaryOp::Add, cc, x.clone()).unwrap();
        let y = b.binary(BinaryOp::Add, x, carry).unwrap();
        Scan {
            jaxpr: Arc::new(b.build(vec![next.clone(), next, y]).unwrap()),
            length,
            reverse,
            num_consts: 1,
            num_carry: 1,
            linear: vec![false; 3],
            unroll: 1,
        }
    }

    #[test]
    fn scan_matches_the_cpu_forward_reversed_and_empty() {
        for (length, reverse) in [(4, false), (4, true), (1, false), (0, true)] {
            let s = affine_scan(length, reverse);
            let plan = Compiled::new(s.jaxpr.clone()).unwrap();
            let xs: Vec<f32> = (0..length * 3).map(|k| k as f32 * 0.5 - 1.0).collect();
            let args = [
                f32s(&[3], vec![0.5, -1.0, 2.0]),
                f32s(&[3], vec![1.0, 2.0, 3.0]),
                f32s(&[length, 3], xs),
            ];
            let c = ControlFlow::Scan(s.clone());
            let avals: Vec<Aval> = args.iter().map(|a| a.aval()).collect();
            let out_avals = Family::abstract_eval(&c, &avals).unwrap();
            let ours = run_scan(
                &ExecCtx::default(),
                &Host,
                &s,
                &plan,
                &out_avals[1..],
                &args,
            )
            .unwrap();
            let cpu = control::eval(&ExecCtx::default(), &c, &args).unwrap();
            assert_eq!(
                values(&ours),
                values(&cpu),
                "length {length} reverse {reverse}"
            );
            assert_eq!(ours[1].shape(), &[length, 3]);
        }
    }

    #[test]
    fn scan_rejects_a_body_with_the_wrong_output_count() {
        let s = affine_scan(2, false);
        // A body of 3 operands and 1 result where 3 results are due.
        let mut b = Builder::new();
        let (p, q, r) = (
            input(&mut b, &[3]),
            input(&mut b, &[3]),
            input(&mut b, &[3]),
        );
        let pq = b.binary(BinaryOp::Add, p, q).unwrap();
        let z = b.binary(BinaryOp::Add, pq, r).unwrap();
        let plan = Compiled::new(Arc::new(b.build(vec![z]).unwrap())).unwrap();
        let args = [
            f32s(&[3], vec![0.0; 3]),
            f32s(&[3], vec![0.0; 3]),
            f32s(&[2, 3], vec![0.0; 6]),
        ];
        let y = Aval::new(vec![2, 3], DType::F32);
        let err = run_scan(
            &ExecCtx::default(),
            &Host,
            &s,
            &plan,
            &[y.clone(), y],
            &args,
        )
        .unwrap_err();
        assert!(
            matches!(
                err,
                Error::Arity {
                    prim: "scan",
                    expected: 3,
                    got: 1
                }
            ),
            "{err:?}"
        );
    }

    #[test]
    fn while_doubles_to_the_bound() {
        let mut cb = Builder::new();
        let x = input(&mut cb, &[]);
        let lt = cb
            .add_eqn1(
                Primitive::Compare(CmpOp::Lt),
                vec![x, Builder::lit(DType::F32, 10.0)],
            )
            .unwrap();
        let cond = Compiled::new(Arc::new(cb.build(vec![lt]).unwrap())).unwrap();
        let mut bb = Builder::new();
        let x = input(&mut bb, &[]);
        let x2 = bb.binary(BinaryOp::Add, x.clone(), x).unwrap();
        let body = Compiled::new(Arc::new(bb.build(vec![x2]).unwrap())).unwrap();
        // The loop from one f32 carry, with `(cond, body)` consts given.
        let run = |consts| {
            let one = [f32s(&[], vec![1.0])];
            run_while(&ExecCtx::default(), &Host, &cond, &body, consts, &one)
        };
        let out = run((0, 0)).unwrap();
        assert_eq!(values(&out), vec![Buffer::F32(vec![16.0].into())]);
        let err = run((2, 0)).unwrap_err();
        assert!(matches!(err, Error::Arity { prim: "while", .. }), "{err:?}");
    }
}
