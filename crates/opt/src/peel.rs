//! Loop peeling (seed 004): a loop trace, whose `jump` goes back to its
//! start, is optimized twice. The first copy, the preamble, runs once on
//! entry and establishes facts; the second, the body, runs from a
//! `label` at the preamble's end for every later pass, and is optimized
//! taking for granted what the preamble established of the label's
//! arguments, so that guards the preamble passed vanish from it. The
//! output is `preamble; label(args); body; jump(args)`, the jump going
//! to the label, as PyPy prints its optimized loops.
//!
//! The label takes one argument for each input of the loop: the value
//! the preamble's jump passed for it (a constant, or a value passed
//! twice, gets a `same_as` of its own, since a label rebinds values).
//! The body's facts (`Fact`: an integer range, a class, not null) are
//! what the optimizer knew of those values at the preamble's jump. They
//! are a claim about every pass, so the body must give its own jump
//! arguments the same facts: where it does not, the fact is weakened
//! (a range loses the side that did not hold, a class or non-null goes)
//! and the body optimized again, until the facts hold (they only shrink,
//! so this ends). The facts are the witness the validator proves the
//! loop by (`traceopt_verify::verify_peeled`): the preamble establishes
//! them, and a pass of the body that starts with them ends with them.
//!
//! Not yet: virtual objects carried across the label (they are forced
//! at the preamble's jump), and loop-invariant loads and pure ops of the
//! preamble reused by the body (PyPy's short preamble).

use rustc_hash::FxHashSet as HashSet;
use traceopt_ir::{Arg, Descr, DescrKind, Fact, JumpTarget, Op, Opcode, Pos, Trace, Type, ValueId};

use crate::driver::{optimize_knowing, Infeasible, Optimized, Passes};

/// A loop optimized as preamble and body.
#[derive(Clone, Debug)]
pub struct Peeled {
    /// `preamble; label(args); body; jump(args)`; the provenance of each
    /// op is the loop's op it stands for (both copies stand for the same
    /// ops); the rule counts are over both copies.
    pub optimized: Optimized,
    /// The index of the label in the trace.
    pub label: usize,
    /// What the body takes for granted of each label argument.
    pub facts: Vec<Fact>,
    /// How many times the body was optimized (facts weakened in between).
    pub rounds: usize,
}

/// How many times the body is optimized before the facts are dropped
/// altogether (each round weakens at least one fact).
const MAX_ROUNDS: usize = 8;

/// Peels `input` if it is a loop (its last op a jump to its start):
/// `Ok(None)` for any other trace, or a loop whose preamble never
/// reaches its jump.
pub fn peel(input: &Trace, passes: Passes) -> Result<Option<Peeled>, Infeasible> {
    let is_loop = input
        .ops
        .last()
        .is_some_and(|op| op.opcode == Opcode::Jump && input.jump_target(op) == JumpTarget::Start);
    if !is_loop || input.ops.iter().any(|op| op.opcode == Opcode::Label) {
        return Ok(None);
    }
    let (preamble, end_facts) = optimize_knowing(input, passes, &[], &[])?;
    let Some(mut facts) = end_facts else {
        return Ok(None);
    };
    for (fact, &ty) in facts.iter_mut().zip(&input.inputs) {
        if !fact.fits(ty) {
            *fact = Fact::default();
        }
    }
    let mut rounds = 0;
    let body = loop {
        rounds += 1;
        let (body, kept) = optimize_knowing(input, passes, &[], &facts)?;
        let Some(kept) = kept else {
            return Ok(None);
        };
        let weaker: Vec<Fact> = (facts.iter().zip(&kept))
            .map(|(assumed, held)| weaken(assumed, held))
            .collect();
        if weaker == facts {
            break body;
        }
        facts = if rounds >= MAX_ROUNDS {
            vec![Fact::default(); facts.len()]
        } else {
            weaker
        };
    };
    let mut rule_counts = preamble.rule_counts.clone();
    for (total, n) in rule_counts.iter_mut().zip(&body.rule_counts) {
        *total += n;
    }
    let (trace, provenance, label) = splice(&preamble, &body);
    Ok(Some(Peeled {
        optimized: Optimized {
            trace,
            provenance,
            rule_counts,
        },
        label,
        facts,
        rounds,
    }))
}

/// What remains of `assumed` when a pass of the body ends with `held`
/// known of the same argument: each part of `assumed` that `held`
/// implies.
fn weaken(assumed: &Fact, held: &Fact) -> Fact {
    let range = assumed.range.and_then(|(lower, upper)| {
        let (l, u) = held.range.unwrap_or((i64::MIN, i64::MAX));
        let lower = if l >= lower { lower } else { i64::MIN };
        let upper = if u <= upper { upper } else { i64::MAX };
        ((lower, upper) != (i64::MIN, i64::MAX)).then_some((lower, upper))
    });
    let class = assumed
        .class
        .clone()
        .filter(|c| held.class.as_ref() == Some(c));
    Fact {
        range,
        nonnull: assumed.nonnull && (held.nonnull || held.class.is_some()),
        class,
    }
}

/// `preamble` less its jump, the label, then `body` with its inputs
/// read as the label's arguments and its jump sent to the label.
fn splice(preamble: &Optimized, body: &Optimized) -> (Trace, Vec<Option<usize>>, usize) {
    let mut trace = preamble.trace.clone();
    let mut provenance = preamble.provenance.clone();
    let jump = trace.ops.pop().expect("the preamble ends in its jump");
    trace.op_pos.pop();
    trace.names.pop();
    let jump_index = provenance.pop().flatten();
    let mut names: HashSet<String> = trace.names.iter().map(|n| n.to_string()).collect();
    let mut fresh = 0u32;
    let mut fresh_name = |ty: Type, names: &mut HashSet<String>| loop {
        fresh += 1;
        // PyPy's letters: `p` for a reference.
        let letter = if ty == Type::Ref { 'p' } else { ty.letter() };
        let name = format!("{letter}{fresh}");
        if names.insert(name.clone()) {
            return name;
        }
    };
    // One value of its own for each label argument.
    let mut label_args = Vec::new();
    for &arg in &jump.args {
        let own = matches!(arg, Arg::Value(v) if !label_args.contains(&Arg::Value(v)));
        if own {
            label_args.push(arg);
            continue;
        }
        let ty = trace.arg_type(arg);
        let copy = match ty {
            Type::Int => Opcode::SameAsI,
            Type::Ref => Opcode::SameAsR,
            _ => Opcode::SameAsF,
        };
        let name = fresh_name(ty, &mut names);
        let v = trace.push(Op::new(copy, vec![arg]), &name, Pos::default());
        provenance.push(jump_index);
        label_args.push(Arg::Value(v));
    }
    let token = trace.add_descr(Descr {
        text: "TargetToken(1)".into(),
        kind: DescrKind::TargetToken { address: 1 },
    });
    let label = trace.ops.len();
    trace.push(
        Op {
            descr: Some(token),
            ..Op::new(Opcode::Label, label_args.clone())
        },
        "",
        Pos::default(),
    );
    provenance.push(jump_index);
    // The body's values here: its inputs are the label's arguments.
    let mut map: Vec<Arg> = label_args;
    for (op, (&pos, name)) in body.trace.ops.iter().zip(
        body.trace
            .op_pos
            .iter()
            .zip(&body.trace.names[body.trace.inputs.len()..]),
    ) {
        let mut copy = trace.import_op(&body.trace, op, |v: ValueId| map[v.0 as usize]);
        if copy.opcode == Opcode::Jump {
            copy.descr = Some(token);
        }
        let ty = copy.opcode.result_type();
        let name = if ty == Type::Void || names.insert(name.to_string()) {
            name.to_string()
        } else {
            fresh_name(ty, &mut names)
        };
        map.push(Arg::Value(trace.push(copy, &name, pos)));
    }
    provenance.extend(&body.provenance);
    (trace, provenance, label)
}
