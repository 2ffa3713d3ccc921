//! `traceopt run`: runs one trace with the reference interpreter and prints
//! how it ended (finish values, the failing guard and its fail arguments,
//! a jump out of the trace, or the iteration limit) and what it escaped.

use crate::input::{read_input, Failure};
use clap::Args;
use std::fmt::Write as _;
use traceopt_interp::{run_with_heap, DefaultEnv, Heap, Limits, Outcome, Val};
use traceopt_ir::{Arg, FailArg, Trace, Type, ValueId};

#[derive(Args)]
pub struct RunArgs {
    /// The trace file (test format, PYPYLOG file or peer set).
    file: String,
    /// An input value: i0=5, i1=-0x10, f2=1.5, p3=null, p4=new (a fresh
    /// empty object). Repeat for each input.
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

pub fn run(out: &mut String, args: RunArgs) -> Result<(), Failure> {
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
    let mut heap = Heap::new();
    let inputs = input_values(trace, &args.args, args.zero, &mut heap)?;
    let limits = Limits {
        max_iterations: args.max_iterations,
    };
    let result = run_with_heap(trace, &inputs, heap, &mut DefaultEnv, limits)
        .map_err(|e| Failure::input(format!("{}:{e}", input.file)))?;
    let report = Report::new(trace, &result);
    if args.json {
        let json = serde_json::json!({
            "trace": item.label,
            "status": report.status,
            "line": report.line,
            "op": report.op,
            "values": report.values,
            "iterations": result.iterations,
            "escaped": report.escaped,
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&json).unwrap()).unwrap();
        return Ok(());
    }
    for (line, op, values) in &report.escaped {
        writeln!(out, "line {line}: {op}({})", values.join(", ")).unwrap();
    }
    let at = report
        .line
        .map_or(String::new(), |l| format!(" at line {l}"));
    let op = report.op.map_or(String::new(), |op| format!(" {op}"));
    writeln!(
        out,
        "{}{op}{at}, after {} loop iteration(s)",
        report.status, result.iterations
    )
    .unwrap();
    if !report.values.is_empty() {
        writeln!(out, "  {}", report.values.join(", ")).unwrap();
    }
    Ok(())
}

/// How a run ended, in words and values, for text and JSON alike.
struct Report {
    status: &'static str,
    line: Option<u32>,
    op: Option<&'static str>,
    /// `name=value` for fail arguments; plain values otherwise.
    values: Vec<String>,
    escaped: Vec<(u32, &'static str, Vec<String>)>,
}

impl Report {
    fn new(trace: &Trace, result: &traceopt_interp::Run) -> Report {
        let show = |values: &[Val]| values.iter().map(Val::to_string).collect::<Vec<_>>();
        let at = |i: usize| (Some(trace.op_pos[i].line), Some(trace.ops[i].opcode.name()));
        let ((line, op), status, values) = match &result.outcome {
            Outcome::Finished { values } => ((None, None), "finished", show(values)),
            Outcome::Jumped { op_index, values } => {
                (at(*op_index), "jumped out of the trace", show(values))
            }
            Outcome::IterationLimit { values } => {
                ((None, None), "stopped at the iteration limit", show(values))
            }
            Outcome::GuardFailed {
                op_index,
                fail_values,
            } => {
                let op = &trace.ops[*op_index];
                let names = op.fail_args.iter().flatten().map(|a| match a {
                    FailArg::Arg(Arg::Value(v)) => trace.name(*v).to_string(),
                    FailArg::Arg(Arg::Const(_)) => "const".into(),
                    FailArg::Virtual(i) => format!("{} (virtual)", op.virtuals[*i as usize].name),
                    FailArg::Hole => "None".into(),
                });
                let values = names
                    .zip(fail_values)
                    .map(|(n, v)| format!("{n}={}", v.map_or("None".into(), |v| v.to_string())))
                    .collect();
                (at(*op_index), "guard failed:", values)
            }
        };
        let escaped = result
            .escaped
            .iter()
            .map(|(i, values)| {
                (
                    trace.op_pos[*i].line,
                    trace.ops[*i].opcode.name(),
                    show(values),
                )
            })
            .collect();
        Report {
            status,
            line,
            op,
            values,
            escaped,
        }
    }
}

/// The input values in trace order, from `--arg NAME=VALUE` flags.
fn input_values(
    trace: &Trace,
    flags: &[String],
    zero: bool,
    heap: &mut Heap,
) -> Result<Vec<Val>, Failure> {
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
        let value = parse_value(text, ty, heap).ok_or_else(|| {
            Failure::input(format!(
                "--arg {flag}: '{text}' is not a value of type {ty} (ints: 5, -3, 0x10; floats: 1.5; refs: null or new)"
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

fn parse_value(text: &str, ty: Type, heap: &mut Heap) -> Option<Val> {
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
        Type::Ref => match text {
            "null" => Some(Val::Ref(None)),
            "new" => Some(Val::Ref(Some(heap.alloc_object(0)))),
            _ => None,
        },
        _ => None,
    }
}
