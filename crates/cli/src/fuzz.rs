//! `traceopt fuzz`: random traces through the optimizer, checked by
//! differential runs and the SMT validator; failures are shrunk and
//! written as reproducer files with a command to replay them.
//!
//! Exit codes: 0 nothing found, 1 findings, 2 usage error, or a solver
//! that could not be started, kept failing, or decided none of the traces
//! (unless `--solver-timeout 0` asked for differential runs only): the
//! campaign never claims solver checks that did not happen.
//!
//! The summary counts every trace once: proved by the validator, checked
//! by the runs only (solver off), undecided in time, beyond the
//! validator, solver failures, findings. With `--inject-bug` every output
//! (the summary, each finding, each reproducer file) says that the
//! optimizer was broken on purpose.

use crate::input::Failure;
use crate::seconds::{positive_seconds, seconds};
use crate::watch::{self, Ending};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use traceopt_fuzz::{campaign, Config, Counters, Options};
use traceopt_opt::{Bug, Passes};

#[derive(Args)]
pub struct FuzzArgs {
    /// The first seed; trace k of the campaign uses seed + k.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Stop after this many seconds (default 60 when --count is not
    /// given; more than 0, at most 1000000).
    #[arg(long, value_name = "SECS", value_parser = positive_seconds, allow_negative_numbers = true)]
    time: Option<Duration>,
    /// Stop after this many traces.
    #[arg(long)]
    count: Option<u64>,
    /// Worker threads, each with its own solver process.
    #[arg(long, default_value_t = 1)]
    jobs: usize,
    /// Ops per generated trace.
    #[arg(long, default_value_t = 30)]
    length: usize,
    /// Solver timeout per query in seconds (a trace the solver does not
    /// decide in time is still checked by the runs); 0 checks by
    /// differential runs only. Longer proves a few more traces, at a lower
    /// rate (with z3 5.4: 0.03 s proves 88%, 0.1 s 95%). At most 1000000.
    #[arg(long, value_name = "SECS", default_value = "0.03", value_parser = seconds, allow_negative_numbers = true)]
    solver_timeout: Duration,
    /// Solver time per trace in seconds, all its queries together (0: no
    /// limit). A trace whose queries keep timing out is left undecided
    /// then, so that it does not take the time of many others; shrinking
    /// a finding has no limit. At most 1000000.
    #[arg(long, value_name = "SECS", default_value = "0.12", value_parser = seconds, allow_negative_numbers = true)]
    solver_budget: Duration,
    /// The part of the campaign's time the solver may take, from 0 to 1.
    /// The differential runs check every trace in well under a
    /// millisecond, the solver in tens of milliseconds: past its share,
    /// traces are checked by the runs only (counted as such) until the
    /// solver is back within it. 1 gives every trace to the solver.
    #[arg(long, value_name = "PART", default_value_t = 0.5, value_parser = share, allow_negative_numbers = true)]
    solver_share: f64,
    /// The solver: z3 (the default) or cvc5.
    #[arg(long, value_parser = ["z3", "cvc5"])]
    solver: Option<String>,
    /// Where reproducers are written.
    #[arg(long, default_value = "fuzz-findings")]
    out: PathBuf,
    /// Stop at the first finding.
    #[arg(long)]
    stop_at_first: bool,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
    /// Mutate the integer traces of these files or directories (test
    /// traces, peer sets, logs) instead of generating new ones.
    #[arg(long, value_name = "DIR")]
    mutate: Vec<String>,
    /// Print the traces the seeds give (with their example inputs and
    /// heap) instead of checking them: --count of them, default 1.
    #[arg(long)]
    print: bool,
    /// Heap traces: objects given (aliasing or not) and allocated, field
    /// and array traffic, calls of chosen effect info, escapes, guards on
    /// references and resume data with objects.
    #[arg(long)]
    heap: bool,
    /// Peel the loops among the traces (`traceopt opt --peel`): the runs
    /// go around the loop, and the validator proves the peeled loop by
    /// induction.
    #[arg(long)]
    peel: bool,
    /// An optimization still running after this many seconds is a
    /// finding (the optimizer hangs), and stops the campaign; so is an
    /// optimizer that kills its process (a stack overflow, an abort): the
    /// campaign runs in a process of its own, watched. At most 1000000.
    #[arg(long, value_name = "SECS", default_value = "10", value_parser = positive_seconds, allow_negative_numbers = true)]
    hang: Duration,
    /// Testing the fuzzer: switch on a known miscompilation
    /// (wrapping-add, neg-minint, mul-inverse, lshift-inverse,
    /// sub-ovf-after-add, ge-as-unsigned; on heap traces, which a heap bug implies:
    /// call-keeps-cache, alias-forward, resume-drops-field,
    /// write-after-aliasing-read; of loops with a label inside:
    /// label-keeps-facts), or a way to kill or hang the optimizer
    /// (stack-overflow, endless-loop).
    #[arg(long, hide = true)]
    inject_bug: Option<String>,
}

pub fn run(out: &mut String, args: FuzzArgs) -> Result<(), Failure> {
    let bug = match &args.inject_bug {
        None => None,
        Some(name) => Some(Bug::from_name(name).ok_or_else(|| {
            let names: Vec<&str> = Bug::ALL.iter().map(|b| b.name()).collect();
            Failure::input(format!(
                "unknown bug '{name}' (known: {})",
                names.join(", ")
            ))
        })?),
    };
    if args.print {
        let config = Config {
            length: args.length.max(1),
            heap: args.heap || bug.is_some_and(Bug::is_heap),
            ..Config::default()
        };
        for seed in args.seed..args.seed.saturating_add(args.count.unwrap_or(1)) {
            let sketch = traceopt_fuzz::generate(seed, &config);
            let comment = example_comment(&sketch);
            writeln!(out, "# seed {seed}\n{comment}{}", sketch.text()).unwrap();
        }
        return Ok(());
    }
    let time = match (args.time, args.count) {
        (None, None) => Some(Duration::from_secs(60)),
        (time, _) => time,
    };
    let options = Options {
        seed: args.seed,
        count: args.count,
        time,
        jobs: args.jobs.max(1),
        config: Config {
            length: args.length.max(1),
            heap: args.heap || bug.is_some_and(Bug::is_heap),
            ..Config::default()
        },
        passes: Passes {
            bug,
            peel: args.peel,
            ..Passes::default()
        },
        solver_timeout: (!args.solver_timeout.is_zero()).then_some(args.solver_timeout),
        solver_budget: (!args.solver_budget.is_zero()).then_some(args.solver_budget),
        solver_share: args.solver_share,
        solver: args
            .solver
            .as_deref()
            .and_then(traceopt_smt::SolverKind::from_name),
        stop_at_first: args.stop_at_first,
        bases: mutation_bases(&args.mutate)?,
        ..Options::default()
    };
    match std::env::var_os(watch::FLIGHT_ENV) {
        // The watched child: keep the flight record the watcher reads.
        Some(record) => traceopt_fuzz::flight::open(record.as_ref()).map_err(|e| {
            Failure::input(format!("cannot write the flight record {record:?}: {e}"))
        })?,
        None => return watched_campaign(out, &args, &options),
    }
    let watcher = watch::parent();
    let counters = Counters::default();
    let summary = std::thread::scope(|scope| {
        let progress = (!args.quiet).then(|| {
            let bar = ProgressBar::new_spinner();
            bar.set_style(ProgressStyle::with_template("{spinner} {elapsed} {msg}").unwrap());
            bar
        });
        let worker = scope.spawn(|| campaign::run(&options, &counters));
        while !worker.is_finished() {
            // A watcher that was killed reads no more: stop with it.
            if watch::parent() != watcher {
                std::process::exit(1);
            }
            if let Some(bar) = &progress {
                let generated = counters.generated.load(Ordering::Relaxed);
                let rate = generated as f64 / bar.elapsed().as_secs_f64().max(0.001);
                bar.set_message(format!(
                    "{generated} traces ({rate:.0}/s), {} proved, {} findings",
                    counters.proved.load(Ordering::Relaxed),
                    counters.findings.load(Ordering::Relaxed)
                ));
                bar.tick();
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        if let Some(bar) = progress {
            bar.finish_and_clear();
        }
        worker.join().expect("the campaign panicked")
    });
    print_findings(out, &args, &summary.reports)?;
    let rate = summary.generated as f64 / summary.seconds.max(0.001);
    writeln!(
        out,
        "{} traces in {:.1}s ({rate:.0}/s): {} proved, {} checked by runs only, \
         {} undecided in time, {} beyond the validator, {} solver failure(s), {} findings; \
         {} called infeasible; {} of {} rules fired",
        summary.generated,
        summary.seconds,
        summary.proved,
        summary.runs_only,
        summary.undecided,
        summary.validator_errors,
        summary.solver_failures,
        summary.reports.len(),
        summary.infeasible,
        summary.rules_reached(),
        traceopt_opt::RULES.len(),
    )
    .unwrap();
    // What the passes did to the traces: the Figure 7 counts.
    let (b, a) = (summary.before, summary.after);
    writeln!(
        out,
        "before -> after: {} -> {} ops, {} -> {} allocations, {} -> {} heap reads, \
         {} -> {} heap writes, {} -> {} guards",
        b.ops,
        a.ops,
        b.allocations,
        a.allocations,
        b.reads,
        a.reads,
        b.writes,
        a.writes,
        b.guards,
        a.guards
    )
    .unwrap();
    if let Some(first) = &summary.first_validator_error {
        eprintln!(
            "warning: the validator could not take {} trace(s), checked by the runs only; the \
             first, {first}",
            summary.validator_errors
        );
    }
    let stopped = summary.solver_error.as_ref().map(|why| {
        format!(
            "error: the campaign's solver checks were not done: {why}\n  hint: give a longer \
             --solver-timeout, or --solver-timeout 0 to check by differential runs only"
        )
    });
    if let (Some(first), None) = (&summary.first_solver_failure, &stopped) {
        eprintln!(
            "warning: the solver failed on {} trace(s), checked by the runs only (a new solver \
             process was started each time); the first, {first}",
            summary.solver_failures
        );
    }
    match (summary.reports.is_empty(), stopped) {
        (true, None) => Ok(()),
        (true, Some(message)) => Err(Failure::input(message)),
        (false, message) => {
            if let Some(message) = message {
                eprintln!("{message}");
            }
            Err(Failure::silent(1))
        }
    }
}

/// Prints the findings (with the injected-bug warning first, if any)
/// and writes their reproducers.
fn print_findings(
    out: &mut String,
    args: &FuzzArgs,
    reports: &[traceopt_fuzz::Report],
) -> Result<(), Failure> {
    let replay_bug = format!(
        "{}{}",
        if args.peel { " --peel" } else { "" },
        (args.inject_bug.as_ref())
            .map(|b| format!(" --inject-bug {b}"))
            .unwrap_or_default()
    );
    let injected = args.inject_bug.as_ref().map(|name| {
        format!(
            "WARNING: --inject-bug {name}: the optimizer was broken on purpose; these findings \
             are not traceopt's"
        )
    });
    if let Some(warning) = &injected {
        writeln!(out, "{warning}").unwrap();
    }
    for report in reports {
        let path =
            write_reproducer(&args.out, report, injected.as_deref()).map_err(Failure::input)?;
        writeln!(
            out,
            "FOUND{} (seed {}): {}\n  shrunk from {} to {} ops: {}\n  replay: traceopt opt --verify{replay_bug} {}\n",
            if injected.is_some() { " WITH AN INJECTED BUG" } else { "" },
            report.seed,
            report.finding,
            report.original.op_count(),
            report.reproducer.op_count(),
            path.display(),
            path.display()
        )
        .unwrap();
    }
    Ok(())
}

/// Runs the campaign in a watched child process (this command again).
/// Its output and exit code are the campaign's, unless the optimizer
/// killed it or hung: then the trace the flight record names is shrunk
/// in processes of its own and reported as a finding.
fn watched_campaign(out: &mut String, args: &FuzzArgs, options: &Options) -> Result<(), Failure> {
    let (how, entry, hung) = match watch::run_watched(args.hang).map_err(Failure::input)? {
        Ending::Exited(0) => return Ok(()),
        Ending::Exited(code) => return Err(Failure::silent(code.clamp(1, 255) as u8)),
        Ending::Stopped(signal) => {
            return Err(Failure {
                message: format!("the campaign's process was stopped by signal {signal}"),
                code: (128 + signal).clamp(1, 255) as u8,
            })
        }
        Ending::Blamed { how, entry, hung } => (how, entry, hung),
    };
    let Some(entry) = entry else {
        return Err(Failure {
            message: format!(
                "error: the campaign's process {how}, while no worker was checking a trace\n  \
                 hint: a bug of the fuzzer or the solver interface, not of a trace: run again \
                 with --jobs 1 and report it"
            ),
            code: 1,
        });
    };
    // Each candidate is optimized by `traceopt opt` in a process of its
    // own. A hang is probed with at most 2 s a candidate, and shrunk for
    // at most 20 such probes' time; a crash for at most a minute.
    let probe_limit = args.hang.min(Duration::from_secs(2));
    let probe = watch::Probe::new(args.inject_bug.clone(), hung.then_some(probe_limit))
        .map_err(Failure::input)?;
    let original = campaign::sketch_for(entry.seed, options);
    let alone = probe.fails(&original);
    let deadline = Instant::now()
        + if hung {
            probe_limit * 20
        } else {
            Duration::from_secs(60)
        };
    let reproducer = if alone {
        let fails = |c: &traceopt_fuzz::Sketch| Instant::now() < deadline && probe.fails(c);
        let cut = traceopt_fuzz::shrink::shortest_failing_prefix(&original, fails);
        traceopt_fuzz::shrink::shrink(&cut, 2000, fails)
    } else {
        original.clone()
    };
    let mut how = format!("{how}, on the trace of seed {}", entry.seed);
    if !alone {
        how += if watch::while_shrinking(&entry) {
            " (a smaller trace made while shrinking another finding of this seed; the seed's \
             own trace does not do it alone)"
        } else {
            " (optimized alone, in another process, it does not do it again)"
        };
    }
    let report = traceopt_fuzz::Report {
        seed: entry.seed,
        finding: traceopt_fuzz::Finding::Died(how),
        original,
        reproducer,
    };
    print_findings(out, args, &[report])?;
    writeln!(
        out,
        "the campaign stopped at this finding: the optimizer took the campaign's process with \
         it (its counts are lost; --seed {} goes on after it)",
        entry.seed + 1
    )
    .unwrap();
    Err(Failure::silent(1))
}

/// The integer traces of the `--mutate` files, as sketches.
fn mutation_bases(paths: &[String]) -> Result<Vec<traceopt_fuzz::Sketch>, Failure> {
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    let mut bases = Vec::new();
    for input in crate::input::read_inputs(paths)? {
        for item in input.traces() {
            let options = traceopt_ir::CheckOptions {
                require_fail_args: false,
                partial: true,
            };
            // Only well-formed traces: the optimizer takes checked ones.
            if traceopt_ir::check(item.trace, &input.file, options).is_empty() {
                bases.extend(traceopt_fuzz::mutate::from_trace(item.trace));
            }
        }
    }
    if bases.is_empty() {
        return Err(Failure::input(
            "--mutate: no integer-only traces in these files (inputs, ops and guards on ints)",
        ));
    }
    Ok(bases)
}

fn write_reproducer(
    dir: &PathBuf,
    report: &traceopt_fuzz::Report,
    injected: Option<&str>,
) -> Result<PathBuf, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let path = dir.join(format!("seed-{}.trace", report.seed));
    if report.reproducer.has_heap() {
        // The namespace the trace's descrs come from, beside it.
        let descrs = dir.join("descrs.txt");
        std::fs::write(&descrs, traceopt_fuzz::heapgen::NAMESPACE)
            .map_err(|e| format!("{}: {e}", descrs.display()))?;
    }
    let text = format!(
        "{}# traceopt fuzz finding, seed {}: {}\n{}{}",
        injected.map(|w| format!("# {w}\n")).unwrap_or_default(),
        report.seed,
        report.finding.to_string().replace('\n', " "),
        example_comment(&report.reproducer),
        report.reproducer.text()
    );
    std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}

/// Comment lines with a sketch's example inputs and heap.
fn example_comment(sketch: &traceopt_fuzz::Sketch) -> String {
    let inputs: Vec<String> = (sketch.inputs.iter())
        .map(|(n, v)| format!("{n}={v}"))
        .collect();
    let mut text = format!("# example inputs: {}\n", inputs.join(" "));
    if !sketch.heap.is_empty() {
        let objects: Vec<String> = (sketch.heap.iter().enumerate())
            .map(|(k, o)| format!("object {k} = {o:?}"))
            .collect();
        writeln!(
            text,
            "# example heap (references are object numbers, -1 null): {}",
            objects.join("; ")
        )
        .unwrap();
    }
    text
}

/// A part of a whole: a number from 0 to 1.
fn share(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(x) if (0.0..=1.0).contains(&x) => Ok(x),
        _ => Err(format!(
            "'{text}' is not a number from 0 to 1 (0.5 is half)"
        )),
    }
}
