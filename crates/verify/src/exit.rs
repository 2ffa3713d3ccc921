//! Bridges that know something on entry. A bridge leaves its parent at
//! a guard, and the optimizer may take for granted what the parent had
//! established of the values the bridge takes (`traceopt_opt::
//! facts_on_exit`). Two proofs make that sound:
//!
//! - `verify_exit_facts`: the facts hold wherever the parent leaves at
//!   the guard. The parent's run up to the guard (`Trace::exit_at`, its
//!   end a jump with what the bridge takes) is compared with itself with
//!   guards for the facts before that jump: guards that only the first
//!   has must always pass.
//! - `verify_assuming`: the bridge and its output run alike from any
//!   inputs that satisfy the facts. Both start with the facts' guards
//!   (the same on both sides), then run as usual.

use traceopt_ir::{Arg, Fact, Op, Opcode, SeenClass, Trace, ValueId};
use traceopt_smt::Solver;

use crate::peel::{copy_ops, identity, inputs_of, mapped, new_trace};
use crate::{verify_optimized, verify_optimized_given, Given, Verdict, VerifyError};

/// Proves that `facts` (one for each argument of `exit`'s final jump)
/// hold whenever the run `exit` gets to its end.
pub fn verify_exit_facts(
    exit: &Trace,
    facts: &[Fact],
    solver: &mut Solver,
) -> Result<Verdict, VerifyError> {
    let jump = match exit.ops.last() {
        Some(op) if op.opcode == Opcode::Jump && op.args.len() == facts.len() => op,
        _ => {
            return Err(VerifyError::Unsupported {
                side: "BEFORE",
                line: 0,
                what: "facts on exit that do not fit the exit's jump".into(),
            })
        }
    };
    let end = exit.ops.len() - 1;
    let mut checked = new_trace(exit, inputs_of(exit));
    let mut map = identity(exit);
    let mut unused = Vec::new();
    copy_ops(&mut checked, exit, 0..end, &mut map, None, &mut unused);
    let args: Vec<Arg> = jump.args.iter().map(|&a| mapped(a, &map)).collect();
    let mut guards = 0;
    for (fact, &arg) in facts.iter().zip(&args) {
        guards += fact.guards(&mut checked, arg);
    }
    let pos = exit.op_pos.get(end).copied().unwrap_or_default();
    checked.push(Op::new(Opcode::Jump, args), "", pos);
    let provenance: Vec<Option<usize>> = (0..end).map(Some).chain([Some(end + guards)]).collect();
    // The guards must be defined where reached (a class test on what
    // is no instance is not), not assumed to be.
    let given = Given {
        checked_tail: guards,
        ..Given::default()
    };
    verify_optimized_given(&checked, exit, &provenance, given, solver)
}

/// `input` and `output` (with `provenance`), each starting with the
/// guards of `assumed` on its inputs; the provenance of the output's
/// ops moved past them, and how many ops they took.
pub(crate) fn assuming(
    input: &Trace,
    output: &Trace,
    provenance: &[Option<usize>],
    assumed: &[Fact],
) -> (Trace, Trace, Vec<Option<usize>>, usize) {
    assuming_in(input, output, provenance, assumed, input)
}

/// `assuming`, the input's copy in the constants and descrs of `pool`
/// (of which the input's are the first, with the same ids).
pub(crate) fn assuming_in(
    input: &Trace,
    output: &Trace,
    provenance: &[Option<usize>],
    assumed: &[Fact],
    pool: &Trace,
) -> (Trace, Trace, Vec<Option<usize>>, usize) {
    // Each trace's copy after the guards, and their provenance (the
    // output's, moved past the guards).
    let with_guards = |trace: &Trace, pool: &Trace, origin: Option<&[Option<usize>]>| {
        let mut guarded = new_trace(pool, inputs_of(trace));
        let mut provenance = Vec::new();
        for (i, fact) in assumed.iter().enumerate().take(trace.inputs.len()) {
            if fact.fits(trace.inputs[i]) {
                let guards = fact.guards(&mut guarded, Arg::Value(ValueId(i as u32)));
                provenance.extend((provenance.len()..).take(guards).map(Some));
            }
        }
        let guards = provenance.len();
        let moved = |p: usize| Some(p + guards);
        let mut map = identity(trace);
        let all = 0..trace.ops.len();
        let origin = origin.map(|o| (o, &moved as &dyn Fn(usize) -> Option<usize>));
        copy_ops(&mut guarded, trace, all, &mut map, origin, &mut provenance);
        (guarded, provenance, guards)
    };
    let (before, _, guards) = with_guards(input, pool, None);
    let (after, provenance, _) = with_guards(output, output, Some(provenance));
    (before, after, provenance, guards)
}

/// Proves `output` equivalent to `input` wherever the inputs satisfy
/// `assumed` (one fact for each input, or none); the optimizer's claims
/// of classes (`seen`, of `input`'s ops) too, from such inputs.
pub fn verify_assuming(
    input: &Trace,
    output: &Trace,
    provenance: &[Option<usize>],
    assumed: &[Fact],
    seen: &[SeenClass],
    solver: &mut Solver,
) -> Result<Verdict, VerifyError> {
    let (before, after, provenance, guards) = assuming(input, output, provenance, assumed);
    let moved: Vec<SeenClass> = (seen.iter())
        .map(|c| SeenClass {
            site: c.site + guards,
            guard: c.guard + guards,
        })
        .collect();
    verify_optimized(&before, &after, &provenance, &moved, solver)
}
