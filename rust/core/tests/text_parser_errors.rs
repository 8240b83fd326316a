//! Canonical parser robustness: error positions, parse limits and mutated-text fuzzing.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use microjax::ir::canonical::{canonical, parse, ParseLimits};
use microjax::ir::display::display;
use microjax::ir::typecheck::typecheck;
use microjax::{
    Atom, Aval, BinaryOp, Builder, CmpOp, DType, Error, Literal, Primitive, Scalar, UnaryOp, Var,
};

use crate::common;
use common::text::{av, bin, f32_array, lit, pjit, reduce_sum, roundtrip, sin_prog, un};
use common::{dot_general, iota};

// ------------------------------------------------------------------ parser errors and limits

fn parse_err(text: &str, lim: &ParseLimits) -> Error {
    match parse(text, lim) {
        Ok(j) => panic!("parsed {text:?} into {j:?}"),
        Err(e) => e,
    }
}

#[test]
fn parse_errors_name_line_and_column() {
    let lim = ParseLimits::default();
    let good = canonical(&sin_prog(av(&[3], DType::F32)));
    assert!(parse(&good, &lim).is_ok());
    let e = parse_err(&good.replace("sin", "sine"), &lim);
    assert!(
        matches!(&e, Error::Parse { line: 3, col: 17, msg } if msg.contains("sine")),
        "{e}"
    );
    let e = parse_err(&good.replace("microjax-jaxpr 1", "microjax-jaxpr 2"), &lim);
    assert!(
        matches!(
            e,
            Error::Parse {
                line: 1,
                col: 16,
                ..
            }
        ),
        "{e}"
    );
    let e = parse_err(&good.replace("in (v1)", "in (v7)"), &lim);
    assert!(
        matches!(&e, Error::Parse { line: 4, msg, .. } if msg.contains("v7")),
        "{e}"
    );
    let e = parse_err(&good.replace("v1:f32[3] =", "v0:f32[3] ="), &lim);
    assert!(
        matches!(&e, Error::Parse { msg, .. } if msg.contains("twice")),
        "{e}"
    );
    let e = parse_err(&good.replace("v1", "v2"), &lim);
    assert!(
        matches!(&e, Error::Parse { msg, .. } if msg.contains("gap")),
        "{e}"
    );
    // Shape errors found by the typecheck after parsing.
    let e = parse_err(&good.replace("v1:f32[3]", "v1:f32[4]"), &lim);
    assert!(
        matches!(&e, Error::Typecheck(m) if m.contains("equation 0")),
        "{e}"
    );
    let e = parse_err(&format!("{good} trailing"), &lim);
    assert!(matches!(e, Error::Parse { .. }), "{e}");
    for bad in [
        "",
        "microjax-jaxpr",
        "microjax-jaxpr 1 {",
        "microjax-jaxpr 1 { lambda ; v0:c32[]. let in (v0) }",
        // complex literals: 16 hex digits for c64 (two f32 parts), 32 for c128
        "microjax-jaxpr 1 { lambda ; v0:c64[]. let v1:c64[] = add v0 0x3f800000:c64[] in (v1) }",
        "microjax-jaxpr 1 { lambda ; v0:c128[]. let v1:c128[] = add v0 0x3f8000003f800000:c128[] in (v1) }",
        "microjax-jaxpr 1 { lambda ; v0:c64[]. let v1:c64[] = add v0 complex(0x3ff0) in (v1) }",
        "microjax-jaxpr 1 { lambda ; v0:f32[-1]. let in (v0) }",
        "microjax-jaxpr 1 { lambda ; v0:f32[]. let v1:f32[] = add v0 0x1234567890:f32[] in (v1) }",
        "microjax-jaxpr 1 { lambda ; v0:i8[]. let v1:i8[] = add v0 128:i8[] in (v1) }",
        "microjax-jaxpr 1 { lambda ; v0:f32[]. let v1:f32[] = pjit[name=\"x] v0 in (v1) }",
        "microjax-jaxpr 1 { lambda ; v0:f32[]. let v1:f32[] = pjit[name=\"\\q\"] v0 in (v1) }",
        "microjax-jaxpr 1 { lambda ; v0:f32[]. let v1:f32[] = reduce_sum[axes=(x)] v0 in (v1) }",
        "microjax-jaxpr 1 { lambda ; v0:f32[]. let v1:f32[] = pjit[jaxpr={ lambda v0:f32[]; . let in (v0) }] v0 in (v1) }",
        "microjax-jaxpr 1 { lambda ; v0:f32[] @. let in (v0) }",
    ] {
        let e = parse_err(bad, &lim);
        assert!(
            matches!(e, Error::Parse { .. } | Error::Typecheck(_)),
            "{bad:?}: {e}"
        );
    }
}

#[test]
fn parse_limits_are_enforced() {
    let mut b = Builder::new();
    let mut x = Atom::Var(b.add_input(av(&[4, 4], DType::F32)).unwrap());
    for _ in 0..10 {
        x = b.add_eqn1(un(UnaryOp::Exp), vec![x]).unwrap();
    }
    let text = canonical(&b.build(vec![x]).unwrap());
    let ok = ParseLimits::default();
    assert!(parse(&text, &ok).is_ok());
    // Each limit, lowered just below what the program needs, is refused.
    let lowerings: [fn(&mut ParseLimits); 5] = [
        |l| l.max_text_len = 50,
        |l| l.max_eqns = 9,
        |l| l.max_vars = 10,
        |l| l.max_rank = 1,
        |l| l.max_elements = 15,
    ];
    for lower in lowerings {
        let mut l = ok.clone();
        lower(&mut l);
        assert!(matches!(parse(&text, &l), Err(Error::Limit(_))), "{l:?}");
    }
    // A huge variable index is refused before anything is allocated for it.
    let huge = text.replace("v0", "v4000000000");
    assert!(matches!(parse(&huge, &ok), Err(Error::Limit(_))));
    let huge = text.replace("f32[4,4]", "f32[4294967296,4294967296,4294967296]");
    assert!(matches!(parse(&huge, &ok), Err(Error::Limit(_))));

    // Nesting: sub-jaxprs and param tuples.
    let mut j = sin_prog(av(&[], DType::F32));
    for _ in 0..5 {
        let mut b = Builder::new();
        let x = b.add_input(av(&[], DType::F32)).unwrap();
        let y = b.add_eqn1(pjit(j, "n"), vec![Atom::Var(x)]).unwrap();
        j = b.build(vec![y]).unwrap();
    }
    roundtrip(&j);
    let nested = canonical(&j);
    assert!(limit_depth(&nested, 4));
    assert!(!limit_depth(&nested, 5));
    // Pathological nesting fails cleanly (no stack overflow) whatever the
    // limit says.
    let deep_tuple = format!(
        "microjax-jaxpr 1 {{ lambda ; v0:f32[]. let v1:f32[] = neg[x={}] v0 in (v1) }}",
        "[".repeat(200_000)
    );
    let unlimited = ParseLimits {
        max_depth: usize::MAX,
        ..ok.clone()
    };
    assert!(matches!(
        parse(&deep_tuple, &unlimited),
        Err(Error::Limit(_))
    ));
    let deep_block = format!(
        "microjax-jaxpr 1 {}",
        "{ lambda ; . let = pjit[jaxpr=".repeat(50_000)
    );
    assert!(matches!(
        parse(&deep_block, &unlimited),
        Err(Error::Limit(_))
    ));
}

fn limit_depth(text: &str, depth: usize) -> bool {
    let l = ParseLimits {
        max_depth: depth,
        ..ParseLimits::default()
    };
    matches!(parse(text, &l), Err(Error::Limit(_)))
}

/// xorshift64* — deterministic, dependency-free.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

fn fuzz_corpus() -> Vec<String> {
    let mut out = Vec::new();
    // The nested program with consts, effects and odd strings.
    let mut s = Builder::new();
    s.add_const(f32_array(&[2], vec![1.0, 2.0]), false).unwrap();
    let x = s.add_input(av(&[2], DType::F32)).unwrap();
    let y = s
        .add_eqn1(bin(BinaryOp::Mul), vec![Atom::Var(x), Atom::Var(Var(0))])
        .unwrap();
    let y = s
        .add_eqn1(bin(BinaryOp::Add), vec![y, lit(0.5, DType::F32)])
        .unwrap();
    let sub = s.build(vec![y]).unwrap();
    let mut b = Builder::new();
    let x = b.add_input(av(&[2], DType::F32)).unwrap();
    let m = b.add_input(av(&[2, 3], DType::F32)).unwrap();
    let p = b.add_eqn1(pjit(sub, "f\"\\g"), vec![Atom::Var(x)]).unwrap();
    let d = b
        .add_eqn1(dot_general(&[0], &[0], &[], &[]), vec![p, Atom::Var(m)])
        .unwrap();
    let r = b.add_eqn1(reduce_sum(&[0]), vec![d]).unwrap();
    let c = b
        .add_eqn1(
            Primitive::Compare(CmpOp::Ge),
            vec![r.clone(), lit(f64::NAN, DType::F32)],
        )
        .unwrap();
    let i = b.add_eqn1(iota(DType::I32, &[3], 0), vec![]).unwrap();
    let k = b
        .add_eqn1(
            bin(BinaryOp::Add),
            vec![
                i,
                Atom::Lit(Literal::new(Scalar::Int(-3), DType::I32, true)),
            ],
        )
        .unwrap();
    let j = b.build(vec![r, c, k, lit(1.0, DType::BF16)]).unwrap();
    out.push(canonical(&j));
    out.push(canonical(&sin_prog(Aval::weak(vec![], DType::F16, true))));
    out
}

const FRAGMENTS: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    "(",
    ")",
    ",",
    ":",
    ";",
    "=",
    ".",
    "\"",
    "\\",
    "lambda",
    "let",
    "in",
    "with",
    "unbound",
    "v0",
    "v99999999999",
    "v4294967295",
    "0x",
    "0xffffffff",
    "-",
    "float(",
    "{weak}",
    "{io}",
    "f32[]",
    "key<fry>[2]",
    "None",
    "pjit",
    "\u{e9}",
    "\n",
    "18446744073709551616",
];

#[test]
fn parser_survives_mutated_text() {
    let corpus = fuzz_corpus();
    for text in &corpus {
        assert!(parse(text, &ParseLimits::default()).is_ok(), "{text}");
    }
    let lim = ParseLimits {
        max_depth: 16,
        max_eqns: 1000,
        max_vars: 1000,
        max_rank: 8,
        max_elements: 1 << 20,
        max_text_len: 1 << 20,
    };
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut oks, mut errs) = (0usize, 0usize);
    for case in 0..4000 {
        let base = &corpus[case % corpus.len()];
        let mut bytes = base.as_bytes().to_vec();
        let rounds = 1 + rng.below(3);
        for _ in 0..rounds {
            match rng.below(7) {
                0 => bytes.truncate(rng.below(bytes.len() + 1)),
                1 => {
                    // flip bits of one byte
                    if !bytes.is_empty() {
                        let i = rng.below(bytes.len());
                        bytes[i] ^= 1 << rng.below(8);
                    }
                }
                2 | 3 => {
                    // duplicate, delete or swap lines
                    let text = String::from_utf8_lossy(&bytes).into_owned();
                    let mut lines: Vec<&str> = text.lines().collect();
                    if !lines.is_empty() {
                        let i = rng.below(lines.len());
                        let j = rng.below(lines.len());
                        match rng.below(3) {
                            0 => lines.insert(j, lines[i]),
                            1 => {
                                lines.remove(i);
                            }
                            _ => lines.swap(i, j),
                        }
                    }
                    bytes = lines.join("\n").into_bytes();
                }
                4 | 5 => {
                    // insert a grammar fragment
                    let f = FRAGMENTS[rng.below(FRAGMENTS.len())];
                    let i = rng.below(bytes.len() + 1);
                    bytes.splice(i..i, f.bytes());
                }
                _ => {
                    // delete a span
                    let i = rng.below(bytes.len() + 1);
                    let n = rng.below(8).min(bytes.len() - i);
                    bytes.drain(i..i + n);
                }
            }
        }
        let text = String::from_utf8_lossy(&bytes);
        match parse(&text, &lim) {
            Ok(j) => {
                oks += 1;
                // Whatever parses is well typed and prints back to itself.
                typecheck(&j).unwrap();
                let again = canonical(&j);
                assert_eq!(parse(&again, &lim).unwrap(), j);
                let _ = display(&j);
            }
            Err(_) => errs += 1,
        }
    }
    println!("mutated texts: {oks} parsed, {errs} rejected");
    assert!(errs > 1000, "oks {oks} errs {errs}");
}
