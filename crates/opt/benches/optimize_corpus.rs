//! Optimizer time per input op over every recorded trace of the shared
//! corpus (17 PYPYLOG files, 74,145 ops without debug_merge_point), in
//! release mode on one thread. Target: under 150 ns per op. Run with
//! `cargo bench -p traceopt-opt --bench optimize_corpus`; the time
//! criterion reports is per input op. A second benchmark leaves the
//! relational facts out, to show what they cost; a third peels the loops
//! (`optimize_or_peel`, each loop optimized at least twice; target: under
//! 200 ns per op).

use criterion::{criterion_group, criterion_main, Criterion};

// The allocator of the `traceopt` binary: the optimizer allocates a few
// small blocks per op (arguments, fail arguments, names).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
use std::hint::black_box;
use std::time::{Duration, Instant};
use traceopt_ir::log::{log_files, Section};
use traceopt_ir::{parse_log, Opcode, Trace};
use traceopt_opt::{optimize, optimize_or_peel, Passes};

fn recorded_traces() -> Vec<Trace> {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/corpus/pypy-7.3.11");
    let files = log_files(&dir).expect("the shared corpus sits beside the repo");
    let mut traces = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let log = parse_log(&text, &path.display().to_string()).unwrap();
        traces.extend(
            log.traces()
                .filter(|t| t.section == Section::Recorded)
                .map(|t| t.trace.clone()),
        );
    }
    traces
}

fn per_op(c: &mut Criterion, name: &str, traces: &[Trace], passes: Passes) {
    // Input ops as `--stats` counts them: a `debug_merge_point` is no op.
    let ops: usize = (traces.iter().flat_map(|t| &t.ops))
        .filter(|op| op.opcode != Opcode::DebugMergePoint)
        .count();
    let ops = u32::try_from(ops).unwrap();
    c.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            for _ in 0..iters {
                for trace in traces {
                    if passes.peel {
                        let _ = black_box(optimize_or_peel(black_box(trace), passes));
                    } else {
                        let _ = black_box(optimize(black_box(trace), passes));
                    }
                }
            }
            start.elapsed() / ops
        })
    });
}

fn corpus(c: &mut Criterion) {
    let traces = recorded_traces();
    per_op(
        c,
        "optimize corpus, per input op",
        &traces,
        Passes::default(),
    );
    let without = Passes {
        relations: false,
        ..Passes::default()
    };
    per_op(
        c,
        "optimize corpus without relational facts, per input op",
        &traces,
        without,
    );
    let peel = Passes {
        peel: true,
        ..Passes::default()
    };
    per_op(
        c,
        "optimize corpus with loops peeled, per input op",
        &traces,
        peel,
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    targets = corpus
}
criterion_main!(benches);
