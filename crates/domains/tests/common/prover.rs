//! Running the domain proofs: a suite of named proofs, each one goal,
//! shared out to one worker thread per core.
//!
//! A proof is a closure that declares variables, states assumptions and
//! proves a goal, running the domain code on symbolic words (terms live
//! per thread and are reset before each proof). The query then goes to a
//! new solver process (a long-lived one got several times slower as it
//! answered more queries), z3 checking it with its bit-blasting tactic
//! (`Solver::prove_bv`; its incremental core timed out on several). A
//! proof found in the cache (`cache.rs`) starts no solver at all.
//!
//! Which solver: `tests/proof-times.txt` records every proof's time with
//! z3, cvc5, Bitwuzla and Yices (as written by `PROOF_MEASURE=1`). A
//! proof asks the fastest installed solver on record first and the others
//! if it gives up; one not in the table asks z3, then cvc5 (then Bitwuzla
//! and Yices, when installed). The longest proofs start first, so
//! that the workers finish together. A proof the solvers cannot decide is
//! a failure, never a pass; so is a group that proves fewer facts than it
//! says it has. Before the goal, each solver is asked whether the
//! assumptions can hold at all (in the same process): contradictory
//! assumptions would prove any goal, so a vacuous proof is a failure.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::cache::{cache_enabled, Cache, Key};
use traceopt_domains::symbolic::{self, Opaque, SymBit};
use traceopt_smt::{Model, Name, Outcome, Solver, SolverKind, Sort, Term, ToName};

/// How to run a suite.
pub struct Config {
    /// The solvers to use, with their `--version` text.
    pub solvers: Vec<(SolverKind, String)>,
    /// Per query and solver.
    pub timeout: Duration,
    /// Worker threads (one solver at work each).
    pub jobs: usize,
    /// Where proved queries are remembered, if anywhere.
    pub cache: Option<PathBuf>,
    /// Run only the proofs whose name contains this.
    pub only: Option<String>,
    /// Ask every solver every query, to record their times.
    pub measure: bool,
    /// Write each query to this directory as a plain SMT-LIB file.
    pub dump: Option<PathBuf>,
}

/// The solver's `--version` text, if it runs.
fn version(kind: SolverKind) -> Option<String> {
    let out = std::process::Command::new(kind.binary())
        .arg("--version")
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
    out.status.success().then_some(text)
}

impl Config {
    /// Every solver found (z3 and cvc5; Bitwuzla and Yices when
    /// installed), a fixed timeout, two workers, no cache.
    pub fn plain(timeout: Duration) -> Config {
        let solvers: Vec<_> = SolverKind::ALL
            .into_iter()
            .filter_map(|kind| Some((kind, version(kind)?)))
            .collect();
        assert!(
            !solvers.is_empty(),
            "no SMT solver found (scripts/test installs z3 and cvc5)"
        );
        Config {
            solvers,
            timeout,
            jobs: 2,
            cache: None,
            only: None,
            measure: false,
            dump: None,
        }
    }

    /// From the environment: `PROOF_SOLVER=z3|cvc5|bitwuzla|yices` (those
    /// only, a comma-separated list),
    /// `PROOF_TIMEOUT=seconds` (default 120), `PROOF_JOBS` (default: one
    /// per core), `PROOF_ONLY=text`, `PROOF_MEASURE=1`, and the cache in
    /// `target/tmp` unless `CI=true` or `PROOF_CACHE=off`.
    pub fn from_env() -> Config {
        let var = |name| std::env::var(name).ok();
        let seconds = var("PROOF_TIMEOUT").and_then(|s| s.parse().ok());
        let mut config = Config::plain(Duration::from_secs(seconds.unwrap_or(120)));
        if let Some(names) = var("PROOF_SOLVER") {
            let kinds: Vec<_> = names.split(',').filter_map(SolverKind::from_name).collect();
            config.solvers.retain(|(k, _)| kinds.contains(k));
            assert!(
                !config.solvers.is_empty(),
                "PROOF_SOLVER={names}: not found"
            );
        }
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        config.jobs = var("PROOF_JOBS")
            .and_then(|s| s.parse().ok())
            .unwrap_or(cores);
        config.only = var("PROOF_ONLY");
        config.measure = var("PROOF_MEASURE").is_some_and(|v| v == "1");
        config.dump = var("PROOF_DUMP").map(PathBuf::from);
        let cache = cache_enabled(var("CI").as_deref(), var("PROOF_CACHE").as_deref());
        if cache && !config.measure {
            config.cache = Some(Path::new(env!("CARGO_TARGET_TMPDIR")).join("domain-proofs.cache"));
        }
        config
    }

    /// The solvers in use.
    pub fn kinds(&self) -> Vec<SolverKind> {
        self.solvers.iter().map(|s| s.0).collect()
    }
}

type Body = Box<dyn Fn(&mut Prover) + Send + Sync>;

struct Job {
    group: usize,
    name: String,
    width: u32,
    lemmas: bool,
    body: Body,
}

/// Proofs in groups; each group says how many facts it proves.
#[derive(Default)]
pub struct Suite {
    groups: Vec<(String, usize)>,
    jobs: Vec<Job>,
    width: u32,
    lemmas: bool,
}

impl Suite {
    pub fn new() -> Suite {
        Suite::default()
    }

    /// Starts a group of `expected` proofs, at 64 bits.
    pub fn group(&mut self, name: &str, expected: usize) {
        self.groups.push((name.to_string(), expected));
        self.width = 64;
        self.lemmas = false;
    }

    /// Whether the proofs added from now on are by lemmas
    /// (`Prover::by_lemmas` before the body).
    pub fn set_lemmas(&mut self, on: bool) {
        self.lemmas = on;
    }

    /// The width of the words in the proofs added from now on.
    pub fn set_width(&mut self, bits: u32) {
        self.width = bits;
    }

    /// Adds a proof: `body` declares, assumes and proves one goal.
    pub fn add(&mut self, name: &str, body: impl Fn(&mut Prover) + Send + Sync + 'static) {
        let (group, _) = self.groups.last().expect("a group first");
        let mut name = format!("{group}: {name}");
        if self.width != 64 {
            write!(name, " at width {}", self.width).unwrap();
        }
        assert!(
            self.jobs.iter().all(|j| j.name != name),
            "two proofs named {name}"
        );
        self.jobs.push(Job {
            group: self.groups.len() - 1,
            name,
            width: self.width,
            lemmas: self.lemmas,
            body: Box::new(body),
        });
    }

    /// The names of the proofs, in the order added.
    pub fn names(&self) -> Vec<String> {
        self.jobs.iter().map(|j| j.name.clone()).collect()
    }

    /// Runs the proofs (those `config.only` selects), longest first.
    pub fn run(self, config: &Config) -> Report {
        let started = Instant::now();
        let times = Times::recorded();
        let cache = Cache::open(config.cache.as_deref());
        let kinds = config.kinds();
        let mut order: Vec<&Job> = self
            .jobs
            .iter()
            .filter(|j| config.only.as_ref().map_or(true, |o| j.name.contains(o)))
            .collect();
        // Unrecorded proofs first: they may be long.
        order.sort_by(|a, b| {
            let estimate = |j: &Job| times.estimate(&j.name, &kinds).unwrap_or(f64::INFINITY);
            estimate(b).total_cmp(&estimate(a))
        });
        let next = AtomicUsize::new(0);
        let results = Mutex::new(Vec::new());
        std::thread::scope(|scope| {
            for _ in 0..config.jobs.clamp(1, order.len().max(1)) {
                scope.spawn(|| {
                    let mut prover = Prover::new(config, &cache, &times);
                    while let Some(job) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
                        let result = prover.run(job);
                        eprintln!("{}", result.line());
                        results.lock().unwrap().push(result);
                    }
                });
            }
        });
        Report {
            groups: self.groups,
            proofs: results.into_inner().unwrap(),
            seconds: started.elapsed().as_secs_f64(),
        }
    }
}

/// What became of one proof.
pub struct ProofResult {
    pub group: usize,
    pub name: String,
    /// `None` when proved, else why not.
    pub failure: Option<String>,
    /// The solver that proved it, if one did.
    pub solver: Option<SolverKind>,
    pub cached: bool,
    pub seconds: f64,
    /// Each solver's time (`None`: it did not decide), when measuring.
    pub times: Vec<(SolverKind, Option<f64>)>,
}

impl ProofResult {
    fn new(name: &str) -> ProofResult {
        ProofResult {
            group: 0,
            name: name.to_string(),
            failure: None,
            solver: None,
            cached: false,
            seconds: 0.0,
            times: Vec::new(),
        }
    }

    fn line(&self) -> String {
        match (&self.failure, self.solver) {
            (Some(why), _) => format!("FAILED {why}"),
            (None, _) if self.cached => format!("proved {} (cached)", self.name),
            (None, Some(kind)) => format!(
                "proved {} in {:.2}s by {}",
                self.name,
                self.seconds,
                kind.binary()
            ),
            (None, None) => format!("proved {}", self.name),
        }
    }
}

pub struct Report {
    groups: Vec<(String, usize)>,
    pub proofs: Vec<ProofResult>,
    pub seconds: f64,
}

impl Report {
    pub fn proved(&self) -> usize {
        self.proofs.iter().filter(|p| p.failure.is_none()).count()
    }

    pub fn cached(&self) -> usize {
        self.proofs.iter().filter(|p| p.cached).count()
    }

    /// Every failed proof, and every group short of its count.
    pub fn failures(&self) -> Vec<String> {
        let mut failures: Vec<String> = self
            .proofs
            .iter()
            .filter_map(|p| p.failure.clone())
            .collect();
        for (i, (group, expected)) in self.groups.iter().enumerate() {
            let proved = self
                .proofs
                .iter()
                .filter(|p| p.group == i && p.failure.is_none())
                .count();
            if proved != *expected {
                failures.push(format!("{group}: {proved} of {expected} facts proved"));
            }
        }
        failures
    }

    /// The totals and the slowest proofs, on stderr.
    pub fn print_summary(&self) {
        let solver_time: f64 = self.proofs.iter().map(|p| p.seconds).sum();
        eprintln!(
            "{} proofs: {} proved ({} from the cache), {} failed, in {:.1}s ({:.1}s of solver time)",
            self.proofs.len(),
            self.proved(),
            self.cached(),
            self.proofs.len() - self.proved(),
            self.seconds,
            solver_time
        );
        let mut slowest: Vec<&ProofResult> = self.proofs.iter().collect();
        slowest.sort_by(|a, b| b.seconds.total_cmp(&a.seconds));
        for p in slowest.iter().take(12).filter(|p| p.seconds >= 1.0) {
            let solver = p.solver.map_or("-", |k| k.binary());
            eprintln!("  {:6.1}s {solver:4}  {}", p.seconds, p.name);
        }
    }

    /// Panics with every failure.
    pub fn check(&self) {
        let failures = self.failures();
        assert!(failures.is_empty(), "\n{}", failures.join("\n"));
    }

    /// The measured times in the format of `tests/proof-times.txt`.
    pub fn times_table(&self) -> String {
        let mut rows: Vec<(&str, String)> = self
            .proofs
            .iter()
            .map(|p| {
                let mut row = String::new();
                for kind in SolverKind::ALL {
                    let t = p.times.iter().find(|(k, _)| *k == kind).and_then(|t| t.1);
                    let t = t.map_or("-".to_string(), |s| format!("{s:.2}"));
                    write!(row, "{t:>8} ").unwrap();
                }
                write!(row, " {}", p.name).unwrap();
                (p.name.as_str(), row)
            })
            .collect();
        rows.sort();
        let mut text = String::from(TIMES_HEADER);
        for (_, row) in rows {
            text.push_str(&row);
            text.push('\n');
        }
        text
    }
}

const TIMES_HEADER: &str = "\
# Seconds each domain proof took with each solver (\"-\": no answer in
# time, or not installed), the solvers at work at once, as written to
# target/tmp by `PROOF_MEASURE=1 PROOF_TIMEOUT=60 cargo test -p
# traceopt-domains --test proofs every_domain`. The harness asks the
# fastest installed solver first and starts the longest proofs first.
# Rewrite it when proofs are added or get slower.
#     z3     cvc5 bitwuzla    yices  proof
";

/// The recorded times of `tests/proof-times.txt`: per proof, each
/// solver's (in `SolverKind::ALL` order), `None` where it had no answer.
pub struct Times(Vec<(String, Vec<Option<f64>>)>);

impl Times {
    pub fn recorded() -> Times {
        Times::parse(include_str!("../proof-times.txt"))
    }

    pub fn parse(text: &str) -> Times {
        let row = |line: &str| {
            let mut rest = line.trim_start();
            let mut times = Vec::new();
            for _ in SolverKind::ALL {
                let (time, more) = rest.split_once(' ')?;
                times.push(time.parse().ok());
                rest = more.trim_start();
            }
            Some((rest.trim().to_string(), times))
        };
        let rows = text
            .lines()
            .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
            .filter_map(row)
            .collect();
        Times(rows)
    }

    /// The recorded times of the given solvers for `name`, fastest first.
    fn ranked(&self, name: &str, among: &[SolverKind]) -> Vec<(SolverKind, f64)> {
        let Some((_, times)) = self.0.iter().find(|r| r.0 == name) else {
            return Vec::new();
        };
        let mut ranked: Vec<(SolverKind, f64)> = SolverKind::ALL
            .into_iter()
            .zip(times)
            .filter_map(|(kind, t)| Some((kind, (*t)?)))
            .filter(|(kind, _)| among.contains(kind))
            .collect();
        ranked.sort_by(|a, b| a.1.total_cmp(&b.1));
        ranked
    }

    /// The fastest recorded time of the given solvers.
    pub fn estimate(&self, name: &str, among: &[SolverKind]) -> Option<f64> {
        self.ranked(name, among).first().map(|r| r.1)
    }

    /// The solver to ask first among the given ones: the fastest on
    /// record, else the first given.
    pub fn first_choice(&self, name: &str, among: &[SolverKind]) -> SolverKind {
        let fastest = self.ranked(name, among).first().map(|r| r.0);
        fastest.unwrap_or(among[0])
    }
}

enum Command {
    Declare(String, Sort),
    DeclareFun(Name, Vec<Sort>, Sort),
    Assert(Term),
}

impl std::fmt::Display for Command {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Command::Declare(name, sort) => write!(f, "(declare-const {} {sort})", name.to_name()),
            Command::DeclareFun(name, args, result) => {
                let args: Vec<String> = args.iter().map(Sort::to_string).collect();
                write!(f, "(declare-fun {name} ({}) {result})", args.join(" "))
            }
            Command::Assert(fact) => write!(f, "(assert {fact})"),
        }
    }
}

/// What a proof's query is made of, which decides how a solver is asked.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Theory {
    /// Bitvectors and truth values: bit-blasted.
    Bits,
    /// Bitvectors with opaque operations (`Prover::by_lemmas`).
    Functions,
    /// Integers (`Prover::int`).
    Integers,
    /// Bitvectors, by the solver's own strategy (`Prover::by_rewriting`).
    Rewriting,
}

impl Theory {
    fn logic(self) -> &'static str {
        match self {
            Theory::Bits | Theory::Rewriting => "QF_BV",
            Theory::Functions => "QF_UFBV",
            Theory::Integers => "QF_NIA",
        }
    }
}

/// A solver's answer to a proof.
enum Answer {
    /// No value satisfies the assumptions.
    Vacuous,
    /// The assumptions are satisfiable (or that is unknown): the outcome.
    Checked(Outcome),
}

/// One worker's view: the proof at hand and the solvers to ask.
pub struct Prover<'a> {
    config: &'a Config,
    cache: &'a Cache,
    times: &'a Times,
    name: String,
    commands: Vec<Command>,
    /// The cache key of the commands so far.
    key: Key,
    names: Vec<String>,
    theory: Theory,
    result: Option<ProofResult>,
}

impl<'a> Prover<'a> {
    fn new(config: &'a Config, cache: &'a Cache, times: &'a Times) -> Prover<'a> {
        Prover {
            config,
            cache,
            times,
            name: String::new(),
            commands: Vec::new(),
            key: Key::new(),
            names: Vec::new(),
            theory: Theory::Bits,
            result: None,
        }
    }

    fn run(&mut self, job: &Job) -> ProofResult {
        symbolic::reset();
        symbolic::set_width(job.width);
        symbolic::set_opaque(false);
        self.theory = Theory::Bits;
        self.name = job.name.clone();
        self.commands.clear();
        self.names.clear();
        self.key = Key::new();
        self.key.add(&job.name);
        if job.lemmas {
            self.by_lemmas();
        }
        (job.body)(self);
        let mut result = self.result.take().unwrap_or_else(|| {
            let mut nothing = ProofResult::new(&job.name);
            nothing.failure = Some(format!("{}: proved nothing", job.name));
            nothing
        });
        result.group = job.group;
        result
    }

    fn command(&mut self, command: Command) {
        self.key.add(&command.to_string());
        self.commands.push(command);
    }

    /// From now on products, floor division and floor modulo are opaque
    /// functions: the proof assumes only the lemma instances about them
    /// (`lemmas.rs`, each schema proved over the integers), added when
    /// the goal is stated.
    pub fn by_lemmas(&mut self) {
        symbolic::set_opaque(true);
        self.theory = Theory::Functions;
        let word = Sort::Bv(symbolic::width());
        for op in Opaque::ALL {
            self.command(Command::DeclareFun(
                op.name(),
                vec![word, word],
                op.result(),
            ));
        }
    }

    /// Asks the solvers with their own strategy instead of bit-blasting
    /// (z3's rewriter proves ring identities at 64 bits that no solver
    /// proves by bit-blasting within minutes).
    pub fn by_rewriting(&mut self) {
        self.theory = Theory::Rewriting;
    }

    /// An integer variable (for lemmas about exact arithmetic).
    pub fn int(&mut self, name: &str) -> Term {
        self.theory = Theory::Integers;
        self.command(Command::Declare(name.to_string(), Sort::Int));
        Term::var(name)
    }

    /// A word variable of the current width.
    pub fn word(&mut self, name: &str) -> symbolic::Sym {
        self.command(Command::Declare(
            name.to_string(),
            Sort::Bv(symbolic::width()),
        ));
        self.names.push(name.to_string());
        symbolic::Sym::var(name)
    }

    pub fn assume(&mut self, fact: SymBit) {
        self.command(Command::Assert(fact.term()));
    }

    /// The solvers in the order to ask them.
    fn order(&self) -> Vec<&'a (SolverKind, String)> {
        let first = self.times.first_choice(&self.name, &self.config.kinds());
        let mut order: Vec<_> = self.config.solvers.iter().collect();
        order.sort_by_key(|(kind, _)| *kind != first);
        order
    }

    /// Asks a new process of `kind` whether the assumptions can hold at
    /// all (a contradiction would prove any goal), then whether the goal
    /// follows from them.
    fn ask(&self, kind: SolverKind, goal: &Term) -> Answer {
        let answer = Solver::start(Some(kind), self.config.timeout).and_then(|mut solver| {
            for command in &self.commands {
                match command {
                    Command::Declare(name, sort) => solver.declare(name, *sort)?,
                    Command::DeclareFun(name, args, result) => {
                        solver.declare_fun(name, args, *result)?
                    }
                    Command::Assert(fact) => solver.assert(fact)?,
                }
            }
            let names: Vec<Name> = self.names.iter().map(|n| n.to_name()).collect();
            let theory = self.theory;
            let mut prove = |goal: &Term, names: &[Name]| match theory {
                Theory::Bits => solver.prove_bv_names(goal, names),
                Theory::Functions => solver.prove_smt(goal, names),
                Theory::Integers | Theory::Rewriting => solver.prove_names(goal, names),
            };
            // "false" is provable exactly when the assumptions are not
            // satisfiable.
            match prove(&Term::Bool(false), &[])? {
                Outcome::Proved => return Ok(Answer::Vacuous),
                Outcome::Unknown(why) => {
                    let why = format!("are the assumptions satisfiable? {why}");
                    return Ok(Answer::Checked(Outcome::Unknown(why)));
                }
                Outcome::Counterexample(_) => {}
            }
            prove(goal, &names).map(Answer::Checked)
        });
        answer.unwrap_or_else(|e| Answer::Checked(Outcome::Unknown(e.to_string())))
    }

    /// Writes the query as a plain SMT-LIB file (`PROOF_DUMP`), for
    /// timing other solvers on it.
    fn dump(&self, dir: &Path, goal: &Term) {
        let mut text = format!("(set-logic {})\n", self.theory.logic());
        for command in &self.commands {
            let _ = writeln!(text, "{command}");
        }
        let _ = writeln!(text, "(assert {})\n(check-sat)", goal.not());
        let file: String = self
            .name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let _ = std::fs::create_dir_all(dir);
        let _ = std::fs::write(dir.join(format!("{file}.smt2")), text);
    }

    /// The cache key of the proof so far, for one solver.
    fn key_for(&self, (kind, version): &(SolverKind, String)) -> u128 {
        let mut key = self.key.clone();
        key.add(kind.binary());
        key.add(version);
        key.value()
    }

    /// Proves `goal` under the assumptions (the proof's one goal); on
    /// failure records `explain`'s account of the counterexample.
    pub fn prove(&mut self, goal: SymBit, explain: impl Fn(&Model) -> String) {
        assert!(self.result.is_none(), "{}: one goal per proof", self.name);
        if symbolic::opaque() {
            // The goal is built: every opaque application is known.
            let instances = super::lemmas::instances(&symbolic::applied(), Opaque::apply);
            self.assume(instances);
        }
        let goal = goal.term();
        self.key.add(&goal.to_string());
        let mut result = ProofResult::new(&self.name);
        let solvers = &self.config.solvers;
        if let Some((kind, _)) = solvers
            .iter()
            .find(|s| self.cache.contains(self.key_for(s)))
        {
            result.solver = Some(*kind);
            result.cached = true;
            self.result = Some(result);
            return;
        }
        if let Some(dir) = &self.config.dump {
            self.dump(dir, &goal);
        }
        let mut unknown = Vec::new();
        for solver in self.order() {
            let kind = solver.0;
            let started = Instant::now();
            let outcome = match self.ask(kind, &goal) {
                Answer::Checked(outcome) => outcome,
                Answer::Vacuous => {
                    result.failure = Some(format!(
                        "{}: VACUOUS: the assumptions are contradictory ({}), so the goal \
                         proves nothing",
                        self.name,
                        kind.binary()
                    ));
                    break;
                }
            };
            let seconds = started.elapsed().as_secs_f64();
            let decided = !matches!(outcome, Outcome::Unknown(_));
            result.times.push((kind, decided.then_some(seconds)));
            result.seconds += seconds;
            match outcome {
                Outcome::Proved => {
                    self.cache.record(self.key_for(solver), &self.name);
                    result.solver.get_or_insert(kind);
                    if !self.config.measure {
                        break;
                    }
                }
                Outcome::Counterexample(model) => {
                    let verdict = match self.theory {
                        // The opaque functions may take values the real
                        // operations never do.
                        Theory::Functions => "NOT PROVED: a counterexample under the lemmas",
                        _ => "NOT SOUND",
                    };
                    let mut text = format!("{}: {verdict} ({})\n", self.name, kind.binary());
                    for name in &self.names {
                        let _ = writeln!(text, "    {name} = {}", model.i64(name).unwrap_or(0));
                    }
                    let _ = write!(text, "  {}", explain(&model));
                    result.failure = Some(text);
                    break;
                }
                Outcome::Unknown(reason) => unknown.push(format!("{}: {reason}", kind.binary())),
            }
        }
        if result.solver.is_none() && result.failure.is_none() {
            let why = unknown.join("; ");
            result.failure = Some(format!("{}: UNKNOWN ({why})", self.name));
        }
        self.result = Some(result);
    }
}
