//! The proof harness: abstract values made of SMT variables, the concrete
//! meaning of ops from the smt crate's encodings (the validator's, which a
//! test cross-checks against the interpreter), and counterexamples shown
//! as concrete abstract values re-run through the `i64` code. How proofs
//! are run (workers, solver choice, cache) is in `prover.rs`.

// Shared by several test files, each using a part.
#![allow(dead_code, unused_imports)]

mod cache;
mod lemmas;
mod prover;

pub use cache::cache_enabled;
pub use lemmas::{instances as lemma_instances, real as real_operation};
pub use prover::{Config, Prover, Report, Suite, Times};

use traceopt_domains::symbolic::{self, Sym, SymBit};
use traceopt_domains::{IntBound, KnownBits, Word};
use traceopt_smt::{Model, Term};

impl Prover<'_> {
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
pub trait Domain: 'static {
    /// Names its proofs.
    const NAME: &'static str;
    /// "Contains x and is valid" in parts the solver is asked about one
    /// at a time (together they are the whole).
    const PARTS: &'static [&'static str] = &[""];
    type Of<W: Word>: Copy;
    fn declare(p: &mut Prover, name: &str) -> Self::Of<Sym>;
    fn constant<W: Word>(value: W) -> Self::Of<W>;
    fn contains<W: Word>(v: Self::Of<W>, x: W) -> W::Bit;
    /// The invariant results must keep.
    fn valid<W: Word>(v: Self::Of<W>) -> W::Bit;
    /// Part `i` of `PARTS`.
    fn part<W: Word>(v: Self::Of<W>, x: W, i: usize) -> W::Bit {
        let _ = i;
        Self::contains(v, x) & Self::valid(v)
    }
    fn is_constant<W: Word>(v: Self::Of<W>) -> W::Bit;
    fn concrete(model: &Model, name: &str) -> Self::Of<i64>;
    fn show(v: Self::Of<i64>) -> String;
}

pub struct Bits;
pub struct Bound;

impl Domain for Bits {
    const NAME: &'static str = "bits";
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
    const NAME: &'static str = "bound";
    /// The interval and the bits apart: the bits part is then a known-bits
    /// proof, which the solver finishes much faster alone.
    const PARTS: &'static [&'static str] = &[" (interval)", " (bits)"];
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
    fn part<W: Word>(v: IntBound<W>, x: W, i: usize) -> W::Bit {
        match i {
            0 => v.lower.sle(x) & x.sle(v.upper),
            _ => v.bits.contains(x) & v.bits.is_well_formed(),
        }
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
    if symbolic::width() < 64 || symbolic::opaque() {
        // Narrow proofs and proofs by lemmas (multiplication and
        // division): the word trait's operations (its floor division
        // proved equal to the validator's meaning at 64 bits in
        // `proofs.rs`), opaque in proofs by lemmas.
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
pub type Transfer<D, W> = fn(&[<D as Domain>::Of<W>]) -> <D as Domain>::Of<W>;

/// Adds the proofs of a forward transfer function of `D` for `op`:
/// soundness (in `D::PARTS`), then the precision property "constants in,
/// constant out".
pub fn forward<D: Domain>(
    s: &mut Suite,
    op: Opcode,
    sym: Transfer<D, Sym>,
    conc: Transfer<D, i64>,
) {
    forward_parts::<D>(s, op, sym, conc, 0..D::PARTS.len());
}

/// `forward` with only some of the soundness parts.
pub fn forward_parts<D: Domain>(
    s: &mut Suite,
    op: Opcode,
    sym: Transfer<D, Sym>,
    conc: Transfer<D, i64>,
    parts: std::ops::Range<usize>,
) {
    for (i, part) in D::PARTS
        .iter()
        .enumerate()
        .take(parts.end)
        .skip(parts.start)
    {
        s.add(&format!("{} {op} is sound{part}", D::NAME), move |p| {
            sound::<D>(p, op, sym, conc, i)
        });
    }
    s.add(&format!("{} {op} keeps constants", D::NAME), move |p| {
        keeps_constants::<D>(p, op, sym, conc)
    });
}

const NAMES: [&str; 2] = ["a", "b"];
const XS: [&str; 2] = ["x", "y"];

fn sound<D: Domain>(
    p: &mut Prover,
    op: Opcode,
    sym: Transfer<D, Sym>,
    conc: Transfer<D, i64>,
    part: usize,
) {
    let arity = op.info().signature.len();
    let mut args = Vec::new();
    let mut values = Vec::new();
    for i in 0..arity {
        let v = D::declare(p, NAMES[i]);
        let x = p.word(XS[i]);
        p.assume(D::contains(v, x));
        args.push(v);
        values.push(x);
    }
    let (value, defined, no_overflow) = meaning(op, &values);
    p.assume(defined & no_overflow);
    p.prove(D::part(sym(&args), value, part), |m| {
        let cargs: Vec<D::Of<i64>> = (0..arity).map(|i| D::concrete(m, NAMES[i])).collect();
        let cvals: Vec<i64> = (0..arity).map(|i| val(m, XS[i])).collect();
        let shown: Vec<String> = cargs.iter().map(|a| D::show(*a)).collect();
        format!(
            "{op}({}) gives {}, but {op}({cvals:?}) = {}",
            shown.join(", "),
            D::show(conc(&cargs)),
            run(op, &cvals)
        )
    });
}

fn keeps_constants<D: Domain>(
    p: &mut Prover,
    op: Opcode,
    sym: Transfer<D, Sym>,
    conc: Transfer<D, i64>,
) {
    let arity = op.info().signature.len();
    let mut consts = Vec::new();
    let mut values = Vec::new();
    for x in XS.iter().take(arity) {
        let x = p.word(x);
        consts.push(D::constant(x));
        values.push(x);
    }
    let (_, defined, no_overflow) = meaning(op, &values);
    p.assume(defined & no_overflow);
    p.prove(D::is_constant(sym(&consts)), |m| {
        let cvals: Vec<i64> = (0..arity).map(|i| val(m, XS[i])).collect();
        let cargs: Vec<D::Of<i64>> = cvals.iter().map(|&v| D::constant(v)).collect();
        format!("{op}{cvals:?} gives {}", D::show(conc(&cargs)))
    });
}
