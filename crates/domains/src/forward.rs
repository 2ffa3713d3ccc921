//! Forward transfer functions of IntBound: one per integer op of the op
//! table, giving a bound on the result from bounds on the arguments.
//!
//! Each combines an interval rule with the known-bits rule of the same op
//! into a raw bound (`*_raw`, what the proofs check), which the public
//! function normalizes. Interval rules give up (the full range) where the
//! concrete op may wrap in a way that breaks the order, except where all
//! values wrap alike. Ops undefined for some arguments (shifts by counts
//! outside 0..64, division by zero, `int_signext` to odd sizes) are only
//! sound for the defined ones. The `*_ovf` variants bound the result when
//! the op does not overflow (the guard after it passed), and
//! `*_cannot_overflow` say when that is certain.

use crate::intbound::{w, IntBound};
use crate::knownbits::KnownBits;
use crate::word::{cond, Bit, Word};

type B<W> = IntBound<W>;

/// Bounds and bits before normalization.
fn raw<W: Word>(lower: W, upper: W, bits: KnownBits<W>) -> B<W> {
    IntBound { lower, upper, bits }
}

/// `[lower, upper]` before normalization.
fn raw_range<W: Word>(lower: W, upper: W) -> B<W> {
    raw(lower, upper, KnownBits::unknown())
}

/// Defines each public transfer function as its `*_raw` version (which
/// the proofs check) followed by `normalize` (proved once, on its own).
macro_rules! normalized {
    ($($name:ident($($arg:ident),*) = $raw:ident;)*) => {
        impl<W: Word> IntBound<W> {
            $(
                #[doc = concat!("`", stringify!($raw), "`, normalized.")]
                pub fn $name(self $(, $arg: Self)*) -> Self {
                    self.$raw($($arg),*).normalize().0
                }
            )*
        }
    };
}

normalized! {
    add(other) = add_raw;
    sub(other) = sub_raw;
    mul(other) = mul_raw;
    and(other) = and_raw;
    or(other) = or_raw;
    xor(other) = xor_raw;
    invert() = invert_raw;
    neg() = neg_raw;
    lshift(count) = lshift_raw;
    rshift(count) = rshift_raw;
    urshift(count) = urshift_raw;
    signext(bytes) = signext_raw;
    pydiv(divisor) = pydiv_raw;
    pymod(divisor) = pymod_raw;
    uint_mul_high(other) = uint_mul_high_raw;
    force_ge_zero() = force_ge_zero_raw;
    add_ovf(other) = add_ovf_raw;
    sub_ovf(other) = sub_ovf_raw;
    mul_ovf(other) = mul_ovf_raw;
}

/// `[lower, upper]` if neither end wrapped, or both wrapped the same way
/// (then every value in between wrapped alike); else the full range.
fn wrapped<W: Word>(
    lower: W,
    upper: W,
    lower_wraps: W::Bit,
    upper_wraps: W::Bit,
    same_way: W::Bit,
) -> (W, W) {
    let fine = (!lower_wraps & !upper_wraps) | (lower_wraps & upper_wraps & same_way);
    (
        W::select(fine, lower, W::min_value()),
        W::select(fine, upper, W::max_value()),
    )
}

/// The result saturated at the ends of the range when it overflows
/// towards `positive`.
fn saturate<W: Word>(value: W, overflows: W::Bit, positive: W::Bit) -> W {
    W::select(
        overflows,
        W::select(positive, W::max_value(), W::min_value()),
        value,
    )
}

fn min4<W: Word>(a: W, b: W, c: W, d: W) -> W {
    a.smin(b).smin(c.smin(d))
}
fn max4<W: Word>(a: W, b: W, c: W, d: W) -> W {
    a.smax(b).smax(c.smax(d))
}

/// Shift counts a trace may use: `[lo, hi]` within 0..64, and whether
/// there is any.
fn shift_counts<W: Word>(count: B<W>) -> (W, W, W::Bit) {
    let lo = count.lower.smax(w(0));
    let hi = count.upper.smin(w(i64::from(W::bits()) - 1));
    (lo, hi, lo.sle(hi))
}

impl<W: Word> IntBound<W> {
    pub fn add_raw(self, other: Self) -> Self {
        // Which way x + y overflows depends on the sign of x alone.
        let same_sign = !self.lower.is_negative().differs(self.upper.is_negative());
        let (lower, upper) = wrapped(
            self.lower.add(other.lower),
            self.upper.add(other.upper),
            self.lower.add_overflows(other.lower),
            self.upper.add_overflows(other.upper),
            same_sign,
        );
        raw(lower, upper, self.bits.add(other.bits))
    }
    pub fn sub_raw(self, other: Self) -> Self {
        let same_sign = !self.lower.is_negative().differs(self.upper.is_negative());
        let (lower, upper) = wrapped(
            self.lower.sub(other.upper),
            self.upper.sub(other.lower),
            self.lower.sub_overflows(other.upper),
            self.upper.sub_overflows(other.lower),
            same_sign,
        );
        raw(lower, upper, self.bits.sub(other.bits))
    }
    pub fn mul_raw(self, other: Self) -> Self {
        let (a, b, c, d) = (self.lower, self.upper, other.lower, other.upper);
        let overflows =
            a.mul_overflows(c) | a.mul_overflows(d) | b.mul_overflows(c) | b.mul_overflows(d);
        let (ac, ad, bc, bd) = (a.mul(c), a.mul(d), b.mul(c), b.mul(d));
        let lower = W::select(overflows, W::min_value(), min4(ac, ad, bc, bd));
        let upper = W::select(overflows, W::max_value(), max4(ac, ad, bc, bd));
        raw(lower, upper, self.bits.mul(other.bits))
    }
    pub fn and_raw(self, other: Self) -> Self {
        let (a_pos, b_pos) = (self.known_nonnegative(), other.known_nonnegative());
        let both_neg = self.upper.is_negative() & other.upper.is_negative();
        let (lower, upper) = cond(
            a_pos | b_pos,
            || {
                let a_max = W::select(a_pos, self.upper, W::max_value());
                let b_max = W::select(b_pos, other.upper, W::max_value());
                (w(0), a_max.smin(b_max))
            },
            || {
                let upper = W::select(both_neg, self.upper.smin(other.upper), W::max_value());
                (W::min_value(), upper)
            },
        );
        raw(lower, upper, self.bits.and(other.bits))
    }
    pub fn or_raw(self, other: Self) -> Self {
        let (a_pos, b_pos) = (self.known_nonnegative(), other.known_nonnegative());
        let (a_neg, b_neg) = (self.upper.is_negative(), other.upper.is_negative());
        let (lower, upper) = cond(
            a_pos & b_pos,
            || {
                (
                    self.lower.smax(other.lower),
                    (self.upper | other.upper).smear_right(),
                )
            },
            || {
                let lower = W::select(
                    a_neg & b_neg,
                    self.lower.smax(other.lower),
                    W::select(
                        a_neg,
                        self.lower,
                        W::select(b_neg, other.lower, W::min_value()),
                    ),
                );
                (lower, W::select(a_neg | b_neg, w(-1), W::max_value()))
            },
        );
        raw(lower, upper, self.bits.or(other.bits))
    }
    pub fn xor_raw(self, other: Self) -> Self {
        let both_pos = self.known_nonnegative() & other.known_nonnegative();
        let upper = W::select(
            both_pos,
            (self.upper | other.upper).smear_right(),
            W::max_value(),
        );
        let lower = W::select(both_pos, w(0), W::min_value());
        raw(lower, upper, self.bits.xor(other.bits))
    }
    pub fn invert_raw(self) -> Self {
        raw(!self.upper, !self.lower, self.bits.invert())
    }
    pub fn neg_raw(self) -> Self {
        let no_min = self.lower.ne(W::min_value());
        let lower = W::select(no_min, self.upper.neg(), W::min_value());
        let upper = W::select(no_min, self.lower.neg(), W::max_value());
        raw(lower, upper, self.bits.neg())
    }
    pub fn lshift_raw(self, count: Self) -> Self {
        let (lo, hi, defined) = shift_counts(count);
        let fits = |x: W| x.shl(hi).ashr(hi).eq(x);
        let interval = cond(
            defined & fits(self.lower) & fits(self.upper),
            || {
                let lower = self.lower.shl(W::select(self.lower.is_negative(), hi, lo));
                let upper = self.upper.shl(W::select(w::<W>(0).slt(self.upper), hi, lo));
                (lower, upper)
            },
            || (W::min_value(), W::max_value()),
        );
        raw(interval.0, interval.1, self.bits.shl(count.bits))
    }
    pub fn rshift_raw(self, count: Self) -> Self {
        let (lo, hi, defined) = shift_counts(count);
        let lower = self.lower.ashr(W::select(self.lower.is_negative(), lo, hi));
        let upper = self.upper.ashr(W::select(self.upper.is_negative(), hi, lo));
        cond(
            defined,
            || raw(lower, upper, self.bits.ashr(count.bits)),
            Self::unbounded,
        )
    }
    pub fn urshift_raw(self, count: Self) -> Self {
        let (_, _, defined) = shift_counts(count);
        let as_signed = self.rshift_raw(count);
        let bits = self.bits.lshr(count.bits);
        cond(
            defined & self.known_nonnegative(),
            || as_signed,
            || cond(defined, || IntBound::from_bits(bits), Self::unbounded),
        )
    }
    /// `int_signext(x, bytes)`: the low `bytes` bytes of x, sign-extended.
    pub fn signext_raw(self, bytes: Self) -> Self {
        let mut result = Self::unbounded();
        let mut any = W::Bit::lit(false);
        for size in [1, 2, 4, 8] {
            let half = w::<W>(1).shl_by(8 * size - 1);
            let (lo, hi) = (half.neg(), half.sub(w(1)));
            let fits = lo.sle(self.lower) & self.upper.sle(hi);
            let unused = w(i64::from(W::bits() - 8 * size));
            let exact = || Self::constant(self.lower.shl(unused).ashr(unused));
            let this = cond(
                fits,
                || self,
                || cond(self.is_constant(), exact, || raw_range(lo, hi)),
            );
            let here = bytes.contains(w(i64::from(size)));
            result = cond(
                here,
                || cond(any, || result.join_raw(this), || this),
                || result,
            );
            any = any | here;
        }
        result
    }
    /// Floor division, Python's `//`.
    pub fn pydiv_raw(self, divisor: Self) -> Self {
        let exact = || Self::constant(self.lower.floordiv(divisor.lower));
        cond(self.both_constant(divisor), exact, || {
            self.pydiv_ranges(divisor)
        })
    }
    fn pydiv_ranges(self, divisor: Self) -> Self {
        self.by_divisor_sign(divisor, |lo, hi| {
            // On one side of zero, x // y is monotonic in each argument, so
            // the corners bound it; MININT // -1 wraps and spoils that.
            let wraps = self.lower.eq(W::min_value()) & lo.sle(w(-1)) & w::<W>(-1).sle(hi);
            let (a, b) = (self.lower, self.upper);
            let corners = [
                a.floordiv(lo),
                a.floordiv(hi),
                b.floordiv(lo),
                b.floordiv(hi),
            ];
            cond(wraps, Self::unbounded, || {
                raw_range(
                    min4(corners[0], corners[1], corners[2], corners[3]),
                    max4(corners[0], corners[1], corners[2], corners[3]),
                )
            })
        })
    }
    /// Floor modulo, Python's `%`: the sign of the divisor, smaller than it.
    pub fn pymod_raw(self, divisor: Self) -> Self {
        let exact = || Self::constant(self.lower.floormod(divisor.lower));
        cond(self.both_constant(divisor), exact, || {
            self.pymod_ranges(divisor)
        })
    }
    /// Both are constants and the division is defined.
    fn both_constant(self, divisor: Self) -> W::Bit {
        self.is_constant() & divisor.is_constant() & divisor.lower.ne(w(0))
    }
    fn pymod_ranges(self, divisor: Self) -> Self {
        self.by_divisor_sign(divisor, |lo, hi| {
            cond(
                w::<W>(0).slt(lo),
                || {
                    let upper = W::select(
                        self.known_nonnegative(),
                        self.upper.smin(hi.sub(w(1))),
                        hi.sub(w(1)),
                    );
                    raw_range(w(0), upper)
                },
                || {
                    let lower = W::select(
                        self.upper.sle(w(0)),
                        self.lower.smax(lo.add(w(1))),
                        lo.add(w(1)),
                    );
                    raw_range(lower, w(0))
                },
            )
        })
    }
    /// Joins `part(lo, hi)` over the negative and the positive divisors.
    fn by_divisor_sign(self, divisor: Self, part: impl Fn(W, W) -> Self) -> Self {
        let has_neg = divisor.lower.sle(w(-1));
        let has_pos = w::<W>(1).sle(divisor.upper);
        let neg = || part(divisor.lower, divisor.upper.smin(w(-1)));
        let pos = || part(divisor.lower.smax(w(1)), divisor.upper);
        cond(
            has_neg & has_pos,
            || neg().join_raw(pos()),
            || cond(has_neg, neg, || cond(has_pos, pos, Self::unbounded)),
        )
    }
    pub fn uint_mul_high_raw(self, other: Self) -> Self {
        let both_constant = self.is_constant() & other.is_constant();
        let exact = || Self::constant(self.lower.umul_high(other.lower));
        let monotonic = || {
            cond(
                self.known_nonnegative() & other.known_nonnegative(),
                || {
                    raw_range(
                        self.lower.umul_high(other.lower),
                        self.upper.umul_high(other.upper),
                    )
                },
                Self::unbounded,
            )
        };
        cond(both_constant, exact, monotonic)
    }
    pub fn force_ge_zero_raw(self) -> Self {
        cond(
            self.known_nonnegative(),
            || self,
            || raw_range(w(0), self.upper.smax(w(0))),
        )
    }

    pub fn lt(self, other: Self) -> Self {
        Self::from_cases(self.known_lt(other), other.known_le(self))
    }
    pub fn le(self, other: Self) -> Self {
        Self::from_cases(self.known_le(other), other.known_lt(self))
    }
    pub fn gt(self, other: Self) -> Self {
        other.lt(self)
    }
    pub fn ge(self, other: Self) -> Self {
        other.le(self)
    }
    pub fn ult(self, other: Self) -> Self {
        let ((a_min, a_max), (b_min, b_max)) = (self.unsigned_range(), other.unsigned_range());
        Self::from_cases(a_max.ult(b_min), b_max.ule(a_min))
    }
    pub fn ule(self, other: Self) -> Self {
        let ((a_min, a_max), (b_min, b_max)) = (self.unsigned_range(), other.unsigned_range());
        Self::from_cases(a_max.ule(b_min), b_max.ult(a_min))
    }
    pub fn ugt(self, other: Self) -> Self {
        other.ult(self)
    }
    pub fn uge(self, other: Self) -> Self {
        other.ule(self)
    }
    pub fn eq(self, other: Self) -> Self {
        let same = self.is_constant() & other.is_constant() & self.lower.eq(other.lower);
        Self::from_cases(same, self.known_ne(other))
    }
    pub fn ne(self, other: Self) -> Self {
        let same = self.is_constant() & other.is_constant() & self.lower.eq(other.lower);
        Self::from_cases(self.known_ne(other), same)
    }
    pub fn is_true(self) -> Self {
        Self::from_cases(
            self.known_ne(Self::constant(w(0))),
            self.known_eq_const(w(0)),
        )
    }
    pub fn is_zero(self) -> Self {
        Self::from_cases(
            self.known_eq_const(w(0)),
            self.known_ne(Self::constant(w(0))),
        )
    }

    pub fn add_cannot_overflow(self, other: Self) -> W::Bit {
        !self.lower.add_overflows(other.lower) & !self.upper.add_overflows(other.upper)
    }
    pub fn sub_cannot_overflow(self, other: Self) -> W::Bit {
        !self.lower.sub_overflows(other.upper) & !self.upper.sub_overflows(other.lower)
    }
    pub fn mul_cannot_overflow(self, other: Self) -> W::Bit {
        let (a, b, c, d) = (self.lower, self.upper, other.lower, other.upper);
        !(a.mul_overflows(c) | a.mul_overflows(d) | b.mul_overflows(c) | b.mul_overflows(d))
    }
    /// The result of `int_add_ovf` when it does not overflow.
    pub fn add_ovf_raw(self, other: Self) -> Self {
        let lower = saturate(
            self.lower.add(other.lower),
            self.lower.add_overflows(other.lower),
            self.known_nonnegative(),
        );
        let upper = saturate(
            self.upper.add(other.upper),
            self.upper.add_overflows(other.upper),
            w::<W>(0).sle(self.upper),
        );
        raw(lower, upper, self.bits.add(other.bits))
    }
    pub fn sub_ovf_raw(self, other: Self) -> Self {
        let lower = saturate(
            self.lower.sub(other.upper),
            self.lower.sub_overflows(other.upper),
            self.known_nonnegative(),
        );
        let upper = saturate(
            self.upper.sub(other.lower),
            self.upper.sub_overflows(other.lower),
            w::<W>(0).sle(self.upper),
        );
        raw(lower, upper, self.bits.sub(other.bits))
    }
    pub fn mul_ovf_raw(self, other: Self) -> Self {
        let product = |x: W, y: W| {
            saturate(
                x.mul(y),
                x.mul_overflows(y),
                !x.is_negative().differs(y.is_negative()),
            )
        };
        let (a, b, c, d) = (self.lower, self.upper, other.lower, other.upper);
        let corners = [product(a, c), product(a, d), product(b, c), product(b, d)];
        raw(
            min4(corners[0], corners[1], corners[2], corners[3]),
            max4(corners[0], corners[1], corners[2], corners[3]),
            self.bits.mul(other.bits),
        )
    }
}
