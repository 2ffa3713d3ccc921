//! Optimality at small widths: how often is each transfer function's result
//! the best one the domain can express?
//!
//! The domains are generic over the word, so they also run on words of 3
//! to 6 bits (`narrow/mod.rs`). There, every abstract value and every
//! member can be listed: for each input (every abstract value, or pair of
//! them), the exact result is the set of concrete results over all
//! members, and the best abstract result is the smallest bound or
//! known-bits value holding that set (its least and greatest member and
//! the bits all members share). Ours is *optimal* on an input when it
//! stands for exactly the best result's members, and *unsound* when it
//! misses an exact result (the proofs say that never happens at 64 bits;
//! here it is checked again, exhaustively).
//!
//! Sets of narrow words are `u64` bit masks (bit `i` is the word
//! `Narrow::MIN + i`), so the check is exhaustive at 4 bits for pairs of
//! bounds and at 5 or 6 bits for known bits and single bounds; the
//! refinements by an op's result take three bounds, and run at 3 bits.
//!
//! How often each function is optimal is recorded in
//! `tests/optimality-floors.txt`. The test fails when a function is unsound
//! anywhere, or optimal on fewer inputs than its floor: a weakened transfer
//! function (one that soundly gives up more often) fails it, which the
//! soundness proofs cannot notice. When a function gets better, the test
//! prints the new count so the floor can be raised.

mod narrow;

use std::collections::{BTreeMap, HashSet};
use std::fmt::Write as _;

use narrow::Narrow;
use traceopt_domains::{IntBound, KnownBits, Operand, Relation, Word};

/// A set of `N`-bit words, one bit per word (`N` at most 6).
type Set = u64;

fn set_of<const N: u32>(words: impl IntoIterator<Item = Narrow<N>>) -> Set {
    words.into_iter().fold(0, |set, x| set | 1 << x.index())
}

fn members<const N: u32>(set: Set) -> impl Iterator<Item = Narrow<N>> {
    Narrow::<N>::all().filter(move |x| set & 1 << x.index() != 0)
}

/// An abstract domain over `N`-bit words: what a value stands for, and
/// the smallest value holding a set.
trait Domain<const N: u32>: Copy + std::fmt::Debug {
    fn gamma(self) -> Set;
    /// The members of the best abstraction of a non-empty `set`.
    fn best(set: Set) -> Set;
    /// Every value of the domain, each once.
    fn every() -> Vec<Self>;
}

/// The bits every member of `set` has set, and those every member has clear.
fn common_bits<const N: u32>(set: Set) -> (i64, i64) {
    members::<N>(set).fold((-1, -1), |(ones, zeros), x| (ones & x.0, zeros & !x.0))
}

impl<const N: u32> Domain<N> for KnownBits<Narrow<N>> {
    fn gamma(self) -> Set {
        set_of(Narrow::<N>::all().filter(|&x| self.contains(x).0))
    }
    fn best(set: Set) -> Set {
        let (ones, zeros) = common_bits::<N>(set);
        set_of(Narrow::<N>::all().filter(|x| x.0 & ones == ones && !x.0 & zeros == zeros))
    }
    fn every() -> Vec<Self> {
        let all = Narrow::<N>::all;
        let mut every: Vec<_> = all()
            .flat_map(|unknowns| all().map(move |ones| KnownBits::new(ones, unknowns)))
            .collect::<HashSet<_>>()
            .into_iter()
            .collect();
        // In a fixed order, so that the first non-optimal input reported
        // is the same from run to run.
        every.sort_by_key(|k| (k.ones.0, k.unknowns.0));
        every
    }
}

impl<const N: u32> Domain<N> for IntBound<Narrow<N>> {
    fn gamma(self) -> Set {
        set_of(Narrow::<N>::all().filter(|&x| self.contains(x).0))
    }
    fn best(set: Set) -> Set {
        let lower = set.trailing_zeros() as i64 + Narrow::<N>::MIN;
        let upper = 63 - set.leading_zeros() as i64 + Narrow::<N>::MIN;
        KnownBits::<Narrow<N>>::best(set) & set_of((lower..=upper).map(Narrow::<N>))
    }
    /// Every normalized bound (the only ones the optimizer hands out).
    fn every() -> Vec<Self> {
        let mut bounds = HashSet::new();
        for bits in KnownBits::<Narrow<N>>::every() {
            for lower in Narrow::<N>::all() {
                for upper in Narrow::<N>::all().filter(|u| u.0 >= lower.0) {
                    let (bound, empty) = IntBound { lower, upper, bits }.normalize();
                    if !empty.0 {
                        bounds.insert(bound);
                    }
                }
            }
        }
        let mut bounds: Vec<_> = bounds.into_iter().collect();
        bounds.sort_by_key(|b| (b.lower.0, b.upper.0, b.bits.ones.0, b.bits.unknowns.0));
        bounds
    }
}

/// An abstract value with its members listed once.
struct Value<D, const N: u32> {
    value: D,
    set: Set,
    members: Vec<Narrow<N>>,
}

fn values<D: Domain<N>, const N: u32>() -> Vec<Value<D, N>> {
    D::every()
        .into_iter()
        .map(|value| {
            let set = value.gamma();
            Value {
                value,
                set,
                members: members(set).collect(),
            }
        })
        .collect()
}

/// How one function did on every input it was tried on.
#[derive(Default)]
struct Tally {
    inputs: u64,
    optimal: u64,
    unsound: Vec<String>,
    example: Option<String>,
}

impl Tally {
    /// Ours stands for `ours`; the exact results are `exact`, and the best
    /// result stands for `best`.
    fn record(&mut self, ours: Set, exact: Set, best: Set, input: impl FnOnce() -> String) {
        self.inputs += 1;
        if exact & !ours != 0 {
            if self.unsound.len() < 3 {
                self.unsound.push(input());
            }
        } else if ours == best {
            self.optimal += 1;
        } else if self.example.is_none() {
            self.example = Some(input());
        }
    }
}

/// The tallies of a run, by function name (with its width).
type Tallies = BTreeMap<String, Tally>;

fn tally<'a>(tallies: &'a mut Tallies, name: &str, width: u32) -> &'a mut Tally {
    tallies.entry(format!("{name} @{width}")).or_default()
}

/// `op` of one argument: ours against the best result over the members
/// for which `concrete` is defined.
fn unary<D: Domain<N>, const N: u32>(
    tallies: &mut Tallies,
    name: &str,
    space: &[Value<D, N>],
    ours: impl Fn(D) -> D,
    concrete: impl Fn(Narrow<N>) -> Option<Narrow<N>>,
) {
    let t = tally(tallies, name, N);
    for a in space {
        let exact = set_of(a.members.iter().filter_map(|&x| concrete(x)));
        if exact != 0 {
            let result = ours(a.value);
            t.record(result.gamma(), exact, D::best(exact), || {
                format!("{:?} gives {result:?}", a.value)
            });
        }
    }
}

/// `op` of two arguments, on every pair of values of `space`.
fn binary<D: Domain<N>, R: Domain<N>, const N: u32>(
    tallies: &mut Tallies,
    name: &str,
    space: &[Value<D, N>],
    ours: impl Fn(D, D) -> R,
    concrete: impl Fn(Narrow<N>, Narrow<N>) -> Option<Narrow<N>>,
) {
    let t = tally(tallies, name, N);
    for a in space {
        for b in space {
            let exact = a.members.iter().fold(0, |set, &x| {
                set | set_of(b.members.iter().filter_map(|&y| concrete(x, y)))
            });
            if exact != 0 {
                let result = ours(a.value, b.value);
                t.record(result.gamma(), exact, R::best(exact), || {
                    format!("{:?}, {:?} gives {result:?}", a.value, b.value)
                });
            }
        }
    }
}

/// A narrowing: ours (`None` for "impossible") against the best bound on
/// the members of `a` that `allowed` keeps.
fn narrowing<const N: u32>(
    t: &mut Tally,
    a: &Value<IntBound<Narrow<N>>, N>,
    allowed: Set,
    ours: Option<IntBound<Narrow<N>>>,
    input: impl FnOnce() -> String,
) {
    let exact = a.set & allowed;
    let best = if exact == 0 {
        0
    } else {
        IntBound::<Narrow<N>>::best(exact)
    };
    t.record(ours.map_or(0, |b| b.gamma()), exact, best, || {
        format!("{} gives {ours:?}", input())
    });
}

fn some<const N: u32>(
    bound: IntBound<Narrow<N>>,
    impossible: narrow::NarrowBit<N>,
) -> Option<IntBound<Narrow<N>>> {
    (!impossible.0).then_some(bound)
}

type Word2<const N: u32> = fn(Narrow<N>, Narrow<N>) -> Option<Narrow<N>>;

fn truth<const N: u32>(value: bool) -> Option<Narrow<N>> {
    Some(Narrow(i64::from(value)))
}

/// The comparisons, by their trace op name, on words.
fn comparisons<const N: u32>() -> Vec<(&'static str, Word2<N>)> {
    vec![
        ("eq", |x, y| truth(x == y)),
        ("ne", |x, y| truth(x != y)),
        ("lt", |x, y| truth(x.0 < y.0)),
        ("le", |x, y| truth(x.0 <= y.0)),
        ("gt", |x, y| truth(x.0 > y.0)),
        ("ge", |x, y| truth(x.0 >= y.0)),
        ("ult", |x, y| truth(x.ult(y).0)),
        ("ule", |x, y| truth(x.ule(y).0)),
        ("ugt", |x, y| truth(y.ult(x).0)),
        ("uge", |x, y| truth(y.ule(x).0)),
    ]
}

/// A shift count a trace may use: 0 to the width less one.
fn count<const N: u32>(c: Narrow<N>) -> bool {
    (0..i64::from(N)).contains(&c.0)
}

fn no_overflow<const N: u32>(
    result: Narrow<N>,
    overflows: narrow::NarrowBit<N>,
) -> Option<Narrow<N>> {
    (!overflows.0).then_some(result)
}

type KB<const N: u32> = KnownBits<Narrow<N>>;
type IB<const N: u32> = IntBound<Narrow<N>>;
type Bits2<const N: u32> = fn(KB<N>, KB<N>) -> KB<N>;
type Bound2<const N: u32> = fn(IB<N>, IB<N>) -> IB<N>;
/// A relation between words.
type Holds<const N: u32> = fn(Narrow<N>, Narrow<N>) -> bool;

fn known_bits_functions<const N: u32>(tallies: &mut Tallies) {
    let space = values::<KB<N>, N>();
    let t = tallies;
    unary(t, "bits invert", &space, |a| a.invert(), |x| Some(!x));
    unary(t, "bits neg", &space, |a| a.neg(), |x| Some(x.neg()));
    unary(
        t,
        "bits is_true",
        &space,
        |a| a.is_true(),
        |x| truth(x.0 != 0),
    );
    unary(
        t,
        "bits is_zero",
        &space,
        |a| a.is_zero(),
        |x| truth(x.0 == 0),
    );
    binary(t, "bits and", &space, |a, b| a.and(b), |x, y| Some(x & y));
    binary(t, "bits or", &space, |a, b| a.or(b), |x, y| Some(x | y));
    binary(t, "bits xor", &space, |a, b| a.xor(b), |x, y| Some(x ^ y));
    binary(
        t,
        "bits add",
        &space,
        |a, b| a.add(b),
        |x, y| Some(x.add(y)),
    );
    binary(
        t,
        "bits sub",
        &space,
        |a, b| a.sub(b),
        |x, y| Some(x.sub(y)),
    );
    binary(
        t,
        "bits mul",
        &space,
        |a, b| a.mul(b),
        |x, y| Some(x.mul(y)),
    );
    binary(
        t,
        "bits shl",
        &space,
        |a, b| a.shl(b),
        |x, c| count(c).then(|| x.shl(c)),
    );
    binary(
        t,
        "bits ashr",
        &space,
        |a, b| a.ashr(b),
        |x, c| count(c).then(|| x.ashr(c)),
    );
    binary(
        t,
        "bits lshr",
        &space,
        |a, b| a.lshr(b),
        |x, c| count(c).then(|| x.lshr(c)),
    );
    let ours: [Bits2<N>; 10] = [
        KB::eq,
        KB::ne,
        KB::lt,
        KB::le,
        KB::gt,
        KB::ge,
        KB::ult,
        KB::ule,
        KB::ugt,
        KB::uge,
    ];
    for ((name, concrete), ours) in comparisons::<N>().into_iter().zip(ours) {
        binary(t, &format!("bits {name}"), &space, ours, concrete);
    }
}

fn single_bound_functions<const N: u32>(tallies: &mut Tallies) {
    let space = values::<IB<N>, N>();
    let t = tallies;
    unary(t, "invert", &space, |a| a.invert(), |x| Some(!x));
    unary(t, "neg", &space, |a| a.neg(), |x| Some(x.neg()));
    unary(
        t,
        "force_ge_zero",
        &space,
        |a| a.force_ge_zero(),
        |x| Some(Narrow(x.0.max(0))),
    );
    unary(t, "is_true", &space, |a| a.is_true(), |x| truth(x.0 != 0));
    unary(t, "is_zero", &space, |a| a.is_zero(), |x| truth(x.0 == 0));
    let refine_true = tally(t, "refine_true", N);
    let nonzero = set_of(Narrow::<N>::all().filter(|x| x.0 != 0));
    for a in &space {
        let (bound, impossible) = a.value.refine_true();
        narrowing(refine_true, a, nonzero, some(bound, impossible), || {
            format!("{:?}", a.value)
        });
    }
    let refine_false = tally(t, "refine_false", N);
    let zero = set_of([Narrow::<N>(0)]);
    for a in &space {
        let (bound, impossible) = a.value.refine_false();
        narrowing(refine_false, a, zero, some(bound, impossible), || {
            format!("{:?}", a.value)
        });
    }
}

fn bound_pair_functions<const N: u32>(tallies: &mut Tallies) {
    let space = values::<IB<N>, N>();
    let t = tallies;
    let forward: [(&str, Bound2<N>, Word2<N>); 14] = [
        ("add", IB::add, |x, y| Some(x.add(y))),
        ("sub", IB::sub, |x, y| Some(x.sub(y))),
        ("mul", IB::mul, |x, y| Some(x.mul(y))),
        ("and", IB::and, |x, y| Some(x & y)),
        ("or", IB::or, |x, y| Some(x | y)),
        ("xor", IB::xor, |x, y| Some(x ^ y)),
        ("lshift", IB::lshift, |x, c| count(c).then(|| x.shl(c))),
        ("rshift", IB::rshift, |x, c| count(c).then(|| x.ashr(c))),
        ("urshift", IB::urshift, |x, c| count(c).then(|| x.lshr(c))),
        ("pydiv", IB::pydiv, |x, y| (y.0 != 0).then(|| x.floordiv(y))),
        ("pymod", IB::pymod, |x, y| (y.0 != 0).then(|| x.floormod(y))),
        ("uint_mul_high", IB::uint_mul_high, |x, y| {
            Some(x.umul_high(y))
        }),
        ("add_ovf", IB::add_ovf, |x, y| {
            no_overflow(x.add(y), x.add_overflows(y))
        }),
        ("sub_ovf", IB::sub_ovf, |x, y| {
            no_overflow(x.sub(y), x.sub_overflows(y))
        }),
    ];
    for (name, ours, concrete) in forward {
        binary(t, name, &space, ours, concrete);
    }
    binary(t, "mul_ovf", &space, IB::mul_ovf, |x, y| {
        no_overflow(x.mul(y), x.mul_overflows(y))
    });
    let ours: [Bound2<N>; 10] = [
        IB::eq,
        IB::ne,
        IB::lt,
        IB::le,
        IB::gt,
        IB::ge,
        IB::ult,
        IB::ule,
        IB::ugt,
        IB::uge,
    ];
    for ((name, concrete), ours) in comparisons::<N>().into_iter().zip(ours) {
        binary(t, name, &space, ours, concrete);
    }
    cannot_overflow(t, &space);
    lattice(t, &space);
    relations(t, &space);
}

/// `*_cannot_overflow`: optimal when it says so whenever no pair of
/// members overflows.
fn cannot_overflow<const N: u32>(tallies: &mut Tallies, space: &[Value<IB<N>, N>]) {
    type Check<const N: u32> = (
        &'static str,
        fn(IB<N>, IB<N>) -> narrow::NarrowBit<N>,
        fn(Narrow<N>, Narrow<N>) -> narrow::NarrowBit<N>,
    );
    let checks: [Check<N>; 3] = [
        (
            "add_cannot_overflow",
            IB::add_cannot_overflow,
            Narrow::add_overflows,
        ),
        (
            "sub_cannot_overflow",
            IB::sub_cannot_overflow,
            Narrow::sub_overflows,
        ),
        (
            "mul_cannot_overflow",
            IB::mul_cannot_overflow,
            Narrow::mul_overflows,
        ),
    ];
    for (name, ours, overflows) in checks {
        let t = tally(tallies, name, N);
        for a in space {
            for b in space {
                let never = a
                    .members
                    .iter()
                    .all(|&x| b.members.iter().all(|&y| !overflows(x, y).0));
                // As sets of answers: {yes} when it cannot overflow.
                let (exact, answer) = (
                    1 + Set::from(never),
                    1 + Set::from(ours(a.value, b.value).0),
                );
                t.record(answer, exact, exact, || {
                    format!("{:?}, {:?}", a.value, b.value)
                });
            }
        }
    }
}

/// `join` and `intersect`: the best bound on the union or intersection.
fn lattice<const N: u32>(tallies: &mut Tallies, space: &[Value<IB<N>, N>]) {
    let t = tally(tallies, "join", N);
    for a in space {
        for b in space {
            let (exact, result) = (a.set | b.set, a.value.join(b.value));
            t.record(result.gamma(), exact, IB::<N>::best(exact), || {
                format!("{:?}, {:?}", a.value, b.value)
            });
        }
    }
    let t = tally(tallies, "intersect", N);
    for a in space {
        for b in space {
            let (result, empty) = a.value.intersect(b.value);
            narrowing(t, a, b.set, some(result, empty), || {
                format!("{:?}, {:?}", a.value, b.value)
            });
        }
    }
}

/// `refine` by each relation: both arguments narrowed to the members that
/// have a partner in the other for which the relation holds.
fn relations<const N: u32>(tallies: &mut Tallies, space: &[Value<IB<N>, N>]) {
    let relations: [(Relation, Holds<N>); 6] = [
        (Relation::Lt, |x, y| x.0 < y.0),
        (Relation::Le, |x, y| x.0 <= y.0),
        (Relation::Ult, |x, y| x.ult(y).0),
        (Relation::Ule, |x, y| x.ule(y).0),
        (Relation::Eq, |x, y| x == y),
        (Relation::Ne, |x, y| x != y),
    ];
    for (relation, holds) in relations {
        let name = format!("refine {relation:?}").to_lowercase();
        for a in space {
            for b in space {
                let (left, right, impossible) = a.value.refine(relation, b.value);
                let input = || format!("{:?} {relation:?} {:?}", a.value, b.value);
                let left_allowed =
                    set_of(Narrow::<N>::all().filter(|&x| b.members.iter().any(|&y| holds(x, y))));
                let right_allowed =
                    set_of(Narrow::<N>::all().filter(|&y| a.members.iter().any(|&x| holds(x, y))));
                narrowing(
                    tally(tallies, &format!("{name}, left"), N),
                    a,
                    left_allowed,
                    some(left, impossible),
                    input,
                );
                narrowing(
                    tally(tallies, &format!("{name}, right"), N),
                    b,
                    right_allowed,
                    some(right, impossible),
                    input,
                );
            }
        }
    }
}

/// `refine_by_result`: `self` narrowed to the members that, with some
/// member of `other`, give a member of `result`. Every `other` and
/// `result`; every `self` too if `any_self`, else only the unbounded one
/// (which measures the constraint the op's result puts on `self`).
fn results<const N: u32>(tallies: &mut Tallies, any_self: bool) {
    let space = values::<IB<N>, N>();
    let unbounded = [Value {
        value: IB::<N>::unbounded(),
        set: u64::MAX >> (64 - (1 << N)),
        members: Narrow::<N>::all().collect(),
    }];
    let selves = if any_self { &space[..] } else { &unbounded[..] };
    let operands: [(&str, Operand, Word2<N>); 11] = [
        ("and", Operand::And, |x, y| Some(x & y)),
        ("or", Operand::Or, |x, y| Some(x | y)),
        ("xor", Operand::Xor, |x, y| Some(x ^ y)),
        ("add", Operand::Add, |x, y| Some(x.add(y))),
        ("add_ovf", Operand::AddOvf, |x, y| {
            no_overflow(x.add(y), x.add_overflows(y))
        }),
        ("sub, left", Operand::SubLeft, |x, y| Some(x.sub(y))),
        ("sub, right", Operand::SubRight, |x, y| Some(y.sub(x))),
        ("sub_ovf, left", Operand::SubOvfLeft, |x, y| {
            no_overflow(x.sub(y), x.sub_overflows(y))
        }),
        ("sub_ovf, right", Operand::SubOvfRight, |x, y| {
            no_overflow(y.sub(x), y.sub_overflows(x))
        }),
        ("neg", Operand::Neg, |x, _| Some(x.neg())),
        ("invert", Operand::Invert, |x, _| Some(!x)),
    ];
    let which = if any_self {
        "any self"
    } else {
        "unbounded self"
    };
    for (name, operand, concrete) in operands {
        let t = tally(tallies, &format!("refine_by_result {name}, {which}"), N);
        for other in &space {
            for result in &space {
                let allowed = set_of(Narrow::<N>::all().filter(|&x| {
                    other
                        .members
                        .iter()
                        .any(|&y| concrete(x, y).is_some_and(|z| result.set & 1 << z.index() != 0))
                }));
                for a in selves {
                    let (bound, impossible) =
                        a.value.refine_by_result(operand, other.value, result.value);
                    narrowing(t, a, allowed, some(bound, impossible), || {
                        format!("{:?} with {:?} in {:?}", a.value, other.value, result.value)
                    });
                }
            }
        }
    }
}

/// The floors: function name (with width) to the inputs and optimal ones.
fn floors() -> BTreeMap<String, (u64, u64)> {
    include_str!("optimality-floors.txt")
        .lines()
        .filter(|line| !line.trim().is_empty() && !line.starts_with('#'))
        .map(|line| {
            let (name, counts) = line.rsplit_once(": ").expect("`name: optimal/inputs`");
            let (optimal, inputs) = counts.split_once('/').expect("`optimal/inputs`");
            let number = |s: &str| s.trim().parse::<u64>().expect("a count");
            (name.to_string(), (number(optimal), number(inputs)))
        })
        .collect()
}

#[test]
fn every_transfer_function_is_sound_and_as_often_optimal_as_recorded() {
    let mut tallies = Tallies::new();
    known_bits_functions::<5>(&mut tallies);
    single_bound_functions::<6>(&mut tallies);
    bound_pair_functions::<4>(&mut tallies);
    results::<3>(&mut tallies, true);
    results::<4>(&mut tallies, false);

    let floors = floors();
    let mut report = String::new();
    let mut failures = Vec::new();
    for (name, t) in &tallies {
        let percent = 100.0 * t.optimal as f64 / t.inputs.max(1) as f64;
        let _ = writeln!(
            report,
            "{name}: {}/{} ({percent:.1}% optimal)",
            t.optimal, t.inputs
        );
        if !t.unsound.is_empty() {
            failures.push(format!("{name} is unsound on {}", t.unsound.join("; ")));
        }
        match floors.get(name) {
            None => failures.push(format!("{name} has no floor (add `{name}: {}/{}`)", t.optimal, t.inputs)),
            Some(&(_, inputs)) if inputs != t.inputs => failures.push(format!(
                "{name} was tried on {} inputs, the floor counts {inputs}",
                t.inputs
            )),
            Some(&(floor, _)) if t.optimal < floor => failures.push(format!(
                "{name} is optimal on {} inputs, fewer than its floor {floor}; first input where it is not: {}",
                t.optimal,
                t.example.as_deref().unwrap_or("-")
            )),
            Some(&(floor, _)) if t.optimal > floor => {
                println!("{name}: optimal on {} inputs, above its floor {floor}: raise it", t.optimal)
            }
            Some(_) => {}
        }
    }
    for name in floors.keys().filter(|name| !tallies.contains_key(*name)) {
        failures.push(format!(
            "the floor of {name} names no function that was checked"
        ));
    }
    println!("{report}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
