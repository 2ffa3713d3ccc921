//! Mutation of existing traces (seed 000's future work): integer traces
//! from test files, peer sets or logs become sketches, and each campaign
//! trace is one of them with a few random changes: a constant replaced by
//! a special value, a binary op replaced by another, a guard dropped, or
//! an op appended that uses earlier values. Example inputs are searched
//! for (random vectors, kept if the trace runs to its end on them).

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use traceopt_interp::{run, DefaultEnv, Limits, Outcome, Val};
use traceopt_ir::{Arg, Const, Flags, Opcode, Trace, Type};

use crate::sketch::{Line, Operand, Sketch};

const BINARY: &[Opcode] = &[
    Opcode::IntAdd,
    Opcode::IntSub,
    Opcode::IntMul,
    Opcode::IntAnd,
    Opcode::IntOr,
    Opcode::IntXor,
    Opcode::IntLt,
    Opcode::IntLe,
    Opcode::IntEq,
    Opcode::IntNe,
    Opcode::UintLt,
    Opcode::UintLe,
];

const SPECIALS: &[i64] = &[0, 1, -1, 2, 7, 8, 63, 64, 255, i64::MIN, i64::MAX];

/// The trace as a sketch, if it is all integers: int inputs, pure or
/// overflow-checking integer ops, integer guards, `jump`/`finish`.
pub fn from_trace(trace: &Trace) -> Option<Sketch> {
    if trace.inputs.iter().any(|&t| t != Type::Int) {
        return None;
    }
    let operand = |arg: Arg| -> Option<Operand> {
        match arg {
            Arg::Value(v) => Some(Operand::Value(trace.name(v).to_string())),
            Arg::Const(c) => match trace.constant(c) {
                Const::Int(i) => Some(Operand::Const(*i)),
                _ => None,
            },
        }
    };
    let mut lines = Vec::new();
    let mut end = None;
    for (k, op) in trace.ops.iter().enumerate() {
        let args: Option<Vec<Operand>> = op.args.iter().map(|&a| operand(a)).collect();
        let args = args?;
        match op.opcode {
            Opcode::Jump | Opcode::Finish => end = Some((op.opcode, args)),
            Opcode::GuardTrue
            | Opcode::GuardFalse
            | Opcode::GuardValue
            | Opcode::GuardNoOverflow => lines.push(Line::new(None, op.opcode, args)),
            Opcode::DebugMergePoint => {}
            opcode if is_integer_op(opcode) => lines.push(Line::new(
                Some(trace.name(trace.value_of_op(k)).to_string()),
                opcode,
                args,
            )),
            _ => return None,
        }
    }
    let inputs = (0..trace.inputs.len())
        .map(|i| (trace.name(traceopt_ir::ValueId(i as u32)).to_string(), 0))
        .collect();
    Some(Sketch {
        inputs,
        heap: Vec::new(),
        lines,
        end: end?,
    })
}

fn is_integer_op(op: Opcode) -> bool {
    let info = op.info();
    info.result == Type::Int
        && info.flags.intersects(Flags::PURE | Flags::OVF)
        && !info.signature.is_empty()
        && info.signature.bytes().all(|b| b == b'i')
}

/// Does the sketch run to its end on `inputs`?
fn runs_through(sketch: &Sketch, inputs: &[i64]) -> bool {
    let Ok(trace) = sketch.trace() else {
        return false;
    };
    let vals: Vec<Val> = inputs.iter().map(|&v| Val::Int(v)).collect();
    matches!(
        run(&trace, &vals, &mut DefaultEnv, Limits { max_iterations: 5 }).map(|r| r.outcome),
        Ok(Outcome::Finished { .. } | Outcome::Jumped { .. } | Outcome::IterationLimit { .. })
    )
}

fn special(rng: &mut StdRng) -> i64 {
    if rng.random_range(0..3) == 0 {
        rng.random_range(-100..100)
    } else {
        SPECIALS[rng.random_range(0..SPECIALS.len())]
    }
}

/// A mutant of `base` from `seed`, with example inputs that run it to
/// its end if any of a few tries does.
pub fn mutate(base: &Sketch, seed: u64) -> Sketch {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut s = base.clone();
    for _ in 0..rng.random_range(1..4) {
        if s.lines.is_empty() {
            break;
        }
        let k = rng.random_range(0..s.lines.len());
        match rng.random_range(0..4) {
            0 => {
                let consts: Vec<usize> = (0..s.lines[k].args.len())
                    .filter(|&a| matches!(s.lines[k].args[a], Operand::Const(_)))
                    .collect();
                if let Some(&a) = consts.get(rng.random_range(0..consts.len().max(1))) {
                    s.lines[k].args[a] = Operand::Const(special(&mut rng));
                }
            }
            1 if BINARY.contains(&s.lines[k].opcode) => {
                s.lines[k].opcode = BINARY[rng.random_range(0..BINARY.len())];
            }
            2 if s.lines[k].result.is_none() && s.lines[k].opcode != Opcode::GuardNoOverflow => {
                s.lines.remove(k);
            }
            _ => {
                let values: Vec<String> = s
                    .inputs
                    .iter()
                    .map(|(n, _)| n.clone())
                    .chain(s.lines.iter().filter_map(|l| l.result.clone()))
                    .collect();
                let a = values[rng.random_range(0..values.len())].clone();
                let op = BINARY[rng.random_range(0..BINARY.len())];
                let name = format!("i_m{}", s.lines.len());
                s.lines.push(Line::new(
                    Some(name.clone()),
                    op,
                    vec![Operand::Value(a), Operand::Const(special(&mut rng))],
                ));
                if rng.random_range(0..2) == 0 {
                    s.end = (Opcode::Finish, vec![Operand::Value(name)]);
                }
            }
        }
    }
    for _ in 0..20 {
        let inputs: Vec<i64> = s.inputs.iter().map(|_| special(&mut rng)).collect();
        if runs_through(&s, &inputs) {
            for ((_, v), x) in s.inputs.iter_mut().zip(inputs) {
                *v = x;
            }
            break;
        }
    }
    s
}
