//! The core's integration tests, as modules of one test binary: one link
//! of the `microjax` library and one compile of the shared helpers
//! (`common`) instead of one per file. `budget.rs`, `cache.rs` and
//! `foreign_storage.rs` stay binaries of their own: they set or count
//! process-wide state (the buffer budget, the buffer pool), which tests
//! running beside them in one process would disturb.
//!
//! A new test file is a `mod` line here (or a `[[test]]` target in
//! `Cargo.toml`), or in `internals/mod.rs` for a test of the crate's
//! internals; `every_test_file_is_built` fails on one that is neither.
//!
//! The library has no unit tests in `src/`: a `cfg(test)` module there
//! would make `cargo test` compile the whole library a second time. Tests
//! of internal algorithms live in `internals/`, reaching them through the
//! hidden `microjax::internals` re-exports.

#![allow(clippy::unwrap_used)]

#[macro_use]
mod common;

mod autodiff;
mod autodiff_end_to_end;
mod batching;
mod batching_named_axes;
mod compiled;
mod complex;
mod control;
mod conv;
mod coverage;
mod cuda_codegen;
mod cuda_emulation;
mod determinism;
mod dynamic;
mod exec_ctx;
mod export;
mod gather;
mod host_array;
mod internals;
mod kernels;
mod kernels_reduce_dot;
mod linalg;
mod process;
mod props;
mod random;
mod remat;
mod sort;
mod source_layout;
mod special;
mod text;
mod text_parser_errors;

/// Every `tests/*.rs` file is a module of this binary or a test target of
/// its own in `Cargo.toml` (`autotests = false`: cargo would not find it).
#[test]
fn every_test_file_is_built() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let this = include_str!("integration.rs");
    let manifest = include_str!("../Cargo.toml");
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let Some(stem) = name.strip_suffix(".rs") else {
            continue;
        };
        let declared = this.contains(&format!("\nmod {stem};"))
            || manifest.contains(&format!("path = \"tests/{name}\""))
            || stem == "integration";
        if !declared {
            missing.push(name);
        }
    }
    let internals = include_str!("internals/mod.rs");
    for entry in std::fs::read_dir(dir.join("internals")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let Some(stem) = name.strip_suffix(".rs") else {
            continue;
        };
        if stem != "mod" && !internals.contains(&format!("\nmod {stem};")) {
            missing.push(format!("internals/{name}"));
        }
    }
    assert!(
        missing.is_empty(),
        "test files built by no target: {missing:?}"
    );
}
