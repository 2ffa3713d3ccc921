//! traceopt's reference interpreter: the concrete meaning of every op in
//! the op table.
//!
//! `run` executes a trace on input values and says how it ended: `finish`
//! reached, a guard failed (with the values of its fail arguments), a jump
//! left the trace, or the loop went round `max_iterations` times. The
//! fuzzer and the tests compare traces by running them; the optimizer can
//! fold constants with `arith::eval`.
//!
//! What the trace assumes about the world outside it (class addresses,
//! constant objects, callees, raw memory, invalidation) is asked of an
//! `Env`; `DefaultEnv` answers deterministically (see `env`). What a trace
//! cannot mean is refused with an `InterpError` rather than guessed; its
//! `ErrorKind` says which: undefined arithmetic, null dereferences,
//! out-of-bounds indices, violated hints, ill-typed or ill-formed traces (a
//! trace need not have passed the checker), backend-only ops. No trace
//! makes it panic.
//!
//! Semantics, family by family:
//! - integers and floats: see `arith` (wrapping, Python division, shift
//!   counts outside 0..=63 undefined, IEEE floats);
//! - `*_ovf` ops give the wrapped result and set an overflow flag (the
//!   mathematical result does not fit in an i64); `guard_no_overflow` fails
//!   when it is set, `guard_overflow` when it is not; other ops leave it;
//! - `guard_value` compares with `==` (IEEE for floats: NaN is never equal,
//!   `0.0 == -0.0`), as PyPy's llgraph backend does;
//! - heap: `new` makes an instance of class 0, `new_with_vtable` one of the
//!   env's class for the size descr; fields are keyed by descr text; a
//!   field never written reads the env's answer (zero by default), which
//!   is then remembered; `new_array` and `new_array_clear` both zero their
//!   items with the descr's cell type (int 0 if unknown); writes must fit
//!   the descr's cell type, reads the op's result type; `guard_class` and
//!   `guard_gc_type` on null are null dereferences, on a non-instance type
//!   mismatches; `guard_nonnull_class` on null fails;
//! - strings hold bytes (0..=255), unicode strings code points
//!   (0..=0x10ffff); other characters are undefined; `strhash` is a stable
//!   hash of the contents;
//! - `cast_ptr_to_int` gives a stable fake address (0 for null);
//!   `cast_int_to_ptr` maps 0 to null and such an address back to its
//!   object, other integers go to the env (refused by default);
//! - exceptions: each call replaces the pending exception with its own
//!   (none by default); `guard_no_exception` fails if one is pending;
//!   `guard_exception(cls)` holds if its class is `cls`, gives its value and
//!   clears it; `save_exc_class` reads the class (0 if none),
//!   `save_exception` the value (and clears it), `restore_exception` sets
//!   both;
//! - `cond_call(c, f, args)` calls when `c != 0`; `cond_call_value_*(v, f,
//!   args)` gives `v` when it is nonzero/non-null, else calls;
//! - markers and hints do nothing, except that `assert_not_none(null)` and
//!   `record_exact_value_*` of unequal values are `HintViolated`;
//! - `escape_*` record their arguments in `Run::escaped` and give the env's
//!   value (by default the first argument if it has the op's type).
//!
//! Control flow:
//! - a failing guard ends the run (`Outcome::GuardFailed`); `finish` ends
//!   it (`Outcome::Finished`);
//! - `jump` goes where `Trace::jump_target` says: after the `label` with
//!   the same descr, rebinding the label's arguments; back to the start,
//!   rebinding the inputs, when it has no descr and its values fit the
//!   inputs, closes the loop being recorded (`<Loop-N>`, N < 0), or the
//!   trace has no labels and the descr names no loop (a test's
//!   `looptoken`); otherwise it leaves the trace (`Outcome::Jumped`): to
//!   `<LoopN>` (N >= 0, as recorded bridges do), to a `TargetToken` of
//!   another trace (as optimized bridges do, so both forms of a bridge end
//!   alike), or, without descr, with values that do not fit the inputs (as
//!   many of PyPy's test traces do);
//! - each loop-back counts one iteration; the jump that brings the count
//!   to `max_iterations` ends the run (`Outcome::IterationLimit`), so the
//!   body runs at most `max_iterations` times;
//! - liveness: after a `label`, whether reached by falling through or by a
//!   jump, the values defined before it are dead except its arguments, as
//!   in the loops PyPy emits. Using a dead value is `Malformed`, so an
//!   optimizer that keeps a preamble value alive across a label is caught;
//! - a trace that ends without `jump` or `finish` is `Malformed`.

pub mod alike;
pub mod arith;
pub mod env;
pub mod error;
pub mod heap;
pub mod helpers;
mod machine;
pub mod value;

pub use alike::{ending, same_ending, same_resume, Alike};
pub use env::{
    default_call, default_escape, stable_address, stable_hash, Call, CallOutcome, DefaultEnv, Env,
    Exception, MadeBy, RawAccess,
};
pub use error::{ErrorKind, Fault, InterpError};
pub use heap::{Heap, HeapObject};
pub use helpers::{known_helper, KNOWN_HELPERS};
pub use machine::HEAP_BUDGET;
pub use value::{ObjId, Val};

use traceopt_ir::Trace;

/// Bounds on a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The most loop-backs (jumps to a label or to the start) before the
    /// run stops with `Outcome::IterationLimit`.
    pub max_iterations: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_iterations: 1000,
        }
    }
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// `finish(...)` was reached; its arguments.
    Finished { values: Vec<Val> },
    /// A guard failed: its index and the values of its fail arguments
    /// (`None` for a hole; empty if the guard lists no fail arguments).
    GuardFailed {
        op_index: usize,
        fail_values: Vec<Option<Val>>,
    },
    /// A jump to a target outside this trace (a bridge jumping to a loop).
    Jumped { op_index: usize, values: Vec<Val> },
    /// The loop jumped back `max_iterations` times; the last jump's values.
    IterationLimit { values: Vec<Val> },
}

/// The result of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    pub outcome: Outcome,
    /// Loop-backs performed (the one that hit the limit included).
    pub iterations: u64,
    /// `(op_index, argument values)` of every `escape_*` executed, in order.
    pub escaped: Vec<(usize, Vec<Val>)>,
    /// The heap at the end of the run.
    pub heap: Heap,
    /// The value of every value id (inputs, then one per op) in the last
    /// pass through the trace: `None` for void ops, ops not reached in that
    /// pass, and values dead after a label.
    pub values: Vec<Option<Val>>,
}

/// Runs `trace` on `inputs` with a fresh heap (reference inputs can only be
/// null; see `run_with_heap`).
pub fn run(
    trace: &Trace,
    inputs: &[Val],
    env: &mut dyn Env,
    limits: Limits,
) -> Result<Run, InterpError> {
    run_with_heap(trace, inputs, Heap::new(), env, limits)
}

/// Runs `trace` on `inputs`, whose references point into `heap`.
pub fn run_with_heap(
    trace: &Trace,
    inputs: &[Val],
    heap: Heap,
    env: &mut dyn Env,
    limits: Limits,
) -> Result<Run, InterpError> {
    machine::run(trace, inputs, heap, env, limits)
}
