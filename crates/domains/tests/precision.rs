//! Precision check: for random abstract inputs, is our known-bits result
//! the best one, the one that knows every bit that all concrete results
//! share? It is exactly when each bit it leaves unknown takes both values
//! over the concrete inputs. Each such bit needs two witnesses: found by
//! running the op on sampled members first, else asked of the solver (a
//! quantifier-free query). A bit that takes only one value means a better
//! result exists: our transfer function is imprecise on that input. (That
//! the bits it knows are right is the soundness proofs' part, `proofs.rs`.)
//!
//! (Seed 003 asks one query with a quantifier instead, for a better result
//! that holds every concrete result; recent z3 gives up on most of those
//! within 20 s, while these are decided in milliseconds.)
//!
//! Findings: for and, or, xor, add and sub no better result exists on
//! any sampled input (the test requires it). Multiplication is reported,
//! not required: the tnum product is known to be imprecise.

mod common;

use std::time::Duration;

use common::lit;
use traceopt_domains::symbolic::{self, Sym};
use traceopt_domains::{KnownBits, Word};
use traceopt_smt::{Sat, Solver, Sort};

/// A small deterministic generator (xorshift), biased to few unknown bits
/// and special values, so that the inputs are like those in traces.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn value(&mut self) -> i64 {
        let specials = [0, 1, -1, 2, 7, 8, 255, 1 << 32, i64::MIN, i64::MAX, -16];
        match self.next() % 3 {
            0 => specials[(self.next() % specials.len() as u64) as usize],
            1 => (self.next() % 1000) as i64 - 500,
            _ => self.next() as i64,
        }
    }
    fn known_bits(&mut self) -> KnownBits {
        let unknowns = match self.next() % 4 {
            0 => 0,
            1 => (self.next() & self.next() & self.next()) as i64,
            2 => (self.next() % 256) as i64,
            _ => self.next() as i64,
        };
        KnownBits::new(self.value(), unknowns)
    }
    /// A member of `k`: its known bits, and random ones where unknown.
    fn member(&mut self, k: KnownBits) -> i64 {
        (k.ones & !k.unknowns) | (self.next() as i64 & k.unknowns)
    }
}

type Transfer = fn(KnownBits<i64>, KnownBits<i64>) -> KnownBits<i64>;

/// An op, on symbolic words and on concrete ones.
struct Op {
    name: &'static str,
    ours: Transfer,
    symbolic: fn(Sym, Sym) -> Sym,
    concrete: fn(i64, i64) -> i64,
}

/// Concrete runs of the op tried before any solver query.
const SAMPLES: usize = 64;

/// The bits of `ours` (the result for `a`, `b`) that are unknown but take
/// one value only over the members of `a` and `b`: empty if `ours` is the
/// best result; `Err` if the solver could not tell.
fn constant_unknown_bits(
    solver: &mut Solver,
    rng: &mut Rng,
    op: &Op,
    [a, b]: [KnownBits; 2],
    ours: KnownBits,
) -> Result<Vec<u32>, String> {
    // Bits seen as 0 and as 1 in concrete results.
    let (mut zeros, mut ones) = (0i64, 0i64);
    for _ in 0..SAMPLES {
        let r = (op.concrete)(rng.member(a), rng.member(b));
        (zeros, ones) = (zeros | !r, ones | r);
    }
    let mut constant = Vec::new();
    for bit in 0..64 {
        let mask = 1i64 << bit;
        if ours.unknowns & mask == 0 || zeros & ones & mask != 0 {
            continue;
        }
        // Two members' results that differ at the bit.
        symbolic::reset();
        let lift = |k: KnownBits| KnownBits::new(lit(k.ones), lit(k.unknowns));
        let (sa, sb) = (lift(a), lift(b));
        let names = ["v1", "v2", "w1", "w2"];
        let [v1, v2, w1, w2] = names.map(Sym::var);
        let bit_of = |x: Sym| (x & lit(mask)).ne(lit(0));
        let differ = sa.contains(v1)
            & sb.contains(v2)
            & sa.contains(w1)
            & sb.contains(w2)
            & bit_of((op.symbolic)(v1, v2))
            & !bit_of((op.symbolic)(w1, w2));
        solver.push().map_err(|e| e.to_string())?;
        for name in names {
            solver
                .declare(name, Sort::Bv(64))
                .map_err(|e| e.to_string())?;
        }
        solver.assert(&differ.term()).map_err(|e| e.to_string())?;
        let answer = solver.check(&[]).map_err(|e| e.to_string());
        solver.pop().map_err(|e| e.to_string())?;
        match answer? {
            Sat::Sat(_) => {}
            Sat::Unsat => constant.push(bit),
            Sat::Unknown(reason) => return Err(reason),
        }
    }
    Ok(constant)
}

/// Samples `count` inputs; returns (optimal, imprecise examples, unknown).
fn survey(op: &Op, count: usize) -> (usize, Vec<String>, usize) {
    let mut solver = Solver::start(None, Duration::from_secs(20)).expect("an SMT solver");
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ op.name.len() as u64);
    let (mut optimal, mut imprecise, mut unknown) = (0, Vec::new(), 0);
    for _ in 0..count {
        let (a, b) = (rng.known_bits(), rng.known_bits());
        let result = (op.ours)(a, b);
        match constant_unknown_bits(&mut solver, &mut rng, op, [a, b], result) {
            Ok(bits) if bits.is_empty() => optimal += 1,
            Ok(bits) => imprecise.push(format!(
                "{}({a}, {b}) = {result}, but bits {bits:?} are the same in every result",
                op.name
            )),
            Err(_) => unknown += 1,
        }
    }
    eprintln!(
        "{}: {optimal} optimal, {} imprecise, {unknown} unknown",
        op.name,
        imprecise.len()
    );
    (optimal, imprecise, unknown)
}

#[test]
fn bitwise_add_and_sub_are_optimal() {
    let ops = [
        Op {
            name: "and",
            ours: |a, b| a.and(b),
            symbolic: |x, y| x & y,
            concrete: |x, y| x & y,
        },
        Op {
            name: "or",
            ours: |a, b| a.or(b),
            symbolic: |x, y| x | y,
            concrete: |x, y| x | y,
        },
        Op {
            name: "xor",
            ours: |a, b| a.xor(b),
            symbolic: |x, y| x ^ y,
            concrete: |x, y| x ^ y,
        },
        Op {
            name: "add",
            ours: |a, b| a.add(b),
            symbolic: |x, y| x.add(y),
            concrete: i64::wrapping_add,
        },
        Op {
            name: "sub",
            ours: |a, b| a.sub(b),
            symbolic: |x, y| x.sub(y),
            concrete: i64::wrapping_sub,
        },
    ];
    for op in &ops {
        let (optimal, imprecise, unknown) = survey(op, 25);
        assert!(imprecise.is_empty(), "{}", imprecise.join("\n"));
        assert!(
            optimal >= 20,
            "{}: only {optimal} of 25 decided ({unknown} unknown)",
            op.name
        );
    }
}

#[test]
fn a_weakened_add_is_found_imprecise() {
    // The sum with one more bit unknown than it needs: the survey must
    // notice, or a pass of the test above would mean nothing.
    let weakened = Op {
        name: "add with bit 0 forgotten",
        ours: |a, b| {
            let sum = a.add(b);
            KnownBits::new(sum.ones, sum.unknowns | 1)
        },
        symbolic: |x, y| x.add(y),
        concrete: i64::wrapping_add,
    };
    let (_, imprecise, _) = survey(&weakened, 25);
    assert!(!imprecise.is_empty(), "a weakened add passed as optimal");
}

#[test]
fn multiplication_precision_is_reported() {
    let mul = Op {
        name: "mul",
        ours: |a, b| a.mul(b),
        symbolic: |x, y| x.mul(y),
        concrete: i64::wrapping_mul,
    };
    let (optimal, imprecise, _) = survey(&mul, 10);
    for example in &imprecise {
        eprintln!("  {example}");
    }
    // Informational: the product is allowed to be imprecise; the survey
    // must still have decided some inputs.
    assert!(optimal + imprecise.len() > 0, "no input decided");
}
