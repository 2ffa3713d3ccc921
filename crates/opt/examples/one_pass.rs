//! One pass of the optimizer over every recorded trace of the shared
//! corpus, with the number of allocations it made: a fixed amount of
//! work to count instructions of, where the criterion benchmark
//! (`benches/optimize_corpus.rs`) measures time. Run it under callgrind,
//! counting the optimizer alone:
//!
//! ```text
//! cargo build --release -p traceopt-opt --example one_pass
//! valgrind --tool=callgrind --toggle-collect='traceopt_opt::peel::optimize_or_peel*' \
//!     target/release/examples/one_pass [--peel]
//! ```
//!
//! It prints the input ops (as `--stats` counts them) and the
//! allocations per input op.

use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::{AtomicU64, Ordering};
use traceopt_ir::log::{log_files, Section};
use traceopt_ir::{parse_log, Opcode};
use traceopt_opt::{optimize_or_peel, Passes};

/// The `traceopt` binary's allocator, with a count of the blocks asked.
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
    let peel = std::env::args().any(|a| a == "--peel");
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/corpus/pypy-7.3.11");
    let mut traces = Vec::new();
    for path in log_files(&dir)? {
        let text = std::fs::read_to_string(&path)?;
        let log = parse_log(&text, &path.display().to_string()).map_err(|e| e.to_string())?;
        let recorded = log.traces().filter(|t| t.section == Section::Recorded);
        traces.extend(recorded.map(|t| t.trace.clone()));
    }
    let ops = (traces.iter().flat_map(|t| &t.ops))
        .filter(|op| op.opcode != Opcode::DebugMergePoint)
        .count();
    let passes = Passes {
        peel,
        ..Passes::default()
    };
    let before = BLOCKS.load(Ordering::Relaxed);
    for trace in &traces {
        let _ = std::hint::black_box(optimize_or_peel(trace, passes));
    }
    let blocks = BLOCKS.load(Ordering::Relaxed) - before;
    println!(
        "{} traces, {ops} input ops{}: {:.2} allocations per input op",
        traces.len(),
        if peel { ", loops peeled" } else { "" },
        blocks as f64 / ops as f64
    );
    Ok(())
}
