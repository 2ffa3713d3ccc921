//! Bridges: what they know on entry, and entering a peeled loop at its
//! label.
//!
//! A bridge leaves its parent trace at a guard, and what the parent had
//! established by then still holds of the values it takes (PyPy's
//! bridges know the classes their parent checked). `facts_on_exit` finds
//! those facts by optimizing the parent's run up to the guard
//! (`Trace::exit_at`); `optimize_assuming` optimizes the bridge knowing
//! them. The validator proves both halves: the facts hold at the guard
//! (`traceopt_verify::verify_exit_facts`), and the bridge is equivalent
//! to its output wherever its inputs satisfy them.
//!
//! A trace that ends by jumping to
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

use traceopt_ir::{Fact, LabelState, Opcode, Trace};

use crate::driver::{optimize_knowing, End, Infeasible, Optimized, Passes, Start};
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

/// What holds of each value the run `exit` (`Trace::exit_at`) passes on
/// at its final jump, as far as the optimizer can tell; `None` where it
/// finds the run can never get there.
pub fn facts_on_exit(exit: &Trace, passes: Passes) -> Option<Vec<Fact>> {
    let start = Start::Inputs(&[]);
    let (_, ending) = optimize_knowing(exit, passes, &[], start, End::Describe).ok()?;
    let facts = ending?.state.facts;
    let arity = exit.ops.last().map_or(0, |jump| jump.args.len());
    (facts.len() == arity).then_some(facts)
}

/// Optimizes `input` knowing `assumed` of its inputs (one fact for each,
/// or none).
pub fn optimize_assuming(
    input: &Trace,
    passes: Passes,
    assumed: &[Fact],
) -> Result<Optimized, Infeasible> {
    let start = Start::Inputs(assumed);
    optimize_knowing(input, passes, &[], start, End::Plain).map(|(optimized, _)| optimized)
}

/// Optimizes `input`, whose final jump goes to the start of the loop
/// `target` was peeled from, to jump to `target`'s label, knowing
/// `assumed` of its inputs; `None` where its state at the jump does not
/// fit the label's (the trace is then optimized as any other).
pub fn enter_peeled(
    input: &Trace,
    passes: Passes,
    assumed: &[Fact],
    target: &Peeled,
) -> Result<Option<Entered>, Infeasible> {
    let pool = &target.optimized.trace;
    let label = &pool.ops[target.label];
    let ends_in_jump = input.ops.last().map(|op| op.opcode) == Some(Opcode::Jump);
    if !ends_in_jump || label.opcode != Opcode::Label {
        return Ok(None);
    }
    let end = End::Enter(&target.state, pool);
    let start = Start::Inputs(assumed);
    let (mut optimized, ending) = optimize_knowing(input, passes, &[], start, end)?;
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
