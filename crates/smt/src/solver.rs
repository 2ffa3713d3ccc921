//! A long-lived SMT solver process, driven over pipes in SMT-LIB 2.
//!
//! One process per `Solver` (keep one per thread): declarations and
//! assertions go down stdin, `push`/`pop` scope them, and `check` reads the
//! answer back. Every query has a timeout, given to the solver itself and
//! enforced here too: a solver that does not answer in time is killed and
//! restarted with the current scopes replayed, and the query is `Unknown`.
//! Unknown is never turned into proved.
//!
//! Every command is also kept per scope, so that a query can be written out
//! as a self-contained `.smt2` file (`dump_to`) and re-run by hand with
//! `z3 FILE` or `cvc5 FILE`.

use crate::term::{Sort, Term};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// The check that uses a solver's own (incremental) strategy.
const PLAIN_CHECK: &str = "(check-sat)";

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum SolverKind {
    Z3,
    Cvc5,
}

impl SolverKind {
    pub fn from_name(name: &str) -> Option<SolverKind> {
        match name {
            "z3" => Some(SolverKind::Z3),
            "cvc5" => Some(SolverKind::Cvc5),
            _ => None,
        }
    }

    pub fn binary(self) -> &'static str {
        match self {
            SolverKind::Z3 => "z3",
            SolverKind::Cvc5 => "cvc5",
        }
    }

    fn args(self) -> &'static [&'static str] {
        match self {
            SolverKind::Z3 => &["-in", "-smt2"],
            SolverKind::Cvc5 => &["--lang=smt2", "--incremental", "--produce-models"],
        }
    }

    /// The options that start every session (and every dumped file).
    fn preamble(self, timeout: Duration) -> Vec<String> {
        let ms = timeout.as_millis();
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
}

/// Values the solver gave to the asked-for variables, as 64-bit words.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct Model {
    pub values: BTreeMap<String, u64>,
}

impl Model {
    pub fn u64(&self, name: &str) -> Option<u64> {
        self.values.get(name).copied()
    }
    pub fn i64(&self, name: &str) -> Option<i64> {
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
    child: Child,
    /// Commands are buffered, and sent when an answer is awaited: one
    /// write per query rather than one per line.
    stdin: BufWriter<ChildStdin>,
    lines: Receiver<String>,
    /// The commands of each open scope (the first is the base scope).
    scopes: Vec<Vec<String>>,
    dump_dir: Option<PathBuf>,
    queries: usize,
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
        let (child, stdin, lines) = spawn(kind, &binary)?;
        let mut solver = Solver {
            kind,
            binary,
            timeout,
            child,
            stdin: BufWriter::new(stdin),
            lines,
            scopes: vec![Vec::new()],
            dump_dir: None,
            queries: 0,
        };
        for line in kind.preamble(timeout) {
            solver.write(&line)?;
        }
        Ok(solver)
    }

    pub fn kind(&self) -> SolverKind {
        self.kind
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

    fn write(&mut self, command: &str) -> Result<(), SolverError> {
        writeln!(self.stdin, "{command}").map_err(|e| self.died(e))
    }

    fn died(&self, e: std::io::Error) -> SolverError {
        SolverError::Died {
            binary: self.name(),
            message: e.to_string(),
        }
    }

    /// Sends a command and remembers it in the current scope.
    fn command(&mut self, command: String) -> Result<(), SolverError> {
        self.write(&command)?;
        self.scopes.last_mut().unwrap().push(command);
        Ok(())
    }

    pub fn declare(&mut self, name: &str, sort: Sort) -> Result<(), SolverError> {
        self.command(format!("(declare-const {name} {sort})"))
    }

    pub fn define(&mut self, name: &str, sort: Sort, value: &Term) -> Result<(), SolverError> {
        self.command(format!("(define-fun {name} () {sort} {value})"))
    }

    pub fn assert(&mut self, fact: &Term) -> Result<(), SolverError> {
        self.command(format!("(assert {fact})"))
    }

    pub fn push(&mut self) -> Result<(), SolverError> {
        self.write("(push 1)")?;
        self.scopes.push(Vec::new());
        Ok(())
    }

    pub fn pop(&mut self) -> Result<(), SolverError> {
        if self.scopes.len() > 1 {
            self.write("(pop 1)")?;
            self.scopes.pop();
        }
        Ok(())
    }

    /// Is `goal` true for every value of the declared names? A
    /// counterexample gives the values of `vars`.
    pub fn prove(&mut self, goal: &Term, vars: &[String]) -> Result<Outcome, SolverError> {
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
        let command = match self.kind {
            SolverKind::Z3 => {
                "(check-sat-using (then simplify propagate-values solve-eqs simplify bit-blast sat))"
            }
            SolverKind::Cvc5 => PLAIN_CHECK,
        };
        self.prove_with(goal, vars, command)
    }

    fn prove_with(
        &mut self,
        goal: &Term,
        vars: &[String],
        check_command: &str,
    ) -> Result<Outcome, SolverError> {
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
        self.check_with(vars, PLAIN_CHECK)
    }

    fn check_with(&mut self, vars: &[String], check_command: &str) -> Result<Sat, SolverError> {
        self.dump(vars, check_command)?;
        self.write(check_command)?;
        let deadline = Instant::now() + self.timeout + Duration::from_secs(2);
        let mut errors = Vec::new();
        let answer = loop {
            match self.response(deadline)? {
                None => {
                    self.restart()?;
                    let seconds = self.timeout.as_secs_f64();
                    return Ok(Sat::Unknown(format!("no answer within {seconds}s")));
                }
                Some(line) if line.starts_with("(error") => errors.push(line),
                Some(line) => break line,
            }
        };
        if !errors.is_empty() {
            return Err(SolverError::Solver {
                binary: self.name(),
                message: errors.join("; "),
            });
        }
        match answer.as_str() {
            "unsat" => Ok(Sat::Unsat),
            "sat" => Ok(Sat::Sat(self.model(vars, deadline)?)),
            "unknown" => {
                self.write("(get-info :reason-unknown)")?;
                let answer = self.response(deadline)?.unwrap_or_default();
                let reason = unknown_reason(&answer);
                // z3's incremental core can be left in a bad state by a
                // cancelled check (we saw it answer `sat` with models that
                // break the assertions afterwards), so continue in a fresh
                // process. A `check-sat-using` runs its tactic on a copy of
                // the assertions and keeps nothing, so the process can stay
                // (a restart costs more than most queries).
                if check_command == PLAIN_CHECK {
                    self.restart()?;
                }
                Ok(Sat::Unknown(
                    if reason.contains("timeout") || reason.contains("canceled") {
                        format!("timeout after {}s ({reason})", self.timeout.as_secs_f64())
                    } else {
                        reason
                    },
                ))
            }
            other => Err(SolverError::Solver {
                binary: self.name(),
                message: format!("unexpected answer '{other}' to check-sat"),
            }),
        }
    }

    fn model(&mut self, vars: &[String], deadline: Instant) -> Result<Model, SolverError> {
        let mut model = Model::default();
        if vars.is_empty() {
            return Ok(model);
        }
        self.write(&format!("(get-value ({}))", vars.join(" ")))?;
        let Some(text) = self.response(deadline)? else {
            return Err(SolverError::Died {
                binary: self.name(),
                message: "no answer to get-value".into(),
            });
        };
        if text.starts_with("(error") {
            return Err(SolverError::Solver {
                binary: self.name(),
                message: text,
            });
        }
        for (name, value) in parse_pairs(&text) {
            let value = parse_bv(&value).ok_or_else(|| SolverError::Solver {
                binary: self.name(),
                message: format!("cannot read the value '{value}' of {name}"),
            })?;
            model.values.insert(name, value as u64);
        }
        Ok(model)
    }

    /// One whole response (lines until the parentheses balance); `None`
    /// past the deadline.
    fn response(&mut self, deadline: Instant) -> Result<Option<String>, SolverError> {
        self.stdin.flush().map_err(|e| self.died(e))?;
        let mut text = String::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
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
                    let status = self.child.try_wait().ok().flatten();
                    return Err(SolverError::Died {
                        binary: self.name(),
                        message: format!("its output closed (exit status {status:?})"),
                    });
                }
            }
        }
    }

    /// Kills a stuck solver and starts a new one in the same state.
    fn restart(&mut self) -> Result<(), SolverError> {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let (child, stdin, lines) = spawn(self.kind, &self.binary)?;
        self.child = child;
        self.stdin = BufWriter::new(stdin);
        self.lines = lines;
        for line in self.kind.preamble(self.timeout) {
            self.write(&line)?;
        }
        let scopes = self.scopes.clone();
        for (depth, scope) in scopes.iter().enumerate() {
            if depth > 0 {
                self.write("(push 1)")?;
            }
            for command in scope {
                self.write(command)?;
            }
        }
        Ok(())
    }

    fn dump(&mut self, vars: &[String], check_command: &str) -> Result<(), SolverError> {
        let Some(dir) = &self.dump_dir else {
            return Ok(());
        };
        self.queries += 1;
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
            text.push_str(&format!("(get-value ({}))\n", vars.join(" ")));
        }
        std::fs::write(&path, text).map_err(|e| SolverError::Dump {
            path: path.display().to_string(),
            message: e.to_string(),
        })
    }
}

impl Drop for Solver {
    fn drop(&mut self) {
        let _ = self.write("(exit)");
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

type Pipes = (Child, ChildStdin, Receiver<String>);

fn spawn(kind: SolverKind, binary: &Path) -> Result<Pipes, SolverError> {
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
    let stdin = child.stdin.take().expect("stdin was piped");
    let stdout = child.stdout.take().expect("stdout was piped");
    let (sender, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    Ok((child, stdin, lines))
}

/// `(:reason-unknown "canceled")` (z3 quotes it, cvc5 may not) as `canceled`.
fn unknown_reason(answer: &str) -> String {
    let inner = answer.trim().trim_start_matches('(').trim_end_matches(')');
    let reason = inner.trim_start_matches(":reason-unknown").trim();
    reason.trim_matches('"').to_string()
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
        assert!(balanced("((x #x01))"));
        assert!(!balanced("((x #x01)"));
        assert!(balanced("(error \"a ( b\")"));
    }
}
