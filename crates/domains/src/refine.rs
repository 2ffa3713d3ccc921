//! Refinement of IntBound: what a known result teaches about arguments.
//!
//! When a guard passes, its condition holds; when an op's result gets a
//! bound (from a later guard or comparison), its arguments can be
//! narrowed. Each refinement first states a *constraint* per argument (a
//! raw bound every satisfying member lies in, plus a flag for "the
//! condition can never hold"; the `*_constraint` functions, which the
//! proofs check) and then intersects the argument with it. Soundness: no
//! member that satisfies the condition is dropped.
//!
//! Intervals are inverted through `+` and `-` only where the inverse
//! cannot wrap: from `z = x + 10`, `z < 15` says nothing about `x`, since
//! `z - 10` wraps at the low end of `z`'s range (seed 000's first bug);
//! from `z < -5` it says `x < 5`. Known bits invert exactly, since
//! wrapping addition is invertible.

use crate::intbound::{w, IntBound};
use crate::knownbits::KnownBits;
use crate::word::{cond, Bit, Word};

/// Constraints on both arguments, and "impossible".
pub type Constraints<W> = (IntBound<W>, IntBound<W>, <W as Word>::Bit);

/// Which relation a guard or comparison established between two values.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Relation {
    Lt,
    Le,
    Ult,
    Ule,
    Eq,
    Ne,
}

fn range<W: Word>(lower: W, upper: W) -> IntBound<W> {
    IntBound {
        lower,
        upper,
        bits: KnownBits::unknown(),
    }
}

fn no<W: Word>() -> W::Bit {
    W::Bit::lit(false)
}

impl<W: Word> IntBound<W> {
    /// `self rel other` holds: both narrowed, and whether that is
    /// impossible.
    pub fn refine(self, rel: Relation, other: Self) -> (Self, Self, W::Bit) {
        let (for_self, for_other, impossible) = self.relation_constraints(rel, other);
        let (a, a_empty) = self.intersect(for_self);
        let (b, b_empty) = other.intersect(for_other);
        (a, b, impossible | a_empty | b_empty)
    }

    pub fn relation_constraints(self, rel: Relation, other: Self) -> Constraints<W> {
        let (min, max) = (W::min_value(), W::max_value());
        match rel {
            Relation::Lt => (
                range(min, other.upper.sub(w(1))),
                range(self.lower.add(w(1)), max),
                other.upper.eq(min) | self.lower.eq(max),
            ),
            Relation::Le => (range(min, other.upper), range(self.lower, max), no::<W>()),
            // Unsigned: narrowed where `other` is known non-negative (then
            // `self` is too, and the order is the signed one).
            Relation::Ult | Relation::Ule => {
                let strict = W::Bit::lit(rel == Relation::Ult);
                let step = W::select(strict, w(1), w(0));
                cond(
                    other.known_nonnegative(),
                    || {
                        let self_lower = self.lower.smax(w(0));
                        (
                            range(w(0), other.upper.sub(step)),
                            range(self_lower.add(step), max),
                            strict & other.upper.eq(w(0)),
                        )
                    },
                    || (range(min, max), range(min, max), no::<W>()),
                )
            }
            Relation::Eq => (other, self, no::<W>()),
            Relation::Ne => {
                let (for_self, self_impossible) = self.exclude_constraint(other);
                let (for_other, other_impossible) = other.exclude_constraint(self);
                (for_self, for_other, self_impossible | other_impossible)
            }
        }
    }

    /// Members of `self` other than the value of `other`, if that is a
    /// constant at one end of `self`.
    fn exclude_constraint(self, other: Self) -> (Self, W::Bit) {
        let c = other.lower;
        let at_lower = other.is_constant() & self.lower.eq(c);
        let at_upper = other.is_constant() & self.upper.eq(c);
        let constraint = range(
            W::select(at_lower & !at_upper, c.add(w(1)), W::min_value()),
            W::select(at_upper & !at_lower, c.sub(w(1)), W::max_value()),
        );
        (constraint, at_lower & at_upper)
    }
    /// `self` is non-zero (`guard_true`, `int_is_true` known to be 1).
    pub fn refine_true(self) -> (Self, W::Bit) {
        let (result, _, empty) = self.refine(Relation::Ne, Self::constant(w(0)));
        (result, empty)
    }
    /// `self` is zero.
    pub fn refine_false(self) -> (Self, W::Bit) {
        self.intersect(Self::constant(w(0)))
    }

    /// `self op other` is in `result` (for `Operand::SubRight` and
    /// `SubOvfRight`, `other - self` is): `self` narrowed.
    pub fn refine_by_result(self, op: Operand, other: Self, result: Self) -> (Self, W::Bit) {
        self.intersect(self.result_constraint(op, other, result))
    }

    /// The constraint on `self`, given that `self op other` is in
    /// `result` (`other - self`, for the `*Right` operands).
    pub fn result_constraint(self, op: Operand, other: Self, result: Self) -> Self {
        let r = result.bits;
        let unbounded = |bits| IntBound {
            lower: W::min_value(),
            upper: W::max_value(),
            bits,
        };
        match op {
            // Where the result is 1 both are 1; where it is 0 and `other`
            // is 1, `self` is 0.
            Operand::And => {
                let zeros = r.zeros() & other.bits.ones;
                unbounded(KnownBits::new(r.ones, !(r.ones | zeros)))
            }
            // Where the result is 0 both are 0; where it is 1 and `other`
            // is 0, `self` is 1.
            Operand::Or => {
                let ones = r.ones & other.bits.zeros();
                unbounded(KnownBits::new(ones, !(ones | r.zeros())))
            }
            Operand::Xor => unbounded(r.xor(other.bits)),
            // x + y = r (modulo 2^64) gives x = r - y (modulo 2^64); where
            // r - y over the intervals cannot wrap, that is x itself, even
            // if x + y wrapped (`difference` checks the ends).
            Operand::Add | Operand::AddOvf => difference(result, other),
            Operand::SubLeft | Operand::SubOvfLeft => sum(result, other),
            // other - self = result: self = other - result.
            Operand::SubRight | Operand::SubOvfRight => difference(other, result),
            Operand::Neg => result.neg_raw(),
            Operand::Invert => result.invert_raw(),
        }
    }
}

/// The op whose result is known, and which argument is narrowed.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Operand {
    And,
    Or,
    Xor,
    /// Either argument of `int_add` (it is commutative).
    Add,
    /// Either argument of `int_add_ovf` whose guard passed.
    AddOvf,
    SubLeft,
    SubRight,
    SubOvfLeft,
    SubOvfRight,
    Neg,
    Invert,
}

/// `x - y` for members x, y: as an interval if neither end wraps (then
/// no difference of members does); the bits always (exact modulo 2^64).
fn difference<W: Word>(x: IntBound<W>, y: IntBound<W>) -> IntBound<W> {
    let fits = !x.lower.sub_overflows(y.upper) & !x.upper.sub_overflows(y.lower);
    IntBound {
        lower: W::select(fits, x.lower.sub(y.upper), W::min_value()),
        upper: W::select(fits, x.upper.sub(y.lower), W::max_value()),
        bits: x.bits.sub(y.bits),
    }
}

/// `x + y` for members x, y (see `difference`).
fn sum<W: Word>(x: IntBound<W>, y: IntBound<W>) -> IntBound<W> {
    let fits = !x.lower.add_overflows(y.lower) & !x.upper.add_overflows(y.upper);
    IntBound {
        lower: W::select(fits, x.lower.add(y.lower), W::min_value()),
        upper: W::select(fits, x.upper.add(y.upper), W::max_value()),
        bits: x.bits.add(y.bits),
    }
}
