//! IntBound: a signed interval `[lower, upper]` together with known bits.
//!
//! The two halves inform each other in [`IntBound::normalize`]: the bounds
//! are moved inwards to the nearest values the known bits allow, and the
//! bits that all values between the bounds share (their common prefix)
//! become known. A normalized bound has `lower <= upper`, both bounds are
//! members of the bits, and the prefix is known. An empty result (no value
//! fits both) is reported as a flag next to the value: the caller learns
//! that the trace can never get past this point.
//!
//! Forward transfer functions (one per integer op) are in `forward.rs`,
//! refinements from known results (guards, comparisons) in `refine.rs`.
//! All are generic over [`Word`]; `tests/proofs.rs` proves each one.

use crate::knownbits::KnownBits;
use crate::word::{cond, Bit, Merge, Word};

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct IntBound<W = i64> {
    pub lower: W,
    pub upper: W,
    pub bits: KnownBits<W>,
}

impl<W: Word> Merge for IntBound<W> {
    type W = W;
    fn merge(c: W::Bit, then: Self, otherwise: Self) -> Self {
        IntBound {
            lower: W::select(c, then.lower, otherwise.lower),
            upper: W::select(c, then.upper, otherwise.upper),
            bits: KnownBits::merge(c, then.bits, otherwise.bits),
        }
    }
}

pub(crate) fn w<W: Word>(value: i64) -> W {
    W::lit(value)
}

impl<W: Word> IntBound<W> {
    pub fn unbounded() -> Self {
        IntBound {
            lower: W::min_value(),
            upper: W::max_value(),
            bits: KnownBits::unknown(),
        }
    }
    pub fn constant(value: W) -> Self {
        IntBound {
            lower: value,
            upper: value,
            bits: KnownBits::constant(value),
        }
    }
    /// 0 or 1.
    pub fn boolean() -> Self {
        IntBound {
            lower: w(0),
            upper: w(1),
            bits: KnownBits::boolean(),
        }
    }
    /// 1 if `yes`, 0 if `no`, else 0 or 1 (`yes` and `no` must not both hold).
    pub fn from_cases(yes: W::Bit, no: W::Bit) -> Self {
        let bits = KnownBits::from_cases(yes, no);
        IntBound {
            lower: bits.ones,
            upper: bits.ones | bits.unknowns,
            bits,
        }
    }
    /// `[lower, upper]`, which must not be empty.
    pub fn range(lower: W, upper: W) -> Self {
        Self::from_parts(lower, upper, KnownBits::unknown())
    }
    /// The values the bits allow.
    pub fn from_bits(bits: KnownBits<W>) -> Self {
        IntBound {
            lower: bits.min_signed(),
            upper: bits.max_signed(),
            bits,
        }
    }
    /// Bounds and bits that both hold (known to share a value), normalized.
    pub fn from_parts(lower: W, upper: W, bits: KnownBits<W>) -> Self {
        IntBound { lower, upper, bits }.normalize().0
    }

    pub fn contains(self, value: W) -> W::Bit {
        self.lower.sle(value) & value.sle(self.upper) & self.bits.contains(value)
    }
    pub fn is_well_formed(self) -> W::Bit {
        self.bits.is_well_formed() & self.lower.sle(self.upper)
    }
    /// The invariant every bound handed out keeps (see the module comment).
    pub fn is_normalized(self) -> W::Bit {
        self.is_well_formed()
            & self.bits.contains(self.lower)
            & self.bits.contains(self.upper)
            & (common_prefix(self.lower, self.upper) & self.bits.unknowns).eq(w(0))
    }
    pub fn is_constant(self) -> W::Bit {
        self.lower.eq(self.upper)
    }
    /// Every member of `self` is a member of `other`.
    pub fn is_subset_of(self, other: Self) -> W::Bit {
        other.lower.sle(self.lower)
            & self.upper.sle(other.upper)
            & self.bits.is_subset_of(other.bits)
    }

    /// Tightens bounds and bits against each other (module comment); the
    /// flag says that no value fits.
    pub fn normalize(self) -> (Self, W::Bit) {
        let (lower, has_lower) = self.bits.min_signed_at_least(self.lower);
        let (upper, has_upper) = self.bits.max_signed_at_most(self.upper);
        Self::with_prefix(lower, upper, self.bits, !has_lower | !has_upper)
    }
    /// The second half of `normalize`: `lower` and `upper` are members of
    /// `bits` (unless `empty`); the bits they share become known.
    pub fn with_prefix(lower: W, upper: W, bits: KnownBits<W>, empty: W::Bit) -> (Self, W::Bit) {
        let prefix = common_prefix(lower, upper);
        let bits = KnownBits {
            ones: bits.ones | (lower & prefix),
            unknowns: bits.unknowns & !prefix,
        };
        (IntBound { lower, upper, bits }, empty | upper.slt(lower))
    }
    /// The members of both, and whether there are none.
    pub fn intersect(self, other: Self) -> (Self, W::Bit) {
        let (raw, disagree) = self.intersect_raw(other);
        let (result, empty) = raw.normalize();
        (result, empty | disagree)
    }
    /// `intersect` before normalization.
    pub fn intersect_raw(self, other: Self) -> (Self, W::Bit) {
        let (bits, disagree) = self.bits.meet(other.bits);
        let lower = self.lower.smax(other.lower);
        let upper = self.upper.smin(other.upper);
        (IntBound { lower, upper, bits }, disagree)
    }
    /// The members of `self` in `[lower, upper]`.
    pub fn intersect_range(self, lower: W, upper: W) -> (Self, W::Bit) {
        self.intersect(IntBound {
            lower,
            upper,
            bits: KnownBits::unknown(),
        })
    }
    /// The smallest bound holding the members of both.
    pub fn join(self, other: Self) -> Self {
        self.join_raw(other).normalize().0
    }
    pub fn join_raw(self, other: Self) -> Self {
        IntBound {
            lower: self.lower.smin(other.lower),
            upper: self.upper.smax(other.upper),
            bits: self.bits.join(other.bits),
        }
    }
    /// For loops: like `join`, but a bound that moved goes to the end of
    /// the range at once, so that iterating reaches a fixpoint quickly.
    pub fn widen(self, next: Self) -> Self {
        self.widen_raw(next).normalize().0
    }
    pub fn widen_raw(self, next: Self) -> Self {
        IntBound {
            lower: W::select(next.lower.slt(self.lower), W::min_value(), self.lower),
            upper: W::select(self.upper.slt(next.upper), W::max_value(), self.upper),
            bits: self.bits.join(next.bits),
        }
    }

    // Queries the optimizer asks.

    pub fn known_lt(self, other: Self) -> W::Bit {
        self.upper.slt(other.lower)
    }
    pub fn known_le(self, other: Self) -> W::Bit {
        self.upper.sle(other.lower)
    }
    pub fn known_nonnegative(self) -> W::Bit {
        w::<W>(0).sle(self.lower)
    }
    pub fn known_lt_const(self, value: W) -> W::Bit {
        self.upper.slt(value)
    }
    pub fn known_ge_const(self, value: W) -> W::Bit {
        value.sle(self.lower)
    }
    pub fn known_eq_const(self, value: W) -> W::Bit {
        self.is_constant() & self.lower.eq(value)
    }
    /// No member of `self` equals a member of `other`.
    pub fn known_ne(self, other: Self) -> W::Bit {
        self.upper.slt(other.lower) | other.upper.slt(self.lower) | self.bits.disagrees(other.bits)
    }
    pub fn is_bool(self) -> W::Bit {
        self.known_nonnegative() & self.upper.sle(w(1))
    }
    /// Smallest and largest member as unsigned numbers (not necessarily
    /// reached).
    pub fn unsigned_range(self) -> (W, W) {
        let crosses_zero = self.lower.is_negative().differs(self.upper.is_negative());
        cond(
            crosses_zero,
            || (self.bits.min_unsigned(), self.bits.max_unsigned()),
            || (self.lower, self.upper),
        )
    }
}

/// The bits above the highest bit in which `lower` and `upper` differ:
/// every value between them (same sign) has them.
fn common_prefix<W: Word>(lower: W, upper: W) -> W {
    !(lower ^ upper).smear_right()
}

impl IntBound<i64> {
    pub fn as_constant(self) -> Option<i64> {
        (self.lower == self.upper).then_some(self.lower)
    }
    /// `intersect`, with "no value fits" as an error.
    pub fn meet(self, other: IntBound) -> Result<IntBound, Contradiction> {
        match self.intersect(other) {
            (_, true) => Err(Contradiction),
            (bound, false) => Ok(bound),
        }
    }
}

/// No value satisfies all that is known: the code is unreachable.
#[derive(Clone, Copy, PartialEq, Eq, Debug, thiserror::Error)]
#[error("contradiction: no value satisfies every known fact")]
pub struct Contradiction;

impl std::fmt::Display for IntBound<i64> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let end = |v: i64| match v {
            i64::MIN => "MININT".to_string(),
            i64::MAX => "MAXINT".to_string(),
            v => v.to_string(),
        };
        write!(f, "[{}, {}]", end(self.lower), end(self.upper))?;
        let prefix_only = IntBound::from_parts(self.lower, self.upper, KnownBits::unknown());
        if prefix_only.bits != self.bits {
            write!(f, " bits {}", self.bits)?;
        }
        Ok(())
    }
}
