//! The trusted base of the domain proofs: each required method of the
//! `Word` trait has two implementations, `i64` (run by the optimizer) and
//! SMT-LIB (run by the proofs). This test evaluates both on 2,000 argument
//! pairs per primitive (special values and random ones) and has the solver
//! confirm that they agree on every pair.

use std::time::Duration;

use traceopt_domains::symbolic::{self, Sym, SymBit};
use traceopt_domains::Word;
use traceopt_smt::{Outcome, Solver, Term};

fn samples() -> Vec<(i64, i64)> {
    let mut specials: Vec<i64> = vec![0, 1, -1, 2, 3, 63, 64, 65, 100, -100, i64::MIN, i64::MAX];
    for i in 0..64 {
        specials.extend([
            1i64 << i,
            (1i64 << i).wrapping_sub(1),
            (1i64 << i).wrapping_neg(),
        ]);
    }
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut random = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state as i64
    };
    (0..2000)
        .map(|i| match i % 3 {
            0 => (
                specials[i % specials.len()],
                specials[(i / 3) % specials.len()],
            ),
            1 => (specials[i % specials.len()], random()),
            _ => (random(), random()),
        })
        .collect()
}

enum Primitive {
    Value(fn(Sym, Sym) -> Sym, fn(i64, i64) -> i64),
    Bit(fn(Sym, Sym) -> SymBit, fn(i64, i64) -> bool),
}

#[test]
fn symbolic_and_concrete_primitives_agree() {
    use Primitive::*;
    let primitives: Vec<(&str, Primitive)> = vec![
        ("add", Value(|a, b| a.add(b), |a, b| a.add(b))),
        ("sub", Value(|a, b| a.sub(b), |a, b| a.sub(b))),
        ("mul", Value(|a, b| a.mul(b), |a, b| a.mul(b))),
        ("neg", Value(|a, _| a.neg(), |a, _| a.neg())),
        ("and", Value(|a, b| a & b, |a, b| a & b)),
        ("or", Value(|a, b| a | b, |a, b| a | b)),
        ("xor", Value(|a, b| a ^ b, |a, b| a ^ b)),
        ("not", Value(|a, _| !a, |a, _| !a)),
        (
            "shl",
            Value(
                |a, b| a.shl(b & Sym::lit(127)),
                |a, b| Word::shl(a, b & 127),
            ),
        ),
        (
            "lshr",
            Value(
                |a, b| a.lshr(b & Sym::lit(127)),
                |a, b| Word::lshr(a, b & 127),
            ),
        ),
        (
            "ashr",
            Value(
                |a, b| a.ashr(b & Sym::lit(127)),
                |a, b| Word::ashr(a, b & 127),
            ),
        ),
        ("sdiv", Value(|a, b| a.sdiv(b), |a, b| a.sdiv(b))),
        ("srem", Value(|a, b| a.srem(b), |a, b| a.srem(b))),
        (
            "sdiv by small",
            Value(|a, b| a.sdiv(b & Sym::lit(7)), |a, b| a.sdiv(b & 7)),
        ),
        (
            "umul_high",
            Value(|a, b| a.umul_high(b), |a, b| a.umul_high(b)),
        ),
        (
            "smear_right",
            Value(|a, _| a.smear_right(), |a, _| a.smear_right()),
        ),
        (
            "add_overflows",
            Bit(|a, b| a.add_overflows(b), |a, b| a.add_overflows(b)),
        ),
        (
            "sub_overflows",
            Bit(|a, b| a.sub_overflows(b), |a, b| a.sub_overflows(b)),
        ),
        (
            "mul_overflows",
            Bit(|a, b| a.mul_overflows(b), |a, b| a.mul_overflows(b)),
        ),
        ("eq", Bit(|a, b| a.eq(b), |a, b| a == b)),
        ("slt", Bit(|a, b| a.slt(b), |a, b| a < b)),
        ("sle", Bit(|a, b| a.sle(b), |a, b| a <= b)),
        ("ult", Bit(|a, b| a.ult(b), |a, b| (a as u64) < (b as u64))),
        ("ule", Bit(|a, b| a.ule(b), |a, b| (a as u64) <= (b as u64))),
    ];
    let mut solver = Solver::start(None, Duration::from_secs(60)).expect("an SMT solver");
    let samples = samples();
    let mut failures = Vec::new();
    for (name, primitive) in &primitives {
        symbolic::reset();
        let facts = samples.iter().map(|&(a, b)| {
            let (x, y) = (Sym::lit(a), Sym::lit(b));
            match primitive {
                Value(sym, conc) => sym(x, y).eq(Sym::lit(conc(a, b))).term(),
                Bit(sym, conc) => {
                    let s = sym(x, y).term();
                    if conc(a, b) {
                        s
                    } else {
                        s.not()
                    }
                }
            }
        });
        let goal = Term::and_all(facts);
        match solver.prove(&goal, &[]).expect("solver") {
            Outcome::Proved => {}
            other => failures.push(format!("{name}: {other:?}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
