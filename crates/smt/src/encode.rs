//! The SMT meaning of every integer op of the op table.
//!
//! An op's arguments are 64-bit bitvector terms; its meaning is a result
//! term, a "defined if" condition, and for `*_ovf` ops the condition that
//! no overflow happened (the wide result, computed on sign-extended
//! arguments, equals the sign-extended narrow result). Comparisons give the
//! words 0 and 1, as in traces. Where PyPy leaves an op undefined (shift
//! counts outside 0..=63, division by zero, `int_signext` by other than 1,
//! 2, 4 or 8 bytes) the result term is arbitrary and `defined` says so; the
//! reference interpreter refuses those inputs, and a test checks both
//! agree on every defined input.
//!
//! Python division and modulo (`int_pydiv`, `int_pymod`, and `call_pure_i` and `call_i`
//! with PyPy's oopspecs 12 and 14) floor towards minus infinity: the
//! remainder takes the divisor's sign, which is SMT-LIB's `bvsmod`.

use crate::term::{Fun, Term};
use traceopt_ir::{Descr, Opcode};

/// The meaning of one op.
#[derive(Clone, Debug)]
pub struct Encoded {
    pub value: Term,
    pub defined: Term,
    /// For `*_ovf`: true when the result did not overflow.
    pub no_overflow: Option<Term>,
    /// A fact that holds for all arguments and helps the solver (for
    /// `int_mul_ovf`: the sign of the exact product). Assuming it is sound;
    /// the cross-check test confirms it on every case.
    pub lemma: Option<Term>,
}

impl Encoded {
    fn total(value: Term) -> Encoded {
        Encoded {
            value,
            defined: Term::Bool(true),
            no_overflow: None,
            lemma: None,
        }
    }
}

/// The word 1 if `cond`, else 0.
pub fn flag(cond: &Term) -> Term {
    Term::ite(cond, &Term::word(1), &Term::word(0))
}

/// True if the word is not zero.
pub fn truthy(word: &Term) -> Term {
    word.eq(&Term::word(0)).not()
}

/// Which ops `encode` knows.
pub fn is_integer_op(opcode: Opcode, descr: Option<&Descr>) -> bool {
    use Opcode::*;
    match opcode {
        CallPureI | CallI => py_division_oopspec(descr).is_some(),
        IntAdd | IntSub | IntMul | UintMulHigh | IntAnd | IntOr | IntXor | IntRshift
        | IntLshift | UintRshift | IntSignext | IntPydiv | IntPymod | IntLt | IntLe | IntEq
        | IntNe | IntGt | IntGe | UintLt | UintLe | UintGt | UintGe | IntIsZero | IntIsTrue
        | IntNeg | IntInvert | IntForceGeZero | IntAddOvf | IntSubOvf | IntMulOvf | SameAsI => true,
        _ => false,
    }
}

/// `IntPydiv` or `IntPymod` for a call descr with PyPy's oopspec for them.
pub fn py_division_oopspec(descr: Option<&Descr>) -> Option<Opcode> {
    traceopt_ir::oopspec::python_division(descr)
}

/// For `x // (1 << k)` (a divisor built by a shift of one): with k below
/// 63, the quotient is `x` shifted right arithmetically by k, which a
/// solver does not find through a 64-bit divider on its own. Proved for
/// every such k by `tests/encode_vs_interp.rs`.
pub fn power_of_two_quotient(x: &Term, divisor: &Term, quotient: &Term) -> Option<Term> {
    let Term::App(Fun::BvShl, parts) = divisor else {
        return None;
    };
    let [one, k] = &parts[..] else { return None };
    if *one != Term::word(1) {
        return None;
    }
    let power = k.bv(Fun::BvUlt, &Term::word(63));
    Some(power.implies(&quotient.eq(&x.bv(Fun::BvAshr, k))))
}

/// For `x - (x == c)` and `x + (x == c)` (`flag` seen through its name):
/// the result is never `c`, which moves `x` off `c` when it was on it.
/// PyPy's hashes are made so (never -1), and a recording tests the result
/// again; a bit-blasting solver does not see the second test is 0 by
/// itself, and the hash's multiplications then cost it minutes.
pub fn moved_off_constant(opcode: Opcode, x: &Term, flag: &Term, value: &Term) -> Option<Term> {
    if !matches!(opcode, Opcode::IntSub | Opcode::IntAdd) {
        return None;
    }
    let Term::App(Fun::Ite, parts) = flag else {
        return None;
    };
    let [test, one, zero] = &parts[..] else {
        return None;
    };
    if *one != Term::word(1) || *zero != Term::word(0) {
        return None;
    }
    let Term::App(Fun::Eq, sides) = test else {
        return None;
    };
    let c = match &sides[..] {
        [l, r] if l == x && matches!(r, Term::Bv { .. }) => r,
        [l, r] if r == x && matches!(l, Term::Bv { .. }) => l,
        _ => return None,
    };
    Some(value.eq(c).not())
}

/// The meaning of an integer op, or `None` if `opcode` is not one (or the
/// argument count is wrong). `call_pure_i` takes the function as its first
/// argument, as in traces.
pub fn encode(opcode: Opcode, args: &[Term], descr: Option<&Descr>) -> Option<Encoded> {
    use Opcode::*;
    if matches!(opcode, CallPureI | CallI) {
        let op = py_division_oopspec(descr)?;
        return encode(op, args.get(1..)?, None);
    }
    let arity = opcode.info().arity();
    if !arity.accepts(args.len()) {
        return None;
    }
    let a = args.first()?;
    let b = args.get(1);
    let binary = |fun: Fun| a.bv(fun, b.unwrap());
    let compare = |fun: Fun, swap: bool| {
        let (x, y) = if swap {
            (b.unwrap(), a)
        } else {
            (a, b.unwrap())
        };
        flag(&x.bv(fun, y))
    };
    let value = match opcode {
        IntAdd => binary(Fun::BvAdd),
        IntSub => binary(Fun::BvSub),
        IntMul => binary(Fun::BvMul),
        IntAnd => binary(Fun::BvAnd),
        IntOr => binary(Fun::BvOr),
        IntXor => binary(Fun::BvXor),
        IntLt => compare(Fun::BvSlt, false),
        IntLe => compare(Fun::BvSle, false),
        IntGt => compare(Fun::BvSlt, true),
        IntGe => compare(Fun::BvSle, true),
        UintLt => compare(Fun::BvUlt, false),
        UintLe => compare(Fun::BvUle, false),
        UintGt => compare(Fun::BvUlt, true),
        UintGe => compare(Fun::BvUle, true),
        IntEq => flag(&a.eq(b.unwrap())),
        IntNe => flag(&a.eq(b.unwrap()).not()),
        IntIsZero => flag(&a.eq(&Term::word(0))),
        IntIsTrue => flag(&truthy(a)),
        IntNeg => a.un(Fun::BvNeg),
        IntInvert => a.un(Fun::BvNot),
        SameAsI => a.clone(),
        IntForceGeZero => Term::ite(&a.bv(Fun::BvSlt, &Term::word(0)), &Term::word(0), a),
        UintMulHigh => {
            let wide = |t: &Term| t.un(Fun::ZeroExtend(64));
            wide(a)
                .bv(Fun::BvMul, &wide(b.unwrap()))
                .un(Fun::Extract(127, 64))
        }
        IntLshift | IntRshift | UintRshift => {
            let fun = match opcode {
                IntLshift => Fun::BvShl,
                IntRshift => Fun::BvAshr,
                _ => Fun::BvLshr,
            };
            let count = b.unwrap();
            let value = match count {
                // A left shift by a constant is a multiplication by a power
                // of two. Said so, the solver's normal form of products
                // matches `x * 2^k` written either way; as a shift, it has
                // to compare two multiplier circuits bit by bit (seconds).
                Term::Bv { value: k, .. } if opcode == IntLshift && *k < 64 => {
                    a.bv(Fun::BvMul, &Term::word(1i64 << k))
                }
                _ => binary(fun),
            };
            return Some(Encoded {
                value,
                defined: count.bv(Fun::BvUlt, &Term::word(64)),
                no_overflow: None,
                lemma: None,
            });
        }
        IntPydiv | IntPymod => {
            let divisor = b.unwrap();
            let value = if opcode == IntPymod {
                binary(Fun::BvSmod)
            } else {
                // Truncating division, one less when the remainder is not
                // zero and its sign differs from the divisor's.
                let quotient = binary(Fun::BvSdiv);
                let remainder = binary(Fun::BvSrem);
                let negative = |t: &Term| t.bv(Fun::BvSlt, &Term::word(0));
                let adjust =
                    truthy(&remainder).and(&negative(&remainder).eq(&negative(divisor)).not());
                Term::ite(&adjust, &quotient.bv(Fun::BvSub, &Term::word(1)), &quotient)
            };
            let lemma = (opcode == IntPydiv)
                .then(|| power_of_two_quotient(a, divisor, &value))
                .flatten();
            return Some(Encoded {
                value,
                defined: divisor.eq(&Term::word(0)).not(),
                no_overflow: None,
                lemma,
            });
        }
        IntSignext => {
            let bytes = b.unwrap();
            let from = |bits: u32| {
                a.un(Fun::Extract(bits - 1, 0))
                    .un(Fun::SignExtend(64 - bits))
            };
            let is = |n: i64| bytes.eq(&Term::word(n));
            let value = Term::ite(
                &is(1),
                &from(8),
                &Term::ite(&is(2), &from(16), &Term::ite(&is(4), &from(32), a)),
            );
            let defined = Term::app(Fun::Or, &[is(1), is(2), is(4), is(8)]);
            return Some(Encoded {
                value,
                defined,
                no_overflow: None,
                lemma: None,
            });
        }
        IntAddOvf | IntSubOvf | IntMulOvf => {
            let (fun, wide_bits) = match opcode {
                IntAddOvf => (Fun::BvAdd, 1),
                IntSubOvf => (Fun::BvSub, 1),
                _ => (Fun::BvMul, 64),
            };
            let value = binary(fun);
            // A constant is widened here: the validator leaves a product
            // with a constant factor interpreted (a product of two unknowns
            // it makes opaque at first), and z3 bit-blasts one such in a
            // second where it cannot prove the opaque one in minutes.
            let wide = |t: &Term| match t {
                Term::Bv { value, width: 64 } => {
                    let bits = 64 + wide_bits;
                    let extended = *value as u64 as i64 as i128 as u128;
                    Term::Bv {
                        value: extended & (u128::MAX >> (128 - bits)),
                        width: bits,
                    }
                }
                _ => t.un(Fun::SignExtend(wide_bits)),
            };
            let exact = wide(a).bv(fun, &wide(b.unwrap()));
            // Bit-blasted solvers cannot see that the exact product of
            // nonzero factors is negative iff their signs differ (x*x >= 0);
            // say it.
            let lemma = (opcode == IntMulOvf).then(|| {
                let negative = |t: &Term, bits: u32| {
                    t.bv(
                        Fun::BvSlt,
                        &Term::Bv {
                            value: 0,
                            width: bits,
                        },
                    )
                };
                let nonzero = |t: &Term| truthy(t);
                let signs_differ = negative(a, 64).eq(&negative(b.unwrap(), 64)).not();
                negative(&exact, 128).eq(&Term::and_all([
                    nonzero(a),
                    nonzero(b.unwrap()),
                    signs_differ,
                ]))
            });
            return Some(Encoded {
                no_overflow: Some(exact.eq(&wide(&value))),
                value,
                defined: Term::Bool(true),
                lemma,
            });
        }
        _ => return None,
    };
    Some(Encoded::total(value))
}
