//! traceopt's optimizer: one forward pass over a trace (`driver`), with
//! the integer domain (`intbounds`) and the peephole rules compiled from
//! `rules/*.rules` (`rules`).

pub mod confluence;
pub mod dce;
pub mod driver;
pub mod inject;
pub mod intbounds;
pub mod relations;
pub mod rules;

pub use driver::{optimize, optimize_without, Infeasible, Optimized, Passes};
pub use inject::Bug;
pub use rules::RULES;
