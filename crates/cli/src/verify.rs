//! `traceopt verify`: proves an optimized trace equivalent to its input, or
//! prints a counterexample; with a peer set, does so for every case
//! (input against PyPy's expected output) and counts the verdicts.
//!
//! Exit codes: 0 proved (all), 1 refuted (any), 3 unknown (any, none
//! refuted), 2 usage or input error.

use crate::input::{read_input, Failure};
use clap::Args;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;
use traceopt_ir::{Trace, TraceFile};
use traceopt_smt::{Solver, SolverKind};
use traceopt_verify::{verify, Verdict};

#[derive(Args)]
pub struct VerifyArgs {
    /// The input trace, or a peer set (then AFTER is left out).
    before: String,
    /// The optimized trace.
    after: Option<String>,
    /// The solver: z3 (the default) or cvc5.
    #[arg(long, value_parser = ["z3", "cvc5"])]
    solver: Option<String>,
    /// Seconds the solver may spend on one query.
    #[arg(long, default_value_t = 10.0)]
    timeout: f64,
    /// Write every query as a self-contained .smt2 file into DIR.
    #[arg(long, value_name = "DIR")]
    dump_smt: Option<PathBuf>,
}

pub fn run(out: &mut String, args: VerifyArgs) -> Result<(), Failure> {
    if !(args.timeout > 0.0 && args.timeout.is_finite()) {
        return Err(Failure::input(
            "--timeout must be a positive number of seconds",
        ));
    }
    let kind = args.solver.as_deref().and_then(SolverKind::from_name);
    let mut solver = Solver::start(kind, Duration::from_secs_f64(args.timeout))
        .map_err(|e| Failure::input(e.to_string()))?;
    if let Some(dir) = &args.dump_smt {
        solver
            .dump_to(dir)
            .map_err(|e| Failure::input(e.to_string()))?;
    }
    let before = read_input(&args.before)?;
    let pairs: Vec<(String, &Trace, Trace)> = match (&before.parsed, &args.after) {
        (TraceFile::Peer(cases), None) => cases
            .iter()
            .map(|c| (c.name.clone(), &c.ops, c.expected.clone()))
            .collect(),
        (TraceFile::Trace(trace), Some(after)) => {
            let after_input = read_input(after)?;
            let TraceFile::Trace(after_trace) = after_input.parsed else {
                return Err(Failure::input(format!("{after}: expected a single trace")));
            };
            vec![(String::new(), &**trace, *after_trace)]
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
    let (mut proved, mut refuted, mut unknown) = (0, 0, 0);
    let single = pairs.len() == 1 && args.after.is_some();
    for (name, before_trace, after_trace) in &pairs {
        let label = if single {
            String::new()
        } else {
            format!("{name}: ")
        };
        match verify(before_trace, after_trace, &mut solver) {
            Ok(Verdict::Proved) => {
                proved += 1;
                writeln!(out, "{label}proved").unwrap();
            }
            Ok(Verdict::Refuted(cex)) => {
                refuted += 1;
                writeln!(
                    out,
                    "{label}refuted\n  {}",
                    cex.to_string().replace('\n', "\n  ")
                )
                .unwrap();
            }
            Ok(Verdict::Unknown(reason)) => {
                unknown += 1;
                writeln!(out, "{label}unknown: {reason}").unwrap();
            }
            Err(e) if single => return Err(Failure::input(e.to_string())),
            Err(e) => {
                unknown += 1;
                writeln!(out, "{label}unknown: {e}").unwrap();
            }
        }
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
