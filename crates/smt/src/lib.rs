//! traceopt's SMT layer: a small term type for 64-bit bitvectors and
//! booleans printed as SMT-LIB 2 (`term`), a long-lived solver process per
//! thread with push/pop and a timeout per query (`solver`), and the SMT
//! meaning of every integer op of the op table (`encode`).

pub mod encode;
pub mod names;
pub mod solver;
pub mod term;

pub use encode::{encode, Encoded};
pub use names::{Name, ToName};
pub use solver::{Model, Outcome, Sat, Solver, SolverError, SolverKind};
pub use term::{Fun, Sort, Term};
