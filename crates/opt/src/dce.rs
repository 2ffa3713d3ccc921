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
        op.for_each_arg(|arg| {
            if let Arg::Value(v) = arg {
                used[v.0 as usize] = true;
            }
        });
    }
    // The ops before the first dead one keep their numbers.
    let Some(first_dead) = live.iter().position(|&l| !l) else {
        return (trace, provenance);
    };
    let mut renumber: Vec<Option<ValueId>> = (0..inputs).map(|i| Some(ValueId(i as u32))).collect();
    renumber.resize(trace.num_values(), None);
    let map = |arg: Arg, renumber: &[Option<ValueId>]| match arg {
        Arg::Value(v) => Arg::Value(renumber[v.0 as usize].expect("live ops use live values")),
        constant => constant,
    };
    // Live ops move down in place (no second copy of the trace);
    // constants and descrs stay as they are.
    let mut trace = trace;
    let (mut i, mut kept) = (0, 0);
    trace.ops.retain_mut(|op| {
        let live = live[i];
        if live && i > first_dead {
            op.for_each_arg_mut(|arg| *arg = map(*arg, &renumber));
        }
        if live {
            renumber[inputs + i] = Some(ValueId((inputs + kept) as u32));
            kept += 1;
        }
        i += 1;
        live
    });
    let mut at = 0usize..;
    trace.op_pos.retain(|_| live[at.next().unwrap()]);
    let mut at = 0usize..;
    trace.names.retain(|_| {
        let v = at.next().unwrap();
        v < inputs || live[v - inputs]
    });
    let provenance = (provenance.into_iter().zip(&live))
        .filter_map(|(p, &l)| l.then_some(p))
        .collect();
    (trace, provenance)
}
