//! Times the transform and compile passes on a long chain program
//! (`y = sin(y) * 1.0001` and `y = y + 0.5` alternating, then a sum): `cargo
//! run --release -p microjax --example transform_scale -- N...` prints, for
//! each equation count N, the seconds each pass takes, so growth with
//! program size can be read off (the passes should be linear).

use microjax::exec::compiled::Compiled;
use microjax::transforms::{jvp::jvp_jaxpr, linearize::linearize_jaxpr, vjp::value_and_grad_jaxpr};
use microjax::{Aval, BinaryOp, Builder, ClosedJaxpr, DType, ReduceOp, UnaryOp};
use std::error::Error;
use std::sync::Arc;
use std::time::Instant;

type Res<T> = std::result::Result<T, Box<dyn Error>>;

/// The chain program with about `n` elementwise equations on `f32[4]`.
fn chain(n: usize) -> Res<ClosedJaxpr> {
    let mut b = Builder::new();
    let mut y = microjax::Atom::Var(b.add_input(Aval::new(vec![4], DType::F32))?);
    // Steps alternate `+` (one equation) and `sin`, `*` (two): 2n/3 steps
    // make about n equations.
    for i in 0..n.checked_div(3).and_then(|k| k.checked_mul(2)).unwrap_or(0) {
        y = if i % 2 == 1 {
            let s = b.unary(UnaryOp::Sin, y)?;
            b.binary(BinaryOp::Mul, s, Builder::lit(DType::F32, 1.0001))?
        } else {
            b.binary(BinaryOp::Add, y, Builder::lit(DType::F32, 0.5))?
        };
    }
    let s = b.reduce(ReduceOp::Sum, y, vec![0])?;
    Ok(b.build(vec![s])?)
}

/// Runs `f` three times and prints the fastest time (the machine may be
/// shared); returns the last result.
fn timed<T>(what: &str, f: impl Fn() -> Res<T>) -> Res<T> {
    let mut best = f64::INFINITY;
    let mut out = None;
    for _ in 0..3 {
        let t = Instant::now();
        out = Some(f()?);
        best = best.min(t.elapsed().as_secs_f64());
    }
    print!("  {what} {best:.3}s");
    out.ok_or_else(|| "no run".into())
}

fn main() -> Res<()> {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse())
        .collect::<std::result::Result<_, _>>()?;
    for n in sizes {
        let j = chain(n)?;
        print!("{} eqns:", j.jaxpr.eqns.len());
        timed("jvp", || Ok(jvp_jaxpr(&j, &[true], true)?))?;
        timed("linearize", || Ok(linearize_jaxpr(&j, &[true])?))?;
        let g = timed("value_and_grad", || Ok(value_and_grad_jaxpr(&j, &[true])?))?;
        print!(" ({} eqns)", g.jaxpr.eqns.len());
        timed("compile", || Ok(Compiled::new(Arc::new(j.clone()))?))?;
        timed("compile grad", || Ok(Compiled::new(Arc::new(g.clone()))?))?;
        println!();
    }
    Ok(())
}
