//! traceopt's miner: finds the integer optimizations an optimized trace
//! missed, and cuts each down to a small trace that shows it.
//!
//! For every integer op of a trace (ours or PyPy's), the solver is
//! asked, knowing what the ops and guards before it mean, whether its
//! result is always one constant or always an earlier value; for every
//! guard on integers, whether it always passes (`search`). Each such hit
//! is something an optimizer could have removed. A hit is minimized
//! (`minimize`) and printed as a test-format trace with canonical names
//! (`slice`), so that hits of the same pattern print alike and can be
//! grouped by their `shape`.
//!
//! Only integer arithmetic and integer guards are modelled: every other
//! integer value (a field read, a call's result) is a free input. A hit
//! therefore holds on every run the trace can make; what the miner does
//! not find may still be true through the heap.

pub mod cone;
pub mod encoding;
pub mod minimize;
pub mod search;
pub mod slice;

use traceopt_ir::Trace;
use traceopt_smt::{Solver, SolverError};

pub use search::Hit;
pub use slice::{segments, Slice};

use slice::{canonical_names, print, Constants};

/// What the miner found at a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Finding {
    /// The op's result is always this constant.
    Constant(i64),
    /// The op's result is always this earlier value (of the slice).
    Same(usize),
    /// The guard always passes.
    Implied,
}

impl Finding {
    /// A word for the kind of finding: `constant`, `same` or `implied`.
    pub fn kind(self) -> &'static str {
        match self {
            Finding::Constant(_) => "constant",
            Finding::Same(_) => "same",
            Finding::Implied => "implied",
        }
    }
}

/// What a search cost and found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Lines (integer ops and guards) looked at.
    pub lines: usize,
    /// Solver queries, minimizing included.
    pub queries: usize,
    /// Queries the solver could not decide (each a hit it may have missed).
    pub unknown: usize,
    pub hits: usize,
}

impl std::ops::AddAssign for Tally {
    fn add_assign(&mut self, other: Tally) {
        self.lines += other.lines;
        self.queries += other.queries;
        self.unknown += other.unknown;
        self.hits += other.hits;
    }
}

/// How to mine.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Cut each hit down (`minimize`); else it is shown in its segment.
    pub minimize: bool,
    /// Queries the minimizing of one hit may spend.
    pub budget: usize,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            minimize: true,
            budget: 200,
        }
    }
}

/// A hit, ready to report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mined {
    /// The index of the op in the trace.
    pub op: usize,
    pub finding: Finding,
    /// What was found, in the example's names ("i3 is always i1").
    pub what: String,
    /// The example: the minimized trace, with `what` as a comment.
    pub example: String,
    /// The example with its constants hidden, and the kind of finding:
    /// hits of one shape are one pattern.
    pub shape: String,
}

/// Mines `trace`: every hit, in order, with what it cost.
pub fn mine(
    trace: &Trace,
    solver: &mut Solver,
    options: Options,
) -> Result<(Vec<Mined>, Tally), SolverError> {
    // Many small queries, each in a scope of its own: a fresh solver
    // process for each, or a second solver where one gives up, would cost
    // more than it saves.
    let settings = (solver.fresh_after_work(), solver.second_opinions());
    solver.set_fresh_after_work(false);
    solver.set_second_opinions(false);
    let result = mine_segments(trace, solver, options);
    solver.set_fresh_after_work(settings.0);
    solver.set_second_opinions(settings.1);
    result
}

fn mine_segments(
    trace: &Trace,
    solver: &mut Solver,
    options: Options,
) -> Result<(Vec<Mined>, Tally), SolverError> {
    let mut tally = Tally::default();
    let mut mined = Vec::new();
    for segment in segments(trace) {
        for hit in search::search(&segment, solver, &mut tally)? {
            let small = match options.minimize {
                true => minimize::minimize(
                    &segment,
                    hit.line,
                    hit.finding,
                    solver,
                    options.budget,
                    &mut tally,
                )?,
                false => {
                    let mut prefix = segment.clone();
                    prefix.lines.truncate(hit.line + 1);
                    prefix
                }
            };
            mined.push(report(&small, segment.lines[hit.line].origin, hit.finding));
        }
    }
    Ok((mined, tally))
}

/// A hit at the last line of `small`, for people.
fn report(small: &Slice, op: usize, finding: Finding) -> Mined {
    let names = canonical_names(small);
    let last = small.lines.last().expect("a hit is a line");
    let what = match (finding, last.result) {
        (Finding::Constant(c), Some(r)) => format!("{} is always {c}", names[&r]),
        (Finding::Same(v), Some(r)) => format!("{} is always {}", names[&r], names[&v]),
        _ => format!("{} always passes", last.opcode.name()),
    };
    let example = print(small, Some(&what), Constants::Shown);
    // (A value the op equals is part of the pattern.)
    let kind = match finding {
        Finding::Same(v) => format!("same as {}", names[&v]),
        other => other.kind().to_string(),
    };
    let shape = print(small, Some(&kind), Constants::Hidden);
    Mined {
        op,
        finding,
        what,
        example,
        shape,
    }
}
