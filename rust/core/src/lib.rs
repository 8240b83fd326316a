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
#![deny(unsafe_code)]

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

pub use array::{checked_size, Buffer, HostArray};
pub use dtype::DType;
pub use error::{Error, Result};
pub use ir::builder::Builder;
pub use ir::{Atom, Aval, ClosedJaxpr, Effect, Eqn, Jaxpr, Literal, Scalar, Var};
pub use prims::{BinaryOp, CmpOp, DotDims, Param, Primitive, ReduceOp, SpecialOp, UnaryOp};
