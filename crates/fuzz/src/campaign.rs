//! A fuzzing campaign: generate traces from consecutive seeds, run each
//! through the oracle, shrink what fails, on `jobs` threads (one solver
//! process each), until a count or a time is reached.
//!
//! The differential runs check every trace; the solver checks traces as
//! long as it has taken no more than its share of each worker's time
//! (`Options::solver_share`), the others being checked by the runs only.
//! A trace takes the runs well under a millisecond and the solver tens
//! of milliseconds, so proving every trace would hold the runs to the
//! solver's pace, while most bugs show in the runs first; the share
//! keeps the solver busy on as many traces as it can take and lets the
//! runs see many more. A share of 1 proves every trace.
//!
//! A solver that fails on a trace (it dies, answers what is not SMT-LIB,
//! or gives a counterexample the interpreter does not reproduce) is
//! counted and replaced by a new process; the trace counts as checked by
//! the runs only. A solver that cannot be started, or fails
//! `SOLVER_FAILURES_IN_A_ROW` times in a row, stops the campaign with
//! `Summary::solver_error`. So does a campaign with the solver on in
//! which the solver decided nothing (no trace proved, none refuted): its
//! verdicts would all rest on the runs.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use traceopt_ir::OpCounts;
use traceopt_opt::Passes;
use traceopt_smt::{Solver, SolverKind};

use crate::flight;
use crate::gen::{generate, Config};
use crate::mutate::mutate;
use crate::oracle::{check, Cleared, Finding};
use crate::shrink::shrink;
use crate::sketch::Sketch;

#[derive(Clone, Debug)]
pub struct Options {
    pub seed: u64,
    /// Stop after this many traces.
    pub count: Option<u64>,
    /// Stop after this long.
    pub time: Option<Duration>,
    pub jobs: usize,
    pub config: Config,
    pub passes: Passes,
    /// Solver timeout per query; `None`: differential runs only.
    pub solver_timeout: Option<Duration>,
    /// Solver time per trace, all its queries together (`None`: no
    /// limit); what is left undecided then counts as undecided. Shrinking
    /// a finding has no limit.
    pub solver_budget: Option<Duration>,
    /// The part of each worker's time the solver may take, from 0 to 1
    /// (1: every trace is given to it); past it, traces are checked by
    /// the runs only until the solver is back within its share.
    pub solver_share: f64,
    /// The solver (`None`: z3, or cvc5 if z3 is missing).
    pub solver: Option<SolverKind>,
    /// Random input vectors per trace for the differential runs.
    pub samples: usize,
    /// Stop at the first finding.
    pub stop_at_first: bool,
    /// Traces to mutate instead of generating new ones (`--mutate`).
    pub bases: Vec<Sketch>,
}

/// From seed 0, one job, every pass, z3 (or cvc5) at 30 ms a query and
/// 120 ms a trace, for half of the time, 8 samples: the defaults of
/// `traceopt fuzz`, but with no end (set `count` or `time`).
impl Default for Options {
    fn default() -> Options {
        Options {
            seed: 0,
            count: None,
            time: None,
            jobs: 1,
            config: Config::default(),
            passes: Passes::default(),
            solver_timeout: Some(Duration::from_millis(30)),
            solver_budget: Some(Duration::from_millis(120)),
            solver_share: 0.5,
            solver: None,
            samples: 8,
            stop_at_first: false,
            bases: Vec::new(),
        }
    }
}

/// A failing trace, shrunk.
#[derive(Clone, Debug)]
pub struct Report {
    pub seed: u64,
    pub finding: Finding,
    pub original: Sketch,
    pub reproducer: Sketch,
}

/// Counters, shared by the workers and read by the progress display.
/// Every trace is counted in exactly one of `proved`, `runs_only`,
/// `undecided`, `validator_errors`, `solver_failures` and `findings`.
#[derive(Default)]
pub struct Counters {
    pub generated: AtomicU64,
    /// Proved by the validator (an output, or a claim that the trace
    /// never runs to its end).
    pub proved: AtomicU64,
    /// Differential runs agreed; the solver was off, or past its share.
    pub runs_only: AtomicU64,
    /// Differential runs agreed; the solver did not decide in time.
    pub undecided: AtomicU64,
    /// Differential runs agreed; the validator could not take the pair.
    pub validator_errors: AtomicU64,
    /// Traces the optimizer called infeasible (counted in the above too).
    pub infeasible: AtomicU64,
    pub findings: AtomicU64,
    /// Differential runs agreed; the solver failed on the trace.
    pub solver_failures: AtomicU64,
    /// For each rule of `traceopt_opt::RULES`, the traces it fired on
    /// (what the campaign reached of the rules).
    pub rules_fired: Mutex<Vec<u64>>,
    /// The Figure 7 counts of the traces that passed, before and after.
    pub counts: Mutex<(OpCounts, OpCounts)>,
}

/// A campaign whose solver was given this many traces (or all of them,
/// if fewer) and decided none fails as a check.
const SOLVER_TRIES: u64 = 10;

/// A worker whose solver fails this many traces in a row stops the
/// campaign.
pub const SOLVER_FAILURES_IN_A_ROW: u32 = 3;

#[derive(Clone, Debug, Default)]
pub struct Summary {
    pub generated: u64,
    pub proved: u64,
    pub runs_only: u64,
    pub undecided: u64,
    pub validator_errors: u64,
    /// The first validator error, with its seed.
    pub first_validator_error: Option<String>,
    pub infeasible: u64,
    pub reports: Vec<Report>,
    pub seconds: f64,
    /// Traces on which the solver failed (checked by the runs only).
    pub solver_failures: u64,
    /// The first such failure, with its seed.
    pub first_solver_failure: Option<String>,
    /// Why the campaign failed as a check: the solver could not be
    /// started, kept failing, or decided nothing. The solver checks it
    /// asked for did not all happen.
    pub solver_error: Option<String>,
    /// For each rule of `traceopt_opt::RULES`, the traces it fired on.
    pub rules_fired: Vec<u64>,
    /// The Figure 7 counts (ops, allocations, heap reads and writes,
    /// guards) of the traces that passed, before and after: what the
    /// passes did to them.
    pub before: OpCounts,
    pub after: OpCounts,
}

impl Summary {
    /// Traces the solver decided: proved, or refuted (a finding).
    pub fn decided(&self) -> u64 {
        let refuted = self
            .reports
            .iter()
            .filter(|r| matches!(r.finding, Finding::Refuted(_)))
            .count();
        self.proved + refuted as u64
    }
    /// How many rules fired on at least one trace.
    pub fn rules_reached(&self) -> usize {
        self.rules_fired.iter().filter(|&&n| n > 0).count()
    }
}

/// Input vectors for the differential runs, from the trace's seed: ints
/// near the example's and at the ends; references moved to other objects
/// of the example heap of the same kind (making and breaking aliasing),
/// now and then null.
pub fn samples(seed: u64, sketch: &Sketch, count: usize) -> Vec<Vec<i64>> {
    let mut rng = StdRng::seed_from_u64(seed ^ SAMPLE_SALT);
    let example = sketch.example();
    let same_kind = |object: i64| -> Vec<i64> {
        let kind = |i: i64| {
            let object = usize::try_from(i).ok().and_then(|i| sketch.heap.get(i));
            object.map(|o| o.kind())
        };
        (0..sketch.heap.len() as i64)
            .filter(|&o| kind(o) == kind(object))
            .collect()
    };
    (0..count)
        .map(|_| {
            (sketch.inputs.iter().zip(&example))
                .map(|((name, _), &v)| match name.starts_with('p') {
                    true => match rng.random_range(0..10) {
                        0 => -1,
                        1..=4 => v,
                        _ => match same_kind(v).as_slice() {
                            [] => v,
                            choices => choices[rng.random_range(0..choices.len())],
                        },
                    },
                    false => match rng.random_range(0..5) {
                        0 => v.wrapping_add(rng.random_range(-3..4)),
                        1 => [0, 1, -1, i64::MIN, i64::MAX][rng.random_range(0..5)],
                        // Near the ends, where sums and differences wrap.
                        2 => [i64::MIN, i64::MAX][rng.random_range(0..2)]
                            .wrapping_add(rng.random_range(-20..20)),
                        3 => rng.random_range(-300..300),
                        _ => rng.random::<i64>(),
                    },
                })
                .collect()
        })
        .collect()
}

/// Mixed into a trace's seed for its samples, so that they do not
/// repeat the generator's choices.
const SAMPLE_SALT: u64 = 0x005e_ed5a_31e5;

fn check_ok(trace: &traceopt_ir::Trace) -> bool {
    traceopt_ir::check(trace, "mutant", traceopt_ir::CheckOptions::default()).is_empty()
}

/// What the optimizer did to one trace that passed the oracle: how
/// often each rule fired, and the Figure 7 counts before and after.
#[derive(Clone, Debug, Default)]
pub struct Done {
    pub fired: Vec<u32>,
    pub before: OpCounts,
    pub after: OpCounts,
}

/// The trace a seed gives in a campaign with these options: generated,
/// or a mutant of one of the bases.
pub fn sketch_for(seed: u64, options: &Options) -> Sketch {
    if options.bases.is_empty() {
        return generate(seed, &options.config);
    }
    let base = &options.bases[(seed % options.bases.len() as u64) as usize];
    let mutant = mutate(base, seed);
    if mutant.trace().is_ok_and(|t| check_ok(&t)) {
        mutant
    } else {
        base.clone()
    }
}

/// Checks one generated (or mutated) trace; `Err` with its report if it
/// fails. With the verdict, what the optimizer did to it.
pub fn check_seed(
    seed: u64,
    options: &Options,
    solver: Option<&mut Solver>,
) -> Result<(Cleared, Done), Box<Report>> {
    let sketch = sketch_for(seed, options);
    let trace = sketch.trace().expect("generated and mutated traces parse");
    let example = sketch.example();
    let extra = samples(seed, &sketch, options.samples);
    match check(
        &trace,
        &sketch.heap,
        &example,
        &extra,
        options.passes,
        solver,
    ) {
        Ok(cleared) => {
            // Optimized again for the counts (the oracle keeps its result
            // to itself; a trace's optimization takes microseconds). A
            // trace called infeasible leaves nothing.
            let before = OpCounts::of(&trace);
            let optimized = traceopt_opt::optimize_or_peel(&trace, options.passes);
            let done = match optimized.as_ref().map(traceopt_opt::Output::optimized) {
                Ok(o) => Done {
                    after: OpCounts::of(&o.trace),
                    fired: o.rule_counts.clone(),
                    before,
                },
                Err(_) => Done {
                    before,
                    ..Done::default()
                },
            };
            Ok((cleared, done))
        }
        Err(finding) => Err(Box::new(Report {
            seed,
            finding,
            original: sketch.clone(),
            reproducer: sketch,
        })),
    }
}

/// Shrinks a report's trace while it fails the same way (differential
/// runs and the solver, as in the campaign).
pub fn minimize(report: &mut Report, options: &Options, mut solver: Option<&mut Solver>) {
    let kind = report.finding.kind();
    let seed = report.seed;
    let mut last = report.finding.clone();
    let reproducer = shrink(&report.original, 2000, |candidate| {
        let Ok(trace) = candidate.trace() else {
            return false;
        };
        let example = candidate.example();
        let extra = samples(seed, candidate, options.samples);
        match check(
            &trace,
            &candidate.heap,
            &example,
            &extra,
            options.passes,
            solver.as_deref_mut(),
        ) {
            Err(finding) if finding.kind() == kind => {
                last = finding;
                true
            }
            _ => false,
        }
    });
    report.reproducer = reproducer;
    report.finding = last;
}

/// Adds one trace's rule firings to the campaign's.
fn count_rules(total: &Mutex<Vec<u64>>, fired: &[u32]) {
    let mut total = total.lock().unwrap();
    if total.len() < fired.len() {
        total.resize(fired.len(), 0);
    }
    for (t, &f) in total.iter_mut().zip(fired) {
        *t += u64::from(f > 0);
    }
}

/// Runs a campaign; `counters` can be watched from another thread.
pub fn run(options: &Options, counters: &Counters) -> Summary {
    let started = Instant::now();
    let next = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let reports = Mutex::new(Vec::new());
    let first_failure = Mutex::new(None);
    let first_validator_error = Mutex::new(None);
    let solver_error = Mutex::new(None);
    let give_up = |why: String| {
        solver_error.lock().unwrap().get_or_insert(why);
        stop.store(true, Ordering::Relaxed);
    };
    let start_solver = || match options.solver_timeout {
        None => Ok(None),
        // Queries are many and small: a second solver's process start
        // would cost more than it decides.
        Some(t) => Solver::start(options.solver, t).map(|mut solver| {
            solver.set_second_opinions(false);
            solver.set_fresh_after_work(false);
            Some(solver)
        }),
    };
    std::thread::scope(|scope| {
        for worker in 0..options.jobs.max(1) {
            let (next, stop, reports) = (&next, &stop, &reports);
            let (first_failure, first_validator_error) = (&first_failure, &first_validator_error);
            let (give_up, start_solver) = (&give_up, &start_solver);
            scope.spawn(move || {
                flight::set_worker(worker);
                let mut solver = match start_solver() {
                    Ok(solver) => solver,
                    Err(e) => return give_up(e.to_string()),
                };
                let mut in_a_row = 0;
                let worker_started = Instant::now();
                let mut solver_time = Duration::ZERO;
                let share = options.solver_share.clamp(0.0, 1.0);
                loop {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    if options.time.is_some_and(|t| started.elapsed() >= t) {
                        break;
                    }
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    if options.count.is_some_and(|c| index >= c) {
                        break;
                    }
                    let seed = options.seed.wrapping_add(index);
                    counters.generated.fetch_add(1, Ordering::Relaxed);
                    if let Some(solver) = solver.as_mut() {
                        solver.set_budget(options.solver_budget);
                    }
                    let within =
                        share >= 1.0 || solver_time < worker_started.elapsed().mul_f64(share);
                    let solver_now = solver.as_mut().filter(|_| within);
                    let timed = solver_now.is_some().then(Instant::now);
                    flight::note(seed, flight::State::Checking);
                    let checked = check_seed(seed, options, solver_now);
                    solver_time += timed.map_or(Duration::ZERO, |t| t.elapsed());
                    let cleared = match checked {
                        Ok((cleared, done)) => {
                            count_rules(&counters.rules_fired, &done.fired);
                            let mut counts = counters.counts.lock().unwrap();
                            counts.0 += done.before;
                            counts.1 += done.after;
                            cleared
                        }
                        Err(mut report) => {
                            counters.findings.fetch_add(1, Ordering::Relaxed);
                            if let Some(solver) = solver.as_mut() {
                                solver.set_budget(None);
                            }
                            flight::note(seed, flight::State::Shrinking);
                            minimize(&mut report, options, solver.as_mut());
                            reports.lock().unwrap().push(*report);
                            if options.stop_at_first {
                                stop.store(true, Ordering::Relaxed);
                            }
                            continue;
                        }
                    };
                    if cleared.infeasible() {
                        counters.infeasible.fetch_add(1, Ordering::Relaxed);
                    }
                    let counter = match &cleared {
                        Cleared::Proved { .. } => &counters.proved,
                        Cleared::RunsAgree { .. } => &counters.runs_only,
                        Cleared::Undecided(_) => &counters.undecided,
                        Cleared::ValidatorError(why) => {
                            first_validator_error
                                .lock()
                                .unwrap()
                                .get_or_insert(format!("seed {seed}: {why}"));
                            &counters.validator_errors
                        }
                        Cleared::SolverFailed(_) => &counters.solver_failures,
                    };
                    counter.fetch_add(1, Ordering::Relaxed);
                    let Cleared::SolverFailed(why) = cleared else {
                        // A trace the solver was not given says nothing
                        // of it.
                        if within {
                            in_a_row = 0;
                        }
                        continue;
                    };
                    let why = format!("seed {seed}: {why}");
                    first_failure.lock().unwrap().get_or_insert(why.clone());
                    in_a_row += 1;
                    if in_a_row >= SOLVER_FAILURES_IN_A_ROW {
                        give_up(format!(
                            "the solver failed on {in_a_row} traces in a row (the last, {why})"
                        ));
                        break;
                    }
                    solver = match start_solver() {
                        Ok(solver) => solver,
                        Err(e) => return give_up(e.to_string()),
                    };
                }
                flight::note(0, flight::State::Idle);
            });
        }
    });
    let mut reports = reports.into_inner().unwrap();
    reports.sort_by_key(|r| r.seed);
    let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
    let counts = *counters.counts.lock().unwrap();
    let mut summary = Summary {
        generated: load(&counters.generated),
        proved: load(&counters.proved),
        runs_only: load(&counters.runs_only),
        undecided: load(&counters.undecided),
        validator_errors: load(&counters.validator_errors),
        first_validator_error: first_validator_error.into_inner().unwrap(),
        infeasible: load(&counters.infeasible),
        reports,
        seconds: started.elapsed().as_secs_f64(),
        solver_failures: load(&counters.solver_failures),
        first_solver_failure: first_failure.into_inner().unwrap(),
        solver_error: solver_error.into_inner().unwrap(),
        rules_fired: counters.rules_fired.lock().unwrap().clone(),
        before: counts.0,
        after: counts.1,
    };
    let solver_on = options.solver_timeout.is_some();
    // The traces the solver was given, where it decided none: enough of
    // them (a share of a short campaign may be a few undecided ones), or
    // any it failed on (it may never have worked).
    let given = summary.undecided + summary.validator_errors + summary.solver_failures;
    let enough = given >= summary.generated.min(SOLVER_TRIES) || summary.solver_failures > 0;
    let nothing_decided = enough && summary.decided() == 0;
    if solver_on && summary.solver_error.is_none() && summary.reports.is_empty() && nothing_decided
    {
        let first = (summary.first_solver_failure.as_ref())
            .map_or(String::new(), |why| format!("; the first failure, {why}"));
        summary.solver_error = Some(format!(
            "the solver decided none of the {given} traces it was given ({} undecided in time, \
             {} beyond the validator, {} solver failures{first})",
            summary.undecided, summary.validator_errors, summary.solver_failures
        ));
    }
    summary
}
