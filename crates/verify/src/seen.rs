//! An optimizer's claims that a recorded class guard tests what one of
//! the trace's unnamed allocations made (`SeenClass`), proved before the
//! class is taken for granted.
//!
//! A log does not say which class `new_with_vtable(descr=<SizeDescr
//! 32>)` makes; where a recorded guard tests the object straight after
//! the op, `Trace::recorded_classes` reads the class off the text. Where
//! the guard's argument is the object only through the heap (a frame's
//! stack item read back), the optimizer sees it and claims it. Each claim
//! is the question whether BEFORE, cut off at the guard and ended by a
//! test that its argument is *not* the object, can never run to its end
//! (`verify_never_ends`). Proved, it held on the recording too, whose run
//! passed the guard: the op's class, the same for every object it makes,
//! is the guard's, a lemma of every comparison of that BEFORE
//! (`Given::seen_classes`).
//!
//! The proof assumes no claim (only what the text shows): a claim
//! proved from another would be circular. A model that lets no run reach
//! the guard would prove any claim; the CLI's check that a recorded trace
//! can run to its end (`traceopt opt --verify`) rules that out.

use traceopt_ir::{Arg, Const, Flags, Op, Opcode, Pos, SeenClass, Trace};
use traceopt_smt::Solver;

use crate::peel::{identity, inputs_of, mapped, new_trace};
use crate::{may_stand_as_guard, verify_never_ends, Verdict, VerifyError};

/// The class each claim gives its allocation (op index of `before`, the
/// class), all proved; or the verdict of the first that is not.
pub(crate) fn prove_seen_classes(
    before: &Trace,
    seen: &[SeenClass],
    solver: &mut Solver,
) -> Result<Result<Vec<(usize, Const)>, Verdict>, VerifyError> {
    let mut proved = Vec::new();
    for claim in seen {
        let Some(class) = claim.class(before) else {
            return Err(VerifyError::Unsupported {
                side: "AFTER",
                line: line(before, claim.guard.min(claim.site)),
                what: format!(
                    "a claim that op {} tests the class of what op {} makes, which does not fit \
                     BEFORE (both recorded, the second an unnamed allocation, the first a class \
                     guard after it)",
                    claim.guard, claim.site
                ),
            });
        };
        let what = || {
            format!(
                "the claim that the class guard at line {} tests what line {} allocates",
                line(before, claim.guard),
                line(before, claim.site)
            )
        };
        let never_made = calls_never_made(before, claim.guard, solver)?;
        match verify_never_ends(&tested(before, claim, &never_made), solver)? {
            Verdict::Proved => proved.push((claim.site, before.constant(class).clone())),
            Verdict::Refuted(cex) => {
                return Ok(Err(Verdict::Unknown(format!(
                    "{} is refuted: {cex}",
                    what()
                ))))
            }
            Verdict::Unknown(why) | Verdict::Unreplayed(why) => {
                return Ok(Err(Verdict::Unknown(format!(
                    "{} is not proved: {why}",
                    what()
                ))))
            }
        }
    }
    Ok(Ok(proved))
}

/// BEFORE's conditional calls before op `upto` that are never made: for
/// each in turn, a proof that no run gets there with its condition
/// nonzero (the earlier ones found never made are guards that their
/// conditions are 0). Kept as a call, one the interpreter does not make
/// where the condition is 0 may, in the encoding, write whatever it can
/// reach (a frame's stack forced by `jit_force_virtualizable` where the
/// frame was made in the trace and has no token): the claim's
/// counterexample would not replay.
fn calls_never_made(
    before: &Trace,
    upto: usize,
    solver: &mut Solver,
) -> Result<Vec<usize>, VerifyError> {
    let mut never = Vec::new();
    for i in (0..upto).filter(|&i| may_stand_as_guard(before, i)) {
        let condition = before.ops[i].args[0];
        let (mut trace, map) = cut(before, i, &[condition], &never);
        let made = Op {
            fail_args: Some(Default::default()),
            ..Op::new(Opcode::GuardTrue, vec![mapped(condition, &map)])
        };
        trace.push(made, "", Pos::default());
        trace.push(Op::new(Opcode::Finish, Vec::new()), "", Pos::default());
        if verify_never_ends(&trace, solver)? == Verdict::Proved {
            never.push(i);
        }
    }
    Ok(never)
}

/// BEFORE up to the claim's guard, cut down to what the guard's argument
/// and the claim's object depend on (`cut`), then a guard that fails
/// where the two are one, and the end: a run gets there only where the
/// claim is false.
fn tested(before: &Trace, claim: &SeenClass, never_made: &[usize]) -> Trace {
    let tested = before.ops[claim.guard].args[0];
    let made = Arg::Value(before.value_of_op(claim.site));
    let (mut trace, map) = cut(before, claim.guard, &[tested, made], never_made);
    let same = Op::new(
        Opcode::PtrEq,
        vec![mapped(tested, &map), mapped(made, &map)],
    );
    let same = trace.push(same, "", Pos::default());
    let differs = Op {
        fail_args: Some(Default::default()),
        ..Op::new(Opcode::GuardFalse, vec![Arg::Value(same)])
    };
    trace.push(differs, "", Pos::default());
    trace.push(Op::new(Opcode::Finish, Vec::new()), "", Pos::default());
    trace
}

/// BEFORE's first `upto` ops, cut down to what the values `wanted`
/// depend on, with the map from BEFORE's values to the cut's. The cut
/// keeps every op with an effect (writes, calls) and what they read, and
/// drops the recorded guards and the reads, pure ops and markers nothing
/// kept uses: each dropped op only narrows the runs (a guard, or an op
/// undefined on some), so a claim of the cut trace is the stronger one.
/// (Guards before the recording, an entry's assumed facts, stay; so do
/// those that a call did not raise or force a frame, which say what the
/// call did not touch.) Each conditional call of `never_made` is a guard
/// that its condition is 0, which the runs it is proved of pass.
fn cut(before: &Trace, upto: usize, wanted: &[Arg], never_made: &[usize]) -> (Trace, Vec<Arg>) {
    let mut needed = vec![false; before.num_values()];
    let need = |a: Arg, needed: &mut Vec<bool>| {
        if let Arg::Value(v) = a {
            needed[v.0 as usize] = true;
        }
    };
    wanted.iter().for_each(|&a| need(a, &mut needed));
    let mut kept = vec![false; upto];
    for i in (0..upto).rev() {
        let op = &before.ops[i];
        let recorded_guard =
            op.opcode.is_guard() && !of_calls(op.opcode) && before.recorded.contains(&i);
        let idle = op.opcode.removable_when_unused() || op.opcode.has(Flags::MARKER);
        let wanted = needed[before.value_of_op(i).0 as usize];
        if wanted || !(recorded_guard || idle) {
            kept[i] = true;
            let args = match never_made.contains(&i) {
                true => &op.args[..1],
                false => &op.args[..],
            };
            args.iter().for_each(|&a| need(a, &mut needed));
        }
    }
    let mut trace = new_trace(before, inputs_of(before));
    let mut map = identity(before);
    for (i, op) in before.ops[..upto].iter().enumerate() {
        if !kept[i] {
            continue;
        }
        // (What a guard resumes with does not matter here.)
        let mut copy = match never_made.contains(&i) {
            true => Op::new(Opcode::GuardFalse, vec![op.args[0]]),
            false => Op {
                descr: op.descr,
                ..Op::new(op.opcode, op.args.clone())
            },
        };
        copy.fail_args = (op.fail_args.is_some() || copy.opcode.is_guard()).then(Default::default);
        copy.for_each_arg_mut(|a| *a = mapped(*a, &map));
        let v = before.value_of_op(i);
        let pos = before.op_pos.get(i).copied().unwrap_or_default();
        map[v.0 as usize] = Arg::Value(trace.push(copy, before.name(v), pos));
    }
    // What the recording ran, it ran: constants whose fields it read are
    // structs.
    let first = kept.iter().position(|&k| k).unwrap_or(0);
    if before.recorded.start <= first {
        trace.recorded = 0..trace.ops.len();
    }
    (trace, map)
}

/// Guards of what the call before them did: it raised nothing (or
/// something), it forced no frame.
fn of_calls(opcode: Opcode) -> bool {
    matches!(
        opcode,
        Opcode::GuardNoException
            | Opcode::GuardException
            | Opcode::GuardNotForced
            | Opcode::GuardNotForced2
    )
}

fn line(trace: &Trace, op: usize) -> u32 {
    trace.op_pos.get(op).map_or(0, |p| p.line)
}
