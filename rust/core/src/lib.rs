//! # microjax
//!
//! The core of microjax_rs: a JAX-compatible IR (jaxprs), the primitive set
//! with its rules (shape, kernel, jvp, transpose, batch), transforms and
//! executors. It has no Python dependency: Rust programs build jaxprs with
//! [`ir::builder::Builder`], print and parse them, and run them with
//! [`exec::interp::eval_jaxpr`].
//!
//! ```
//! use microjax::{Aval, Atom, Builder, DType, HostArray, Buffer, Primitive, UnaryOp, BinaryOp};
//! use std::sync::Arc;
//! let mut b = Builder::new();
//! let x = b.add_input(Aval::new(vec![3], DType::F32))?;
//! let s = b.add_eqn1(Primitive::Unary(UnaryOp::Sin), vec![Atom::Var(x)])?;
//! let y = b.add_eqn1(Primitive::Binary(BinaryOp::Mul), vec![s.clone(), s])?;
//! let prog = b.build(vec![y])?;
//! let arg = Arc::new(HostArray::new(vec![3], Buffer::from(vec![0.0f32, 1.0, 2.0]))?);
//! let out = microjax::exec::interp::eval_closed(&prog, &[arg])?;
//! assert_eq!(out.len(), 1);
//! # Ok::<(), microjax::Error>(())
//! ```
//!
//! The transforms take a closed program and return a program: here
//! `value_and_grad` of `f(x) = sin(x) * x` (one program computing the value
//! and the derivative `cos(x) * x + sin(x)`), then `vmap` of that over a
//! leading axis of 3, run by the compiled executor. A program's canonical
//! text ([`ir::canonical::canonical`]) parses back to the same program
//! ([`ir::canonical::parse`]); its `Display` form is JAX's `make_jaxpr`
//! printout, for people, and is not parsed.
//!
//! ```
//! use microjax::exec::compiled::Compiled;
//! use microjax::ir::canonical::{canonical, parse, ParseLimits};
//! use microjax::transforms::{batch::batch_jaxpr, vjp::value_and_grad_jaxpr};
//! use microjax::{Atom, Aval, BinaryOp, Buffer, Builder, DType, HostArray, Primitive, UnaryOp};
//! use std::sync::Arc;
//! let mut b = Builder::new();
//! let x = Atom::Var(b.add_input(Aval::new(vec![], DType::F32))?);
//! let s = b.add_eqn1(Primitive::Unary(UnaryOp::Sin), vec![x.clone()])?;
//! let y = b.add_eqn1(Primitive::Binary(BinaryOp::Mul), vec![s, x])?;
//! let f = b.build(vec![y])?;
//! let vg = value_and_grad_jaxpr(&f, &[true])?; // x -> (f(x), f'(x))
//! let batched = batch_jaxpr(&vg, &[Some(0)], 3, &[Some(0), Some(0)])?; // f32[3] -> (f32[3], f32[3])
//! let xs = [0.0f32, 0.5, 1.0];
//! let arg = Arc::new(HostArray::new(vec![3], Buffer::from(xs.to_vec()))?);
//! let out = Compiled::new(Arc::new(batched.clone()))?.run(&[arg])?;
//! for (g, x) in out[1].as_slice::<f32>()?.iter().zip(xs) {
//!     assert!((g - (x.cos() * x + x.sin())).abs() < 1e-6);
//! }
//! let text = canonical(&batched);
//! assert_eq!(canonical(&parse(&text, &ParseLimits::default())?), text);
//! # Ok::<(), microjax::Error>(())
//! ```
//!
//! Forward and reverse mode separately: [`transforms::jvp::jvp_jaxpr`]
//! gives a program `(x, t) -> (f(x), f'(x) t)`; [`transforms::vjp::vjp_jaxpr`]
//! splits `f` into a forward program (outputs and residuals) and a backward
//! program (residuals and an output cotangent to the input cotangent).
//! Arrays are built from and read into typed vectors
//! ([`HostArray::from_vec`], [`HostArray::as_slice`], [`HostArray::to_vec`]).
//!
//! ```
//! use microjax::exec::interp::eval_closed;
//! use microjax::transforms::{jvp::jvp_jaxpr, vjp::vjp_jaxpr};
//! use microjax::{Atom, Aval, BinaryOp, Builder, DType, HostArray, Primitive, UnaryOp};
//! use std::sync::Arc;
//! // f(x) = sin(x) * x on f64[2]
//! let mut b = Builder::new();
//! let x = Atom::Var(b.add_input(Aval::new(vec![2], DType::F64))?);
//! let s = b.add_eqn1(Primitive::Unary(UnaryOp::Sin), vec![x.clone()])?;
//! let y = b.add_eqn1(Primitive::Binary(BinaryOp::Mul), vec![s, x])?;
//! let f = b.build(vec![y])?;
//! let df = |x: f64| x.cos() * x + x.sin();
//! let xs = vec![0.25f64, 2.0];
//! let x_arr = Arc::new(HostArray::from_vec(vec![2], xs.clone())?);
//!
//! // JVP: tangent t = [1, 3] gives f'(x) * t.
//! let (jvp, _) = jvp_jaxpr(&f, &[true], false)?;
//! let t = Arc::new(HostArray::from_vec(vec![2], vec![1.0f64, 3.0])?);
//! let out = eval_closed(&jvp, &[x_arr.clone(), t])?;
//! let tangent = out[1].to_vec::<f64>()?;
//! assert!((tangent[0] - df(0.25)).abs() < 1e-12 && (tangent[1] - 3.0 * df(2.0)).abs() < 1e-12);
//!
//! // VJP: run the forward program, then the backward one on its residuals
//! // and the cotangent [2, 1].
//! let vjp = vjp_jaxpr(&f, &[true])?;
//! let fwd = eval_closed(&vjp.fwd, &[x_arr])?; // (f(x), residuals...)
//! let mut bwd_args = fwd[1..].to_vec();
//! bwd_args.push(Arc::new(HostArray::from_vec(vec![2], vec![2.0f64, 1.0])?));
//! let ct = eval_closed(&vjp.bwd, &bwd_args)?;
//! let g = ct[0].as_slice::<f64>()?;
//! assert!((g[0] - 2.0 * df(0.25)).abs() < 1e-12 && (g[1] - df(2.0)).abs() < 1e-12);
//! # Ok::<(), microjax::Error>(())
//! ```
#![deny(unsafe_code)]

// The crate README's example runs as a doc test.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

pub mod array;
pub mod dtype;
pub mod error;
pub mod exec;
pub mod export;
#[doc(hidden)]
pub mod internals;
pub mod ir;
pub mod prims;
pub mod promote;
pub mod transforms;

pub use array::{checked_size, Buffer, Element, HostArray, C32, C64};
pub use dtype::DType;
pub use error::{Error, Result};
pub use ir::builder::Builder;
pub use ir::{Atom, Aval, ClosedJaxpr, Effect, Eqn, Jaxpr, Literal, Scalar, Var};
pub use prims::{BinaryOp, CmpOp, DotDims, Param, Primitive, ReduceOp, SpecialOp, UnaryOp};
