//! Dead code: ops without a side effect (pure ops, loads, allocations)
//! whose results nothing uses are dropped, after the forward pass
//! (rewrites leave the ops they looked through behind, as PyPy's lazily
//! emitted ops would never have been emitted).
//!
//! One backward sweep marks what is live: every op with an effect (a
//! write, a call, a guard, the final op) and everything a live op uses,
//! fail arguments included. The live ops then move down in place,
//! renumbered; names, constants and descrs are kept.

use traceopt_ir::{Arg, Trace, ValueId};

pub fn remove_dead(trace: Trace, provenance: Vec<Option<usize>>) -> (Trace, Vec<Option<usize>>) {
    let inputs = trace.inputs.len();
    let mut live = vec![false; trace.ops.len()];
    let mut used = vec![false; trace.num_values()];
    for (i, op) in trace.ops.iter().enumerate().rev() {
        let has_effect = !op.opcode.removable_when_unused();
        if !(has_effect || used[inputs + i]) {
            continue;
        }
        live[i] = true;
        for arg in op.all_args() {
            if let Arg::Value(v) = arg {
                used[v.0 as usize] = true;
            }
        }
    }
    if live.iter().all(|&l| l) {
        return (trace, provenance);
    }
    // Ops move down in place; constants and descrs stay as they are.
    let mut renumber: Vec<Option<ValueId>> = (0..inputs).map(|i| Some(ValueId(i as u32))).collect();
    renumber.resize(trace.num_values(), None);
    let map = |arg: Arg, renumber: &[Option<ValueId>]| match arg {
        Arg::Value(v) => Arg::Value(renumber[v.0 as usize].expect("live ops use live values")),
        constant => constant,
    };
    let mut trace = trace;
    let ops = std::mem::take(&mut trace.ops);
    let positions = std::mem::take(&mut trace.op_pos);
    let mut names = std::mem::take(&mut trace.names);
    let op_names = names.split_off(inputs);
    trace.names = names;
    let mut kept = Vec::with_capacity(ops.len());
    trace.ops.reserve(ops.len());
    trace.op_pos.reserve(ops.len());
    trace.names.reserve(ops.len());
    for (i, ((mut op, pos), name)) in ops.into_iter().zip(positions).zip(op_names).enumerate() {
        if !live[i] {
            continue;
        }
        for arg in &mut op.args {
            *arg = map(*arg, &renumber);
        }
        for arg in op.resume_args_mut() {
            *arg = map(*arg, &renumber);
        }
        trace.ops.push(op);
        trace.op_pos.push(pos);
        trace.names.push(name);
        renumber[inputs + i] = Some(ValueId(trace.names.len() as u32 - 1));
        kept.push(provenance[i]);
    }
    (trace, kept)
}
