//! `traceopt synth`: proposes peephole rules the rule set lacks
//! (`traceopt_synth`), each proved by the rule prover, ranked by how
//! often its pattern occurs in our optimized output of the traces given
//! (where it would still fire), then in the traces themselves (a log's
//! recorded traces).
//!
//! Standard output holds the rules in the rule language, each after a
//! comment with its count, so that it can be pasted into `rules/`; the
//! summary goes to standard error (`--json` puts everything on standard
//! output). Exit codes: 0 done, 2 usage or input error.

use crate::input::{read_inputs, Failure};
use crate::opt::optimize_inputs;
use crate::seconds::positive_seconds;
use clap::Args;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::time::Duration;
use traceopt_ir::log::Section;
use traceopt_ir::{Opcode, Trace, TraceFile};
use traceopt_opt::{Passes, RULES};
use traceopt_smt::SolverKind;
use traceopt_synth::{occurrences, synthesize, Options};

#[derive(Args)]
pub struct SynthArgs {
    /// Traces whose ops rank the rules found (a log's recorded traces,
    /// test-format traces, a peer set's inputs, or directories of them);
    /// none: the rules are listed in the order found.
    files: Vec<String>,
    /// Rules to count as not in the rule set (comma-separated names, as
    /// `traceopt rules list` shows them): synthesis may find them again.
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    remove: Vec<String>,
    /// Only patterns whose root is one of these ops (comma-separated, as
    /// `int_add,int_and`).
    #[arg(long, value_delimiter = ',', value_name = "OPS")]
    ops: Vec<String>,
    /// The solver that proves the rules: z3 (the default) or cvc5.
    #[arg(long, value_parser = ["z3", "cvc5"])]
    solver: Option<String>,
    /// Seconds the solver may spend on one rule.
    #[arg(long, value_name = "SECS", default_value = "10", value_parser = positive_seconds, allow_negative_numbers = true)]
    timeout: Duration,
    /// Print JSON instead of rules.
    #[arg(long)]
    json: bool,
}

/// The traces the optimizer would take of the files: recorded ones.
fn input_traces(inputs: &[crate::input::Input]) -> Vec<&Trace> {
    let mut traces = Vec::new();
    for input in inputs {
        match &input.parsed {
            TraceFile::Trace(trace) => traces.push(&**trace),
            TraceFile::Peer(cases) => traces.extend(cases.iter().map(|c| &c.ops)),
            TraceFile::Log(log) => traces.extend(
                (log.traces())
                    .filter(|t| t.section == Section::Recorded)
                    .map(|t| &t.trace),
            ),
        }
    }
    traces
}

pub fn run(out: &mut String, args: SynthArgs) -> Result<(), Failure> {
    let mut removed = vec![false; RULES.len()];
    for name in &args.remove {
        let index = RULES.iter().position(|r| r.name == name).ok_or_else(|| {
            Failure::input(format!(
                "--remove: no rule is named '{name}' (`traceopt rules list` names them)"
            ))
        })?;
        removed[index] = true;
    }
    let roots = (args.ops.iter())
        .map(|name| {
            Opcode::from_name(name)
                .ok_or_else(|| Failure::input(format!("--ops: '{name}' is no op")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let inputs = read_inputs(&args.files)?;
    let traces = input_traces(&inputs);
    let passes = Passes {
        peel: true,
        ..Passes::default()
    };
    let (optimized, _) = optimize_inputs(&inputs, passes, &HashMap::new());
    let ours: Vec<&Trace> = (optimized.iter())
        .filter_map(|(_, result, _)| result.as_ref().ok().map(|(o, _)| &o.trace))
        .collect();
    let kind = args.solver.as_deref().and_then(SolverKind::from_name);
    let options = Options { roots, removed };
    let (found, summary) =
        synthesize(&options, kind, args.timeout).map_err(|e| Failure::input(e.to_string()))?;
    let mut ranked: Vec<((usize, usize), &traceopt_synth::Found)> = (found.iter())
        .map(|f| ((occurrences(f, &ours), occurrences(f, &traces)), f))
        .collect();
    // The most frequent first; ties in the order found.
    ranked.sort_by_key(|(count, _)| std::cmp::Reverse(*count));
    let line = format!(
        "{} pattern(s), {} candidate(s) agreeing on the samples: {} covered by the optimizer, \
         {} refuted and {} undecided by the prover, {} whose check never holds, {} rule(s) \
         proved and proposed",
        summary.patterns,
        summary.candidates,
        summary.covered,
        summary.refuted,
        summary.unknown,
        summary.unchecked,
        found.len()
    );
    if args.json {
        let rules: Vec<serde_json::Value> = (ranked.iter())
            .map(|((ours, given), f)| {
                serde_json::json!({
                    "pattern": f.pattern.text(), "target": f.target.text(),
                    "check": f.condition.map(|c| c.text),
                    "C": f.target.fun().map(|c| c.text), "in_ours": ours,
                    "in_given": given, "rule": f.text,
                })
            })
            .collect();
        let doc = serde_json::json!({
            "patterns": summary.patterns, "candidates": summary.candidates,
            "covered": summary.covered, "refuted": summary.refuted,
            "unknown": summary.unknown, "unchecked": summary.unchecked,
            "traces": traces.len(), "rules": rules,
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    } else {
        for ((ours, given), f) in &ranked {
            writeln!(
                out,
                "# occurs {ours} time(s) in our output of the traces given, {given} in them\n{}",
                f.text
            )
            .unwrap();
        }
        eprintln!("{line}");
    }
    Ok(())
}
