//! Optimizes every recorded trace of the shared corpus once: `plain`
//! (as the `optimize_corpus` benchmark's first case) or `peel` (its
//! third); with no argument, only reads them. For a profile whose counts
//! do not depend on a noisy machine, count instructions:
//!
//! ```text
//! cargo build --profile bench -p traceopt-opt --example optimize_once
//! valgrind --tool=callgrind --toggle-collect='traceopt_opt::driver::optimize' \
//!     target/release/examples/optimize_once plain
//! valgrind --tool=callgrind --toggle-collect='traceopt_opt::peel::optimize_or_peel' \
//!     target/release/examples/optimize_once peel
//! ```

// The benchmark's allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::hint::black_box;
use traceopt_ir::log::{log_files, Section};
use traceopt_ir::parse_log;
use traceopt_opt::{optimize, peel::optimize_or_peel, Passes};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mode = std::env::args().nth(1).unwrap_or_default();
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/corpus/pypy-7.3.11");
    let mut traces = Vec::new();
    for path in log_files(&dir)? {
        let text = std::fs::read_to_string(&path)?;
        let log = parse_log(&text, &path.display().to_string())?;
        let recorded = log.traces().filter(|t| t.section == Section::Recorded);
        traces.extend(recorded.map(|t| t.trace.clone()));
    }
    let peel = Passes {
        peel: true,
        ..Passes::default()
    };
    // A second argument repeats the work, for samplers such as `perf`.
    let rounds: usize = match std::env::args().nth(2) {
        Some(n) => n
            .parse()
            .map_err(|_| format!("the repeat count {n:?} is not a whole number"))?,
        None => 1,
    };
    for trace in traces.iter().cycle().take(traces.len() * rounds) {
        match mode.as_str() {
            "plain" => drop(black_box(optimize(trace, Passes::default()))),
            "peel" => drop(black_box(optimize_or_peel(trace, peel))),
            "" => {}
            other => return Err(format!("unknown mode {other:?}: plain, peel or none").into()),
        }
    }
    Ok(())
}
