//! Errors of a run. A run that cannot go on stops with an `InterpError`
//! naming the op (its index and its `line:col`) and what went wrong; it
//! never panics, whatever the trace.
//!
//! `Fault` is the position-free form used by code that does not know which
//! op it serves (scalar arithmetic, `Env` implementations); the
//! interpreter turns a fault into an `InterpError` at the op.

use traceopt_ir::Pos;

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InterpError {
    /// The op has no defined result for these arguments (a shift count
    /// outside 0..=63, division by zero, a cast of NaN...). PyPy's JIT may do
    /// anything there, so the interpreter refuses to pick a value.
    #[error("{}:{}: undefined: {message}", pos.line, pos.col)]
    Undefined {
        op_index: usize,
        pos: Pos,
        message: String,
    },
    /// The input values (or a jump's values, when it loops back to the
    /// start) do not match the trace's inputs in number or type.
    /// `op_index` is `None` for the values given to `run`.
    #[error("{}:{}: wrong inputs: {message}", pos.line, pos.col)]
    WrongInputs {
        op_index: Option<usize>,
        pos: Pos,
        message: String,
    },
    /// A value of the wrong type, or an object of the wrong kind.
    #[error("{}:{}: type mismatch: {message}", pos.line, pos.col)]
    TypeMismatch {
        op_index: usize,
        pos: Pos,
        message: String,
    },
    #[error("{}:{}: null dereference: {message}", pos.line, pos.col)]
    NullDereference {
        op_index: usize,
        pos: Pos,
        message: String,
    },
    #[error("{}:{}: out of bounds: {message}", pos.line, pos.col)]
    OutOfBounds {
        op_index: usize,
        pos: Pos,
        message: String,
    },
    /// A hint to the optimizer (`assert_not_none`, `record_exact_value_*`)
    /// that does not hold.
    #[error("{}:{}: hint violated: {message}", pos.line, pos.col)]
    HintViolated {
        op_index: usize,
        pos: Pos,
        message: String,
    },
    /// An op (or an argument to it) the interpreter does not model.
    #[error("{}:{}: unsupported: {message}", pos.line, pos.col)]
    Unsupported {
        op_index: usize,
        pos: Pos,
        message: String,
    },
    /// The trace is not well formed where it runs: wrong argument count, a
    /// use of an undefined or dead value, a missing descr, a jump that does
    /// not fit its label, no `jump`/`finish` at the end (`op_index` is then
    /// `trace.ops.len()`). The checker reports these statically.
    #[error("{}:{}: malformed trace: {message}", pos.line, pos.col)]
    Malformed {
        op_index: usize,
        pos: Pos,
        message: String,
    },
}

impl InterpError {
    /// The op the error is about (`None` for the inputs given to `run`).
    pub fn op_index(&self) -> Option<usize> {
        match self {
            InterpError::WrongInputs { op_index, .. } => *op_index,
            InterpError::Undefined { op_index, .. }
            | InterpError::TypeMismatch { op_index, .. }
            | InterpError::NullDereference { op_index, .. }
            | InterpError::OutOfBounds { op_index, .. }
            | InterpError::HintViolated { op_index, .. }
            | InterpError::Unsupported { op_index, .. }
            | InterpError::Malformed { op_index, .. } => Some(*op_index),
        }
    }

    pub fn pos(&self) -> Pos {
        match self {
            InterpError::Undefined { pos, .. }
            | InterpError::WrongInputs { pos, .. }
            | InterpError::TypeMismatch { pos, .. }
            | InterpError::NullDereference { pos, .. }
            | InterpError::OutOfBounds { pos, .. }
            | InterpError::HintViolated { pos, .. }
            | InterpError::Unsupported { pos, .. }
            | InterpError::Malformed { pos, .. } => *pos,
        }
    }

    pub fn message(&self) -> &str {
        match self {
            InterpError::Undefined { message, .. }
            | InterpError::WrongInputs { message, .. }
            | InterpError::TypeMismatch { message, .. }
            | InterpError::NullDereference { message, .. }
            | InterpError::OutOfBounds { message, .. }
            | InterpError::HintViolated { message, .. }
            | InterpError::Unsupported { message, .. }
            | InterpError::Malformed { message, .. } => message,
        }
    }
}

/// What went wrong in one op, before the interpreter adds where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    Undefined(String),
    TypeMismatch(String),
    OutOfBounds(String),
    Unsupported(String),
}

/// Which `InterpError` to build; used inside the crate only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Undefined,
    TypeMismatch,
    NullDereference,
    OutOfBounds,
    HintViolated,
    Unsupported,
    Malformed,
}

impl InterpError {
    pub(crate) fn new(kind: Kind, op_index: usize, pos: Pos, message: String) -> InterpError {
        match kind {
            Kind::Undefined => InterpError::Undefined {
                op_index,
                pos,
                message,
            },
            Kind::TypeMismatch => InterpError::TypeMismatch {
                op_index,
                pos,
                message,
            },
            Kind::NullDereference => InterpError::NullDereference {
                op_index,
                pos,
                message,
            },
            Kind::OutOfBounds => InterpError::OutOfBounds {
                op_index,
                pos,
                message,
            },
            Kind::HintViolated => InterpError::HintViolated {
                op_index,
                pos,
                message,
            },
            Kind::Unsupported => InterpError::Unsupported {
                op_index,
                pos,
                message,
            },
            Kind::Malformed => InterpError::Malformed {
                op_index,
                pos,
                message,
            },
        }
    }
}

impl Fault {
    pub(crate) fn split(self) -> (Kind, String) {
        match self {
            Fault::Undefined(m) => (Kind::Undefined, m),
            Fault::TypeMismatch(m) => (Kind::TypeMismatch, m),
            Fault::OutOfBounds(m) => (Kind::OutOfBounds, m),
            Fault::Unsupported(m) => (Kind::Unsupported, m),
        }
    }
}
