//! The trusted base of the domain proofs: each required method of the
//! `Word` trait has two implementations, `i64` (run by the optimizer) and
//! SMT-LIB (run by the proofs). This test evaluates both on 2,000 argument
//! pairs per primitive (special values and random ones) and has the solver
//! confirm that they agree on every pair.

mod narrow;

use std::time::Duration;

use narrow::Narrow;
use traceopt_domains::symbolic::{self, Sym};
use traceopt_domains::{Bit, Word};
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

/// A required method of `Word`, on words of type `W`.
enum Primitive<W: Word> {
    Value(fn(W, W) -> W),
    Bit(fn(W, W) -> W::Bit),
}

/// Every required method, for any word type (shift counts and small
/// divisors masked as the SMT side masks them).
fn primitives<W: Word>() -> Vec<(&'static str, Primitive<W>)> {
    use Primitive::*;
    vec![
        ("add", Value(|a, b| a.add(b))),
        ("sub", Value(|a, b| a.sub(b))),
        ("mul", Value(|a, b| a.mul(b))),
        ("neg", Value(|a, _| a.neg())),
        ("and", Value(|a, b| a & b)),
        ("or", Value(|a, b| a | b)),
        ("xor", Value(|a, b| a ^ b)),
        ("not", Value(|a, _| !a)),
        ("shl", Value(|a, b| a.shl(b & W::lit(127)))),
        ("lshr", Value(|a, b| a.lshr(b & W::lit(127)))),
        ("ashr", Value(|a, b| a.ashr(b & W::lit(127)))),
        ("sdiv", Value(|a, b| a.sdiv(b))),
        ("srem", Value(|a, b| a.srem(b))),
        ("floormod", Value(|a, b| a.floormod(b))),
        ("sdiv by small", Value(|a, b| a.sdiv(b & W::lit(7)))),
        ("umul_high", Value(|a, b| a.umul_high(b))),
        ("smear_right", Value(|a, _| a.smear_right())),
        ("add_overflows", Bit(|a, b| a.add_overflows(b))),
        ("sub_overflows", Bit(|a, b| a.sub_overflows(b))),
        ("mul_overflows", Bit(|a, b| a.mul_overflows(b))),
        ("eq", Bit(|a, b| a.eq(b))),
        ("slt", Bit(|a, b| a.slt(b))),
        ("sle", Bit(|a, b| a.sle(b))),
        ("ult", Bit(|a, b| a.ult(b))),
        ("ule", Bit(|a, b| a.ule(b))),
    ]
}

/// Has the solver confirm that the concrete words agree with the
/// symbolic ones (at the current symbolic width) on every pair: `value`
/// reads a concrete word as an `i64`.
fn agree_on<W: Word>(pairs: &[(W, W)], value: fn(W) -> i64) {
    let mut solver = Solver::start(None, Duration::from_secs(60)).expect("an SMT solver");
    let mut failures = Vec::new();
    for ((name, symbolic), (_, concrete)) in primitives::<Sym>().iter().zip(&primitives::<W>()) {
        symbolic::reset();
        let facts = pairs.iter().map(|&(a, b)| {
            let (x, y) = (Sym::lit(value(a)), Sym::lit(value(b)));
            match (symbolic, concrete) {
                (Primitive::Value(sym), Primitive::Value(conc)) => {
                    sym(x, y).eq(Sym::lit(value(conc(a, b)))).term()
                }
                (Primitive::Bit(sym), Primitive::Bit(conc)) => {
                    let s = sym(x, y).term();
                    if conc(a, b).known().expect("a concrete truth value") {
                        s
                    } else {
                        s.not()
                    }
                }
                _ => unreachable!("both tables list the same primitives"),
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

#[test]
fn symbolic_and_concrete_primitives_agree() {
    agree_on::<i64>(&samples(), |a| a);
}

/// The narrow words of the exhaustive checks, against SMT-LIB at their
/// width, on every pair of 4-bit words.
#[test]
fn narrow_and_symbolic_primitives_agree_on_every_pair_of_4_bit_words() {
    symbolic::set_width(4);
    let pairs: Vec<_> = Narrow::<4>::all()
        .flat_map(|a| Narrow::<4>::all().map(move |b| (a, b)))
        .collect();
    agree_on::<Narrow<4>>(&pairs, |a| a.0);
}
