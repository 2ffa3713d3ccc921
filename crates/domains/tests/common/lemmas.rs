//! Lemmas about exact products, floor division and floor modulo, for the
//! proofs that leave those operations opaque (`Prover::by_lemmas`).
//!
//! Bit-blasting a 64-bit multiplier or divider, and comparing two of them,
//! is beyond every solver we tried; yet the interval transfer functions
//! need only a few facts about them: a product is monotonic in each factor
//! (in the direction the other factor's sign gives), and so is a floor
//! quotient on one side of zero (products strictly, by a non-zero
//! factor); a floor remainder lies between zero and
//! the divisor; factors of at most MAXINT make at most MAXINT squared. Each schema below is stated twice: over the integers
//! (`schemas`, proved by the solvers' nonlinear integer arithmetic, so for
//! every width) and as instances on bitvectors (`instances`), whose truth
//! for the real bitvector operations is checked at small widths (the
//! instances' side conditions, like MININT // -1 wrapping, are where the
//! two could part). A proof by lemmas then assumes the instances about
//! every application its goal makes, plus the applications between the
//! same arguments they need.

use std::collections::HashSet;

use traceopt_domains::symbolic::{Opaque, Sym, SymBit};
use traceopt_domains::{Bit, Word};
use traceopt_smt::{Fun, Term};

use super::{bit, implies, lit, tt};

/// How an application is built: `Opaque::apply` for the lemma-based
/// proofs, the real bitvector operation to check the instances.
pub type Apply = fn(Opaque, Sym, Sym) -> Term;

/// The real bitvector meaning of an opaque operation.
pub fn real(op: Opaque, x: Sym, y: Sym) -> Term {
    let bits = traceopt_domains::symbolic::width();
    let wide = |v: Sym, extend: Fun| v.term().un(extend);
    match op {
        Opaque::SignedProduct => {
            wide(x, Fun::SignExtend(bits)).bv(Fun::BvMul, &wide(y, Fun::SignExtend(bits)))
        }
        Opaque::UnsignedProduct => {
            wide(x, Fun::ZeroExtend(bits)).bv(Fun::BvMul, &wide(y, Fun::ZeroExtend(bits)))
        }
        Opaque::FloorDiv => traceopt_domains::word::floor_division(x, y).term(),
        Opaque::FloorMod => x.term().bv(Fun::BvSmod, &y.term()),
    }
}

/// The arguments an operation is applied to, each list without repeats.
fn arguments(applied: &[(Opaque, Sym, Sym)], op: Opaque) -> (Vec<Sym>, Vec<Sym>) {
    let distinct = |pick: fn(&(Opaque, Sym, Sym)) -> Sym| {
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for a in applied.iter().filter(|a| a.0 == op) {
            let v = pick(a);
            if seen.insert(v.term()) {
                out.push(v);
            }
        }
        out
    };
    (distinct(|a| a.1), distinct(|a| a.2))
}

/// Every lemma instance about the applications in `applied`, with
/// applications built by `apply`.
pub fn instances(applied: &[(Opaque, Sym, Sym)], apply: Apply) -> SymBit {
    let mut all = tt();
    for op in Opaque::ALL {
        let (mut firsts, mut seconds) = arguments(applied, op);
        if firsts.is_empty() {
            continue;
        }
        all = all
            & match op {
                Opaque::SignedProduct | Opaque::UnsignedProduct => {
                    firsts.push(lit(0));
                    seconds.push(lit(0));
                    product_instances(op, &firsts, &seconds, apply)
                }
                Opaque::FloorDiv => quotient_instances(&firsts, &seconds, apply),
                Opaque::FloorMod => remainder_instances(applied, apply),
            };
    }
    all
}

/// A comparison of two terms of the same bitvector width.
fn cmp(fun: Fun, a: &Term, b: &Term) -> SymBit {
    bit(a.bv(fun, b))
}

/// MAXINT of `bits`-bit words.
fn max_word(bits: u32) -> u128 {
    (1u128 << (bits - 1)) - 1
}

fn zero_like(width: u32) -> Term {
    Term::Bv { value: 0, width }
}

/// Products: monotonic in each factor, zero with a zero factor.
fn product_instances(op: Opaque, firsts: &[Sym], seconds: &[Sym], apply: Apply) -> SymBit {
    let signed = op == Opaque::SignedProduct;
    let (le_word, le_wide) = if signed {
        (Fun::BvSle, Fun::BvSle)
    } else {
        (Fun::BvUle, Fun::BvUle)
    };
    let wide = 2 * traceopt_domains::symbolic::width();
    // `p(u, v1) <= p(u, v2)` when v1 <= v2 and u is not negative (always,
    // unsigned); the other way round when u is negative. Strictly when
    // v1 < v2 and u is not zero (signed).
    let monotonic = |u: Sym, p1: Term, p2: Term, v1: Sym, v2: Sym| {
        let ascending = cmp(le_wide, &p1, &p2);
        let descending = cmp(le_wide, &p2, &p1);
        if !signed {
            return implies(cmp(le_word, &v1.term(), &v2.term()), ascending);
        }
        let direction = lit(0).sle(u).select(ascending, descending);
        let strictly = lit(0)
            .slt(u)
            .select(cmp(Fun::BvSlt, &p1, &p2), cmp(Fun::BvSlt, &p2, &p1));
        implies(v1.sle(v2), direction) & implies(v1.slt(v2) & u.ne(lit(0)), strictly)
    };
    // Unsigned factors of at most MAXINT make at most MAXINT squared.
    let max = Sym::max_value();
    let max_squared = Term::Bv {
        value: (max_word(wide / 2)).pow(2),
        width: wide,
    };
    let mut all = tt();
    for &u in firsts {
        for &v in seconds {
            let p = apply(op, u, v);
            let zero_factor = u.eq(lit(0)) | v.eq(lit(0));
            all = all & implies(zero_factor, bit(p.eq(&zero_like(wide))));
            if !signed {
                let small = u.ule(max) & v.ule(max);
                all = all & implies(small, cmp(Fun::BvUle, &p, &max_squared));
            }
            for &v2 in seconds {
                all = all & monotonic(u, p.clone(), apply(op, u, v2), v, v2);
            }
            for &u2 in firsts {
                all = all & monotonic(v, p.clone(), apply(op, u2, v), u, u2);
            }
        }
    }
    all
}

/// Floor quotients: monotonic in the dividend for a fixed non-zero
/// divisor, and in the divisor on one side of zero; MININT // -1 (which
/// wraps) excepted.
fn quotient_instances(dividends: &[Sym], divisors: &[Sym], apply: Apply) -> SymBit {
    let min = Sym::min_value();
    let wraps = |x: Sym, y: Sym| x.eq(min) & y.eq(lit(-1));
    let mut all = tt();
    for &x in dividends {
        for &y in divisors {
            let q = Sym::from_term(apply(Opaque::FloorDiv, x, y));
            for &x2 in dividends {
                let q2 = Sym::from_term(apply(Opaque::FloorDiv, x2, y));
                let premise = x.sle(x2) & y.ne(lit(0)) & !wraps(x, y) & !wraps(x2, y);
                let direction = lit(0).slt(y).select(q.sle(q2), q2.sle(q));
                all = all & implies(premise, direction);
            }
            for &y2 in divisors {
                let q2 = Sym::from_term(apply(Opaque::FloorDiv, x, y2));
                let same_side = lit(0).slt(y) | y2.slt(lit(0));
                let premise = y.sle(y2) & same_side & !wraps(x, y) & !wraps(x, y2);
                let direction = lit(0).sle(x).select(q2.sle(q), q.sle(q2));
                all = all & implies(premise, direction);
            }
        }
    }
    all
}

/// Floor remainders: the sign of the divisor, smaller than it in
/// magnitude, and no farther from zero than the dividend when that has
/// the divisor's sign.
fn remainder_instances(applied: &[(Opaque, Sym, Sym)], apply: Apply) -> SymBit {
    let mut all = tt();
    for &(_, x, y) in applied.iter().filter(|a| a.0 == Opaque::FloorMod) {
        let r = Sym::from_term(apply(Opaque::FloorMod, x, y));
        let positive = lit(0).slt(y);
        let negative = y.slt(lit(0));
        all = all
            & implies(positive, lit(0).sle(r) & r.slt(y))
            & implies(positive & lit(0).sle(x), r.sle(x))
            & implies(negative, y.slt(r) & r.sle(lit(0)))
            & implies(negative & x.sle(lit(0)), x.sle(r));
    }
    all
}
