//! The word trait the domains are written over.
//!
//! Every transfer function is generic over [`Word`], a 64-bit machine word
//! with wrapping arithmetic, and its truth values [`Bit`]. Two
//! implementations exist: `i64` (what the optimizer runs) and
//! [`crate::symbolic::Sym`] (SMT terms, what the proofs run). Code that
//! needs to branch uses [`cond`]: on concrete words it runs one side only,
//! on symbolic ones it builds both and joins them with an if-then-else. So
//! a proof is about the very code the optimizer executes.
//!
//! The required methods are the trusted primitives: each has a one-line
//! meaning in both implementations, and a test checks that the two agree
//! on many values. Everything else is derived here, once.
//!
//! Shift counts follow SMT-LIB: a count of the width or more (as unsigned) shifts
//! everything out. Division follows `bvsdiv`/`bvsrem` (division by zero
//! is defined there); the domains only rely on it where the divisor is
//! known to be non-zero.

use std::fmt::Debug;
use std::ops::{BitAnd, BitOr, BitXor, Not};

/// A truth value: `bool`, or a symbolic boolean.
pub trait Bit:
    Copy + Debug + BitAnd<Output = Self> + BitOr<Output = Self> + Not<Output = Self>
{
    fn lit(value: bool) -> Self;
    /// The value, if it is known without a solver (always, for `bool`).
    fn known(self) -> Option<bool>;
    /// `then` where `self` holds, otherwise `otherwise`.
    fn select(self, then: Self, otherwise: Self) -> Self {
        (self & then) | (!self & otherwise)
    }
    fn differs(self, other: Self) -> Self {
        (self & !other) | (!self & other)
    }
}

/// A 64-bit word with wrapping arithmetic.
pub trait Word:
    Copy
    + Debug
    + BitAnd<Output = Self>
    + BitOr<Output = Self>
    + BitXor<Output = Self>
    + Not<Output = Self>
    + Merge<W = Self>
{
    type Bit: Bit + Merge<W = Self>;

    /// The width: 64 for `i64`; symbolic words can be narrower, for
    /// proofs the solver cannot finish at full width.
    fn bits() -> u32 {
        64
    }
    /// `value` cut to the width.
    fn lit(value: i64) -> Self;
    fn add(self, other: Self) -> Self;
    fn sub(self, other: Self) -> Self;
    fn mul(self, other: Self) -> Self;
    fn neg(self) -> Self;
    /// Shift left; counts of 64 and more give 0.
    fn shl(self, count: Self) -> Self;
    /// Logical shift right; counts of 64 and more give 0.
    fn lshr(self, count: Self) -> Self;
    /// Arithmetic shift right; counts of 64 and more give 0 or -1.
    fn ashr(self, count: Self) -> Self;
    /// Truncating signed division (`bvsdiv`).
    fn sdiv(self, other: Self) -> Self;
    /// Remainder of truncating division (`bvsrem`).
    fn srem(self, other: Self) -> Self;
    /// Floor modulo, Python's `%` (`bvsmod`: the sign of the divisor;
    /// `x` itself for a divisor of 0).
    fn floormod(self, other: Self) -> Self;
    /// The high word of the unsigned 128-bit product.
    fn umul_high(self, other: Self) -> Self;
    /// Does the signed sum overflow?
    fn add_overflows(self, other: Self) -> Self::Bit;
    /// Does the signed difference overflow?
    fn sub_overflows(self, other: Self) -> Self::Bit;
    /// Does the signed product overflow?
    fn mul_overflows(self, other: Self) -> Self::Bit;
    /// All bits at and below the highest set bit.
    fn smear_right(self) -> Self;
    fn eq(self, other: Self) -> Self::Bit;
    fn slt(self, other: Self) -> Self::Bit;
    fn sle(self, other: Self) -> Self::Bit;
    fn ult(self, other: Self) -> Self::Bit;
    fn ule(self, other: Self) -> Self::Bit;
    fn select(c: Self::Bit, then: Self, otherwise: Self) -> Self;

    // Derived operations, shared by both implementations.

    fn ne(self, other: Self) -> Self::Bit {
        !self.eq(other)
    }
    fn min_value() -> Self {
        Self::lit(1).shl_by(Self::bits() - 1)
    }
    fn max_value() -> Self {
        !Self::min_value()
    }
    fn is_negative(self) -> Self::Bit {
        self.slt(Self::lit(0))
    }
    fn smin(self, other: Self) -> Self {
        Self::select(self.slt(other), self, other)
    }
    fn smax(self, other: Self) -> Self {
        Self::select(self.slt(other), other, self)
    }
    fn shl_by(self, count: u32) -> Self {
        self.shl(Self::lit(i64::from(count)))
    }
    fn lshr_by(self, count: u32) -> Self {
        self.lshr(Self::lit(i64::from(count)))
    }
    /// The highest set bit alone (0 for 0).
    fn highest_bit(self) -> Self {
        let smeared = self.smear_right();
        smeared ^ smeared.lshr_by(1)
    }
    /// The lowest set bit alone (0 for 0).
    fn lowest_bit(self) -> Self {
        self & self.neg()
    }
    /// Floor division (Python's `//`); the divisor must be non-zero.
    fn floordiv(self, other: Self) -> Self {
        floor_division(self, other)
    }
}

/// Floor division from truncating division: one less when the remainder
/// is non-zero and of the other sign than the divisor.
pub fn floor_division<W: Word>(x: W, y: W) -> W {
    let quotient = x.sdiv(y);
    let remainder = x.srem(y);
    let adjust = remainder.ne(W::lit(0)) & remainder.is_negative().differs(y.is_negative());
    W::select(adjust, quotient.sub(W::lit(1)), quotient)
}

/// Values that can be chosen between by a truth value: words, truth
/// values, abstract values and tuples of them.
pub trait Merge: Sized {
    type W: Word;
    fn merge(c: <Self::W as Word>::Bit, then: Self, otherwise: Self) -> Self;
}

/// `then()` where `c` holds, else `otherwise()`. Concrete conditions run
/// one side; symbolic ones run both and merge.
#[inline]
pub fn cond<T: Merge>(
    c: <T::W as Word>::Bit,
    then: impl FnOnce() -> T,
    otherwise: impl FnOnce() -> T,
) -> T {
    match c.known() {
        Some(true) => then(),
        Some(false) => otherwise(),
        None => T::merge(c, then(), otherwise()),
    }
}

impl<A: Merge, B: Merge<W = A::W>> Merge for (A, B) {
    type W = A::W;
    fn merge(c: <A::W as Word>::Bit, then: Self, otherwise: Self) -> Self {
        (
            A::merge(c, then.0, otherwise.0),
            B::merge(c, then.1, otherwise.1),
        )
    }
}

impl<A: Merge, B: Merge<W = A::W>, C: Merge<W = A::W>> Merge for (A, B, C) {
    type W = A::W;
    fn merge(c: <A::W as Word>::Bit, then: Self, otherwise: Self) -> Self {
        (
            A::merge(c, then.0, otherwise.0),
            B::merge(c, then.1, otherwise.1),
            C::merge(c, then.2, otherwise.2),
        )
    }
}

impl Bit for bool {
    fn lit(value: bool) -> bool {
        value
    }
    #[inline]
    fn known(self) -> Option<bool> {
        Some(self)
    }
}

impl Word for i64 {
    type Bit = bool;

    #[inline]
    fn lit(value: i64) -> i64 {
        value
    }
    #[inline]
    fn add(self, other: i64) -> i64 {
        self.wrapping_add(other)
    }
    #[inline]
    fn sub(self, other: i64) -> i64 {
        self.wrapping_sub(other)
    }
    #[inline]
    fn mul(self, other: i64) -> i64 {
        self.wrapping_mul(other)
    }
    #[inline]
    fn neg(self) -> i64 {
        self.wrapping_neg()
    }
    #[inline]
    fn shl(self, count: i64) -> i64 {
        if (count as u64) < 64 {
            self << count
        } else {
            0
        }
    }
    #[inline]
    fn lshr(self, count: i64) -> i64 {
        if (count as u64) < 64 {
            ((self as u64) >> count) as i64
        } else {
            0
        }
    }
    #[inline]
    fn ashr(self, count: i64) -> i64 {
        self >> (count as u64).min(63)
    }
    fn sdiv(self, other: i64) -> i64 {
        match other {
            0 if self < 0 => 1,
            0 => -1,
            _ => self.wrapping_div(other),
        }
    }
    fn srem(self, other: i64) -> i64 {
        if other == 0 {
            self
        } else {
            self.wrapping_rem(other)
        }
    }
    fn floormod(self, other: i64) -> i64 {
        let remainder = self.srem(other);
        if remainder != 0 && (remainder < 0) != (other < 0) {
            remainder.wrapping_add(other)
        } else {
            remainder
        }
    }
    fn umul_high(self, other: i64) -> i64 {
        ((u128::from(self as u64) * u128::from(other as u64)) >> 64) as i64
    }
    #[inline]
    fn mul_overflows(self, other: i64) -> bool {
        self.checked_mul(other).is_none()
    }
    #[inline]
    fn eq(self, other: i64) -> bool {
        self == other
    }
    #[inline]
    fn slt(self, other: i64) -> bool {
        self < other
    }
    #[inline]
    fn sle(self, other: i64) -> bool {
        self <= other
    }
    #[inline]
    fn ult(self, other: i64) -> bool {
        (self as u64) < (other as u64)
    }
    #[inline]
    fn ule(self, other: i64) -> bool {
        (self as u64) <= (other as u64)
    }
    #[inline]
    fn select(c: bool, then: i64, otherwise: i64) -> i64 {
        if c {
            then
        } else {
            otherwise
        }
    }
    #[inline]
    fn add_overflows(self, other: i64) -> bool {
        self.checked_add(other).is_none()
    }
    #[inline]
    fn sub_overflows(self, other: i64) -> bool {
        self.checked_sub(other).is_none()
    }
    #[inline]
    fn smear_right(self) -> i64 {
        match self {
            0 => 0,
            _ => ((u64::MAX) >> self.leading_zeros()) as i64,
        }
    }
}

impl Merge for bool {
    type W = i64;
    #[inline]
    fn merge(c: bool, then: bool, otherwise: bool) -> bool {
        if c {
            then
        } else {
            otherwise
        }
    }
}

impl Merge for i64 {
    type W = i64;
    #[inline]
    fn merge(c: bool, then: i64, otherwise: i64) -> i64 {
        if c {
            then
        } else {
            otherwise
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derived_operations_on_concrete_words() {
        assert_eq!(Word::highest_bit(0b1011i64), 0b1000);
        assert_eq!(Word::lowest_bit(0b1010i64), 0b10);
        assert_eq!(Word::smear_right(0b1010i64), 0b1111);
        assert_eq!(Word::smear_right(-1i64), -1);
        assert_eq!(Word::floordiv(-7i64, 2), -4);
        assert_eq!(Word::floormod(-7i64, 2), 1);
        assert_eq!(Word::floormod(7i64, -2), -1);
        assert!(Word::add_overflows(i64::MAX, 1));
        assert!(Word::sub_overflows(i64::MIN, 1));
        assert!(!Word::sub_overflows(-1i64, i64::MAX));
        assert_eq!(Word::shl(1i64, 64), 0);
        assert_eq!(Word::ashr(-8i64, 100), -1);
    }
}
