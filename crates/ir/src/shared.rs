//! Where the shared data lies: `../shared` beside the repository (the
//! corpus of PyPy logs, the peer test sets), which tests and benchmarks
//! read at run time. `TRACEOPT_SHARED` names another place, for a copy of
//! the tree built elsewhere (cargo-mutants builds each mutant in a
//! temporary copy, beside which there is no `shared`).

use std::path::PathBuf;

/// The shared data directory (`TRACEOPT_SHARED`, else `../shared` beside
/// the workspace this crate was built in).
pub fn shared_dir() -> PathBuf {
    match std::env::var_os("TRACEOPT_SHARED") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"),
    }
}
