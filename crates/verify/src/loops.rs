//! Traces that loop back to a label inside them: a preamble, the label,
//! a body, and a jump to the label (a peeled loop, PyPy's optimized
//! loops, such a trace optimized again). Every pass after the first
//! starts at the label, from whatever the jump passed: one run from the
//! start shows the first pass alone, which is not enough.
//!
//! The two loops are proved alike by induction on the passes, in two
//! checks of the forms `check` knows: the preambles (start to label,
//! ending in a jump with the label's arguments) reach their labels with
//! the same arguments and heap, or fail alike; and the bodies (their
//! inputs the label's arguments, the same in both) do the same from any
//! such state. A counterexample of the preambles is a run from the start,
//! a refutation; one of the bodies starts from a state the preamble may
//! never pass, and is only a reason the loops are not proved.
//!
//! A label that is the start in all but name (only markers before it,
//! and the trace's inputs as its arguments, in order) needs none of
//! this: a jump there is a jump to the start.

use traceopt_ir::{Arg, JumpTarget, Op, Opcode, Trace, ValueId};
use traceopt_smt::Solver;

use crate::{check_one_pass, Given, Verdict, VerifyError};

/// The label inside `trace` its final jump goes to, if any (a label that
/// is the start in all but name does not count).
pub(crate) fn inner_label(trace: &Trace) -> Option<usize> {
    let jump = trace.ops.last().filter(|op| op.opcode == Opcode::Jump)?;
    let JumpTarget::Label(label) = trace.jump_target(jump) else {
        return None;
    };
    let only_markers = (trace.ops[..label].iter()).all(|op| op.opcode == Opcode::DebugMergePoint);
    let args = &trace.ops[label].args;
    let inputs_in_order = args.len() == trace.inputs.len()
        && (args.iter().enumerate()).all(|(i, &a)| a == Arg::Value(ValueId(i as u32)));
    (!(only_markers && inputs_in_order)).then_some(label)
}

/// `before` and `after` compared as loops, where either loops back to a
/// label inside it; `None` where neither does (`check` compares one run
/// of each). Not proved as loops, a difference in the first pass (one
/// run from the start, `check_one_pass`) is still a refutation; any other
/// is a reason the loops are not proved.
pub(crate) fn check_loops(
    before: &Trace,
    after: &Trace,
    provenance: Option<&[Option<usize>]>,
    given: Given<'_>,
    solver: &mut Solver,
) -> Result<Option<Verdict>, VerifyError> {
    let labels = (inner_label(before), inner_label(after));
    if labels == (None, None) {
        return Ok(None);
    }
    let by_parts = match labels {
        (Some(b), Some(a)) => by_parts(before, after, (b, a), provenance, given, solver)?,
        (b, _) => {
            let (looping, other) = match b {
                Some(_) => ("BEFORE", "AFTER"),
                None => ("AFTER", "BEFORE"),
            };
            Verdict::Unknown(format!(
                "{looping} loops back to a label inside it and {other} does not: its later \
                 passes start there, which one run from the start does not show (a loop \
                 peeled by the optimizer is verified against its input with the optimizer's \
                 witness: `traceopt opt --peel --verify`)"
            ))
        }
    };
    if by_parts == Verdict::Proved {
        return Ok(Some(by_parts));
    }
    Ok(Some(
        match check_one_pass(before, after, provenance, given, solver)? {
            refuted @ Verdict::Refuted(_) => refuted,
            _ => by_parts,
        },
    ))
}

/// The loops compared in two parts, the preambles and the bodies (`b`
/// and `a` the labels of BEFORE and AFTER): proved, or why not (never
/// refuted: a part's counterexample need not be a run of the loops).
fn by_parts(
    before: &Trace,
    after: &Trace,
    (b, a): (usize, usize),
    provenance: Option<&[Option<usize>]>,
    given: Given<'_>,
    solver: &mut Solver,
) -> Result<Verdict, VerifyError> {
    let types = |t: &Trace, label: usize| -> Vec<_> {
        (t.ops[label].args.iter())
            .map(|&arg| t.arg_type(arg))
            .collect()
    };
    if types(before, b) != types(after, a) {
        return Ok(Verdict::Unknown(format!(
            "the two loops' labels take different arguments (BEFORE's on line {}, AFTER's on \
             line {}): the bodies cannot be compared from the same state",
            before.op_pos[b].line, after.op_pos[a].line
        )));
    }
    let (Some(before_body), Some(after_body)) = (body(before, b), body(after, a)) else {
        return Ok(Verdict::Unknown(
            "a loop body uses a value from before its label, which is no value there (the \
             checker refuses such a trace)"
                .into(),
        ));
    };
    // What an index of BEFORE's is in one part: the preamble (ops before
    // the label, its jump in the label's place) or the body.
    let in_preamble = |i: usize| (i <= b).then_some(i);
    let in_body = |i: usize| i.checked_sub(b + 1);
    let parts = [
        (
            "the preambles",
            preamble(before, b),
            preamble(after, a),
            0..a + 1,
        ),
        (
            "the bodies",
            before_body,
            after_body,
            a + 1..after.ops.len(),
        ),
    ];
    for (k, (what, before_part, after_part, after_ops)) in parts.into_iter().enumerate() {
        let part: &dyn Fn(usize) -> Option<usize> = match k {
            0 => &in_preamble,
            _ => &in_body,
        };
        let moved = Moved::new(&given, provenance, part, after_ops);
        let part_given = Given {
            checked_tail: if k == 0 { 0 } else { given.checked_tail },
            tail_guards_leave: k != 0 && given.tail_guards_leave,
            ..moved.given(given)
        };
        let part_provenance = provenance.and(moved.provenance.as_deref());
        let verdict = check_one_pass(
            &before_part,
            &after_part,
            part_provenance,
            part_given,
            solver,
        )?;
        let not_proved = match verdict {
            Verdict::Proved => continue,
            Verdict::Refuted(cex) if k == 0 => format!(
                "the preambles do not reach their labels alike (the loops may agree still, \
                 where a guard moved across the label): {cex}"
            ),
            Verdict::Refuted(cex) => format!(
                "the bodies differ from label arguments the preambles may never pass: {cex}"
            ),
            Verdict::Unknown(why) => format!("{what}: {why}"),
            Verdict::Unreplayed(why) => return Ok(Verdict::Unreplayed(format!("{what}: {why}"))),
        };
        return Ok(Verdict::Unknown(not_proved));
    }
    Ok(Verdict::Proved)
}

/// What a part's check is given of the caller's: BEFORE's indexes moved
/// into the part (`part`), those of the other part left out, and AFTER's
/// provenance for its ops in the part (`after_ops`).
struct Moved {
    never_fail: Vec<usize>,
    built: Vec<(usize, usize)>,
    seen_classes: Vec<(usize, traceopt_ir::Const)>,
    provenance: Option<Vec<Option<usize>>>,
}

impl Moved {
    fn new(
        given: &Given<'_>,
        provenance: Option<&[Option<usize>]>,
        part: &dyn Fn(usize) -> Option<usize>,
        after_ops: std::ops::Range<usize>,
    ) -> Moved {
        Moved {
            never_fail: given.never_fail.iter().filter_map(|&i| part(i)).collect(),
            built: (given.built.iter())
                .filter_map(|&(i, j)| Some((part(i)?, part(j)?)))
                .collect(),
            seen_classes: (given.seen_classes.iter())
                .filter_map(|(i, class)| Some((part(*i)?, class.clone())))
                .collect(),
            provenance: (provenance.or(given.provenance))
                .map(|p| p[after_ops].iter().map(|o| o.and_then(part)).collect()),
        }
    }

    fn given<'g>(&'g self, given: Given<'g>) -> Given<'g> {
        Given {
            never_fail: &self.never_fail,
            built: &self.built,
            seen_classes: &self.seen_classes,
            provenance: given.provenance.and(self.provenance.as_deref()),
            ..given
        }
    }
}

/// The ops of `trace` before `label`, then a jump with the label's
/// arguments (its descr, which names no label of the part: the jump
/// leaves it).
fn preamble(trace: &Trace, label: usize) -> Trace {
    let mut part = trace.clone();
    part.ops.truncate(label);
    part.op_pos.truncate(label);
    part.names.truncate(trace.inputs.len() + label);
    let jump = Op {
        descr: trace.ops[label].descr,
        ..Op::new(Opcode::Jump, trace.ops[label].args.clone())
    };
    part.push(jump, "", trace.op_pos[label]);
    part
}

/// The ops of `trace` after `label`, its inputs the label's arguments,
/// one for each (a value the label names twice is the last one's, as a
/// jump binds them; a constant's input goes unused). `None` where an op
/// after the label uses a value from before it (which the checker
/// refuses: past a label, only its arguments are values).
fn body(trace: &Trace, label: usize) -> Option<Trace> {
    let mut part = Trace::new();
    part.share_interned(trace);
    part.namespace = trace.namespace.clone();
    part.input_pos = trace.op_pos[label];
    let mut map: Vec<Option<Arg>> = vec![None; trace.num_values()];
    for (i, &arg) in trace.ops[label].args.iter().enumerate() {
        let name = match arg {
            Arg::Value(v) => trace.name(v).to_string(),
            Arg::Const(_) => format!("label_arg{i}"),
        };
        let input = part.add_input(trace.arg_type(arg), &name);
        if let Arg::Value(v) = arg {
            map[v.0 as usize] = Some(Arg::Value(input));
        }
    }
    if !part.copy_ops(trace, label + 1..trace.ops.len(), &mut map) {
        return None;
    }
    let recorded = |i: usize| i.max(label + 1) - (label + 1);
    part.recorded = recorded(trace.recorded.start)..recorded(trace.recorded.end);
    Some(part)
}
