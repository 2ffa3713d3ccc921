//! traceopt's optimizer: one forward pass over a trace (`driver`), with
//! the integer domain (`intbounds`) and the peephole rules compiled from
//! `rules/*.rules` (`rules`); loops peeled into preamble and body
//! (`peel`), and traces that jump to a peeled loop entering it at its
//! label (`entry`).

pub mod confluence;
mod cse;
pub mod dce;
pub mod driver;
pub mod entry;
mod floats;
mod fold;
mod guards;
mod heap;
pub mod inject;
pub mod intbounds;
mod lazy;
mod names;
pub mod peel;
pub mod relations;
pub mod rules;
mod values;
mod virtuals;

pub use driver::{
    optimize, optimize_without, optimize_without_rules, Infeasible, Optimized, Passes,
};
pub use entry::{enter_peeled, facts_on_exit, optimize_assuming, Entered, NoEntry};
pub use inject::Bug;
pub use peel::{optimize_or_peel, peel, Output, Peeled};
pub use rules::RULES;
pub use traceopt_rules::runtime::{PatternNode, RuleInfo};

use traceopt_ir::{check, CheckOptions, Flags, Trace};

/// The first reason the optimizer's `output` is not a well-formed trace
/// (as `traceopt check` takes one), located at the input line its op
/// stands for; `None` where it is well formed. An output the checker
/// rejects is an optimizer bug whatever the validator says of it.
pub fn malformed_output(input: &Trace, output: &Trace) -> Option<String> {
    let ends = |t: &Trace| t.ops.last().is_some_and(|op| op.opcode.has(Flags::FINAL));
    let options = CheckOptions {
        require_fail_args: false,
        partial: !ends(input),
    };
    let error = check(output, "output", options).into_iter().next()?;
    Some(format!(
        "the output is not well formed: at the op from input line {}: expected {}, found {}",
        error.line, error.expected, error.found
    ))
}
