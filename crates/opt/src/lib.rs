//! traceopt's optimizer: one forward pass over a trace (`driver`), with
//! the integer domain (`intbounds`) and the peephole rules compiled from
//! `rules/*.rules` (`rules`).

pub mod confluence;
mod cse;
pub mod dce;
pub mod driver;
mod floats;
mod fold;
mod guards;
mod heap;
pub mod inject;
pub mod intbounds;
mod lazy;
pub mod relations;
pub mod rules;
mod values;
mod virtuals;

pub use driver::{optimize, optimize_without, Infeasible, Optimized, Passes};
pub use inject::Bug;
pub use rules::RULES;
