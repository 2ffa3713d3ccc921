//! The optimizer's driver: one forward pass over the input trace.
//!
//! Each input op is looked at once, in order. Its arguments are first
//! mapped to what they became in the output (`Forwarding`, a union-find
//! over output values: PyPy's `make_equal_to`/`find`). Then, for an
//! integer op, in this order:
//!
//! 1. constant folding, when every argument is a constant;
//! 2. the peephole rules (`rules`, generated from `rules/*.rules`), whose
//!    checks read the integer domain; a rule's new ops are optimized in
//!    turn, as PyPy's `send_extra_operation` does;
//! 3. the integer domain: a result whose bound is a single value becomes
//!    that constant; an `*_ovf` op that cannot overflow becomes the plain
//!    op and its guard goes;
//! 4. common subexpressions: a pure op equal to an earlier one (same
//!    opcode, same arguments) is replaced by it.
//!
//! Guards: `guard_true`/`guard_false` whose value is known are removed
//! (or, if they must fail, the whole trace is reported as infeasible);
//! otherwise they narrow the domain of their value and, for a comparison,
//! of its arguments. After `guard_value(x, C)` later uses of `x` see `C`.
//! Every other op is copied with its arguments forwarded and is never
//! moved. Each output op records the input op it stands for
//! (`provenance`), so that the validator can align guards.

use rustc_hash::FxHashMap as HashMap;

use traceopt_domains::{IntBound, Operand, Relation};
use traceopt_interp::arith;
use traceopt_ir::{Arg, Const, ConstId, DescrId, Flags, Op, Opcode, Pos, Trace, Type, ValueId};
use traceopt_rules::check::is_rule_op;
use traceopt_rules::runtime::{Built, Head, Subject};

use crate::inject::Bug;
use crate::intbounds;
use crate::relations::Relations;
use crate::rules::{self, RULES};

/// Which parts of the optimizer run (all by default).
#[derive(Clone, Copy, Debug)]
pub struct Passes {
    pub fold: bool,
    pub rules: bool,
    pub bounds: bool,
    pub cse: bool,
    pub guards: bool,
    /// Relational facts (`x < y`, `y < z` give `x < z`).
    pub relations: bool,
    pub dce: bool,
    /// A known miscompilation switched on, to test the fuzzer (never in
    /// normal use).
    pub bug: Option<Bug>,
}

impl Default for Passes {
    fn default() -> Passes {
        Passes {
            fold: true,
            rules: true,
            bounds: true,
            cse: true,
            guards: true,
            relations: true,
            dce: true,
            bug: None,
        }
    }
}

impl Passes {
    pub const NAMES: &'static [&'static str] = &[
        "fold",
        "rules",
        "bounds",
        "cse",
        "guards",
        "relations",
        "dce",
    ];

    /// Parses a comma-separated list such as `fold,rules`; `all` is every
    /// pass, `none` none.
    pub fn parse(list: &str) -> Result<Passes, String> {
        let mut passes = Passes {
            fold: false,
            rules: false,
            bounds: false,
            cse: false,
            guards: false,
            relations: false,
            dce: false,
            bug: None,
        };
        for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            match name {
                "all" => passes = Passes::default(),
                "none" => {}
                "fold" => passes.fold = true,
                "rules" => passes.rules = true,
                "bounds" => passes.bounds = true,
                "cse" => passes.cse = true,
                "guards" => passes.guards = true,
                "dce" => passes.dce = true,
                "relations" => passes.relations = true,
                other => {
                    return Err(format!(
                        "unknown pass '{other}' (passes: {}, all, none)",
                        Passes::NAMES.join(", ")
                    ))
                }
            }
        }
        Ok(passes)
    }
}

/// The result of optimizing one trace.
#[derive(Clone, Debug)]
pub struct Optimized {
    pub trace: Trace,
    /// For each output op, the index of the input op it stands for.
    pub provenance: Vec<Option<usize>>,
    /// How often each rule of `RULES` fired.
    pub rule_counts: Vec<u32>,
}

/// The trace can never run to its end: a guard must always fail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Infeasible {
    /// The input op (index) of the guard that always fails.
    pub op_index: usize,
    pub line: u32,
    pub reason: String,
}

impl std::fmt::Display for Infeasible {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "this trace can never run to the end: {} (line {})",
            self.reason, self.line
        )
    }
}

/// Depth limit for rewriting the ops a rule builds (rules lower the
/// cost, so this is a safety net, never reached by terminating rules).
const MAX_REWRITE_DEPTH: u32 = 16;

/// An integer op for CSE: opcode and (up to) two arguments.
type CseKey = (Opcode, Arg, Arg);

/// How far a narrowed bound is passed back through the ops that
/// produced it.
const MAX_BACKWARD_DEPTH: u32 = 4;

struct Optimizer<'a> {
    input: &'a Trace,
    passes: Passes,
    out: Trace,
    provenance: Vec<Option<usize>>,
    /// Input value -> output argument.
    map: Vec<Option<Arg>>,
    /// Output value -> what it was made equal to later (union-find).
    replaced: Vec<Option<Arg>>,
    /// Output value -> its bound (integers only).
    bounds: Vec<IntBound>,
    /// Output values of `*_ovf` ops whose `guard_no_overflow` followed.
    no_overflow: Vec<bool>,
    cse: HashMap<CseKey, Arg>,
    /// Integer constants of the output, by value.
    int_consts: HashMap<i64, ConstId>,
    /// Input constant and descr -> output ones (interned once each).
    const_map: Vec<Option<ConstId>>,
    descr_map: Vec<Option<DescrId>>,
    relations: Relations,
    rule_counts: Vec<u32>,
    /// The last `*_ovf` input op was made plain: drop its guard.
    drop_overflow_guard: bool,
    /// Rules switched off (by index in `RULES`) until the first rule
    /// fires, for analyses.
    disabled: &'a [bool],
    any_rule_fired: bool,
    /// The input op being optimized.
    current: usize,
    fresh: u32,
}

/// Optimizes `input` with the given passes. `input` must pass the
/// checker (`traceopt_ir::check`): arities, types and definitions are
/// taken as checked.
pub fn optimize(input: &Trace, passes: Passes) -> Result<Optimized, Infeasible> {
    optimize_without(input, passes, &[])
}

/// `optimize` with some rules switched off until the first rule fires
/// (to choose which of two rules goes first): `disabled[i]` for rule `i`
/// of `RULES` (missing entries are enabled).
pub fn optimize_without(
    input: &Trace,
    passes: Passes,
    disabled: &[bool],
) -> Result<Optimized, Infeasible> {
    let mut opt = Optimizer {
        disabled,
        any_rule_fired: false,
        input,
        passes,
        out: Trace::new(),
        provenance: Vec::new(),
        map: vec![None; input.num_values()],
        replaced: Vec::new(),
        bounds: Vec::new(),
        no_overflow: Vec::new(),
        cse: HashMap::default(),
        int_consts: HashMap::default(),
        const_map: vec![None; input.consts.len()],
        descr_map: vec![None; input.descrs.len()],
        relations: Relations::default(),
        rule_counts: vec![0; RULES.len()],
        drop_overflow_guard: false,
        current: 0,
        fresh: input.num_values() as u32,
    };
    for (i, &ty) in input.inputs.iter().enumerate() {
        let v = opt.out.add_input(ty, input.name(ValueId(i as u32)));
        opt.new_value(v);
        opt.map[i] = Some(Arg::Value(v));
    }
    opt.out.input_pos = input.input_pos;
    opt.out.ops.reserve(input.ops.len());
    opt.out.op_pos.reserve(input.ops.len());
    opt.out.names.reserve(input.ops.len());
    opt.provenance.reserve(input.ops.len());
    for (index, op) in input.ops.iter().enumerate() {
        opt.current = index;
        opt.op(index, op)?;
    }
    let (trace, provenance) = if passes.dce {
        crate::dce::remove_dead(opt.out, opt.provenance)
    } else {
        (opt.out, opt.provenance)
    };
    Ok(Optimized {
        trace,
        provenance,
        rule_counts: opt.rule_counts,
    })
}

impl Optimizer<'_> {
    fn new_value(&mut self, v: ValueId) {
        let n = v.0 as usize + 1;
        self.replaced.resize(n, None);
        self.bounds.resize(n, IntBound::unbounded());
        self.no_overflow.resize(n, false);
    }

    /// What an output argument stands for now (path-compressing find).
    fn find(&mut self, arg: Arg) -> Arg {
        let Arg::Value(v) = arg else {
            return arg;
        };
        match self.replaced[v.0 as usize] {
            None => arg,
            Some(next) => {
                let root = self.find(next);
                self.replaced[v.0 as usize] = Some(root);
                root
            }
        }
    }

    fn make_equal_to(&mut self, v: ValueId, to: Arg) {
        if Arg::Value(v) != to {
            self.replaced[v.0 as usize] = Some(to);
        }
    }

    /// An input argument, forwarded.
    fn arg(&mut self, arg: Arg) -> Arg {
        let mapped = match arg {
            Arg::Value(v) => self.map[v.0 as usize].expect("checked traces define before use"),
            Arg::Const(c) => Arg::Const(self.output_const(c)),
        };
        self.find(mapped)
    }

    fn output_const(&mut self, c: ConstId) -> ConstId {
        match self.const_map[c.0 as usize] {
            Some(out) => out,
            None => {
                let out = self.out.add_const(self.input.constant(c).clone());
                self.const_map[c.0 as usize] = Some(out);
                out
            }
        }
    }

    fn int_const(&mut self, value: i64) -> Arg {
        let out = &mut self.out;
        Arg::Const(
            *self
                .int_consts
                .entry(value)
                .or_insert_with(|| out.add_const(Const::Int(value))),
        )
    }

    fn as_int(&self, arg: Arg) -> Option<i64> {
        match arg {
            Arg::Const(c) => match self.out.constant(c) {
                Const::Int(v) => Some(*v),
                _ => None,
            },
            Arg::Value(_) => None,
        }
    }

    fn bound(&self, arg: Arg) -> IntBound {
        match arg {
            Arg::Const(_) => match self.as_int(arg) {
                Some(v) => IntBound::constant(v),
                None => IntBound::unbounded(),
            },
            Arg::Value(v) => self.bounds[v.0 as usize],
        }
    }

    fn emit(&mut self, op: Op, name: Option<&str>) -> ValueId {
        let pos = self
            .input
            .op_pos
            .get(self.current)
            .copied()
            .unwrap_or(Pos::default());
        let fresh;
        let name = match name {
            Some(n) => n,
            None => {
                fresh = self.fresh_name(op.opcode.result_type());
                &fresh
            }
        };
        let v = self.out.push(op, name, pos);
        self.provenance.push(Some(self.current));
        self.new_value(v);
        v
    }

    fn fresh_name(&mut self, ty: Type) -> String {
        self.fresh += 1;
        match ty {
            Type::Void => String::new(),
            ty => format!("{}{}", ty.letter(), self.fresh),
        }
    }

    fn op(&mut self, index: usize, op: &Op) -> Result<(), Infeasible> {
        let input_value = self.input.value_of_op(index);
        let args: Vec<Arg> = op.args.iter().map(|&a| self.arg(a)).collect();
        if is_rule_op(op.opcode) {
            let input = self.input;
            let result = self.int_op(op.opcode, args, Some(input.name(input_value)), 0)?;
            self.map[input_value.0 as usize] = Some(result);
            return Ok(());
        }
        if op.opcode.is_guard() {
            return self.guard(index, op, args);
        }
        let copy = self.output_op(op, args);
        let input = self.input;
        let v = self.emit(copy, Some(input.name(input_value)));
        self.map[input_value.0 as usize] = Some(Arg::Value(v));
        Ok(())
    }

    /// An input op as an output op: the given (forwarded) arguments, its
    /// descr and fail arguments moved to the output.
    fn output_op(&mut self, op: &Op, args: Vec<Arg>) -> Op {
        let mut out = Op {
            opcode: op.opcode,
            args,
            descr: op.descr.map(|d| self.output_descr(d)),
            fail_args: op.fail_args.clone(),
            virtuals: op.virtuals.clone(),
            offset: op.offset,
        };
        for arg in out.resume_args_mut() {
            *arg = self.arg(*arg);
        }
        for v in &mut out.virtuals {
            v.descr = v.descr.map(|d| self.output_descr(d));
            for (field, _) in &mut v.fields {
                *field = self.output_descr(*field);
            }
        }
        out
    }

    /// The output trace's id of an input descr.
    fn output_descr(&mut self, d: DescrId) -> DescrId {
        match self.descr_map[d.0 as usize] {
            Some(out) => out,
            None => {
                let out = self.out.add_descr(self.input.descr(d).clone());
                self.descr_map[d.0 as usize] = Some(out);
                out
            }
        }
    }

    /// An integer op with output arguments; gives what stands for its
    /// result.
    fn int_op(
        &mut self,
        opcode: Opcode,
        args: Vec<Arg>,
        name: Option<&str>,
        depth: u32,
    ) -> Result<Arg, Infeasible> {
        let ovf = opcode.has(Flags::OVF);
        if self.passes.fold {
            if let Some(folded) = self.fold(opcode, &args) {
                if ovf {
                    self.drop_overflow_guard = true;
                }
                return Ok(folded);
            }
        }
        if self.passes.rules && depth < MAX_REWRITE_DEPTH {
            if let Some((rule, built)) = rules::rewrite(&*self, opcode, &args) {
                self.rule_counts[rule] += 1;
                self.any_rule_fired = true;
                if ovf && !matches!(&built, Built::Op(op, _) if op.has(Flags::OVF)) {
                    self.drop_overflow_guard = true;
                }
                return self.build(built, name, depth + 1);
            }
        }
        let arg_bounds = [
            self.bound(args[0]),
            args.get(1)
                .map_or(IntBound::unbounded(), |&a| self.bound(a)),
        ];
        let arg_bounds = &arg_bounds[..args.len().min(2)];
        let mut opcode = opcode;
        if self.passes.bounds
            && ovf
            && intbounds::cannot_overflow(opcode, arg_bounds[0], arg_bounds[1])
        {
            opcode = intbounds::without_overflow_check(opcode);
            self.drop_overflow_guard = true;
            return self.int_op(opcode, args, name, depth);
        }
        let bound = intbounds::forward(opcode, arg_bounds).unwrap_or_else(IntBound::unbounded);
        if self.passes.bounds && !ovf {
            if let Some(c) = bound.as_constant() {
                return Ok(self.int_const(c));
            }
        }
        let pure = opcode.has(Flags::PURE);
        if self.passes.relations {
            if let Some(known) = self.compare_by_relations(opcode, &args) {
                return Ok(self.int_const(i64::from(known)));
            }
        }
        if self.passes.cse && (pure || ovf) {
            let key = self.cse_key(opcode, &args);
            if let Some(&earlier) = self.cse.get(&key) {
                if ovf {
                    self.drop_overflow_guard = true;
                }
                return Ok(self.find(earlier));
            }
        }
        let (first, second) = (args[0], args.get(1).copied());
        let v = self.emit(Op::new(opcode, args), name);
        // An `*_ovf` result is bounded only once its guard passed.
        if !ovf {
            self.bounds[v.0 as usize] = bound;
        }
        if self.passes.cse && pure {
            let args = [first, second.unwrap_or(first)];
            let arity = 1 + usize::from(second.is_some());
            self.remember(opcode, &args[..arity], Arg::Value(v));
        }
        if self.passes.bug == Some(Bug::SubOvfAfterAdd) && opcode == Opcode::IntAdd {
            if let Some(y) = second {
                self.cse
                    .insert((Opcode::IntSubOvf, Arg::Value(v), y), first);
                self.cse
                    .insert((Opcode::IntSubOvf, Arg::Value(v), first), y);
            }
        }
        Ok(Arg::Value(v))
    }

    /// Records `opcode(args)` (in both orders if commutative) for CSE.
    fn remember(&mut self, opcode: Opcode, args: &[Arg], value: Arg) {
        let key = self.cse_key(opcode, args);
        self.cse.insert(key, value);
        if opcode.has(Flags::COMM) {
            self.cse.insert((opcode, args[1], args[0]), value);
        }
    }

    /// The CSE key of `opcode(args)` (integer ops have one or two
    /// arguments; a unary op repeats its one): `x - C` is filed as
    /// `x + (-C)`.
    fn cse_key(&mut self, opcode: Opcode, args: &[Arg]) -> CseKey {
        let second = args.get(1).copied().unwrap_or(args[0]);
        match (opcode, self.as_int(second)) {
            (Opcode::IntSub, Some(c)) if args.len() == 2 => {
                let negated = self.int_const(c.wrapping_neg());
                (Opcode::IntAdd, args[0], negated)
            }
            _ => (opcode, args[0], second),
        }
    }

    /// A comparison `v = op(a, b)` is known to give `truth`: the same and
    /// the opposite comparisons of `a` and `b` get their results (PyPy's
    /// "pure from args"), and the order goes into the relational facts.
    fn remember_truth(&mut self, opcode: Opcode, a: Arg, b: Arg, truth: bool) {
        use Opcode::*;
        let (yes, no) = (self.int_const(1), self.int_const(0));
        let (t, f) = if truth { (yes, no) } else { (no, yes) };
        let zero = self.int_const(0);
        let facts: Vec<(Opcode, Arg, Arg, Arg)> = match opcode {
            IntIsTrue => vec![
                (IntIsTrue, a, a, t),
                (IntIsZero, a, a, f),
                (IntNe, a, zero, t),
                (IntEq, a, zero, f),
            ],
            IntIsZero => vec![
                (IntIsZero, a, a, t),
                (IntIsTrue, a, a, f),
                (IntEq, a, zero, t),
                (IntNe, a, zero, f),
            ],
            IntEq | IntNe => {
                let eq = if opcode == IntEq { t } else { f };
                let ne = if opcode == IntEq { f } else { t };
                vec![(IntEq, a, b, eq), (IntNe, a, b, ne)]
            }
            IntLt | IntLe | IntGt | IntGe | UintLt | UintLe | UintGt | UintGe => {
                let (swapped, negated, both) = match opcode {
                    IntLt => (IntGt, IntGe, IntLe),
                    IntLe => (IntGe, IntGt, IntLt),
                    IntGt => (IntLt, IntLe, IntGe),
                    IntGe => (IntLe, IntLt, IntGt),
                    UintLt => (UintGt, UintGe, UintLe),
                    UintLe => (UintGe, UintGt, UintLt),
                    UintGt => (UintLt, UintLe, UintGe),
                    _ => (UintLe, UintLt, UintGt),
                };
                vec![
                    (opcode, a, b, t),
                    (swapped, b, a, t),
                    (negated, a, b, f),
                    (both, b, a, f),
                ]
            }
            _ => return,
        };
        for (op, x, y, value) in facts {
            let args = if op.info().signature.len() == 1 {
                vec![x]
            } else {
                vec![x, y]
            };
            self.remember(op, &args, value);
        }
        if let Some((relation, swap)) = intbounds::relation(opcode, truth) {
            let (lo, hi) = if swap { (b, a) } else { (a, b) };
            match relation {
                Relation::Lt => self.relations.add(lo, hi, true),
                Relation::Le => self.relations.add(lo, hi, false),
                Relation::Eq => {
                    self.relations.add(lo, hi, false);
                    self.relations.add(hi, lo, false);
                }
                _ => {}
            }
        }
    }

    /// A signed comparison decided by the relational facts.
    fn compare_by_relations(&self, opcode: Opcode, args: &[Arg]) -> Option<bool> {
        let (a, b, strict_wanted) = match opcode {
            Opcode::IntLt => (args[0], args[1], true),
            Opcode::IntLe => (args[0], args[1], false),
            Opcode::IntGt => (args[1], args[0], true),
            Opcode::IntGe => (args[1], args[0], false),
            _ => return None,
        };
        // a < b (or a <= b) holds?
        if let Some(strict) = self.relations.known(a, b) {
            if strict || !strict_wanted {
                return Some(true);
            }
        }
        // b <= a (or b < a) makes it false.
        match self.relations.known(b, a) {
            Some(strict) if strict || strict_wanted => Some(false),
            _ => None,
        }
    }

    /// `op(args)` on constants, if defined (and, for `*_ovf`, if it does
    /// not overflow).
    fn fold(&mut self, opcode: Opcode, args: &[Arg]) -> Option<Arg> {
        let first = self.as_int(args[0])?;
        let second = match args.get(1) {
            Some(&a) => self.as_int(a)?,
            None => first,
        };
        let result = if opcode.has(Flags::OVF) {
            match arith::int_ovf(opcode, first, second)? {
                (r, false) => r,
                (_, true) => return None,
            }
        } else {
            let vals = [
                traceopt_interp::Val::Int(first),
                traceopt_interp::Val::Int(second),
            ];
            arith::eval(opcode, &vals[..args.len().min(2)])
                .ok()?
                .as_int()?
        };
        Some(self.int_const(result))
    }

    fn build(
        &mut self,
        built: Built<Arg>,
        name: Option<&str>,
        depth: u32,
    ) -> Result<Arg, Infeasible> {
        Ok(match built {
            Built::Value(v) => self.find(v),
            Built::Const(c) => self.int_const(c),
            Built::Op(opcode, args) => {
                let mut out = Vec::with_capacity(args.len());
                for arg in args {
                    out.push(self.build(arg, None, depth)?);
                }
                self.int_op(opcode, out, name, depth)?
            }
        })
    }

    fn guard(&mut self, index: usize, op: &Op, args: Vec<Arg>) -> Result<(), Infeasible> {
        let infeasible = |reason: &str| Infeasible {
            op_index: index,
            line: self.input.op_pos.get(index).map_or(0, |p| p.line),
            reason: format!("{} always fails: {reason}", op.opcode.name()),
        };
        match op.opcode {
            Opcode::GuardNoOverflow | Opcode::GuardOverflow if self.drop_overflow_guard => {
                self.drop_overflow_guard = false;
                if op.opcode == Opcode::GuardOverflow {
                    return Err(infeasible("the operation before it cannot overflow"));
                }
                return Ok(());
            }
            Opcode::GuardNoOverflow => {
                // The op before passed its overflow check: its bound
                // holds from here on, and rules may look into it.
                if let Some(Arg::Value(v)) = self.last_output_value() {
                    let op = &self.out.ops[self.out.op_index(v).expect("an op's value")];
                    if op.opcode.has(Flags::OVF) {
                        let (opcode, args) = (op.opcode, op.args.clone());
                        let arg_bounds: Vec<IntBound> =
                            args.iter().map(|&a| self.bound(a)).collect();
                        if let Some(bound) = intbounds::forward(opcode, &arg_bounds) {
                            self.bounds[v.0 as usize] = bound;
                        }
                        self.no_overflow[v.0 as usize] = true;
                        // The same op again would pass its check too (seed
                        // 000: reuse across a passed overflow check only).
                        if self.passes.cse {
                            self.remember(opcode, &args, Arg::Value(v));
                        }
                    }
                }
            }
            Opcode::GuardTrue | Opcode::GuardFalse if self.passes.guards => {
                let want = op.opcode == Opcode::GuardTrue;
                let bound = self.bound(args[0]);
                let known_true = bound.known_ne(IntBound::constant(0));
                let known_false = bound.as_constant() == Some(0);
                if (want && known_true) || (!want && known_false) {
                    return Ok(());
                }
                if (want && known_false) || (!want && known_true) {
                    return Err(infeasible(&format!("its value is known to be {bound}")));
                }
            }
            Opcode::GuardValue if self.passes.guards => {
                if let Some(c) = self.as_int(args[1]) {
                    let bound = self.bound(args[0]);
                    if bound.as_constant() == Some(c) {
                        return Ok(());
                    }
                    if !bound.contains(c) {
                        return Err(infeasible(&format!(
                            "its value is known to be {bound}, not {c}"
                        )));
                    }
                }
            }
            _ => {}
        }
        self.drop_overflow_guard = false;
        let copy = self.output_op(op, args.clone());
        self.emit(copy, Some(""));
        if self.passes.guards {
            self.learn_from_guard(op.opcode, &args);
        }
        Ok(())
    }

    fn last_output_value(&self) -> Option<Arg> {
        let n = self.out.ops.len();
        let last = self.out.ops.last()?;
        (last.opcode.result_type() != Type::Void).then(|| Arg::Value(self.out.value_of_op(n - 1)))
    }

    /// What a passing guard teaches about its arguments.
    fn learn_from_guard(&mut self, opcode: Opcode, args: &[Arg]) {
        match opcode {
            Opcode::GuardTrue | Opcode::GuardFalse => {
                let truth = opcode == Opcode::GuardTrue;
                let Arg::Value(v) = args[0] else { return };
                let bound = self.bounds[v.0 as usize];
                let (narrowed, _) = if truth {
                    bound.refine_true()
                } else {
                    bound.refine_false()
                };
                self.narrow(args[0], narrowed, 0);
                if let Some(c) = narrowed.as_constant() {
                    let to = self.int_const(c);
                    self.make_equal_to(v, to);
                }
                self.learn_from_comparison(v, truth);
            }
            Opcode::GuardValue => {
                if let (Arg::Value(v), Some(c)) = (args[0], self.as_int(args[1])) {
                    self.narrow(args[0], IntBound::constant(c), 0);
                    let to = self.int_const(c);
                    self.make_equal_to(v, to);
                }
            }
            _ => {}
        }
    }

    /// `v = cmp(a, b)` is known to be `truth`: narrow `a` and `b`.
    fn learn_from_comparison(&mut self, v: ValueId, truth: bool) {
        let Some(index) = self.out.op_index(v) else {
            return;
        };
        let op = &self.out.ops[index];
        let Some((relation, swap)) = intbounds::relation(op.opcode, truth) else {
            return;
        };
        let (opcode, mut a, mut b) = (op.opcode, op.args[0], op.args[1]);
        self.remember_truth(opcode, a, b, truth);
        if swap {
            std::mem::swap(&mut a, &mut b);
        }
        let (na, nb, _) = self.bound(a).refine(relation, self.bound(b));
        for (arg, narrowed) in [(a, na), (b, nb)] {
            self.narrow(arg, narrowed, 0);
        }
    }

    /// `arg` is known to lie in `narrowed` from here on: keep that, and
    /// pass it back to the arguments of the op that produced it (seed
    /// 000: through `+` and `-` only where no wrap is possible, which the
    /// domain's refinements decide).
    fn narrow(&mut self, arg: Arg, narrowed: IntBound, depth: u32) {
        let Arg::Value(v) = arg else { return };
        if narrowed == self.bounds[v.0 as usize] {
            return;
        }
        self.bounds[v.0 as usize] = narrowed;
        if let Some(c) = narrowed.as_constant() {
            let to = self.int_const(c);
            self.make_equal_to(v, to);
        }
        if depth >= MAX_BACKWARD_DEPTH {
            return;
        }
        let Some(index) = self.out.op_index(v) else {
            return;
        };
        if self.passes.bug.is_some() && self.injected_inverse(index, narrowed, depth) {
            return;
        }
        let op = &self.out.ops[index];
        let truth = narrowed.as_constant().map(|c| c != 0);
        match (op.opcode, truth) {
            (Opcode::IntIsTrue | Opcode::IntIsZero, Some(truth)) => {
                let (opcode, arg) = (op.opcode, op.args[0]);
                self.remember_truth(opcode, arg, arg, truth);
                let nonzero = truth == (opcode == Opcode::IntIsTrue);
                let bound = self.bound(arg);
                let (refined, empty) = if nonzero {
                    bound.refine_true()
                } else {
                    bound.refine_false()
                };
                if !empty {
                    self.narrow(arg, refined, depth + 1);
                }
                return;
            }
            (_, Some(truth)) if intbounds::relation(op.opcode, truth).is_some() => {
                self.learn_from_comparison(v, truth);
                return;
            }
            _ => {}
        }
        let checked = self.no_overflow[v.0 as usize];
        let operands = match op.opcode {
            Opcode::IntAdd => [Some(Operand::Add), Some(Operand::Add)],
            Opcode::IntAddOvf if checked => [Some(Operand::AddOvf), Some(Operand::AddOvf)],
            Opcode::IntSub => [Some(Operand::SubLeft), Some(Operand::SubRight)],
            Opcode::IntSubOvf if checked => [Some(Operand::SubOvfLeft), Some(Operand::SubOvfRight)],
            Opcode::IntAnd => [Some(Operand::And), Some(Operand::And)],
            Opcode::IntOr => [Some(Operand::Or), Some(Operand::Or)],
            Opcode::IntXor => [Some(Operand::Xor), Some(Operand::Xor)],
            Opcode::IntNeg => [Some(Operand::Neg), None],
            Opcode::IntInvert => [Some(Operand::Invert), None],
            _ => return,
        };
        let args = op.args.clone();
        for (i, operand) in operands.into_iter().enumerate() {
            let (Some(operand), Some(&own)) = (operand, args.get(i)) else {
                continue;
            };
            let other = args.get(1 - i).copied().unwrap_or(own);
            let (own_bound, other_bound) = (self.bound(own), self.bound(other));
            let (refined, empty) = own_bound.refine_by_result(operand, other_bound, narrowed);
            if !empty {
                self.narrow(own, refined, depth + 1);
            }
        }
    }
}

impl Optimizer<'_> {
    /// The injected wrong inverses (`inject`): narrows the argument of
    /// op `index` as the bug would, and says whether it did.
    fn injected_inverse(&mut self, index: usize, narrowed: IntBound, depth: u32) -> bool {
        let op = &self.out.ops[index];
        let (opcode, args) = (op.opcode, op.args.clone());
        let constant = |a: Option<&Arg>| a.and_then(|&a| self.bound(a).as_constant());
        let wrong = match (self.passes.bug, opcode) {
            (Some(Bug::WrappingAdd), Opcode::IntAdd) => constant(args.get(1)).map(|c| {
                let upper = narrowed.upper.saturating_sub(c);
                (args[0], IntBound::range(i64::MIN, upper))
            }),
            (Some(Bug::NegMinint), Opcode::IntNeg) => Some((
                args[0],
                IntBound::range(
                    narrowed.upper.saturating_neg(),
                    narrowed.lower.saturating_neg(),
                ),
            )),
            (Some(Bug::MulInverse), Opcode::IntMul) => {
                match (narrowed.as_constant(), constant(args.get(1))) {
                    (Some(d), Some(c)) if c != 0 && d % c == 0 => {
                        Some((args[0], IntBound::constant(d / c)))
                    }
                    _ => None,
                }
            }
            (Some(Bug::LshiftInverse), Opcode::IntLshift) => {
                match (narrowed.as_constant(), constant(args.get(1))) {
                    (Some(d), Some(k)) if (0..64).contains(&k) => {
                        Some((args[0], IntBound::constant(d >> k)))
                    }
                    _ => None,
                }
            }
            _ => None,
        };
        match wrong {
            Some((arg, bound)) => {
                self.narrow(arg, bound, depth + 1);
                true
            }
            None => false,
        }
    }
}

impl Subject for Optimizer<'_> {
    type Value = Arg;

    fn head(&self, value: Arg) -> Head<Arg> {
        match value {
            Arg::Const(_) => match self.as_int(value) {
                Some(c) => Head::Const(c),
                None => Head::Other,
            },
            Arg::Value(v) => {
                let Some(index) = self.out.op_index(v) else {
                    return Head::Other;
                };
                let op = &self.out.ops[index];
                let info = op.opcode.info();
                let usable = info.flags.contains(Flags::PURE)
                    || (info.flags.contains(Flags::OVF) && self.no_overflow[v.0 as usize]);
                if !usable || info.result != Type::Int || op.args.is_empty() || op.args.len() > 2 {
                    return Head::Other;
                }
                let first = self.find_const(op.args[0]);
                let second = op.args.get(1).map_or(first, |&a| self.find_const(a));
                Head::Op(op.opcode, first, second)
            }
        }
    }

    fn constant(&self, value: Arg) -> Option<i64> {
        self.as_int(value)
    }

    fn bound(&self, value: Arg) -> IntBound {
        Optimizer::bound(self, value)
    }

    fn enabled(&self, index: usize) -> bool {
        self.any_rule_fired || !self.disabled.get(index).copied().unwrap_or(false)
    }

    fn same(&self, a: Arg, b: Arg) -> bool {
        let (a, b) = (self.find_const(a), self.find_const(b));
        a == b || matches!((self.as_int(a), self.as_int(b)), (Some(x), Some(y)) if x == y)
    }
}

impl Optimizer<'_> {
    /// `find` without path compression, for the matcher's `&self` view.
    fn find_const(&self, mut arg: Arg) -> Arg {
        while let Arg::Value(v) = arg {
            match self.replaced.get(v.0 as usize).copied().flatten() {
                Some(next) => arg = next,
                None => break,
            }
        }
        arg
    }
}
