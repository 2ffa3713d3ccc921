//! Errors of a run. A run that cannot go on stops with an `InterpError`
//! naming the op (its index and its `line:col`) and what went wrong (its
//! `ErrorKind` and a message); it never panics, whatever the trace.
//!
//! `Fault` is the position-free form used by code that does not know which
//! op it serves (scalar arithmetic, `Env` implementations); the
//! interpreter turns a fault into an `InterpError` at the op.

use std::fmt;
use traceopt_ir::Pos;

/// What went wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The op has no defined result for these arguments (a shift count
    /// outside 0..=63, division by zero, a cast of NaN...). PyPy's JIT may do
    /// anything there, so the interpreter refuses to pick a value.
    Undefined,
    /// The input values (or a jump's values, when it loops back to the
    /// start) do not match the trace's inputs in number or type.
    /// `op_index` is `None` for the values given to `run`.
    WrongInputs,
    /// A value of the wrong type, or an object of the wrong kind.
    TypeMismatch,
    NullDereference,
    OutOfBounds,
    /// A hint to the optimizer (`assert_not_none`, `record_exact_value_*`)
    /// that does not hold.
    HintViolated,
    /// An op (or an argument to it) the interpreter does not model.
    Unsupported,
    /// The trace is not well formed where it runs: wrong argument count, a
    /// use of an undefined or dead value, a missing descr, a jump that does
    /// not fit its label, no `jump`/`finish` at the end (`op_index` is then
    /// `trace.ops.len()`). The checker reports these statically.
    Malformed,
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ErrorKind::Undefined => "undefined",
            ErrorKind::WrongInputs => "wrong inputs",
            ErrorKind::TypeMismatch => "type mismatch",
            ErrorKind::NullDereference => "null dereference",
            ErrorKind::OutOfBounds => "out of bounds",
            ErrorKind::HintViolated => "hint violated",
            ErrorKind::Unsupported => "unsupported",
            ErrorKind::Malformed => "malformed trace",
        })
    }
}

/// Why a run stopped, and where.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}:{}: {kind}: {message}", pos.line, pos.col)]
pub struct InterpError {
    pub kind: ErrorKind,
    /// The op the error is about (`None` only for `WrongInputs` about the
    /// values given to `run`).
    pub op_index: Option<usize>,
    pub pos: Pos,
    pub message: String,
}

/// What went wrong in one op, before the interpreter adds where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    Undefined(String),
    TypeMismatch(String),
    OutOfBounds(String),
    Unsupported(String),
}

impl Fault {
    pub(crate) fn split(self) -> (ErrorKind, String) {
        match self {
            Fault::Undefined(m) => (ErrorKind::Undefined, m),
            Fault::TypeMismatch(m) => (ErrorKind::TypeMismatch, m),
            Fault::OutOfBounds(m) => (ErrorKind::OutOfBounds, m),
            Fault::Unsupported(m) => (ErrorKind::Unsupported, m),
        }
    }
}
