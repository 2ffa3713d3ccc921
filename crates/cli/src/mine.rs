//! `traceopt mine`: finds the integer optimizations optimized traces
//! missed (`traceopt_mine`), cuts each to a small trace, groups them by
//! shape and ranks the groups by how often they occur.
//!
//! The traces mined are ours by default (each trace of the inputs
//! optimized as `traceopt opt --peel` does), or PyPy's optimized ones
//! (`--source pypy`), or the traces as given (`--source as-is`). A hit
//! is located by the input line of its op: for ours, the recorded op it
//! stands for.
//!
//! Standard output holds the report (text, or one JSON document with
//! `--json`); a progress bar goes to standard error when it is a
//! terminal. Exit codes: 0 done (hits or none), 2 usage or input error.

use crate::input::{read_inputs, Failure, Input};
use crate::opt::{optimize_inputs, picked_lines, Optimization};
use crate::parallel::{in_parallel, start_solvers};
use crate::seconds::positive_seconds;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::time::Duration;
use traceopt_ir::log::Section;
use traceopt_ir::{Trace, TraceFile};
use traceopt_mine::{mine, Mined, Options, Tally};
use traceopt_opt::Passes;
use traceopt_smt::{Solver, SolverKind};

#[derive(Args)]
pub struct MineArgs {
    /// Test-format traces, PYPYLOG files, peer sets, or directories of
    /// them.
    #[arg(required = true)]
    files: Vec<String>,
    /// Whose traces to mine: `ours` (each trace optimized by traceopt,
    /// loops peeled), `pypy` (PyPy's optimized traces of a log, the
    /// expected outputs of a peer set) or `as-is` (every trace as given).
    #[arg(long, default_value = "ours", value_parser = ["ours", "pypy", "as-is"])]
    source: String,
    /// The passes that make our traces (`--source ours`), as for `traceopt
    /// opt`.
    #[arg(long, default_value = "all")]
    passes: String,
    /// The solver: z3 (the default) or cvc5.
    #[arg(long, value_parser = ["z3", "cvc5"])]
    solver: Option<String>,
    /// Traces mined at once, each worker with its own solver process.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=256))]
    jobs: u16,
    /// Seconds the solver may spend on one query (an undecided query is
    /// counted, and finds nothing). The slow ones are products and
    /// quotients of two unknowns, which a longer limit seldom settles.
    #[arg(long, value_name = "SECS", default_value = "0.5", value_parser = positive_seconds, allow_negative_numbers = true)]
    timeout: Duration,
    /// Write every solver query as a self-contained .smt2 file into DIR
    /// (into DIR/job-N, one per worker, with --jobs above 1).
    #[arg(long, value_name = "DIR")]
    dump_smt: Option<std::path::PathBuf>,
    /// Show each hit in its segment of the trace instead of cutting it
    /// down.
    #[arg(long)]
    no_minimize: bool,
    /// Queries the cutting down of one hit may spend.
    #[arg(long, default_value_t = 200)]
    budget: usize,
    /// Groups shown in the text report (all in JSON).
    #[arg(long, default_value_t = 10)]
    top: usize,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

/// A trace to mine: where it is from, for people, and the file.
pub(crate) struct Work<'a> {
    pub file: String,
    pub label: String,
    pub trace: &'a Trace,
}

/// Hits of one shape.
pub(crate) struct Group {
    pub kind: &'static str,
    pub example: String,
    /// `file:line` of each hit.
    pub at: Vec<String>,
}

/// What mining a list of traces found.
pub(crate) struct Mining {
    pub tally: Tally,
    /// Each hit, with the index of its trace in the work.
    pub hits: Vec<(usize, Mined)>,
    /// `file:line` of each hit.
    pub places: Vec<String>,
    /// By shape, the largest group first.
    pub groups: Vec<Group>,
    /// Traces the solver failed on.
    pub errors: Vec<String>,
}

/// Our optimized traces, to mine.
pub(crate) fn our_traces<'a>(optimized: &'a [Optimization]) -> Vec<Work<'a>> {
    let mut work = Vec::new();
    for ((label, _, _, _), result, _) in optimized {
        if let Ok((result, _)) = result {
            let file = label.split(':').next().unwrap_or(label).to_string();
            let label = label.clone();
            let trace = &result.trace;
            work.push(Work { file, label, trace });
        }
    }
    work
}

/// Mines every trace of `work`, one worker per solver, with a progress
/// bar on standard error (if it is a terminal).
pub(crate) fn mine_all(work: &[Work], solvers: Vec<Solver>, options: Options) -> Mining {
    let bar = ProgressBar::new(work.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} traces {elapsed} {msg}").unwrap(),
    );
    let mut tally = Tally::default();
    let mut hits: Vec<(usize, Mined)> = Vec::new();
    let mut errors = Vec::new();
    in_parallel(
        work,
        solvers,
        |item, solver| mine(item.trace, solver, options),
        |k, result| {
            bar.inc(1);
            match result {
                Some(Ok((mined, cost))) => {
                    tally += cost;
                    hits.extend(mined.into_iter().map(|m| (k, m)));
                    bar.set_message(format!("{} hit(s)", hits.len()));
                }
                Some(Err(e)) => errors.push(format!("{}: {e}", work[k].label)),
                None => {}
            }
        },
    );
    bar.finish_and_clear();
    let places: Vec<String> = (hits.iter())
        .map(|(k, m)| {
            let line = work[*k].trace.op_pos.get(m.op).map_or(0, |p| p.line);
            format!("{}:{line}", work[*k].file)
        })
        .collect();
    // Groups in order of size, then of first hit.
    let mut groups: Vec<Group> = Vec::new();
    let mut index: HashMap<&str, usize> = HashMap::new();
    for ((_, m), place) in hits.iter().zip(&places) {
        let g = *index.entry(&m.shape).or_insert_with(|| {
            groups.push(Group {
                kind: m.finding.kind(),
                example: m.example.clone(),
                at: Vec::new(),
            });
            groups.len() - 1
        });
        groups[g].at.push(place.clone());
    }
    groups.sort_by_key(|g| std::cmp::Reverse(g.at.len()));
    Mining {
        tally,
        hits,
        places,
        groups,
        errors,
    }
}

/// PyPy's optimized traces of `input`: a log's loops and bridges, a peer
/// set's expected outputs, a test-format trace itself.
fn pypy_traces(input: &Input) -> Vec<(String, &Trace)> {
    let file = &input.file;
    match &input.parsed {
        TraceFile::Trace(trace) => vec![(file.clone(), &**trace)],
        TraceFile::Peer(cases) => (cases.iter())
            .map(|c| {
                (
                    format!("{file}:{} {} (expected)", c.line, c.name),
                    &c.expected,
                )
            })
            .collect(),
        TraceFile::Log(log) => (log.traces())
            .filter(|t| t.section != Section::Recorded)
            .map(|t| (format!("{file}:{}", t.line), &t.trace))
            .collect(),
    }
}

pub fn run(out: &mut String, args: MineArgs) -> Result<(), Failure> {
    let mut passes = Passes::parse(&args.passes).map_err(Failure::input)?;
    passes.peel = true;
    let kind = args.solver.as_deref().and_then(SolverKind::from_name);
    let solvers = start_solvers(kind, args.timeout, args.jobs, args.dump_smt.as_deref())?;
    let (files, picked) = picked_lines(&args.files);
    let inputs = read_inputs(&files)?;
    let optimized = match args.source.as_str() {
        "ours" => optimize_inputs(&inputs, passes, &picked).0,
        _ => Vec::new(),
    };
    let mut work: Vec<Work> = Vec::new();
    match args.source.as_str() {
        "ours" => work = our_traces(&optimized),
        source => {
            for input in &inputs {
                let traces = match source {
                    "pypy" => pypy_traces(input),
                    _ => (input.traces().into_iter())
                        .map(|item| (item.label, item.trace))
                        .collect(),
                };
                for (label, trace) in traces {
                    let file = input.file.clone();
                    work.push(Work { file, label, trace });
                }
            }
        }
    }
    let options = Options {
        minimize: !args.no_minimize,
        budget: args.budget,
    };
    let Mining {
        tally,
        hits,
        places,
        groups,
        errors,
    } = mine_all(&work, solvers, options);
    for error in &errors {
        eprintln!("{error}");
    }
    let summary = format!(
        "mined {} trace(s) ({}): {} integer op(s) and guard(s), {} solver queries ({} undecided), \
         {} hit(s) of {} shape(s)",
        work.len(),
        args.source,
        tally.lines,
        tally.queries,
        tally.unknown,
        hits.len(),
        groups.len()
    );
    if args.json {
        let hits: Vec<serde_json::Value> = (hits.iter().zip(&places))
            .map(|((k, m), place)| {
                serde_json::json!({
                    "trace": work[*k].label, "at": place, "op": m.op,
                    "kind": m.finding.kind(), "what": m.what, "example": m.example,
                })
            })
            .collect();
        let groups: Vec<serde_json::Value> = (groups.iter())
            .map(|g| {
                serde_json::json!({
                    "count": g.at.len(), "kind": g.kind, "example": g.example, "at": g.at,
                })
            })
            .collect();
        let doc = serde_json::json!({
            "source": args.source, "traces": work.len(), "lines": tally.lines,
            "queries": tally.queries, "unknown": tally.unknown,
            "errors": errors, "hits": hits, "groups": groups,
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    } else {
        writeln!(out, "{summary}").unwrap();
        for (rank, group) in groups.iter().take(args.top).enumerate() {
            const PLACES: usize = 4;
            let mut at = group.at[..group.at.len().min(PLACES)].join(", ");
            if group.at.len() > PLACES {
                write!(at, " and {} more", group.at.len() - PLACES).unwrap();
            }
            writeln!(
                out,
                "\n{}. {} hit(s), {}: at {at}",
                rank + 1,
                group.at.len(),
                group.kind
            )
            .unwrap();
            for line in group.example.lines() {
                writeln!(out, "    {line}").unwrap();
            }
        }
        if groups.len() > args.top {
            writeln!(
                out,
                "\n({} more shape(s); --top N shows more, --json all)",
                groups.len() - args.top
            )
            .unwrap();
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(Failure::input(format!(
            "{} trace(s) could not be mined (see above)",
            errors.len()
        )))
    }
}
