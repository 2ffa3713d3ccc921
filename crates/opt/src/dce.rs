//! Dead code: pure ops whose results nothing uses are dropped, after the
//! forward pass (rewrites leave the ops they looked through behind, as
//! PyPy's lazily emitted ops would never have been emitted).
//!
//! One backward sweep marks what is live: every op that is not pure (it
//! has an effect, or is a guard or the final op) and everything a live op
//! uses, fail arguments included. The trace is then rebuilt with the live
//! ops, renumbered, names and descrs kept.

use traceopt_ir::{Arg, Flags, Trace, ValueId};

pub fn remove_dead(trace: Trace, provenance: Vec<Option<usize>>) -> (Trace, Vec<Option<usize>>) {
    let inputs = trace.inputs.len();
    let mut live = vec![false; trace.ops.len()];
    let mut used = vec![false; trace.num_values()];
    for (i, op) in trace.ops.iter().enumerate().rev() {
        let has_effect = !op.opcode.has(Flags::PURE);
        if !(has_effect || used[inputs + i]) {
            continue;
        }
        live[i] = true;
        let fail_args = op.fail_args.iter().flatten().flatten();
        for arg in op.args.iter().chain(fail_args) {
            if let Arg::Value(v) = arg {
                used[v.0 as usize] = true;
            }
        }
    }
    if live.iter().all(|&l| l) {
        return (trace, provenance);
    }
    let mut out = Trace::new();
    let mut renumber: Vec<Option<ValueId>> = vec![None; trace.num_values()];
    for (i, &ty) in trace.inputs.iter().enumerate() {
        renumber[i] = Some(out.add_input(ty, trace.name(ValueId(i as u32))));
    }
    out.input_pos = trace.input_pos;
    let mut kept = Vec::new();
    let map = |arg: Arg, out: &mut Trace, renumber: &[Option<ValueId>]| match arg {
        Arg::Value(v) => Arg::Value(renumber[v.0 as usize].expect("live ops use live values")),
        Arg::Const(c) => Arg::Const(out.add_const(trace.constant(c).clone())),
    };
    for (i, op) in trace.ops.iter().enumerate() {
        if !live[i] {
            continue;
        }
        let mut copy = op.clone();
        copy.args = op
            .args
            .iter()
            .map(|&a| map(a, &mut out, &renumber))
            .collect();
        copy.fail_args = op.fail_args.as_ref().map(|fa| {
            fa.iter()
                .map(|a| a.map(|a| map(a, &mut out, &renumber)))
                .collect()
        });
        copy.descr = op.descr.map(|d| out.add_descr(trace.descr(d).clone()));
        let v = trace.value_of_op(i);
        let new = out.push(copy, trace.name(v), trace.op_pos[i]);
        renumber[v.0 as usize] = Some(new);
        kept.push(provenance[i]);
    }
    (out, kept)
}
