//! Integer abstract domains of traceopt: [`KnownBits`] (tristate numbers)
//! and [`IntBound`] (a signed interval with known bits). The transfer
//! functions are written once over the [`Word`] trait and run on `i64`
//! in the optimizer and on SMT terms ([`symbolic::Sym`]) in the proofs.

// The transfer functions are named after the trace ops they model
// (`add`, `neg`, ...); they are not the std operators, whose traits would
// promise plain arithmetic.
#![allow(clippy::should_implement_trait)]

mod forward;
pub mod intbound;
pub mod knownbits;
pub mod refine;
pub mod symbolic;
pub mod word;

pub use intbound::{Contradiction, IntBound};
pub use knownbits::{KnownBits, MulStep, ParseKnownBitsError};
pub use refine::{Operand, Relation};
pub use word::{cond, Bit, Merge, Word};
