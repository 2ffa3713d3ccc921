//! `traceopt rules`: the peephole rules. `check` parses and type-checks a
//! rules directory and reports the termination and overlap checks;
//! `prove` proves every rule with the solver (cached); `confluence`
//! reports critical pairs that do not rejoin; `list` prints the rules
//! compiled into this binary.
//!
//! Exit codes: 0 all good (for `prove`: every rule proved), 1 a rule is
//! wrong or can never apply, 3 some rule is not proved otherwise (the
//! solver could not decide it, or it is marked `SORRY_SMT`), 2 usage or
//! input error.

use crate::input::Failure;
use crate::seconds::positive_seconds;
use clap::{Args, Subcommand};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;
use traceopt_opt::RULES;
use traceopt_rules::prove::{prove_all, Cache, Verdict};
use traceopt_rules::{cost, load_dir, sources};
use traceopt_smt::SolverKind;

#[derive(Args)]
pub struct RulesArgs {
    #[command(subcommand)]
    command: RulesCommand,
}

#[derive(Subcommand)]
enum RulesCommand {
    /// Parse and type-check the rules; report rules that do not lower the
    /// cost and overlapping rules whose order matters.
    Check {
        /// The rules directory (default: ./rules).
        dir: Option<PathBuf>,
    },
    /// Prove every rule correct with the SMT solver.
    Prove {
        /// The rules directory (default: ./rules).
        dir: Option<PathBuf>,
        /// The solver: cvc5 (the default when installed; faster on these
        /// queries) or z3.
        #[arg(long, value_parser = ["z3", "cvc5"])]
        solver: Option<String>,
        /// Seconds the solver may spend on one rule (more than 0, at most
        /// 1000000).
        #[arg(long, value_name = "SECS", default_value = "60", value_parser = positive_seconds, allow_negative_numbers = true)]
        timeout: Duration,
        /// Solver processes to run in parallel.
        #[arg(long, default_value_t = 2)]
        jobs: usize,
        /// The proof cache (rules proved before, by rule text, encoding
        /// code and solver version).
        #[arg(long, default_value = "target/rule-proofs.json")]
        cache: PathBuf,
        /// Ignore and do not write the cache.
        #[arg(long)]
        no_cache: bool,
    },
    /// Critical pairs between the rules (two rules that can rewrite the
    /// same expression), and whether both ways end in the same form.
    Confluence {
        /// The rules directory (default: ./rules); it must hold the rules
        /// compiled into this binary.
        dir: Option<PathBuf>,
        /// List every pair, not only those that do not rejoin.
        #[arg(long)]
        all: bool,
    },
    /// List the rules compiled into this binary: file, line, op, name.
    List,
}

fn rules_dir(dir: Option<PathBuf>) -> PathBuf {
    dir.unwrap_or_else(|| PathBuf::from("rules"))
}

pub fn run(out: &mut String, args: RulesArgs) -> Result<(), Failure> {
    match args.command {
        RulesCommand::Check { dir } => check(out, &rules_dir(dir)),
        RulesCommand::Prove {
            dir,
            solver,
            timeout,
            jobs,
            cache,
            no_cache,
        } => {
            let kind = match solver.as_deref() {
                Some(name) => SolverKind::from_name(name),
                None => traceopt_smt::Solver::start(Some(SolverKind::Cvc5), Duration::from_secs(1))
                    .ok()
                    .map(|_| SolverKind::Cvc5),
            };
            let cache = (!no_cache).then_some(cache.as_path());
            prove(out, &rules_dir(dir), kind, timeout, jobs, cache)
        }
        RulesCommand::Confluence { dir, all } => confluence(out, &rules_dir(dir), all),
        RulesCommand::List => {
            for rule in RULES {
                writeln!(
                    out,
                    "{}:{}  {:<20} {}",
                    rule.file,
                    rule.line,
                    rule.root.name(),
                    rule.name
                )
                .unwrap();
            }
            writeln!(out, "{} rules", RULES.len()).unwrap();
            Ok(())
        }
    }
}

fn check(out: &mut String, dir: &Path) -> Result<(), Failure> {
    let files = load_dir(dir).map_err(Failure::input)?;
    let rules = sources(&files);
    let costly = cost::non_decreasing(&rules);
    for (file, rule, from, to) in &costly {
        writeln!(
            out,
            "{file}:{}: rule '{}' does not lower the cost ({from} -> {to}) and gives no reason",
            rule.loc.line, rule.name
        )
        .unwrap();
    }
    let overlaps = cost::overlaps(&rules);
    for (a, b) in &overlaps {
        writeln!(
            out,
            "rules '{}' (line {}) and '{}' (line {}) overlap, build ops of different cost, and have equal priority",
            a.name, a.loc.line, b.name, b.loc.line
        )
        .unwrap();
    }
    let explained = rules
        .iter()
        .filter(|s| s.rule.cost_reason.is_some())
        .count();
    writeln!(
        out,
        "{} rules in {} file(s): all type-check; {} lower the cost, {explained} say why not, {} do not; {} overlap(s) to order",
        rules.len(),
        files.len(),
        rules.len() - explained - costly.len(),
        costly.len(),
        overlaps.len()
    )
    .unwrap();
    if costly.is_empty() {
        Ok(())
    } else {
        Err(Failure::silent(1))
    }
}

fn prove(
    out: &mut String,
    dir: &Path,
    kind: Option<SolverKind>,
    timeout: Duration,
    jobs: usize,
    cache_path: Option<&Path>,
) -> Result<(), Failure> {
    let files = load_dir(dir).map_err(Failure::input)?;
    let rules = sources(&files);
    let mut cache = Cache::open(cache_path);
    let started = std::time::Instant::now();
    let proofs = prove_all(kind, timeout, jobs, &mut cache, &rules)
        .map_err(|e| Failure::input(e.to_string()))?;
    let (mut proved, mut cached, mut sorry, mut wrong, mut unknown) = (0, 0, 0, 0, 0);
    for proof in &proofs {
        match &proof.verdict {
            Verdict::Proved => {
                proved += 1;
                cached += usize::from(proof.cached);
            }
            Verdict::Skipped => {
                sorry += 1;
                writeln!(out, "{}\n", proof.message()).unwrap();
            }
            Verdict::Unknown(_) => {
                unknown += 1;
                writeln!(out, "{}\n", proof.message()).unwrap();
            }
            Verdict::Wrong(_) | Verdict::NeverApplies(_) => {
                wrong += 1;
                writeln!(out, "{}\n", proof.message()).unwrap();
            }
        }
    }
    writeln!(
        out,
        "{} rules: {proved} proved ({cached} from the cache), {sorry} skipped (SORRY_SMT), {wrong} wrong or never applying, {unknown} unknown, in {:.1}s",
        proofs.len(),
        started.elapsed().as_secs_f64()
    )
    .unwrap();
    if wrong > 0 {
        Err(Failure::silent(1))
    } else if unknown > 0 || sorry > 0 {
        Err(Failure::silent(3))
    } else {
        Ok(())
    }
}

fn confluence(out: &mut String, dir: &Path, all: bool) -> Result<(), Failure> {
    use traceopt_opt::confluence::{report, Outcome};
    let files = load_dir(dir).map_err(Failure::input)?;
    let rules = sources(&files);
    let pairs = report(&rules);
    let (mut joins, mut differs, mut unexercised) = (0, 0, 0);
    for pair in &pairs {
        let line = match &pair.outcome {
            Outcome::Joins => {
                joins += 1;
                all.then(|| "joins".to_string())
            }
            Outcome::NotExercised => {
                unexercised += 1;
                all.then(|| "not exercised (the sample constants miss a check)".to_string())
            }
            Outcome::Differs(a, b) => {
                differs += 1;
                Some(format!(
                    "does not rejoin:\n    {} first: {a}\n    {} first: {b}",
                    pair.outer, pair.inner
                ))
            }
        };
        if let Some(line) = line {
            writeln!(
                out,
                "{} / {} on {}: {line}",
                pair.outer, pair.inner, pair.overlap
            )
            .unwrap();
        }
    }
    writeln!(
        out,
        "{} critical pairs: {joins} rejoin, {differs} do not, {unexercised} not exercised",
        pairs.len()
    )
    .unwrap();
    Ok(())
}
