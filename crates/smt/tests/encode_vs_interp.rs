//! Every integer encoding agrees with the reference interpreter: on 10,000
//! argument pairs per op (special values and random ones), the solver
//! confirms that the encoded result equals the interpreter's, the overflow
//! condition matches its flag, and the op is defined exactly where the
//! interpreter gives a value. The cases go to the solver in batches of
//! constants, so this checks the solver's reading of our terms, not a
//! re-implementation of SMT-LIB in Rust.

use std::time::Duration;
use traceopt_interp::arith::{eval, int_ovf};
use traceopt_interp::Val;
use traceopt_ir::{Descr, Opcode};
use traceopt_smt::encode::{encode, is_integer_op, truthy};
use traceopt_smt::{Outcome, Solver, Term};

const CASES_PER_OP: usize = 10_000;
const BATCH: usize = 500;

fn special_values() -> Vec<i64> {
    let mut values = vec![
        0,
        1,
        -1,
        2,
        -2,
        3,
        7,
        8,
        63,
        64,
        65,
        i64::MIN,
        i64::MAX,
        i64::MIN + 1,
        i64::MAX - 1,
    ];
    for k in 1..63 {
        let p = 1i64 << k;
        values.extend([p, p - 1, p + 1, -p, -p + 1, -p - 1]);
    }
    values
}

/// A small deterministic generator (xorshift64*), so failures reproduce.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> i64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) as i64
    }
    /// Mostly full-width values, some small ones (shift counts, byte counts).
    fn value(&mut self) -> i64 {
        let x = self.next();
        match x & 3 {
            0 => x >> 58,
            1 => x & 0x7f,
            _ => self.next(),
        }
    }
}

fn cases(arity: usize) -> Vec<Vec<i64>> {
    let special = special_values();
    let mut out = Vec::new();
    if arity == 1 {
        out.extend(special.iter().map(|&a| vec![a]));
    } else {
        let step = (special.len() * special.len() / (CASES_PER_OP / 2)).max(1);
        for (i, &a) in special.iter().enumerate() {
            for (j, &b) in special.iter().enumerate() {
                if (i * special.len() + j) % step == 0 {
                    out.push(vec![a, b]);
                }
            }
        }
    }
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    while out.len() < CASES_PER_OP {
        out.push((0..arity).map(|_| rng.value()).collect());
    }
    out
}

/// What the encoding must say about one case, as a boolean term.
fn expectation(opcode: Opcode, args: &[i64], descr: Option<&Descr>) -> Term {
    let words: Vec<Term> = args.iter().map(|&a| Term::word(a)).collect();
    let mut smt_args = words.clone();
    let interp_op = match opcode {
        Opcode::CallPureI => {
            smt_args.insert(0, Term::word(0x1234)); // the function address
            traceopt_smt::encode::py_division_oopspec(descr).unwrap()
        }
        op => op,
    };
    let enc = encode(opcode, &smt_args, descr).expect("an integer op");
    let lemma = enc.lemma.clone().unwrap_or(Term::Bool(true));
    let vals: Vec<Val> = args.iter().map(|&a| Val::Int(a)).collect();
    let ovf = if args.len() == 2 {
        int_ovf(interp_op, args[0], args[1])
    } else {
        None
    };
    let expected = match (ovf, eval(interp_op, &vals)) {
        (Some((value, overflowed)), _) => Term::and_all([
            enc.defined.clone(),
            enc.value.eq(&Term::word(value)),
            if overflowed {
                enc.no_overflow.clone().unwrap().not()
            } else {
                enc.no_overflow.clone().unwrap()
            },
        ]),
        (None, Ok(Val::Int(value))) => enc.defined.and(&enc.value.eq(&Term::word(value))),
        (None, Ok(other)) => panic!("{opcode}: the interpreter gave {other:?}"),
        (None, Err(_)) => enc.defined.not(),
    };
    expected.and(&lemma)
}

#[test]
fn every_integer_encoding_agrees_with_the_interpreter() {
    let mut solver = Solver::start(None, Duration::from_secs(60))
        .unwrap_or_else(|e| panic!("{e}\n(the test command installs z3: see README)"));
    let div = Descr::parse("<Calli 8 ii EF=0 OS=12>").unwrap();
    let modulo = Descr::parse("<Calli 8 ii EF=0 OS=14>").unwrap();
    let mut ops: Vec<(Opcode, Option<&Descr>)> = Opcode::all()
        .filter(|&op| op != Opcode::CallPureI && is_integer_op(op, None))
        .map(|op| (op, None))
        .collect();
    ops.push((Opcode::CallPureI, Some(&div)));
    ops.push((Opcode::CallPureI, Some(&modulo)));
    assert_eq!(ops.len(), 34, "the integer ops of the op table");
    for (opcode, descr) in ops {
        let arity = if opcode == Opcode::CallPureI {
            2
        } else {
            opcode.info().signature.len()
        };
        let all = cases(arity);
        assert!(all.len() >= CASES_PER_OP);
        for batch in all.chunks(BATCH) {
            let goal = Term::and_all(batch.iter().map(|args| expectation(opcode, args, descr)));
            match solver.prove(&goal, &[]).unwrap() {
                Outcome::Proved => {}
                other => {
                    // Find the case that disagrees, for the message.
                    for args in batch {
                        let one = expectation(opcode, args, descr);
                        if solver.prove(&one, &[]).unwrap() != Outcome::Proved {
                            panic!("{opcode} {args:?}: encoding and interpreter disagree: {one}");
                        }
                    }
                    panic!("{opcode}: batch not proved: {other:?}");
                }
            }
        }
    }
}

#[test]
fn truthy_and_flags_are_words() {
    assert_eq!(
        truthy(&Term::var("x")).to_string(),
        "(not (= i.x #x0000000000000000))"
    );
}

/// The lemma `encode` gives a Python quotient by `1 << k`, proved for
/// every k: 0 to 62 one at a time, each a quotient by a constant (a
/// solver proves the symbolic form only in a minute), and the rest, where
/// it claims nothing, at once; its wrong
/// twins (k up to 63, where `1 << 63` is negative, or a logical shift) are
/// refuted.
#[test]
fn a_quotient_by_a_power_of_two_is_a_shift_for_every_power() {
    let mut solver = Solver::start(None, Duration::from_secs(60))
        .unwrap_or_else(|e| panic!("{e}\n(the test command installs z3: see README)"));
    let (x, k) = (Term::var("x"), Term::var("k"));
    for name in ["x", "k"] {
        solver
            .declare(
                &traceopt_smt::Name::invented(name),
                traceopt_smt::Sort::Bv(64),
            )
            .unwrap();
    }
    let divisor = Term::word(1).bv(traceopt_smt::Fun::BvShl, &k);
    let div = Descr::parse("<Calli 8 ii EF=0 OS=12>").unwrap();
    let args = [Term::var("f"), x.clone(), divisor.clone()];
    let enc = encode(Opcode::CallPureI, &args, Some(&div)).unwrap();
    let lemma = enc.lemma.expect("a lemma for a divisor 1 << k");
    for power in 0..63 {
        let goal = k.eq(&Term::word(power)).implies(&lemma);
        assert_eq!(
            solver.prove_bv(&goal, &["x".into()]).unwrap(),
            Outcome::Proved,
            "k = {power}"
        );
    }
    // And for every other k (where it claims nothing): proved for all k.
    let rest = Term::word(62)
        .bv(traceopt_smt::Fun::BvUlt, &k)
        .implies(&lemma);
    assert_eq!(
        solver.prove_bv(&rest, &["x".into()]).unwrap(),
        Outcome::Proved
    );
    let quotient = &enc.value;
    let twins = [
        (63, quotient.eq(&x.bv(traceopt_smt::Fun::BvAshr, &k))),
        (5, quotient.eq(&x.bv(traceopt_smt::Fun::BvLshr, &k))),
    ];
    for (power, wrong) in twins {
        let goal = k.eq(&Term::word(power)).implies(&wrong);
        let outcome = solver.prove_bv(&goal, &["x".into()]).unwrap();
        assert!(
            matches!(outcome, Outcome::Counterexample(_)),
            "{wrong}: {outcome:?}"
        );
    }
}

/// The lemma `moved_off_constant` gives `x - (x == c)` and `x + (x == c)`:
/// the result is not c, proved for every x and c. Its wrong twins are
/// refuted: the result may be c's neighbour, and a flag testing another
/// value moves nothing (so none is given for it).
#[test]
fn a_value_moved_off_a_constant_is_not_that_constant() {
    use traceopt_smt::encode::{flag, moved_off_constant};
    use traceopt_smt::Fun;
    let mut solver = Solver::start(None, Duration::from_secs(60))
        .unwrap_or_else(|e| panic!("{e}\n(the test command installs z3: see README)"));
    let (x, y, c) = (Term::var("x"), Term::var("y"), Term::var("c"));
    for name in ["x", "y", "c"] {
        solver
            .declare(
                &traceopt_smt::Name::invented(name),
                traceopt_smt::Sort::Bv(64),
            )
            .unwrap();
    }
    let vars: Vec<String> = ["x", "y", "c"].map(String::from).to_vec();
    // The solver proves it for a symbolic c; the encoder gives it for
    // constants only, which this covers.
    let on_c = flag(&x.eq(&c));
    for (opcode, fun) in [(Opcode::IntSub, Fun::BvSub), (Opcode::IntAdd, Fun::BvAdd)] {
        let value = x.bv(fun, &on_c);
        let proved = value.eq(&c).not();
        assert_eq!(solver.prove_bv(&proved, &vars).unwrap(), Outcome::Proved);
        let neighbour = c.bv(fun, &Term::word(1));
        let wrong = value.eq(&neighbour).not();
        assert!(matches!(
            solver.prove_bv(&wrong, &vars).unwrap(),
            Outcome::Counterexample(_)
        ));
        let seven = Term::word(7);
        let on_seven = flag(&x.eq(&seven));
        let given = moved_off_constant(opcode, &x, &on_seven, &x.bv(fun, &on_seven));
        let given = given.expect("a lemma for x - (x == 7) and x + (x == 7)");
        assert_eq!(solver.prove_bv(&given, &vars).unwrap(), Outcome::Proved);
        let other = y.bv(fun, &on_c).eq(&c).not();
        assert!(matches!(
            solver.prove_bv(&other, &vars).unwrap(),
            Outcome::Counterexample(_)
        ));
    }
    // What the encoder gives, for -1 on either side of the test.
    let minus_one = Term::word(-1);
    for test in [x.eq(&minus_one), minus_one.eq(&x)] {
        let value = x.bv(Fun::BvSub, &flag(&test));
        let lemma = moved_off_constant(Opcode::IntSub, &x, &flag(&test), &value)
            .expect("a lemma for x - (x == -1)");
        assert_eq!(lemma, value.eq(&minus_one).not());
        assert_eq!(solver.prove_bv(&lemma, &vars).unwrap(), Outcome::Proved);
    }
    let value = y.bv(Fun::BvSub, &flag(&x.eq(&minus_one)));
    assert_eq!(
        moved_off_constant(Opcode::IntSub, &y, &flag(&x.eq(&minus_one)), &value),
        None
    );
    let value = x.bv(Fun::BvMul, &flag(&x.eq(&minus_one)));
    assert_eq!(
        moved_off_constant(Opcode::IntMul, &x, &flag(&x.eq(&minus_one)), &value),
        None
    );
}

/// A constant factor of `int_mul_ovf` is widened as a constant (negative
/// ones too), not as a `sign_extend` of one: the validator keeps a product
/// with a constant factor interpreted, and one of two unknowns it makes
/// opaque, so this decides which the exact product is. That the widened
/// constant means the same is `every_integer_encoding_agrees_with_the_interpreter`.
#[test]
fn a_constant_factor_is_widened_as_a_constant() {
    let x = Term::var("x");
    for (factor, wide) in [
        (0x0101_0101, "#x00000000000000000000000001010101"),
        (-3, "#xfffffffffffffffffffffffffffffffd"),
    ] {
        let enc = encode(Opcode::IntMulOvf, &[x.clone(), Term::word(factor)], None).unwrap();
        let no_overflow = enc
            .no_overflow
            .expect("int_mul_ovf's overflow condition")
            .to_string();
        assert!(no_overflow.contains(wide), "{no_overflow}");
        assert_eq!(
            no_overflow.matches("sign_extend").count(),
            2,
            "{no_overflow}"
        );
    }
    let enc = encode(Opcode::IntAddOvf, &[x.clone(), Term::word(-1)], None).unwrap();
    let no_overflow = enc.no_overflow.unwrap().to_string();
    assert!(
        no_overflow.contains("#b11111111111111111111111111111111111111111111111111111111111111111"),
        "{no_overflow}"
    );
}
