//! Dead code: ops without a side effect (pure ops, loads, allocations)
//! whose results nothing uses are dropped, after the forward pass
//! (rewrites leave the ops they looked through behind, as PyPy's lazily
//! emitted ops would never have been emitted).
//!
//! One backward sweep marks what is live: every op with an effect (a
//! write, a call, a guard, the final op; a pure call that may raise, as
//! raising is its effect) and everything a live op uses,
//! fail arguments included. The live ops then move down in place,
//! renumbered; names, constants and descrs are kept. (Few ops die: most
//! traces have none, and the ops before the first dead one stay as they
//! are.)

use traceopt_ir::{Arg, Descr, Flags, Op, Trace, ValueId};

pub fn remove_dead(
    trace: Trace,
    mut provenance: Vec<Option<usize>>,
) -> (Trace, Vec<Option<usize>>) {
    let inputs = trace.inputs.len();
    debug_assert_eq!(provenance.len(), trace.ops.len(), "one provenance per op");
    let mut live = vec![false; trace.ops.len()];
    let mut used = vec![false; trace.num_values()];
    for (i, op) in trace.ops.iter().enumerate().rev() {
        let has_effect = !op.opcode.removable_when_unused() || raises_maybe(&trace, op);
        if !(has_effect || used[inputs + i]) {
            continue;
        }
        live[i] = true;
        let mut mark = |arg: Arg| {
            if let Arg::Value(v) = arg {
                used[v.0 as usize] = true;
            }
        };
        match has_resume_data(op) {
            true => op.for_each_arg(mark),
            false => op.args.iter().for_each(|&arg| mark(arg)),
        }
    }
    // The ops before the first dead one keep their numbers.
    let Some(first_dead) = live.iter().position(|&l| !l) else {
        return (trace, provenance);
    };
    let mut renumber: Vec<Option<ValueId>> = (0..inputs + first_dead)
        .map(|v| Some(ValueId(v as u32)))
        .collect();
    renumber.resize(trace.num_values(), None);
    // Live ops are renumbered where they are, then move down in place
    // (no second copy of the trace: `retain` moves each once), with
    // their positions, names and provenance; the dead ones go.
    // Constants and descrs stay as they are.
    let mut trace = trace;
    let mut kept = first_dead;
    for i in first_dead + 1..live.len() {
        if !live[i] {
            continue;
        }
        let op = &mut trace.ops[i];
        let map = |arg: &mut Arg| {
            if let Arg::Value(v) = arg {
                *v = renumber[v.0 as usize].expect("live ops use live values");
            }
        };
        match has_resume_data(op) {
            true => op.for_each_arg_mut(map),
            false => op.args.iter_mut().for_each(map),
        }
        renumber[inputs + i] = Some(ValueId((inputs + kept) as u32));
        trace.op_pos[kept] = trace.op_pos[i];
        trace.names.swap(inputs + kept, inputs + i);
        provenance[kept] = provenance[i];
        kept += 1;
    }
    let mut index = 0;
    trace.ops.retain(|_| {
        index += 1;
        live[index - 1]
    });
    trace.op_pos.truncate(kept);
    trace.names.truncate(inputs + kept);
    provenance.truncate(kept);
    (trace, provenance)
}

/// Whether `op` has operands besides its arguments (a guard's fail
/// arguments, virtuals or pending writes): most ops have none, and their
/// arguments are all `for_each_arg` would visit.
fn has_resume_data(op: &Op) -> bool {
    op.fail_args.is_some() || !op.virtuals.is_empty() || !op.pending.is_empty()
}

/// Whether `op` is a pure call that may raise: unused, it still decides
/// whether the `guard_no_exception` after it passes.
fn raises_maybe(trace: &Trace, op: &Op) -> bool {
    op.opcode.has(Flags::CALL) && Descr::call_may_raise(op.descr.map(|d| trace.descr(d)))
}
