//! Aval, literal, primitive and program helpers shared by the jaxpr text test files.
use microjax::ir::canonical::{canonical, parse_with_consts, ParseLimits};
use microjax::ir::hash::structural_hash;
use microjax::ir::typecheck::typecheck;
use microjax::prims::Pjit;
use microjax::{
    Atom, Aval, BinaryOp, Buffer, Builder, ClosedJaxpr, DType, HostArray, Literal, Primitive,
    ReduceOp, Scalar, UnaryOp,
};
use std::sync::Arc;

pub fn av(shape: &[usize], d: DType) -> Aval {
    Aval::new(shape.to_vec(), d)
}

pub fn lit(v: f64, d: DType) -> Atom {
    Atom::Lit(Literal::new(Scalar::Float(v), d, true))
}

pub fn un(op: UnaryOp) -> Primitive {
    Primitive::Unary(op)
}

pub fn bin(op: BinaryOp) -> Primitive {
    Primitive::Binary(op)
}

pub fn reduce_sum(axes: &[usize]) -> Primitive {
    super::reduce(ReduceOp::Sum, axes)
}

pub fn pjit(sub: ClosedJaxpr, name: &str) -> Primitive {
    Primitive::Pjit(Pjit {
        jaxpr: Arc::new(sub),
        name: name.to_string(),
    })
}

pub fn f32_array(shape: &[usize], v: Vec<f32>) -> Arc<HostArray> {
    Arc::new(HostArray::new(shape.to_vec(), Buffer::F32(v.into())).unwrap())
}

/// `x -> sin(x)` over `aval`.
pub fn sin_prog(aval: Aval) -> ClosedJaxpr {
    let mut b = Builder::new();
    let x = b.add_input(aval).unwrap();
    let y = b.add_eqn1(un(UnaryOp::Sin), vec![Atom::Var(x)]).unwrap();
    b.build(vec![y]).unwrap()
}

pub fn roundtrip(j: &ClosedJaxpr) {
    typecheck(j).unwrap();
    let text = canonical(j);
    let back = parse_with_consts(&text, j.consts.clone(), &ParseLimits::default())
        .unwrap_or_else(|e| panic!("{e}\n--- text ---\n{text}"));
    assert_eq!(&back, j, "round trip changed the program:\n{text}");
    // Printing again gives the same text.
    assert_eq!(canonical(&back), text);
    assert_eq!(structural_hash(&back), structural_hash(j));
}
