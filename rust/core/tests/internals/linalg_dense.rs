//! Tests of `prims::linalg::dense`'s internals (reached through `microjax::internals`).

use faer::Par;
use microjax::internals::prims_linalg_dense::*;
use microjax::prims::linalg::{LinalgOp, SolveOpts};
use microjax::Result;
use microjax::*;

fn run(op: LinalgOp, shape: &[usize], v: Vec<f32>) -> Result<Vec<Buffer>> {
    let a = HostArray::new(shape.to_vec(), Buffer::F32(v.into()))?;
    eval_buffers(&op, &[&a])?.ok_or_else(|| Error::InvalidArgument("empty".into()))
}

fn f32s(b: &Buffer) -> Vec<f32> {
    match b {
        Buffer::F32(v) => v.to_vec(),
        _ => Vec::new(),
    }
}

fn i32s(b: &Buffer) -> Vec<i32> {
    match b {
        Buffer::I32(v) => v.to_vec(),
        _ => Vec::new(),
    }
}

/// A zero pivot leaves its column unscaled, as `getrf` (recorded from
/// JAX 0.10.2: pivots [0, 2, 2], permutation [0, 2, 1]).
#[test]
fn lu_zero_pivot_follows_getrf() -> Result<()> {
    let a = vec![0.0, 1.0, 2.0, 0.0, 3.0, 4.0, 0.0, 5.0, 7.0];
    let outs = run(LinalgOp::Lu, &[3, 3], a)?;
    let [lu, piv, perm] = outs.as_slice() else {
        return Err(Error::InvalidArgument("three outputs".into()));
    };
    let want = [0.0, 1.0, 2.0, 0.0, 5.0, 7.0, 0.0, 0.6, -0.2];
    let got = f32s(lu);
    assert!(
        got.iter().zip(want).all(|(g, w)| (g - w).abs() < 1e-5),
        "{got:?}"
    );
    assert_eq!(i32s(piv), vec![0, 2, 2]);
    assert_eq!(i32s(perm), vec![0, 2, 1]);
    Ok(())
}

/// `getrf`'s pivots from faer's permutation on a matrix with row swaps.
#[test]
fn lu_pivots_match_getrf() -> Result<()> {
    let a = vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 10.0];
    let outs = run(LinalgOp::Lu, &[3, 3], a)?;
    assert_eq!(outs.get(1).map(i32s), Some(vec![2, 2, 2]));
    assert_eq!(outs.get(2).map(i32s), Some(vec![2, 0, 1]));
    Ok(())
}

/// One kernel's outputs on a given parallelism.
type Kernel<'a> = dyn Fn(Par) -> Result<Vec<Buffer>> + 'a;

fn bits(bufs: &[Buffer]) -> Vec<Vec<u32>> {
    bufs.iter()
        .map(|b| match b {
            Buffer::F32(v) => v.iter().map(|x| x.to_bits()).collect(),
            Buffer::I32(v) => v.iter().map(|&x| x as u32).collect(),
            _ => Vec::new(),
        })
        .collect()
}

/// At the sizes around [`SEQ_MAX`], where the kernels switch from the
/// sequential to the partitioned path, both give the same bits (so the
/// switch moves no result), and the factors are right.
#[test]
fn sequential_and_partitioned_paths_give_the_same_bits() -> Result<()> {
    for n in [SEQ_MAX, SEQ_MAX + 1] {
        let mut draw = super::uniform_values(n as u64);
        let x: Vec<f32> = (0..n * n).map(|_| draw() as f32).collect();
        // A diagonally dominant (so well conditioned, positive definite
        // and pivot-free) matrix: `x + xᵀ + n I`.
        let mut spd = x.clone();
        for i in 0..n {
            for j in 0..n {
                spd[i * n + j] = x[i * n + j] + x[j * n + i] + if i == j { n as f32 } else { 0.0 };
            }
        }
        let a = HostArray::new(vec![n, n], Buffer::F32(x.into()))?;
        let s = HostArray::new(vec![n, n], Buffer::F32(spd.clone().into()))?;
        let (a, s) = (
            Stack::<f32>::new("test", &a)?,
            Stack::<f32>::new("test", &s)?,
        );
        let solve = |par| {
            let o = SolveOpts {
                left_side: true,
                lower: true,
                transpose_a: false,
                unit_diagonal: false,
            };
            solve_all(&s, &a, o, false, par).map(|o| vec![o.buffer()])
        };
        let runs: [(&str, &Kernel<'_>); 4] = [
            ("cholesky", &|par| {
                cholesky_all(&s, par).map(|o| vec![o.buffer()])
            }),
            ("lu", &|par| lu_all(&a, par)),
            ("qr", &|par| qr_all(&a, true, par)),
            ("solve", &solve),
        ];
        for (name, run) in runs {
            let (seq, part) = (run(Par::Seq)?, run(PAR)?);
            assert!(bits(&seq) == bits(&part), "{name} at {n}");
        }
        // L Lᵀ = spd, to f32 rounding.
        let l = f32s(&cholesky_all(&s, par_for(n))?.buffer());
        let worst = (0..n)
            .flat_map(|i| (0..n).map(move |j| (i, j)))
            .map(|(i, j)| {
                let dot: f64 = (0..n)
                    .map(|k| f64::from(l[i * n + k]) * f64::from(l[j * n + k]))
                    .sum();
                (dot - f64::from(spd[i * n + j])).abs()
            })
            .fold(0.0, f64::max);
        assert!(worst < 1e-3 * n as f64, "cholesky at {n}: {worst}");
    }
    Ok(())
}
