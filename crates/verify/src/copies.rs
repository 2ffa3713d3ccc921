//! Array copies whose effect info lists nothing: the item descr from the
//! arrays themselves.
//!
//! A PYPYLOG prints an array copy's descr as `<Callv 0 rriii EF=2 OS=1>`:
//! the helper (`OS_ARRAYCOPY`) without the effect info that names the
//! array descr it writes, so `strings.rs` cannot give it its meaning and
//! the validator would take it for a call that may write anything.
//! RPython's `ll_arraycopy` copies between two arrays of one type, so the
//! trace itself says which: the descr of the allocation that made either
//! array, or of an array op on either array before the call (which the
//! trace already required to be of that type). Each such call gets a
//! descr of its own, the same call with that one array written; a call
//! without that evidence, or with two different answers, stays as it is.
//!
//! Both traces of a comparison are rewritten, each from its own ops.

use std::borrow::Cow;

use crate::heap::{cell_of, Cell};
use traceopt_ir::{oopspec, Arg, Descr, DescrKind, HeapSet, Opcode, Trace};

/// `trace` with the item descr of each array copy that lacks one.
pub(crate) fn with_typed_array_copies(trace: &Trace) -> Cow<'_, Trace> {
    let mut typed: Vec<(usize, Descr)> = Vec::new();
    for (index, op) in trace.ops.iter().enumerate() {
        let Some(descr) = op.descr.map(|d| trace.descr(d)) else {
            continue;
        };
        let Some(call) = descr.as_call() else {
            continue;
        };
        let copies = matches!(call.oopspec, Some(oopspec::ARRAYCOPY | oopspec::ARRAYMOVE));
        let listed = matches!(&call.writes, HeapSet::Listed { arrays, .. } if arrays.len() == 1);
        if !copies || listed || op.args.len() != 6 {
            continue;
        }
        let Some(items) = array_descr(trace, index, &op.args[1..3]) else {
            continue;
        };
        let mut call = call.clone();
        call.writes = HeapSet::Listed {
            fields: Vec::new(),
            arrays: vec![items.text.clone()],
            interiors: Vec::new(),
        };
        let text = format!("{} writing {}", descr.text, items.text);
        typed.push((
            index,
            Descr {
                text: text.into(),
                kind: DescrKind::Call(call),
            },
        ));
    }
    if typed.is_empty() {
        return Cow::Borrowed(trace);
    }
    let mut trace = trace.clone();
    for (index, descr) in typed {
        trace.ops[index].descr = Some(trace.add_descr(descr));
    }
    Cow::Owned(trace)
}

/// The one array descr that the ops before op `at` give `arrays`: their
/// allocations and the array ops on them.
fn array_descr<'t>(trace: &'t Trace, at: usize, arrays: &[Arg]) -> Option<&'t Descr> {
    use Opcode::{ArraylenGc, NewArray, NewArrayClear};
    let mut found: Option<&Descr> = None;
    for &array in arrays {
        let Arg::Value(v) = array else { continue };
        let made = (trace.op_index(v).map(|i| &trace.ops[i]))
            .filter(|op| matches!(op.opcode, NewArray | NewArrayClear));
        let used = trace.ops[..at].iter().filter(|op| {
            let item = matches!(cell_of(op.opcode, None), Some(Cell::Item(_)));
            (item || op.opcode == ArraylenGc) && op.args.first() == Some(&array)
        });
        for op in made.into_iter().chain(used) {
            let Some(descr) = op.descr.map(|d| trace.descr(d)) else {
                continue;
            };
            if !matches!(descr.kind, DescrKind::Array(_)) {
                continue;
            }
            match found {
                Some(earlier) if earlier.text != descr.text => return None,
                _ => found = Some(descr),
            }
        }
    }
    found
}
