//! Property tests of the integer domains on concrete `i64` words (no
//! solver): random abstract values, each built around a member, biased to
//! special values as in PyPy's known-bits blog post. Checked, 10,000 cases
//! each:
//! - soundness of every forward transfer function of `KnownBits` and
//!   `IntBound`: the result contains the interpreter's result for the
//!   members (`traceopt_interp::arith` is the concrete truth);
//! - results are well formed (`KnownBits`) or normalized (`IntBound`);
//! - constants in, constants out, equal to the concrete result;
//! - `*_ovf` bounds and `*_cannot_overflow` queries against `int_ovf`;
//! - refinements keep every member that satisfies the condition;
//! - lattice operations (meet, join, intersect, widen, normalize) keep the
//!   members, the bounds searches are sound and minimal for the member;
//! - queries (`known_lt`, `is_and_identity`, ...) only claim what holds;
//! - the string form of `KnownBits` round-trips.

use proptest::prelude::*;
use proptest::test_runner::{RngAlgorithm, TestCaseError};
use traceopt_domains::{IntBound, KnownBits, Operand, Relation};
use traceopt_interp::arith::{eval, int_ovf};
use traceopt_interp::Val;
use traceopt_ir::Opcode;

type K = KnownBits<i64>;
type B = IntBound<i64>;
type Outcome = Result<(), TestCaseError>;

fn config() -> ProptestConfig {
    ProptestConfig {
        // Undefined inputs (shift counts, division by zero, overflow of
        // the `*_ovf` ops) are rejected; the strategies keep them rare.
        max_global_rejects: 50_000,
        // ChaCha, the default, costs most of the time in debug builds.
        rng_algorithm: RngAlgorithm::XorShift,
        // Failures print their shrunk input; no regression files.
        failure_persistence: None,
        ..ProptestConfig::with_cases(10_000)
    }
}

// Inputs. Each strategy is one flat tuple mapped to a value: nested
// `prop_oneof!`s cost several times more per case in debug builds.

/// Half special values (small ints, powers of two and one less, their
/// negations and inversions, the ends of the range), half random ones.
fn value() -> impl Strategy<Value = i64> {
    (0u8..10, any::<i64>(), 0u32..64, 0u8..3).prop_map(|(kind, random, i, how)| {
        let special = match kind {
            0 => random.rem_euclid(100),
            1 => 1i64 << i,
            2 => (1i64 << i).wrapping_sub(1),
            3 => i64::MIN,
            4 => i64::MAX,
            _ => return random,
        };
        match how {
            0 => special,
            1 => special.wrapping_neg(),
            _ => !special,
        }
    })
}

/// Two values: equal, close or unrelated.
fn pair() -> impl Strategy<Value = (i64, i64)> {
    (value(), 0u8..3, -4i64..=4, value()).prop_map(|(x, how, d, other)| match how {
        0 => (x, x),
        1 => (x, x.wrapping_add(d)),
        _ => (x, other),
    })
}

/// A value and a shift count, mostly in the defined range 0..64.
fn shift() -> impl Strategy<Value = (i64, i64)> {
    (value(), 0u8..8, 0i64..64, value())
        .prop_map(|(x, kind, count, other)| (x, if kind == 0 { other } else { count }))
}

/// A value and a byte count for `int_signext`, mostly 1, 2, 4 or 8.
fn signext() -> impl Strategy<Value = (i64, i64)> {
    (value(), 0u8..4, 0u32..4, value())
        .prop_map(|(x, kind, size, other)| (x, if kind == 0 { other } else { 1 << size }))
}

/// Unknown bits: none (a constant), all, the low ones, special or random.
fn mask() -> impl Strategy<Value = i64> {
    (0u8..6, value(), any::<i64>(), any::<i64>()).prop_map(|(kind, v, r, s)| match kind {
        0 => 0,
        1 => -1,
        2 => r & 0xff,
        3 => v,
        4 => r,
        _ => r & s,
    })
}

/// The known bits of `v` with `unknowns` unknown: contains `v`.
fn bits(v: i64, unknowns: i64) -> K {
    KnownBits::new(v, unknowns)
}

/// One end of an interval around a member: the member itself, a few
/// steps away, a small value or another value (if further out), or the
/// end of the range.
#[derive(Clone, Copy, Debug)]
enum End {
    Exact,
    Near(i64),
    Far(i64),
    Open,
}

/// How to build an IntBound around a member (see `around`).
#[derive(Clone, Copy, Debug)]
struct Shape {
    lower: End,
    upper: End,
    unknowns: i64,
}

fn end() -> impl Strategy<Value = End> {
    (0u8..8, 0i64..20, -2i64..=2, value()).prop_map(|(kind, d, small, other)| match kind {
        0 => End::Exact,
        1 | 2 => End::Near(d % 4),
        3 => End::Near(d),
        4 => End::Far(small),
        5 | 6 => End::Far(other),
        _ => End::Open,
    })
}

/// Constants, unbounded, and ranges with known bits.
fn shape() -> impl Strategy<Value = Shape> {
    (0u8..10, end(), end(), mask()).prop_map(|(kind, lower, upper, unknowns)| match kind {
        0 => Shape {
            lower: End::Exact,
            upper: End::Exact,
            unknowns: 0,
        },
        1 => Shape {
            lower: End::Open,
            upper: End::Open,
            unknowns: -1,
        },
        _ => Shape {
            lower,
            upper,
            unknowns,
        },
    })
}

/// The bound of `shape` around `v`: `[lower, upper]` and the bits of
/// `bits(v, shape.unknowns)`, normalized by `from_parts`.
fn around(v: i64, shape: &Shape) -> B {
    let lower = match shape.lower {
        End::Exact => v,
        End::Near(d) => v.saturating_sub(d),
        End::Far(other) => other.min(v),
        End::Open => i64::MIN,
    };
    let upper = match shape.upper {
        End::Exact => v,
        End::Near(d) => v.saturating_add(d),
        End::Far(other) => other.max(v),
        End::Open => i64::MAX,
    };
    let bound = IntBound::from_parts(lower, upper, bits(v, shape.unknowns));
    assert!(
        bound.contains(v) && bound.is_normalized(),
        "from_parts({lower}, {upper}, {}) = {bound:?} lost {v} or is not normalized",
        bits(v, shape.unknowns)
    );
    bound
}

// Concrete truth.

/// The interpreter's result, `None` where the op is undefined.
fn concrete(op: Opcode, args: &[i64]) -> Option<i64> {
    let args: Vec<Val> = args.iter().map(|&a| Val::Int(a)).collect();
    match eval(op, &args) {
        Ok(Val::Int(r)) => Some(r),
        Ok(other) => panic!("{op} gave {other:?}"),
        Err(_) => None,
    }
}

fn defined(op: Opcode, args: &[i64]) -> Result<i64, TestCaseError> {
    concrete(op, args).ok_or_else(|| TestCaseError::reject("undefined"))
}

fn implies(premise: bool, conclusion: bool) -> bool {
    !premise || conclusion
}

fn ule(a: i64, b: i64) -> bool {
    (a as u64) <= (b as u64)
}

/// Signed order as unsigned order (for the bounds searches).
fn signed_key(v: i64) -> u64 {
    (v as u64) ^ (1 << 63)
}

fn unsigned_key(v: i64) -> u64 {
    v as u64
}

fn show<T: std::fmt::Display>(args: &[T]) -> String {
    args.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

// Checks shared by the properties.

fn check_bits(op: Opcode, args: &[K], result: K, expected: i64) -> Outcome {
    prop_assert!(
        result.is_well_formed(),
        "{op}({}) = {result:?} is ill-formed",
        show(args)
    );
    prop_assert!(
        result.contains(expected),
        "{op}({}) = {result} misses {expected} ({expected:#x})",
        show(args)
    );
    Ok(())
}

fn check_bound(op: Opcode, args: &[B], result: B, expected: i64) -> Outcome {
    prop_assert!(
        result.contains(expected),
        "{op}({}) = {result} misses {expected}",
        show(args)
    );
    prop_assert!(
        result.is_normalized(),
        "{op}({}) = {result:?} is not normalized",
        show(args)
    );
    Ok(())
}

fn check_raw(op: Opcode, args: &[B], raw: B, expected: i64) -> Outcome {
    prop_assert!(
        raw.contains(expected),
        "{op}({}) raw = {raw:?} misses {expected}",
        show(args)
    );
    Ok(())
}

fn bits_unary(op: Opcode, f: fn(K) -> K, (x, ux): (i64, i64)) -> Outcome {
    let r = defined(op, &[x])?;
    let a = bits(x, ux);
    check_bits(op, &[a], f(a), r)?;
    prop_assert_eq!(
        f(K::constant(x)),
        K::constant(r),
        "{}({}) on a constant",
        op,
        x
    );
    Ok(())
}

fn bits_binary(op: Opcode, f: fn(K, K) -> K, (x, y): (i64, i64), (ux, uy): (i64, i64)) -> Outcome {
    let r = defined(op, &[x, y])?;
    let (a, b) = (bits(x, ux), bits(y, uy));
    check_bits(op, &[a, b], f(a, b), r)?;
    let folded = f(K::constant(x), K::constant(y));
    prop_assert_eq!(folded, K::constant(r), "{}({}, {}) on constants", op, x, y);
    Ok(())
}

fn bound_unary(op: Opcode, f: fn(B) -> B, raw: Option<fn(B) -> B>, x: i64, sx: &Shape) -> Outcome {
    let r = defined(op, &[x])?;
    let a = around(x, sx);
    if let Some(raw) = raw {
        check_raw(op, &[a], raw(a), r)?;
    }
    check_bound(op, &[a], f(a), r)?;
    prop_assert_eq!(
        f(B::constant(x)),
        B::constant(r),
        "{}({}) on a constant",
        op,
        x
    );
    Ok(())
}

fn bound_binary(
    op: Opcode,
    f: fn(B, B) -> B,
    raw: Option<fn(B, B) -> B>,
    (x, y): (i64, i64),
    (sx, sy): (&Shape, &Shape),
) -> Outcome {
    let r = defined(op, &[x, y])?;
    let (a, b) = (around(x, sx), around(y, sy));
    if let Some(raw) = raw {
        check_raw(op, &[a, b], raw(a, b), r)?;
    }
    check_bound(op, &[a, b], f(a, b), r)?;
    if folds_constants(op, x, y) {
        let folded = f(B::constant(x), B::constant(y));
        prop_assert_eq!(folded, B::constant(r), "{}({}, {}) on constants", op, x, y);
    }
    Ok(())
}

/// Where the IntBound transfer functions give the constant result for
/// constant arguments: everywhere, except `uint_mul_high` with a negative
/// argument (its interval rule gives up there and the bits have no rule:
/// a known imprecision, not a soundness problem).
fn folds_constants(op: Opcode, x: i64, y: i64) -> bool {
    match op {
        Opcode::UintMulHigh => x >= 0 && y >= 0,
        _ => true,
    }
}

/// `*_ovf(a, b)` holds the result when the op does not overflow, and
/// `cannot_overflow(a, b)` only when it never does.
fn bound_ovf(
    op: Opcode,
    f: fn(B, B) -> B,
    raw: fn(B, B) -> B,
    cannot_overflow: fn(B, B) -> bool,
    (x, y): (i64, i64),
    (sx, sy): (&Shape, &Shape),
) -> Outcome {
    let (r, overflowed) = int_ovf(op, x, y).expect("an overflow op");
    let (a, b) = (around(x, sx), around(y, sy));
    prop_assert!(
        implies(cannot_overflow(a, b), !overflowed),
        "{op}({a}, {b}) said to never overflow, but {x}, {y} do"
    );
    if !overflowed {
        check_raw(op, &[a, b], raw(a, b), r)?;
        check_bound(op, &[a, b], f(a, b), r)?;
        let folded = f(B::constant(x), B::constant(y));
        prop_assert_eq!(folded, B::constant(r), "{}({}, {}) on constants", op, x, y);
    }
    Ok(())
}

/// The members of a relation: `(x, y)` moved so that `x rel y` holds.
fn arrange(rel: Relation, x: i64, y: i64) -> (i64, i64) {
    let apart = if x == y { x.wrapping_add(1) } else { y };
    match rel {
        Relation::Lt | Relation::Le => (x.min(apart), x.max(apart)),
        Relation::Ult | Relation::Ule => {
            let (ux, uy) = (x as u64, apart as u64);
            (ux.min(uy) as i64, ux.max(uy) as i64)
        }
        Relation::Eq => (x, x),
        Relation::Ne => (x, apart),
    }
}

fn refine_relation(
    rel: Relation,
    op: Opcode,
    (x, y): (i64, i64),
    (sx, sy): (&Shape, &Shape),
) -> Outcome {
    let (x, y) = arrange(rel, x, y);
    prop_assert_eq!(concrete(op, &[x, y]), Some(1));
    let (a, b) = (around(x, sx), around(y, sy));
    let (for_a, for_b, impossible) = a.relation_constraints(rel, b);
    prop_assert!(
        !impossible && for_a.contains(x) && for_b.contains(y),
        "{rel:?} constraints of {a}, {b} are {for_a:?}, {for_b:?}, {impossible}: lost {x} or {y}"
    );
    let (a2, b2, empty) = a.refine(rel, b);
    prop_assert!(
        !empty && a2.contains(x) && b2.contains(y),
        "refine {a} {rel:?} {b} gives {a2}, {b2}, empty {empty}: lost {x} or {y}"
    );
    prop_assert!(a2.is_normalized() && b2.is_normalized(), "{a2:?} {b2:?}");
    prop_assert!(
        a2.is_subset_of(a) && b2.is_subset_of(b),
        "refinement grew: {a2:?} {b2:?}"
    );
    Ok(())
}

/// `x op y` in `r`: the constraint and the refinement keep the narrowed
/// member (`x`, or `y` for the right argument of `-`). The constraint
/// takes the arguments in order; `refine_by_result` is called on the
/// bound it narrows, with the other argument as `other`.
fn refine_result(operand: Operand, op: Opcode, (x, y): (i64, i64), shapes: [&Shape; 3]) -> Outcome {
    let r = match int_ovf(op, x, y) {
        Some((_, true)) => return Err(TestCaseError::reject("overflow")),
        Some((r, false)) => r,
        None if matches!(operand, Operand::Neg | Operand::Invert) => defined(op, &[x])?,
        None => defined(op, &[x, y])?,
    };
    let (a, b, result) = (
        around(x, shapes[0]),
        around(y, shapes[1]),
        around(r, shapes[2]),
    );
    let right = matches!(operand, Operand::SubRight | Operand::SubOvfRight);
    let member = if right { y } else { x };
    let (narrowed_arg, other_arg) = if right { (b, a) } else { (a, b) };
    let constraint = narrowed_arg.result_constraint(operand, other_arg, result);
    prop_assert!(
        constraint.contains(member) && constraint.bits.is_well_formed(),
        "{op}({a}, {b}) in {result}: {operand:?} constraint {constraint:?} misses {member}"
    );
    let (narrowed, empty) = narrowed_arg.refine_by_result(operand, other_arg, result);
    prop_assert!(
        !empty && narrowed.contains(member) && narrowed.is_normalized(),
        "{op}({a}, {b}) in {result}: refine_by_result({operand:?}) gives {narrowed:?}, empty {empty}, missing {member}"
    );
    Ok(())
}

/// A bounds search of `a` (member `x`) from `bound`: what it finds is a
/// member on the right side of `bound`, and it finds one no worse than `x`
/// if `x` is on that side.
fn check_search(
    a: K,
    x: i64,
    bound: i64,
    (found_value, found): (i64, bool),
    key: fn(i64) -> u64,
    at_least: bool,
) -> Outcome {
    let ok = |v: i64| {
        if at_least {
            key(v) >= key(bound)
        } else {
            key(v) <= key(bound)
        }
    };
    prop_assert!(
        implies(found, a.contains(found_value) && ok(found_value)),
        "{a} from {bound}: found {found_value}, not a member on the right side"
    );
    let no_worse = if at_least {
        key(found_value) <= key(x)
    } else {
        key(found_value) >= key(x)
    };
    prop_assert!(
        implies(ok(x), found && no_worse),
        "{a} from {bound}: member {x} qualifies, got {found_value}, found {found}"
    );
    Ok(())
}

// Forward transfer functions.

macro_rules! bits_unary {
    ($($name:ident: $op:ident, $f:path;)*) => {
        proptest! {
            #![proptest_config(config())]
            $(
                #[test]
                fn $name(x in value(), ux in mask()) {
                    bits_unary(Opcode::$op, $f, (x, ux))?;
                }
            )*
        }
    };
}

macro_rules! bits_binary {
    ($($name:ident: $op:ident, $f:path, $pairs:expr;)*) => {
        proptest! {
            #![proptest_config(config())]
            $(
                #[test]
                fn $name(xy in $pairs, ux in mask(), uy in mask()) {
                    bits_binary(Opcode::$op, $f, xy, (ux, uy))?;
                }
            )*
        }
    };
}

macro_rules! bound_unary {
    ($($name:ident: $op:ident, $f:path, $raw:expr;)*) => {
        proptest! {
            #![proptest_config(config())]
            $(
                #[test]
                fn $name(x in value(), sx in shape()) {
                    bound_unary(Opcode::$op, $f, $raw, x, &sx)?;
                }
            )*
        }
    };
}

macro_rules! bound_binary {
    ($($name:ident: $op:ident, $f:path, $raw:expr, $pairs:expr;)*) => {
        proptest! {
            #![proptest_config(config())]
            $(
                #[test]
                fn $name(xy in $pairs, sx in shape(), sy in shape()) {
                    bound_binary(Opcode::$op, $f, $raw, xy, (&sx, &sy))?;
                }
            )*
        }
    };
}

macro_rules! bound_ovf {
    ($($name:ident: $op:ident, $f:path, $raw:path, $cannot:path;)*) => {
        proptest! {
            #![proptest_config(config())]
            $(
                #[test]
                fn $name(xy in pair(), sx in shape(), sy in shape()) {
                    bound_ovf(Opcode::$op, $f, $raw, $cannot, xy, (&sx, &sy))?;
                }
            )*
        }
    };
}

bits_unary! {
    bits_invert: IntInvert, KnownBits::invert;
    bits_neg: IntNeg, KnownBits::neg;
    bits_is_true: IntIsTrue, KnownBits::is_true;
    bits_is_zero: IntIsZero, KnownBits::is_zero;
}

bits_binary! {
    bits_and: IntAnd, KnownBits::and, pair();
    bits_or: IntOr, KnownBits::or, pair();
    bits_xor: IntXor, KnownBits::xor, pair();
    bits_add: IntAdd, KnownBits::add, pair();
    bits_sub: IntSub, KnownBits::sub, pair();
    bits_mul: IntMul, KnownBits::mul, pair();
    bits_shl: IntLshift, KnownBits::shl, shift();
    bits_lshr: UintRshift, KnownBits::lshr, shift();
    bits_ashr: IntRshift, KnownBits::ashr, shift();
    bits_eq: IntEq, KnownBits::eq, pair();
    bits_ne: IntNe, KnownBits::ne, pair();
    bits_lt: IntLt, KnownBits::lt, pair();
    bits_le: IntLe, KnownBits::le, pair();
    bits_gt: IntGt, KnownBits::gt, pair();
    bits_ge: IntGe, KnownBits::ge, pair();
    bits_ult: UintLt, KnownBits::ult, pair();
    bits_ule: UintLe, KnownBits::ule, pair();
    bits_ugt: UintGt, KnownBits::ugt, pair();
    bits_uge: UintGe, KnownBits::uge, pair();
}

bound_unary! {
    bound_invert: IntInvert, IntBound::invert, Some(IntBound::invert_raw);
    bound_neg: IntNeg, IntBound::neg, Some(IntBound::neg_raw);
    bound_force_ge_zero: IntForceGeZero, IntBound::force_ge_zero, Some(IntBound::force_ge_zero_raw);
    bound_is_true: IntIsTrue, IntBound::is_true, None;
    bound_is_zero: IntIsZero, IntBound::is_zero, None;
}

bound_binary! {
    bound_add: IntAdd, IntBound::add, Some(IntBound::add_raw), pair();
    bound_sub: IntSub, IntBound::sub, Some(IntBound::sub_raw), pair();
    bound_mul: IntMul, IntBound::mul, Some(IntBound::mul_raw), pair();
    bound_and: IntAnd, IntBound::and, Some(IntBound::and_raw), pair();
    bound_or: IntOr, IntBound::or, Some(IntBound::or_raw), pair();
    bound_xor: IntXor, IntBound::xor, Some(IntBound::xor_raw), pair();
    bound_lshift: IntLshift, IntBound::lshift, Some(IntBound::lshift_raw), shift();
    bound_rshift: IntRshift, IntBound::rshift, Some(IntBound::rshift_raw), shift();
    bound_urshift: UintRshift, IntBound::urshift, Some(IntBound::urshift_raw), shift();
    bound_signext: IntSignext, IntBound::signext, Some(IntBound::signext_raw), signext();
    bound_pydiv: IntPydiv, IntBound::pydiv, Some(IntBound::pydiv_raw), pair();
    bound_pymod: IntPymod, IntBound::pymod, Some(IntBound::pymod_raw), pair();
    bound_uint_mul_high: UintMulHigh, IntBound::uint_mul_high, Some(IntBound::uint_mul_high_raw), pair();
    bound_eq: IntEq, IntBound::eq, None, pair();
    bound_ne: IntNe, IntBound::ne, None, pair();
    bound_lt: IntLt, IntBound::lt, None, pair();
    bound_le: IntLe, IntBound::le, None, pair();
    bound_gt: IntGt, IntBound::gt, None, pair();
    bound_ge: IntGe, IntBound::ge, None, pair();
    bound_ult: UintLt, IntBound::ult, None, pair();
    bound_ule: UintLe, IntBound::ule, None, pair();
    bound_ugt: UintGt, IntBound::ugt, None, pair();
    bound_uge: UintGe, IntBound::uge, None, pair();
}

bound_ovf! {
    bound_add_ovf: IntAddOvf, IntBound::add_ovf, IntBound::add_ovf_raw, IntBound::add_cannot_overflow;
    bound_sub_ovf: IntSubOvf, IntBound::sub_ovf, IntBound::sub_ovf_raw, IntBound::sub_cannot_overflow;
    bound_mul_ovf: IntMulOvf, IntBound::mul_ovf, IntBound::mul_ovf_raw, IntBound::mul_cannot_overflow;
}

// Refinements.

macro_rules! refine_relation {
    ($($name:ident: $rel:ident, $op:ident;)*) => {
        proptest! {
            #![proptest_config(config())]
            $(
                #[test]
                fn $name(xy in pair(), sx in shape(), sy in shape()) {
                    refine_relation(Relation::$rel, Opcode::$op, xy, (&sx, &sy))?;
                }
            )*
        }
    };
}

macro_rules! refine_result {
    ($($name:ident: $operand:ident, $op:ident;)*) => {
        proptest! {
            #![proptest_config(config())]
            $(
                #[test]
                fn $name(xy in pair(), sx in shape(), sy in shape(), sr in shape()) {
                    refine_result(Operand::$operand, Opcode::$op, xy, [&sx, &sy, &sr])?;
                }
            )*
        }
    };
}

refine_relation! {
    refine_lt: Lt, IntLt;
    refine_le: Le, IntLe;
    refine_ult: Ult, UintLt;
    refine_ule: Ule, UintLe;
    refine_eq: Eq, IntEq;
    refine_ne: Ne, IntNe;
}

refine_result! {
    refine_and_result: And, IntAnd;
    refine_or_result: Or, IntOr;
    refine_xor_result: Xor, IntXor;
    refine_add_result: Add, IntAdd;
    refine_add_ovf_result: AddOvf, IntAddOvf;
    refine_sub_left_result: SubLeft, IntSub;
    refine_sub_right_result: SubRight, IntSub;
    refine_sub_ovf_left_result: SubOvfLeft, IntSubOvf;
    refine_sub_ovf_right_result: SubOvfRight, IntSubOvf;
    refine_neg_result: Neg, IntNeg;
    refine_invert_result: Invert, IntInvert;
}

// Bounds searches of known bits.

macro_rules! bits_search {
    ($($name:ident: $f:ident, $key:ident, $at_least:expr;)*) => {
        proptest! {
            #![proptest_config(config())]
            $(
                #[test]
                fn $name((x, bound) in pair(), ux in mask()) {
                    let a = bits(x, ux);
                    check_search(a, x, bound, a.$f(bound), $key, $at_least)?;
                }
            )*
        }
    };
}

bits_search! {
    bits_min_unsigned_at_least: min_unsigned_at_least, unsigned_key, true;
    bits_max_unsigned_at_most: max_unsigned_at_most, unsigned_key, false;
    bits_min_signed_at_least: min_signed_at_least, signed_key, true;
    bits_max_signed_at_most: max_signed_at_most, signed_key, false;
}

// Queries: what they claim about the members holds; on constants they
// are exact where stated.

macro_rules! query {
    ($($name:ident: |$a:ident, $b:ident, $x:ident, $y:ident| $claim:expr;)*) => {
        proptest! {
            #![proptest_config(config())]
            $(
                #[test]
                fn $name(($x, $y) in pair(), sx in shape(), sy in shape()) {
                    let ($a, $b) = (around($x, &sx), around($y, &sy));
                    prop_assert!($claim, "a = {}, b = {}, x = {}, y = {}", $a, $b, $x, $y);
                }
            )*
        }
    };
}

macro_rules! bits_query {
    ($($name:ident: |$a:ident, $b:ident, $x:ident, $y:ident| $claim:expr;)*) => {
        proptest! {
            #![proptest_config(config())]
            $(
                #[test]
                fn $name(($x, $y) in pair(), ux in mask(), uy in mask()) {
                    let ($a, $b) = (bits($x, ux), bits($y, uy));
                    prop_assert!($claim, "a = {}, b = {}, x = {}, y = {}", $a, $b, $x, $y);
                }
            )*
        }
    };
}

fn c(v: i64) -> B {
    B::constant(v)
}

query! {
    bound_known_lt: |a, b, x, y| implies(a.known_lt(b), x < y) && c(x).known_lt(c(y)) == (x < y);
    bound_known_le: |a, b, x, y| implies(a.known_le(b), x <= y) && c(x).known_le(c(y)) == (x <= y);
    bound_known_ne: |a, b, x, y| implies(a.known_ne(b), x != y) && c(x).known_ne(c(y)) == (x != y);
    bound_known_nonnegative: |a, _b, x, _y| implies(a.known_nonnegative(), x >= 0)
        && c(x).known_nonnegative() == (x >= 0);
    bound_known_lt_const: |a, _b, x, y| implies(a.known_lt_const(y), x < y) && c(x).known_lt_const(y) == (x < y);
    bound_known_ge_const: |a, _b, x, y| implies(a.known_ge_const(y), x >= y)
        && c(x).known_ge_const(y) == (x >= y);
    bound_known_eq_const: |a, _b, x, y| implies(a.known_eq_const(y), x == y)
        && c(x).known_eq_const(y) == (x == y);
    bound_is_bool: |a, _b, x, _y| implies(a.is_bool(), x == 0 || x == 1) && c(x).is_bool() == (x == 0 || x == 1);
    bound_is_constant: |a, _b, x, _y| implies(a.is_constant(), a.as_constant() == Some(x)) && c(x).is_constant();
    bound_unsigned_range: |a, _b, x, _y| {
        let (lo, hi) = a.unsigned_range();
        ule(lo, x) && ule(x, hi)
    };
    bound_is_subset_of: |a, b, x, _y| implies(a.is_subset_of(b), b.contains(x)) && a.is_subset_of(a);
}

bits_query! {
    bits_is_and_identity: |a, b, x, y| implies(a.is_and_identity(b), x & y == x);
    bits_disagrees: |a, b, x, y| implies(a.disagrees(b), x != y);
    bits_is_subset_of: |a, b, x, _y| implies(a.is_subset_of(b), b.contains(x)) && a.is_subset_of(a);
    bits_extremes: |a, _b, x, _y| {
        ule(a.min_unsigned(), x) && ule(x, a.max_unsigned())
            && a.min_signed() <= x && x <= a.max_signed()
            && [a.min_unsigned(), a.max_unsigned(), a.min_signed(), a.max_signed()]
                .iter()
                .all(|&m| a.contains(m))
    };
}

// Lattice operations.

proptest! {
    #![proptest_config(config())]

    #[test]
    fn bits_meet((x, y) in pair(), ux in mask(), uy in mask(), uz in mask()) {
        // Two views of x: their meet keeps x.
        let (a, b) = (bits(x, ux), bits(x, uy));
        let (m, empty) = a.meet(b);
        prop_assert!(!empty && m.contains(x) && m.is_well_formed(), "{} meet {} = {:?}, {}", a, b, m, empty);
        prop_assert!(m.is_subset_of(a) && m.is_subset_of(b));
        // Unrelated values: empty only if no common member.
        let c = bits(y, uz);
        let (m, empty) = a.meet(c);
        prop_assert!(implies(c.contains(x), !empty && m.contains(x)), "{} meet {} = {:?}, {}", a, c, m, empty);
    }

    #[test]
    fn bits_join((x, y) in pair(), ux in mask(), uy in mask()) {
        let (a, b) = (bits(x, ux), bits(y, uy));
        let j = a.join(b);
        prop_assert!(j.is_well_formed() && j.contains(x) && j.contains(y), "{} join {} = {:?}", a, b, j);
        prop_assert!(a.is_subset_of(j) && b.is_subset_of(j));
    }

    #[test]
    fn bits_string_round_trip(x in value(), ux in mask()) {
        let a = bits(x, ux);
        let text = a.to_string();
        prop_assert_eq!(text.parse::<K>(), Ok(a), "{}", text);
    }

    #[test]
    fn bound_from_parts(x in value(), sx in shape()) {
        // `around` asserts that x is kept and the bound is normalized.
        let a = around(x, &sx);
        prop_assert!(a.bits.is_subset_of(bits(x, sx.unknowns)));
    }

    #[test]
    fn bound_normalize((x, y) in pair(), z in value(), ux in mask()) {
        // Any raw bound holding x (the ends need not be members).
        let raw = IntBound { lower: x.min(y), upper: x.max(z), bits: bits(x, ux) };
        let (n, empty) = raw.normalize();
        prop_assert!(!empty && n.contains(x) && n.is_normalized(), "{:?} normalizes to {:?}, {}", raw, n, empty);
        prop_assert!(n.is_subset_of(raw));
    }

    #[test]
    fn bound_constructors(x in value(), ux in mask(), (lo, hi) in pair()) {
        let from_bits = B::from_bits(bits(x, ux));
        prop_assert!(from_bits.contains(x) && from_bits.is_normalized(), "{:?}", from_bits);
        let (lo, hi) = (lo.min(x), hi.max(x));
        let range = B::range(lo, hi);
        prop_assert!(range.contains(x) && range.is_normalized() && range.lower == lo && range.upper == hi);
        prop_assert!(c(x).contains(x) && c(x).is_normalized() && c(x).as_constant() == Some(x));
        prop_assert!(B::unbounded().contains(x) && B::unbounded().is_normalized());
        prop_assert!(B::boolean().is_normalized() && B::boolean().contains(0) && B::boolean().contains(1));
    }

    #[test]
    fn bound_intersect((x, y) in pair(), sx in shape(), sy in shape(), sz in shape()) {
        // Two bounds around x: the intersection keeps x.
        let (a, b) = (around(x, &sx), around(x, &sy));
        let (i, empty) = a.intersect(b);
        prop_assert!(!empty && i.contains(x) && i.is_normalized(), "{} & {} = {:?}, {}", a, b, i, empty);
        prop_assert!(i.is_subset_of(a) && i.is_subset_of(b), "{} & {} = {:?}", a, b, i);
        prop_assert_eq!(a.meet(b), Ok(i));
        // Around different members: a common member is kept.
        let other = around(y, &sz);
        let (i, empty) = a.intersect(other);
        prop_assert!(implies(other.contains(x), !empty && i.contains(x)), "{} & {} = {:?}, {}", a, other, i, empty);
        prop_assert!(implies(!empty, i.is_normalized()));
    }

    #[test]
    fn bound_intersect_range(x in value(), sx in shape(), (lo, hi) in pair()) {
        let a = around(x, &sx);
        let (lo, hi) = (lo.min(x), hi.max(x));
        let (i, empty) = a.intersect_range(lo, hi);
        prop_assert!(!empty && i.contains(x) && i.is_normalized(), "{} & [{}, {}] = {:?}, {}", a, lo, hi, i, empty);
        prop_assert!(lo <= i.lower && i.upper <= hi && i.is_subset_of(a));
    }

    #[test]
    fn bound_join((x, y) in pair(), sx in shape(), sy in shape()) {
        let (a, b) = (around(x, &sx), around(y, &sy));
        let j = a.join(b);
        prop_assert!(j.contains(x) && j.contains(y) && j.is_normalized(), "{} join {} = {:?}", a, b, j);
        prop_assert!(a.is_subset_of(j) && b.is_subset_of(j), "{} join {} = {:?}", a, b, j);
    }

    #[test]
    fn bound_widen((x, y) in pair(), sx in shape(), sy in shape()) {
        let (a, b) = (around(x, &sx), around(y, &sy));
        let w = a.widen(b);
        prop_assert!(w.contains(x) && w.contains(y) && w.is_normalized(), "{} widen {} = {:?}", a, b, w);
        prop_assert!(a.join(b).is_subset_of(w), "{} widen {} = {:?}", a, b, w);
        // Moved ends go to the end of the range (before normalization).
        let raw = a.widen_raw(b);
        prop_assert!(implies(b.lower < a.lower, raw.lower == i64::MIN) && implies(b.upper > a.upper, raw.upper == i64::MAX));
    }

    // Refinements by a guard on the value itself.

    #[test]
    fn refine_true(x in value(), sx in shape()) {
        let x = if x == 0 { 1 } else { x };
        let a = around(x, &sx);
        let (r, empty) = a.refine_true();
        prop_assert!(!empty && r.contains(x) && r.is_normalized() && r.is_subset_of(a), "{} true: {:?}, {}", a, r, empty);
    }

    #[test]
    fn refine_false(sx in shape()) {
        let a = around(0, &sx);
        let (r, empty) = a.refine_false();
        prop_assert!(!empty && r == c(0), "{} false: {:?}, {}", a, r, empty);
    }
}
