//! The meaning of rule expressions, written once over the word trait.
//!
//! Checks and assignments compute with 64-bit words (wrapping arithmetic,
//! Python's floor `//` and `%`, SMT-LIB shifts), truth values, and what
//! the integer domain knows about a pattern variable (its `IntBound`). The
//! generated matcher calls these functions on `i64`; the prover calls the
//! very same functions on symbolic words. So a rule's proof is about the
//! code that decides whether it applies.

use crate::syntax::{BinOp, UnOp};
use traceopt_domains::{Bit, IntBound, Word};

/// The types of rule expressions.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Ty {
    Int,
    Bool,
    /// What the domain knows about a (non-constant) pattern variable.
    Bound,
}

impl std::fmt::Display for Ty {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Ty::Int => "an integer",
            Ty::Bool => "a truth value",
            Ty::Bound => "a pattern variable's bound",
        })
    }
}

/// A value during symbolic evaluation (the prover).
#[derive(Clone, Copy, Debug)]
pub enum Val<W: Word> {
    Int(W),
    Bool(W::Bit),
    Bound(IntBound<W>),
}

/// Methods on a pattern variable: name, argument types, result type.
pub const METHODS: &[(&str, &[Ty], Ty)] = &[
    ("is_bool", &[], Ty::Bool),
    ("is_constant", &[], Ty::Bool),
    ("known_nonnegative", &[], Ty::Bool),
    ("known_ge_const", &[Ty::Int], Ty::Bool),
    ("known_gt_const", &[Ty::Int], Ty::Bool),
    ("known_le_const", &[Ty::Int], Ty::Bool),
    ("known_lt_const", &[Ty::Int], Ty::Bool),
    ("known_eq_const", &[Ty::Int], Ty::Bool),
    ("known_lt", &[Ty::Bound], Ty::Bool),
    ("known_le", &[Ty::Bound], Ty::Bool),
    ("known_gt", &[Ty::Bound], Ty::Bool),
    ("known_ge", &[Ty::Bound], Ty::Bool),
    ("known_ne", &[Ty::Bound], Ty::Bool),
    ("add_cannot_overflow", &[Ty::Bound], Ty::Bool),
    ("sub_cannot_overflow", &[Ty::Bound], Ty::Bool),
    ("mul_cannot_overflow", &[Ty::Bound], Ty::Bool),
];

/// Attributes of a pattern variable (all integers): the interval's ends
/// and the known bits (`ones`, `zeros`: known 1s and 0s; `unknowns`).
pub const ATTRIBUTES: &[&str] = &["lower", "upper", "ones", "zeros", "unknowns"];

/// Helper functions on integers: name and arity.
pub const HELPERS: &[(&str, usize)] = &[
    ("highest_bit", 1),
    ("lowest_bit", 1),
    ("bit_count", 1),
    ("min", 2),
    ("max", 2),
];

pub fn method<W: Word>(name: &str, b: IntBound<W>, args: &[Val<W>]) -> W::Bit {
    let int = |i: usize| match args[i] {
        Val::Int(v) => v,
        _ => unreachable!("checked by the type checker"),
    };
    let bound = |i: usize| match args[i] {
        Val::Bound(v) => v,
        _ => unreachable!("checked by the type checker"),
    };
    match name {
        "is_bool" => b.is_bool(),
        "is_constant" => b.is_constant(),
        "known_nonnegative" => b.known_nonnegative(),
        "known_ge_const" => known_ge_const(b, int(0)),
        "known_gt_const" => known_gt_const(b, int(0)),
        "known_le_const" => known_le_const(b, int(0)),
        "known_lt_const" => known_lt_const(b, int(0)),
        "known_eq_const" => known_eq_const(b, int(0)),
        "known_lt" => b.known_lt(bound(0)),
        "known_le" => b.known_le(bound(0)),
        "known_gt" => known_gt(b, bound(0)),
        "known_ge" => known_ge(b, bound(0)),
        "known_ne" => b.known_ne(bound(0)),
        "add_cannot_overflow" => b.add_cannot_overflow(bound(0)),
        "sub_cannot_overflow" => b.sub_cannot_overflow(bound(0)),
        "mul_cannot_overflow" => b.mul_cannot_overflow(bound(0)),
        _ => unreachable!("unknown method {name}, checked by the type checker"),
    }
}

// The methods that are not `IntBound`'s own, in the same shape.

pub fn known_ge_const<W: Word>(b: IntBound<W>, c: W) -> W::Bit {
    b.known_ge_const(c)
}
pub fn known_gt_const<W: Word>(b: IntBound<W>, c: W) -> W::Bit {
    c.slt(b.lower)
}
pub fn known_le_const<W: Word>(b: IntBound<W>, c: W) -> W::Bit {
    b.upper.sle(c)
}
pub fn known_lt_const<W: Word>(b: IntBound<W>, c: W) -> W::Bit {
    b.known_lt_const(c)
}
pub fn known_eq_const<W: Word>(b: IntBound<W>, c: W) -> W::Bit {
    b.known_eq_const(c)
}
pub fn known_gt<W: Word>(b: IntBound<W>, other: IntBound<W>) -> W::Bit {
    other.known_lt(b)
}
pub fn known_ge<W: Word>(b: IntBound<W>, other: IntBound<W>) -> W::Bit {
    other.known_le(b)
}

pub fn attribute<W: Word>(name: &str, b: IntBound<W>) -> W {
    match name {
        "lower" => b.lower,
        "upper" => b.upper,
        "ones" => b.bits.ones,
        "zeros" => b.bits.zeros(),
        "unknowns" => b.bits.unknowns,
        _ => unreachable!("unknown attribute {name}, checked by the type checker"),
    }
}

pub fn helper<W: Word>(name: &str, args: &[W]) -> W {
    match name {
        "highest_bit" => highest_bit(args[0]),
        "lowest_bit" => lowest_bit(args[0]),
        "bit_count" => bit_count(args[0]),
        "min" => args[0].smin(args[1]),
        "max" => args[0].smax(args[1]),
        _ => unreachable!("unknown helper {name}, checked by the type checker"),
    }
}

/// The number of set bits (64-bit words).
pub fn bit_count<W: Word>(x: W) -> W {
    let l = W::lit;
    let x = x.sub(x.lshr(l(1)) & l(0x5555_5555_5555_5555));
    let x = (x & l(0x3333_3333_3333_3333)).add(x.lshr(l(2)) & l(0x3333_3333_3333_3333));
    let x = x.add(x.lshr(l(4))) & l(0x0f0f_0f0f_0f0f_0f0f);
    x.mul(l(0x0101_0101_0101_0101)).lshr(l(56))
}

/// The index of the highest set bit (-1 for 0).
pub fn highest_bit<W: Word>(x: W) -> W {
    bit_count(x.smear_right()).sub(W::lit(1))
}

/// The index of the lowest set bit (-1 for 0).
pub fn lowest_bit<W: Word>(x: W) -> W {
    let below = x.lowest_bit().sub(W::lit(1));
    let zero = x.eq(W::lit(0));
    W::select(zero, W::lit(-1), bit_count(below))
}

/// An arithmetic or bitwise operator on words.
#[inline]
pub fn int_op<W: Word>(op: BinOp, a: W, b: W) -> W {
    match op {
        BinOp::Add => a.add(b),
        BinOp::Sub => a.sub(b),
        BinOp::Mul => a.mul(b),
        BinOp::FloorDiv => a.floordiv(b),
        BinOp::FloorMod => a.floormod(b),
        BinOp::And => a & b,
        BinOp::Or => a | b,
        BinOp::Xor => a ^ b,
        BinOp::Shl => a.shl(b),
        BinOp::Shr => a.ashr(b),
        BinOp::UShr => a.lshr(b),
        _ => unreachable!("{op:?} is not an integer operator"),
    }
}

/// A comparison of words.
#[inline]
pub fn compare<W: Word>(op: BinOp, a: W, b: W) -> W::Bit {
    match op {
        BinOp::Eq => a.eq(b),
        BinOp::Ne => a.ne(b),
        BinOp::Lt => a.slt(b),
        BinOp::Le => a.sle(b),
        BinOp::Gt => b.slt(a),
        BinOp::Ge => b.sle(a),
        BinOp::ULt => a.ult(b),
        BinOp::ULe => a.ule(b),
        BinOp::UGt => b.ult(a),
        BinOp::UGe => b.ule(a),
        _ => unreachable!("{op:?} is not a comparison"),
    }
}

pub fn is_comparison(op: BinOp) -> bool {
    use BinOp::*;
    matches!(op, Eq | Ne | Lt | Le | Gt | Ge | ULt | ULe | UGt | UGe)
}

pub fn is_logic(op: BinOp) -> bool {
    matches!(op, BinOp::LogicAnd | BinOp::LogicOr)
}

/// Unary operators on words (`-`, `~`).
#[inline]
pub fn int_unary<W: Word>(op: UnOp, a: W) -> W {
    match op {
        UnOp::Neg => a.neg(),
        UnOp::Invert => !a,
        UnOp::Not => unreachable!("`not` is logical"),
    }
}

/// Logical operators on truth values.
pub fn logic<B: Bit>(op: BinOp, a: B, b: B) -> B {
    match op {
        BinOp::LogicAnd => a & b,
        BinOp::LogicOr => a | b,
        _ => unreachable!("{op:?} is not logical"),
    }
}
