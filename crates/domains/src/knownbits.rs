//! Known bits (tristate numbers): for each bit of a word, 0, 1 or unknown.
//!
//! Stored as two words: `ones` (bits known to be 1) and `unknowns`. A bit
//! set in both is ill-formed; every constructor here keeps them apart. The
//! transfer functions follow the tnum algorithms of the eBPF verifier
//! (add/sub/mul by carry and borrow propagation), written once over
//! [`Word`] so that the proofs in `tests/proofs.rs` run this very code.
//!
//! String form, right to left as in the blog post this follows: `1?0`
//! means ...0001?0; a `...1` or `...?` prefix repeats that digit to the
//! left, so `...?1` is "any odd number".

use std::fmt;
use std::str::FromStr;

use crate::word::{cond, Bit, Merge, Word};

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct KnownBits<W = i64> {
    pub ones: W,
    pub unknowns: W,
}

impl<W: Word> Merge for KnownBits<W> {
    type W = W;
    fn merge(c: W::Bit, then: Self, otherwise: Self) -> Self {
        KnownBits {
            ones: W::select(c, then.ones, otherwise.ones),
            unknowns: W::select(c, then.unknowns, otherwise.unknowns),
        }
    }
}

fn w<W: Word>(value: i64) -> W {
    W::lit(value)
}

impl<W: Word> KnownBits<W> {
    /// From known ones and unknowns; a bit in both counts as unknown.
    pub fn new(ones: W, unknowns: W) -> Self {
        KnownBits {
            ones: ones & !unknowns,
            unknowns,
        }
    }
    pub fn constant(value: W) -> Self {
        KnownBits {
            ones: value,
            unknowns: w(0),
        }
    }
    pub fn unknown() -> Self {
        KnownBits {
            ones: w(0),
            unknowns: w(-1),
        }
    }
    /// The booleans: 0 or 1.
    pub fn boolean() -> Self {
        KnownBits {
            ones: w(0),
            unknowns: w(1),
        }
    }
    /// 1 if `yes`, 0 if `no`, 0 or 1 otherwise (`yes` and `no` must not
    /// both hold).
    pub fn from_cases(yes: W::Bit, no: W::Bit) -> Self {
        KnownBits {
            ones: W::select(yes, w(1), w(0)),
            unknowns: W::select(yes | no, w(0), w(1)),
        }
    }

    pub fn is_well_formed(self) -> W::Bit {
        (self.ones & self.unknowns).eq(w(0))
    }
    pub fn knowns(self) -> W {
        !self.unknowns
    }
    pub fn zeros(self) -> W {
        self.knowns() & !self.ones
    }
    pub fn is_constant(self) -> W::Bit {
        self.unknowns.eq(w(0))
    }
    pub fn contains(self, value: W) -> W::Bit {
        (value & self.knowns()).eq(self.ones)
    }
    /// Every member of `self` is a member of `other`.
    pub fn is_subset_of(self, other: Self) -> W::Bit {
        (self.unknowns & !other.unknowns).eq(w(0)) & (self.ones & other.knowns()).eq(other.ones)
    }
    /// Is some bit known in both and different?
    pub fn disagrees(self, other: Self) -> W::Bit {
        let both = self.knowns() & other.knowns();
        (self.ones & both).ne(other.ones & both)
    }
    /// `n & m == n` for all members `n` of `self` and `m` of `other`.
    pub fn is_and_identity(self, other: Self) -> W::Bit {
        (self.zeros() | other.ones).eq(w(-1))
    }

    pub fn min_unsigned(self) -> W {
        self.ones
    }
    pub fn max_unsigned(self) -> W {
        self.ones | self.unknowns
    }
    pub fn min_signed(self) -> W {
        self.ones | (self.unknowns & W::min_value())
    }
    pub fn max_signed(self) -> W {
        self.ones | (self.unknowns & W::max_value())
    }

    /// The members of both, and whether there are none.
    pub fn meet(self, other: Self) -> (Self, W::Bit) {
        let result = KnownBits {
            ones: self.ones | other.ones,
            unknowns: self.unknowns & other.unknowns,
        };
        (result, self.disagrees(other))
    }
    /// The smallest value holding the members of both.
    pub fn join(self, other: Self) -> Self {
        let unknowns = self.unknowns | other.unknowns | (self.ones ^ other.ones);
        KnownBits::new(self.ones, unknowns)
    }

    /// The smallest member that is `>= bound` as unsigned numbers, and
    /// whether there is one.
    ///
    /// Force `bound` onto the known bits; if that changes it, look at the
    /// highest changed bit. Where the known bit is 1 (and `bound` has 0),
    /// keep the bits above, set it, and fill below with the smallest
    /// member bits. Where it is 0, the bits above must grow: set the
    /// lowest unknown bit above that is 0 in `bound`, if there is one.
    pub fn min_unsigned_at_least(self, bound: W) -> (W, W::Bit) {
        let forced = (bound & self.unknowns) | self.ones;
        let diff = forced ^ bound;
        let high = diff.highest_bit();
        let raise = W::select(
            (self.ones & high).ne(w(0)),
            high,
            (self.unknowns & !bound & !diff.smear_right()).lowest_bit(),
        );
        let below = raise.sub(w(1));
        let candidate = (bound & !(raise | below)) | raise | (self.ones & below);
        let exact = diff.eq(w(0));
        (W::select(exact, bound, candidate), exact | raise.ne(w(0)))
    }
    /// The largest member that is `<= bound` as unsigned numbers, and
    /// whether there is one (the mirror image of the above).
    pub fn max_unsigned_at_most(self, bound: W) -> (W, W::Bit) {
        let (value, found) = self.invert().min_unsigned_at_least(!bound);
        (!value, found)
    }
    /// Members with the sign bit flipped: signed order becomes unsigned.
    fn flip_sign(self) -> Self {
        KnownBits {
            ones: self.ones ^ (W::min_value() & self.knowns()),
            unknowns: self.unknowns,
        }
    }
    pub fn min_signed_at_least(self, bound: W) -> (W, W::Bit) {
        let (value, found) = self
            .flip_sign()
            .min_unsigned_at_least(bound ^ W::min_value());
        (value ^ W::min_value(), found)
    }
    pub fn max_signed_at_most(self, bound: W) -> (W, W::Bit) {
        let (value, found) = self
            .flip_sign()
            .max_unsigned_at_most(bound ^ W::min_value());
        (value ^ W::min_value(), found)
    }

    pub fn invert(self) -> Self {
        KnownBits {
            ones: self.zeros(),
            unknowns: self.unknowns,
        }
    }
    pub fn and(self, other: Self) -> Self {
        let ones = self.ones & other.ones;
        let knowns = self.zeros() | other.zeros() | ones;
        KnownBits::new(ones, !knowns)
    }
    pub fn or(self, other: Self) -> Self {
        let ones = self.ones | other.ones;
        let knowns = (self.zeros() & other.zeros()) | ones;
        KnownBits::new(ones, !knowns)
    }
    pub fn xor(self, other: Self) -> Self {
        let unknowns = self.unknowns | other.unknowns;
        KnownBits::new(self.ones ^ other.ones, unknowns)
    }
    /// Sum: a bit is unknown where an input bit is, or where the carry
    /// differs between the all-unknowns-0 and all-unknowns-1 sums.
    pub fn add(self, other: Self) -> Self {
        let sum_ones = self.ones.add(other.ones);
        let sum_all = sum_ones.add(self.unknowns).add(other.unknowns);
        let unknowns = self.unknowns | other.unknowns | (sum_all ^ sum_ones);
        KnownBits::new(sum_ones, unknowns)
    }
    /// Difference, by the same argument with borrows.
    pub fn sub(self, other: Self) -> Self {
        let diff_ones = self.ones.sub(other.ones);
        let high = diff_ones.add(self.unknowns);
        let low = diff_ones.sub(other.unknowns);
        let unknowns = self.unknowns | other.unknowns | (high ^ low);
        KnownBits::new(diff_ones, unknowns)
    }
    pub fn neg(self) -> Self {
        KnownBits::constant(w(0)).sub(self)
    }
    /// Product: the known part multiplied exactly, plus the sum of the
    /// partial products that involve unknown bits, each entirely unknown
    /// (one [`MulStep`] per bit of `self`).
    pub fn mul(self, other: Self) -> Self {
        let mut step = MulStep::start(self, other);
        for _ in 0..W::bits() {
            if step.a.only_zero().known() == Some(true) {
                break;
            }
            step = step.next();
        }
        step.finish(self, other)
    }

    /// Is 0 the only member?
    pub fn only_zero(self) -> W::Bit {
        (self.ones | self.unknowns).eq(w(0))
    }

    fn shift_by(self, shift: impl Fn(W) -> W) -> Self {
        KnownBits {
            ones: shift(self.ones),
            unknowns: shift(self.unknowns),
        }
    }
    /// Shift counts: the smallest possible one (counts of 64 and more
    /// are undefined in traces, so they need not be covered).
    fn min_count(count: Self) -> W {
        count.ones
    }
    /// `x << count`. A known count shifts the bits; otherwise the low
    /// zeros of x and of the smallest count stay known.
    pub fn shl(self, count: Self) -> Self {
        cond(
            count.is_constant(),
            || self.shift_by(|x| x.shl(count.ones)),
            || {
                // 2^tz - 1 for tz low zeros (all ones when x is 0).
                let low_zeros = self.max_unsigned().lowest_bit().sub(w(1));
                let shift = Self::min_count(count);
                let zeros = low_zeros.shl(shift) | w::<W>(1).shl(shift).sub(w(1));
                KnownBits::new(w(0), !zeros)
            },
        )
    }
    /// `x >>u count`. A known count shifts the bits; otherwise the result
    /// is at most the largest member shifted by the smallest count.
    pub fn lshr(self, count: Self) -> Self {
        cond(
            count.is_constant(),
            || self.shift_by(|x| x.lshr(count.ones)),
            || {
                let largest = self.max_unsigned().lshr(Self::min_count(count));
                KnownBits::new(w(0), largest.smear_right())
            },
        )
    }
    /// `x >> count`. A known count shifts the bits; otherwise as `lshr` on
    /// the non-negative side, mirrored by inverting on the negative side.
    pub fn ashr(self, count: Self) -> Self {
        let sign_known = (self.unknowns & W::min_value()).eq(w(0));
        let negative = (self.ones & W::min_value()).ne(w(0));
        cond(
            count.is_constant(),
            || self.shift_by(|x| x.ashr(count.ones)),
            || {
                cond(
                    sign_known,
                    || {
                        cond(
                            negative,
                            || self.invert().lshr(count).invert(),
                            || self.lshr(count),
                        )
                    },
                    KnownBits::unknown,
                )
            },
        )
    }

    pub fn eq(self, other: Self) -> Self {
        let same = self.is_constant() & other.is_constant() & self.ones.eq(other.ones);
        KnownBits::from_cases(same, self.disagrees(other))
    }
    pub fn ne(self, other: Self) -> Self {
        self.eq(other).invert_boolean()
    }
    pub fn lt(self, other: Self) -> Self {
        KnownBits::from_cases(
            self.max_signed().slt(other.min_signed()),
            other.max_signed().sle(self.min_signed()),
        )
    }
    pub fn le(self, other: Self) -> Self {
        other.lt(self).invert_boolean()
    }
    pub fn gt(self, other: Self) -> Self {
        other.lt(self)
    }
    pub fn ge(self, other: Self) -> Self {
        self.lt(other).invert_boolean()
    }
    pub fn ult(self, other: Self) -> Self {
        KnownBits::from_cases(
            self.max_unsigned().ult(other.min_unsigned()),
            other.max_unsigned().ule(self.min_unsigned()),
        )
    }
    pub fn ule(self, other: Self) -> Self {
        other.ult(self).invert_boolean()
    }
    pub fn ugt(self, other: Self) -> Self {
        other.ult(self)
    }
    pub fn uge(self, other: Self) -> Self {
        self.ult(other).invert_boolean()
    }
    pub fn is_true(self) -> Self {
        KnownBits::from_cases(
            self.ones.ne(w(0)),
            self.unknowns.eq(w(0)) & self.ones.eq(w(0)),
        )
    }
    pub fn is_zero(self) -> Self {
        self.is_true().invert_boolean()
    }
    /// 1 - x, for a boolean x.
    fn invert_boolean(self) -> Self {
        KnownBits {
            ones: (self.ones ^ w(1)) & !self.unknowns,
            unknowns: self.unknowns,
        }
    }
}

impl KnownBits<i64> {
    /// The value, if every bit is known.
    pub fn as_constant(self) -> Option<i64> {
        (self.unknowns == 0).then_some(self.ones)
    }
}

/// The state of [`KnownBits::mul`] between bits: the factors shifted
/// (`a` right, `b` left) past the bits done, and the sum of the partial
/// products so far that involve unknown bits. The proofs show one step
/// sound and conclude by induction (`tests/proofs.rs`,
/// `known_bits_mul_by_induction`).
#[derive(Clone, Copy, Debug)]
pub struct MulStep<W> {
    pub a: KnownBits<W>,
    pub b: KnownBits<W>,
    pub sum: KnownBits<W>,
}

impl<W: Word> MulStep<W> {
    pub fn start(a: KnownBits<W>, b: KnownBits<W>) -> Self {
        MulStep {
            a,
            b,
            sum: KnownBits::constant(w(0)),
        }
    }
    /// Adds the partial product of `a`'s lowest bit: none for a 0, the
    /// unknown bits of `b` for a 1 (its ones are in the exact part), all
    /// of `b`'s possible bits for an unknown bit.
    pub fn next(self) -> Self {
        let MulStep { a, b, sum } = self;
        let low_one = (a.ones & w(1)).ne(w(0));
        let low_unknown = (a.unknowns & w(1)).ne(w(0));
        let sum = cond(
            low_one,
            || sum.add(KnownBits::new(w(0), b.unknowns)),
            || {
                cond(
                    low_unknown,
                    || sum.add(KnownBits::new(w(0), b.ones | b.unknowns)),
                    || sum,
                )
            },
        );
        MulStep {
            a: a.shift_by(|x| x.lshr_by(1)),
            b: b.shift_by(|x| x.shl_by(1)),
            sum,
        }
    }
    /// The product of the ones of the factors, exact, plus the sum.
    pub fn finish(self, a: KnownBits<W>, b: KnownBits<W>) -> KnownBits<W> {
        KnownBits::constant(a.ones.mul(b.ones)).add(self.sum)
    }
}

impl fmt::Display for KnownBits<i64> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Digits from the right until the rest of the word repeats one
        // digit: 0s are left off, 1s and ?s get the `...` prefix.
        let (ones, unknowns) = (self.ones as u64, self.unknowns as u64);
        let mut digits = Vec::new();
        let mut bit = 0;
        loop {
            let (rest_ones, rest_unknowns) = (ones >> bit, unknowns >> bit);
            let all_above = if bit == 0 { u64::MAX } else { u64::MAX >> bit };
            if rest_ones == 0 && rest_unknowns == 0 {
                break;
            }
            if rest_ones == all_above || rest_unknowns == all_above {
                digits.push(if rest_ones != 0 { '1' } else { '?' });
                digits.push('.');
                digits.push('.');
                digits.push('.');
                break;
            }
            digits.push(match (rest_ones & 1, rest_unknowns & 1) {
                (_, 1) => '?',
                (1, _) => '1',
                _ => '0',
            });
            bit += 1;
        }
        if digits.is_empty() {
            digits.push('0');
        }
        f.write_str(&digits.iter().rev().collect::<String>())
    }
}

/// Why a string is not a known-bits value.
#[derive(Clone, PartialEq, Eq, Debug, thiserror::Error)]
#[error("not a known-bits string: {0} (expected digits 0, 1, ? with an optional ...1 or ...? prefix, at most 64 digits)")]
pub struct ParseKnownBitsError(String);

impl FromStr for KnownBits<i64> {
    type Err = ParseKnownBitsError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let error = || ParseKnownBitsError(format!("'{text}'"));
        let (mut ones, mut unknowns, digits) = match text.strip_prefix("...") {
            Some(rest) => match rest.as_bytes().first() {
                Some(b'1') => (u64::MAX, 0, &rest[1..]),
                Some(b'?') => (0, u64::MAX, &rest[1..]),
                _ => return Err(error()),
            },
            None if text.is_empty() => return Err(error()),
            None => (0, 0, text),
        };
        if digits.len() > 64 {
            return Err(error());
        }
        for digit in digits.bytes() {
            ones = ones.checked_shl(1).unwrap_or(0);
            unknowns = unknowns.checked_shl(1).unwrap_or(0);
            match digit {
                b'0' => {}
                b'1' => ones |= 1,
                b'?' => unknowns |= 1,
                _ => return Err(error()),
            }
        }
        Ok(KnownBits {
            ones: ones as i64,
            unknowns: unknowns as i64,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kb(text: &str) -> KnownBits {
        text.parse().unwrap()
    }

    #[test]
    fn strings() {
        assert_eq!(KnownBits::constant(0).to_string(), "0");
        assert_eq!(KnownBits::constant(5).to_string(), "101");
        assert_eq!(KnownBits::new(5, 0b10).to_string(), "1?1");
        assert_eq!(KnownBits::new(!0b1111, 0b10).to_string(), "...100?0");
        assert_eq!(KnownBits::new(1, !0b1).to_string(), "...?1");
        assert_eq!(KnownBits::constant(-1).to_string(), "...1");
        assert_eq!(KnownBits::<i64>::unknown().to_string(), "...?");
        assert_eq!(kb("...?1"), KnownBits::new(1, !1));
        assert!("...x".parse::<KnownBits>().is_err());
        assert!("".parse::<KnownBits>().is_err());
        assert!("12".parse::<KnownBits>().is_err());
    }

    #[test]
    fn transfer_examples() {
        assert_eq!(kb("01?01?01?").invert().to_string(), "...10?10?10?");
        assert_eq!(kb("01?01?01?").and(kb("000111???")).to_string(), "1?0??");
        assert_eq!(kb("01?01?01?").or(kb("000111???")).to_string(), "1?111?1?");
        assert_eq!(
            kb("0?10?10?10").add(kb("0???111000")).to_string(),
            "?????01?10"
        );
        assert_eq!(
            kb("0?10?10?10").sub(kb("0???111000")).to_string(),
            "...?11?10"
        );
        assert_eq!(
            kb("...1?10?10?10").sub(kb("...10000???111000")).to_string(),
            "111?????11?10"
        );
        assert_eq!(kb("...?").eq(kb("...?")).to_string(), "?");
        assert_eq!(kb("1010").eq(kb("1010")).to_string(), "1");
        assert_eq!(kb("1010").eq(kb("10100")).to_string(), "0");
        let product = kb("11").mul(kb("?1"));
        assert!(product.contains(3) && product.contains(9), "{product}");
        assert_eq!(kb("101").mul(kb("11")).to_string(), "1111");
        assert_eq!(kb("1?").shl(kb("10")).to_string(), "1?00");
        assert_eq!(kb("...1?").ashr(kb("1")).to_string(), "...1");
        assert_eq!(kb("1000").lshr(kb("?")).to_string(), "????");
        assert_eq!(kb("1100").shl(kb("?1")).to_string(), "...?000");
        assert_eq!(kb("...10?").ashr(kb("?0")).to_string(), "...1??");
    }

    #[test]
    fn bounds_search() {
        let k = kb("1?0");
        // members 100, 110 (4, 6)
        assert_eq!(k.min_unsigned_at_least(0), (4, true));
        assert_eq!(k.min_unsigned_at_least(5), (6, true));
        assert!(!k.min_unsigned_at_least(7).1);
        assert_eq!(k.max_unsigned_at_most(5), (4, true));
        assert!(!k.max_unsigned_at_most(3).1);
        let odd = kb("...?1");
        assert_eq!(odd.min_signed_at_least(-4), (-3, true));
        assert_eq!(odd.max_signed_at_most(i64::MAX), (i64::MAX, true));
        assert_eq!(odd.min_signed_at_least(i64::MIN), (i64::MIN + 1, true));
    }
}
