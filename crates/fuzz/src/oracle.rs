//! The oracle: is the optimized trace a correct replacement for its
//! input? Three checks, cheapest first:
//!
//! 1. the optimizer must not panic (a panic is caught and is a finding);
//! 2. differential runs in the reference interpreter, on the example
//!    values and on random values: where the input runs without an
//!    undefined op, the output must end the same way (both fail some
//!    guard, or both finish or jump with equal values);
//! 3. the SMT validator (guard by guard, then end to end where that
//!    settles nothing: `verify_optimized`), with a timeout: a refutation is a
//!    finding, a timeout is counted as undecided (never as proved), a
//!    pair the validator cannot take is counted as such (never as
//!    agreement), and a solver that fails (dies, answers what is not
//!    SMT-LIB, or gives a counterexample the interpreter does not
//!    reproduce) is reported as such, for the campaign to restart it and
//!    count. When the optimizer claims a trace can never run to its end,
//!    the validator checks that claim the same way.

use std::panic::{catch_unwind, AssertUnwindSafe};

use traceopt_interp::{
    ending, run_with_heap, same_ending, same_resume, InterpError, Limits, Outcome, Run,
};
use traceopt_ir::{FailArg, LabelState, Trace, ValueId};
use traceopt_opt::{optimize_or_peel, Output, Passes};
use traceopt_smt::Solver;
use traceopt_verify::{verify_never_ends, verify_optimized, verify_peeled, Verdict, VerifyError};

use crate::env::FuzzEnv;
use crate::sketch::{materialize, ExampleObject};

/// What a check found wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Finding {
    /// The optimizer panicked.
    Crash(String),
    /// The optimizer killed its process (a stack overflow, an abort) or
    /// did not return: what `traceopt fuzz`'s watcher saw of it.
    Died(String),
    /// A concrete input on which the two traces end differently.
    Differential {
        inputs: Vec<i64>,
        before: String,
        after: String,
    },
    /// The validator's counterexample.
    Refuted(String),
    /// The output is not a well-formed trace.
    Malformed(String),
}

impl Finding {
    /// The kind, to tell whether a smaller trace "fails the same way".
    pub fn kind(&self) -> &'static str {
        match self {
            Finding::Crash(_) | Finding::Died(_) => "crash",
            Finding::Malformed(_) => "malformed output",
            // A refutation and a differential failure are the same
            // miscompilation seen two ways.
            Finding::Differential { .. } | Finding::Refuted(_) => "miscompilation",
        }
    }
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Finding::Crash(message) => write!(f, "the optimizer panicked: {message}"),
            Finding::Died(how) => write!(f, "the optimizer {how}"),
            Finding::Differential {
                inputs,
                before,
                after,
            } => write!(
                f,
                "on inputs {inputs:?} the input trace {before}, the optimized one {after}"
            ),
            Finding::Refuted(cex) => write!(f, "the validator refuted the output: {cex}"),
            Finding::Malformed(problem) => write!(f, "{problem}"),
        }
    }
}

/// How a trace got through the oracle without a finding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cleared {
    /// The validator proved the output, or the optimizer's claim that the
    /// trace can never run to its end (`infeasible`).
    Proved { infeasible: bool },
    /// The differential runs agreed (for an `infeasible` claim: the input
    /// failed a guard on every sample); the validator was not asked.
    RunsAgree { infeasible: bool },
    /// The runs agreed; the solver did not decide in time: why.
    Undecided(String),
    /// The runs agreed; the validator cannot take the pair (an op or
    /// input it does not encode): why. Not a proof, not agreement.
    ValidatorError(String),
    /// The runs agreed, but the solver failed: why.
    SolverFailed(String),
}

impl Cleared {
    /// Whether the optimizer claimed the trace never runs to its end.
    pub fn infeasible(&self) -> bool {
        matches!(
            self,
            Cleared::Proved { infeasible: true } | Cleared::RunsAgree { infeasible: true }
        )
    }
}

/// A run of `trace` on `inputs` (ints, and for references indexes into
/// the example `heap`), with the fuzzer's calls (an error: it is
/// undefined there).
pub fn run_on(trace: &Trace, heap: &[ExampleObject], inputs: &[i64]) -> Result<Run, InterpError> {
    run_limited(trace, heap, inputs, 50)
}

/// `run_on`, looping back at most `max_iterations` times.
pub fn run_limited(
    trace: &Trace,
    heap: &[ExampleObject],
    inputs: &[i64],
    max_iterations: u64,
) -> Result<Run, InterpError> {
    let (vals, start) = materialize(&trace.inputs, heap, inputs);
    let shared = start.len();
    let limits = Limits { max_iterations };
    run_with_heap(trace, &vals, start, &mut FuzzEnv::new(shared), limits)
}

/// Runs a loop and its peeled form on `inputs`, the loop one pass
/// more (the preamble is a pass that does not loop back): a finding if
/// they fail guards that stand for the same guard with different resume
/// state, or end differently. Where both are still looping at the
/// limit, their values are compared if the label takes the loop's
/// inputs as they are; objects passed along in pieces are left to the
/// validator.
pub fn differential_peeled(
    before: &Trace,
    after: &Trace,
    provenance: &[Option<usize>],
    state: &LabelState,
    heap: &[ExampleObject],
    inputs: &[i64],
) -> Option<Finding> {
    const PASSES: u64 = 20;
    let expected = run_limited(before, heap, inputs, PASSES + 1).ok()?;
    let got = run_limited(after, heap, inputs, PASSES);
    // Each input the label argument of its place, and nothing more (no
    // constant taken for granted, no repeated value, no derived one).
    let plain = state.inputs.len() == state.facts.len()
        && (state.inputs.iter().enumerate())
            .all(|(k, &x)| x == FailArg::Arg(traceopt_ir::Arg::Value(ValueId(k as u32))));
    if let (Ok(got), false) = (&got, plain) {
        let looping = |r: &Run| matches!(r.outcome, Outcome::IterationLimit { .. });
        if looping(&expected) && looping(got) {
            return None;
        }
    }
    compare(expected, got, provenance, heap.len(), inputs)
}

/// Runs both traces on `inputs`: a finding if they end differently (as
/// `same_ending` compares runs: values, and objects up to renaming), or
/// fail guards that stand for the same guard (`provenance`) with
/// different resume state (`same_resume`: fail values, rebuilt virtuals
/// and the objects from before). Where they fail different guards (an
/// optimizer may fail earlier, at a guard standing for an earlier one),
/// only the validator compares them.
pub fn differential(
    before: &Trace,
    after: &Trace,
    provenance: &[Option<usize>],
    heap: &[ExampleObject],
    inputs: &[i64],
) -> Option<Finding> {
    let expected = run_on(before, heap, inputs).ok()?;
    compare(
        expected,
        run_on(after, heap, inputs),
        provenance,
        heap.len(),
        inputs,
    )
}

/// The runs of two traces compared, as `differential` says.
fn compare(
    expected: Run,
    got: Result<Run, InterpError>,
    provenance: &[Option<usize>],
    shared: usize,
    inputs: &[i64],
) -> Option<Finding> {
    let finding = |after: String| Finding::Differential {
        inputs: inputs.to_vec(),
        before: ending(&expected),
        after,
    };
    let Ok(got) = got else {
        return Some(finding("stops on an undefined op".into()));
    };
    let (why, resumed) = match (&expected.outcome, &got.outcome) {
        (Outcome::GuardFailed { op_index: b, .. }, Outcome::GuardFailed { op_index: a, .. })
            if provenance.get(*a) == Some(&Some(*b)) =>
        {
            (same_resume(&expected, &got, shared).err()?, true)
        }
        _ => (same_ending(&expected, &got, shared).err()?, false),
    };
    Some(if resumed || ending(&expected) == ending(&got) {
        finding(format!("{}, but {why}", ending(&got)))
    } else {
        finding(ending(&got))
    })
}

/// Optimizes, catching a panic.
pub fn optimize_caught(trace: &Trace, passes: Passes) -> Result<Option<Output>, Finding> {
    let result = crate::flight::optimizing(|| {
        catch_unwind(AssertUnwindSafe(|| optimize_or_peel(trace, passes)))
    });
    match result {
        Ok(Ok(optimized)) => Ok(Some(optimized)),
        Ok(Err(_infeasible)) => Ok(None),
        Err(panic) => {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "a panic".into());
            Err(Finding::Crash(message))
        }
    }
}

/// The whole oracle on one trace, whose reference inputs point into
/// `heap`. `samples` are extra input vectors for the differential runs
/// (the example is always tried first).
pub fn check(
    trace: &Trace,
    heap: &[ExampleObject],
    example: &[i64],
    samples: &[Vec<i64>],
    passes: Passes,
    solver: Option<&mut Solver>,
) -> Result<Cleared, Finding> {
    let Some(optimized) = optimize_caught(trace, passes)? else {
        // Claimed infeasible: the input must fail a guard (or be undefined)
        // on every input we try.
        for inputs in std::iter::once(example).chain(samples.iter().map(Vec::as_slice)) {
            match run_on(trace, heap, inputs) {
                Ok(r) if !matches!(r.outcome, Outcome::GuardFailed { .. }) => {
                    return Err(Finding::Differential {
                        inputs: inputs.to_vec(),
                        before: ending(&r),
                        after: "was called infeasible by the optimizer".into(),
                    });
                }
                _ => {}
            }
        }
        return match solver {
            None => Ok(Cleared::RunsAgree { infeasible: true }),
            Some(solver) => validated(verify_never_ends(trace, solver), true),
        };
    };
    let state = match &optimized {
        Output::Peeled(peeled) => Some(&peeled.state),
        Output::Straight(_) => None,
    };
    let optimized = optimized.optimized();
    let after = &optimized.trace;
    if let Some(problem) = traceopt_opt::malformed_output(trace, after) {
        return Err(Finding::Malformed(problem));
    }
    for inputs in std::iter::once(example).chain(samples.iter().map(Vec::as_slice)) {
        let finding = match state {
            None => differential(trace, after, &optimized.provenance, heap, inputs),
            Some(state) => {
                differential_peeled(trace, after, &optimized.provenance, state, heap, inputs)
            }
        };
        if let Some(finding) = finding {
            return Err(finding);
        }
    }
    match (solver, state) {
        (None, _) => Ok(Cleared::RunsAgree { infeasible: false }),
        (Some(solver), None) => validated(
            verify_optimized(
                trace,
                after,
                &optimized.provenance,
                &optimized.seen_classes,
                solver,
            ),
            false,
        ),
        (Some(solver), Some(state)) => validated(
            verify_peeled(trace, after, &optimized.provenance, state, solver),
            false,
        ),
    }
}

/// The validator's answer as the oracle's.
fn validated(result: Result<Verdict, VerifyError>, infeasible: bool) -> Result<Cleared, Finding> {
    match result {
        Ok(Verdict::Proved) => Ok(Cleared::Proved { infeasible }),
        Ok(Verdict::Refuted(cex)) => Err(Finding::Refuted(cex.to_string())),
        Ok(Verdict::Unknown(why)) => Ok(Cleared::Undecided(why)),
        Ok(Verdict::Unreplayed(why)) => Ok(Cleared::SolverFailed(why)),
        Err(VerifyError::Solver(e)) => Ok(Cleared::SolverFailed(e.to_string())),
        Err(e) => Ok(Cleared::ValidatorError(e.to_string())),
    }
}
