//! `traceopt report`: seed 001's Figure 7 for our optimizer next to
//! PyPy's, per program: an HTML page (one file, charts as inline SVG
//! drawn with `plotters`), or a Markdown table (`--markdown`).
//!
//! A program is one input file (a PYPYLOG file of one Python program).
//! Its traces are optimized as `traceopt opt --peel` does them, and the
//! counts (ops, allocations, heap reads and writes, guards) are those of
//! `traceopt opt --stats`: recorded, ours, and PyPy's over the traces
//! its log optimized. The optimizer's time per recorded op is the best
//! of a few runs. `--verify` adds each trace's verdict (slow: hours on
//! the whole corpus with one job), `--mine` the miner's top findings in
//! our output.

use crate::input::{read_inputs, Failure, Input};
use crate::mine::{mine_all, our_traces, Mining};
use crate::opt::{judge, optimize_inputs, verdict_text, Optimization, Tally};
use crate::parallel::{in_parallel, start_solvers};
use crate::seconds::positive_seconds;
use clap::Args;
use plotters::prelude::*;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use traceopt_ir::OpCounts;
use traceopt_mine::Options;
use traceopt_opt::Passes;

#[derive(Args)]
pub struct ReportArgs {
    /// PYPYLOG files (one per program), test-format traces, peer sets,
    /// or directories of them.
    #[arg(required = true)]
    files: Vec<String>,
    /// Write the report to FILE instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,
    /// A Markdown table (for a README) instead of the HTML page.
    #[arg(long)]
    markdown: bool,
    /// Verify every optimized trace (as `traceopt opt --peel --verify`)
    /// and show the verdicts.
    #[arg(long)]
    verify: bool,
    /// Mine our optimized traces for missed optimizations (as `traceopt
    /// mine`) and show the top findings.
    #[arg(long)]
    mine: bool,
    /// Solver processes at once, for --verify and --mine.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=256))]
    jobs: u16,
    /// Seconds the solver may spend on one query (--verify, --mine).
    #[arg(long, value_name = "SECS", default_value = "10", value_parser = positive_seconds, allow_negative_numbers = true)]
    timeout: Duration,
    /// Findings of the miner shown.
    #[arg(long, default_value_t = 10)]
    top: usize,
}

/// Times each program is optimized for its time per op (the best run
/// counts).
const ROUNDS: usize = 3;

/// One program's figures.
#[derive(Default)]
struct Program {
    name: String,
    traces: usize,
    recorded: OpCounts,
    ours: OpCounts,
    pypy: OpCounts,
    with_pypy: usize,
    /// The best time to optimize all its traces, in seconds.
    seconds: f64,
    verdicts: Tally,
    /// Each trace's label and verdict (with --verify).
    outcomes: Vec<(String, String)>,
}

impl Program {
    fn ns_per_op(&self) -> f64 {
        self.seconds * 1e9 / self.recorded.ops.max(1) as f64
    }
}

/// The program a file holds: its name without directory and extension.
fn program_name(file: &str) -> String {
    let path = std::path::Path::new(file);
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned());
    stem.unwrap_or_else(|| file.to_string())
}

/// Optimizes `input` `ROUNDS` times: the last result and the best time.
fn optimize_timed(input: &Input, passes: Passes) -> (Vec<Optimization<'_>>, f64) {
    let mut best = f64::INFINITY;
    let mut result = Vec::new();
    for _ in 0..ROUNDS {
        let started = Instant::now();
        let (optimized, _) = optimize_inputs(std::slice::from_ref(input), passes, &HashMap::new());
        best = best.min(started.elapsed().as_secs_f64());
        result = optimized;
    }
    (result, best)
}

pub fn run(out: &mut String, args: ReportArgs) -> Result<(), Failure> {
    let passes = Passes {
        peel: true,
        ..Passes::default()
    };
    let inputs = read_inputs(&args.files)?;
    let mut programs = Vec::new();
    let mut optimized = Vec::new();
    for input in &inputs {
        let (results, seconds) = optimize_timed(input, passes);
        let mut program = Program {
            name: program_name(&input.file),
            seconds,
            ..Program::default()
        };
        for ((_, trace, pypy, _), result, _) in &results {
            let Ok((result, _)) = result else { continue };
            program.traces += 1;
            program.recorded += OpCounts::of(trace);
            program.ours += OpCounts::of(&result.trace);
            if let Some(pypy) = pypy {
                program.with_pypy += 1;
                program.pypy += OpCounts::of(pypy);
            }
        }
        programs.push(program);
        optimized.push(results);
    }
    let kind = None;
    if args.verify {
        let work: Vec<(usize, &Optimization)> = (optimized.iter().enumerate())
            .flat_map(|(p, results)| results.iter().map(move |r| (p, r)))
            .collect();
        let solvers = start_solvers(kind, args.timeout, args.jobs, None)?;
        in_parallel(
            &work,
            solvers,
            |(_, item), solver| judge(item, solver),
            |k, verdict| {
                let (p, item) = work[k];
                if let Some((result, _)) = verdict {
                    let text = verdict_text(result, &mut programs[p].verdicts);
                    programs[p].outcomes.push((item.0 .0.clone(), text));
                }
            },
        );
    }
    let all: Vec<Optimization> = optimized.into_iter().flatten().collect();
    let mining = if args.mine {
        let work = our_traces(&all);
        let solvers = start_solvers(kind, args.timeout, args.jobs, None)?;
        Some(mine_all(&work, solvers, Options::default()))
    } else {
        None
    };
    let text = match args.markdown {
        true => markdown(&programs, &args),
        false => html(&programs, mining.as_ref(), &args),
    };
    match &args.output {
        Some(path) => std::fs::write(path, text)
            .map_err(|e| Failure::input(format!("{}: cannot write: {e}", path.display())))?,
        None => out.push_str(&text),
    }
    Ok(())
}

/// All programs' figures added up.
fn total(programs: &[Program]) -> Program {
    let mut total = Program {
        name: "total".into(),
        ..Program::default()
    };
    for p in programs {
        total.traces += p.traces;
        total.recorded += p.recorded;
        total.ours += p.ours;
        total.pypy += p.pypy;
        total.with_pypy += p.with_pypy;
        total.seconds += p.seconds;
        total.verdicts.add_counts(&p.verdicts);
    }
    total
}

/// The five counts of Figure 7, with their column names.
fn columns(c: &OpCounts) -> [(&'static str, usize); 5] {
    [
        ("ops", c.ops),
        ("new", c.allocations),
        ("get", c.reads),
        ("set", c.writes),
        ("guard", c.guards),
    ]
}

fn verdict_summary(p: &Program, asked: bool) -> String {
    if !asked {
        return "not run".into();
    }
    let t = &p.verdicts;
    format!(
        "{} proved, {} refuted, {} unknown, {} unsupported",
        t.proved, t.refuted, t.unknown, t.unsupported
    )
}

fn markdown(programs: &[Program], args: &ReportArgs) -> String {
    let mut text = String::new();
    text.push_str(
        "| program | traces | ops: recorded / traceopt / PyPy | new | get | set | guard | ns per op | verified |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---|\n",
    );
    let total = total(programs);
    for p in programs.iter().chain([&total]) {
        let cells: Vec<String> = (columns(&p.recorded).iter())
            .zip(columns(&p.ours))
            .zip(columns(&p.pypy))
            .map(|(((_, r), (_, o)), (_, y))| format!("{r} / {o} / {y}"))
            .collect();
        writeln!(
            text,
            "| {} | {} | {} | {:.0} | {} |",
            p.name,
            p.traces,
            cells.join(" | "),
            p.ns_per_op(),
            verdict_summary(p, args.verify)
        )
        .unwrap();
    }
    writeln!(
        text,
        "\nEach cell: recorded / optimized by traceopt / optimized by PyPy (over the {} of {} \
         traces its logs optimized).",
        total.with_pypy, total.traces
    )
    .unwrap();
    text
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn html(programs: &[Program], mining: Option<&Mining>, args: &ReportArgs) -> String {
    let total = total(programs);
    let mut page = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>traceopt report</title>\n<style>\n\
         body { font-family: sans-serif; margin: 2em; }\n\
         table { border-collapse: collapse; }\n\
         td, th { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: right; }\n\
         td:first-child, th:first-child { text-align: left; }\n\
         tr.total { font-weight: bold; }\n\
         .charts { display: flex; flex-wrap: wrap; gap: 1em; }\n\
         pre { background: #f6f6f6; padding: 0.5em; }\n\
         </style>\n</head>\n<body>\n<h1>traceopt: what the optimizers leave</h1>\n",
    );
    writeln!(
        page,
        "<p>{} program(s), {} trace(s). Each cell: recorded / optimized by traceopt / \
         optimized by PyPy (over the {} trace(s) its logs optimized). Time: traceopt's \
         optimizer, per recorded op, best of {ROUNDS} runs.</p>",
        programs.len(),
        total.traces,
        total.with_pypy
    )
    .unwrap();
    page.push_str(
        "<table>\n<tr><th>program</th><th>traces</th><th>ops</th><th>new</th><th>get</th>\
         <th>set</th><th>guard</th><th>ns per op</th><th>verified</th></tr>\n",
    );
    for p in programs.iter().chain([&total]) {
        let class = if std::ptr::eq(p, &total) {
            " class=\"total\""
        } else {
            ""
        };
        write!(
            page,
            "<tr{class}><td>{}</td><td>{}</td>",
            escape(&p.name),
            p.traces
        )
        .unwrap();
        for ((_, r), ((_, o), (_, y))) in (columns(&p.recorded).into_iter())
            .zip(columns(&p.ours).into_iter().zip(columns(&p.pypy)))
        {
            write!(page, "<td>{r} / {o} / {y}</td>").unwrap();
        }
        writeln!(
            page,
            "<td>{:.0}</td><td>{}</td></tr>",
            p.ns_per_op(),
            verdict_summary(p, args.verify)
        )
        .unwrap();
    }
    page.push_str(
        "</table>\n<h2>Counts as a share of the recorded ones</h2>\n<div class=\"charts\">\n",
    );
    for p in [&total].into_iter().chain(programs) {
        let id = escape(&p.name);
        writeln!(page, "<figure id=\"chart-{id}\">{}</figure>", chart(p)).unwrap();
    }
    page.push_str("</div>\n");
    if args.verify {
        page.push_str("<h2>Verification</h2>\n");
        for p in programs {
            writeln!(
                page,
                "<details><summary>{}: {}</summary>\n<ul>",
                escape(&p.name),
                verdict_summary(p, true)
            )
            .unwrap();
            for (label, verdict) in &p.outcomes {
                writeln!(page, "<li>{}: {}</li>", escape(label), escape(verdict)).unwrap();
            }
            page.push_str("</ul></details>\n");
        }
    }
    if let Some(mining) = mining {
        let t = &mining.tally;
        writeln!(
            page,
            "<h2>Missed optimizations in our output</h2>\n<p>{} integer op(s) and guard(s), \
             {} solver queries ({} undecided), {} hit(s) of {} shape(s).</p>",
            t.lines,
            t.queries,
            t.unknown,
            mining.hits.len(),
            mining.groups.len()
        )
        .unwrap();
        for (rank, group) in mining.groups.iter().take(args.top).enumerate() {
            writeln!(
                page,
                "<h3>{}. {} hit(s), {}</h3>\n<p>at {}</p>\n<pre>{}</pre>",
                rank + 1,
                group.at.len(),
                group.kind,
                escape(&group.at.join(", ")),
                escape(&group.example)
            )
            .unwrap();
        }
    }
    page.push_str("</body>\n</html>\n");
    page
}

/// A bar chart of a program's five counts, recorded, ours and PyPy's,
/// each as a share of the recorded count, as inline SVG.
fn chart(p: &Program) -> String {
    let series = [
        ("recorded", &p.recorded),
        ("traceopt", &p.ours),
        ("PyPy", &p.pypy),
    ];
    let share = |count: usize, recorded: usize| match recorded {
        0 => 0.0,
        r => 100.0 * count as f64 / r as f64,
    };
    let top = (series.iter())
        .flat_map(|(_, c)| {
            columns(c)
                .map(|(_, v)| v)
                .into_iter()
                .zip(columns(&p.recorded))
        })
        .map(|(v, (_, r))| share(v, r))
        .fold(100.0f64, f64::max)
        * 1.35;
    let mut svg = String::new();
    let drawn = (|| -> Result<(), Box<dyn std::error::Error + '_>> {
        let root = SVGBackend::with_string(&mut svg, (460, 250)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(&p.name, ("sans-serif", 16))
            .margin(6)
            .y_label_area_size(52)
            .build_cartesian_2d(0f64..5f64, -top * 0.1..top)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .disable_x_axis()
            .y_labels(6)
            .light_line_style(WHITE)
            .y_desc("% of recorded")
            .draw()?;
        let colors = [
            RGBColor(150, 150, 150),
            RGBColor(31, 119, 180),
            RGBColor(255, 127, 14),
        ];
        for (s, ((name, counts), color)) in series.iter().zip(colors).enumerate() {
            let bars = columns(counts)
                .into_iter()
                .zip(columns(&p.recorded))
                .enumerate();
            chart
                .draw_series(bars.map(|(c, ((_, v), (_, r)))| {
                    let x = c as f64 + 0.1 + 0.27 * s as f64;
                    Rectangle::new([(x, 0.0), (x + 0.25, share(v, r))], color.filled())
                }))?
                .label(*name)
                .legend(move |(x, y)| Rectangle::new([(x, y - 4), (x + 8, y + 4)], color.filled()));
        }
        chart.draw_series(
            columns(&p.recorded)
                .into_iter()
                .enumerate()
                .map(|(c, (name, _))| {
                    Text::new(name, (c as f64 + 0.35, -top * 0.03), ("sans-serif", 12))
                }),
        )?;
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()?;
        root.present()?;
        Ok(())
    })();
    match drawn {
        Ok(()) => svg,
        Err(e) => format!("<p>(no chart: {})</p>", escape(&e.to_string())),
    }
}
