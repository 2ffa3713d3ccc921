//! A 64-bit randomized soundness test of every transfer function, for
//! what the proofs only show on narrower words (multiplication and
//! division, see the widths table in `proofs.rs`) and as a check of the
//! others on the `i64` code itself: abstract values drawn around members
//! biased to edge values (0, ±1, `i64::MIN`, `i64::MAX`, powers of two and
//! their neighbours), the interpreter's concrete result for the members
//! (`traceopt_interp::arith`, the concrete truth), which the result must
//! contain. At least `PAIRS` abstract-value/member pairs per function,
//! from a fixed seed (`RANDOM64_SEED` picks another).

use traceopt_domains::{IntBound, KnownBits};
use traceopt_interp::arith::{eval, int_ovf};
use traceopt_interp::Val;
use traceopt_ir::Opcode;

type K = KnownBits<i64>;
type B = IntBound<i64>;

/// Checked pairs per function (undefined cases are drawn again).
const PAIRS: usize = 100_000;

/// xorshift64*: small, fast in debug builds, and the same everywhere.
struct Rng(u64);

impl Rng {
    fn new(salt: &str) -> Rng {
        let seed = std::env::var("RANDOM64_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0x9e37_79b9_7f4a_7c15u64);
        // Each function its own stream, so that adding one changes no other.
        let mut state = seed;
        for byte in salt.bytes() {
            state = (state ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
        }
        Rng(state | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// An edge value half the time, else a random word.
    fn value(&mut self) -> i64 {
        let i = self.below(64) as u32;
        let edge = match self.below(12) {
            0 => 0,
            1 => 1,
            2 => -1,
            3 => i64::MIN,
            4 => i64::MAX,
            5 => 1i64 << i,
            6 => (1i64 << i).wrapping_sub(1),
            7 => (1i64 << i).wrapping_add(1),
            8 => self.below(100) as i64 - 50,
            _ => return self.next() as i64,
        };
        match self.below(3) {
            0 => edge,
            1 => edge.wrapping_neg(),
            _ => !edge,
        }
    }

    /// A second argument: the same as `x`, near it, or another value.
    fn other(&mut self, x: i64) -> i64 {
        match self.below(4) {
            0 => x,
            1 => x.wrapping_add(self.below(9) as i64 - 4),
            _ => self.value(),
        }
    }

    /// A shift count, mostly in the defined range.
    fn count(&mut self) -> i64 {
        match self.below(8) {
            0 => self.value(),
            1 => 63,
            2 => 0,
            _ => self.below(64) as i64,
        }
    }

    /// Unknown bits: none, all, low ones, an edge value or random.
    fn mask(&mut self) -> i64 {
        match self.below(7) {
            0 => 0,
            1 => -1,
            2 => (self.next() & 0xff) as i64,
            3 => self.value(),
            4 => (self.next() & self.next()) as i64,
            5 => !(1i64 << self.below(64)),
            _ => self.next() as i64,
        }
    }

    /// Known bits containing `x`.
    fn bits(&mut self, x: i64) -> K {
        KnownBits::new(x, self.mask())
    }

    /// One end of an interval around `x`, below it (`down`) or above.
    fn end(&mut self, x: i64, down: bool) -> i64 {
        let toward = |d: i64| {
            if down {
                x.saturating_sub(d)
            } else {
                x.saturating_add(d)
            }
        };
        let far = |v: i64| if down { v.min(x) } else { v.max(x) };
        match self.below(7) {
            0 => x,
            1 => toward(self.below(4) as i64),
            2 => toward(self.below(1 << 20) as i64),
            3 | 4 => far(self.value()),
            _ if down => i64::MIN,
            _ => i64::MAX,
        }
    }

    /// A bound containing `x`: a constant, unbounded, or a range with
    /// known bits, normalized (as the optimizer makes them).
    fn bound(&mut self, x: i64) -> B {
        match self.below(10) {
            0 => B::constant(x),
            1 => B::unbounded(),
            _ => {
                let (lower, upper) = (self.end(x, true), self.end(x, false));
                let bits = self.bits(x);
                B::from_parts(lower, upper, bits)
            }
        }
    }
}

/// The interpreter's result, `None` where the op is undefined (or, for
/// the `*_ovf` ops, overflows: their bounds hold when it does not).
fn concrete(op: Opcode, args: &[i64]) -> Option<i64> {
    if let [x, y] = args {
        if let Some((value, overflowed)) = int_ovf(op, *x, *y) {
            return (!overflowed).then_some(value);
        }
    }
    let vals: Vec<Val> = args.iter().map(|&a| Val::Int(a)).collect();
    match eval(op, &vals) {
        Ok(Val::Int(r)) => Some(r),
        Ok(other) => panic!("{op} gave {other:?}"),
        Err(_) => None,
    }
}

/// How the second argument is drawn.
#[derive(Clone, Copy)]
enum Second {
    Any,
    Count,
    Bytes,
}

fn second(rng: &mut Rng, x: i64, how: Second) -> i64 {
    match how {
        Second::Any => rng.other(x),
        Second::Count => rng.count(),
        Second::Bytes => match rng.below(5) {
            0 => rng.value(),
            k => 1 << (k - 1),
        },
    }
}

/// Draws until `PAIRS` defined cases are checked by `check(rng, x, y,
/// result)`; panics with the first miss.
fn sample(
    domain: &str,
    op: Opcode,
    arity: usize,
    how: Second,
    mut check: impl FnMut(&mut Rng, &[i64], i64),
) {
    let mut rng = Rng::new(&format!("{domain} {op}"));
    let mut checked = 0;
    let mut drawn = 0;
    while checked < PAIRS {
        drawn += 1;
        assert!(drawn < 20 * PAIRS, "{op}: too few defined cases");
        let x = rng.value();
        let args = if arity == 1 {
            vec![x]
        } else {
            vec![x, second(&mut rng, x, how)]
        };
        let Some(result) = concrete(op, &args) else {
            continue;
        };
        check(&mut rng, &args, result);
        checked += 1;
    }
}

fn bits_unary(op: Opcode, f: fn(K) -> K) {
    sample("bits", op, 1, Second::Any, |rng, xs, r| {
        let a = rng.bits(xs[0]);
        let out = f(a);
        assert!(
            out.contains(r),
            "{op}({a}) = {out} misses {r} (x = {})",
            xs[0]
        );
    });
}

fn bits_binary(op: Opcode, how: Second, f: fn(K, K) -> K) {
    sample("bits", op, 2, how, |rng, xs, r| {
        let (a, b) = (rng.bits(xs[0]), rng.bits(xs[1]));
        let out = f(a, b);
        assert!(
            out.contains(r),
            "{op}({a}, {b}) = {out} misses {r} for {xs:?}"
        );
    });
}

/// The public function and its raw part, on the same arguments.
fn bound_unary(op: Opcode, fs: &[fn(B) -> B]) {
    sample("bound", op, 1, Second::Any, |rng, xs, r| {
        let a = rng.bound(xs[0]);
        for f in fs {
            let out = f(a);
            assert!(
                out.contains(r),
                "{op}({a}) = {out} misses {r} (x = {})",
                xs[0]
            );
        }
    });
}

fn bound_binary(op: Opcode, how: Second, fs: &[fn(B, B) -> B]) {
    sample("bound", op, 2, how, |rng, xs, r| {
        let (a, b) = (rng.bound(xs[0]), rng.bound(xs[1]));
        for f in fs {
            let out = f(a, b);
            assert!(
                out.contains(r),
                "{op}({a}, {b}) = {out} misses {r} for {xs:?}"
            );
        }
    });
}

/// A test per function (the test threads share them out to the cores).
macro_rules! random_tests {
    ($($name:ident: $body:expr;)*) => {
        $(#[test] fn $name() { $body })*
    };
}

use Opcode::*;
use Second::{Any, Bytes, Count};

random_tests! {
    bits_invert: bits_unary(IntInvert, K::invert);
    bits_neg: bits_unary(IntNeg, K::neg);
    bits_is_true: bits_unary(IntIsTrue, K::is_true);
    bits_is_zero: bits_unary(IntIsZero, K::is_zero);
    bits_and: bits_binary(IntAnd, Any, K::and);
    bits_or: bits_binary(IntOr, Any, K::or);
    bits_xor: bits_binary(IntXor, Any, K::xor);
    bits_add: bits_binary(IntAdd, Any, K::add);
    bits_sub: bits_binary(IntSub, Any, K::sub);
    bits_mul: bits_binary(IntMul, Any, K::mul);
    bits_shl: bits_binary(IntLshift, Count, K::shl);
    bits_lshr: bits_binary(UintRshift, Count, K::lshr);
    bits_ashr: bits_binary(IntRshift, Count, K::ashr);
    bits_eq: bits_binary(IntEq, Any, K::eq);
    bits_ne: bits_binary(IntNe, Any, K::ne);
    bits_lt: bits_binary(IntLt, Any, K::lt);
    bits_le: bits_binary(IntLe, Any, K::le);
    bits_gt: bits_binary(IntGt, Any, K::gt);
    bits_ge: bits_binary(IntGe, Any, K::ge);
    bits_ult: bits_binary(UintLt, Any, K::ult);
    bits_ule: bits_binary(UintLe, Any, K::ule);
    bits_ugt: bits_binary(UintGt, Any, K::ugt);
    bits_uge: bits_binary(UintGe, Any, K::uge);
    bound_invert: bound_unary(IntInvert, &[B::invert, B::invert_raw]);
    bound_neg: bound_unary(IntNeg, &[B::neg, B::neg_raw]);
    bound_force_ge_zero: bound_unary(IntForceGeZero, &[B::force_ge_zero, B::force_ge_zero_raw]);
    bound_is_true: bound_unary(IntIsTrue, &[B::is_true]);
    bound_is_zero: bound_unary(IntIsZero, &[B::is_zero]);
    bound_same_as_i: bound_unary(SameAsI, &[|a| a]);
    bound_add: bound_binary(IntAdd, Any, &[B::add, B::add_raw]);
    bound_sub: bound_binary(IntSub, Any, &[B::sub, B::sub_raw]);
    bound_mul: bound_binary(IntMul, Any, &[B::mul, B::mul_raw]);
    bound_and: bound_binary(IntAnd, Any, &[B::and, B::and_raw]);
    bound_or: bound_binary(IntOr, Any, &[B::or, B::or_raw]);
    bound_xor: bound_binary(IntXor, Any, &[B::xor, B::xor_raw]);
    bound_lshift: bound_binary(IntLshift, Count, &[B::lshift, B::lshift_raw]);
    bound_rshift: bound_binary(IntRshift, Count, &[B::rshift, B::rshift_raw]);
    bound_urshift: bound_binary(UintRshift, Count, &[B::urshift, B::urshift_raw]);
    bound_signext: bound_binary(IntSignext, Bytes, &[B::signext, B::signext_raw]);
    bound_pydiv: bound_binary(IntPydiv, Any, &[B::pydiv, B::pydiv_raw]);
    bound_pymod: bound_binary(IntPymod, Any, &[B::pymod, B::pymod_raw]);
    bound_uint_mul_high: bound_binary(UintMulHigh, Any, &[B::uint_mul_high, B::uint_mul_high_raw]);
    bound_add_ovf: bound_binary(IntAddOvf, Any, &[B::add_ovf, B::add_ovf_raw]);
    bound_sub_ovf: bound_binary(IntSubOvf, Any, &[B::sub_ovf, B::sub_ovf_raw]);
    bound_mul_ovf: bound_binary(IntMulOvf, Any, &[B::mul_ovf, B::mul_ovf_raw]);
    bound_eq: bound_binary(IntEq, Any, &[B::eq]);
    bound_ne: bound_binary(IntNe, Any, &[B::ne]);
    bound_lt: bound_binary(IntLt, Any, &[B::lt]);
    bound_le: bound_binary(IntLe, Any, &[B::le]);
    bound_gt: bound_binary(IntGt, Any, &[B::gt]);
    bound_ge: bound_binary(IntGe, Any, &[B::ge]);
    bound_ult: bound_binary(UintLt, Any, &[B::ult]);
    bound_ule: bound_binary(UintLe, Any, &[B::ule]);
    bound_ugt: bound_binary(UintGt, Any, &[B::ugt]);
    bound_uge: bound_binary(UintGe, Any, &[B::uge]);
}

/// The mul-overflow query only says "cannot" when no member pair does.
#[test]
fn bound_mul_cannot_overflow() {
    sample("cannot overflow", IntMul, 2, Any, |rng, xs, _| {
        let (a, b) = (rng.bound(xs[0]), rng.bound(xs[1]));
        if a.mul_cannot_overflow(b) {
            assert!(
                !xs[0].overflowing_mul(xs[1]).1,
                "{a} * {b} cannot overflow, but {xs:?} does"
            );
        }
    });
}

/// The test bites: transfer functions wrong by a little are caught.
#[test]
fn weakened_functions_are_caught() {
    fn add_upper_one_short(a: B, b: B) -> B {
        let r = a.add(b);
        IntBound {
            upper: r.upper.wrapping_sub(1),
            ..r
        }
    }
    fn and_claims_bit_0(a: K, b: K) -> K {
        let r = a.and(b);
        KnownBits::new(r.ones & !1, r.unknowns & !1)
    }
    let add = std::panic::catch_unwind(|| bound_binary(IntAdd, Any, &[add_upper_one_short]));
    let and = std::panic::catch_unwind(|| bits_binary(IntAnd, Any, and_claims_bit_0));
    assert!(add.is_err() && and.is_err());
}
