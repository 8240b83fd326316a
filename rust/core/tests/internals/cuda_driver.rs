//! Tests of `exec::cuda::driver`'s internals (reached through `microjax::internals`).

#![allow(clippy::unwrap_used, clippy::cast_precision_loss)]

//! The drivers over host memory, against the CPU executor's own
//! control flow on the same programs.
use microjax::array::{Buffer, HostArray};
use microjax::exec::compiled::Compiled;
use microjax::exec::ExecCtx;
use microjax::internals::exec_cuda_driver::*;
use microjax::ir::builder::Builder;
use microjax::ir::{Atom, ClosedJaxpr};
use microjax::prims::control::Scan;
use microjax::prims::control::{self, ControlFlow};
use microjax::prims::kernel::rows;
use microjax::prims::{BinaryOp, CmpOp, Family, Primitive};
use microjax::DType;
use microjax::Result;
use microjax::*;
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
