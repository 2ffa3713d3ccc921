//! Symbolic words: the [`Word`] implementation the proofs run.
//!
//! A [`Sym`] is a handle to an SMT term, so that it is `Copy` like `i64`
//! and generic domain code reads the same for both. The terms live in a
//! per-thread arena; [`reset`] empties it between proofs (handles made
//! before are then invalid). Nothing is folded here: every operation
//! becomes the SMT-LIB function of the same meaning, so what the solver
//! sees is exactly what the domain code did.
//!
//! Products, floor division and floor modulo can instead be left
//! [`Opaque`]: uninterpreted functions whose applications are recorded,
//! so that a proof can assume only lemmas about them (proved on their own
//! over the integers) where bit-blasting the real circuits is beyond the
//! solvers.

use std::cell::{Cell, RefCell};
use std::ops::{BitAnd, BitOr, BitXor, Not};

use traceopt_smt::{Fun, Name, Sort, Term};

use crate::word::{Bit, Merge, Word};

thread_local! {
    static TERMS: RefCell<Vec<Term>> = const { RefCell::new(Vec::new()) };
    static WIDTH: Cell<u32> = const { Cell::new(64) };
    static OPAQUE: Cell<bool> = const { Cell::new(false) };
    static APPLIED: RefCell<Vec<(Opaque, Sym, Sym)>> = const { RefCell::new(Vec::new()) };
}

/// An operation a lemma-based proof leaves uninterpreted.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Opaque {
    /// The exact product of two signed words, a word twice as wide.
    SignedProduct,
    /// The exact product of two unsigned words, a word twice as wide.
    UnsignedProduct,
    /// Floor division, Python's `//` (MININT // -1 wraps to MININT).
    FloorDiv,
    /// Floor modulo, Python's `%` (`bvsmod`).
    FloorMod,
}

impl Opaque {
    pub const ALL: [Opaque; 4] = [
        Opaque::SignedProduct,
        Opaque::UnsignedProduct,
        Opaque::FloorDiv,
        Opaque::FloorMod,
    ];
    /// The function's name in the solver.
    pub fn name(self) -> Name {
        Name::invented(match self {
            Opaque::SignedProduct => "smul",
            Opaque::UnsignedProduct => "umul",
            Opaque::FloorDiv => "floordiv",
            Opaque::FloorMod => "floormod",
        })
    }
    /// The sort of its result at the current width.
    pub fn result(self) -> Sort {
        match self {
            Opaque::SignedProduct | Opaque::UnsignedProduct => Sort::Bv(2 * width()),
            Opaque::FloorDiv | Opaque::FloorMod => Sort::Bv(width()),
        }
    }
    /// The application to `x` and `y`, recorded for the lemmas.
    pub fn apply(self, x: Sym, y: Sym) -> Term {
        APPLIED.with(|applied| applied.borrow_mut().push((self, x, y)));
        Term::apply(&self.name(), &[x.term(), y.term()])
    }
}

/// Leaves products, floor division and floor modulo uninterpreted (on this
/// thread, from now on) or not.
pub fn set_opaque(on: bool) {
    OPAQUE.with(|o| o.set(on));
}

pub fn opaque() -> bool {
    OPAQUE.with(|o| o.get())
}

/// The applications of opaque operations made since the last [`reset`].
pub fn applied() -> Vec<(Opaque, Sym, Sym)> {
    APPLIED.with(|applied| applied.borrow().clone())
}

/// Sets the width of the symbolic words built on this thread from now on
/// (64 unless set). Proofs at a smaller width check the same code on
/// narrower words, where the solver finishes what it cannot at 64 bits.
pub fn set_width(bits: u32) {
    assert!((2..=64).contains(&bits), "width {bits}");
    WIDTH.with(|w| w.set(bits));
}

pub fn width() -> u32 {
    WIDTH.with(|w| w.get())
}

fn intern(term: Term) -> u32 {
    TERMS.with(|terms| {
        let mut terms = terms.borrow_mut();
        terms.push(term);
        (terms.len() - 1) as u32
    })
}

fn term_at(index: u32) -> Term {
    TERMS.with(|terms| terms.borrow()[index as usize].clone())
}

/// Forgets every symbolic value built on this thread so far.
pub fn reset() {
    TERMS.with(|terms| terms.borrow_mut().clear());
    APPLIED.with(|applied| applied.borrow_mut().clear());
}

/// A symbolic 64-bit word.
#[derive(Clone, Copy, Debug)]
pub struct Sym(u32);

/// A symbolic truth value.
#[derive(Clone, Copy, Debug)]
pub struct SymBit(u32);

impl Sym {
    /// A 64-bit variable (declare it with the solver under the same name).
    pub fn var(name: &str) -> Sym {
        Sym::from_term(Term::var(name))
    }
    pub fn from_term(term: Term) -> Sym {
        Sym(intern(term))
    }
    pub fn term(self) -> Term {
        term_at(self.0)
    }
    fn binary(self, fun: Fun, other: Sym) -> Sym {
        Sym::from_term(self.term().bv(fun, &other.term()))
    }
    fn unary(self, fun: Fun) -> Sym {
        Sym::from_term(self.term().un(fun))
    }
    fn compare(self, fun: Fun, other: Sym) -> SymBit {
        SymBit::from_term(self.term().bv(fun, &other.term()))
    }
}

impl SymBit {
    pub fn from_term(term: Term) -> SymBit {
        SymBit(intern(term))
    }
    pub fn term(self) -> Term {
        term_at(self.0)
    }
}

impl BitAnd for Sym {
    type Output = Sym;
    fn bitand(self, other: Sym) -> Sym {
        self.binary(Fun::BvAnd, other)
    }
}
impl BitOr for Sym {
    type Output = Sym;
    fn bitor(self, other: Sym) -> Sym {
        self.binary(Fun::BvOr, other)
    }
}
impl BitXor for Sym {
    type Output = Sym;
    fn bitxor(self, other: Sym) -> Sym {
        self.binary(Fun::BvXor, other)
    }
}
impl Not for Sym {
    type Output = Sym;
    fn not(self) -> Sym {
        self.unary(Fun::BvNot)
    }
}

impl BitAnd for SymBit {
    type Output = SymBit;
    fn bitand(self, other: SymBit) -> SymBit {
        SymBit::from_term(self.term().and(&other.term()))
    }
}
impl BitOr for SymBit {
    type Output = SymBit;
    fn bitor(self, other: SymBit) -> SymBit {
        SymBit::from_term(Term::app(Fun::Or, &[self.term(), other.term()]))
    }
}
impl Not for SymBit {
    type Output = SymBit;
    fn not(self) -> SymBit {
        SymBit::from_term(self.term().not())
    }
}

impl Bit for SymBit {
    fn lit(value: bool) -> SymBit {
        SymBit::from_term(Term::Bool(value))
    }
    fn known(self) -> Option<bool> {
        match self.term() {
            Term::Bool(b) => Some(b),
            _ => None,
        }
    }
    fn select(self, then: SymBit, otherwise: SymBit) -> SymBit {
        SymBit::from_term(Term::ite(&self.term(), &then.term(), &otherwise.term()))
    }
}

/// The double-width exact `product` of the words.
fn wide_product(a: Sym, b: Sym, product: Opaque) -> Term {
    if opaque() {
        return product.apply(a, b);
    }
    let extend = match product {
        Opaque::SignedProduct => Fun::SignExtend(width()),
        _ => Fun::ZeroExtend(width()),
    };
    let wide = |x: Sym| x.term().un(extend);
    wide(a).bv(Fun::BvMul, &wide(b))
}

/// Does `a fun b` on words one bit wider differ from the word result
/// sign-extended (that is, does it overflow)?
fn wide_differs(a: Sym, b: Sym, fun: Fun) -> SymBit {
    let wide = |x: Sym| x.term().un(Fun::SignExtend(1));
    let exact = wide(a).bv(fun, &wide(b));
    let narrow = a.term().bv(fun, &b.term()).un(Fun::SignExtend(1));
    SymBit::from_term(exact.eq(&narrow).not())
}

impl Word for Sym {
    type Bit = SymBit;

    fn bits() -> u32 {
        width()
    }
    fn lit(value: i64) -> Sym {
        let bits = width();
        let value = (value as u64 as u128) & ((1u128 << bits) - 1);
        Sym::from_term(Term::Bv { value, width: bits })
    }
    fn add(self, other: Sym) -> Sym {
        self.binary(Fun::BvAdd, other)
    }
    fn sub(self, other: Sym) -> Sym {
        self.binary(Fun::BvSub, other)
    }
    fn mul(self, other: Sym) -> Sym {
        if opaque() {
            let product = wide_product(self, other, Opaque::SignedProduct);
            return Sym::from_term(product.un(Fun::Extract(width() - 1, 0)));
        }
        self.binary(Fun::BvMul, other)
    }
    fn neg(self) -> Sym {
        self.unary(Fun::BvNeg)
    }
    fn shl(self, count: Sym) -> Sym {
        self.binary(Fun::BvShl, count)
    }
    fn lshr(self, count: Sym) -> Sym {
        self.binary(Fun::BvLshr, count)
    }
    fn ashr(self, count: Sym) -> Sym {
        self.binary(Fun::BvAshr, count)
    }
    fn sdiv(self, other: Sym) -> Sym {
        self.binary(Fun::BvSdiv, other)
    }
    fn srem(self, other: Sym) -> Sym {
        self.binary(Fun::BvSrem, other)
    }
    fn floormod(self, other: Sym) -> Sym {
        if opaque() {
            return Sym::from_term(Opaque::FloorMod.apply(self, other));
        }
        self.binary(Fun::BvSmod, other)
    }
    fn floordiv(self, other: Sym) -> Sym {
        if opaque() {
            return Sym::from_term(Opaque::FloorDiv.apply(self, other));
        }
        crate::word::floor_division(self, other)
    }
    fn umul_high(self, other: Sym) -> Sym {
        let bits = width();
        let product = wide_product(self, other, Opaque::UnsignedProduct);
        Sym::from_term(product.un(Fun::Extract(2 * bits - 1, bits)))
    }
    fn add_overflows(self, other: Sym) -> SymBit {
        wide_differs(self, other, Fun::BvAdd)
    }
    fn sub_overflows(self, other: Sym) -> SymBit {
        wide_differs(self, other, Fun::BvSub)
    }
    fn mul_overflows(self, other: Sym) -> SymBit {
        let product = wide_product(self, other, Opaque::SignedProduct);
        let bits = width();
        let low = product
            .un(Fun::Extract(bits - 1, 0))
            .un(Fun::SignExtend(bits));
        SymBit::from_term(low.eq(&product).not())
    }
    fn smear_right(self) -> Sym {
        let mut x = self;
        let mut step = 1;
        while step < width() {
            x = x | x.lshr_by(step);
            step *= 2;
        }
        x
    }
    fn eq(self, other: Sym) -> SymBit {
        self.compare(Fun::Eq, other)
    }
    fn slt(self, other: Sym) -> SymBit {
        self.compare(Fun::BvSlt, other)
    }
    fn sle(self, other: Sym) -> SymBit {
        self.compare(Fun::BvSle, other)
    }
    fn ult(self, other: Sym) -> SymBit {
        self.compare(Fun::BvUlt, other)
    }
    fn ule(self, other: Sym) -> SymBit {
        self.compare(Fun::BvUle, other)
    }
    fn select(c: SymBit, then: Sym, otherwise: Sym) -> Sym {
        Sym::from_term(Term::ite(&c.term(), &then.term(), &otherwise.term()))
    }
}

impl Merge for SymBit {
    type W = Sym;
    fn merge(c: SymBit, then: SymBit, otherwise: SymBit) -> SymBit {
        c.select(then, otherwise)
    }
}

impl Merge for Sym {
    type W = Sym;
    fn merge(c: SymBit, then: Sym, otherwise: Sym) -> Sym {
        Sym::select(c, then, otherwise)
    }
}
