//! Tests of `ir::canonical::parser`'s internals (reached through `microjax::internals`).

use half::f16;
use microjax::array::Buffer;
use microjax::internals::ir_canonical::{buffer_to_le, write_param};
use microjax::internals::ir_canonical_parser::*;
use microjax::ir::canonical::{buffer_from_le, ParseLimits};
use microjax::Result;
use microjax::*;
use std::sync::Arc;

fn text_of(p: &Param) -> String {
    let mut s = String::new();
    write_param(&mut s, p, 0);
    s
}

fn reparse(text: &str) -> Result<Param> {
    let mut parser = Parser {
        text,
        toks: lex(text)?,
        pos: 0,
        max_depth: 8,
        limits: ParseLimits::default(),
        n_eqns: 0,
        n_vars: 0,
        end: end_position(text),
    };
    let p = parser.param(0)?;
    match parser.peek() {
        None => Ok(p),
        Some(t) => Err(perr(t.pos, "trailing".into())),
    }
}

#[test]
fn every_param_kind_round_trips() {
    let mut params = vec![
        Param::None,
        Param::Bool(true),
        Param::Bool(false),
        Param::Int(i64::MIN),
        Param::Int(42),
        Param::Float(f64::NAN),
        Param::Float(-0.0),
        Param::Float(0.1),
        Param::Float(f64::NEG_INFINITY),
        Param::Str(String::new()),
        Param::Str("a \"b\" \\ \n\t\r\u{0}\u{7f} é 😀".into()),
        Param::Ints(vec![]),
        Param::Ints(vec![5]),
        Param::Ints(vec![-1, 0, 3]),
        Param::Tuple(vec![]),
        Param::Tuple(vec![
            Param::Tuple(vec![Param::Ints(vec![1]), Param::Ints(vec![])]),
            Param::None,
            Param::Str("x".into()),
        ]),
        Param::Jaxpr(Arc::new(ClosedJaxpr::new(Jaxpr::default(), Vec::new()))),
    ];
    params.extend(microjax::dtype::ALL_DTYPES.iter().map(|&d| Param::DType(d)));
    for p in &params {
        let text = text_of(p);
        let back = reparse(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(text_of(&back), text);
        if let (Param::Float(a), Param::Float(b)) = (p, &back) {
            assert_eq!(a.to_bits(), b.to_bits());
        } else {
            assert_eq!(&back, p);
        }
    }
}

#[test]
fn depth_limit_applies_to_tuples() {
    assert!(reparse("[[[[[[[[1]]]]]]]]").is_ok());
    assert!(matches!(
        reparse("[[[[[[[[[1]]]]]]]]]"),
        Err(Error::Limit(_))
    ));
}

#[test]
fn const_bytes_round_trip() {
    let bufs = [
        Buffer::Bool(vec![true, false].into()),
        Buffer::I16(vec![-2, 300].into()),
        Buffer::U32(vec![7, u32::MAX].into()),
        Buffer::U64(vec![u64::MAX, 1].into()),
        Buffer::F16(vec![f16::from_f32(1.5), f16::NAN].into()),
        Buffer::F64(vec![-0.0, 2.0].into()),
        Buffer::Key(vec![1, 2, 3, 4].into()),
    ];
    for b in bufs {
        let bytes = buffer_to_le(&b);
        let back = buffer_from_le(b.dtype(), b.len(), &bytes).unwrap();
        assert_eq!(buffer_to_le(&back), bytes);
    }
    assert!(buffer_from_le(DType::Bool, 1, &[2]).is_err());
    assert!(buffer_from_le(DType::F32, 1, &[0, 0, 0]).is_err());
    assert_eq!(parse_hex_bytes("0x0aff"), Some(vec![10, 255]));
    assert_eq!(parse_hex_bytes("0x0af"), None);
    assert_eq!(parse_hex_bytes("0xzz"), None);
    assert_eq!(parse_hex("0x+1", 8), None);
    assert_eq!(parse_hex("0x123456789", 8), None);
    assert_eq!(parse_hex("0x7fc00000", 8), Some(0x7fc0_0000));
}
