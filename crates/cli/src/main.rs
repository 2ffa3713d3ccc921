//! `traceopt`: the command-line front end. Thin by design: it parses
//! arguments, reads files, calls the library crates and prints results, as
//! text for people or as JSON (`--json`) for programs.
//!
//! Exit codes: 0 success, 1 the command ran but its answer is "no" (a pair
//! was refuted), 2 bad input or usage (with a located message), 3 the
//! solver could not decide.

mod fuzz;
mod input;
mod mine;
mod opt;
mod parallel;
mod report;
mod rules;
mod run;
mod seconds;
mod stats;
mod synth;
mod verify;
mod watch;

use clap::{Parser, Subcommand};

// The optimizer makes a few small allocations per op (arguments, fail
// arguments, names); mimalloc serves them about a fifth faster than the
// system allocator (`cargo bench -p traceopt-opt --bench optimize_corpus`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
use input::{read_inputs_unchecked, Failure};
use std::fmt::Write as _;
use std::io::Write as _;
use std::process::ExitCode;
use traceopt_ir::{check, print_trace_with, CheckOptions, PrintOptions, TraceFile, OP_TABLE};

#[derive(Parser)]
#[command(
    name = "traceopt",
    version,
    about = "Optimize and verify the traces of tracing JIT compilers",
    long_about = "traceopt reads the traces of PyPy's RPython JIT, in PyPy's optimizer-test \
                  format or as PYPYLOG files (jit-log-noopt, jit-log-opt-loop, \
                  jit-log-opt-bridge sections), optimizes them with rules and an integer \
                  domain proved correct by an SMT solver, verifies optimized traces \
                  against their inputs, runs them, and counts what they do; it also finds \
                  the integer optimizations optimized traces missed (mine), proposes \
                  proved rules the rule set lacks (synth) and draws seed 001's Figure 7 \
                  (report). A FILE of '-' is read from standard input."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// The namespace that gives the descr and constant names of test
    /// traces and peer sets their meaning (default: a descrs.txt beside
    /// each input file). PYPYLOG files need none.
    #[arg(long, global = true, value_name = "FILE")]
    descrs: Option<std::path::PathBuf>,
}

#[derive(Subcommand)]
enum Command {
    /// Parse and check traces: SSA, arity, types, descrs, fail args, final op.
    Check {
        /// Test-format traces, PYPYLOG files, peer sets, or directories of them.
        #[arg(required = true)]
        files: Vec<String>,
        /// Accept traces that stop without jump or finish.
        #[arg(long)]
        partial: bool,
    },
    /// Print traces in PyPy's test format (normalized spacing and constants).
    Print {
        file: String,
        /// Leave out PyPy's machine-code offsets (+523:).
        #[arg(long)]
        no_offsets: bool,
    },
    /// Run a trace on concrete inputs with the reference interpreter.
    Run(run::RunArgs),
    /// Count operations per trace (allocations, reads, writes, guards, all),
    /// recorded and optimized side by side, with totals.
    Stats {
        #[arg(required = true)]
        files: Vec<String>,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Prove that AFTER behaves like BEFORE for all inputs, or show a
    /// counterexample (exit 0 proved, 1 refuted, 3 unknown, 2 error). With
    /// a peer set alone, verify every case against its expected output.
    Verify(verify::VerifyArgs),
    /// Optimize traces (every recorded trace of a PYPYLOG file) and print
    /// the results; --verify proves each equivalent to its input.
    Opt(opt::OptArgs),
    /// The peephole rules: check them, prove them, list them.
    Rules(rules::RulesArgs),
    /// Find the integer optimizations optimized traces missed (an op that
    /// is always a constant or an earlier value, a guard that always
    /// passes), cut each to a small trace, and rank them by shape.
    Mine(mine::MineArgs),
    /// Seed 001's Figure 7 per program, traceopt next to PyPy: an HTML
    /// page with charts, or a Markdown table; with verdicts (--verify) and
    /// the miner's top findings (--mine) if asked.
    Report(report::ReportArgs),
    /// Propose peephole rules the rule set lacks: enumerated patterns of
    /// one or two ops, cheaper equivalents found on samples and proved by
    /// the rule prover, ranked by how often they occur in the traces given.
    Synth(synth::SynthArgs),
    /// Fuzz the optimizer: random traces, differential runs and the SMT
    /// validator; failures are shrunk into reproducer files.
    Fuzz(fuzz::FuzzArgs),
    /// List the op table: name, signature, result type and flags.
    Ops {
        #[arg(long)]
        json: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    input::set_descrs(cli.descrs.clone());
    // Output is gathered and written at the end, so that a closed pipe
    // (`traceopt stats ... | head`) ends the program quietly.
    let mut out = String::new();
    let result = match cli.command {
        Command::Check { files, partial } => check_files(&mut out, &files, partial),
        Command::Print { file, no_offsets } => print_file(&mut out, &file, !no_offsets),
        Command::Run(args) => run::run(&mut out, args),
        Command::Stats { files, json } => stats::stats(&mut out, &files, json),
        Command::Verify(args) => verify::run(&mut out, args),
        Command::Opt(args) => opt::run(&mut out, args),
        Command::Rules(args) => rules::run(&mut out, args),
        Command::Mine(args) => mine::run(&mut out, args),
        Command::Report(args) => report::run(&mut out, args),
        Command::Synth(args) => synth::run(&mut out, args),
        Command::Fuzz(args) => fuzz::run(&mut out, args),
        Command::Ops { json } => {
            list_ops(&mut out, json);
            Ok(())
        }
    };
    let _ = std::io::stdout().lock().write_all(out.as_bytes());
    let skipped = input::skipped();
    if skipped > 0 {
        eprintln!("{skipped} malformed case(s), trace section(s) or file(s) skipped (see above)");
    }
    match result {
        Ok(()) if skipped > 0 => ExitCode::from(2),
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            if !failure.message.is_empty() {
                eprintln!("{}", failure.message);
            }
            ExitCode::from(failure.code)
        }
    }
}

fn check_files(out: &mut String, files: &[String], partial: bool) -> Result<(), Failure> {
    let mut failed = 0;
    let mut checked = 0;
    for input in read_inputs_unchecked(files)? {
        for item in input.traces() {
            let options = CheckOptions {
                require_fail_args: item.optimized,
                partial: partial || item.fragment,
            };
            checked += 1;
            let errors = check(item.trace, &input.file, options);
            if !errors.is_empty() {
                failed += 1;
                for error in errors {
                    eprintln!("{error}");
                }
            }
        }
    }
    writeln!(out, "checked {checked} trace(s): {failed} with errors").unwrap();
    if failed > 0 {
        Err(Failure::silent(2))
    } else {
        Ok(())
    }
}

fn print_file(out: &mut String, file: &str, offsets: bool) -> Result<(), Failure> {
    let options = PrintOptions { offsets };
    let input = input::read_input(file)?;
    let single = matches!(input.parsed, TraceFile::Trace(_));
    for item in input.traces() {
        if !single {
            writeln!(out, "# {}", item.label).unwrap();
        }
        write!(out, "{}", print_trace_with(item.trace, options)).unwrap();
        if !single {
            writeln!(out).unwrap();
        }
    }
    Ok(())
}

fn list_ops(out: &mut String, json: bool) {
    if json {
        let ops: Vec<_> = OP_TABLE
            .iter()
            .map(|info| {
                serde_json::json!({
                    "name": info.name,
                    "signature": info.signature,
                    "arity": info.arity().to_string(),
                    "result": info.result,
                    "flags": format!("{:?}", info.flags),
                })
            })
            .collect();
        writeln!(out, "{}", serde_json::to_string_pretty(&ops).unwrap()).unwrap();
        return;
    }
    writeln!(out, "{:<36} {:<8} {:<6} flags", "name", "args", "result").unwrap();
    for info in OP_TABLE {
        let flags: Vec<&str> = info.flags.iter_names().map(|(name, _)| name).collect();
        writeln!(
            out,
            "{:<36} {:<8} {:<6} {}",
            info.name,
            if info.signature.is_empty() {
                "-"
            } else {
                info.signature
            },
            info.result.to_string(),
            flags.join(" ").to_lowercase()
        )
        .unwrap();
    }
}
