//! A mutation fuzzer for exported programs (stable Rust, no extra crates).
//!
//! ```text
//! cargo run --profile ci -p microjax --example fuzz_program -- \
//!     [--corpus DIR] [--iterations N | --seconds S] [--seed X] [--out DIR] [--timeout S]
//! cargo run --profile ci -p microjax --example fuzz_program -- --make-corpus DIR
//! ```
//!
//! Reads the seed programs in `--corpus` (default `rust/core/fuzz/corpus`),
//! then for each case applies 1–4 random mutations (bit flips, byte
//! inserts/deletes, truncations, splices with another seed, chunk
//! duplication, "interesting" integers written over header fields and digit
//! runs, token swaps and replacements in the text section), loads the result
//! with `Program::from_bytes_with` under tight limits and runs it on zeros of
//! its declared input types. Every case must end in `Ok` or a typed `Err`.
//!
//! A panic is caught (`catch_unwind`), its message printed and the
//! reproducing bytes written to `--out` (default `fuzz-crashes/`) as
//! `panic-<hash>.bin`; a case running longer than `--timeout` seconds
//! (default 10) is written as `hang-<hash>.bin` and ends the process with
//! status 2. The exit status is 1 when any case panicked. The same seed and
//! corpus give the same cases. `--make-corpus DIR` writes the built-in seed
//! programs (the committed corpus was made this way plus programs exported
//! from Python).
//!
//! The `ci` profile keeps overflow checks and debug assertions, so an
//! arithmetic overflow is a caught panic rather than a wrapped value.
//!
//! `cargo afl` (afl.rs) would drive the same `fuzz_case` function with
//! coverage feedback for longer campaigns; it is not installable on the
//! offline build machines here, so this harness uses blind mutation.

use microjax::export::{Determinism, Limits, Program};
use microjax::ir::canonical::ParseLimits;
use microjax::prims::control::{ControlFlow, Scan};
use microjax::prims::{DotGeneral, Pjit};
use microjax::{
    Atom, Aval, BinaryOp, Buffer, Builder, ClosedJaxpr, CmpOp, DType, DotDims, HostArray,
    Primitive, ReduceOp, UnaryOp,
};
use std::collections::hash_map::DefaultHasher;
use std::error::Error;
use std::hash::{Hash, Hasher};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

type Res<T> = std::result::Result<T, Box<dyn Error>>;

/// xorshift64*: reproducible cases from `--seed`.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 12;
        x ^= x >> 25;
        x ^= x << 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform-ish in `0..n` (0 when `n` is 0).
    fn below(&mut self, n: usize) -> usize {
        let n64 = u64::try_from(n).unwrap_or(u64::MAX);
        usize::try_from(self.next().checked_rem(n64).unwrap_or(0)).unwrap_or(0)
    }

    fn pick<'a, T>(&mut self, xs: &'a [T]) -> Option<&'a T> {
        xs.get(self.below(xs.len()))
    }
}

/// The text's length field, as the core writes it; the text follows it.
const TEXT_LEN_FIELD: std::ops::Range<usize> = microjax::export::TEXT_LEN_FIELD;
const TEXT_START: usize = TEXT_LEN_FIELD.end;

/// The text section of `bytes` as a range, when its length field is sane.
fn text_range(bytes: &[u8]) -> Option<std::ops::Range<usize>> {
    let len: [u8; 8] = bytes.get(TEXT_LEN_FIELD)?.try_into().ok()?;
    let len = usize::try_from(u64::from_le_bytes(len)).ok()?;
    let end = TEXT_START.checked_add(len)?;
    (end <= bytes.len()).then_some(TEXT_START..end)
}

const INTERESTING: &[u64] = &[
    0,
    1,
    2,
    7,
    8,
    63,
    64,
    255,
    256,
    65_535,
    65_536,
    0x7fff_ffff,
    0x8000_0000,
    0xffff_ffff,
    0x1_0000_0000,
    0x7fff_ffff_ffff_ffff,
    u64::MAX,
];

const TOKENS: &[&str] = &[
    "f32[]",
    "i32[]",
    "bool[]",
    "f32[0]",
    "f32[4294967296]",
    "f32[3,0,2]",
    "f64[2,2]",
    "u8[7]",
    "float0[]",
    "v0",
    "v1",
    "v99999",
    "0x7fc00000:f32",
    "-1",
    "0",
    "18446744073709551615",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "=",
    ",",
    ";",
    "let",
    "in",
    "lambda",
    "pjit",
    "scan",
    "while",
    "cond",
    "add",
    "reduce_sum",
    "dot_general",
    "gather",
    "{weak}",
    "{io}",
    "True",
    "None",
];

/// One random mutation of `m` (`seeds` feed splices).
fn mutate_once(m: &mut Vec<u8>, seeds: &[Vec<u8>], rng: &mut Rng) {
    let len = m.len();
    match rng.below(12) {
        0 => {
            let i = rng.below(len);
            let bit = rng.below(8);
            if let Some(b) = m.get_mut(i) {
                *b ^= 1u8
                    .checked_shl(u32::try_from(bit).unwrap_or(0))
                    .unwrap_or(1);
            }
        }
        1 => {
            let i = rng.below(len.saturating_add(1));
            let byte = u8::try_from(rng.below(256)).unwrap_or(0);
            m.insert(i.min(len), byte);
        }
        2 => {
            if len > 0 {
                let i = rng.below(len);
                let n = 1usize
                    .saturating_add(rng.below(8))
                    .min(len.saturating_sub(i));
                m.drain(i..i.saturating_add(n));
            }
        }
        3 => m.truncate(rng.below(len)),
        4 => {
            if let Some(other) = rng.pick(seeds) {
                let cut = rng.below(len);
                let from = rng.below(other.len());
                m.truncate(cut);
                m.extend_from_slice(other.get(from..).unwrap_or(&[]));
            }
        }
        5 => {
            // duplicate a chunk in place
            let i = rng.below(len);
            let n = rng.below(64).min(len.saturating_sub(i));
            let chunk: Vec<u8> = m.get(i..i.saturating_add(n)).unwrap_or(&[]).to_vec();
            let at = rng.below(len.saturating_add(1)).min(len);
            m.splice(at..at, chunk);
        }
        6 => {
            // an interesting integer over a header/section field
            let v = rng.pick(INTERESTING).copied().unwrap_or(0).to_le_bytes();
            let width = *rng.pick(&[1usize, 2, 4, 8]).unwrap_or(&8);
            let i = rng.below(len);
            for (k, b) in v.iter().take(width).enumerate() {
                if let Some(slot) = m.get_mut(i.saturating_add(k)) {
                    *slot = *b;
                }
            }
        }
        7 => text_token_swap(m, rng),
        8 => text_token_replace(m, rng),
        9 => text_number(m, rng),
        _ => text_substitute_all(m, rng),
    }
}

/// Whitespace-separated tokens of the text section: (start, end) offsets.
fn text_tokens(m: &[u8]) -> Vec<(usize, usize)> {
    let Some(range) = text_range(m) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut start = None;
    for i in range.clone() {
        let ws = m.get(i).is_none_or(|b| b.is_ascii_whitespace());
        match (ws, start) {
            (false, None) => start = Some(i),
            (true, Some(s)) => {
                out.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, range.end));
    }
    out
}

/// Rewrites the text section as `new_text`, fixing its length field.
fn set_text(m: &mut Vec<u8>, new_text: Vec<u8>) {
    let Some(range) = text_range(m) else { return };
    let len = u64::try_from(new_text.len())
        .unwrap_or(u64::MAX)
        .to_le_bytes();
    m.splice(range, new_text);
    if let Some(field) = m.get_mut(TEXT_LEN_FIELD) {
        field.copy_from_slice(&len);
    }
}

fn text_token_swap(m: &mut Vec<u8>, rng: &mut Rng) {
    let toks = text_tokens(m);
    let (Some(&a), Some(&b)) = (rng.pick(&toks), rng.pick(&toks)) else {
        return;
    };
    let (a, b) = if a.0 <= b.0 { (a, b) } else { (b, a) };
    if a.1 > b.0 {
        return;
    }
    let Some(range) = text_range(m) else { return };
    let get = |r: (usize, usize)| m.get(r.0..r.1).unwrap_or(&[]).to_vec();
    let mut t = m.get(range.start..a.0).unwrap_or(&[]).to_vec();
    t.extend(get(b));
    t.extend(get((a.1, b.0)));
    t.extend(get(a));
    t.extend(get((b.1, range.end)));
    set_text(m, t);
}

fn text_token_replace(m: &mut Vec<u8>, rng: &mut Rng) {
    let toks = text_tokens(m);
    let Some(&(s, e)) = rng.pick(&toks) else {
        return;
    };
    let Some(range) = text_range(m) else { return };
    let tok = rng.pick(TOKENS).copied().unwrap_or("");
    let mut t = m.get(range.start..s).unwrap_or(&[]).to_vec();
    t.extend_from_slice(tok.as_bytes());
    t.extend_from_slice(m.get(e..range.end).unwrap_or(&[]));
    set_text(m, t);
}

/// Substitutions applied to the whole text: programs that stay well formed
/// but change dtype or sizes everywhere (0-size axes, half floats, ints).
const SUBSTITUTIONS: &[(&str, &str)] = &[
    ("f32", "f64"),
    ("f32", "i32"),
    ("f32", "f16"),
    ("f32", "bf16"),
    ("f32", "bool"),
    ("i32", "u8"),
    ("[4", "[0"),
    ("[3", "[0"),
    ("[2", "[1"),
    (",4]", ",0]"),
    ("3,", "1,"),
    ("True", "False"),
    ("False", "True"),
];

fn text_substitute_all(m: &mut Vec<u8>, rng: &mut Rng) {
    let Some(range) = text_range(m) else { return };
    let Some(&(from, to)) = rng.pick(SUBSTITUTIONS) else {
        return;
    };
    let text = String::from_utf8_lossy(m.get(range).unwrap_or(&[])).replace(from, to);
    set_text(m, text.into_bytes());
}

/// Replaces a run of digits in the text with an interesting number.
fn text_number(m: &mut Vec<u8>, rng: &mut Rng) {
    let Some(range) = text_range(m) else { return };
    let digits: Vec<usize> = range
        .clone()
        .filter(|&i| m.get(i).is_some_and(u8::is_ascii_digit))
        .collect();
    let Some(&at) = rng.pick(&digits) else { return };
    let mut end = at;
    while m.get(end).is_some_and(u8::is_ascii_digit) {
        end = end.saturating_add(1);
    }
    let n = rng.pick(INTERESTING).copied().unwrap_or(0);
    let n = if rng.below(4) == 0 {
        n.saturating_add(1)
    } else {
        n
    };
    let mut t = m.get(range.start..at).unwrap_or(&[]).to_vec();
    t.extend_from_slice(n.to_string().as_bytes());
    t.extend_from_slice(m.get(end..range.end).unwrap_or(&[]));
    set_text(m, t);
}

/// What a case ended in.
#[derive(Debug, Default)]
struct Stats {
    rejected: u64,
    ran_ok: u64,
    run_err: u64,
    panics: u64,
}

/// How a case ended (every one of them is fine; a panic is not).
pub enum Outcome {
    /// `from_bytes` returned a typed `Err`.
    Rejected,
    /// Loaded; `run` returned a typed `Err`.
    RunError,
    /// Loaded and ran.
    Ran,
}

/// Loads and runs one input under tight limits.
pub fn fuzz_case(bytes: &[u8]) -> Outcome {
    let parse = ParseLimits {
        max_text_len: 1 << 20,
        max_depth: 32,
        max_eqns: 10_000,
        max_vars: 100_000,
        max_rank: 8,
        max_elements: 1 << 22,
    };
    let limits = Limits {
        max_bytes: 1 << 26,
        max_loop_iterations: 10_000,
        max_steps: 1_000_000,
        max_depth: 16,
        timeout: None,
    };
    let Ok(p) = Program::from_bytes_with(bytes, &parse, limits) else {
        return Outcome::Rejected;
    };
    let ran = p
        .in_avals()
        .iter()
        .map(|a| HostArray::zeros(a.shape.clone(), a.dtype))
        .collect::<microjax::Result<Vec<_>>>()
        .and_then(|inputs| p.run(&inputs));
    match ran {
        Ok(_) => Outcome::Ran,
        Err(_) => Outcome::RunError,
    }
}

fn hash_name(prefix: &str, bytes: &[u8]) -> String {
    let mut h = DefaultHasher::new();
    bytes.hash(&mut h);
    format!("{prefix}-{:016x}.bin", h.finish())
}

fn write_case(out: &Path, prefix: &str, bytes: &[u8]) -> PathBuf {
    let _ = std::fs::create_dir_all(out);
    let path = out.join(hash_name(prefix, bytes));
    if let Err(e) = std::fs::write(&path, bytes) {
        eprintln!("could not write {}: {e}", path.display());
    }
    path
}

struct Args {
    corpus: PathBuf,
    out: PathBuf,
    iterations: Option<u64>,
    seconds: Option<u64>,
    seed: u64,
    timeout: u64,
    make_corpus: Option<PathBuf>,
}

fn parse_args() -> Res<Args> {
    let mut a = Args {
        corpus: Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus"),
        out: PathBuf::from("fuzz-crashes"),
        iterations: None,
        seconds: None,
        seed: 1,
        timeout: 10,
        make_corpus: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--corpus" => a.corpus = value()?.into(),
            "--out" => a.out = value()?.into(),
            "--iterations" => a.iterations = Some(value()?.parse()?),
            "--seconds" => a.seconds = Some(value()?.parse()?),
            "--seed" => a.seed = value()?.parse()?,
            "--timeout" => a.timeout = value()?.parse()?,
            "--make-corpus" => a.make_corpus = Some(value()?.into()),
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    if a.iterations.is_none() && a.seconds.is_none() {
        a.iterations = Some(100_000);
    }
    Ok(a)
}

const USAGE: &str = "usage: fuzz_program [--corpus DIR] [--iterations N | --seconds S] [--seed X] \
                     [--out DIR] [--timeout S]\n       fuzz_program --make-corpus DIR\n\n\
                     Mutates the exported programs in DIR (default rust/core/fuzz/corpus), loads and \
                     runs each mutant; panics and hangs are written to --out (default fuzz-crashes/).";

/// The text-aware mutations only apply where the text section is found:
/// every seed must have one, or the header layout has drifted from the
/// core's and those mutations would silently do nothing.
fn check_text_sections(seeds: &[Vec<u8>]) -> Res<()> {
    let missing = seeds.iter().filter(|s| text_range(s).is_none()).count();
    if missing > 0 {
        return Err(format!(
            "{missing} of {} seeds have no text section at bytes {TEXT_LEN_FIELD:?}: \
             the header layout no longer matches the core's",
            seeds.len()
        )
        .into());
    }
    Ok(())
}

fn read_corpus(dir: &Path) -> Res<Vec<Vec<u8>>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    paths.sort();
    let seeds: Vec<Vec<u8>> = paths.iter().filter_map(|p| std::fs::read(p).ok()).collect();
    if seeds.is_empty() {
        return Err(format!("no seed programs in {}", dir.display()).into());
    }
    Ok(seeds)
}

/// The case being run, for the watchdog.
struct Current {
    started: Mutex<Instant>,
    bytes: Mutex<Vec<u8>>,
    busy: AtomicBool,
}

fn spawn_watchdog(current: Arc<Current>, timeout: Duration, out: PathBuf) {
    std::thread::spawn(move || loop {
        std::thread::sleep(Duration::from_millis(200));
        let started = current.started.lock().map(|s| *s).ok();
        let late = started.is_some_and(|s| s.elapsed() > timeout);
        if current.busy.load(Ordering::SeqCst) && late {
            let bytes = current.bytes.lock().map(|b| b.clone()).unwrap_or_default();
            let path = write_case(&out, "hang", &bytes);
            eprintln!("case ran over {timeout:?}: written to {}", path.display());
            std::process::exit(2);
        }
    });
}

fn main() -> Res<()> {
    let args = parse_args()?;
    if let Some(dir) = &args.make_corpus {
        return make_corpus(dir);
    }
    let seeds = read_corpus(&args.corpus)?;
    check_text_sections(&seeds)?;
    // Panics are caught and reported per case; keep the default hook quiet.
    let last_panic = Arc::new(Mutex::new(String::new()));
    let slot = last_panic.clone();
    std::panic::set_hook(Box::new(move |info| {
        if let Ok(mut s) = slot.lock() {
            *s = info.to_string();
        }
    }));
    let current = Arc::new(Current {
        started: Mutex::new(Instant::now()),
        bytes: Mutex::new(Vec::new()),
        busy: AtomicBool::new(false),
    });
    spawn_watchdog(
        current.clone(),
        Duration::from_secs(args.timeout),
        args.out.clone(),
    );
    let mut rng = Rng(args.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let start = Instant::now();
    let deadline = args
        .seconds
        .and_then(|s| start.checked_add(Duration::from_secs(s)));
    let mut stats = Stats::default();
    let cases = AtomicU64::new(0);
    loop {
        let n = cases.load(Ordering::Relaxed);
        if args.iterations.is_some_and(|max| n >= max)
            || deadline.is_some_and(|d| Instant::now() >= d)
        {
            break;
        }
        cases.store(n.saturating_add(1), Ordering::Relaxed);
        let mut m = rng.pick(&seeds).cloned().unwrap_or_default();
        for _ in 0..1usize.saturating_add(rng.below(4)) {
            mutate_once(&mut m, &seeds, &mut rng);
        }
        if let Ok(mut b) = current.bytes.lock() {
            b.clone_from(&m);
        }
        if let Ok(mut s) = current.started.lock() {
            *s = Instant::now();
        }
        current.busy.store(true, Ordering::SeqCst);
        let result = catch_unwind(AssertUnwindSafe(|| fuzz_case(&m)));
        current.busy.store(false, Ordering::SeqCst);
        match result {
            Ok(Outcome::Rejected) => stats.rejected = stats.rejected.saturating_add(1),
            Ok(Outcome::RunError) => stats.run_err = stats.run_err.saturating_add(1),
            Ok(Outcome::Ran) => stats.ran_ok = stats.ran_ok.saturating_add(1),
            Err(_) => {
                stats.panics = stats.panics.saturating_add(1);
                let msg = last_panic.lock().map(|s| s.clone()).unwrap_or_default();
                let path = write_case(&args.out, "panic", &m);
                eprintln!("PANIC: {msg}\n  reproducer: {}", path.display());
            }
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let n = cases.load(Ordering::Relaxed);
    println!(
        "{n} cases in {secs:.1}s ({:.0}/s) from {} seeds: {} rejected, {} loaded \
         ({} ran, {} run errors), {} panics",
        n as f64 / secs.max(1e-9),
        seeds.len(),
        stats.rejected,
        stats.ran_ok.saturating_add(stats.run_err),
        stats.ran_ok,
        stats.run_err,
        stats.panics
    );
    if stats.panics > 0 {
        std::process::exit(1);
    }
    Ok(())
}

// ------------------------------------------------------------ seed programs

fn f32v(shape: &[usize]) -> Aval {
    Aval::new(shape.to_vec(), DType::F32)
}

fn var(b: &mut Builder, aval: Aval) -> microjax::Result<Atom> {
    Ok(Atom::Var(b.add_input(aval)?))
}

/// `x -> sin(x) * c + cumsum-by-scan(x)` with a const and a scan.
fn scan_program() -> microjax::Result<ClosedJaxpr> {
    let mut body = Builder::new();
    let c = var(&mut body, f32v(&[]))?;
    let x = var(&mut body, f32v(&[]))?;
    let s = body.binary(BinaryOp::Add, c, x)?;
    let body = body.build(vec![s.clone(), s])?;
    let mut b = Builder::new();
    let k = b.add_const(
        Arc::new(HostArray::new(
            vec![4],
            Buffer::F32(vec![1.0, 2.0, 3.0, 4.0].into()),
        )?),
        false,
    )?;
    let x = var(&mut b, f32v(&[4]))?;
    let sx = b.unary(UnaryOp::Sin, x.clone())?;
    let m = b.binary(BinaryOp::Mul, sx, Atom::Var(k))?;
    let scan = Primitive::Control(ControlFlow::Scan(Scan {
        jaxpr: Arc::new(body),
        length: 4,
        reverse: false,
        num_consts: 0,
        num_carry: 1,
        linear: vec![false, false],
        unroll: 1,
    }));
    let outs = b.add_eqn(scan, vec![Builder::lit(DType::F32, 0.0), x], None)?;
    let carry = outs.first().copied().map(Atom::Var);
    let ys = outs.get(1).copied().map(Atom::Var);
    let (Some(carry), Some(ys)) = (carry, ys) else {
        return Err(microjax::Error::InvalidArgument("scan outputs".into()));
    };
    let y = b.binary(BinaryOp::Add, m, ys)?;
    b.build(vec![y, carry])
}

/// `n -> doublings of 1 until > n` (a while loop).
fn while_program() -> microjax::Result<ClosedJaxpr> {
    let mut cb = Builder::new();
    let n = var(&mut cb, f32v(&[]))?;
    let x = var(&mut cb, f32v(&[]))?;
    let p = cb.add_eqn1(Primitive::Compare(CmpOp::Le), vec![x, n])?;
    let cond = cb.build(vec![p])?;
    let mut bb = Builder::new();
    let x = var(&mut bb, f32v(&[]))?;
    let y = bb.binary(BinaryOp::Mul, x, Builder::lit(DType::F32, 2.0))?;
    let body = bb.build(vec![y])?;
    let mut b = Builder::new();
    let n = var(&mut b, f32v(&[]))?;
    let w = Primitive::Control(ControlFlow::While {
        cond_jaxpr: Arc::new(cond),
        body_jaxpr: Arc::new(body),
        cond_nconsts: 1,
        body_nconsts: 0,
    });
    let outs = b.add_eqn(w, vec![n, Builder::lit(DType::F32, 1.0)], None)?;
    b.build(outs.into_iter().map(Atom::Var).collect())
}

/// `(x, w) -> sum(tanh(x @ w), axis=0)` on f32[3,4] @ f32[4,2], as a pjit.
fn mlp_program() -> microjax::Result<ClosedJaxpr> {
    let mut inner = Builder::new();
    let x = var(&mut inner, f32v(&[3, 4]))?;
    let w = var(&mut inner, f32v(&[4, 2]))?;
    let dot = Primitive::DotGeneral(DotGeneral {
        dims: DotDims {
            lhs_contract: vec![1],
            rhs_contract: vec![0],
            lhs_batch: vec![],
            rhs_batch: vec![],
        },
        preferred_element_type: None,
    });
    let z = inner.add_eqn1(dot, vec![x, w])?;
    let t = inner.unary(UnaryOp::Tanh, z)?;
    let s = inner.reduce(ReduceOp::Sum, t, vec![0])?;
    let inner = inner.build(vec![s])?;
    let mut b = Builder::new();
    let x = var(&mut b, f32v(&[3, 4]))?;
    let w = var(&mut b, f32v(&[4, 2]))?;
    let p = Primitive::Pjit(Pjit {
        jaxpr: Arc::new(inner),
        name: "mlp".into(),
    });
    let outs = b.add_eqn(p, vec![x, w], None)?;
    b.build(outs.into_iter().map(Atom::Var).collect())
}

fn make_corpus(dir: &Path) -> Res<()> {
    std::fs::create_dir_all(dir)?;
    let programs = [
        ("scan", scan_program()?),
        ("while", while_program()?),
        ("mlp", mlp_program()?),
    ];
    for (name, prog) in programs {
        let bytes = Program::to_bytes(&prog, Determinism::Default, "{}")?;
        let path = dir.join(format!("{name}.mjx"));
        std::fs::write(&path, bytes)?;
        println!("wrote {}", path.display());
    }
    Ok(())
}
