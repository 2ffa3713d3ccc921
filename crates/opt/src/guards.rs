//! Guards: a guard whose outcome is known is removed (or, if it must
//! fail, the trace is reported infeasible): `guard_true`/`guard_false`/
//! `guard_value` by the integer domain, `guard_nonnull`/`guard_isnull`/
//! `guard_class`/`guard_nonnull_class` by what is known of the reference
//! (`values`). A guard that stays teaches its arguments' facts from here
//! on: bounds, not null, the class; `guard_value(x, C)` and
//! `guard_isnull(p)` make later uses see the constant.
//! `guard_no_overflow` after an op made plain goes with it;
//! `guard_not_invalidated` goes where the heap cache knows it passes.

use traceopt_domains::IntBound;
use traceopt_ir::{Arg, Args, Flags, Op, Opcode, Type, ValueId};

use crate::driver::{Infeasible, Optimizer};
use crate::intbounds;

impl Optimizer<'_> {
    pub(crate) fn guard(&mut self, index: usize, op: &Op, args: Args) -> Result<(), Infeasible> {
        match op.opcode {
            Opcode::GuardNoException | Opcode::GuardNotForced if self.call_removed => {
                return Ok(());
            }
            Opcode::GuardNoOverflow | Opcode::GuardOverflow if self.drop_overflow_guard => {
                self.drop_overflow_guard = false;
                if op.opcode == Opcode::GuardOverflow {
                    return Err(self.infeasible(
                        index,
                        op,
                        "the operation before it cannot overflow",
                    ));
                }
                return Ok(());
            }
            Opcode::GuardNoOverflow => {
                // The op before passed its overflow check: its bound
                // holds from here on, and rules may look into it.
                if let Some(Arg::Value(v)) = self.last_output_value() {
                    let op = &self.out.ops[self.defining_op(v).expect("an op's value")];
                    if op.opcode.has(Flags::OVF) {
                        let (opcode, args) = (op.opcode, Args::from_slice(&op.args));
                        let arg_bounds: Vec<IntBound> =
                            args.iter().map(|&a| self.bound(a)).collect();
                        if let Some(bound) = intbounds::forward(opcode, &arg_bounds) {
                            self.set_bound(v, bound);
                        }
                        self.values[v.0 as usize].no_overflow = true;
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
                    return Err(self.infeasible(
                        index,
                        op,
                        &format!("its value is known to be {bound}"),
                    ));
                }
            }
            Opcode::GuardNonnull
            | Opcode::GuardIsnull
            | Opcode::GuardClass
            | Opcode::GuardNonnullClass
                if self.passes.guards =>
            {
                let (info, null) = (self.ptr_facts(args[0]), self.is_null(args[0]));
                let class = match args.get(1) {
                    Some(&Arg::Const(c)) => Some(self.out.constant(c)),
                    _ => None,
                };
                let known_class = info.class.is_some() && info.class.as_ref() == class;
                let (passes, fails) = match op.opcode {
                    Opcode::GuardNonnull => (info.nonnull, null),
                    Opcode::GuardIsnull => (null, info.nonnull),
                    Opcode::GuardClass => (known_class, false),
                    _ => (known_class, null),
                };
                if passes {
                    return Ok(());
                }
                if op.opcode == Opcode::GuardClass
                    && self.strengthen_null_test(index, Opcode::GuardNonnullClass, &args)
                {
                    self.learn_from_guard(op.opcode, &args);
                    return Ok(());
                }
                if fails {
                    let what = if null { "null" } else { "not null" };
                    return Err(self.infeasible(
                        index,
                        op,
                        &format!("its reference is known to be {what}"),
                    ));
                }
            }
            Opcode::GuardValue if self.passes.guards && args[0] == args[1] => return Ok(()),
            // A place PyPy's loop peeling may put guards later; it never
            // fails itself (PyPy's optimizer drops it too).
            Opcode::GuardFutureCondition if self.passes.guards => return Ok(()),
            Opcode::GuardGcType | Opcode::GuardIsObject
                if self.passes.guards && self.gc_type_known(args[0], args.get(1).copied()) =>
            {
                return Ok(())
            }
            Opcode::GuardNotInvalidated if self.passes.heap => {
                if self.heap.not_invalidated {
                    return Ok(());
                }
                self.heap.not_invalidated = true;
            }
            Opcode::GuardValue if self.passes.guards => {
                // A test of a reference against a constant object.
                let object = matches!(args[1], Arg::Const(c)
                    if matches!(self.out.constant(c), traceopt_ir::Const::Ptr(_)));
                if object && self.strengthen_null_test(index, Opcode::GuardValue, &args) {
                    self.learn_from_guard(op.opcode, &args);
                    return Ok(());
                }
                if let Some(c) = self.as_int(args[1]) {
                    let bound = self.bound(args[0]);
                    if bound.as_constant() == Some(c) {
                        return Ok(());
                    }
                    if !bound.contains(c) {
                        return Err(self.infeasible(
                            index,
                            op,
                            &format!("its value is known to be {bound}, not {c}"),
                        ));
                    }
                }
            }
            _ => {}
        }
        self.drop_overflow_guard = false;
        let copy = self.output_op(op, Args::from_slice(&args));
        let at = self.out.ops.len();
        // (`guard_exception` gives the exception it caught.)
        let input = self.input;
        let result = (op.opcode.result_type() != Type::Void).then(|| input.value_of_op(index));
        let name = |v| input.compact_name(v);
        let v = self.emit(copy, Some(result.map_or(&crate::driver::UNNAMED, name)));
        if let Some(caught) = result {
            self.map[caught.0 as usize] = Some(Arg::Value(v));
        }
        if op.opcode == Opcode::GuardNonnull {
            self.nonnull_guards.insert(args[0], at);
        }
        if self.passes.guards {
            self.learn_from_guard(op.opcode, &args);
        }
        Ok(())
    }

    /// `guard_class(args)` or `guard_value(args)` of a constant object,
    /// input op `index`, on a reference a `guard_nonnull` of the output
    /// tested: that guard becomes `strong(args)` (a `guard_nonnull_class`
    /// or the `guard_value`: PyPy's guard strengthening), if fewer than
    /// `MAX_GUARDS_FAILED_EARLY` input guards and no conditional call or
    /// `virtual_ref_finish` lie between the two (as the validator takes a
    /// guard failing in the place of one of that many later ones: the
    /// interpreter resumed at the earlier one does what the trace does in
    /// between; but not that it finishes a vref there, whose token the
    /// earlier resume data still holds). Whether it did.
    fn strengthen_null_test(&mut self, index: usize, strong: Opcode, args: &[Arg]) -> bool {
        let Some(&at) = self.nonnull_guards.get(&args[0]) else {
            return false;
        };
        let earlier = &self.out.ops[at];
        let Some(origin) = self.provenance[at] else {
            return false;
        };
        if earlier.opcode != Opcode::GuardNonnull || earlier.args[0] != args[0] || origin >= index {
            return false;
        }
        // (A conditional call the output leaves out the validator takes
        // as a guard that never fails: no guard past it may fail early.)
        let mut guards = 0;
        for op in &self.input.ops[origin + 1..index] {
            guards += usize::from(op.opcode.is_guard());
            let call = matches!(
                op.opcode,
                Opcode::CondCallN
                    | Opcode::CondCallValueI
                    | Opcode::CondCallValueR
                    | Opcode::VirtualRefFinish
            );
            if call || guards >= traceopt_ir::MAX_GUARDS_FAILED_EARLY {
                return false;
            }
        }
        let guard = &mut self.out.ops[at];
        guard.opcode = strong;
        guard.args = args.into();
        true
    }

    /// A hint of the trace's (`record_exact_class`, `record_exact_value_*`,
    /// `assert_not_none`, `record_known_result`): what it says holds,
    /// for the trace is undefined where it does not (PyPy's meaning);
    /// the optimizer takes it as a passed guard and drops it. Whether it
    /// did (not where it contradicts what is known).
    pub(crate) fn take_hint(&mut self, opcode: Opcode, args: &[Arg]) -> bool {
        match opcode {
            Opcode::RecordExactClass => {
                let (known, class) = (self.ptr_info(args[0]).class, self.constant_of(args[1]));
                if class.is_none() || known.is_some_and(|k| Some(k) != class) {
                    return false;
                }
                self.learn_from_guard(Opcode::GuardClass, args);
            }
            Opcode::RecordExactValueI | Opcode::RecordExactValueR => {
                if !matches!(args[1], Arg::Const(_)) {
                    return false;
                }
                if let Some(c) = self.as_int(args[1]) {
                    if !self.bound(args[0]).contains(c) {
                        return false;
                    }
                }
                self.learn_from_guard(Opcode::GuardValue, args);
            }
            Opcode::AssertNotNone => {
                if self.is_null(args[0]) {
                    return false;
                }
                self.learn_from_guard(Opcode::GuardNonnull, args);
            }
            Opcode::RecordKnownResult if self.passes.heap => {
                self.heap_knows_call(Opcode::CallPureI, &args[1..], args[0]);
            }
            _ => return false,
        }
        true
    }

    /// What a passing guard teaches about its arguments.
    pub(crate) fn learn_from_guard(&mut self, opcode: Opcode, args: &[Arg]) {
        match opcode {
            Opcode::GuardTrue | Opcode::GuardFalse => {
                let truth = opcode == Opcode::GuardTrue;
                let Arg::Value(v) = args[0] else { return };
                let bound = self.value_bound(v);
                let (narrowed, _) = if truth {
                    bound.refine_true()
                } else {
                    bound.refine_false()
                };
                // A new bound is passed back through the comparison
                // behind `v` (`narrow` teaches from it); a bound known
                // already stops there, so the comparison is taught here.
                if narrowed == bound {
                    self.learn_from_comparison(v, truth);
                } else {
                    self.narrow(args[0], narrowed, 0);
                }
                self.learn_null_test(v, truth);
            }
            Opcode::GuardValue => match (args[0], self.as_int(args[1])) {
                (Arg::Value(v), Some(c)) => {
                    self.narrow(args[0], IntBound::constant(c), 0);
                    let to = self.int_const(c);
                    self.make_equal_to(v, to);
                }
                (Arg::Value(v), None) if matches!(args[1], Arg::Const(_)) => {
                    self.make_equal_to(v, args[1]);
                }
                _ => {}
            },
            Opcode::GuardNonnull => self.learn_ptr(args[0], true, None),
            Opcode::GuardClass | Opcode::GuardNonnullClass => {
                let class = self.constant_of(args[1]);
                self.learn_ptr(args[0], true, class);
            }
            Opcode::GuardIsnull => {
                if let Arg::Value(v) = args[0] {
                    let null = self.null_const();
                    self.make_equal_to(v, null);
                }
            }
            _ => {}
        }
    }

    /// `v = cmp(a, b)` is known to be `truth`: narrow `a` and `b`.
    pub(crate) fn learn_from_comparison(&mut self, v: ValueId, truth: bool) {
        let Some(index) = self.defining_op(v) else {
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
}
