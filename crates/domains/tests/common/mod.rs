//! The proof harness: abstract values made of SMT variables, the concrete
//! meaning of ops from the smt crate's encodings (the validator's, which a
//! test cross-checks against the interpreter), and counterexamples shown
//! as concrete abstract values re-run through the `i64` code.

#![allow(dead_code)]

use std::fmt::Write as _;
use std::time::Duration;

use traceopt_domains::symbolic::{self, Sym, SymBit};
use traceopt_domains::{IntBound, KnownBits, Word};
use traceopt_smt::{Model, Outcome, Solver, SolverKind, Sort, Term};

/// Runs each proof through a portfolio of solvers: z3 first with a short
/// timeout, then cvc5 with a long one (each is much faster than the other
/// on some of these queries). Both see the same declarations and
/// assumptions. `PROOF_SOLVER=z3|cvc5` uses one only; `PROOF_TIMEOUT`
/// sets the long timeout in seconds (default 120).
pub struct Prover {
    pub solvers: Vec<Solver>,
    names: Vec<String>,
    pub proved: usize,
    pub failures: Vec<String>,
}

fn long_timeout() -> Duration {
    let seconds = std::env::var("PROOF_TIMEOUT")
        .ok()
        .and_then(|s| s.parse().ok());
    Duration::from_secs(seconds.unwrap_or(120))
}

impl Prover {
    pub fn new() -> Prover {
        let only = std::env::var("PROOF_SOLVER").ok();
        let kinds: Vec<SolverKind> = match only.as_deref().and_then(SolverKind::from_name) {
            Some(kind) => vec![kind],
            None => vec![SolverKind::Z3, SolverKind::Cvc5],
        };
        let mut solvers: Vec<Solver> = kinds
            .iter()
            .filter_map(|&kind| Solver::start(Some(kind), long_timeout()).ok())
            .collect();
        assert!(
            !solvers.is_empty(),
            "no SMT solver found (scripts/test installs z3 and cvc5)"
        );
        if solvers.len() > 1 {
            let short = Solver::start(Some(kinds[0]), Duration::from_secs(20)).unwrap();
            solvers[0] = short;
        }
        Prover {
            solvers,
            names: Vec::new(),
            proved: 0,
            failures: Vec::new(),
        }
    }

    /// Starts a fresh proof: forgets earlier variables and terms.
    pub fn begin(&mut self) {
        symbolic::reset();
        self.names.clear();
        for solver in &mut self.solvers {
            solver.pop().unwrap();
            solver.push().unwrap();
        }
    }

    pub fn word(&mut self, name: &str) -> Sym {
        for solver in &mut self.solvers {
            solver.declare(name, Sort::Bv(symbolic::width())).unwrap();
        }
        self.names.push(name.to_string());
        Sym::var(name)
    }

    /// A well-formed known-bits value named `name`.
    pub fn known_bits(&mut self, name: &str) -> KnownBits<Sym> {
        let k = KnownBits {
            ones: self.word(&format!("{name}_ones")),
            unknowns: self.word(&format!("{name}_unknowns")),
        };
        self.assume(k.is_well_formed());
        k
    }

    /// A well-formed bound named `name` (not necessarily normalized: the
    /// raw functions do not rely on that).
    pub fn bound(&mut self, name: &str) -> IntBound<Sym> {
        let b = IntBound {
            lower: self.word(&format!("{name}_lower")),
            upper: self.word(&format!("{name}_upper")),
            bits: KnownBits {
                ones: self.word(&format!("{name}_ones")),
                unknowns: self.word(&format!("{name}_unknowns")),
            },
        };
        self.assume(b.is_well_formed());
        b
    }

    pub fn assume(&mut self, fact: SymBit) {
        let fact = fact.term();
        for solver in &mut self.solvers {
            solver.assert(&fact).unwrap();
        }
    }

    /// The first definite answer of the portfolio, or the last unknown.
    fn ask(&mut self, goal: &Term, case: &Term, names: &[String]) -> Outcome {
        let mut outcome = Outcome::Unknown("no solver".into());
        for solver in &mut self.solvers {
            solver.push().unwrap();
            solver.assert(case).unwrap();
            outcome = solver.prove(goal, names).unwrap();
            solver.pop().unwrap();
            if !matches!(outcome, Outcome::Unknown(_)) {
                break;
            }
        }
        outcome
    }

    /// Proves `goal` under the assumptions; on failure records `explain`'s
    /// account of the counterexample.
    pub fn prove(&mut self, what: &str, goal: SymBit, explain: impl Fn(&Model) -> String) {
        self.prove_cases(what, goal, &[], explain)
    }

    /// Proves `goal` in each of `cases` (assumed one at a time), which
    /// must together cover every value the assumptions allow. Splitting
    /// helps the solver where a shift count is unknown.
    pub fn prove_cases(
        &mut self,
        what: &str,
        goal: SymBit,
        cases: &[SymBit],
        explain: impl Fn(&Model) -> String,
    ) {
        // For working on one proof: `PROOF_ONLY=text` skips the others
        // (and the count check then fails, so CI never runs this way).
        if let Ok(only) = std::env::var("PROOF_ONLY") {
            if !what.contains(&only) {
                return;
            }
        }
        let names = self.names.clone();
        let started = std::time::Instant::now();
        let all = [tt()];
        let cases = if cases.is_empty() { &all[..] } else { cases };
        for case in cases {
            let outcome = self.ask(&goal.term(), &case.term(), &names);
            match outcome {
                Outcome::Proved => continue,
                Outcome::Counterexample(model) => {
                    let mut text = format!("{what}: NOT SOUND\n");
                    for name in &names {
                        let _ = writeln!(text, "    {name} = {}", model.i64(name).unwrap_or(0));
                    }
                    let _ = writeln!(text, "  {}", explain(&model));
                    self.failures.push(text);
                }
                Outcome::Unknown(reason) => self.failures.push(format!(
                    "{what}: UNKNOWN ({reason}) in case {}",
                    case.term()
                )),
            }
            return;
        }
        let seconds = started.elapsed().as_secs_f64();
        eprintln!(
            "proved {what} at width {} in {seconds:.2}s",
            symbolic::width()
        );
        self.proved += 1;
    }

    /// Panics with every failure, after all proofs of a test ran.
    pub fn finish(self, expected_count: usize) {
        assert!(self.failures.is_empty(), "{}", self.failures.join("\n"));
        assert_eq!(self.proved, expected_count, "number of proved facts");
    }
}

pub fn val(model: &Model, name: &str) -> i64 {
    model.i64(name).unwrap_or(0)
}

pub fn concrete_bits(model: &Model, name: &str) -> KnownBits<i64> {
    KnownBits {
        ones: val(model, &format!("{name}_ones")),
        unknowns: val(model, &format!("{name}_unknowns")),
    }
}

pub fn concrete_bound(model: &Model, name: &str) -> IntBound<i64> {
    IntBound {
        lower: val(model, &format!("{name}_lower")),
        upper: val(model, &format!("{name}_upper")),
        bits: concrete_bits(model, name),
    }
}

/// A symbolic truth value from a term.
pub fn bit(term: Term) -> SymBit {
    SymBit::from_term(term)
}

pub fn implies(a: SymBit, b: SymBit) -> SymBit {
    !a | b
}

pub fn tt() -> SymBit {
    <SymBit as traceopt_domains::Bit>::lit(true)
}

pub fn word_term(w: Sym) -> Term {
    w.term()
}

pub fn lit(v: i64) -> Sym {
    Sym::lit(v)
}

/// A domain the harness can state proofs about.
pub trait Domain {
    type Of<W: Word>: Copy;
    fn declare(p: &mut Prover, name: &str) -> Self::Of<Sym>;
    fn constant<W: Word>(value: W) -> Self::Of<W>;
    fn contains<W: Word>(v: Self::Of<W>, x: W) -> W::Bit;
    /// The invariant results must keep.
    fn valid<W: Word>(v: Self::Of<W>) -> W::Bit;
    /// "Contains x and is valid", as parts the solver is asked about one
    /// at a time (together they are the whole).
    fn parts<W: Word>(v: Self::Of<W>, x: W) -> Vec<(&'static str, W::Bit)> {
        vec![("", Self::contains(v, x) & Self::valid(v))]
    }
    fn is_constant<W: Word>(v: Self::Of<W>) -> W::Bit;
    fn concrete(model: &Model, name: &str) -> Self::Of<i64>;
    fn show(v: Self::Of<i64>) -> String;
}

pub struct Bits;
pub struct Bound;

impl Domain for Bits {
    type Of<W: Word> = KnownBits<W>;
    fn declare(p: &mut Prover, name: &str) -> KnownBits<Sym> {
        p.known_bits(name)
    }
    fn constant<W: Word>(value: W) -> KnownBits<W> {
        KnownBits::constant(value)
    }
    fn contains<W: Word>(v: KnownBits<W>, x: W) -> W::Bit {
        v.contains(x)
    }
    fn valid<W: Word>(v: KnownBits<W>) -> W::Bit {
        v.is_well_formed()
    }
    fn is_constant<W: Word>(v: KnownBits<W>) -> W::Bit {
        v.is_constant()
    }
    fn concrete(model: &Model, name: &str) -> KnownBits<i64> {
        concrete_bits(model, name)
    }
    fn show(v: KnownBits<i64>) -> String {
        v.to_string()
    }
}

impl Domain for Bound {
    type Of<W: Word> = IntBound<W>;
    fn declare(p: &mut Prover, name: &str) -> IntBound<Sym> {
        p.bound(name)
    }
    fn constant<W: Word>(value: W) -> IntBound<W> {
        IntBound::constant(value)
    }
    fn contains<W: Word>(v: IntBound<W>, x: W) -> W::Bit {
        v.contains(x)
    }
    /// Raw results: normalization (proved on its own) does the rest.
    fn valid<W: Word>(v: IntBound<W>) -> W::Bit {
        v.bits.is_well_formed()
    }
    /// Normalizing a raw bound with equal ends or constant bits gives a
    /// constant.
    fn is_constant<W: Word>(v: IntBound<W>) -> W::Bit {
        v.is_constant() | v.bits.is_constant()
    }
    /// The interval and the bits apart: the bits part is then a known-bits
    /// proof, which the solver finishes much faster alone.
    fn parts<W: Word>(v: IntBound<W>, x: W) -> Vec<(&'static str, W::Bit)> {
        vec![
            (" (interval)", v.lower.sle(x) & x.sle(v.upper)),
            (" (bits)", v.bits.contains(x) & v.bits.is_well_formed()),
        ]
    }
    fn concrete(model: &Model, name: &str) -> IntBound<i64> {
        concrete_bound(model, name)
    }
    fn show(v: IntBound<i64>) -> String {
        v.to_string()
    }
}

use traceopt_ir::Opcode;

/// The concrete meaning of `op` on the given words, as the validator
/// encodes it: (value, defined, did not overflow).
pub fn meaning(op: Opcode, args: &[Sym]) -> (Sym, SymBit, SymBit) {
    if symbolic::width() < 64 {
        // Narrow proofs (multiplication and division): the SMT-LIB
        // functions, and the word trait's floor division (proved equal to
        // the validator's meaning at 64 bits in `proofs.rs`).
        let (x, y) = (args[0], args[1]);
        return match op {
            Opcode::IntMul => (x.mul(y), tt(), tt()),
            Opcode::IntMulOvf => (x.mul(y), tt(), !x.mul_overflows(y)),
            Opcode::UintMulHigh => (x.umul_high(y), tt(), tt()),
            Opcode::IntPydiv => (x.floordiv(y), y.ne(lit(0)), tt()),
            Opcode::IntPymod => (x.floormod(y), y.ne(lit(0)), tt()),
            _ => panic!("{op} has no narrow meaning"),
        };
    }
    let terms: Vec<Term> = args.iter().map(|a| a.term()).collect();
    let encoded = traceopt_smt::encode(op, &terms, None).expect("an integer op");
    let mut defined = encoded.defined;
    if let Some(lemma) = encoded.lemma {
        defined = defined.and(&lemma);
    }
    let no_overflow = encoded.no_overflow.unwrap_or(Term::Bool(true));
    (
        Sym::from_term(encoded.value),
        bit(defined),
        bit(no_overflow),
    )
}

/// The concrete result of `op`, from the interpreter, for messages.
pub fn run(op: Opcode, args: &[i64]) -> String {
    use traceopt_interp::{arith, Val};
    if op.has(traceopt_ir::Flags::OVF) {
        return match arith::int_ovf(op, args[0], args[1]) {
            Some((v, false)) => v.to_string(),
            Some((v, true)) => format!("{v} (overflowed)"),
            None => "?".into(),
        };
    }
    let vals: Vec<Val> = args.iter().map(|&a| Val::Int(a)).collect();
    match arith::eval(op, &vals) {
        Ok(Val::Int(v)) => v.to_string(),
        Ok(other) => format!("{other:?}"),
        Err(fault) => format!("undefined ({fault:?})"),
    }
}

/// A transfer function of domain `D` on words `W`, taking its arguments
/// as a slice.
pub type Transfer<D, W> = dyn Fn(&[<D as Domain>::Of<W>]) -> <D as Domain>::Of<W>;

/// Soundness of a forward transfer function of `D` for `op`, then the
/// precision property "constants in, constant out".
pub fn forward<D: Domain>(
    p: &mut Prover,
    op: Opcode,
    sym: &Transfer<D, Sym>,
    conc: &Transfer<D, i64>,
) {
    let arity = op.info().signature.len();
    let names = ["a", "b"];
    let xs = ["x", "y"];
    p.begin();
    let mut args = Vec::new();
    let mut values = Vec::new();
    for i in 0..arity {
        let v = D::declare(p, names[i]);
        let x = p.word(xs[i]);
        p.assume(D::contains(v, x));
        args.push(v);
        values.push(x);
    }
    let (value, defined, no_overflow) = meaning(op, &values);
    p.assume(defined & no_overflow);
    let result = sym(&args);
    for (part, goal) in D::parts(result, value) {
        p.prove(&format!("{op} is sound{part}"), goal, |m| {
            let cargs: Vec<D::Of<i64>> = (0..arity).map(|i| D::concrete(m, names[i])).collect();
            let cvals: Vec<i64> = (0..arity).map(|i| val(m, xs[i])).collect();
            let shown: Vec<String> = cargs.iter().map(|a| D::show(*a)).collect();
            format!(
                "{op}({}) gives {}, but {op}({cvals:?}) = {}",
                shown.join(", "),
                D::show(conc(&cargs)),
                run(op, &cvals)
            )
        });
    }

    p.begin();
    let mut consts = Vec::new();
    let mut values = Vec::new();
    for x in xs.iter().take(arity) {
        let x = p.word(x);
        consts.push(D::constant(x));
        values.push(x);
    }
    let (_, defined, no_overflow) = meaning(op, &values);
    p.assume(defined & no_overflow);
    let result = sym(&consts);
    p.prove(
        &format!("{op} keeps constants"),
        D::is_constant(result),
        |m| {
            let cvals: Vec<i64> = (0..arity).map(|i| val(m, xs[i])).collect();
            let cargs: Vec<D::Of<i64>> = cvals.iter().map(|&v| D::constant(v)).collect();
            format!("{op}{cvals:?} gives {}", D::show(conc(&cargs)))
        },
    );
}
