//! Exported programs: what Python's `microjax_rs.export` writes, loaded and
//! run from Rust with no Python.
//!
//! # Format (all integers little-endian)
//! ```text
//! magic     8 bytes  "MJXPROG\0"
//! major     u16      a different major is rejected
//! minor     u16      a newer minor than this reader's is rejected
//! determinism u8     0 = default, 1 = portable
//! reserved  3 bytes  zero
//! text      u64 length + UTF-8: the canonical jaxpr (`ir::canonical`)
//! consts    u32 count, then per const:
//!             u8 length + dtype name, u8 rank, rank × u64 dims,
//!             u64 length + element bytes (little-endian)
//! metadata  u64 length + UTF-8 (opaque here: Python's pytree structure)
//! ```
//! Nothing else: no callbacks, paths or pointers.
//!
//! # Loading untrusted bytes
//! [`Program::from_bytes`] validates in order: header and version; section
//! sizes (checked arithmetic against the bytes actually present); the text
//! with the parser's limits enforced before it recurses; a full typecheck;
//! then a static resource bound (bytes of every value the program names,
//! sub-programs included, and nesting depth) against [`Limits`]. Running
//! checks the inputs' types and stops `while` and `scan` loops at
//! [`Limits::max_loop_iterations`] (a `scan` whose static length exceeds
//! what is left of the budget is refused before its first step) and the
//! whole run at
//! [`Limits::timeout`]; [`Program::run_with_cancel`] also stops at a
//! [`CancelToken`]. Every failure is a typed [`Error`].
//!
//! The default limits are for untrusted programs: a run finishes or fails
//! within seconds (2^24 loop iterations take seconds of scalar steps).
//! Trusted long jobs raise them explicitly with [`Program::with_limits`].

use crate::array::{checked_size, HostArray};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::exec::compiled::Compiled;
use crate::exec::{CancelToken, ExecCtx};
use crate::ir::canonical::{
    buffer_from_le, buffer_to_le, canonical, parse_with_consts, ParseLimits, HARD_MAX_DEPTH,
};
use crate::ir::{Aval, ClosedJaxpr, Jaxpr};
use crate::prims::Param;
use std::sync::Arc;
use std::time::Duration;

/// First bytes of every exported program.
pub const MAGIC: &[u8; 8] = b"MJXPROG\0";
/// Format version this crate writes and reads.
pub const MAJOR: u16 = 1;
pub const MINOR: u16 = 0;
/// Where the program text's length (a little-endian `u64`) sits in the
/// header: after the magic, the two version numbers, the determinism byte
/// and three reserved bytes. The text itself follows it.
pub const TEXT_LEN_FIELD: std::ops::Range<usize> = 16..24;

/// The determinism mode the program was exported with (docs/DESIGN-NOTES.md,
/// "Devices and determinism modes"); [`Program::run`] runs in it.
pub use crate::exec::Determinism;

/// Resource limits of a loaded program. The defaults bound a run to
/// seconds ([`DEFAULT_MAX_LOOP_ITERATIONS`]); raise them for trusted long
/// jobs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Memory of one run, in bytes. Checked twice: when the program is
    /// loaded, against the bytes of all values it names (its static bound),
    /// and while it runs, against the live bytes the run adds, kernel
    /// scratch included, when [`crate::array::live::CountingAlloc`] is the
    /// global allocator ([`ExecCtx::with_max_run_bytes`]).
    pub max_bytes: usize,
    /// Loop iterations of one run, all loops together: every `while` body
    /// and every `scan` step (a `scan`'s static length counts step by step).
    pub max_loop_iterations: u64,
    /// Steps of one run, the total work: every plan step executed (an
    /// equation or a fused group), in every loop iteration and nested
    /// program.
    pub max_steps: u64,
    /// Nesting of sub-programs (`pjit`, control flow).
    pub max_depth: usize,
    /// Wall-clock time one run may take, checked at every loop iteration,
    /// plan step and matrix-product row block ([`Error::DeadlineExceeded`];
    /// `None`: no deadline).
    pub timeout: Option<Duration>,
}

/// The default loop budget of one run of a loaded program: 2^24 iterations,
/// about two seconds of scalar loop steps.
pub const DEFAULT_MAX_LOOP_ITERATIONS: u64 = 1 << 24;

/// The default step budget of one run of a loaded program: 2^28 plan
/// steps (seconds to minutes of work; with the loop budget it bounds a
/// run whatever the program's size).
pub const DEFAULT_MAX_STEPS: u64 = 1 << 28;

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_bytes: 1 << 34,
            max_loop_iterations: DEFAULT_MAX_LOOP_ITERATIONS,
            max_steps: DEFAULT_MAX_STEPS,
            max_depth: 32,
            timeout: None,
        }
    }
}

impl Limits {
    /// The context of one run under these limits, in `determinism` mode
    /// (its deadline counted from now).
    pub fn exec_ctx(&self, determinism: Determinism) -> ExecCtx {
        let ctx = ExecCtx::current_default()
            .with_determinism(determinism)
            .with_max_loop_iterations(self.max_loop_iterations)
            .with_max_steps(self.max_steps)
            .with_max_run_bytes(u64::try_from(self.max_bytes).unwrap_or(u64::MAX));
        match self.timeout {
            Some(t) => ctx.with_timeout(t),
            None => ctx,
        }
    }
}

/// A loaded program, ready to run.
#[derive(Debug)]
pub struct Program {
    plan: Compiled,
    in_avals: Vec<Aval>,
    out_avals: Vec<Aval>,
    determinism: Determinism,
    metadata: String,
    limits: Limits,
    static_bytes: usize,
    depth: usize,
}

fn format_err(offset: usize, msg: impl Into<String>) -> Error {
    Error::Format {
        offset,
        msg: msg.into(),
    }
}

/// A cursor over untrusted bytes.
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|e| *e <= self.bytes.len())
            .ok_or_else(|| {
                format_err(
                    self.pos,
                    format!(
                        "{what}: {n} bytes needed, {} left",
                        self.bytes.len().saturating_sub(self.pos)
                    ),
                )
            })?;
        let s = self
            .bytes
            .get(self.pos..end)
            .ok_or_else(|| format_err(self.pos, what))?;
        self.pos = end;
        Ok(s)
    }

    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N]> {
        let s = self.take(N, what)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    fn u8(&mut self, what: &str) -> Result<u8> {
        Ok(self.array::<1>(what)?[0])
    }

    fn u16(&mut self, what: &str) -> Result<u16> {
        Ok(u16::from_le_bytes(self.array(what)?))
    }

    fn u32(&mut self, what: &str) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }

    fn len64(&mut self, what: &str) -> Result<usize> {
        let at = self.pos;
        let n = u64::from_le_bytes(self.array(what)?);
        usize::try_from(n).map_err(|_| format_err(at, format!("{what}: length {n} too large")))
    }

    fn utf8(&mut self, n: usize, what: &str) -> Result<&'a str> {
        let at = self.pos;
        std::str::from_utf8(self.take(n, what)?)
            .map_err(|e| format_err(at, format!("{what}: not UTF-8 ({e})")))
    }
}

fn read_const(r: &mut Reader<'_>, limits: &ParseLimits) -> Result<Arc<HostArray>> {
    let at = r.pos;
    let name_len = usize::from(r.u8("const dtype length")?);
    let name = r.utf8(name_len, "const dtype")?;
    let dtype =
        DType::from_name(name).map_err(|_| format_err(at, format!("unknown dtype {name:?}")))?;
    let rank = usize::from(r.u8("const rank")?);
    if rank > limits.max_rank {
        return Err(Error::Limit(format!(
            "const of rank {rank} exceeds the rank limit {}",
            limits.max_rank
        )));
    }
    let mut shape = Vec::with_capacity(rank);
    for _ in 0..rank {
        shape.push(r.len64("const dimension")?);
    }
    let n = checked_size(&shape)?;
    if n > limits.max_elements {
        return Err(Error::Limit(format!(
            "const of {n} elements exceeds the limit {}",
            limits.max_elements
        )));
    }
    crate::array::budget::check_shape("exported const", &shape, dtype)?;
    let len = r.len64("const data length")?;
    let data = r.take(len, "const data")?;
    let buf = buffer_from_le(dtype, n, data).map_err(|e| format_err(at, e.to_string()))?;
    Ok(Arc::new(HostArray::new(shape, buf)?))
}

/// Bytes of every value a program names and its sub-program nesting depth.
fn resource_bound(j: &Jaxpr, depth: usize, limits: &Limits) -> Result<(usize, usize)> {
    if depth > limits.max_depth {
        return Err(Error::Limit(format!(
            "sub-programs nested deeper than the limit {}",
            limits.max_depth
        )));
    }
    let mut bytes = 0usize;
    for a in &j.avals {
        let b = a
            .size()?
            .checked_mul(a.dtype.itemsize())
            .ok_or_else(|| Error::Overflow {
                what: "program size",
                detail: a.short(),
            })?;
        bytes = bytes.saturating_add(b);
    }
    let mut deepest = depth;
    for eqn in &j.eqns {
        for (_, p) in eqn.prim.params() {
            let (b, d) = param_bound(&p, depth, limits)?;
            bytes = bytes.saturating_add(b);
            deepest = deepest.max(d);
        }
    }
    Ok((bytes, deepest))
}

fn param_bound(p: &Param, depth: usize, limits: &Limits) -> Result<(usize, usize)> {
    match p {
        Param::Jaxpr(sub) => resource_bound(&sub.jaxpr, depth.saturating_add(1), limits),
        Param::Tuple(items) => {
            let mut acc = (0usize, depth);
            for x in items {
                let (b, d) = param_bound(x, depth, limits)?;
                acc = (acc.0.saturating_add(b), acc.1.max(d));
            }
            Ok(acc)
        }
        _ => Ok((0, depth)),
    }
}

/// What [`Program::from_bytes`] would refuse in a program's structure,
/// checked on the program itself against the same limits: types of rank
/// above [`ParseLimits::max_rank`] or with more than
/// [`ParseLimits::max_elements`] elements; more equations or variables, all
/// blocks together, than [`ParseLimits::max_eqns`] / [`ParseLimits::max_vars`];
/// sub-programs and parameter tuples nested deeper than
/// [`ParseLimits::max_depth`] (counted as the parser counts them); more bytes
/// of values or deeper sub-programs than [`Limits`] allows. The text length
/// is checked where the text is made ([`Program::to_bytes`]).
pub fn check_loadable(prog: &ClosedJaxpr, parse: &ParseLimits, limits: &Limits) -> Result<()> {
    let mut counts = (0usize, 0usize);
    check_block(&prog.jaxpr, 0, parse, &mut counts)?;
    let (static_bytes, depth) = resource_bound(&prog.jaxpr, 0, limits)?;
    check_bound(static_bytes, depth, limits)
}

/// [`check_loadable`] with the default limits (what [`Program::from_bytes`]
/// applies): every refusal an [`Error::Limit`] that says so.
pub fn check_exportable(prog: &ClosedJaxpr) -> Result<()> {
    check_exportable_for(prog, &ParseLimits::default(), &Limits::default())
}

/// [`check_exportable`] for a loader with other limits
/// ([`Program::from_bytes_with`]).
pub fn check_exportable_for(
    prog: &ClosedJaxpr, parse: &ParseLimits, limits: &Limits,
) -> Result<()> {
    check_loadable(prog, parse, limits).map_err(|e| match e {
        Error::Limit(m) if !m.starts_with("export:") => refused(m),
        other => other,
    })
}

fn refused(what: String) -> Error {
    Error::Limit(format!(
        "export: {what}; `deserialize` refuses such programs, so they are not exported"
    ))
}

fn check_block(
    j: &Jaxpr, depth: usize, parse: &ParseLimits, counts: &mut (usize, usize),
) -> Result<()> {
    let max_depth = parse.max_depth.min(HARD_MAX_DEPTH);
    if depth > max_depth {
        return Err(refused(format!(
            "sub-programs and parameter tuples nest deeper than {max_depth}"
        )));
    }
    counts.1 = counts.1.saturating_add(j.avals.len());
    if counts.1 > parse.max_vars {
        return Err(refused(format!(
            "the program has more than {} variables",
            parse.max_vars
        )));
    }
    for a in &j.avals {
        if a.shape.len() > parse.max_rank {
            return Err(refused(format!(
                "a value of type {} has rank {}, above the limit {}",
                a.short(),
                a.shape.len(),
                parse.max_rank
            )));
        }
        if !checked_size(&a.shape).is_ok_and(|n| n <= parse.max_elements) {
            return Err(refused(format!(
                "a value of type {} has more than {} elements",
                a.short(),
                parse.max_elements
            )));
        }
    }
    counts.0 = counts.0.saturating_add(j.eqns.len());
    if counts.0 > parse.max_eqns {
        return Err(refused(format!(
            "the program has more than {} equations",
            parse.max_eqns
        )));
    }
    for eqn in &j.eqns {
        for (_, p) in eqn.prim.params() {
            check_param(&p, depth, parse, counts)?;
        }
    }
    Ok(())
}

fn check_param(
    p: &Param, depth: usize, parse: &ParseLimits, counts: &mut (usize, usize),
) -> Result<()> {
    match p {
        Param::Jaxpr(sub) => check_block(&sub.jaxpr, depth.saturating_add(1), parse, counts),
        Param::Tuple(items) => {
            let inner = depth.saturating_add(1);
            let max_depth = parse.max_depth.min(HARD_MAX_DEPTH);
            if inner > max_depth {
                return Err(refused(format!(
                    "sub-programs and parameter tuples nest deeper than {max_depth}"
                )));
            }
            items
                .iter()
                .try_for_each(|x| check_param(x, inner, parse, counts))
        }
        _ => Ok(()),
    }
}

fn check_bound(static_bytes: usize, depth: usize, limits: &Limits) -> Result<()> {
    if static_bytes > limits.max_bytes {
        return Err(Error::Limit(format!(
            "the program names {static_bytes} bytes of values, over the limit of {}",
            limits.max_bytes
        )));
    }
    if depth > limits.max_depth {
        return Err(Error::Limit(format!(
            "sub-programs nest {depth} deep, over the limit of {}",
            limits.max_depth
        )));
    }
    Ok(())
}

impl Program {
    /// Serializes a closed program. Programs [`Program::from_bytes`] would
    /// refuse (see [`check_loadable`]; the default limits) are refused here.
    pub fn to_bytes(
        prog: &ClosedJaxpr, determinism: Determinism, metadata: &str,
    ) -> Result<Vec<u8>> {
        Self::to_bytes_for(
            prog,
            determinism,
            metadata,
            &ParseLimits::default(),
            &Limits::default(),
        )
    }

    /// [`Program::to_bytes`] for a loader with other limits: refuses what
    /// [`Program::from_bytes_with`] would refuse under `parse` and `limits`.
    pub fn to_bytes_for(
        prog: &ClosedJaxpr, determinism: Determinism, metadata: &str, parse: &ParseLimits,
        limits: &Limits,
    ) -> Result<Vec<u8>> {
        if crate::prims::callback::holds_callback(&prog.jaxpr) {
            return Err(Error::Unsupported(
                "export: the program calls back into the host (pure_callback, io_callback or \
                 debug.print); such programs cannot be exported"
                    .into(),
            ));
        }
        let dynamic = crate::prims::dynamic::dynamic_names(&prog.jaxpr);
        if !dynamic.is_empty() {
            return Err(Error::Unsupported(format!(
                "export: the program holds primitives whose rules are given at run time ({}); \
                 such programs cannot be exported",
                dynamic.join(", ")
            )));
        }
        check_exportable_for(prog, parse, limits)?;
        let len = |n: usize| -> Result<[u8; 8]> {
            u64::try_from(n)
                .map(u64::to_le_bytes)
                .map_err(|_| Error::Limit(format!("section of {n} bytes")))
        };
        let mut out = Vec::new();
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&MAJOR.to_le_bytes());
        out.extend_from_slice(&MINOR.to_le_bytes());
        out.push(match determinism {
            Determinism::Default => 0,
            Determinism::Portable => 1,
        });
        out.extend_from_slice(&[0, 0, 0]);
        let text = canonical(prog);
        let max_text = parse.max_text_len;
        if text.len() > max_text {
            return Err(refused(format!(
                "the program's text is {} bytes, above the limit {max_text}",
                text.len()
            )));
        }
        out.extend_from_slice(&len(text.len())?);
        out.extend_from_slice(text.as_bytes());
        let count = u32::try_from(prog.consts.len())
            .map_err(|_| Error::Limit("too many constants".into()))?;
        out.extend_from_slice(&count.to_le_bytes());
        for c in &prog.consts {
            let name = c.dtype().name();
            out.push(u8::try_from(name.len()).map_err(|_| Error::Limit("dtype name".into()))?);
            out.extend_from_slice(name.as_bytes());
            out.push(u8::try_from(c.ndim()).map_err(|_| Error::Limit("const rank".into()))?);
            for d in c.shape() {
                out.extend_from_slice(&len(*d)?);
            }
            let data = buffer_to_le(c.buffer());
            out.extend_from_slice(&len(data.len())?);
            out.extend_from_slice(&data);
        }
        out.extend_from_slice(&len(metadata.len())?);
        out.extend_from_slice(metadata.as_bytes());
        Ok(out)
    }

    /// Loads a program with the default parse and run limits.
    pub fn from_bytes(bytes: &[u8]) -> Result<Program> {
        Program::from_bytes_with(bytes, &ParseLimits::default(), Limits::default())
    }

    /// Loads a program, enforcing `parse` limits while reading and `limits`
    /// on its static resource bound.
    pub fn from_bytes_with(bytes: &[u8], parse: &ParseLimits, limits: Limits) -> Result<Program> {
        let mut r = Reader { bytes, pos: 0 };
        if r.take(MAGIC.len(), "magic")? != MAGIC {
            return Err(format_err(
                0,
                "not an exported microjax_rs program (bad magic)",
            ));
        }
        let major = r.u16("major version")?;
        let minor = r.u16("minor version")?;
        if major != MAJOR || minor > MINOR {
            return Err(format_err(
                8,
                format!("format version {major}.{minor} is not readable by this reader ({MAJOR}.{MINOR})"),
            ));
        }
        let determinism = match r.u8("determinism")? {
            0 => Determinism::Default,
            1 => Determinism::Portable,
            other => return Err(format_err(12, format!("unknown determinism mode {other}"))),
        };
        if r.take(3, "reserved")? != [0, 0, 0] {
            return Err(format_err(13, "reserved bytes must be zero"));
        }
        let text_len = r.len64("text length")?;
        if text_len > parse.max_text_len {
            return Err(Error::Limit(format!(
                "program text of {text_len} bytes exceeds the limit of {}",
                parse.max_text_len
            )));
        }
        let text = r.utf8(text_len, "program text")?;
        let at = r.pos;
        let count =
            usize::try_from(r.u32("const count")?).map_err(|_| format_err(at, "const count"))?;
        if count > parse.max_vars {
            return Err(Error::Limit(format!("{count} constants")));
        }
        let mut consts = Vec::with_capacity(count.min(1024));
        for _ in 0..count {
            consts.push(read_const(&mut r, parse)?);
        }
        let meta_len = r.len64("metadata length")?;
        let metadata = r.utf8(meta_len, "metadata")?.to_string();
        if r.pos != bytes.len() {
            return Err(format_err(r.pos, "trailing bytes after the metadata"));
        }
        let prog = parse_with_consts(text, consts, parse)?;
        Program::new(prog, determinism, metadata, limits)
    }

    /// Wraps an in-memory program (already typechecked by its builder).
    pub fn new(
        prog: ClosedJaxpr, determinism: Determinism, metadata: String, limits: Limits,
    ) -> Result<Program> {
        let (static_bytes, depth) = resource_bound(&prog.jaxpr, 0, &limits)?;
        let in_avals = prog.in_avals()?;
        let out_avals = prog.out_avals()?;
        let program = Program {
            plan: Compiled::new(Arc::new(prog))?,
            in_avals,
            out_avals,
            determinism,
            metadata,
            limits,
            static_bytes,
            depth,
        };
        program.check_bound()?;
        Ok(program)
    }

    fn check_bound(&self) -> Result<()> {
        check_bound(self.static_bytes, self.depth, &self.limits)
    }

    /// The program with other run limits (checked again against its bound).
    pub fn with_limits(mut self, limits: Limits) -> Result<Program> {
        self.limits = limits;
        self.check_bound()?;
        Ok(self)
    }

    /// Runs the program in its recorded [`Determinism`] mode, under its
    /// [`Limits`]. Inputs must have the exported shapes and dtypes.
    pub fn run(&self, inputs: &[HostArray]) -> Result<Vec<HostArray>> {
        self.run_in(&self.limits.exec_ctx(self.determinism), inputs)
    }

    /// [`Program::run`], stopped with [`Error::Cancelled`] at the next
    /// loop iteration or plan step once `token` is set (from any thread).
    pub fn run_with_cancel(
        &self, inputs: &[HostArray], token: &CancelToken,
    ) -> Result<Vec<HostArray>> {
        let ctx = self
            .limits
            .exec_ctx(self.determinism)
            .with_cancel(token.clone());
        self.run_in(&ctx, inputs)
    }

    fn run_in(&self, ctx: &ExecCtx, inputs: &[HostArray]) -> Result<Vec<HostArray>> {
        Error::check_count("Program::run", self.in_avals.len(), inputs.len())?;
        for (k, (x, want)) in inputs.iter().zip(&self.in_avals).enumerate() {
            if x.shape() != want.shape.as_slice() || x.dtype() != want.dtype {
                return Err(Error::InvalidArgument(format!(
                    "input {k} is {} but the program takes {}",
                    x.aval().short(),
                    want.short()
                )));
            }
        }
        let args: Vec<Arc<HostArray>> = inputs
            .iter()
            .map(|x| x.try_clone("exported program input").map(Arc::new))
            .collect::<Result<_>>()?;
        let outs = self.plan.run_in(ctx, &args)?;
        outs.into_iter()
            .map(|a| Arc::try_unwrap(a).or_else(|a| a.try_clone("exported program output")))
            .collect()
    }

    pub fn in_avals(&self) -> &[Aval] {
        &self.in_avals
    }

    pub fn out_avals(&self) -> &[Aval] {
        &self.out_avals
    }

    pub fn determinism(&self) -> Determinism {
        self.determinism
    }

    /// The exporter's metadata (Python's pytree structure; opaque here).
    pub fn metadata(&self) -> &str {
        &self.metadata
    }

    /// The program itself.
    pub fn jaxpr(&self) -> &Arc<ClosedJaxpr> {
        self.plan.program()
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }
}
