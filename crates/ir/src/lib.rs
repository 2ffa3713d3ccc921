//! traceopt's trace IR: the op table, traces, PyPy's text formats
//! (test format and `PYPYLOG` files), the printer and the checker.

pub mod check;
pub mod descr;
pub mod error;
pub mod file;
pub mod log;
pub mod opcode;
pub mod parse;
pub mod peer;
pub mod print;
pub mod stats;
pub mod trace;

pub use check::{check, CheckError, CheckOptions};
pub use descr::{CellKind, Descr, DescrKind};
pub use error::ParseError;
pub use file::{parse_file, TraceFile};
pub use log::{parse_log, Header, Log, LogTrace, Section, TracePair};
pub use opcode::{Arity, Flags, OpInfo, Opcode, Type, OP_TABLE};
pub use parse::{parse_trace, TraceParser};
pub use print::{print_trace, print_trace_with, PrintOptions};
pub use stats::OpCounts;
pub use trace::{Arg, Const, ConstId, DescrId, JumpTarget, Op, Pos, Trace, ValueId};
