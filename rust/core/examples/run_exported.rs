//! Runs a program exported from Python (`microjax_rs.export`) with no
//! Python: `cargo run --release -p microjax --example run_exported --
//! [--raw DIR] PROGRAM INPUT.npy...` prints every output's type and values
//! (with `--raw`, also writes each output's little-endian bytes to
//! `DIR/output{k}.bin`). The program runs in the determinism mode it was
//! exported with.
//!
//! Inputs are NumPy `.npy` files (C order, little-endian; bool, int8-64,
//! uint8-64, float16/32/64).

use microjax::export::Program;
use microjax::ir::canonical::{buffer_from_le, buffer_to_le};
use microjax::{checked_size, DType, HostArray};
use std::error::Error;

type Res<T> = std::result::Result<T, Box<dyn Error>>;

/// The dtype of a `.npy` `descr` such as `<f4` or `|b1`.
fn npy_dtype(descr: &str) -> Res<DType> {
    let code = descr.trim_start_matches(['<', '|', '=']);
    if descr.starts_with('>') {
        return Err(format!("big-endian .npy data ({descr}) is not supported").into());
    }
    Ok(match code {
        "b1" => DType::Bool,
        "i1" => DType::I8,
        "i2" => DType::I16,
        "i4" => DType::I32,
        "i8" => DType::I64,
        "u1" => DType::U8,
        "u2" => DType::U16,
        "u4" => DType::U32,
        "u8" => DType::U64,
        "f2" => DType::F16,
        "f4" => DType::F32,
        "f8" => DType::F64,
        other => return Err(format!("unsupported .npy dtype {other:?}").into()),
    })
}

/// The text after `'key':` in a `.npy` header.
fn header_field<'a>(header: &'a str, key: &str) -> Res<&'a str> {
    let pat = format!("'{key}':");
    let start = header
        .find(&pat)
        .and_then(|i| i.checked_add(pat.len()))
        .ok_or_else(|| format!(".npy header has no {key}"))?;
    Ok(header.get(start..).unwrap_or("").trim_start())
}

/// `bytes[start..start + len]`, or an error.
fn slice(bytes: &[u8], start: usize, len: usize) -> Res<&[u8]> {
    start
        .checked_add(len)
        .and_then(|end| bytes.get(start..end))
        .ok_or_else(|| "truncated .npy file".into())
}

fn read_npy(path: &str) -> Res<HostArray> {
    let bytes = std::fs::read(path)?;
    if bytes.get(..6) != Some(b"\x93NUMPY".as_slice()) {
        return Err(format!("{path}: not a .npy file").into());
    }
    let (hlen, hstart) = match (bytes.get(6), slice(&bytes, 8, 4)) {
        (Some(1), Ok([a, b, ..])) => (usize::from(u16::from_le_bytes([*a, *b])), 10),
        (Some(_), Ok([a, b, c, d])) => (usize::try_from(u32::from_le_bytes([*a, *b, *c, *d]))?, 12),
        _ => return Err("truncated .npy header".into()),
    };
    let header = std::str::from_utf8(slice(&bytes, hstart, hlen)?)?;
    let descr = header_field(header, "descr")?.trim_start_matches('\'');
    let descr = descr.split('\'').next().ok_or("bad descr")?;
    if header_field(header, "fortran_order")?.starts_with("True") {
        return Err(format!("{path}: Fortran-order arrays are not supported").into());
    }
    let shape_text = header_field(header, "shape")?.trim_start_matches('(');
    let shape_text = shape_text.split(')').next().ok_or("bad shape")?;
    let shape: Vec<usize> = shape_text
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::parse)
        .collect::<Result<_, _>>()?;
    let dtype = npy_dtype(descr)?;
    let n = checked_size(&shape)?;
    let start = hstart.checked_add(hlen).ok_or("bad header length")?;
    let data = bytes.get(start..).ok_or("truncated .npy")?;
    Ok(HostArray::new(shape, buffer_from_le(dtype, n, data)?)?)
}

fn main() -> Res<()> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    // `--raw DIR` also writes output k's little-endian bytes to DIR/output{k}.bin.
    let raw_dir = match args.first().map(String::as_str) {
        Some("--raw") if args.len() >= 2 => {
            let dir = args.remove(1);
            args.remove(0);
            Some(dir)
        }
        _ => None,
    };
    let Some((program, inputs)) = args.split_first() else {
        return Err("usage: run_exported [--raw DIR] PROGRAM [INPUT.npy...]".into());
    };
    let prog = Program::from_bytes(&std::fs::read(program)?)?;
    let inputs = inputs
        .iter()
        .map(|p| read_npy(p))
        .collect::<Res<Vec<HostArray>>>()?;
    let outs = prog.run(&inputs)?;
    for (k, out) in outs.iter().enumerate() {
        println!("output {k}: {} = {:?}", out.aval().short(), out.buffer());
        if let Some(dir) = &raw_dir {
            let path = std::path::Path::new(dir).join(format!("output{k}.bin"));
            std::fs::write(path, buffer_to_le(out.buffer()))?;
        }
    }
    Ok(())
}
