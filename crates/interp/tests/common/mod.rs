//! Helpers shared by the integration tests: parse a test-format trace, run
//! it, read results.
#![allow(dead_code)]

use std::fmt::Debug;
use traceopt_interp::{
    run, run_with_heap, DefaultEnv, Env, ErrorKind, Heap, InterpError, Limits, Outcome, Run, Val,
};
use traceopt_ir::{parse_trace, Trace};

pub fn parse(text: &str) -> Trace {
    parse_trace(text, "test.trace").unwrap_or_else(|e| panic!("{e}"))
}

/// Runs a trace text with the default env and limits.
pub fn go(text: &str, inputs: &[Val]) -> Result<Run, InterpError> {
    run(&parse(text), inputs, &mut DefaultEnv, Limits::default())
}

pub fn go_env(text: &str, inputs: &[Val], env: &mut dyn Env) -> Result<Run, InterpError> {
    run(&parse(text), inputs, env, Limits::default())
}

pub fn go_heap(text: &str, inputs: &[Val], heap: Heap) -> Result<Run, InterpError> {
    run_with_heap(
        &parse(text),
        inputs,
        heap,
        &mut DefaultEnv,
        Limits::default(),
    )
}

/// The values of `finish(...)`; panics on any other outcome.
pub fn finished(result: Result<Run, InterpError>) -> Vec<Val> {
    match result {
        Ok(Run {
            outcome: Outcome::Finished { values },
            ..
        }) => values,
        other => panic!("expected finish, got {other:?}"),
    }
}

/// The single value a `finish(x)` trace ends with.
pub fn result_of(text: &str, inputs: &[Val]) -> Result<Val, InterpError> {
    let run = go(text, inputs)?;
    match run.outcome {
        Outcome::Finished { values } if values.len() == 1 => Ok(values[0]),
        other => panic!("expected finish with one value, got {other:?}"),
    }
}

/// The value named `name` in the run's last pass.
pub fn value(trace: &Trace, run: &Run, name: &str) -> Option<Val> {
    let id = trace.names.iter().position(|n| &**n == name)?;
    run.values[id]
}

pub fn ints(xs: &[i64]) -> Vec<Val> {
    xs.iter().map(|&x| Val::Int(x)).collect()
}

/// Asserts that a run stopped with an error of this kind at this op
/// (`None`: at the inputs given to `run`).
#[track_caller]
pub fn assert_error<T: Debug>(
    result: Result<T, InterpError>,
    kind: ErrorKind,
    op_index: Option<usize>,
) {
    match result {
        Err(e) => assert!(
            e.kind == kind && e.op_index == op_index,
            "expected {kind} at op {op_index:?}, got {e}"
        ),
        Ok(other) => panic!("expected {kind} at op {op_index:?}, got {other:?}"),
    }
}
