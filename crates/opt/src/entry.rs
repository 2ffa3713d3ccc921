//! Entering a peeled loop at its label. A trace that ends by jumping to
//! the start of a loop (a bridge: PyPy's `jump(..., descr=<LoopN>)`)
//! would run that loop's preamble again; where the loop was peeled, the
//! jump may go to its label instead, as PyPy's bridges do, when the
//! trace passes on a state of the label's shape (the same objects, kept
//! virtual and unboxed into the label's arguments) and already knows
//! every fact the body takes for granted. The fields the label reads
//! out of its arguments (its derived arguments) are read before the
//! jump, unless the heap cache knows them. Otherwise the trace keeps its
//! jump to the start.
//!
//! The witness is the trace's own state at its jump (a `LabelState`
//! whose objects are the trace's own allocations) with the loop's facts;
//! `traceopt_verify::verify_entry` proves that the entry reaches the
//! state the loop's induction starts from.

use traceopt_ir::{LabelState, Opcode, Trace};

use crate::driver::{optimize_knowing, End, Infeasible, Optimized, Passes};
use crate::peel::{weaken, Peeled};

/// A trace optimized to jump to a peeled loop's label.
#[derive(Clone, Debug)]
pub struct Entered {
    /// The output, its final jump going to the loop's label (its descr
    /// is the label's).
    pub optimized: Optimized,
    /// What the jump's arguments stand for: the loop's inputs in terms
    /// of them, with the facts the loop's body takes for granted.
    pub state: LabelState,
}

/// Optimizes `input`, whose final jump goes to the start of the loop
/// `target` was peeled from, to jump to `target`'s label; `None` where
/// its state at the jump does not fit the label's (the trace is then
/// optimized as any other).
pub fn enter_peeled(
    input: &Trace,
    passes: Passes,
    target: &Peeled,
) -> Result<Option<Entered>, Infeasible> {
    let pool = &target.optimized.trace;
    let label = &pool.ops[target.label];
    let ends_in_jump = input.ops.last().map(|op| op.opcode) == Some(Opcode::Jump);
    if !ends_in_jump || label.opcode != Opcode::Label {
        return Ok(None);
    }
    let end = End::Enter(&target.state, pool);
    let (mut optimized, ending) = optimize_knowing(input, passes, &[], None, end)?;
    let Some(ending) = ending else {
        return Ok(None);
    };
    let trace = &optimized.trace;
    let types_fit = label.args.len() == ending.leaves.len()
        && (label.args.iter().zip(&ending.leaves))
            .all(|(&a, &b)| pool.arg_type(a) == trace.arg_type(b));
    let facts_known = (target.state.facts.iter().zip(&ending.state.facts))
        .all(|(assumed, held)| weaken(assumed, held) == *assumed);
    if !types_fit || !facts_known || !target.state.same_shape(pool, &ending.state, trace) {
        return Ok(None);
    }
    let token = label
        .descr
        .map(|d| optimized.trace.add_descr(pool.descr(d).clone()));
    let jump = optimized.trace.ops.last_mut().expect("the captured jump");
    jump.descr = token;
    Ok(Some(Entered {
        optimized,
        state: LabelState {
            facts: target.state.facts.clone(),
            ..ending.state
        },
    }))
}
