//! A peeled loop, proved by induction. The optimizer turned a loop (one
//! iteration ending in a jump to its start) into `preamble; label(L);
//! body; jump(L')`, and exports the witness: for each label argument
//! (one per input of the loop, in order), the facts the body takes for
//! granted (`Fact`). Two straight-line comparisons, each checked by
//! `verify_optimized`, then cover every run:
//!
//! (a) the first pass: the loop's iteration from its inputs, with
//!     guards for the facts on its jump arguments before the jump,
//!     against the preamble with a jump from where the label stands.
//!     The preamble fails alike or reaches the label with the loop's jump
//!     values, and the facts hold there (guards of BEFORE that AFTER
//!     lacks must always pass);
//! (b) any later pass: from inputs that satisfy the facts (both sides
//!     start with the same fact guards), the loop's iteration, with the
//!     fact guards on its jump arguments, against the body. Both fail
//!     alike or jump with the same values, which satisfy the facts again.
//!
//! By induction on the number of passes, the peeled loop and the loop
//! fail alike or go on with the same values, for ever. Everything is
//! derived from the output trace itself (split at its label), so the
//! splicing of preamble and body is checked too; only the facts come
//! from the optimizer, and a wrong fact makes (a) or (b) fail.

use traceopt_ir::{Arg, Fact, JumpTarget, Op, Opcode, Pos, Trace, ValueId};
use traceopt_smt::Solver;

use crate::{verify_optimized, Verdict, VerifyError};

/// Proves `output` (peeled from `looped`, `provenance` giving for each
/// of its ops the loop's op it stands for) by induction on the facts.
pub fn verify_peeled(
    looped: &Trace,
    output: &Trace,
    provenance: &[Option<usize>],
    facts: &[Fact],
    solver: &mut Solver,
) -> Result<Verdict, VerifyError> {
    let shape = |what: &str| VerifyError::Unsupported {
        side: "AFTER",
        line: 0,
        what: format!("a peeled loop {what}"),
    };
    let jump = looped
        .ops
        .len()
        .checked_sub(1)
        .ok_or_else(|| shape("of an empty loop"))?;
    let Some(end) = output.ops.last().filter(|op| op.opcode == Opcode::Jump) else {
        return Err(shape("that does not end in a jump"));
    };
    let JumpTarget::Label(label) = output.jump_target(end) else {
        return Err(shape("whose jump does not go to a label"));
    };
    let n = looped.inputs.len();
    let label_args = &output.ops[label].args;
    let types_fit =
        (label_args.iter().map(|&a| output.arg_type(a))).eq(looped.inputs.iter().copied());
    if label_args.len() != n || facts.len() != n || !types_fit {
        return Err(shape("whose label does not take the loop's inputs"));
    }
    let first = first_pass(looped, output, provenance, label, facts, jump);
    let verdict = verify_optimized(&first.0, &first.1, &first.2, solver)?;
    if verdict != Verdict::Proved {
        return Ok(named(verdict, "the preamble"));
    }
    let later = later_pass(looped, output, provenance, label, facts, jump);
    let verdict = verify_optimized(&later.0, &later.1, &later.2, solver)?;
    Ok(named(verdict, "a pass of the body"))
}

type Pair = (Trace, Trace, Vec<Option<usize>>);

/// Says which comparison a verdict that is not a proof is about.
fn named(verdict: Verdict, part: &str) -> Verdict {
    match verdict {
        Verdict::Proved => Verdict::Proved,
        Verdict::Refuted(mut cex) => {
            cex.difference = format!("{part}: {}", cex.difference);
            Verdict::Refuted(cex)
        }
        Verdict::Unknown(why) => Verdict::Unknown(format!("{part}: {why}")),
        Verdict::Unreplayed(why) => Verdict::Unreplayed(format!("{part}: {why}")),
    }
}

/// A trace with `from`'s inputs (types and names) and interned items.
fn like(from: &Trace) -> Trace {
    let mut trace = Trace::new();
    trace.share_interned(from);
    trace.namespace = from.namespace.clone();
    for (i, &ty) in from.inputs.iter().enumerate() {
        trace.add_input(ty, from.name(ValueId(i as u32)));
    }
    trace
}

/// Copies `from.ops[range]` into `to` (which shares `from`'s interned
/// items), each value `v` read as `map[v]`; extends `map` with the
/// copies' values.
fn copy_ops(to: &mut Trace, from: &Trace, range: std::ops::Range<usize>, map: &mut Vec<Arg>) {
    for i in range {
        let op = &from.ops[i];
        let mut copy = op.clone();
        for arg in copy.args.iter_mut() {
            *arg = mapped(*arg, map);
        }
        for arg in copy.resume_args_mut() {
            *arg = mapped(*arg, map);
        }
        let name = from.name(from.value_of_op(i));
        let v = to.push(
            copy,
            name,
            from.op_pos.get(i).copied().unwrap_or(Pos::default()),
        );
        map.push(Arg::Value(v));
    }
}

fn mapped(arg: Arg, map: &[Arg]) -> Arg {
    match arg {
        Arg::Value(v) => map[v.0 as usize],
        constant => constant,
    }
}

/// The fact guards on `values`; how many ops they took.
fn fact_guards(trace: &mut Trace, facts: &[Fact], values: &[Arg]) -> usize {
    (facts.iter().zip(values))
        .map(|(fact, &v)| fact.guards(trace, v))
        .sum()
}

/// A jump like `looped`'s (back to its start) with these arguments.
fn jump_like(to: &mut Trace, looped: &Trace, args: Vec<Arg>) {
    let original = &looped.ops[looped.ops.len() - 1];
    let mut jump = Op::new(Opcode::Jump, args);
    jump.descr = original
        .descr
        .map(|d| to.add_descr(looped.descr(d).clone()));
    to.push(jump, "", Pos::default());
}

/// Comparison (a): the loop's iteration with the facts checked at its
/// jump, against the preamble jumping from the label.
fn first_pass(
    looped: &Trace,
    output: &Trace,
    provenance: &[Option<usize>],
    label: usize,
    facts: &[Fact],
    jump: usize,
) -> Pair {
    let mut before = like(looped);
    let mut map: Vec<Arg> = (0..looped.inputs.len())
        .map(|i| Arg::Value(ValueId(i as u32)))
        .collect();
    copy_ops(&mut before, looped, 0..jump, &mut map);
    let jump_args: Vec<Arg> = looped.ops[jump]
        .args
        .iter()
        .map(|&a| mapped(a, &map))
        .collect();
    let checks = fact_guards(&mut before, facts, &jump_args);
    jump_like(&mut before, looped, jump_args);

    let mut after = like(output);
    let mut map: Vec<Arg> = (0..output.inputs.len())
        .map(|i| Arg::Value(ValueId(i as u32)))
        .collect();
    copy_ops(&mut after, output, 0..label, &mut map);
    let label_args = output.ops[label]
        .args
        .iter()
        .map(|&a| mapped(a, &map))
        .collect();
    jump_like(&mut after, looped, label_args);
    let moved = |p: Option<usize>| p.map(|p| if p >= jump { p + checks } else { p });
    let mut prov: Vec<Option<usize>> = provenance[..label].iter().map(|&p| moved(p)).collect();
    prov.push(Some(jump + checks));
    (before, after, prov)
}

/// Comparison (b): from inputs with the facts, the loop's iteration with
/// the facts checked at its jump, against the body.
fn later_pass(
    looped: &Trace,
    output: &Trace,
    provenance: &[Option<usize>],
    label: usize,
    facts: &[Fact],
    jump: usize,
) -> Pair {
    let n = looped.inputs.len();
    let inputs: Vec<Arg> = (0..n).map(|i| Arg::Value(ValueId(i as u32))).collect();
    let mut before = like(looped);
    let assumed = fact_guards(&mut before, facts, &inputs);
    let mut map = inputs.clone();
    copy_ops(&mut before, looped, 0..jump, &mut map);
    let jump_args: Vec<Arg> = looped.ops[jump]
        .args
        .iter()
        .map(|&a| mapped(a, &map))
        .collect();
    let checks = fact_guards(&mut before, facts, &jump_args);
    jump_like(&mut before, looped, jump_args);

    // The body, its inputs the label's arguments, after the same fact
    // guards.
    let mut after = like(looped);
    after.share_interned(output);
    fact_guards(&mut after, facts, &inputs);
    let mut map: Vec<Arg> = vec![Arg::Value(ValueId(u32::MAX)); output.num_values()];
    for (k, &arg) in output.ops[label].args.iter().enumerate() {
        if let Arg::Value(v) = arg {
            map[v.0 as usize] = inputs[k];
        }
    }
    let end = output.ops.len() - 1;
    for i in label + 1..end {
        let op = &output.ops[i];
        let mut copy = op.clone();
        for arg in copy.args.iter_mut() {
            *arg = mapped(*arg, &map);
        }
        for arg in copy.resume_args_mut() {
            *arg = mapped(*arg, &map);
        }
        let v = output.value_of_op(i);
        let pushed = after.push(
            copy,
            output.name(v),
            output.op_pos.get(i).copied().unwrap_or(Pos::default()),
        );
        map[v.0 as usize] = Arg::Value(pushed);
    }
    let jump_args = output.ops[end]
        .args
        .iter()
        .map(|&a| mapped(a, &map))
        .collect();
    jump_like(&mut after, looped, jump_args);
    let moved = |p: Option<usize>| {
        p.map(|p| {
            if p >= jump {
                p + assumed + checks
            } else {
                p + assumed
            }
        })
    };
    let mut prov: Vec<Option<usize>> = (0..assumed).map(Some).collect();
    prov.extend(provenance[label + 1..end].iter().map(|&p| moved(p)));
    prov.push(Some(jump + assumed + checks));
    (before, after, prov)
}
