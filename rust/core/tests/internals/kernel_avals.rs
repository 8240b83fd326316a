//! Tests of `prims::kernel`'s internals (reached through `microjax::internals`).

use microjax::dtype::ALL_DTYPES;
use microjax::internals::prims_kernel::*;
use microjax::prims::shape;
use microjax::prims::{BinaryOp, CmpOp, UnaryOp};
use microjax::*;

#[test]
fn fast_aval_agrees_with_shape_rule() {
    let shapes: [&[usize]; 5] = [&[], &[3], &[2, 3], &[0], &[1]];
    let mut prims: Vec<Primitive> = Vec::new();
    prims.extend(UnaryOp::ALL.iter().map(|&o| Primitive::Unary(o)));
    prims.extend(BinaryOp::ALL.iter().map(|&o| Primitive::Binary(o)));
    prims.extend(CmpOp::ALL.iter().map(|&o| Primitive::Compare(o)));
    let mut fast_hits = 0;
    for p in &prims {
        for dx in ALL_DTYPES {
            for dy in ALL_DTYPES {
                for sx in shapes {
                    for sy in shapes {
                        let x = HostArray::zeros(sx.to_vec(), dx).unwrap();
                        let y = HostArray::zeros(sy.to_vec(), dy).unwrap();
                        let args: Vec<&HostArray> = if matches!(p, Primitive::Unary(_)) {
                            vec![&x]
                        } else {
                            vec![&x, &y]
                        };
                        let avals: Vec<Aval> = args.iter().map(|a| a.aval()).collect();
                        let slow = shape::abstract_eval(p, &avals);
                        if let Some(fast) = fast_aval(p, &args) {
                            fast_hits += 1;
                            assert_eq!(slow, Ok(vec![fast]), "{p} {avals:?}");
                        }
                    }
                }
            }
        }
    }
    assert!(fast_hits > 1000);
}
