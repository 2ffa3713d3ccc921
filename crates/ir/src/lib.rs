//! traceopt's trace IR: the op table, traces, PyPy's text formats
//! (test format and `PYPYLOG` files), the printer and the checker.

pub mod check;
pub mod descr;
pub mod error;
pub mod fact;
pub mod file;
pub mod log;
pub mod namespace;
pub mod oopspec;
pub mod opcode;
pub mod parse;
pub mod peer;
pub use peer::PureResult;
pub mod print;
pub mod shared;
pub mod stats;
pub mod trace;

pub use check::{check, CheckError, CheckOptions};
pub use descr::{
    ArrayDescr, CallDescr, CellKind, Descr, DescrKind, ExtraEffect, FieldDescr, HeapSet,
    InteriorDescr, QuasiImmutDescr, SizeDescr, VrefLayout,
};
pub use error::ParseError;
pub use fact::{
    Derived, EntryTest, Fact, Known, LabelState, Path, SeenClass, SiteClass, Source, Step,
};
pub use file::{decode, parse_file, read_file, ReadFile, TraceFile};
pub use log::{parse_log, read_log, Header, Log, LogTrace, Section, TracePair};
pub use namespace::{FieldValue, NamedConst, Namespace, PtrInfo};
pub use opcode::{Arity, Flags, OpInfo, Opcode, Type, MAX_GUARDS_FAILED_EARLY, OP_TABLE};
pub use parse::{parse_trace, parse_trace_with, TraceParser};
pub use print::{print_trace, print_trace_with, PrintOptions};
pub use shared::shared_dir;
pub use smallvec::smallvec;
pub use stats::OpCounts;
pub use thin_vec::{thin_vec, ThinVec};
pub use trace::{
    Arg, Args, Const, ConstId, DescrId, FailArg, JumpTarget, Name, Op, PendingWrite, Pos, Trace,
    ValueId, Virtual, VirtualKind,
};
