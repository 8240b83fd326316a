//! Primitives whose rules come from a run-time provider (`prims/dynamic.rs`),
//! with providers written in Rust: `cube(x) = x**3` (kernel, shape, JVP,
//! batching) and `scale_by(c, t) = c * t`, linear in `t` (its transpose),
//! which cube's JVP uses for its tangent. Checked: eager and compiled
//! evaluation, JVP against finite differences, VJP (through the transpose
//! rule) against the closed form, vmap against a loop, JAX's errors for
//! missing rules, and that such programs neither parse back nor export.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use microjax::exec::compiled::Compiled;
use microjax::exec::interp::eval_closed;
use microjax::export::{Determinism, Program};
use microjax::ir::canonical::{canonical, parse, ParseLimits};
use microjax::prims::dynamic::{BatchedRule, DynamicPrim, OperandType, RuleProvider};
use microjax::transforms::batch::batch_jaxpr;
use microjax::transforms::jvp::jvp_jaxpr;
use microjax::transforms::vjp::vjp_jaxpr;
use microjax::{
    Atom, Aval, BinaryOp, Buffer, Builder, ClosedJaxpr, DType, Error, HostArray, Primitive,
};
use std::sync::Arc;

/// Rules of `cube` and `scale_by`; `complete: false` answers "no rule" for
/// everything but the shape rule and the kernel.
#[derive(Debug)]
struct Rules {
    complete: bool,
}

fn values(a: &HostArray) -> Vec<f64> {
    match a.buffer() {
        Buffer::F64(v) => v.to_vec(),
        other => panic!("expected f64, got {:?}", other.dtype()),
    }
}

fn f64_array(shape: &[usize], v: Vec<f64>) -> Arc<HostArray> {
    Arc::new(HostArray::new(shape.to_vec(), Buffer::F64(v.into())).unwrap())
}

fn prim(provider: &Arc<dyn RuleProvider>, name: &str) -> Primitive {
    Primitive::Dynamic(DynamicPrim::new(name, Vec::new(), false, provider.clone()).unwrap())
}

/// The same primitive family member as `like`, named `name`.
fn sibling(like: &DynamicPrim, name: &str) -> Result<Primitive, Error> {
    Ok(Primitive::Dynamic(DynamicPrim::new(
        name,
        Vec::new(),
        false,
        like.provider().clone(),
    )?))
}

impl RuleProvider for Rules {
    fn abstract_eval(&self, p: &DynamicPrim, ins: &[Aval]) -> Result<Option<Vec<Aval>>, Error> {
        match (p.name(), ins) {
            ("cube", [x]) => Ok(Some(vec![Aval::new(x.shape.clone(), x.dtype)])),
            ("scale_by", [c, t]) if c.same_type(t) => {
                Ok(Some(vec![Aval::new(t.shape.clone(), t.dtype)]))
            }
            (name, _) => Err(Error::InvalidArgument(format!("{name}: bad operands"))),
        }
    }

    fn kernel(
        &self, p: &DynamicPrim, args: &[&HostArray], _outs: &[Aval],
    ) -> Result<Option<Vec<HostArray>>, Error> {
        let out = match (p.name(), args) {
            ("cube", [x]) => values(x).iter().map(|v| v * v * v).collect(),
            ("scale_by", [c, t]) => values(c)
                .iter()
                .zip(values(t))
                .map(|(c, t)| c * t)
                .collect(),
            (name, _) => return Err(Error::InvalidArgument(format!("{name}: bad operands"))),
        };
        let shape = args.last().map(|a| a.shape().to_vec()).unwrap_or_default();
        Ok(Some(vec![HostArray::new(shape, Buffer::F64(out))?]))
    }

    fn jvp(
        &self, p: &DynamicPrim, primals: &[Aval], tangents: &[Option<Aval>],
    ) -> Result<Option<Arc<ClosedJaxpr>>, Error> {
        if !self.complete || p.name() != "cube" {
            return Ok(None);
        }
        let ([x_aval], [Some(t_aval)]) = (primals, tangents) else {
            return Ok(None);
        };
        // (x, t) -> (cube(x), scale_by(3 * x * x, t))
        let mut b = Builder::new();
        let x = Atom::Var(b.add_input(x_aval.clone())?);
        let t = Atom::Var(b.add_input(t_aval.clone())?);
        let y = b.add_eqn1(Primitive::Dynamic(p.clone()), vec![x.clone()])?;
        let xx = b.add_eqn1(Primitive::Binary(BinaryOp::Mul), vec![x.clone(), x])?;
        let three = b.zeros(x_aval)?;
        let three = b.add_eqn1(
            Primitive::Binary(BinaryOp::Add),
            vec![three, lit(3.0, x_aval.dtype)],
        )?;
        let c = b.add_eqn1(Primitive::Binary(BinaryOp::Mul), vec![three, xx])?;
        let ty = b.add_eqn1(sibling(p, "scale_by")?, vec![c, t])?;
        Ok(Some(Arc::new(b.build(vec![y, ty])?)))
    }

    fn transpose(
        &self, p: &DynamicPrim, operands: &[OperandType], cts: &[Option<Aval>],
    ) -> Result<Option<Arc<ClosedJaxpr>>, Error> {
        if !self.complete || p.name() != "scale_by" {
            return Ok(None);
        }
        let ([OperandType::Known(c_aval), OperandType::Linear(_)], [Some(ct_aval)]) =
            (operands, cts)
        else {
            return Ok(None);
        };
        // (c, ct) -> scale_by(c, ct)
        let mut b = Builder::new();
        let c = Atom::Var(b.add_input(c_aval.clone())?);
        let ct = Atom::Var(b.add_input(ct_aval.clone())?);
        let out = b.add_eqn1(Primitive::Dynamic(p.clone()), vec![c, ct])?;
        Ok(Some(Arc::new(b.build(vec![out])?)))
    }

    fn batch(
        &self, p: &DynamicPrim, operands: &[Aval], dims: &[Option<usize>], _size: usize,
    ) -> Result<Option<BatchedRule>, Error> {
        if !self.complete || p.name() != "cube" {
            return Ok(None);
        }
        // Elementwise: the batched operand, cubed, keeps its batch dim.
        let mut b = Builder::new();
        let ins = operands
            .iter()
            .map(|a| Ok(Atom::Var(b.add_input(a.clone())?)))
            .collect::<Result<Vec<_>, Error>>()?;
        let out = b.add_eqn1(Primitive::Dynamic(p.clone()), ins)?;
        Ok(Some(BatchedRule {
            jaxpr: Arc::new(b.build(vec![out])?),
            out_dims: dims.to_vec(),
        }))
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

fn lit(v: f64, dtype: DType) -> Atom {
    Atom::Lit(microjax::Literal::new(
        microjax::Scalar::Float(v),
        dtype,
        false,
    ))
}

fn provider(complete: bool) -> Arc<dyn RuleProvider> {
    Arc::new(Rules { complete })
}

/// `sin(cube(x))` on f64[n].
fn program(provider: &Arc<dyn RuleProvider>, n: usize) -> ClosedJaxpr {
    let mut b = Builder::new();
    let x = Atom::Var(b.add_input(Aval::new(vec![n], DType::F64)).unwrap());
    let y = b.add_eqn1(prim(provider, "cube"), vec![x]).unwrap();
    let z = b
        .add_eqn1(Primitive::Unary(microjax::UnaryOp::Sin), vec![y])
        .unwrap();
    b.build(vec![z]).unwrap()
}

const XS: [f64; 4] = [0.5, -1.25, 2.0, 0.0];

fn f(x: f64) -> f64 {
    (x * x * x).sin()
}

fn df(x: f64) -> f64 {
    (x * x * x).cos() * 3.0 * x * x
}

fn assert_close(got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        assert!(
            (g - w).abs() <= tol * (1.0 + w.abs()),
            "got {got:?}, want {want:?}"
        );
    }
}

#[test]
fn eager_and_compiled_evaluation_use_the_provider_kernel() {
    let p = provider(true);
    let prog = program(&p, 4);
    let x = f64_array(&[4], XS.to_vec());
    let want: Vec<f64> = XS.iter().map(|&x| f(x)).collect();
    let eager = eval_closed(&prog, std::slice::from_ref(&x)).unwrap();
    assert_close(&values(&eager[0]), &want, 1e-15);
    let plan = Compiled::new(Arc::new(prog)).unwrap();
    let compiled = plan.run(std::slice::from_ref(&x)).unwrap();
    assert_eq!(values(&compiled[0]), values(&eager[0]));
}

#[test]
fn shape_rule_errors_come_from_the_provider() {
    let p = provider(true);
    let mut b = Builder::new();
    let c = Atom::Var(b.add_input(Aval::new(vec![2], DType::F64)).unwrap());
    let t = Atom::Var(b.add_input(Aval::new(vec![3], DType::F64)).unwrap());
    let err = b.add_eqn1(prim(&p, "scale_by"), vec![c, t]).unwrap_err();
    assert_eq!(err, Error::InvalidArgument("scale_by: bad operands".into()));
}

#[test]
fn jvp_matches_finite_differences() {
    let p = provider(true);
    let prog = program(&p, 4);
    let (jvp, nz) = jvp_jaxpr(&prog, &[true], false).unwrap();
    assert_eq!(nz, vec![true]);
    let x = f64_array(&[4], XS.to_vec());
    let t = f64_array(&[4], vec![1.0, 0.5, -2.0, 3.0]);
    let outs = eval_closed(&jvp, &[x, t.clone()]).unwrap();
    let h = 1e-6;
    let fd: Vec<f64> = XS
        .iter()
        .zip(values(&t))
        .map(|(&x, t)| (f(x + h * t) - f(x - h * t)) / (2.0 * h))
        .collect();
    assert_close(&values(&outs[0]), &XS.map(f), 1e-15);
    assert_close(&values(&outs[1]), &fd, 1e-6);
}

#[test]
fn vjp_runs_the_transpose_rule() {
    let p = provider(true);
    let prog = program(&p, 4);
    let vjp = vjp_jaxpr(&prog, &[true]).unwrap();
    let x = f64_array(&[4], XS.to_vec());
    let fwd = eval_closed(&vjp.fwd, &[x]).unwrap();
    assert_close(&values(&fwd[0]), &XS.map(f), 1e-15);
    let mut bwd_in: Vec<Arc<HostArray>> = fwd[1..].to_vec();
    bwd_in.push(f64_array(&[4], vec![1.0; 4]));
    let grads = eval_closed(&vjp.bwd, &bwd_in).unwrap();
    assert_close(&values(&grads[0]), &XS.map(df), 1e-12);
    // The backward program holds the linear primitive scale_by.
    let names: Vec<&str> = vjp.bwd.jaxpr.eqns.iter().map(|e| e.prim.name()).collect();
    assert!(names.contains(&"scale_by"), "{names:?}");
}

#[test]
fn vmap_matches_a_loop() {
    let p = provider(true);
    let prog = program(&p, 2);
    let batched = batch_jaxpr(&prog, &[Some(1)], 3, &[Some(0)]).unwrap();
    // x: f64[2, 3], batch axis 1.
    let rows: Vec<f64> = vec![0.5, -1.0, 2.0, 1.5, 0.25, -0.75];
    let x = f64_array(&[2, 3], rows.clone());
    let out = eval_closed(&batched, &[x]).unwrap();
    assert_eq!(out[0].shape(), &[3, 2]);
    let mut want = Vec::new();
    for j in 0..3 {
        let member = f64_array(&[2], vec![rows[j], rows[3 + j]]);
        want.extend(values(&eval_closed(&prog, &[member]).unwrap()[0]));
    }
    assert_eq!(values(&out[0]), want);
}

#[test]
fn missing_rules_are_jax_errors() {
    let p = provider(false);
    let prog = program(&p, 4);
    assert_eq!(
        jvp_jaxpr(&prog, &[true], false).unwrap_err(),
        Error::NotImplemented("Differentiation rule for 'cube' not implemented".into())
    );
    assert_eq!(
        batch_jaxpr(&prog, &[Some(0)], 2, &[Some(0)]).unwrap_err(),
        Error::NotImplemented("Batching rule for 'cube' not implemented".into())
    );
    // scale_by(c, t) linear in t, without a transpose rule.
    let mut b = Builder::new();
    let c = Atom::Var(b.add_input(Aval::new(vec![2], DType::F64)).unwrap());
    let t = Atom::Var(b.add_input(Aval::new(vec![2], DType::F64)).unwrap());
    let y = b.add_eqn1(prim(&p, "scale_by"), vec![c, t]).unwrap();
    let lin = b.build(vec![y]).unwrap();
    assert_eq!(
        microjax::transforms::transpose::transpose_jaxpr(&lin, &[false, true]).unwrap_err(),
        Error::NotImplemented(
            "Transpose rule (for reverse-mode differentiation) for 'scale_by' not implemented"
                .into()
        )
    );
    // Its value still computes.
    let out = eval_closed(
        &lin,
        &[
            f64_array(&[2], vec![2.0, 3.0]),
            f64_array(&[2], vec![4.0, 5.0]),
        ],
    )
    .unwrap();
    assert_eq!(values(&out[0]), vec![8.0, 15.0]);
}

#[test]
fn equality_is_name_params_and_provider_identity() {
    let p = provider(true);
    let q = provider(true);
    assert_eq!(prim(&p, "cube"), prim(&p, "cube"));
    assert_ne!(prim(&p, "cube"), prim(&q, "cube"));
    assert_ne!(prim(&p, "cube"), prim(&p, "scale_by"));
    let with = |k: i64| {
        Primitive::Dynamic(
            DynamicPrim::new(
                "cube",
                vec![("k".into(), microjax::Param::Int(k))],
                false,
                p.clone(),
            )
            .unwrap(),
        )
    };
    assert_eq!(with(1), with(1));
    assert_ne!(with(1), with(2));
    assert_eq!(with(1).params(), vec![("k", microjax::Param::Int(1))]);
    // A built-in name cannot be taken.
    assert!(matches!(
        DynamicPrim::new("sin", Vec::new(), false, p.clone()),
        Err(Error::InvalidArgument(_))
    ));
}

#[test]
fn programs_holding_one_neither_parse_back_nor_export() {
    let p = provider(true);
    let prog = program(&p, 4);
    assert!(microjax::prims::dynamic::holds_dynamic(&prog.jaxpr));
    assert_eq!(
        Primitive::from_params("cube", &[]).unwrap_err(),
        Error::UnknownPrimitive("cube".into())
    );
    let text = canonical(&prog);
    assert!(text.contains("cube"), "{text}");
    let err = parse(&text, &ParseLimits::default()).unwrap_err();
    assert!(
        matches!(&err, Error::Parse { msg, .. } if msg == "unknown primitive \"cube\""),
        "{err:?}"
    );
    match Program::to_bytes(&prog, Determinism::Default, "") {
        Err(Error::Unsupported(msg)) => assert!(msg.contains("(cube)"), "{msg}"),
        other => panic!("expected Unsupported, got {other:?}"),
    }
}
