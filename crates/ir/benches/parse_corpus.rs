//! Parse and check the whole shared corpus (17 PYPYLOG files, 9 MB).
//! Target: at least 50 MB/s in release mode. Run with
//! `cargo bench -p traceopt-ir --bench parse_corpus`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;
use traceopt_ir::log::{log_files, Section};
use traceopt_ir::{check, parse_log, CheckOptions};

fn corpus() -> Vec<(String, String)> {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/corpus/pypy-7.3.11");
    let files = log_files(&dir).expect("the shared corpus sits beside the repo");
    files
        .into_iter()
        .map(|p| {
            (
                p.display().to_string(),
                std::fs::read_to_string(&p).unwrap(),
            )
        })
        .collect()
}

fn parse_and_check_corpus(c: &mut Criterion) {
    let logs = corpus();
    let bytes: usize = logs.iter().map(|(_, text)| text.len()).sum();
    let mut group = c.benchmark_group("corpus");
    group.throughput(Throughput::Bytes(bytes as u64));
    group.sample_size(20);
    group.bench_function("parse+check", |b| {
        b.iter(|| {
            let mut errors = 0;
            for (file, text) in &logs {
                let log = parse_log(black_box(text), file).unwrap();
                for t in log.traces() {
                    let options = CheckOptions {
                        require_fail_args: t.section != Section::Recorded,
                        partial: false,
                    };
                    errors += check(&t.trace, file, options).len();
                }
            }
            assert_eq!(errors, 0);
        })
    });
    group.finish();
}

criterion_group!(benches, parse_and_check_corpus);
criterion_main!(benches);
