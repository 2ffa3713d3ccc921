//! `traceopt verify`: proves an optimized trace equivalent to its input, or
//! prints a counterexample; with a peer set, does so for every case
//! (input against its expected output) and counts the verdicts. Both
//! traces must pass the checker first.
//!
//! Also the pieces `opt --verify`, `fuzz` and `rules` share: one way to
//! judge a pair (`judge`), and the parsers of seconds on the command line.
//!
//! Exit codes: 0 proved (all), 1 refuted (any), 3 unknown (any, none
//! refuted; a solver that fails is unknown too), 2 usage or input error.

use crate::input::{read_input, Failure};
use crate::seconds::positive_seconds;
use clap::Args;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;
use traceopt_ir::{check, CheckOptions, Header, Log, LogTrace, PureResult, Trace, TraceFile};
use traceopt_smt::{Solver, SolverKind};
use traceopt_verify::{
    verify_bridge, verify_given, BridgeVerdict, Given, Scope, Verdict, VerifyError,
};

#[derive(Args)]
pub struct VerifyArgs {
    /// The input trace, or a peer set (then AFTER is left out).
    before: String,
    /// The optimized trace.
    after: Option<String>,
    /// The solver: z3 (the default) or cvc5.
    #[arg(long, value_parser = ["z3", "cvc5"])]
    solver: Option<String>,
    /// Seconds the solver may spend on one query (more than 0, at most
    /// 1000000).
    #[arg(long, value_name = "SECS", default_value = "10", value_parser = positive_seconds,
          allow_negative_numbers = true)]
    timeout: Duration,
    /// Write every query as a self-contained .smt2 file into DIR.
    #[arg(long, value_name = "DIR")]
    dump_smt: Option<PathBuf>,
}

/// Every bridge of a log: PyPy's optimized bridge against the recorded
/// one, each in the context of its parent guard and its target loop
/// (`traceopt_verify::verify_bridge`).
fn run_bridges(
    out: &mut String,
    file: &str,
    log: &Log,
    solver: &mut Solver,
) -> Result<(), Failure> {
    let optimized: Vec<&LogTrace> = log
        .pairs
        .iter()
        .filter_map(|p| p.optimized.as_ref())
        .collect();
    let (mut proved, mut first_pass, mut differ, mut unknown) = (0, 0, 0, 0);
    for pair in &log.pairs {
        let (Some(recorded), Some(bridge)) = (&pair.recorded, &pair.optimized) else {
            continue;
        };
        let Some(Header::Bridge { guard, .. }) = bridge.header else {
            continue;
        };
        let result = verify_bridge(&recorded.trace, &bridge.trace, guard, &optimized, solver);
        let text = match result {
            Ok(BridgeVerdict::Proved(Scope::Whole)) => {
                proved += 1;
                "proved".into()
            }
            Ok(BridgeVerdict::Proved(Scope::FirstPass)) => {
                first_pass += 1;
                "proved on the first pass through the loop's body only (later iterations need the loop's invariant)".into()
            }
            Ok(BridgeVerdict::Differs(cex)) => {
                differ += 1;
                format!(
                    "differs in context (not shown to be PyPy's fault: the context leaves out what PyPy knew from earlier iterations and its caches)\n  {}",
                    cex.to_string().replace('\n', "\n  ")
                )
            }
            Ok(BridgeVerdict::Unknown(why)) => {
                unknown += 1;
                format!("unknown: {why}")
            }
            Err(e) => {
                unknown += 1;
                format!("unknown: {e}")
            }
        };
        writeln!(
            out,
            "{file}:{} bridge out of guard 0x{guard:x}: {text}",
            bridge.line
        )
        .unwrap();
    }
    writeln!(
        out,
        "{} bridges: {proved} proved, {first_pass} proved on the first pass only, {differ} differ in context, {unknown} unknown",
        proved + first_pass + differ + unknown
    )
    .unwrap();
    // Nothing here refutes PyPy: 0 when all are proved, else 3.
    match unknown + first_pass + differ {
        0 => Ok(()),
        _ => Err(Failure::silent(3)),
    }
}

/// A pair to verify, and what its harness says pure calls return.
struct Pair<'t> {
    name: String,
    /// PyPy's expected output is the loop after peeling: it may rest on
    /// what the peeled first iteration established.
    unrolled: bool,
    before: &'t Trace,
    after: &'t Trace,
    pure_results: &'t [PureResult],
}

/// How a pair came out.
pub enum Judged {
    Proved,
    /// The counterexample, replayed: the runs differ.
    Refuted(String),
    /// Not decided: a timeout, a solver that failed, or a counterexample
    /// that did not replay. Never a claim either way.
    Unknown(String),
}

impl Judged {
    /// `proved`, `refuted` and the counterexample on indented lines, or
    /// `unknown: reason`.
    pub fn text(&self) -> String {
        match self {
            Judged::Proved => "proved".into(),
            Judged::Refuted(cex) => format!("refuted\n  {}", cex.replace('\n', "\n  ")),
            Judged::Unknown(reason) => format!("unknown: {reason}"),
        }
    }
}

/// Proves an optimizer's output (`result`, from `before`) with `prove`,
/// given both traces and the output's provenance, after checking that it
/// is well formed (as `traceopt check` takes a trace).
pub fn judge_output(
    before: &Trace,
    result: &traceopt_opt::Optimized,
    prove: impl FnOnce(&Trace, &Trace, &[Option<usize>]) -> Result<Verdict, VerifyError>,
) -> Result<Judged, VerifyError> {
    if let Some(problem) = traceopt_opt::malformed_output(before, &result.trace) {
        return Ok(Judged::Refuted(problem));
    }
    judged(prove(before, &result.trace, &result.provenance))
}

/// Proves that `facts` hold where the run `exit` (a bridge's parent, up
/// to the guard the bridge leaves) gets to its end.
pub fn judge_exit_facts(
    exit: &Trace,
    facts: &[traceopt_ir::Fact],
    solver: &mut Solver,
) -> Result<Judged, VerifyError> {
    let verdict = traceopt_verify::verify_exit_facts(exit, facts, solver);
    Ok(match judged(verdict)? {
        Judged::Proved => Judged::Proved,
        Judged::Refuted(why) => Judged::Refuted(format!("the facts on entry: {why}")),
        Judged::Unknown(why) => Judged::Unknown(format!("the facts on entry: {why}")),
    })
}

/// A validator result as a verdict: a solver that fails or a
/// counterexample that does not replay is unknown, never a claim.
pub fn judged(result: Result<Verdict, VerifyError>) -> Result<Judged, VerifyError> {
    Ok(match result {
        Ok(Verdict::Proved) => Judged::Proved,
        Ok(Verdict::Refuted(cex)) => Judged::Refuted(cex.to_string()),
        Ok(Verdict::Unknown(reason) | Verdict::Unreplayed(reason)) => Judged::Unknown(reason),
        Err(VerifyError::Solver(e)) => Judged::Unknown(e.to_string()),
        Err(e) => return Err(e),
    })
}

pub fn run(out: &mut String, args: VerifyArgs) -> Result<(), Failure> {
    let kind = args.solver.as_deref().and_then(SolverKind::from_name);
    let mut solver =
        Solver::start(kind, args.timeout).map_err(|e| Failure::input(e.to_string()))?;
    if let Some(dir) = &args.dump_smt {
        solver
            .dump_to(dir)
            .map_err(|e| Failure::input(e.to_string()))?;
    }
    let before = read_input(&args.before)?;
    if let (TraceFile::Log(log), None) = (&before.parsed, &args.after) {
        return run_bridges(out, &before.file, log, &mut solver);
    }
    let after_input = args.after.as_deref().map(read_input).transpose()?;
    let pairs: Vec<Pair> = match (&before.parsed, &after_input) {
        (TraceFile::Peer(cases), None) => cases
            .iter()
            .map(|c| Pair {
                name: c.name.clone(),
                unrolled: c.unrolled(),
                before: &c.ops,
                after: &c.expected,
                pure_results: &c.pure_results,
            })
            .collect(),
        (TraceFile::Trace(trace), Some(after)) => {
            let TraceFile::Trace(after_trace) = &after.parsed else {
                return Err(Failure::input(format!(
                    "{}: expected a single trace",
                    after.file
                )));
            };
            vec![Pair {
                name: String::new(),
                unrolled: false,
                before: trace,
                after: after_trace,
                pure_results: &[],
            }]
        }
        (TraceFile::Peer(_), Some(_)) => {
            return Err(Failure::input(
                "a peer set holds its own expected traces: give no AFTER",
            ))
        }
        _ => {
            return Err(Failure::input(format!(
                "{}: expected a single trace and AFTER, or a peer set alone",
                args.before
            )))
        }
    };
    // The validator takes well-formed traces only (peer-set cases may stop
    // before the end).
    let options = CheckOptions {
        require_fail_args: false,
        partial: after_input.is_none(),
    };
    let after_file = after_input.as_ref().unwrap_or(&before).file.as_str();
    let mut malformed = 0;
    for pair in &pairs {
        let errors: Vec<_> = check(pair.before, &before.file, options)
            .into_iter()
            .chain(check(pair.after, after_file, options))
            .collect();
        malformed += usize::from(!errors.is_empty());
        for error in errors {
            eprintln!("{error}");
        }
    }
    if malformed > 0 {
        return Err(Failure::input(format!(
            "{malformed} pair(s) not verified: they do not pass the checker (see above; \
             `traceopt check` shows the same)"
        )));
    }
    let (mut proved, mut refuted, mut unknown) = (0, 0, 0);
    let single = after_input.is_some();
    for pair in &pairs {
        let given = Given {
            pure_results: pair.pure_results,
            ..Given::default()
        };
        let verdict = verify_given(pair.before, pair.after, given, &mut solver);
        let judged = match judged(verdict) {
            Ok(Judged::Refuted(cex)) if pair.unrolled => Judged::Unknown(format!(
                "not comparable without loop peeling: PyPy's expected output is the loop after its peeled first iteration, and may rest on what that iteration established; as straight-line traces they differ ({})",
                cex.lines().last().unwrap_or_default().trim()
            )),
            Ok(judged) => judged,
            Err(e) if single => return Err(Failure::input(e.to_string())),
            Err(e) => Judged::Unknown(e.to_string()),
        };
        match judged {
            Judged::Proved => proved += 1,
            Judged::Refuted(_) => refuted += 1,
            Judged::Unknown(_) => unknown += 1,
        }
        let label = if single {
            String::new()
        } else {
            format!("{}: ", pair.name)
        };
        writeln!(out, "{label}{}", judged.text()).unwrap();
    }
    if !single {
        writeln!(
            out,
            "{} pairs: {proved} proved, {refuted} refuted, {unknown} unknown",
            pairs.len()
        )
        .unwrap();
    }
    match (refuted, unknown) {
        (0, 0) => Ok(()),
        (0, _) => Err(Failure::silent(3)),
        _ => Err(Failure::silent(1)),
    }
}
