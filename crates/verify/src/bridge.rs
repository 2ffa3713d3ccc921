//! PyPy's optimized bridges against the bridges it recorded.
//!
//! A bridge runs where a guard of an optimized trace (its parent) fails,
//! from the guard's fail arguments, and ends by jumping to a label of a
//! loop. The two bridges of a log are not comparable alone: PyPy's
//! optimizer knew what the parent had established before the guard
//! (classes, non-null pointers, bounds) and dropped the guards that
//! re-check it; and its bridge jumps past the loop's preamble, straight to
//! the label of the peeled loop, with the values that label takes. So each
//! is put in context, and the two contexts are traces the validator
//! compares as usual:
//!
//! - both start with the parent's ops from its start, whose inputs are
//!   unknowns, up to the guard, turned around: it fails. The bridge's
//!   inputs are its fail arguments (less the holes, as PyPy passes them).
//! - the recorded bridge jumps to the loop's entry label; the loop's ops
//!   from there to the label the optimized bridge jumps to follow it, so
//!   that both end at that label, whose arguments are compared.
//!
//! Resume data is left out: the guards of the two sides fail into
//! different layouts of one interpreter state, and a log does not say
//! which slot is which. So a proof says that wherever the parent fails
//! the guard, both sides fail a guard under the same conditions or reach
//! the loop's label with the same arguments, calls and heap.
//!
//! Where the guard is in a loop's body, the parent's ops from its start
//! cover the body's first pass only: later iterations start from what
//! the body's jump gives, which the first pass does not cover, and what
//! PyPy knew at the guard then (classes and bounds kept invariant across
//! the loop edge) needs an argument by induction, not done here. Such a
//! result is said to hold for the first pass (`Scope::FirstPass`).

use traceopt_ir::{Arg, DescrKind, FailArg, LogTrace, Op, Opcode, Pos, Section, Trace, Type};

/// A bridge in context: the two traces to compare, or why there are none.
pub struct BridgePair {
    pub scope: Scope,
    /// The recorded bridge, then the loop up to the optimized bridge's
    /// target label.
    pub before: Trace,
    /// PyPy's optimized bridge.
    pub after: Trace,
}

/// What runs of the parent a comparison covers.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Scope {
    /// Every run that fails the guard.
    Whole,
    /// Runs that fail the guard on the first pass through a loop's body.
    FirstPass,
}

/// The bridge with the guard `guard` (its address) as its parent, in
/// context; `traces` are every optimized trace of the log.
pub fn bridge_in_context(
    recorded: &Trace,
    optimized: &Trace,
    guard: u64,
    traces: &[&LogTrace],
) -> Result<BridgePair, String> {
    let (parent, g) = find_guard(traces, guard)
        .ok_or_else(|| format!("no optimized trace of the log has the guard 0x{guard:x}"))?;
    // The guard is in a loop's body if the label the parent jumps back
    // to comes before it.
    let back_to = parent
        .ops
        .last()
        .filter(|op| op.opcode == Opcode::Jump)
        .and_then(|op| op.descr);
    let in_body = (0..g).any(|i| {
        let op = &parent.ops[i];
        op.opcode == Opcode::Label
            && op
                .descr
                .zip(back_to)
                .is_some_and(|(d, b)| parent.descr(d).text == parent.descr(b).text)
    });
    let scope = if in_body {
        Scope::FirstPass
    } else {
        Scope::Whole
    };
    let guard_op = &parent.ops[g];
    let fail_args: Vec<&FailArg> = (guard_op.fail_args.iter().flatten())
        .filter(|a| !matches!(a, FailArg::Hole))
        .collect();
    if fail_args.len() != recorded.inputs.len() || fail_args.len() != optimized.inputs.len() {
        return Err(format!(
            "the guard has {} fail arguments; the recorded bridge takes {} inputs, the optimized one {}",
            fail_args.len(),
            recorded.inputs.len(),
            optimized.inputs.len()
        ));
    }
    // The optimized bridge's target label, in the loop that has it.
    let Some(end) = optimized.ops.last() else {
        return Err("the optimized bridge is empty".into());
    };
    let target = match (end.opcode, end.descr.map(|d| &optimized.descr(d).kind)) {
        (Opcode::Jump, Some(DescrKind::TargetToken { address })) => Some(*address),
        (Opcode::Finish, _) => None,
        _ => {
            return Err(
                "the optimized bridge does not end with a jump to a label or a finish".into(),
            )
        }
    };
    let mut before = Splice::default();
    let bridge_inputs = before.prefix(parent, g)?;
    let mut after = before.clone();
    let recorded_map = before.bind(recorded, &bridge_inputs);
    let last = recorded.ops.len().saturating_sub(1);
    let recorded_map = before.append(recorded, recorded_map, 0..last)?;
    let optimized_map = after.bind(optimized, &bridge_inputs);
    after.append(optimized, optimized_map, 0..optimized.ops.len())?;
    let recorded_end = recorded.ops.last().ok_or("the recorded bridge is empty")?;
    match target {
        None => {
            before.append(recorded, recorded_map, last..last + 1)?;
        }
        Some(address) => {
            if recorded_end.opcode != Opcode::Jump {
                return Err(
                    "the optimized bridge jumps to a label; the recorded one does not".into(),
                );
            }
            let (lp, number, t) = find_label(traces, address).ok_or_else(|| {
                format!("no optimized trace has the label TargetToken({address})")
            })?;
            // A label of another loop (a version PyPy specialized later)
            // is another continuation: not compared.
            let jumps_to = recorded_end.descr.map(|d| &recorded.descr(d).kind);
            if let Some(DescrKind::Loop { number: Some(n) }) = jumps_to {
                if Some(*n) != number {
                    return Err(format!(
                        "the recorded bridge jumps to loop {n}, the optimized one into loop {}",
                        number.map_or("?".into(), |n| n.to_string())
                    ));
                }
            }
            // The loop's entry: its first label that takes what the
            // recorded bridge jumps with.
            let arity = recorded_end.args.len();
            let entry = (0..=t)
                .find(|&i| lp.ops[i].opcode == Opcode::Label && lp.ops[i].args.len() == arity)
                .ok_or("the loop has no label before the target that takes the recorded jump's arguments")?;
            let jump_args: Vec<Arg> = (recorded_end.args.iter())
                .map(|&a| before.arg(recorded, &recorded_map, a))
                .collect::<Result<_, _>>()?;
            let mut loop_map = vec![None; lp.num_values()];
            for (param, arg) in lp.ops[entry].args.iter().zip(jump_args) {
                match param {
                    Arg::Value(v) => loop_map[v.0 as usize] = Some(arg),
                    Arg::Const(_) => return Err("a label argument is a constant".into()),
                }
            }
            let loop_map = before.append(lp, loop_map, entry + 1..t)?;
            // End at the target label, as a jump with its arguments.
            let mut jump = lp.ops[t].clone();
            jump.opcode = Opcode::Jump;
            before.push(lp, &loop_map, &jump)?;
        }
    }
    Ok(BridgePair {
        scope,
        before: before.trace,
        after: after.trace,
    })
}

/// The optimized trace with the guard of this address, and its op index.
fn find_guard<'t>(traces: &[&'t LogTrace], address: u64) -> Option<(&'t Trace, usize)> {
    traces.iter().find_map(|t| {
        let trace = &t.trace;
        let i = trace.ops.iter().position(|op| {
            op.opcode.is_guard()
                && op.descr.is_some_and(|d| {
                    matches!(trace.descr(d).kind, DescrKind::Guard { address: a } if a == address)
                })
        })?;
        Some((trace, i))
    })
}

/// The optimized loop with the label of this target token: its trace,
/// its number and the label's op index.
fn find_label<'t>(
    traces: &[&'t LogTrace],
    address: u64,
) -> Option<(&'t Trace, Option<i64>, usize)> {
    traces
        .iter()
        .filter(|t| t.section == Section::OptLoop)
        .find_map(|t| {
            let trace = &t.trace;
            let i = trace.ops.iter().position(|op| {
                op.opcode == Opcode::Label
                    && op.descr.is_some_and(|d| {
                        matches!(trace.descr(d).kind, DescrKind::TargetToken { address: a } if a == address)
                    })
            })?;
            let number = match &t.header {
                Some(traceopt_ir::Header::Loop { number, .. }) => Some(*number),
                _ => None,
            };
            Some((trace, number, i))
        })
}

/// A trace built from pieces of others. Each piece maps its source's
/// values to args here (`None`: no value here).
#[derive(Clone, Default)]
struct Splice {
    trace: Trace,
}

type ValueMap = Vec<Option<Arg>>;

impl Splice {
    /// The parent's ops from its start up to its guard `g`, which fails.
    /// Returns the guard's fail arguments (less holes): the bridge's
    /// inputs.
    fn prefix(&mut self, parent: &Trace, g: usize) -> Result<Vec<Arg>, String> {
        let mut map = vec![None; parent.num_values()];
        for (i, &ty) in parent.inputs.iter().enumerate() {
            let input = self.trace.add_input(ty, &parent.names[i]);
            map[i] = Some(Arg::Value(input));
        }
        let map = self.append(parent, map, 0..g)?;
        // The guard fails.
        let guard = &parent.ops[g];
        let args: Vec<Arg> = (guard.args.iter())
            .map(|&a| self.arg(parent, &map, a))
            .collect::<Result<_, _>>()?;
        let turned = match guard.opcode {
            Opcode::GuardTrue => Some(Opcode::GuardFalse),
            Opcode::GuardFalse => Some(Opcode::GuardTrue),
            Opcode::GuardIsnull => Some(Opcode::GuardNonnull),
            Opcode::GuardNonnull => Some(Opcode::GuardIsnull),
            Opcode::GuardNoOverflow => Some(Opcode::GuardOverflow),
            Opcode::GuardOverflow => Some(Opcode::GuardNoOverflow),
            // Others have no opposite op: no fact is taken from them.
            _ => None,
        };
        let failing = |opcode: Opcode, args: Vec<Arg>| {
            let mut op = Op::new(opcode, args);
            op.fail_args = Some(Default::default());
            op
        };
        match (turned, guard.opcode) {
            (Some(opcode), _) => {
                self.trace.push(failing(opcode, args), "", Pos::default());
            }
            // guard_value fails where the two differ.
            (None, Opcode::GuardValue) => {
                let ne = match parent.arg_type(guard.args[0]) {
                    Type::Ref => Opcode::PtrNe,
                    _ => Opcode::IntNe,
                };
                let differ = self.trace.push(Op::new(ne, args), "", Pos::default());
                let op = failing(Opcode::GuardTrue, vec![Arg::Value(differ)]);
                self.trace.push(op, "", Pos::default());
            }
            _ => {}
        }
        (guard.fail_args.iter().flatten())
            .filter_map(|fail_arg| match fail_arg {
                FailArg::Arg(a) => Some(self.arg(parent, &map, *a)),
                FailArg::Hole => None,
                FailArg::Virtual(_) => Some(Err("a fail argument is a virtual".into())),
            })
            .collect()
    }

    /// A bridge's map: its inputs are the guard's fail arguments.
    fn bind(&self, bridge: &Trace, inputs: &[Arg]) -> ValueMap {
        let mut map = vec![None; bridge.num_values()];
        for (slot, arg) in map.iter_mut().zip(inputs) {
            *slot = Some(*arg);
        }
        map
    }

    /// `source`'s arg as an arg here (constants are interned again).
    fn arg(&mut self, source: &Trace, map: &ValueMap, arg: Arg) -> Result<Arg, String> {
        match arg {
            Arg::Const(c) => Ok(Arg::Const(self.trace.add_const(source.constant(c).clone()))),
            Arg::Value(v) => map
                .get(v.0 as usize)
                .copied()
                .flatten()
                .ok_or_else(|| format!("{} is used where it has no value", source.name(v))),
        }
    }

    /// Appends `source.ops[range]` (less labels and debug_merge_points).
    fn append(
        &mut self,
        source: &Trace,
        mut map: ValueMap,
        range: std::ops::Range<usize>,
    ) -> Result<ValueMap, String> {
        for i in range {
            if let Some(arg) = self.push(source, &map, &source.ops[i])? {
                map[source.value_of_op(i).0 as usize] = Some(arg);
            }
        }
        Ok(map)
    }

    /// Appends one op of `source`, its args, descr and fail args mapped;
    /// its value here.
    fn push(&mut self, source: &Trace, map: &ValueMap, op: &Op) -> Result<Option<Arg>, String> {
        if matches!(op.opcode, Opcode::Label | Opcode::DebugMergePoint) {
            return Ok(None);
        }
        let args = (op.args.iter())
            .map(|&a| self.arg(source, map, a))
            .collect::<Result<Vec<_>, _>>()?;
        let mut copy = Op::new(op.opcode, args);
        copy.descr = op.descr.map(|d| self.trace.import_descr(source.descr(d)));
        if let Some(fail_args) = &op.fail_args {
            let mut mapped = Vec::new();
            for fail_arg in fail_args {
                mapped.push(match fail_arg {
                    FailArg::Arg(a) => FailArg::Arg(self.arg(source, map, *a)?),
                    _ => FailArg::Hole,
                });
            }
            copy.fail_args = Some(mapped.into());
        }
        Ok(Some(Arg::Value(self.trace.push(copy, "", Pos::default()))))
    }
}
