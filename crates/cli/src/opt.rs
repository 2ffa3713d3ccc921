//! `traceopt opt`: optimizes traces and prints the results; with
//! `--verify`, proves each result equivalent to its input (as `traceopt
//! verify` does); with `--rule-stats`, counts how often each rule fired
//! (per root op, like PyPy's `jit-intbounds-stats`).
//!
//! A test-format file is one trace; of a `PYPYLOG` file every recorded
//! trace is optimized; of a peer set every case's input.
//!
//! Standard output holds traces only, so that it can be read back: the
//! optimized trace for one test-format file, otherwise a peer set whose
//! cases are each input (`--- ops`) and its optimized form (`---
//! expected`), which `traceopt verify` and `check` read. Op counts,
//! verdicts and summaries go to standard error; `--json` puts everything
//! on standard output as one JSON document.
//!
//! When the optimizer finds that a trace can never run to its end (a
//! guard that always fails), it prints no trace; `--verify` then proves
//! that claim instead (no input on which the trace is defined gets past
//! all its guards).
//!
//! Exit codes: 0 (with `--verify`: every trace proved), 1 a result was
//! refuted (a bug: please report it), 3 some result undecided or beyond
//! the validator (`unsupported`), 2 usage or input error. The summary
//! counts each kind.
//!
//! `--inject-bug` (hidden, for testing the fuzzer) switches on a known
//! miscompilation; every output then says so: a comment atop the traces,
//! the summary, and an `injected_bug` field in JSON.

use crate::input::{read_inputs, Failure, Input};
use crate::parallel::{in_parallel, start_solvers};
use crate::seconds::{positive_seconds, seconds};
use crate::verify::{judge_exit_facts, judge_output, judged, Judged};
use clap::Args;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use traceopt_ir::{
    check, print_trace, CheckOptions, DescrKind, Fact, Header, LabelState, OpCounts, Opcode, Trace,
    TraceFile,
};
use traceopt_opt::{
    enter_peeled, facts_on_exit, optimize_assuming, optimize_or_peel, Bug, Infeasible, NoEntry,
    Optimized, Output, Passes, Peeled, RULES,
};
use traceopt_smt::{Solver, SolverKind};
use traceopt_verify::{
    verify_assuming, verify_entry, verify_never_ends, verify_optimized, verify_peeled, VerifyError,
};

#[derive(Args)]
pub struct OptArgs {
    /// Test-format traces, PYPYLOG files, peer sets, or directories of
    /// them. `FILE:LINE` picks the trace (or peer case) of FILE that
    /// starts at LINE: the whole file is still optimized, as a bridge
    /// learns from its parent, but only that trace is printed and verified.
    #[arg(required = true)]
    files: Vec<String>,
    /// The passes to run, comma-separated: fold, rules, bounds, cse,
    /// guards, heap, virtuals, relations, dce; `all` (the default) or `none`.
    #[arg(long, default_value = "all")]
    passes: String,
    /// Prove each result equivalent to its input with the SMT solver.
    #[arg(long)]
    verify: bool,
    /// The solver for --verify: z3 (the default) or cvc5.
    #[arg(long, value_parser = ["z3", "cvc5"])]
    solver: Option<String>,
    /// Traces verified at once (--verify), each worker with its own
    /// solver process; results are printed in the traces' order.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=256))]
    jobs: u16,
    /// Seconds the solver may spend on one query (--verify; more than 0,
    /// at most 1000000).
    #[arg(long, value_name = "SECS", default_value = "10", value_parser = positive_seconds, allow_negative_numbers = true)]
    timeout: Duration,
    /// Seconds each trace's verification may take in all (--verify),
    /// building its queries included: a trace whose queries keep timing
    /// out is then `unknown` (its budget spent) without holding up the
    /// others; a query asked with less left than --timeout gets what is
    /// left. 0 (the default): no limit.
    #[arg(long, value_name = "SECS", default_value = "0", value_parser = seconds, allow_negative_numbers = true)]
    budget: Duration,
    /// Write every solver query of --verify as a self-contained .smt2 file
    /// into DIR (into DIR/job-N, one per worker, with --jobs above 1).
    #[arg(long, value_name = "DIR", requires = "verify")]
    dump_smt: Option<PathBuf>,
    /// Peel loops (traces whose jump goes back to their start): a
    /// preamble, then a label and the loop's body optimized knowing what
    /// the preamble established; --verify proves the result by induction.
    /// In a log, a bridge that jumps to a loop peeled so enters it at its
    /// label where it can. (Bridges of a log always start knowing what
    /// their parent established at the guard they leave.)
    #[arg(long)]
    peel: bool,
    /// Print how often each rule fired, per op (on standard error).
    #[arg(long)]
    rule_stats: bool,
    /// Print the Figure 7 counts (ops, allocations, heap reads and writes,
    /// guards) before and after, and PyPy's where a log or peer set has
    /// them (on standard error).
    #[arg(long)]
    stats: bool,
    /// Print no traces and no per-trace lines: the summary alone.
    #[arg(long)]
    quiet: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Testing the fuzzer: switch on a known miscompilation (see
    /// `traceopt fuzz`), to replay what it found.
    #[arg(long, hide = true)]
    inject_bug: Option<String>,
}

/// Verdict counts of --verify.
#[derive(Default)]
pub(crate) struct Tally {
    pub proved: usize,
    pub refuted: usize,
    pub unknown: usize,
    pub unsupported: usize,
    /// Seconds each validation took.
    seconds: Vec<f64>,
}

impl Tally {
    /// Adds `other`'s verdict counts (not its times).
    pub(crate) fn add_counts(&mut self, other: &Tally) {
        self.proved += other.proved;
        self.refuted += other.refuted;
        self.unknown += other.unknown;
        self.unsupported += other.unsupported;
    }

    /// Total, median and slowest seconds of the validations.
    fn times(&self) -> (f64, f64, f64) {
        let mut sorted = self.seconds.clone();
        sorted.sort_by(f64::total_cmp);
        let median = sorted.get(sorted.len() / 2).copied().unwrap_or(0.0);
        let max = sorted.last().copied().unwrap_or(0.0);
        (sorted.iter().sum(), median, max)
    }
}

pub fn run(out: &mut String, args: OptArgs) -> Result<(), Failure> {
    let mut passes = Passes::parse(&args.passes).map_err(Failure::input)?;
    passes.peel = args.peel;
    if let Some(name) = &args.inject_bug {
        passes.bug = Some(
            Bug::from_name(name).ok_or_else(|| Failure::input(format!("unknown bug '{name}'")))?,
        );
    }
    // Said on every output, so that no result of a broken optimizer is
    // taken for a real one.
    let injected = args.inject_bug.as_ref().map(|name| {
        format!(
            "WARNING: optimized with --inject-bug {name}, a deliberately broken optimizer; \
             these results are not traceopt's"
        )
    });
    let solvers = if args.verify {
        let kind = args.solver.as_deref().and_then(SolverKind::from_name);
        start_solvers(kind, args.timeout, args.jobs, args.dump_smt.as_deref())?
    } else {
        Vec::new()
    };
    let (files, picked) = picked_lines(&args.files);
    let inputs = read_inputs(&files)?;
    // One test-format trace is printed as such; anything else as a peer set.
    let one_trace =
        matches!(inputs.as_slice(), [input] if matches!(input.parsed, TraceFile::Trace(_)));
    let print_traces = !args.json && !args.quiet;
    if let (Some(warning), true) = (&injected, print_traces) {
        writeln!(out, "# {warning}").unwrap();
    }
    // Op counts and verdicts of each trace, on standard error.
    let note = |line: String| {
        if print_traces {
            eprintln!("{line}");
        }
    };
    let mut counts = vec![0u64; RULES.len()];
    let mut tally = Tally::default();
    let mut figure7 = Figure7::default();
    let mut json_traces = Vec::new();
    let (mut ops_before, mut ops_after, mut traces, mut infeasible) = (0, 0, 0, 0);
    // The optimizer's results first (fast); then each is verified, by
    // `--jobs` workers, and reported in order as its verdict comes.
    let (work, malformed) = optimize_inputs(&inputs, passes, &picked);
    let found = work.len();
    if found == 0 && !picked.is_empty() {
        return Err(Failure::input(
            "no trace starts at the line(s) given (FILE:LINE takes the line of a trace's \
             `{jit-log-noopt` section, or of a peer case's name; `traceopt opt FILE` lists them)",
        ));
    }
    let budget = (!args.budget.is_zero()).then_some(args.budget);
    let judge_within_budget = |item: &Optimization, solver: &mut Solver| {
        solver.set_deadline(budget.map(|b| std::time::Instant::now() + b));
        judge(item, solver)
    };
    in_parallel(&work, solvers, judge_within_budget, |k, verdict| {
        let ((label, trace, pypy, bridge), optimized, exit) = &work[k];
        let (label, trace, pypy, bridge) = (label, *trace, *pypy, *bridge);
        traces += 1;
        let before_count = real_ops(trace);
        ops_before += before_count;
        let mut record = serde_json::json!({ "trace": label, "ops_before": before_count });
        let verified = |record: &mut serde_json::Value, what: &str| {
            if let Some((judged, secs)) = verdict {
                tally.seconds.push(secs);
                let verdict = verdict_text(judged, &mut tally);
                note(format!("# verify{what}: {verdict} ({secs:.2} s)"));
                record["verify"] = verdict.into();
                record["verify_seconds"] = secs.into();
            }
        };
        match optimized {
            Err(infeasible_trace) => {
                infeasible += 1;
                record["infeasible"] = infeasible_trace.to_string().into();
                note(format!("# {label}: {infeasible_trace}"));
                verified(&mut record, " (never runs to the end)");
            }
            Ok((result, peeled)) => {
                figure7.recorded += OpCounts::of(trace);
                figure7.ours += OpCounts::of(&result.trace);
                if let Some(pypy) = pypy {
                    figure7.with_pypy += 1;
                    figure7.pypy += OpCounts::of(pypy);
                    figure7.ours_where_pypy += OpCounts::of(&result.trace);
                    figure7.pypy_steady += OpCounts::steady(pypy);
                    figure7.ours_steady += OpCounts::steady(&result.trace);
                    if bridge {
                        figure7.bridges += 1;
                        figure7.pypy_bridges += OpCounts::of(pypy);
                        figure7.ours_bridges += OpCounts::of(&result.trace);
                    }
                    record["ops_pypy"] = OpCounts::of(pypy).ops.into();
                    record["steady_pypy"] = serde_json::json!(OpCounts::steady(pypy));
                    record["counts_pypy"] = serde_json::json!(OpCounts::of(pypy));
                }
                record["bridge"] = bridge.into();
                record["counts_before"] = serde_json::json!(OpCounts::of(trace));
                record["counts_after"] = serde_json::json!(OpCounts::of(&result.trace));
                record["steady_after"] = serde_json::json!(OpCounts::steady(&result.trace));
                for (total, n) in counts.iter_mut().zip(&result.rule_counts) {
                    *total += u64::from(*n);
                }
                let after_count = real_ops(&result.trace);
                ops_after += after_count;
                let text = print_trace(&result.trace);
                record["ops_after"] = after_count.into();
                let known = exit.as_ref().map_or(0, |e| {
                    let known = e.facts.iter().filter(|f| **f != Fact::default()).count();
                    record["facts_on_entry"] = known.into();
                    known
                });
                let knowing = match known {
                    0 => String::new(),
                    _ => format!("knowing {known} fact(s) its parent established"),
                };
                let how = match peeled {
                    How::Straight if known > 0 => format!(" ({knowing})"),
                    How::Straight => String::new(),
                    How::Refused(n, why) => {
                        record["no_entry"] =
                            serde_json::json!({ "loop": n, "why": why.to_string() });
                        let knowing = match known {
                            0 => String::new(),
                            _ => format!("; {knowing}"),
                        };
                        format!(" (does not enter loop {n} at its label: {why}{knowing})")
                    }
                    How::Peeled(state, None) => format!(
                        " (peeled: {} object(s) passed along kept virtual)",
                        state.virtuals.len()
                    ),
                    How::Peeled(_, Some(why)) => format!(" (peeled; objects allocated: {why})"),
                    How::Entered(state, n, ..) => {
                        record["enters_loop"] = (*n).into();
                        format!(
                            " (enters loop {n} at its label: {} object(s) passed along kept virtual)",
                            state.virtuals.len()
                        )
                    }
                };
                note(format!(
                    "# {label}: {before_count} -> {after_count} ops{how}"
                ));
                verified(&mut record, "");
                match (print_traces, one_trace) {
                    (true, true) => out.push_str(&text),
                    (true, false) => write_case(out, label, trace, &text),
                    (false, _) => {}
                }
                if !args.quiet {
                    record["optimized"] = text.into();
                }
            }
        }
        json_traces.push(record);
    });
    let summary = format!(
        "{traces} trace(s): {ops_before} ops before, {ops_after} after ({} removed){}",
        ops_before.saturating_sub(ops_after),
        if infeasible > 0 {
            format!(", {infeasible} can never run to the end")
        } else {
            String::new()
        }
    );
    if args.json {
        let mut doc = serde_json::json!({
            "traces": json_traces,
            "ops_before": ops_before,
            "ops_after": ops_after,
        });
        if args.rule_stats {
            doc["rules"] = rule_stats_json(&counts);
        }
        if args.stats {
            doc["figure7"] = serde_json::json!({
                "recorded": figure7.recorded,
                "optimized": figure7.ours,
                "pypy": figure7.pypy,
                "optimized_where_pypy": figure7.ours_where_pypy,
                "traces_with_pypy": figure7.with_pypy,
                "pypy_steady": figure7.pypy_steady,
                "optimized_steady": figure7.ours_steady,
                "pypy_bridges": figure7.pypy_bridges,
                "optimized_bridges": figure7.ours_bridges,
                "bridges": figure7.bridges,
            });
        }
        if args.verify {
            let (total, median, max) = tally.times();
            doc["verify"] = serde_json::json!({
                "proved": tally.proved, "refuted": tally.refuted,
                "unknown": tally.unknown, "unsupported": tally.unsupported,
                "seconds_total": total, "seconds_median": median, "seconds_max": max,
            });
        }
        if let (Some(name), Some(warning)) = (&args.inject_bug, &injected) {
            doc["injected_bug"] = name.as_str().into();
            doc["warning"] = warning.as_str().into();
        }
        writeln!(out, "{}", serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    } else {
        // Reports go to standard error, which holds no traces.
        let mut report = String::new();
        if args.rule_stats {
            write_rule_stats(&mut report, &counts);
        }
        if args.stats {
            write_figure7(&mut report, &figure7);
        }
        if let Some(warning) = &injected {
            writeln!(report, "{warning}").unwrap();
        }
        writeln!(report, "{summary}").unwrap();
        if args.verify {
            let (total, median, max) = tally.times();
            writeln!(
                report,
                "verify: {} proved, {} refuted, {} unknown, {} with ops the validator does not support yet",
                tally.proved, tally.refuted, tally.unknown, tally.unsupported
            )
            .unwrap();
            writeln!(
                report,
                "verify time: {total:.1} s in all, {median:.2} s median, {max:.2} s the slowest"
            )
            .unwrap();
        }
        eprint!("{report}");
    }
    if malformed > 0 {
        Err(Failure::input(format!(
            "{malformed} trace(s) not optimized: they do not pass the checker (see above)"
        )))
    } else if tally.refuted > 0 {
        Err(Failure::silent(1))
    } else if tally.unknown + tally.unsupported > 0 {
        Err(Failure::silent(3))
    } else {
        Ok(())
    }
}

/// Verifies one optimized trace as `traceopt opt --verify` does, with
/// the seconds it took.
pub(crate) fn judge(
    ((_, trace, _, _), optimized, exit): &Optimization,
    solver: &mut Solver,
) -> (Result<Judged, VerifyError>, f64) {
    let started = std::time::Instant::now();
    let assumed = exit.as_ref().map_or(&[][..], |e| &e.facts[..]);
    // PyPy recorded a run of the trace to its end: where the
    // validator's model of it lets no run get there, what it proves
    // of the trace is vacuous (a guard it takes to fail always hides
    // what follows), and nothing is claimed.
    // (The same question proves an infeasible trace's claim.)
    let recorded = !trace.recorded.is_empty();
    let mut never_ends = (recorded || optimized.is_err()).then(|| verify_never_ends(trace, solver));
    if recorded && matches!(never_ends, Some(Ok(traceopt_verify::Verdict::Proved))) {
        let why = "the validator's model of this trace lets no run reach its end, yet \
                   PyPy recorded one: a proof would be vacuous (an encoding gap)";
        return (
            Ok(Judged::Unknown(why.into())),
            started.elapsed().as_secs_f64(),
        );
    }
    let facts_hold = match exit {
        Some(exit) => judge_exit_facts(&exit.trace, &exit.facts, solver),
        None => Ok(Judged::Proved),
    };
    let judged = match (facts_hold, optimized) {
        (Ok(Judged::Proved), Err(_)) => judged(
            never_ends
                .take()
                .unwrap_or_else(|| verify_never_ends(trace, solver)),
        ),
        // Guard by guard, then end to end where that settles nothing;
        // from inputs that satisfy what the bridge knows, if it does.
        (Ok(Judged::Proved), Ok((result, How::Straight | How::Refused(..)))) => {
            let seen = &result.seen_classes;
            judge_output(trace, result, |before, after, provenance| match assumed {
                [] => verify_optimized(before, after, provenance, seen, solver),
                _ => verify_assuming(before, after, provenance, assumed, seen, solver),
            })
        }
        // By induction on the state at its label.
        (Ok(Judged::Proved), Ok((result, How::Peeled(state, _)))) => {
            judge_output(trace, result, |before, after, provenance| {
                verify_peeled(before, after, provenance, state, solver)
            })
        }
        // As the first step of the entered loop's induction, which is
        // proved too: the entry holds only with it.
        (Ok(Judged::Proved), Ok((result, How::Entered(state, n, looped, loop_input)))) => {
            let the_loop = judge_output(loop_input, &looped.optimized, |b, a, p| {
                verify_peeled(b, a, p, &looped.state, &mut *solver)
            });
            match the_loop {
                Ok(Judged::Proved) => judge_output(trace, result, |before, after, provenance| {
                    let target = (*loop_input, &looped.optimized.trace, &looped.state);
                    verify_entry(before, after, provenance, state, target, assumed, solver)
                }),
                Ok(Judged::Refuted(why)) => {
                    Ok(Judged::Refuted(format!("the loop {n} it enters: {why}")))
                }
                Ok(Judged::Unknown(why)) => {
                    Ok(Judged::Unknown(format!("the loop {n} it enters: {why}")))
                }
                Err(e) => Err(e),
            }
        }
        (not_proved, _) => not_proved,
    };
    (judged, started.elapsed().as_secs_f64())
}

/// A trace `traceopt opt` optimized: the trace (with PyPy's form of it),
/// its result and how it was reached, and the parent's exit it started
/// from (a bridge knowing what its parent established).
pub(crate) type Optimization<'a> = (
    WorkItem<'a>,
    Result<(Optimized, How<'a>), Infeasible>,
    Option<Arc<Exit>>,
);

/// Optimizes every trace of `inputs` with `passes` (bridges knowing what
/// their parents established; with `passes.peel`, loops peeled and the
/// bridges that jump to them entering at their labels where they can);
/// returns those of the lines `picked` (all, if none of a file was), and
/// how many traces did not pass the checker (reported on standard error).
pub(crate) fn optimize_inputs<'a>(
    inputs: &'a [Input],
    passes: Passes,
    picked: &HashMap<String, Vec<u64>>,
) -> (Vec<Optimization<'a>>, usize) {
    let mut malformed = 0;
    let mut work = Vec::new();
    for input in inputs {
        // Peer-set cases are test fragments that may stop before the end.
        let options = CheckOptions {
            require_fail_args: false,
            partial: matches!(input.parsed, TraceFile::Peer(_)),
        };
        // The loops of this file we peeled, by PyPy's loop number: a trace
        // that jumps to one of them may enter it at its label.
        let mut peeled_loops: HashMap<i64, (Arc<Peeled>, &Trace)> = HashMap::new();
        for (label, trace, pypy, bridge, number, exit) in
            traces_to_optimize(&input.file, &input.parsed)
        {
            // The optimizer takes well-formed traces only.
            let errors = check(trace, &input.file, options);
            if !errors.is_empty() {
                malformed += 1;
                for error in errors {
                    eprintln!("{error}");
                }
                continue;
            }
            // A bridge knows what its parent established of what it
            // takes (`facts_on_exit`), where that is proved.
            let exit = exit.and_then(|exit| {
                let facts = facts_on_exit(&exit, passes)?;
                let known = facts.iter().any(|f| *f != Fact::default());
                known.then(|| Arc::new(Exit { trace: exit, facts }))
            });
            let assumed = exit.as_ref().map_or(&[][..], |e| &e.facts[..]);
            let target = (passes.peel.then(|| jumps_to_loop(trace)).flatten())
                .and_then(|n| peeled_loops.get(&n).map(|(p, t)| (n, p.clone(), *t)));
            let mut refused = None;
            let entered = target.and_then(|(n, looped, loop_input)| {
                match enter_peeled(trace, passes, assumed, &looped).ok()? {
                    Ok(e) => Some((e.optimized, How::Entered(e.state, n, looped, loop_input))),
                    Err(why) => {
                        refused = Some((n, why));
                        None
                    }
                }
            });
            let straight = || match refused.clone() {
                Some((n, why)) => How::Refused(n, why),
                None => How::Straight,
            };
            // Knowing the facts, a bridge optimized as it is; a trace that
            // can never get to its end by them is optimized without them.
            let known = (entered.is_none() && !assumed.is_empty())
                .then(|| optimize_assuming(trace, passes, assumed).ok())
                .flatten()
                .map(|o| (o, straight()));
            let used_facts = entered.is_some() || known.is_some();
            let optimized = match entered.or(known) {
                Some(done) => Ok(done),
                None => optimize_or_peel(trace, passes).map(|outcome| match outcome {
                    Output::Straight(o) => (o, straight()),
                    Output::Peeled(p) => {
                        if let Some(n) = number {
                            peeled_loops.insert(n, (Arc::new(p.clone()), trace));
                        }
                        (p.optimized, How::Peeled(p.state, p.forced))
                    }
                }),
            };
            let exit = exit.filter(|_| used_facts);
            if !is_picked(picked, &input.file, &label) {
                continue;
            }
            work.push(((label, trace, pypy, bridge), optimized, exit));
        }
    }
    (work, malformed)
}

/// The files named, with `FILE:LINE` read as FILE, and the lines picked
/// so of each file (a file named whole has none).
pub(crate) fn picked_lines(args: &[String]) -> (Vec<String>, HashMap<String, Vec<u64>>) {
    let mut files = Vec::new();
    let mut picked: HashMap<String, Vec<u64>> = HashMap::new();
    for arg in args {
        let split = arg.rsplit_once(':').and_then(|(file, line)| {
            let line = line.parse::<u64>().ok()?;
            (!std::path::Path::new(arg).exists()).then_some((file, line))
        });
        match split {
            Some((file, line)) => {
                if !files.iter().any(|f| f == file) {
                    files.push(file.to_string());
                }
                picked.entry(file.to_string()).or_default().push(line);
            }
            None => files.push(arg.clone()),
        }
    }
    (files, picked)
}

/// Whether the trace labelled `label` (`file:line ...`) of `file` is
/// reported: every trace is, unless lines of that file were picked.
fn is_picked(picked: &HashMap<String, Vec<u64>>, file: &str, label: &str) -> bool {
    let Some(lines) = picked.get(file) else {
        return true;
    };
    let line = label[file.len()..]
        .trim_start_matches(':')
        .split(' ')
        .next()
        .and_then(|l| l.parse::<u64>().ok());
    line.is_some_and(|l| lines.contains(&l))
}

/// A trace to optimize, PyPy's optimized form of it if known, and
/// whether that is a bridge (PyPy optimized it without loop peeling).
pub(crate) type WorkItem<'a> = (String, &'a Trace, Option<&'a Trace>, bool);

/// The same, PyPy's number for the loop it is (if it is one), and the
/// run of its parent up to the guard it leaves (if it is a bridge of a
/// log whose parent is there).
type Work<'a> = (
    String,
    &'a Trace,
    Option<&'a Trace>,
    bool,
    Option<i64>,
    Option<Trace>,
);

/// A bridge's parent's run up to the guard it leaves
/// (`Trace::exit_at`), and what holds there of each value the bridge
/// takes.
pub(crate) struct Exit {
    trace: Trace,
    facts: Vec<Fact>,
}

/// The run of the trace of `log` (as PyPy optimized it) that holds the
/// guard at `address`, up to that guard: what a bridge out of it starts
/// from.
fn parent_exit(log: &traceopt_ir::Log, address: u64) -> Option<Trace> {
    for pair in &log.pairs {
        let Some(parent) = &pair.optimized else {
            continue;
        };
        let trace = &parent.trace;
        let is_it = |op: &traceopt_ir::Op| {
            op.descr.is_some_and(
                |d| matches!(trace.descr(d).kind, DescrKind::Guard { address: a } if a == address),
            )
        };
        if let Some(index) = trace.ops.iter().position(is_it) {
            return trace.exit_at(index);
        }
    }
    None
}

/// How a trace was optimized: as it is, peeled (the witness, and why
/// objects were allocated after all if they were), or entering the
/// peeled loop of that number at its label (the witness, the loop, and
/// the loop's input).
pub(crate) enum How<'a> {
    Straight,
    /// Optimized straight, as it does not enter the peeled loop it jumps
    /// to (its number), for this reason.
    Refused(i64, NoEntry),
    Peeled(LabelState, Option<String>),
    Entered(LabelState, i64, Arc<Peeled>, &'a Trace),
}

/// The number of the loop whose start `trace`'s final jump goes to
/// (PyPy's `jump(..., descr=<LoopN>)`; a loop being recorded is
/// `<Loop-N>`, which is no other trace).
fn jumps_to_loop(trace: &Trace) -> Option<i64> {
    let jump = trace.ops.last().filter(|op| op.opcode == Opcode::Jump)?;
    match trace.descr(jump.descr?).kind {
        DescrKind::Loop { number: Some(n) } if n >= 0 => Some(n),
        _ => None,
    }
}

/// The traces of a file the optimizer takes: the trace itself, every
/// recorded trace of a log (with PyPy's loop or bridge), every case input
/// of a peer set (with its expected output).
fn traces_to_optimize<'a>(file: &str, parsed: &'a TraceFile) -> Vec<Work<'a>> {
    match parsed {
        TraceFile::Trace(trace) => vec![(file.to_string(), &**trace, None, false, None, None)],
        TraceFile::Peer(cases) => cases
            .iter()
            .map(|c| {
                (
                    format!("{file}:{} {}", c.line, c.name),
                    &c.ops,
                    Some(&c.expected),
                    false,
                    None,
                    None,
                )
            })
            .collect(),
        TraceFile::Log(log) => log
            .pairs
            .iter()
            .filter_map(|p| {
                let recorded = p.recorded.as_ref()?;
                let label = format!("{file}:{}", recorded.line);
                let header = p.optimized.as_ref().and_then(|o| o.header.as_ref());
                let bridge = matches!(header, Some(Header::Bridge { .. }));
                let number = match header {
                    Some(Header::Loop { number, .. }) => Some(*number),
                    _ => None,
                };
                let exit = match header {
                    Some(Header::Bridge { guard, .. }) => parent_exit(log, *guard),
                    _ => None,
                };
                Some((
                    label,
                    &recorded.trace,
                    p.optimized.as_ref().map(|o| &o.trace),
                    bridge,
                    number,
                    exit,
                ))
            })
            .collect(),
    }
}

/// Figure 7 counts summed over the traces: as recorded, as we optimized
/// them, and (for the traces where it is known) as PyPy did, with ours
/// over the same traces for comparison.
#[derive(Default)]
struct Figure7 {
    recorded: OpCounts,
    ours: OpCounts,
    pypy: OpCounts,
    ours_where_pypy: OpCounts,
    with_pypy: usize,
    /// The steady state (`OpCounts::steady`) of PyPy's traces and ours.
    pypy_steady: OpCounts,
    ours_steady: OpCounts,
    /// The same for the traces PyPy optimized as bridges.
    pypy_bridges: OpCounts,
    ours_bridges: OpCounts,
    bridges: usize,
}

fn write_figure7(out: &mut String, f: &Figure7) {
    let row = |out: &mut String, name: &str, c: &OpCounts| {
        writeln!(
            out,
            "{name:<34} {:>8} {:>8} {:>8} {:>8} {:>8}",
            c.ops, c.allocations, c.reads, c.writes, c.guards
        )
        .unwrap();
    };
    writeln!(
        out,
        "{:<34} {:>8} {:>8} {:>8} {:>8} {:>8}",
        "counts (Figure 7)", "ops", "new", "get", "set", "guard"
    )
    .unwrap();
    row(out, "recorded", &f.recorded);
    row(out, "optimized by traceopt", &f.ours);
    if f.with_pypy > 0 {
        let label = format!("PyPy's output ({} traces)", f.with_pypy);
        row(out, &label, &f.pypy);
        row(out, "traceopt on those traces", &f.ours_where_pypy);
        row(out, "PyPy, steady state", &f.pypy_steady);
        row(out, "traceopt, steady state", &f.ours_steady);
    }
    if f.bridges > 0 {
        let label = format!("PyPy's bridges ({} traces)", f.bridges);
        row(out, &label, &f.pypy_bridges);
        row(out, "traceopt on those bridges", &f.ours_bridges);
    }
}

fn real_ops(trace: &Trace) -> usize {
    trace.real_ops().count()
}

/// The verdict of `judge` as a line for standard error, counted.
pub(crate) fn verdict_text(result: Result<Judged, VerifyError>, tally: &mut Tally) -> String {
    match result {
        Ok(judged) => {
            match judged {
                Judged::Proved => tally.proved += 1,
                Judged::Refuted(_) => tally.refuted += 1,
                Judged::Unknown(_) => tally.unknown += 1,
            }
            judged.text()
        }
        Err(VerifyError::Unsupported { what, .. }) => {
            tally.unsupported += 1;
            format!("not checked: {what} is not supported by the validator yet")
        }
        Err(e) => {
            tally.unknown += 1;
            format!("unknown: {e}")
        }
    }
}

/// One case of a peer set: the input and its optimized form, which
/// `traceopt verify` and `check` read back.
fn write_case(out: &mut String, label: &str, input: &Trace, optimized: &str) {
    writeln!(out, "### {label}").unwrap();
    writeln!(
        out,
        "--- ops\n{}--- expected\n{optimized}",
        print_trace(input)
    )
    .unwrap();
}

/// Rule counts grouped by root op, rules in file order.
fn grouped(counts: &[u64]) -> BTreeMap<&'static str, Vec<(&'static str, u64)>> {
    let mut by_op: BTreeMap<&'static str, Vec<(&'static str, u64)>> = BTreeMap::new();
    for (rule, &n) in RULES.iter().zip(counts) {
        by_op
            .entry(Opcode::name(rule.root))
            .or_default()
            .push((rule.name, n));
    }
    by_op
}

fn write_rule_stats(out: &mut String, counts: &[u64]) {
    writeln!(
        out,
        "rule statistics (times fired; ops where no rule fired are left out):"
    )
    .unwrap();
    for (op, rules) in grouped(counts) {
        let total: u64 = rules.iter().map(|r| r.1).sum();
        if total == 0 {
            continue;
        }
        writeln!(out, "{op} ({total})").unwrap();
        for (name, n) in rules {
            writeln!(out, "    {name:<32} {n}").unwrap();
        }
    }
}

fn rule_stats_json(counts: &[u64]) -> serde_json::Value {
    let map: serde_json::Map<String, serde_json::Value> = grouped(counts)
        .into_iter()
        .map(|(op, rules)| {
            let inner: serde_json::Map<String, serde_json::Value> = rules
                .into_iter()
                .map(|(name, n)| (name.to_string(), n.into()))
                .collect();
            (op.to_string(), inner.into())
        })
        .collect();
    map.into()
}
