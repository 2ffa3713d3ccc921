//! Soundness proofs of every transfer function and refinement, run by the
//! solver on the very code the optimizer runs (instantiated with symbolic
//! words). The proofs come in groups, each counting what it proves so
//! that a function cannot silently drop out of its proof; one test runs
//! them all, shared out to the cores (see `common/prover.rs`).

mod common;

use std::fmt::Write as _;

use common::*;
use traceopt_domains::symbolic::{self, Sym};
use traceopt_domains::{Bit, IntBound, KnownBits, MulStep, Word};
use traceopt_ir::Opcode;
use traceopt_smt::{Fun, SolverKind, Term};

type KB<W> = KnownBits<W>;

type IB<W> = IntBound<W>;

/// States a forward proof once for both word types.
macro_rules! fwd {
    ($s:expr, $D:ty, $op:ident, |$a:ident $(, $b:ident)?| $body:expr) => {
        fwd!($s, $D, $op, |$a $(, $b)?| $body; parts 0..<$D as Domain>::PARTS.len())
    };
    ($s:expr, $D:ty, $op:ident, |$a:ident $(, $b:ident)?| $body:expr; parts $parts:expr) => {
        forward_parts::<$D>(
            $s,
            Opcode::$op,
            |args: &[<$D as Domain>::Of<Sym>]| {
                let $a = args[0];
                $(let $b = args[1];)?
                $body
            },
            |args: &[<$D as Domain>::Of<i64>]| {
                let $a = args[0];
                $(let $b = args[1];)?
                $body
            },
            $parts,
        )
    };
}

fn known_bits_transfer_functions(s: &mut Suite) {
    fwd!(s, Bits, IntInvert, |a| a.invert());
    fwd!(s, Bits, IntAnd, |a, b| a.and(b));
    fwd!(s, Bits, IntOr, |a, b| a.or(b));
    fwd!(s, Bits, IntXor, |a, b| a.xor(b));
    fwd!(s, Bits, IntAdd, |a, b| a.add(b));
    fwd!(s, Bits, IntSub, |a, b| a.sub(b));
    fwd!(s, Bits, IntNeg, |a| a.neg());
    fwd!(s, Bits, IntLshift, |a, b| a.shl(b));
    fwd!(s, Bits, IntRshift, |a, b| a.ashr(b));
    fwd!(s, Bits, UintRshift, |a, b| a.lshr(b));
    fwd!(s, Bits, IntEq, |a, b| a.eq(b));
    fwd!(s, Bits, IntNe, |a, b| a.ne(b));
    fwd!(s, Bits, IntLt, |a, b| a.lt(b));
    fwd!(s, Bits, IntLe, |a, b| a.le(b));
    fwd!(s, Bits, IntGt, |a, b| a.gt(b));
    fwd!(s, Bits, IntGe, |a, b| a.ge(b));
    fwd!(s, Bits, UintLt, |a, b| a.ult(b));
    fwd!(s, Bits, UintLe, |a, b| a.ule(b));
    fwd!(s, Bits, UintGt, |a, b| a.ugt(b));
    fwd!(s, Bits, UintGe, |a, b| a.uge(b));
    fwd!(s, Bits, IntIsTrue, |a| a.is_true());
    fwd!(s, Bits, IntIsZero, |a| a.is_zero());
}

fn int_bound_transfer_functions(s: &mut Suite) {
    fwd!(s, Bound, IntAdd, |a, b| a.add_raw(b));
    fwd!(s, Bound, IntSub, |a, b| a.sub_raw(b));
    fwd!(s, Bound, IntAnd, |a, b| a.and_raw(b));
    fwd!(s, Bound, IntOr, |a, b| a.or_raw(b));
    fwd!(s, Bound, IntXor, |a, b| a.xor_raw(b));
    fwd!(s, Bound, IntInvert, |a| a.invert_raw());
    fwd!(s, Bound, IntNeg, |a| a.neg_raw());
    fwd!(s, Bound, IntLshift, |a, b| a.lshift_raw(b));
    fwd!(s, Bound, IntRshift, |a, b| a.rshift_raw(b));
    fwd!(s, Bound, UintRshift, |a, b| a.urshift_raw(b));
    fwd!(s, Bound, IntSignext, |a, b| a.signext_raw(b));
    fwd!(s, Bound, IntForceGeZero, |a| a.force_ge_zero_raw());
    fwd!(s, Bound, IntEq, |a, b| a.eq(b));
    fwd!(s, Bound, IntNe, |a, b| a.ne(b));
    fwd!(s, Bound, IntLt, |a, b| a.lt(b));
    fwd!(s, Bound, IntLe, |a, b| a.le(b));
    fwd!(s, Bound, IntGt, |a, b| a.gt(b));
    fwd!(s, Bound, IntGe, |a, b| a.ge(b));
    fwd!(s, Bound, UintLt, |a, b| a.ult(b));
    fwd!(s, Bound, UintLe, |a, b| a.ule(b));
    fwd!(s, Bound, UintGt, |a, b| a.ugt(b));
    fwd!(s, Bound, UintGe, |a, b| a.uge(b));
    fwd!(s, Bound, IntIsTrue, |a| a.is_true());
    fwd!(s, Bound, IntIsZero, |a| a.is_zero());
    fwd!(s, Bound, IntAddOvf, |a, b| a.add_ovf_raw(b));
    fwd!(s, Bound, IntSubOvf, |a, b| a.sub_ovf_raw(b));
    fwd!(s, Bound, SameAsI, |a| a);
}

/// Division: bit-blasted 64-bit dividers are beyond the solvers in these
/// queries, so the bound functions are proved end to end on narrower words
/// (same generic code; at 10 bits `pydiv`'s interval takes Bitwuzla 21 s
/// and z3 more than 30), and at 64 bits by lemmas (`division_by_lemmas`).
/// Both take the word trait's floor division and modulo (`bvsmod`, a
/// primitive) as the meaning; here, at 64 bits, they are shown to agree
/// with the validator's `int_pydiv` and `int_pymod`.
fn division_meaning(s: &mut Suite) {
    for op in [Opcode::IntPydiv, Opcode::IntPymod] {
        s.add(&format!("{op} is the word trait's"), move |p| {
            let (x, y) = (p.word("x"), p.word("y"));
            let (value, defined, _) = meaning(op, &[x, y]);
            p.assume(defined);
            let ours = if op == Opcode::IntPydiv {
                x.floordiv(y)
            } else {
                x.floormod(y)
            };
            p.prove(ours.eq(value), |m| {
                format!("{op}({}, {})", val(m, "x"), val(m, "y"))
            });
        });
    }
}

fn int_bound_division(s: &mut Suite) {
    fwd!(s, Bound, IntPydiv, |a, b| a.pydiv_raw(b));
    fwd!(s, Bound, IntPymod, |a, b| a.pymod_raw(b));
}

/// States a proof about bounds `a`, `b`, a bound `r` and members `x`, `y`,
/// `z` (of `a`, `b`, `r`): `$goal` under `$pre`, with the body written
/// once for both word types. `$show` is computed on the counterexample.
macro_rules! bound_fact {
    ($s:expr, $what:expr, |$a:ident, $b:ident, $r:ident, $x:ident, $y:ident, $z:ident|
        pre $pre:expr; goal $goal:expr; show $show:expr) => {{
        fn pre<W: Word>($a: IB<W>, $b: IB<W>, $r: IB<W>, $x: W, $y: W, $z: W) -> W::Bit {
            let _ = (&$a, &$b, &$r, &$x, &$y, &$z);
            $pre
        }
        fn goal<W: Word>($a: IB<W>, $b: IB<W>, $r: IB<W>, $x: W, $y: W, $z: W) -> W::Bit {
            let _ = (&$a, &$b, &$r, &$x, &$y, &$z);
            $goal
        }
        fn show($a: IB<i64>, $b: IB<i64>, $r: IB<i64>, $x: i64, $y: i64, $z: i64) -> String {
            let _ = (&$a, &$b, &$r, &$x, &$y, &$z);
            format!("{:?}", $show)
        }
        let s: &mut Suite = $s;
        s.add($what, |p| {
            let (a, b, r) = (p.bound("a"), p.bound("b"), p.bound("r"));
            let (x, y, z) = (p.word("x"), p.word("y"), p.word("z"));
            p.assume(a.contains(x) & b.contains(y) & r.contains(z));
            p.assume(pre(a, b, r, x, y, z));
            p.prove(goal(a, b, r, x, y, z), |m| {
                let (a, b, r) = (
                    concrete_bound(m, "a"),
                    concrete_bound(m, "b"),
                    concrete_bound(m, "r"),
                );
                let (x, y, z) = (val(m, "x"), val(m, "y"), val(m, "z"));
                format!("a = {a}, b = {b}, r = {r}: {}", show(a, b, r, x, y, z))
            });
        });
    }};
}

fn int_bound_lattice_and_queries(s: &mut Suite) {
    // Normalization is `with_prefix` applied to the results of the two
    // searches (`min_signed_at_least`, `max_signed_at_most`), which are
    // proved in `known_bits_lattice_and_queries` to find the nearest
    // members. Given members `lower <= x <= upper`, `with_prefix` keeps x
    // and gives a normalized bound:
    s.add("with_prefix", |p| {
        let bits = p.known_bits("bits");
        let (lower, upper, x) = (p.word("lower"), p.word("upper"), p.word("x"));
        p.assume(bits.contains(lower) & bits.contains(upper) & bits.contains(x));
        p.assume(lower.sle(x) & x.sle(upper));
        let (n, empty) = IntBound::with_prefix(lower, upper, bits, Bit::lit(false));
        p.prove(!empty & n.contains(x) & n.is_normalized(), |m| {
            let (lower, upper) = (val(m, "lower"), val(m, "upper"));
            let bits = concrete_bits(m, "bits");
            format!("{:?}", IntBound::with_prefix(lower, upper, bits, false))
        });
    });
    // ... and when the searches meet, the result is a constant.
    bound_fact!(s, "normalize keeps constants", |a, b, r, x, y, z|
        pre a.is_constant() | a.bits.is_constant();
        goal a.normalize().0.is_constant();
        show a.normalize());
    bound_fact!(s, "intersect_raw", |a, b, r, x, y, z|
        pre b.contains(x);
        goal { let (i, e) = a.intersect_raw(b); !e & i.contains(x) & i.bits.is_well_formed() };
        show a.intersect_raw(b));
    bound_fact!(s, "join_raw", |a, b, r, x, y, z|
        pre W::Bit::lit(true);
        goal { let j = a.join_raw(b); j.contains(x) & j.contains(y) & j.bits.is_well_formed() };
        show a.join_raw(b));
    bound_fact!(s, "widen_raw", |a, b, r, x, y, z|
        pre W::Bit::lit(true);
        goal { let j = a.widen_raw(b); j.contains(x) & j.contains(y) & j.bits.is_well_formed() };
        show a.widen_raw(b));
    bound_fact!(s, "range", |a, b, r, x, y, z|
        pre x.sle(y) & y.sle(z);
        goal { let j = IntBound::range(x, z); j.contains(y) & j.is_normalized() };
        show IntBound::range(x, z));
    bound_fact!(s, "from_bits", |a, b, r, x, y, z|
        pre W::Bit::lit(true);
        goal { let j = IntBound::from_bits(a.bits); j.contains(x) & j.is_normalized() };
        show IntBound::from_bits(a.bits));
    bound_fact!(s, "constant", |a, b, r, x, y, z|
        pre W::Bit::lit(true);
        goal { let j = IntBound::constant(x); j.contains(x) & j.is_normalized() & j.is_constant() };
        show IntBound::constant(x));
    bound_fact!(s, "unbounded", |a, b, r, x, y, z|
        pre W::Bit::lit(true);
        goal { let j = IntBound::<W>::unbounded(); j.contains(x) & j.is_normalized() };
        show IntBound::<i64>::unbounded());
    bound_fact!(s, "is_subset_of", |a, b, r, x, y, z|
        pre a.is_subset_of(b);
        goal b.contains(x);
        show a.is_subset_of(b));
    bound_fact!(s, "known_lt", |a, b, r, x, y, z|
        pre a.known_lt(b); goal x.slt(y); show a.known_lt(b));
    bound_fact!(s, "known_le", |a, b, r, x, y, z|
        pre a.known_le(b); goal x.sle(y); show a.known_le(b));
    bound_fact!(s, "known_ne", |a, b, r, x, y, z|
        pre a.known_ne(b); goal x.ne(y); show a.known_ne(b));
    bound_fact!(s, "known_nonnegative", |a, b, r, x, y, z|
        pre a.known_nonnegative(); goal W::lit(0).sle(x); show a.known_nonnegative());
    bound_fact!(s, "known_lt_const", |a, b, r, x, y, z|
        pre a.known_lt_const(y); goal x.slt(y); show a.known_lt_const(y));
    bound_fact!(s, "known_ge_const", |a, b, r, x, y, z|
        pre a.known_ge_const(y); goal y.sle(x); show a.known_ge_const(y));
    bound_fact!(s, "known_eq_const", |a, b, r, x, y, z|
        pre a.known_eq_const(y); goal x.eq(y); show a.known_eq_const(y));
    bound_fact!(s, "is_bool", |a, b, r, x, y, z|
        pre a.is_bool(); goal x.eq(W::lit(0)) | x.eq(W::lit(1)); show a.is_bool());
    bound_fact!(s, "unsigned_range", |a, b, r, x, y, z|
        pre W::Bit::lit(true);
        goal { let (lo, hi) = a.unsigned_range(); lo.ule(x) & x.ule(hi) };
        show a.unsigned_range());
    bound_fact!(s, "add_cannot_overflow", |a, b, r, x, y, z|
        pre a.add_cannot_overflow(b); goal !x.add_overflows(y); show a.add_cannot_overflow(b));
    bound_fact!(s, "sub_cannot_overflow", |a, b, r, x, y, z|
        pre a.sub_cannot_overflow(b); goal !x.sub_overflows(y); show a.sub_cannot_overflow(b));
}

fn int_bound_refinements(s: &mut Suite) {
    use traceopt_domains::{Operand, Relation};
    let relations = [
        (Relation::Lt, Opcode::IntLt),
        (Relation::Le, Opcode::IntLe),
        (Relation::Ult, Opcode::UintLt),
        (Relation::Ule, Opcode::UintLe),
        (Relation::Eq, Opcode::IntEq),
        (Relation::Ne, Opcode::IntNe),
    ];
    for (rel, op) in relations {
        s.add(&format!("{rel:?} constraints"), move |p| {
            let (a, b) = (p.bound("a"), p.bound("b"));
            let (x, y) = (p.word("x"), p.word("y"));
            let (holds, defined, _) = meaning(op, &[x, y]);
            p.assume(a.contains(x) & b.contains(y) & defined & holds.eq(lit(1)));
            let (for_a, for_b, impossible) = a.relation_constraints(rel, b);
            let goal = !impossible
                & for_a.contains(x)
                & for_b.contains(y)
                & for_a.bits.is_well_formed()
                & for_b.bits.is_well_formed();
            p.prove(goal, |m| {
                let (a, b) = (concrete_bound(m, "a"), concrete_bound(m, "b"));
                format!(
                    "{op}(a = {a}, b = {b}) gives {:?}",
                    a.relation_constraints(rel, b)
                )
            });
        });
    }
    let operands = [
        (Operand::And, Opcode::IntAnd),
        (Operand::Or, Opcode::IntOr),
        (Operand::Xor, Opcode::IntXor),
        (Operand::Add, Opcode::IntAdd),
        (Operand::AddOvf, Opcode::IntAddOvf),
        (Operand::SubLeft, Opcode::IntSub),
        (Operand::SubRight, Opcode::IntSub),
        (Operand::SubOvfLeft, Opcode::IntSubOvf),
        (Operand::SubOvfRight, Opcode::IntSubOvf),
        (Operand::Neg, Opcode::IntNeg),
        (Operand::Invert, Opcode::IntInvert),
    ];
    // The interval and the bits of each constraint, as two proofs.
    for (operand, op) in operands {
        for part in ["interval", "bits"] {
            s.add(&format!("{operand:?} constraint ({part})"), move |p| {
                result_constraint(p, operand, op, part == "interval")
            });
        }
    }
}

fn result_constraint(
    p: &mut Prover,
    operand: traceopt_domains::Operand,
    op: Opcode,
    interval: bool,
) {
    use traceopt_domains::Operand;
    let (a, b, r) = (p.bound("a"), p.bound("b"), p.bound("r"));
    let (x, y) = (p.word("x"), p.word("y"));
    let args = if op.info().signature.len() == 1 {
        vec![x]
    } else {
        vec![x, y]
    };
    let (value, defined, no_overflow) = meaning(op, &args);
    p.assume(a.contains(x) & b.contains(y) & defined & no_overflow & r.contains(value));
    if !interval {
        // Instances of the known-bits add and sub soundness (proved in
        // `known_bits_transfer_functions`) for the members at hand, so the
        // solver need not re-derive them through the adders.
        let z = value;
        p.assume(r.bits.sub(b.bits).contains(z.sub(y)) & a.bits.sub(r.bits).contains(x.sub(z)));
        p.assume(r.bits.add(b.bits).contains(z.add(y)));
    }
    let right = matches!(operand, Operand::SubRight | Operand::SubOvfRight);
    let (narrowed, other) = if right { (b, a) } else { (a, b) };
    let constraint = narrowed.result_constraint(operand, other, r);
    let member = if right { y } else { x };
    let goal = if interval {
        constraint.lower.sle(member) & member.sle(constraint.upper)
    } else {
        constraint.bits.contains(member) & constraint.bits.is_well_formed()
    };
    p.prove(goal, |m| {
        let (a, b, r) = (
            concrete_bound(m, "a"),
            concrete_bound(m, "b"),
            concrete_bound(m, "r"),
        );
        let (narrowed, other) = if right { (b, a) } else { (a, b) };
        format!(
            "{op}: a = {a}, b = {b}, result {r} gives {:?}",
            narrowed.result_constraint(operand, other, r)
        )
    });
}

/// A fact about known-bits values `a`, `b` and members `x` of `a`, `y` of
/// `b` (and a free word `t`), written once for both word types.
macro_rules! bits_fact {
    ($s:expr, $what:expr, |$a:ident, $b:ident, $x:ident, $y:ident, $t:ident|
        pre $pre:expr; goal $goal:expr; show $show:expr) => {{
        fn pre<W: Word>($a: KB<W>, $b: KB<W>, $x: W, $y: W, $t: W) -> W::Bit {
            let _ = (&$a, &$b, &$x, &$y, &$t);
            $pre
        }
        fn goal<W: Word>($a: KB<W>, $b: KB<W>, $x: W, $y: W, $t: W) -> W::Bit {
            let _ = (&$a, &$b, &$x, &$y, &$t);
            $goal
        }
        fn show($a: KB<i64>, $b: KB<i64>, $x: i64, $y: i64, $t: i64) -> String {
            let _ = (&$a, &$b, &$x, &$y, &$t);
            format!("{:?}", $show)
        }
        let s: &mut Suite = $s;
        s.add($what, |p| {
            let (a, b) = (p.known_bits("a"), p.known_bits("b"));
            let (x, y, t) = (p.word("x"), p.word("y"), p.word("t"));
            p.assume(a.contains(x) & b.contains(y));
            p.assume(pre(a, b, x, y, t));
            p.prove(goal(a, b, x, y, t), |m| {
                let (a, b) = (concrete_bits(m, "a"), concrete_bits(m, "b"));
                let (x, y, t) = (val(m, "x"), val(m, "y"), val(m, "t"));
                format!("a = {a}, b = {b}: {}", show(a, b, x, y, t))
            });
        });
    }};
}

fn known_bits_lattice_and_queries(s: &mut Suite) {
    bits_fact!(s, "is_and_identity", |a, b, x, y, t|
        pre a.is_and_identity(b); goal (x & y).eq(x); show a.is_and_identity(b));
    bits_fact!(s, "disagrees", |a, b, x, y, t|
        pre a.disagrees(b); goal x.ne(y); show a.disagrees(b));
    bits_fact!(s, "is_subset_of", |a, b, x, y, t|
        pre a.is_subset_of(b); goal b.contains(x); show a.is_subset_of(b));
    bits_fact!(s, "meet", |a, b, x, y, t|
        pre b.contains(x);
        goal { let (m, e) = a.meet(b); !e & m.contains(x) & m.is_well_formed() };
        show a.meet(b));
    bits_fact!(s, "join", |a, b, x, y, t|
        pre W::Bit::lit(true);
        goal { let j = a.join(b); j.contains(x) & j.contains(y) & j.is_well_formed() };
        show a.join(b));
    bits_fact!(s, "signed and unsigned extremes", |a, b, x, y, t|
        pre W::Bit::lit(true);
        goal a.min_signed().sle(x) & x.sle(a.max_signed()) & a.min_unsigned().ule(x) & x.ule(a.max_unsigned());
        show (a.min_signed(), a.max_signed(), a.min_unsigned(), a.max_unsigned()));
    // The searches give a member beyond the bound, and the nearest one:
    // no member lies between the bound and the answer.
    bits_fact!(s, "min_unsigned_at_least", |a, b, x, y, t|
        pre W::Bit::lit(true);
        goal {
            let (v, found) = a.min_unsigned_at_least(t);
            let valid = !found | (a.contains(v) & t.ule(v));
            let nearest = !t.ule(x) | (found & v.ule(x));
            valid & nearest
        };
        show a.min_unsigned_at_least(t));
    bits_fact!(s, "max_unsigned_at_most", |a, b, x, y, t|
        pre W::Bit::lit(true);
        goal {
            let (v, found) = a.max_unsigned_at_most(t);
            let valid = !found | (a.contains(v) & v.ule(t));
            let nearest = !x.ule(t) | (found & x.ule(v));
            valid & nearest
        };
        show a.max_unsigned_at_most(t));
    bits_fact!(s, "min_signed_at_least", |a, b, x, y, t|
        pre W::Bit::lit(true);
        goal {
            let (v, found) = a.min_signed_at_least(t);
            let valid = !found | (a.contains(v) & t.sle(v));
            let nearest = !t.sle(x) | (found & v.sle(x));
            valid & nearest
        };
        show a.min_signed_at_least(t));
    bits_fact!(s, "max_signed_at_most", |a, b, x, y, t|
        pre W::Bit::lit(true);
        goal {
            let (v, found) = a.max_signed_at_most(t);
            let valid = !found | (a.contains(v) & v.sle(t));
            let nearest = !x.sle(t) | (found & x.sle(v));
            valid & nearest
        };
        show a.max_signed_at_most(t));
    bits_fact!(s, "constant, unknown and boolean", |a, b, x, y, t|
        pre W::Bit::lit(true);
        goal KB::constant(x).contains(x) & KB::constant(x).is_constant() & KB::<W>::unknown().contains(x)
            & KB::<W>::boolean().contains(W::lit(0)) & KB::<W>::boolean().contains(W::lit(1));
        show KB::constant(x));
}

/// Multiplication end to end, real multipliers and all: the solvers
/// cannot finish these at 64 bits, so they run on narrower words, the
/// same generic code (at 10 bits z3 and Bitwuzla both time out after 30 s
/// on the soundness proofs). At 64 bits: `multiplication_by_lemmas` and
/// `known_bits_mul_by_induction`.
fn multiplication(s: &mut Suite) {
    fwd!(s, Bits, IntMul, |a, b| a.mul(b));
    fwd!(s, Bound, IntMul, |a, b| a.mul_raw(b));
    fwd!(s, Bound, IntMulOvf, |a, b| a.mul_ovf_raw(b));
    fwd!(s, Bound, UintMulHigh, |a, b| a.uint_mul_high_raw(b));
    bound_fact!(s, "mul_cannot_overflow", |a, b, r, x, y, z|
        pre a.mul_cannot_overflow(b); goal !x.mul_overflows(y); show a.mul_cannot_overflow(b));
}

/// The public functions built from proved pieces (a raw function or
/// constraint, then `intersect` or `normalize`), also proved end to end
/// on the code as composed, so that no public function relies on the
/// composition argument alone. At 64 bits each of these takes z3 30 to
/// 80 s (the bounds searches of `normalize` unrolled); at 12 bits z3
/// takes up to 30 s and Bitwuzla up to 5 (at 16, Bitwuzla up to 16 s,
/// z3 more than 30).
fn composed_functions_end_to_end(s: &mut Suite) {
    use traceopt_domains::{Operand, Relation};
    bound_fact!(s, "intersect", |a, b, r, x, y, z|
        pre b.contains(x);
        goal { let (i, e) = a.intersect(b); !e & i.contains(x) & i.is_normalized() };
        show a.intersect(b));
    bound_fact!(s, "intersect_range", |a, b, r, x, y, z|
        pre y.sle(x) & x.sle(z);
        goal { let (i, e) = a.intersect_range(y, z); !e & i.contains(x) };
        show a.intersect_range(y, z));
    bound_fact!(s, "from_parts", |a, b, r, x, y, z|
        pre W::Bit::lit(true);
        goal { let n = IntBound::from_parts(a.lower, a.upper, a.bits); n.contains(x) & n.is_normalized() };
        show IntBound::from_parts(a.lower, a.upper, a.bits));
    bound_fact!(s, "widen", |a, b, r, x, y, z|
        pre W::Bit::lit(true);
        goal { let n = a.widen(b); n.contains(x) & n.contains(y) & n.is_normalized() };
        show a.widen(b));
    bound_fact!(s, "join", |a, b, r, x, y, z|
        pre W::Bit::lit(true);
        goal { let n = a.join(b); n.contains(x) & n.contains(y) };
        show a.join(b));
    bound_fact!(s, "refine_true", |a, b, r, x, y, z|
        pre x.ne(W::lit(0));
        goal { let (n, e) = a.refine_true(); !e & n.contains(x) };
        show a.refine_true());
    bound_fact!(s, "refine_false", |a, b, r, x, y, z|
        pre x.eq(W::lit(0));
        goal { let (n, e) = a.refine_false(); !e & n.contains(x) };
        show a.refine_false());
    bound_fact!(s, "from_cases", |a, b, r, x, y, z|
        pre x.eq(W::lit(1)) | x.eq(W::lit(0));
        goal {
            let yes = x.eq(W::lit(1));
            IntBound::from_cases(yes, !yes).contains(x)
                & IntBound::<W>::from_cases(W::Bit::lit(false), W::Bit::lit(false)).contains(x)
        };
        show IntBound::<i64>::from_cases(x == 1, x != 1));
    bound_fact!(s, "knowns and zeros", |a, b, r, x, y, z|
        pre W::Bit::lit(true);
        goal (x & a.bits.knowns()).eq(a.bits.ones) & (x & a.bits.zeros()).eq(W::lit(0));
        show (a.bits.knowns(), a.bits.zeros()));
    for rel in [
        Relation::Lt,
        Relation::Le,
        Relation::Ult,
        Relation::Ule,
        Relation::Eq,
        Relation::Ne,
    ] {
        s.add(&format!("refine {rel:?}"), move |p| {
            let (a, b) = (p.bound("a"), p.bound("b"));
            let (x, y) = (p.word("x"), p.word("y"));
            let holds = match rel {
                Relation::Lt => x.slt(y),
                Relation::Le => x.sle(y),
                Relation::Ult => x.ult(y),
                Relation::Ule => x.ule(y),
                Relation::Eq => x.eq(y),
                Relation::Ne => x.ne(y),
            };
            p.assume(a.contains(x) & b.contains(y) & holds);
            let (na, nb, empty) = a.refine(rel, b);
            p.prove(!empty & na.contains(x) & nb.contains(y), |m| {
                let (a, b) = (concrete_bound(m, "a"), concrete_bound(m, "b"));
                format!("{rel:?}: a = {a}, b = {b} gives {:?}", a.refine(rel, b))
            });
        });
    }
    type Concrete = fn(Sym, Sym) -> Sym;
    let operands: [(Operand, Concrete); 3] = [
        (Operand::And, |x, y| x & y),
        (Operand::Add, |x, y| x.add(y)),
        (Operand::SubRight, |x, y| x.sub(y)),
    ];
    for (operand, op) in operands {
        s.add(&format!("refine_by_result {operand:?}"), move |p| {
            let (a, b, r) = (p.bound("a"), p.bound("b"), p.bound("r"));
            let (x, y) = (p.word("x"), p.word("y"));
            let value = op(x, y);
            p.assume(a.contains(x) & b.contains(y) & r.contains(value));
            let right = operand == Operand::SubRight;
            let (narrowed, other, member) = if right { (b, a, y) } else { (a, b, x) };
            let (n, empty) = narrowed.refine_by_result(operand, other, r);
            p.prove(!empty & n.contains(member), |m| {
                let (a, b, r) = (
                    concrete_bound(m, "a"),
                    concrete_bound(m, "b"),
                    concrete_bound(m, "r"),
                );
                format!("{operand:?}: a = {a}, b = {b}, result {r}")
            });
        });
    }
}

/// Multiplication at full width, by lemmas (`common/lemmas.rs`): products
/// are opaque, known only through the monotonicity instances, so the
/// solver reasons about comparisons instead of multiplier circuits. Only
/// the interval parts: the bits part of a bound's product is known-bits
/// `int_mul` (proved by induction, `known_bits_mul_by_induction`).
fn multiplication_by_lemmas(s: &mut Suite) {
    s.set_lemmas(true);
    fwd!(s, Bound, IntMul, |a, b| a.mul_raw(b); parts 0..1);
    fwd!(s, Bound, IntMulOvf, |a, b| a.mul_ovf_raw(b); parts 0..1);
    fwd!(s, Bound, UintMulHigh, |a, b| a.uint_mul_high_raw(b); parts 0..1);
    bound_fact!(s, "mul_cannot_overflow", |a, b, r, x, y, z|
        pre a.mul_cannot_overflow(b); goal !x.mul_overflows(y); show a.mul_cannot_overflow(b));
}

/// Division and modulo at full width, by lemmas: both parts (the bits of
/// a quotient or remainder are unknown unless both operands are
/// constants, which the opaque functions keep).
fn division_by_lemmas(s: &mut Suite) {
    s.set_lemmas(true);
    int_bound_division(s);
}

/// Known-bits `int_mul` at full width, by induction over its loop
/// (`MulStep`). Take members x of a and y of b; write o and q for the
/// ones of a and b; x_k = x >> k and y_k = y << k (o_k, q_k alike);
/// `part(u, v)` for v when u is odd, else 0; and D_k for the sum over
/// j < k of part(x_j, y_j) - part(o_j, q_j). After k steps:
///
/// - x_k is a member of a_k, y_k of b_k, D_k of sum_k; a_k's ones are
///   o_k, b_k's are q_k (for k = 0 by "start", then by "a step keeps the
///   invariant");
/// - x * y - o * q = D_k + x_k * y_k - o_k * q_k (for k = 0 as
///   D_0 = 0, then because u * v = part(u, v) + (u >> 1) * (v << 1), the
///   three "shift and add" proofs: u is 2 (u >> 1) + (u & 1), products
///   distribute, and (u & 1) * v is part(u, v)).
///
/// The loop ends when a_k has only the member 0 ("only zero": then
/// x_k = o_k = 0), at the latest after 64 steps (x_64 = o_64 = 0); then
/// x * y - o * q = D_k is a member of sum_k, and "finish" puts x * y in
/// the result. The same generic code runs at 4 and 6 bits in
/// `multiplication`, which checks the loop as written end to end.
fn known_bits_mul_by_induction(s: &mut Suite) {
    let odd = |v: Sym| (v & lit(1)).ne(lit(0));
    let part = move |u: Sym, v: Sym| Sym::select(odd(u), v, lit(0));
    let step_state = |p: &mut Prover| {
        let (a, b, sum) = (p.known_bits("a"), p.known_bits("b"), p.known_bits("sum"));
        MulStep { a, b, sum }
    };
    let shown = |m: &traceopt_smt::Model| {
        format!(
            "a = {}, b = {}, sum = {}, x = {}, y = {}, d = {}",
            concrete_bits(m, "a"),
            concrete_bits(m, "b"),
            concrete_bits(m, "sum"),
            val(m, "x"),
            val(m, "y"),
            val(m, "d")
        )
    };
    s.add("start", move |p| {
        let (a, b) = (p.known_bits("a"), p.known_bits("b"));
        let start = MulStep::start(a, b);
        let same =
            |u: KnownBits<Sym>, v: KnownBits<Sym>| u.ones.eq(v.ones) & u.unknowns.eq(v.unknowns);
        let goal = same(start.a, a)
            & same(start.b, b)
            & start.sum.contains(lit(0))
            & start.sum.is_well_formed();
        p.prove(goal, shown);
    });
    s.add("a step keeps the invariant", move |p| {
        let state = step_state(p);
        let (x, y, d) = (p.word("x"), p.word("y"), p.word("d"));
        p.assume(state.a.contains(x) & state.b.contains(y) & state.sum.contains(d));
        let next = state.next();
        let d_next = d.add(part(x, y)).sub(part(state.a.ones, state.b.ones));
        let members = next.a.contains(x.lshr_by(1))
            & next.b.contains(y.shl_by(1))
            & next.sum.contains(d_next);
        let formed = next.a.is_well_formed() & next.b.is_well_formed() & next.sum.is_well_formed();
        let ones = next.a.ones.eq(state.a.ones.lshr_by(1)) & next.b.ones.eq(state.b.ones.shl_by(1));
        p.prove(members & formed & ones, shown);
    });
    s.add("shift and add: u is 2 (u >> 1) + (u & 1)", |p| {
        let u = p.word("u");
        let goal = u.eq(lit(2).mul(u.lshr_by(1)).add(u & lit(1)));
        p.prove(goal, |m| format!("u = {}", val(m, "u")));
    });
    s.add("shift and add: products distribute", |p| {
        p.by_rewriting();
        let (h, l, v) = (p.word("h"), p.word("l"), p.word("v"));
        let goal = lit(2)
            .mul(h)
            .add(l)
            .mul(v)
            .eq(l.mul(v).add(h.mul(lit(2).mul(v))));
        p.prove(goal, |m| {
            format!(
                "h = {}, l = {}, v = {}",
                val(m, "h"),
                val(m, "l"),
                val(m, "v")
            )
        });
    });
    s.add("shift and add: (u & 1) * v is part(u, v)", move |p| {
        let (u, v) = (p.word("u"), p.word("v"));
        let goal = (u & lit(1)).mul(v).eq(part(u, v));
        p.prove(goal, |m| {
            format!("u = {}, v = {}", val(m, "u"), val(m, "v"))
        });
    });
    s.add("only zero", |p| {
        let a = p.known_bits("a");
        let x = p.word("x");
        p.assume(a.contains(x) & a.only_zero());
        p.prove(x.eq(lit(0)) & a.ones.eq(lit(0)), |m| {
            format!("a = {}, x = {}", concrete_bits(m, "a"), val(m, "x"))
        });
    });
    // Products are opaque here: the proof needs only that the exact part
    // is the product of the ones that the equation speaks of.
    s.add("finish", move |p| {
        p.by_lemmas();
        let state = step_state(p);
        let (a, b) = (p.known_bits("a0"), p.known_bits("b0"));
        let (product, d) = (p.word("x"), p.word("d"));
        p.assume(state.sum.contains(d));
        p.assume(product.sub(a.ones.mul(b.ones)).eq(d));
        let result = state.finish(a, b);
        p.prove(result.contains(product) & result.is_well_formed(), shown);
    });
}

/// Integer terms for the lemma schemas.
fn int_fun(fun: Fun, a: &Term, b: &Term) -> Term {
    Term::app(fun, &[a.clone(), b.clone()])
}
fn int_le(a: &Term, b: &Term) -> Term {
    int_fun(Fun::IntLe, a, b)
}
fn int_lt(a: &Term, b: &Term) -> Term {
    int_fun(Fun::IntLt, a, b)
}
fn int_mul(a: &Term, b: &Term) -> Term {
    int_fun(Fun::IntMul, a, b)
}
/// Floor division: SMT-LIB's `div` leaves a non-negative remainder, which
/// is the floor for a positive divisor; for a negative one, negate both.
fn int_floordiv(x: &Term, y: &Term) -> Term {
    let zero = Term::Int(0);
    let negated = |v: &Term| int_fun(Fun::IntSub, &zero, v);
    Term::ite(
        &int_lt(&zero, y),
        &int_fun(Fun::IntDiv, x, y),
        &int_fun(Fun::IntDiv, &negated(x), &negated(y)),
    )
}
fn int_floormod(x: &Term, y: &Term) -> Term {
    int_fun(Fun::IntSub, x, &int_mul(y, &int_floordiv(x, y)))
}

/// The lemma schemas of `common/lemmas.rs`, over the integers: true at
/// every width where the bitvector operations are the exact ones (the
/// instances' side conditions exclude the one wrapping case, MININT // -1;
/// `lemma_instances` checks the instances against the bitvector
/// operations).
fn lemma_schemas(s: &mut Suite) {
    let ite = |c: &Term, a: &Term, b: &Term| Term::ite(c, a, b);
    s.add("products are monotonic in each factor", move |p| {
        let zero = Term::Int(0);
        let (u, v1, v2) = (p.int("u"), p.int("v1"), p.int("v2"));
        let (p1, p2) = (int_mul(&u, &v1), int_mul(&u, &v2));
        let second = int_le(&v1, &v2).implies(&ite(
            &int_le(&zero, &u),
            &int_le(&p1, &p2),
            &int_le(&p2, &p1),
        ));
        let (q1, q2) = (int_mul(&v1, &u), int_mul(&v2, &u));
        let first = int_le(&v1, &v2).implies(&ite(
            &int_le(&zero, &u),
            &int_le(&q1, &q2),
            &int_le(&q2, &q1),
        ));
        p.prove(bit(second.and(&first)), |_| String::new());
    });
    s.add("factors of at most m make at most m squared", move |p| {
        let zero = Term::Int(0);
        let (u, v, m) = (p.int("u"), p.int("v"), p.int("m"));
        let within = |x: &Term| int_le(&zero, x).and(&int_le(x, &m));
        let goal = within(&u)
            .and(&within(&v))
            .implies(&int_le(&int_mul(&u, &v), &int_mul(&m, &m)));
        p.prove(bit(goal), |_| String::new());
    });
    s.add("a product with a zero factor is zero", move |p| {
        let zero = Term::Int(0);
        let (u, v) = (p.int("u"), p.int("v"));
        let zero_factor = u.eq(&zero).or(&v.eq(&zero));
        let goal = zero_factor.implies(&int_mul(&u, &v).eq(&zero));
        p.prove(bit(goal), |_| String::new());
    });
    s.add(
        "products by a non-zero factor are strictly monotonic",
        move |p| {
            let zero = Term::Int(0);
            let (u, v1, v2) = (p.int("u"), p.int("v1"), p.int("v2"));
            let premise = int_lt(&v1, &v2).and(&u.eq(&zero).not());
            let strictly =
                |p1: &Term, p2: &Term| ite(&int_lt(&zero, &u), &int_lt(p1, p2), &int_lt(p2, p1));
            let goal = premise.implies(
                &strictly(&int_mul(&u, &v1), &int_mul(&u, &v2))
                    .and(&strictly(&int_mul(&v1, &u), &int_mul(&v2, &u))),
            );
            p.prove(bit(goal), |_| String::new());
        },
    );
    s.add("floor quotients are monotonic in the dividend", move |p| {
        let zero = Term::Int(0);
        let (x1, x2, y) = (p.int("x1"), p.int("x2"), p.int("y"));
        let (q1, q2) = (int_floordiv(&x1, &y), int_floordiv(&x2, &y));
        let premise = int_le(&x1, &x2).and(&y.eq(&zero).not());
        let goal = premise.implies(&ite(
            &int_lt(&zero, &y),
            &int_le(&q1, &q2),
            &int_le(&q2, &q1),
        ));
        p.prove(bit(goal), |_| String::new());
    });
    s.add(
        "floor quotients are monotonic in the divisor on one side of zero",
        move |p| {
            let zero = Term::Int(0);
            let (x, y1, y2) = (p.int("x"), p.int("y1"), p.int("y2"));
            let (q1, q2) = (int_floordiv(&x, &y1), int_floordiv(&x, &y2));
            let same_side = int_lt(&zero, &y1).or(&int_lt(&y2, &zero));
            let premise = int_le(&y1, &y2).and(&same_side);
            let goal = premise.implies(&ite(
                &int_le(&zero, &x),
                &int_le(&q2, &q1),
                &int_le(&q1, &q2),
            ));
            p.prove(bit(goal), |_| String::new());
        },
    );
    s.add(
        "floor remainders lie between zero and the divisor",
        move |p| {
            let zero = Term::Int(0);
            let (x, y) = (p.int("x"), p.int("y"));
            let r = int_floormod(&x, &y);
            let (positive, negative) = (int_lt(&zero, &y), int_lt(&y, &zero));
            let goal = Term::and_all([
                positive.implies(&int_le(&zero, &r).and(&int_lt(&r, &y))),
                positive.and(&int_le(&zero, &x)).implies(&int_le(&r, &x)),
                negative.implies(&int_lt(&y, &r).and(&int_le(&r, &zero))),
                negative.and(&int_le(&x, &zero)).implies(&int_le(&x, &r)),
            ]);
            p.prove(bit(goal), |_| String::new());
        },
    );
}

/// The lemma instances, as `common/lemmas.rs` writes them for a proof,
/// hold for the real bitvector operations: exact products of the sign- or
/// zero-extended words, the word trait's floor division, `bvsmod`. Two
/// symbolic values per argument (the instances then relate them, and zero
/// for products, in every combination).
fn lemma_instances(s: &mut Suite) {
    for op in traceopt_domains::symbolic::Opaque::ALL {
        s.add(&format!("{op:?} instances"), move |p| {
            let (x1, x2, y1, y2) = (p.word("x1"), p.word("x2"), p.word("y1"), p.word("y2"));
            let applied = [(op, x1, y1), (op, x2, y2)];
            let goal = common::lemma_instances(&applied, real_operation);
            p.prove(goal, |m| {
                format!(
                    "x1 = {}, x2 = {}, y1 = {}, y2 = {}",
                    val(m, "x1"),
                    val(m, "x2"),
                    val(m, "y1"),
                    val(m, "y2")
                )
            });
        });
    }
}

/// The lemma the validator assumes about `int_mul_ovf` (`Encoded::lemma`,
/// crates/smt/src/encode.rs): the exact (double-width) product of x and
/// y is negative exactly when both are nonzero and their signs differ.
fn product_lemma_statement(x: Sym, y: Sym) -> Term {
    let bits = symbolic::width();
    let wide = |v: Sym| v.term().un(Fun::SignExtend(bits));
    let exact = if symbolic::opaque() {
        symbolic::Opaque::SignedProduct.apply(x, y)
    } else {
        wide(x).bv(Fun::BvMul, &wide(y))
    };
    let zero = Term::Bv {
        value: 0,
        width: 2 * bits,
    };
    let expected = x.ne(lit(0)) & y.ne(lit(0)) & x.is_negative().differs(y.is_negative());
    exact.bv(Fun::BvSlt, &zero).eq(&expected.term())
}

/// The product lemma at 64 bits, by the monotonicity lemmas.
fn product_lemma_by_lemmas(s: &mut Suite) {
    s.set_lemmas(true);
    product_lemma(s);
}

fn product_lemma(s: &mut Suite) {
    s.add("the exact product's sign", |p| {
        let (x, y) = (p.word("x"), p.word("y"));
        p.prove(bit(product_lemma_statement(x, y)), |m| {
            format!("{} * {}", val(m, "x"), val(m, "y"))
        });
    });
}

/// The encoder's lemma is the statement `product_lemma` proves.
fn product_lemma_as_encoded(s: &mut Suite) {
    s.add("the encoder's lemma is the statement", |p| {
        let (x, y) = (p.word("x"), p.word("y"));
        let encoded = traceopt_smt::encode(Opcode::IntMulOvf, &[x.term(), y.term()], None)
            .and_then(|e| e.lemma)
            .expect("int_mul_ovf has a lemma");
        let same = encoded.eq(&product_lemma_statement(x, y));
        p.prove(bit(same), |m| format!("{} * {}", val(m, "x"), val(m, "y")));
    });
}

/// The width of a row whose proofs are about integers, not words.
const INTEGERS: &[u32] = &[];

/// A row of the widths table: a group of proofs, what they prove, and the
/// word widths they are proved at (the same generic code at each).
struct Proofs {
    group: &'static str,
    proves: &'static str,
    widths: &'static [u32],
    /// Proofs at each width (a group short of its count fails).
    count: usize,
    add: fn(&mut Suite),
}

/// Which proofs hold at which widths. This table drives the suite, and
/// the documents state it (`the_widths_table_is_documented`). A width
/// below 64 is where the solvers finish within the CI budget: bit-blasted
/// products and quotients grow with the square of the width.
const WIDTHS: &[Proofs] = &[
    Proofs {
        group: "known bits transfer",
        proves: "every known-bits transfer function but `int_mul`: sound, constants kept",
        widths: &[64],
        count: 22 * 2,
        add: known_bits_transfer_functions,
    },
    Proofs {
        group: "bound transfer",
        proves: "every bound transfer function but multiplication and division (raw): sound, constants kept",
        widths: &[64],
        count: 27 * 3,
        add: int_bound_transfer_functions,
    },
    Proofs {
        group: "division meaning",
        proves: "the word trait's floor division and modulo are the validator's `int_pydiv`, `int_pymod`",
        widths: &[64],
        count: 2,
        add: division_meaning,
    },
    Proofs {
        group: "bound division",
        proves: "bound `int_pydiv`, `int_pymod` (raw): sound, constants kept, end to end without lemmas",
        widths: &[4, 6],
        count: 2 * 3,
        add: int_bound_division,
    },
    Proofs {
        group: "bound lattice and queries",
        proves: "`with_prefix` (normalization), intersection, join, widening, constructors, queries",
        widths: &[64],
        count: 21,
        add: int_bound_lattice_and_queries,
    },
    Proofs {
        group: "bound refinements",
        proves: "the constraints from relations and from known results",
        widths: &[64],
        count: 6 + 11 * 2,
        add: int_bound_refinements,
    },
    Proofs {
        group: "known bits lattice and queries",
        proves: "meet, join, the extremes and the nearest-member searches",
        widths: &[64],
        count: 11,
        add: known_bits_lattice_and_queries,
    },
    Proofs {
        group: "multiplication",
        proves: "known-bits `int_mul`; bound `int_mul`, `int_mul_ovf`, `uint_mul_high` (raw); `mul_cannot_overflow`, end to end without lemmas",
        widths: &[4, 6],
        count: 2 + 3 * 3 + 1,
        add: multiplication,
    },
    Proofs {
        group: "product lemma",
        proves: "the sign of the exact product, which the validator assumes for `int_mul_ovf`",
        widths: &[4, 8, 16],
        count: 1,
        add: product_lemma,
    },
    Proofs {
        group: "product lemma by lemmas",
        proves: "the same, with the exact product opaque but for the lemmas",
        widths: &[64],
        count: 1,
        add: product_lemma_by_lemmas,
    },
    Proofs {
        group: "product lemma as encoded",
        proves: "the validator's 64-bit lemma is that statement",
        widths: &[64],
        count: 1,
        add: product_lemma_as_encoded,
    },
    Proofs {
        group: "known-bits product by induction",
        proves: "known-bits `int_mul` (so the bits of bound products too): the start, one step and the end of its loop, and the shift-and-add identities the induction uses",
        widths: &[64],
        count: 7,
        add: known_bits_mul_by_induction,
    },
    Proofs {
        group: "multiplication by lemmas",
        proves: "bound `int_mul`, `int_mul_ovf`, `uint_mul_high` (raw; the interval, the bits are known-bits `int_mul`); `mul_cannot_overflow`: sound, constants kept, with products opaque but for the lemmas",
        widths: &[16, 64],
        count: 3 * 2 + 1,
        add: multiplication_by_lemmas,
    },
    Proofs {
        group: "division by lemmas",
        proves: "bound `int_pydiv`, `int_pymod` (raw): sound, constants kept, with quotients and remainders opaque but for the lemmas",
        widths: &[16, 64],
        count: 2 * 3,
        add: division_by_lemmas,
    },
    Proofs {
        group: "lemmas",
        proves: "the monotonicity of products and floor quotients, the range of floor remainders, that the proofs by lemmas assume",
        widths: INTEGERS,
        count: 7,
        add: lemma_schemas,
    },
    Proofs {
        group: "lemma instances",
        proves: "the lemmas as instantiated on bitvectors hold for the real operations",
        widths: &[4, 6],
        count: 4,
        add: lemma_instances,
    },
    Proofs {
        group: "composed",
        proves: "the public functions as composed (raw function or constraint, then `intersect` or `normalize`), end to end",
        widths: &[6, 12],
        count: 9 + 6 + 3,
        add: composed_functions_end_to_end,
    },
];

/// The proofs of the table's rows.
fn suite(rows: &[Proofs]) -> Suite {
    let mut s = Suite::new();
    for row in rows {
        s.group(row.group, row.count * row.widths.len().max(1));
        if row.widths.is_empty() {
            (row.add)(&mut s);
        }
        for &width in row.widths {
            s.set_width(width);
            (row.add)(&mut s);
        }
    }
    s
}

/// Every proof of the table, shared out to the cores. A proof the solver
/// refutes or cannot decide fails the test, as does a vacuous one and a
/// group short of its count.
#[test]
fn every_domain_function_is_proved() {
    let config = Config::from_env();
    let report = suite(WIDTHS).run(&config);
    report.print_summary();
    if config.measure {
        let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("proof-times.txt");
        std::fs::write(&path, report.times_table()).unwrap();
        eprintln!("times written to {}", path.display());
    }
    report.check();
}

/// The solvers CI installs (`scripts/test`); Bitwuzla and Yices are
/// optional.
const CI_SOLVERS: [SolverKind; 2] = [SolverKind::Z3, SolverKind::Cvc5];

/// The widths table as markdown, with the solver CI asks first and the
/// recorded solver time of each row (`tests/proof-times.txt`).
fn widths_markdown() -> String {
    let times = Times::recorded();
    let mut text = String::from(
        "| Proofs | What is proved | Width (bits) | Proofs | Solver asked first | Seconds on record |\n\
         |---|---|---|---:|---|---:|\n",
    );
    let mut total = 0;
    for row in WIDTHS {
        let names = suite(std::slice::from_ref(row)).names();
        total += names.len();
        let mut solvers: Vec<(&str, usize)> = Vec::new();
        let mut seconds = 0.0;
        for name in &names {
            let kind = times.first_choice(name, &CI_SOLVERS).binary();
            match solvers.iter_mut().find(|(k, _)| *k == kind) {
                Some((_, n)) => *n += 1,
                None => solvers.push((kind, 1)),
            }
            seconds += times.estimate(name, &CI_SOLVERS).unwrap_or(0.0);
        }
        solvers.sort_by_key(|s| std::cmp::Reverse(s.1));
        let solvers: Vec<String> = solvers.iter().map(|(k, n)| format!("{k} ({n})")).collect();
        let mut widths: Vec<String> = row.widths.iter().map(u32::to_string).collect();
        if widths.is_empty() {
            widths.push("any (integers)".into());
        }
        writeln!(
            text,
            "| {} | {} | {} | {} | {} | {seconds:.1} |",
            row.group,
            row.proves,
            widths.join(", "),
            names.len(),
            solvers.join(", "),
        )
        .unwrap();
    }
    writeln!(
        text,
        "\n{total} proofs. A proof at a width below 64 runs the same generic code \
         on narrower words: it shows the code sound at that width, which is \
         evidence for, not a proof of, the 64-bit case (the 64-bit randomized test \
         `crates/domains/tests/random64.rs` samples that). Every transfer function \
         is proved at 64 bits: multiplication, division and modulo by lemmas, which \
         leave products, quotients and remainders uninterpreted but for monotonicity \
         and range facts; those facts are proved over the integers (row `lemmas`) and \
         checked, as the proofs instantiate them, against the bitvector operations \
         (row `lemma instances`). Known-bits `int_mul` is proved by induction over its \
         loop, each step and identity at 64 bits. Each proof first checks that its \
         assumptions are satisfiable."
    )
    .unwrap();
    text
}

const BEGIN: &str = "<!-- proof-widths:begin (generated by crates/domains/tests/proofs.rs; UPDATE_DOCS=1 rewrites it) -->\n";
const END: &str = "<!-- proof-widths:end -->";

/// README.md, docs/ARCHITECTURE.md and docs/PROOF-WIDTHS.md (which
/// `traceopt rules --help` includes) state the table above, between
/// markers; `UPDATE_DOCS=1` rewrites them.
#[test]
fn the_widths_table_is_documented() {
    let table = widths_markdown();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let update = std::env::var("UPDATE_DOCS").is_ok_and(|v| v == "1");
    let mut stale = Vec::new();
    for doc in ["README.md", "docs/ARCHITECTURE.md", "docs/PROOF-WIDTHS.md"] {
        let path = root.join(doc);
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let section = |t: &str| Some((t.find(BEGIN)? + BEGIN.len(), t.find(END)?));
        let Some((start, end)) = section(&text) else {
            stale.push(format!("{doc}: no proof-widths section"));
            continue;
        };
        if text[start..end] != table {
            if update {
                let new = format!("{}{table}{}", &text[..start], &text[end..]);
                std::fs::write(&path, new).unwrap();
            } else {
                stale.push(format!("{doc}: the proof-widths section is out of date"));
            }
        }
    }
    assert!(
        stale.is_empty(),
        "{}\nrun `UPDATE_DOCS=1 cargo test -p traceopt-domains --test proofs the_widths_table` to rewrite",
        stale.join("\n")
    );
}
