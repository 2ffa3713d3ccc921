//! A concrete word of `N` bits (2 to 8), for exhaustive checks: at such
//! widths every abstract value and every member can be enumerated. The
//! value is kept sign-extended in an `i64`, so the signed comparisons are
//! the `i64` ones; results are cut back to `N` bits. `primitives.rs`
//! checks every primitive against the SMT-LIB meaning at 4 bits on every
//! pair of arguments, as it does for `i64`.

// Shared by several test files, each using a part.
#![allow(dead_code)]

use std::ops::{BitAnd, BitOr, BitXor, Not};

use traceopt_domains::{Bit, Merge, Word};

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Narrow<const N: u32>(pub i64);

/// The truth values of [`Narrow`] words (a `bool`; its own type, since a
/// word's truth values choose between words of that word type).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct NarrowBit<const N: u32>(pub bool);

impl<const N: u32> Narrow<N> {
    pub const MIN: i64 = -(1 << (N - 1));
    pub const MAX: i64 = (1 << (N - 1)) - 1;
    const MASK: u64 = (1 << N) - 1;

    /// `value` cut to `N` bits, sign-extended.
    pub fn cut(value: i64) -> Self {
        let shift = 64 - N;
        Narrow((value << shift) >> shift)
    }
    fn unsigned(self) -> u64 {
        self.0 as u64 & Self::MASK
    }
    /// Every word of `N` bits, from the smallest signed one up.
    pub fn all() -> impl Iterator<Item = Self> {
        (Self::MIN..=Self::MAX).map(Narrow)
    }
    /// The position of this word in [`Narrow::all`] (0 to 2^N - 1).
    pub fn index(self) -> u32 {
        (self.0 - Self::MIN) as u32
    }
    fn from_bool(value: bool) -> NarrowBit<N> {
        NarrowBit(value)
    }
}

/// The bitwise operators of a wrapper of `bool` or `i64`, and `Merge`
/// (choosing by a `NarrowBit`).
macro_rules! wrapper_ops {
    ($name:ident: $($trait:ident $method:ident $op:tt),*) => {
        $(impl<const N: u32> $trait for $name<N> {
            type Output = Self;
            fn $method(self, other: Self) -> Self {
                $name(self.0 $op other.0)
            }
        })*
        impl<const N: u32> Not for $name<N> {
            type Output = Self;
            fn not(self) -> Self {
                $name(!self.0)
            }
        }
        impl<const N: u32> Merge for $name<N> {
            type W = Narrow<N>;
            fn merge(c: NarrowBit<N>, then: Self, otherwise: Self) -> Self {
                if c.0 {
                    then
                } else {
                    otherwise
                }
            }
        }
    };
}

wrapper_ops!(NarrowBit: BitAnd bitand &, BitOr bitor |);
wrapper_ops!(Narrow: BitAnd bitand &, BitOr bitor |, BitXor bitxor ^);

impl<const N: u32> Bit for NarrowBit<N> {
    fn lit(value: bool) -> Self {
        NarrowBit(value)
    }
    fn known(self) -> Option<bool> {
        Some(self.0)
    }
}

impl<const N: u32> Word for Narrow<N> {
    type Bit = NarrowBit<N>;

    fn bits() -> u32 {
        N
    }
    fn lit(value: i64) -> Self {
        Self::cut(value)
    }
    fn add(self, other: Self) -> Self {
        Self::cut(self.0 + other.0)
    }
    fn sub(self, other: Self) -> Self {
        Self::cut(self.0 - other.0)
    }
    fn mul(self, other: Self) -> Self {
        Self::cut(self.0 * other.0)
    }
    fn neg(self) -> Self {
        Self::cut(-self.0)
    }
    fn shl(self, count: Self) -> Self {
        match count.unsigned() {
            c if c < u64::from(N) => Self::cut(self.0 << c),
            _ => Narrow(0),
        }
    }
    fn lshr(self, count: Self) -> Self {
        match count.unsigned() {
            c if c < u64::from(N) => Self::cut((self.unsigned() >> c) as i64),
            _ => Narrow(0),
        }
    }
    fn ashr(self, count: Self) -> Self {
        Narrow(self.0 >> count.unsigned().min(u64::from(N) - 1))
    }
    fn sdiv(self, other: Self) -> Self {
        Self::cut(Word::sdiv(self.0, other.0))
    }
    fn srem(self, other: Self) -> Self {
        Self::cut(Word::srem(self.0, other.0))
    }
    fn floormod(self, other: Self) -> Self {
        Self::cut(Word::floormod(self.0, other.0))
    }
    fn umul_high(self, other: Self) -> Self {
        Self::cut(((self.unsigned() * other.unsigned()) >> N) as i64)
    }
    fn add_overflows(self, other: Self) -> NarrowBit<N> {
        Self::from_bool(self.add(other).0 != self.0 + other.0)
    }
    fn sub_overflows(self, other: Self) -> NarrowBit<N> {
        Self::from_bool(self.sub(other).0 != self.0 - other.0)
    }
    fn mul_overflows(self, other: Self) -> NarrowBit<N> {
        Self::from_bool(self.mul(other).0 != self.0 * other.0)
    }
    fn smear_right(self) -> Self {
        match self.unsigned() {
            0 => Narrow(0),
            u => Self::cut((u64::MAX >> u.leading_zeros()) as i64),
        }
    }
    fn eq(self, other: Self) -> NarrowBit<N> {
        Self::from_bool(self.0 == other.0)
    }
    fn slt(self, other: Self) -> NarrowBit<N> {
        Self::from_bool(self.0 < other.0)
    }
    fn sle(self, other: Self) -> NarrowBit<N> {
        Self::from_bool(self.0 <= other.0)
    }
    fn ult(self, other: Self) -> NarrowBit<N> {
        Self::from_bool(self.unsigned() < other.unsigned())
    }
    fn ule(self, other: Self) -> NarrowBit<N> {
        Self::from_bool(self.unsigned() <= other.unsigned())
    }
    fn select(c: NarrowBit<N>, then: Self, otherwise: Self) -> Self {
        Merge::merge(c, then, otherwise)
    }
}
