//! `traceopt run`: runs one trace with the reference interpreter and prints
//! how it ended (finish values, the failing guard and its fail arguments,
//! a jump out of the trace, or the iteration limit) and what it escaped.

use crate::input::{read_input, Failure};
use clap::Args;
use traceopt_interp::{run as interpret, DefaultEnv, Limits, Outcome, Val};
use traceopt_ir::{Arg, Trace, Type, ValueId};

#[derive(Args)]
pub struct RunArgs {
    /// The trace file (test format, PYPYLOG file or peer set).
    file: String,
    /// An input value: i0=5, i1=-0x10, f2=1.5, p3=null. Repeat for each input.
    #[arg(long = "arg", value_name = "NAME=VALUE")]
    args: Vec<String>,
    /// Give inputs not set with --arg the value zero (0, 0.0, null).
    #[arg(long)]
    zero: bool,
    /// Which trace of a file holding several (1-based, in file order).
    #[arg(long, default_value_t = 1)]
    trace: usize,
    /// Stop after this many trips around the loop.
    #[arg(long, default_value_t = 1000)]
    max_iterations: u64,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(args: RunArgs) -> Result<(), Failure> {
    let input = read_input(&args.file)?;
    let items = input.traces();
    let count = items.len();
    let item = args
        .trace
        .checked_sub(1)
        .and_then(|i| items.into_iter().nth(i))
        .ok_or_else(|| {
            Failure::input(format!(
                "{}: --trace {} is out of range: the file holds {count} trace(s)",
                input.file, args.trace
            ))
        })?;
    let trace = item.trace;
    let inputs = input_values(trace, &args.args, args.zero)?;
    let limits = Limits {
        max_iterations: args.max_iterations,
    };
    let result = interpret(trace, &inputs, &mut DefaultEnv, limits)
        .map_err(|e| Failure::input(format!("{}: {e}", input.file)))?;
    let name = |v: ValueId| trace.name(v).to_string();
    let show = |values: &[Val]| values.iter().map(Val::to_string).collect::<Vec<_>>();
    let (status, detail) = match &result.outcome {
        Outcome::Finished { values } => ("finished", serde_json::json!({ "values": show(values) })),
        Outcome::GuardFailed {
            op_index,
            fail_values,
        } => {
            let op = &trace.ops[*op_index];
            let names: Vec<String> = op
                .fail_args
                .iter()
                .flatten()
                .map(|a| match a {
                    Some(Arg::Value(v)) => name(*v),
                    Some(Arg::Const(_)) => "const".into(),
                    None => "None".into(),
                })
                .collect();
            let values: Vec<String> = fail_values
                .iter()
                .map(|v| v.map_or("None".into(), |v| v.to_string()))
                .collect();
            (
                "guard failed",
                serde_json::json!({
                    "op_index": op_index,
                    "line": trace.op_pos[*op_index].line,
                    "guard": op.opcode.name(),
                    "fail_args": names.iter().zip(&values).map(|(n, v)| format!("{n}={v}")).collect::<Vec<_>>(),
                }),
            )
        }
        Outcome::Jumped { op_index, values } => (
            "jumped out",
            serde_json::json!({ "op_index": op_index, "line": trace.op_pos[*op_index].line, "values": show(values) }),
        ),
        Outcome::IterationLimit { values } => (
            "iteration limit",
            serde_json::json!({ "values": show(values) }),
        ),
    };
    let escaped: Vec<_> = result
        .escaped
        .iter()
        .map(|(i, values)| serde_json::json!({ "line": trace.op_pos[*i].line, "op": trace.ops[*i].opcode.name(), "values": show(values) }))
        .collect();
    if args.json {
        let out = serde_json::json!({
            "trace": item.label,
            "status": status,
            "detail": detail,
            "iterations": result.iterations,
            "escaped": escaped,
        });
        println!("{}", serde_json::to_string_pretty(&out).unwrap());
        return Ok(());
    }
    for e in &escaped {
        println!(
            "line {}: {} {}",
            e["line"],
            e["op"].as_str().unwrap_or(""),
            e["values"]
        );
    }
    println!(
        "{status} after {} iteration(s): {detail}",
        result.iterations
    );
    Ok(())
}

/// The input values in trace order, from `--arg NAME=VALUE` flags.
fn input_values(trace: &Trace, flags: &[String], zero: bool) -> Result<Vec<Val>, Failure> {
    let mut values: Vec<Option<Val>> = vec![None; trace.inputs.len()];
    for flag in flags {
        let (name, text) = flag.split_once('=').ok_or_else(|| {
            Failure::input(format!("--arg {flag}: expected NAME=VALUE, such as i0=5"))
        })?;
        let index = (0..trace.inputs.len())
            .find(|&i| trace.name(ValueId(i as u32)) == name)
            .ok_or_else(|| {
                Failure::input(format!(
                    "--arg {flag}: the trace has no input named '{name}'"
                ))
            })?;
        let ty = trace.inputs[index];
        let value = parse_value(text, ty).ok_or_else(|| {
            Failure::input(format!(
                "--arg {flag}: '{text}' is not a {ty} (ints: 5, -3, 0x10; floats: 1.5; refs: null)"
            ))
        })?;
        values[index] = Some(value);
    }
    let missing: Vec<&str> = (0..trace.inputs.len())
        .filter(|&i| values[i].is_none())
        .map(|i| trace.name(ValueId(i as u32)))
        .collect();
    if !missing.is_empty() && !zero {
        return Err(Failure::input(format!(
            "no value for input(s) {}: give each with --arg NAME=VALUE, or --zero",
            missing.join(", ")
        )));
    }
    Ok(values
        .into_iter()
        .zip(&trace.inputs)
        .map(|(v, &ty)| v.unwrap_or_else(|| zero_of(ty)))
        .collect())
}

fn zero_of(ty: Type) -> Val {
    match ty {
        Type::Float => Val::Float(0.0),
        Type::Ref => Val::Ref(None),
        _ => Val::Int(0),
    }
}

fn parse_value(text: &str, ty: Type) -> Option<Val> {
    match ty {
        Type::Int => {
            let (negative, digits) = match text.strip_prefix('-') {
                Some(d) => (true, d),
                None => (false, text),
            };
            let magnitude = match digits.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(hex, 16).ok()?,
                None => digits.parse::<u64>().ok()?,
            };
            let value = magnitude as i64;
            Some(Val::Int(if negative {
                value.wrapping_neg()
            } else {
                value
            }))
        }
        Type::Float => text.parse().ok().map(Val::Float),
        Type::Ref => (text == "null").then_some(Val::Ref(None)),
        _ => None,
    }
}
