//! `traceopt stats`: Figure-7 counts per trace, recorded beside optimized,
//! and totals per file and overall. The totals line up with the table of
//! `shared/corpus/README.md` (trace counts, op counts with and without
//! `debug_merge_point`).

use crate::input::{describe, read_inputs, Failure};
use serde::Serialize;
use std::fmt::Write as _;
use traceopt_ir::log::Section;
use traceopt_ir::{OpCounts, Trace, TraceFile};

#[derive(Serialize)]
struct Row {
    label: String,
    recorded: Option<OpCounts>,
    optimized: Option<OpCounts>,
}

#[derive(Serialize, Default, Clone, Copy)]
struct Totals {
    recorded_traces: usize,
    optimized_loops: usize,
    optimized_bridges: usize,
    /// Recorded op lines including `debug_merge_point`.
    recorded_ops_all: usize,
    recorded: OpCounts,
    optimized: OpCounts,
}

impl Totals {
    fn add(&mut self, other: &Totals) {
        self.recorded_traces += other.recorded_traces;
        self.optimized_loops += other.optimized_loops;
        self.optimized_bridges += other.optimized_bridges;
        self.recorded_ops_all += other.recorded_ops_all;
        self.recorded += other.recorded;
        self.optimized += other.optimized;
    }

    fn add_recorded(&mut self, trace: &Trace) -> OpCounts {
        let counts = OpCounts::of(trace);
        self.recorded_traces += 1;
        self.recorded_ops_all += trace.ops.len();
        self.recorded += counts;
        counts
    }

    fn add_optimized(&mut self, trace: &Trace, section: Section) -> OpCounts {
        let counts = OpCounts::of(trace);
        match section {
            Section::OptBridge => self.optimized_bridges += 1,
            _ => self.optimized_loops += 1,
        }
        self.optimized += counts;
        counts
    }
}

#[derive(Serialize)]
struct FileStats {
    file: String,
    traces: Vec<Row>,
    totals: Totals,
}

pub fn stats(out: &mut String, paths: &[String], json: bool) -> Result<(), Failure> {
    let mut files = Vec::new();
    let mut grand = Totals::default();
    for input in read_inputs(paths)? {
        let mut totals = Totals::default();
        let mut rows = Vec::new();
        match &input.parsed {
            TraceFile::Trace(trace) => rows.push(Row {
                label: input.file.clone(),
                recorded: Some(totals.add_recorded(trace)),
                optimized: None,
            }),
            TraceFile::Peer(cases) => {
                for case in cases {
                    rows.push(Row {
                        label: format!("{}:{} {}", short_name(&input.file), case.line, case.name),
                        recorded: Some(totals.add_recorded(&case.ops)),
                        // PyPy's expected output stands in for an optimized loop.
                        optimized: Some(totals.add_optimized(&case.expected, Section::OptLoop)),
                    })
                }
            }
            TraceFile::Log(log) => {
                for pair in &log.pairs {
                    let recorded = pair
                        .recorded
                        .as_ref()
                        .map(|t| totals.add_recorded(&t.trace));
                    let optimized = pair
                        .optimized
                        .as_ref()
                        .map(|t| totals.add_optimized(&t.trace, t.section));
                    let line = pair
                        .recorded
                        .as_ref()
                        .or(pair.optimized.as_ref())
                        .map_or(0, |t| t.line);
                    let kind = match &pair.optimized {
                        Some(t) => describe(t.section, t.header.as_ref(), false),
                        None => "not compiled".into(),
                    };
                    rows.push(Row {
                        label: format!("{}:{line} {kind}", short_name(&input.file)),
                        recorded,
                        optimized,
                    });
                }
            }
        }
        grand.add(&totals);
        files.push(FileStats {
            file: input.file,
            traces: rows,
            totals,
        });
    }
    if json {
        let report = serde_json::json!({ "files": files, "totals": grand });
        writeln!(out, "{}", serde_json::to_string_pretty(&report).unwrap()).unwrap();
    } else {
        print_table(out, &files, &grand);
    }
    Ok(())
}

/// The file name without its directory, for table rows.
fn short_name(file: &str) -> &str {
    file.rsplit('/').next().unwrap_or(file)
}

const HEAD: &str = "   ops   new   get   set guard";

fn cells(counts: Option<OpCounts>) -> String {
    match counts {
        Some(c) => format!(
            "{:>6}{:>6}{:>6}{:>6}{:>6}",
            c.ops, c.allocations, c.reads, c.writes, c.guards
        ),
        None => format!("{:>30}", "-"),
    }
}

fn print_table(out: &mut String, files: &[FileStats], grand: &Totals) {
    let width = files
        .iter()
        .flat_map(|f| f.traces.iter().map(|r| r.label.chars().count()))
        .max()
        .unwrap_or(10)
        .clamp(10, 60);
    writeln!(
        out,
        "{:<width$} | {:^30} | {:^30}",
        "", "recorded", "optimized"
    )
    .unwrap();
    writeln!(out, "{:<width$} |{HEAD} |{HEAD}", "trace").unwrap();
    for file in files {
        for row in &file.traces {
            let label: String = row.label.chars().take(width).collect();
            writeln!(
                out,
                "{label:<width$} |{} |{}",
                cells(row.recorded),
                cells(row.optimized)
            )
            .unwrap();
        }
        if files.len() > 1 {
            let t = &file.totals;
            let label: String = format!("total {}", short_name(&file.file))
                .chars()
                .take(width)
                .collect();
            writeln!(
                out,
                "{label:<width$} |{} |{}",
                cells(Some(t.recorded)),
                cells(Some(t.optimized))
            )
            .unwrap();
        }
    }
    writeln!(
        out,
        "{:<width$} |{} |{}",
        "total",
        cells(Some(grand.recorded)),
        cells(Some(grand.optimized))
    )
    .unwrap();
    writeln!(out).unwrap();
    writeln!(
        out,
        "{} recorded traces, {} optimized loops, {} optimized bridges",
        grand.recorded_traces, grand.optimized_loops, grand.optimized_bridges
    )
    .unwrap();
    writeln!(out,
        "recorded ops: {} ({} without debug_merge_point); optimized ops without debug_merge_point: {}",
        grand.recorded_ops_all, grand.recorded.ops, grand.optimized.ops
    ).unwrap();
}
