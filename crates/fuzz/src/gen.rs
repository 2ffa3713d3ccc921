//! The random trace generator (seed 000's trick): every input gets an
//! example value, every op's example result is computed with the
//! reference interpreter's arithmetic, and every guard is generated so
//! that it passes on the example values. So the trace runs to its end on
//! the example, and any difference after optimizing is the optimizer's.
//!
//! Constants lean towards special values (small numbers, powers of two
//! and their neighbours, MININT, MAXINT); ops are drawn by weight;
//! overflow-checking ops are followed by `guard_no_overflow` (and only
//! generated where the example does not overflow); range checks
//! (`int_le` + `guard_true`) and known-bits checks (`int_and` +
//! `guard_value`) are generated like PyPy's generator does. A guarded
//! comparison is now and then followed by another of the same pair (the
//! other signedness, negated, swapped), and half the comparisons take
//! two values that are not truth values: the shapes where what one guard
//! teaches about a pair decides the next (the `remember_truth` mutant of
//! #19). Rule templates build what a rule of `rules/` matches (its
//! left-hand side, variables filled with earlier values, the same one
//! where a variable repeats, and constant variables with special
//! constants), so that short campaigns reach nearly every rule
//! (`tests/reach.rs`). Ops that would be undefined on the example (shift
//! by 64, division by zero) are not generated. Everything follows from
//! the seed.

use rand::RngExt;
use traceopt_interp::arith;
use traceopt_ir::Opcode;
use traceopt_opt::PatternNode;

use crate::entropy::Entropy;
use crate::sketch::{Line, Operand, Sketch};

/// What to generate.
#[derive(Clone, Debug)]
pub struct Config {
    /// Ops per trace (guards and their comparisons included).
    pub length: usize,
    /// At most this many inputs (at least one).
    pub max_inputs: usize,
    /// Weight of each kind of step.
    pub mix: Mix,
    /// Heap traces (`heapgen`) instead of integer ones.
    pub heap: bool,
    /// Heap traces clear array items now and then (`zero_array`, which
    /// the validator does not model yet: such traces are checked by the
    /// runs alone).
    pub clears: bool,
    /// The share of integer traces (in percent) given a label inside
    /// that their final jump goes back to (`Sketch::insert_label`).
    pub labels: u32,
}

/// Weights of the kinds of steps.
#[derive(Clone, Debug)]
pub struct Mix {
    pub arithmetic: u32,
    pub bitwise: u32,
    pub shifts: u32,
    pub comparisons: u32,
    pub overflow: u32,
    pub division: u32,
    pub range_checks: u32,
    pub bit_checks: u32,
    pub value_guards: u32,
    /// Ops built from an earlier op (same op, inverse, comparisons).
    pub related: u32,
    /// Motifs where facts flow backwards through an op.
    pub motifs: u32,
    /// A rule's left-hand side (`rules/`), its variables filled with
    /// earlier values and its constants with special ones.
    pub templates: u32,
}

impl Default for Mix {
    fn default() -> Mix {
        Mix {
            arithmetic: 6,
            bitwise: 5,
            shifts: 3,
            comparisons: 4,
            overflow: 4,
            division: 1,
            range_checks: 3,
            bit_checks: 2,
            value_guards: 1,
            related: 6,
            motifs: 4,
            templates: 4,
        }
    }
}

impl Default for Config {
    fn default() -> Config {
        Config {
            length: 30,
            max_inputs: 4,
            mix: Mix::default(),
            heap: false,
            clears: true,
            labels: 10,
        }
    }
}

struct Gen<'a> {
    rng: Entropy<'a>,
    /// Values so far: name and example value.
    values: Vec<(String, i64)>,
    lines: Vec<Line>,
}

/// The integer comparisons, signed and unsigned.
const COMPARISONS: &[Opcode] = &[
    Opcode::IntLt,
    Opcode::IntLe,
    Opcode::IntGt,
    Opcode::IntGe,
    Opcode::IntEq,
    Opcode::IntNe,
    Opcode::UintLt,
    Opcode::UintLe,
    Opcode::UintGt,
    Opcode::UintGe,
];

const SPECIALS: &[i64] = &[
    0, 1, -1, 2, 3, 7, 8, 10, 12, 15, 16, 31, 32, 63, 64, 100, 255, 256, -2, -8,
];

impl Gen<'_> {
    /// One of `items`, uniformly.
    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.rng.random_range(0..items.len())]
    }

    fn chance(&mut self, percent: u32) -> bool {
        self.rng.random_range(0..100) < percent
    }

    /// A constant biased to special values.
    fn constant(&mut self) -> i64 {
        match self.rng.random_range(0..10) {
            0..=3 => self.pick(SPECIALS),
            4 => {
                let bit = self.rng.random_range(0..64);
                let p = 1i64.wrapping_shl(bit);
                [p, p.wrapping_sub(1), p.wrapping_add(1), p.wrapping_neg()]
                    [self.rng.random_range(0..4)]
            }
            5 => [i64::MIN, i64::MAX, i64::MIN + 1, i64::MAX - 1][self.rng.random_range(0..4)],
            6 | 7 => self.rng.random_range(-1000..1000),
            _ => self.rng.random::<i64>(),
        }
    }

    /// An existing value (most of the time) or a constant.
    fn operand(&mut self) -> (Operand, i64) {
        if self.values.is_empty() || self.chance(25) {
            let c = self.constant();
            return (Operand::Const(c), c);
        }
        self.recent(4)
    }

    /// An existing value (never a constant).
    fn value(&mut self) -> (Operand, i64) {
        self.recent(3)
    }

    /// An existing value whose example is not 0 or 1 (most of the time
    /// not a truth value, which the optimizer knows the range of), where
    /// there is one: a comparison of two of them is what only relational
    /// facts decide.
    fn wide_value(&mut self) -> (Operand, i64) {
        let wide: Vec<usize> = (0..self.values.len())
            .filter(|&k| !(0..=1).contains(&self.values[k].1))
            .collect();
        if wide.is_empty() {
            return self.value();
        }
        let k = self.pick(&wide);
        let (name, value) = self.values[k].clone();
        (Operand::Value(name), value)
    }

    /// An existing value, one of the last `window` more often than not, so
    /// that ops build on each other.
    fn recent(&mut self, window: usize) -> (Operand, i64) {
        let n = self.values.len();
        let i = if self.chance(60) {
            n - 1 - self.rng.random_range(0..n.min(window))
        } else {
            self.rng.random_range(0..n)
        };
        let (name, value) = self.values[i].clone();
        (Operand::Value(name), value)
    }

    /// A small motif where facts flow backwards: `r = op(x, C)` (or a
    /// unary op), a guard on `r` near its example, then a guard on `x`
    /// near its example, and a use of `x`.
    fn motif(&mut self) {
        let (x, ex) = self.value();
        let ops = [
            Opcode::IntAdd,
            Opcode::IntSub,
            Opcode::IntMul,
            Opcode::IntLshift,
            Opcode::IntNeg,
            Opcode::IntAddOvf,
            Opcode::IntSubOvf,
        ];
        let op = self.pick(&ops);
        let c = match op {
            Opcode::IntLshift => self.rng.random_range(1..8),
            Opcode::IntMul => [2, 3, 4, 6, 8, 10, 12, 16][self.rng.random_range(0..8)],
            _ => self.constant(),
        };
        let (args, r) = match op {
            Opcode::IntNeg => (vec![x.clone()], Some(unary_example(op, ex))),
            Opcode::IntAddOvf | Opcode::IntSubOvf => match arith::int_ovf(op, ex, c) {
                Some((r, false)) => (vec![x.clone(), Operand::Const(c)], Some(r)),
                _ => (vec![], None),
            },
            _ => (
                vec![x.clone(), Operand::Const(c)],
                arith::int_binary(op, ex, c).ok(),
            ),
        };
        let Some(r) = r else { return };
        let result = self.push(op, args, r);
        if op.has(traceopt_ir::Flags::OVF) {
            self.guard(Opcode::GuardNoOverflow, vec![]);
        }
        if self.chance(30) {
            self.guard(Opcode::GuardValue, vec![result, Operand::Const(r)]);
        } else {
            self.compare_near(result, r);
        }
        self.compare_near(x.clone(), ex);
        if let Ok(v) = arith::int_binary(Opcode::IntAdd, ex, 1) {
            self.push(Opcode::IntAdd, vec![x, Operand::Const(1)], v);
        }
    }

    /// A comparison of `v` (example `ex`) with a constant near it, and the
    /// guard that passes on the example.
    fn compare_near(&mut self, v: Operand, ex: i64) {
        let ops = [Opcode::IntLt, Opcode::IntLe, Opcode::IntGt, Opcode::IntGe];
        let op = self.pick(&ops);
        let bound = match self.rng.random_range(0..3) {
            0 => ex.saturating_add(self.rng.random_range(-3..4)),
            1 => 0,
            _ => self.constant(),
        };
        if let Ok(truth) = arith::int_binary(op, ex, bound) {
            self.guarded(op, vec![v, Operand::Const(bound)], truth);
        }
    }

    /// An op related to an earlier one, the shapes optimizers simplify
    /// (and get wrong): the same op again (both argument orders), its
    /// inverse (with or without an overflow check), a comparison of the
    /// result with an argument, or a guard on the result's exact value.
    fn related(&mut self) {
        let binaries: Vec<usize> = (0..self.lines.len())
            .filter(|&k| self.lines[k].result.is_some() && self.lines[k].args.len() == 2)
            .collect();
        if binaries.is_empty() {
            return self.binary(&[Opcode::IntAdd, Opcode::IntMul]);
        }
        let k = binaries[self
            .rng
            .random_range(binaries.len().saturating_sub(4)..binaries.len())];
        let line = self.lines[k].clone();
        let result = Operand::Value(line.result.clone().unwrap());
        let (a, b) = (line.args[0].clone(), line.args[1].clone());
        let (x, y, r) = (self.example(&a), self.example(&b), self.example(&result));
        match self.rng.random_range(0..6) {
            0 => {
                let (p, q) = if self.chance(50) { (a, b) } else { (b, a) };
                if let Ok(v) = arith::int_binary(line.opcode, self.example(&p), self.example(&q)) {
                    self.push(line.opcode, vec![p, q], v);
                }
            }
            1 | 2 => {
                let inverse = match line.opcode {
                    Opcode::IntAdd | Opcode::IntAddOvf => Opcode::IntSub,
                    Opcode::IntSub | Opcode::IntSubOvf => Opcode::IntAdd,
                    _ => Opcode::IntSub,
                };
                let checked = self.chance(50);
                let op = match (inverse, checked) {
                    (Opcode::IntSub, true) => Opcode::IntSubOvf,
                    (Opcode::IntAdd, true) => Opcode::IntAddOvf,
                    (op, _) => op,
                };
                if checked {
                    if let Some((v, false)) = arith::int_ovf(op, r, y) {
                        self.push(op, vec![result, b], v);
                        self.guard(Opcode::GuardNoOverflow, vec![]);
                    }
                } else if let Ok(v) = arith::int_binary(op, r, y) {
                    self.push(op, vec![result, b], v);
                }
            }
            3 | 4 => {
                let ops = [Opcode::IntLt, Opcode::IntLe, Opcode::IntGt, Opcode::IntGe];
                let op = self.pick(&ops);
                let (p, px) = if self.chance(50) { (a, x) } else { (result, r) };
                let bound = px.saturating_add(self.rng.random_range(-3..4));
                if let Ok(v) = arith::int_binary(op, px, bound) {
                    self.guarded(op, vec![p, Operand::Const(bound)], v);
                }
            }
            _ => self.guard(Opcode::GuardValue, vec![result, Operand::Const(r)]),
        }
    }

    fn push(&mut self, opcode: Opcode, args: Vec<Operand>, example: i64) -> Operand {
        let name = format!("i{}", self.values.len());
        self.lines.push(Line::new(Some(name.clone()), opcode, args));
        self.values.push((name.clone(), example));
        Operand::Value(name)
    }

    /// A comparison and the guard that passes on its example result.
    /// Now and then another comparison of the same pair follows.
    fn guarded(&mut self, op: Opcode, args: Vec<Operand>, truth: i64) {
        let pair = (args.len() == 2).then(|| (args[0].clone(), args[1].clone()));
        let cmp = self.push(op, args, truth);
        let guard = if truth != 0 {
            Opcode::GuardTrue
        } else {
            Opcode::GuardFalse
        };
        self.guard(guard, vec![cmp]);
        if let Some((a, b)) = pair.filter(|_| COMPARISONS.contains(&op) && self.chance(25)) {
            self.same_pair(op, a, b);
        }
    }

    fn guard(&mut self, opcode: Opcode, args: Vec<Operand>) {
        self.lines.push(Line::new(None, opcode, args));
    }

    fn binary(&mut self, ops: &[Opcode]) {
        let op = self.pick(ops);
        let (a, x) = self.operand();
        let (b, y) = match op {
            Opcode::IntLshift | Opcode::IntRshift | Opcode::UintRshift if !self.chance(20) => {
                // The ends of the range (0 and LONG_BIT - 1) as often as
                // any other count.
                let c = match self.chance(30) {
                    true => self.pick(&[0, 1, 32, 62, 63]),
                    false => self.rng.random_range(0..64),
                };
                (Operand::Const(c), c)
            }
            _ => self.operand(),
        };
        if let Ok(r) = arith::int_binary(op, x, y) {
            self.push(op, vec![a, b], r);
        }
    }

    fn unary(&mut self) {
        let ops = [
            Opcode::IntNeg,
            Opcode::IntInvert,
            Opcode::IntIsTrue,
            Opcode::IntIsZero,
            Opcode::IntForceGeZero,
        ];
        let op = self.pick(&ops);
        let (a, x) = self.value();
        self.push(op, vec![a], unary_example(op, x));
    }

    fn overflow(&mut self) {
        let ops = [Opcode::IntAddOvf, Opcode::IntSubOvf, Opcode::IntMulOvf];
        let op = self.pick(&ops);
        let (a, x) = self.operand();
        let (b, y) = self.operand();
        if let Some((r, false)) = arith::int_ovf(op, x, y) {
            self.push(op, vec![a, b], r);
            self.guard(Opcode::GuardNoOverflow, vec![]);
        }
    }

    fn comparison_guard(&mut self) {
        let op = self.pick(COMPARISONS);
        let ((a, x), (b, y)) = match self.chance(50) {
            true => (self.wide_value(), self.wide_value()),
            false => (self.value(), self.operand()),
        };
        let Ok(r) = arith::int_binary(op, x, y) else {
            return;
        };
        self.guarded(op, vec![a, b], r);
    }

    /// Another comparison of the same operands, guarded the way the
    /// example goes: what one guard teaches about a pair, the next one
    /// uses. Half the time it is `op` of the other signedness (or its
    /// negation), the other half any comparison; the pair in either order.
    fn same_pair(&mut self, op: Opcode, mut a: Operand, mut b: Operand) {
        let op = match (self.chance(50), other_signedness(op)) {
            (true, Some(flipped)) if self.chance(50) => negation(flipped),
            (true, Some(flipped)) => flipped,
            _ => self.pick(COMPARISONS),
        };
        if self.chance(50) {
            std::mem::swap(&mut a, &mut b);
        }
        let (x, y) = (self.example(&a), self.example(&b));
        if let Ok(r) = arith::int_binary(op, x, y) {
            self.guarded(op, vec![a, b], r);
        }
    }

    /// The example value of an operand.
    fn example(&self, o: &Operand) -> i64 {
        match o {
            Operand::Const(c) => *c,
            Operand::Value(n) => self.values.iter().find(|(m, _)| m == n).map_or(0, |v| v.1),
            Operand::Null | Operand::Class(_) | Operand::Float(_) | Operand::Ptr(_) => 0,
        }
    }

    /// `x <= C` (or `x >= C`) with a bound near the example.
    fn range_check(&mut self) {
        let (a, x) = self.value();
        let slack = [0, 1, 5, 100, 1 << 20][self.rng.random_range(0..5)];
        let (op, bound) = if self.chance(50) {
            (Opcode::IntLe, x.saturating_add(slack))
        } else {
            (Opcode::IntGe, x.saturating_sub(slack))
        };
        let cmp = self.push(op, vec![a, Operand::Const(bound)], 1);
        self.guard(Opcode::GuardTrue, vec![cmp]);
    }

    /// `x & mask == (example & mask)`.
    fn bit_check(&mut self) {
        let (a, x) = self.value();
        let mask = match self.rng.random_range(0..4) {
            0 => 1,
            1 => 7,
            2 => 0xff,
            _ => self.constant(),
        };
        let masked = self.push(Opcode::IntAnd, vec![a, Operand::Const(mask)], x & mask);
        self.guard(Opcode::GuardValue, vec![masked, Operand::Const(x & mask)]);
    }

    fn value_guard(&mut self) {
        let (a, x) = self.value();
        self.guard(Opcode::GuardValue, vec![a, Operand::Const(x)]);
    }

    /// What a rule matches: its left-hand side built bottom-up, a
    /// variable by an earlier value (the same one wherever it repeats), a
    /// constant variable by a special constant, a literal as written.
    /// A comparison at the root is guarded the way its example goes. Gives
    /// up where an op is undefined on the example or overflows.
    fn template(&mut self) {
        let rule = self.pick(traceopt_opt::RULES);
        let mut nodes = rule.pattern.iter().copied();
        let mut bound = Vec::new();
        let mark = (self.lines.len(), self.values.len());
        let Some(root) = self.instantiate(&mut nodes, &mut bound) else {
            self.lines.truncate(mark.0);
            self.values.truncate(mark.1);
            return;
        };
        if let (Operand::Value(_), true) = (&root.0, COMPARISONS.contains(&rule.root)) {
            let guard = match root.1 {
                0 => Opcode::GuardFalse,
                _ => Opcode::GuardTrue,
            };
            self.guard(guard, vec![root.0]);
        }
    }

    /// The operand for the pattern that `nodes` starts with (ops pushed
    /// as they are built), or `None` if it cannot be built on the example.
    fn instantiate(
        &mut self,
        nodes: &mut impl Iterator<Item = PatternNode>,
        bound: &mut Vec<(&'static str, (Operand, i64))>,
    ) -> Option<(Operand, i64)> {
        match nodes.next()? {
            PatternNode::Const(c) => Some((Operand::Const(c), c)),
            PatternNode::Var(name) => {
                if let Some((_, known)) = bound.iter().find(|(n, _)| *n == name) {
                    return Some(known.clone());
                }
                let value = match name.starts_with('C') {
                    true => {
                        let c = self.constant();
                        (Operand::Const(c), c)
                    }
                    false if self.chance(50) => self.wide_value(),
                    false => self.recent(6),
                };
                bound.push((name, value.clone()));
                Some(value)
            }
            PatternNode::Op(op, arity) => {
                let mut args = Vec::new();
                for _ in 0..arity {
                    args.push(self.instantiate(nodes, bound)?);
                }
                let examples: Vec<i64> = args.iter().map(|a| a.1).collect();
                let example = match op.has(traceopt_ir::Flags::OVF) {
                    true => match arith::int_ovf(op, examples[0], examples[1]) {
                        Some((r, false)) => r,
                        _ => return None,
                    },
                    false => op_example(op, &examples)?,
                };
                let operands = args.into_iter().map(|a| a.0).collect();
                let result = self.push(op, operands, example);
                if op.has(traceopt_ir::Flags::OVF) {
                    self.guard(Opcode::GuardNoOverflow, vec![]);
                }
                Some((result, example))
            }
        }
    }

    fn division(&mut self) {
        let ops = [Opcode::IntPydiv, Opcode::IntPymod];
        self.binary(&ops);
    }
}

/// `op` comparing as signed words if it compares as unsigned, and the
/// other way round (none for `==` and `!=`).
fn other_signedness(op: Opcode) -> Option<Opcode> {
    use Opcode::*;
    Some(match op {
        IntLt => UintLt,
        IntLe => UintLe,
        IntGt => UintGt,
        IntGe => UintGe,
        UintLt => IntLt,
        UintLe => IntLe,
        UintGt => IntGt,
        UintGe => IntGe,
        _ => return None,
    })
}

/// The comparison that gives the opposite answer.
fn negation(op: Opcode) -> Opcode {
    use Opcode::*;
    match op {
        IntLt => IntGe,
        IntLe => IntGt,
        IntGt => IntLe,
        IntGe => IntLt,
        UintLt => UintGe,
        UintLe => UintGt,
        UintGt => UintLe,
        UintGe => UintLt,
        IntEq => IntNe,
        _ => IntEq,
    }
}

/// The interpreter's result of a one-int op (all of them total).
fn unary_example(op: Opcode, x: i64) -> i64 {
    match traceopt_interp::arith::eval(op, &[traceopt_interp::Val::Int(x)]) {
        Ok(traceopt_interp::Val::Int(r)) => r,
        other => unreachable!("{op} on an int gave {other:?}"),
    }
}

/// The interpreter's result of an integer op on ints, if it is defined.
fn op_example(op: Opcode, args: &[i64]) -> Option<i64> {
    let vals: Vec<_> = args.iter().map(|&x| traceopt_interp::Val::Int(x)).collect();
    match traceopt_interp::arith::eval(op, &vals) {
        Ok(traceopt_interp::Val::Int(r)) => Some(r),
        _ => None,
    }
}

/// Generates one trace from `seed`: a heap trace if `config.heap`.
pub fn generate(seed: u64, config: &Config) -> Sketch {
    generate_with(Entropy::seeded(seed), config)
}

/// Generates one trace whose choices are read from `data` (a
/// coverage-guided fuzzer's input; see `entropy`).
pub fn generate_from_bytes(data: &[u8], config: &Config) -> Sketch {
    generate_with(Entropy::bytes(data), config)
}

fn generate_with(rng: Entropy, config: &Config) -> Sketch {
    if config.heap {
        return crate::heapgen::generate_heap_with(
            rng,
            config.length,
            config.clears,
            config.labels,
        );
    }
    let mut g = Gen {
        rng,
        values: Vec::new(),
        lines: Vec::new(),
    };
    let inputs = g.rng.random_range(1..=config.max_inputs.max(1));
    let mut input_values = Vec::new();
    for i in 0..inputs {
        let v = g.constant();
        let name = format!("i{i}");
        g.values.push((name.clone(), v));
        input_values.push((name, v));
    }
    let m = &config.mix;
    let weights = [
        m.arithmetic,
        m.bitwise,
        m.shifts,
        m.comparisons,
        m.overflow,
        m.division,
        m.range_checks,
        m.bit_checks,
        m.value_guards,
        m.related,
        m.motifs,
        m.templates,
    ];
    let total: u32 = weights.iter().sum::<u32>().max(1);
    let mut attempts = 0;
    while g.lines.len() < config.length && attempts < config.length * 20 {
        attempts += 1;
        let mut pick = g.rng.random_range(0..total);
        let mut kind = 0;
        while kind < weights.len() - 1 && pick >= weights[kind] {
            pick -= weights[kind];
            kind += 1;
        }
        match kind {
            0 => {
                if g.chance(20) {
                    g.unary();
                } else {
                    g.binary(&[Opcode::IntAdd, Opcode::IntSub, Opcode::IntMul]);
                }
            }
            1 => g.binary(&[Opcode::IntAnd, Opcode::IntOr, Opcode::IntXor]),
            2 => g.binary(&[Opcode::IntLshift, Opcode::IntRshift, Opcode::UintRshift]),
            3 => g.comparison_guard(),
            4 => g.overflow(),
            5 => g.division(),
            6 => g.range_check(),
            7 => g.bit_check(),
            8 => g.value_guard(),
            9 => g.related(),
            10 => g.motif(),
            _ => g.template(),
        }
    }
    let end = if g.chance(70) {
        let (v, _) = g.value();
        (Opcode::Finish, vec![v])
    } else {
        let args: Vec<Operand> = (0..inputs).map(|_| g.value().0).collect();
        (Opcode::Jump, args)
    };
    // Drawn last, so that the rest of a seed's trace is as before.
    let contradict = g.chance(3);
    let label_at = g
        .chance(config.labels)
        .then(|| g.rng.random_range(0..=g.lines.len()));
    let mut sketch = Sketch {
        inputs: input_values,
        heap: Vec::new(),
        lines: g.lines,
        end,
    };
    // Now and then a guard that must fail: the trace never ends.
    if contradict {
        sketch.contradict_last_guard(&[]);
    }
    // Now and then a label inside: a loop as a peeled one is.
    if let Some(at) = label_at {
        // (Every value is an integer.)
        sketch.insert_label(at, |_, _| true);
    }
    sketch
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether a sketch compares one pair of values twice, once signed and
    /// once unsigned (in either order of the pair), both guarded: what
    /// the optimizer's relational facts carry from one guard to the next.
    fn compares_a_pair_both_ways(sketch: &Sketch) -> bool {
        let compared: Vec<(Opcode, [&Operand; 2])> = (sketch.lines.iter())
            .filter(|l| COMPARISONS.contains(&l.opcode))
            .filter(|l| l.args.iter().all(|a| matches!(a, Operand::Value(_))))
            .map(|l| (l.opcode, [&l.args[0], &l.args[1]]))
            .collect();
        compared.iter().enumerate().any(|(k, (op, [a, b]))| {
            compared[k + 1..].iter().any(|(other, [c, d])| {
                let flipped = other_signedness(*op);
                let related = flipped == Some(*other) || flipped == Some(negation(*other));
                related && ((a, b) == (c, d) || (a, b) == (d, c))
            })
        })
    }

    #[test]
    fn some_traces_loop_back_to_a_label_inside_them() {
        for heap in [false, true] {
            let config = Config {
                heap,
                ..Config::default()
            };
            let looped: Vec<Sketch> = (0..300)
                .map(|seed| generate(seed, &config))
                .filter(|s| s.lines.iter().any(|l| l.opcode == Opcode::Label))
                .collect();
            assert!(looped.len() >= 10, "{} of 300 traces", looped.len());
            let back = |s: &Sketch| s.text().lines().last().unwrap().contains("TargetToken(1)");
            assert!(looped.iter().any(back), "none jumps back to its label");
            for sketch in &looped {
                let trace = sketch.trace().unwrap();
                let errors = traceopt_ir::check(&trace, "fuzz", Default::default());
                assert!(errors.is_empty(), "{}\n{errors:?}", sketch.text());
            }
        }
    }

    #[test]
    fn pairs_of_values_are_compared_signed_and_unsigned() {
        let config = Config::default();
        let hits = (0..200)
            .filter(|&seed| compares_a_pair_both_ways(&generate(seed, &config)))
            .count();
        assert!(hits >= 20, "{hits} of 200 traces");
    }
}
