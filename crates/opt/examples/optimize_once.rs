//! Optimizes every recorded trace of the shared corpus once: `plain`
//! (as the `optimize_corpus` benchmark's first case) or `peel` (its
//! third); with no argument, only reads them. For a profile whose counts
//! do not depend on a noisy machine, count instructions:
//!
//! ```text
//! cargo build --profile bench -p traceopt-opt --example optimize_once
//! valgrind --tool=callgrind target/release/examples/optimize_once
//! valgrind --tool=callgrind target/release/examples/optimize_once plain
//! valgrind --tool=callgrind target/release/examples/optimize_once peel
//! ```
//!
//! The optimizer's count is a mode's total less the first run's (which
//! only reads the corpus): the release profile's link-time optimization
//! inlines `optimize` and `optimize_or_peel` into `main`, so no function
//! of theirs can switch the count on (`optimize_knowing`, each pass of
//! the optimizer, still can).
//!
//! It prints the allocations the optimizer made per input op (as
//! `--stats` counts ops: no `debug_merge_point`). A second argument
//! repeats the work that many rounds (for `perf record`), and it then
//! prints the fastest round's time per input op too: the least the
//! machine's other load added, steadier than a mean on a shared machine.
//! A third argument, `loops`, takes only the loops (the traces
//! `optimize_or_peel` peels):
//!
//! ```text
//! target/release/examples/optimize_once peel 40 loops
//! ```

use std::alloc::{GlobalAlloc, Layout};
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use traceopt_ir::log::{log_files, Section};
use traceopt_ir::{parse_log, Opcode};
use traceopt_opt::{optimize, peel::optimize_or_peel, Passes};

/// The benchmark's allocator, counting the blocks asked of it.
struct Counting;

static BLOCKS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        BLOCKS.fetch_add(1, Ordering::Relaxed);
        unsafe { mimalloc::MiMalloc.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { mimalloc::MiMalloc.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, size: usize) -> *mut u8 {
        BLOCKS.fetch_add(1, Ordering::Relaxed);
        unsafe { mimalloc::MiMalloc.realloc(ptr, layout, size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

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
    match std::env::args().nth(3).as_deref() {
        Some("loops") => traces.retain(|t| t.loops_to_start()),
        Some(other) => return Err(format!("unknown selection {other:?}: loops or none").into()),
        None => {}
    }
    let ops = (traces.iter().flat_map(|t| &t.ops))
        .filter(|op| op.opcode != Opcode::DebugMergePoint)
        .count();
    let before = BLOCKS.load(Ordering::Relaxed);
    let mut fastest = std::time::Duration::MAX;
    for _ in 0..rounds {
        let start = std::time::Instant::now();
        for trace in &traces {
            match mode.as_str() {
                "plain" => drop(black_box(optimize(trace, Passes::default()))),
                "peel" => drop(black_box(optimize_or_peel(trace, peel))),
                "" => {}
                other => return Err(format!("unknown mode {other:?}: plain, peel or none").into()),
            }
        }
        fastest = fastest.min(start.elapsed());
    }
    let blocks = BLOCKS.load(Ordering::Relaxed) - before;
    println!(
        "{} input ops: {:.2} allocations per input op",
        ops * rounds,
        blocks as f64 / (ops * rounds).max(1) as f64
    );
    if rounds > 1 {
        let per_op = fastest.as_nanos() as f64 / ops.max(1) as f64;
        println!("fastest of {rounds} rounds: {per_op:.1} ns per input op");
    }
    Ok(())
}
