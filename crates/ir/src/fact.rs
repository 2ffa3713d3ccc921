//! A fact about one value that a guard could check: the witness a
//! peeled loop's body is optimized under and proved by. The optimizer
//! exports, for each argument of the loop's label, what the body takes
//! for granted about it; the validator turns each fact back into guards
//! (`Fact::guards`) and proves that the preamble establishes it and that
//! each pass of the body keeps it.

use crate::trace::{Arg, Const, Op, Pos, Trace};
use crate::{Opcode, Type};
use thin_vec::ThinVec;

/// What may be taken for granted about one value.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Fact {
    /// An integer within `[lower, upper]`.
    pub range: Option<(i64, i64)>,
    /// A reference that is not null.
    pub nonnull: bool,
    /// A reference to an object of this class (so not null).
    pub class: Option<Const>,
}

impl Fact {
    /// Nothing is known.
    pub fn is_empty(&self) -> bool {
        *self == Fact::default()
    }

    /// Appends to `trace` the guards that check this fact of `value`
    /// (comparisons and `guard_true`, `guard_class`, `guard_nonnull`), each
    /// guard with no fail arguments; returns how many ops it appended.
    pub fn guards(&self, trace: &mut Trace, value: Arg) -> usize {
        let before = trace.ops.len();
        self.guard_lower(trace, value);
        self.guard_upper(trace, value);
        self.guard_object(trace, value);
        trace.ops.len() - before
    }

    /// The guard that `value` is at least the range's lower bound (none
    /// where the fact has none).
    pub fn guard_lower(&self, trace: &mut Trace, value: Arg) {
        if let Some((lower, _)) = self.range.filter(|r| r.0 != i64::MIN) {
            guard_compare(trace, Opcode::IntGe, value, lower);
        }
    }

    /// The guard that `value` is at most the range's upper bound (none
    /// where the fact has none).
    pub fn guard_upper(&self, trace: &mut Trace, value: Arg) {
        if let Some((_, upper)) = self.range.filter(|r| r.1 != i64::MAX) {
            guard_compare(trace, Opcode::IntLe, value, upper);
        }
    }

    /// The guard that `value` is not null, and of the fact's class if it
    /// names one (none where the fact says neither).
    pub fn guard_object(&self, trace: &mut Trace, value: Arg) {
        if let Some(class) = &self.class {
            let c = Arg::Const(trace.add_const(class.clone()));
            push_guard(trace, Opcode::GuardNonnullClass, vec![value, c]);
        } else if self.nonnull {
            push_guard(trace, Opcode::GuardNonnull, vec![value]);
        }
    }

    /// Whether a value of type `ty` can have this fact.
    pub fn fits(&self, ty: Type) -> bool {
        match ty {
            Type::Int => !self.nonnull && self.class.is_none(),
            Type::Ref => self.range.is_none(),
            _ => self.is_empty(),
        }
    }
}

/// Appends `guard_true(compare(value, bound))`.
fn guard_compare(trace: &mut Trace, compare: Opcode, value: Arg, bound: i64) {
    let c = Arg::Const(trace.add_const(Const::Int(bound)));
    let test = trace.push(Op::new(compare, vec![value, c]), "", Pos::default());
    push_guard(trace, Opcode::GuardTrue, vec![Arg::Value(test)]);
}

/// Appends a guard with no fail arguments.
fn push_guard(trace: &mut Trace, opcode: Opcode, args: Vec<Arg>) {
    let guard = Op {
        fail_args: Some(ThinVec::new()),
        ..Op::new(opcode, args)
    };
    trace.push(guard, "", Pos::default());
}

/// A fact of a loop's constants alone, which holds on every pass of the
/// loop or on none: what the loop's op `site` makes (`new_with_vtable`
/// of a size descr that names no class; one op makes objects of one
/// class) is of class `class` (a constant of the state's pool). The
/// body takes it for granted; the preamble tests it once where it
/// starts (a guard that, failing, leaves at the loop's start with its
/// inputs: as if the loop had not been entered). The loop's recording
/// is one pass; these are what its next pass tests of what this one
/// passes on (`SiteClass::of_loop`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SiteClass {
    pub site: usize,
    pub class: crate::ConstId,
}

impl SiteClass {
    /// The facts of the loop `trace` (its last op a jump to its start)
    /// that its next pass tests: a class guard on an input to which the
    /// jump passes what one of its unnamed allocations made, where the
    /// recording saw no class of it (`Trace::recorded_classes`). (A pass
    /// that gets to its jump passes that object on, and the next one
    /// tests it: where such a fact fails, no second pass gets past that
    /// guard.)
    /// `recorded` is the loop's `Trace::recorded_classes` (found once
    /// for every copy of the loop).
    pub fn of_loop(trace: &Trace, recorded: &[(usize, Const)]) -> Vec<SiteClass> {
        let Some(jump) = trace.ops.last().filter(|op| op.opcode == Opcode::Jump) else {
            return Vec::new();
        };
        if jump.args.len() != trace.inputs.len() {
            return Vec::new();
        }
        // What the jump passes for input `i`, seen through `same_as`.
        let passed = |i: usize| {
            let mut arg = jump.args[i];
            while let Arg::Value(v) = arg {
                match trace.op_index(v).map(|k| &trace.ops[k]) {
                    Some(op) if op.opcode == Opcode::SameAsR => arg = op.args[0],
                    _ => break,
                }
            }
            arg
        };
        let input_of = |a: Arg| match a {
            Arg::Value(v) if (v.0 as usize) < trace.inputs.len() => Some(v.0 as usize),
            _ => None,
        };
        let mut found = Vec::new();
        // (The opcode first: most ops are no class test.)
        let class_tests = (trace.ops.iter())
            .filter(|op| matches!(op.opcode, Opcode::GuardClass | Opcode::GuardNonnullClass));
        for op in class_tests {
            let (Some(&first), Some(&Arg::Const(c))) = (op.args.first(), op.args.get(1)) else {
                continue;
            };
            let Some(i) = input_of(first) else { continue };
            let Arg::Value(v) = passed(i) else {
                continue;
            };
            let Some(site) = trace.op_index(v) else {
                continue;
            };
            let made = &trace.ops[site];
            let unnamed = trace.makes_unnamed_class(made.opcode, made.descr);
            if !unnamed || recorded.iter().any(|(k, _)| *k == site) {
                continue;
            }
            let fact = SiteClass { site, class: c };
            if !found.contains(&fact) {
                found.push(fact);
            }
        }
        found
    }

    /// The test of this fact, its two ops made by `push` (which gives
    /// each its value): a probe allocated with the descr of the loop's
    /// (`looped`'s) op `site`, and its class guard, which fails with
    /// `fail_args`.
    pub fn test(
        &self,
        looped: &Trace,
        fail_args: &[crate::FailArg],
        mut push: impl FnMut(Op) -> crate::ValueId,
    ) {
        let probe = Op {
            descr: looped.ops.get(self.site).and_then(|op| op.descr),
            ..Op::new(Opcode::NewWithVtable, Vec::new())
        };
        let p = push(probe);
        push(Op {
            fail_args: Some(fail_args.into()),
            ..Op::new(
                Opcode::GuardClass,
                vec![Arg::Value(p), Arg::Const(self.class)],
            )
        });
    }
}

/// A claim about a recorded trace: its recorded class guard `guard`
/// tests what its op `site` made (an unnamed `new_with_vtable`, whose
/// class the recording names nowhere else), reached through the heap
/// (`p169 = getarrayitem_gc_r(p151, 0)` of a frame the trace built and
/// filled). Where that holds on every run that reaches the guard, it
/// held on the recording, whose run passed the guard: so the class of
/// what the op makes, a constant of the op, is the guard's. An
/// optimizer that sees it so makes this claim, and a validator proves
/// it before taking the class for granted (`traceopt_verify`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeenClass {
    pub site: usize,
    pub guard: usize,
}

impl SeenClass {
    /// The class the guard tests (a constant of `trace`), if the claim
    /// fits `trace`: both ops recorded, the site an unnamed allocation
    /// before the guard, the guard a class guard of a constant class.
    pub fn class(&self, trace: &Trace) -> Option<crate::ConstId> {
        let recorded = trace.recorded.start..trace.recorded.end.min(trace.ops.len());
        let (site, guard) = (trace.ops.get(self.site)?, trace.ops.get(self.guard)?);
        let fits = recorded.contains(&self.site)
            && recorded.contains(&self.guard)
            && self.site < self.guard
            && trace.makes_unnamed_class(site.opcode, site.descr)
            && matches!(guard.opcode, Opcode::GuardClass | Opcode::GuardNonnullClass);
        match guard.args.get(1) {
            Some(&Arg::Const(c)) if fits => Some(c),
            _ => None,
        }
    }
}

/// The state at a peeled loop's label, in terms of the label's
/// arguments: what each input of the loop is (`inputs[i]`), with the
/// facts the body takes for granted of each label argument. In `inputs`
/// and in the contents of `virtuals`, `Arg::Value(ValueId(k))` stands for
/// the label's argument `k`; a constant is itself; `FailArg::Virtual(j)`
/// is an object the loop passes along without the peeled loop ever
/// allocating it (`virtuals[j]`, allocated in the loop by its op
/// `allocs[j]`). With no virtuals and `inputs[i]` label argument `i`,
/// the label takes the loop's inputs as they are.
///
/// A label argument may also be `derived`: not part of the loop's
/// state but what a field of one of its objects holds at the label, or
/// what a pure op of other label arguments gives (a loop-invariant read
/// or computation the body does not repeat, PyPy's short preamble).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LabelState {
    pub inputs: Vec<crate::FailArg>,
    pub virtuals: Vec<crate::Virtual>,
    pub allocs: Vec<usize>,
    pub facts: Vec<Fact>,
    pub derived: Vec<Derived>,
    /// What else holds at the label: ops of label arguments (field reads
    /// or pure ops) whose results are constants, which no label argument
    /// carries (a map or a flag the preamble checked).
    pub known: Vec<Known>,
    /// The classes of what the loop's unnamed allocations make that the
    /// body takes for granted, which the preamble tests where it starts.
    pub site_classes: Vec<SiteClass>,
    /// Classes the recording of the loop shows its unnamed allocations
    /// to make, which the preamble saw and the body takes for granted
    /// (`SeenClass`; proved of the loop's recording).
    pub seen_classes: Vec<SeenClass>,
}

/// Label argument `slot` is what `source` gives at the label.
#[derive(Clone, Debug, PartialEq)]
pub struct Derived {
    pub slot: usize,
    pub source: Source,
}

/// At the label, `source` gives the constant `value` (of the state's
/// pool).
#[derive(Clone, Debug, PartialEq)]
pub struct Known {
    pub source: Source,
    pub value: crate::ConstId,
}

/// An op of label arguments: a read of a field (`getfield_gc_*`, `descr`
/// the field) or of an array item (`getarrayitem_gc_*`), or a pure op
/// (`Source::may_derive`). Each argument is a
/// label argument `Arg::Value(ValueId(k))` (one of the loop's state, or
/// one derived before) or a constant.
#[derive(Clone, Debug, PartialEq)]
pub struct Source {
    pub opcode: Opcode,
    /// (Inline, as an op's: one or two as a rule.)
    pub args: crate::Args,
    pub descr: Option<crate::DescrId>,
}

impl Source {
    /// A read of field `descr` of `object`, a value of type `ty`.
    pub fn field(object: Arg, descr: crate::DescrId, ty: Type) -> Source {
        let opcode = match ty {
            Type::Ref => Opcode::GetfieldGcR,
            Type::Float => Opcode::GetfieldGcF,
            _ => Opcode::GetfieldGcI,
        };
        Source {
            opcode,
            args: crate::smallvec![object],
            descr: Some(descr),
        }
    }

    /// A read of item `index` of `array` (items `descr`), a value of
    /// type `ty`.
    pub fn item(array: Arg, index: Arg, descr: crate::DescrId, ty: Type) -> Source {
        let opcode = match ty {
            Type::Ref => Opcode::GetarrayitemGcR,
            Type::Float => Opcode::GetarrayitemGcF,
            _ => Opcode::GetarrayitemGcI,
        };
        Source {
            opcode,
            args: crate::smallvec![array, index],
            descr: Some(descr),
        }
    }

    /// The array item this reads (array, index, items descr), if it
    /// reads one.
    pub fn as_item(&self) -> Option<(Arg, Arg, crate::DescrId)> {
        use Opcode::*;
        match (self.opcode, &self.args[..], self.descr) {
            (GetarrayitemGcI | GetarrayitemGcR | GetarrayitemGcF, &[array, index], Some(d)) => {
                Some((array, index, d))
            }
            _ => None,
        }
    }

    /// Whether this reads the heap (a field or an array item).
    pub fn reads(&self) -> bool {
        self.as_field().is_some() || self.as_item().is_some()
    }

    /// The field this reads, and of what, if it reads one.
    pub fn as_field(&self) -> Option<(Arg, crate::DescrId)> {
        use Opcode::*;
        match (self.opcode, &self.args[..], self.descr) {
            (GetfieldGcI | GetfieldGcR | GetfieldGcF, &[object], Some(d)) => Some((object, d)),
            _ => None,
        }
    }

    /// Whether a label argument may be derived by `opcode`: a field read,
    /// or an op whose result depends on its arguments alone and is
    /// defined for every argument (integer and float arithmetic and
    /// comparisons, the casts that always succeed, reference
    /// comparisons, the lengths of arrays and strings, which never
    /// change, calls of elidable functions, whose result depends on the
    /// arguments alone, and loop-invariant calls, whose result is the
    /// same for the whole run), and shifts by a constant within the word (`amount`, the
    /// second argument's value where it is a constant). Not division,
    /// other shifts (undefined beyond the word) nor the float-to-int
    /// casts.
    #[inline]
    pub fn may_derive(opcode: Opcode, amount: Option<i64>) -> bool {
        use Opcode::*;
        let shift = matches!(opcode, IntLshift | IntRshift | UintRshift);
        (shift && amount.is_some_and(|k| (0..64).contains(&k)))
            || matches!(
                opcode,
                GetfieldGcI
                    | GetfieldGcR
                    | GetfieldGcF
                    | GetarrayitemGcI
                    | GetarrayitemGcR
                    | GetarrayitemGcF
                    | ArraylenGc
                    | Strlen
                    | Unicodelen
                    | IntAdd
                    | IntSub
                    | IntMul
                    | UintMulHigh
                    | IntAnd
                    | IntOr
                    | IntXor
                    | IntLt
                    | IntLe
                    | IntEq
                    | IntNe
                    | IntGt
                    | IntGe
                    | UintLt
                    | UintLe
                    | UintGt
                    | UintGe
                    | IntIsZero
                    | IntIsTrue
                    | IntNeg
                    | IntInvert
                    | IntForceGeZero
                    | FloatAdd
                    | FloatSub
                    | FloatMul
                    | FloatTruediv
                    | FloatNeg
                    | FloatAbs
                    | FloatLt
                    | FloatLe
                    | FloatEq
                    | FloatNe
                    | FloatGt
                    | FloatGe
                    | CastIntToFloat
                    | ConvertFloatBytesToLonglong
                    | ConvertLonglongBytesToFloat
                    | PtrEq
                    | PtrNe
                    | InstancePtrEq
                    | InstancePtrNe
                    | CallPureI
                    | CallPureR
                    | CallPureF
                    | CallLoopinvariantI
                    | CallLoopinvariantR
                    | CallLoopinvariantF
            )
    }
}

impl LabelState {
    /// Whether `a` (of `pool`) and `b` (of `other_pool`) are the same
    /// label argument or the same constant.
    fn same_item(pool: &Trace, a: Arg, other_pool: &Trace, b: Arg) -> bool {
        match (a, b) {
            (Arg::Const(c), Arg::Const(d)) => pool.constant(c) == other_pool.constant(d),
            // A constant and anything else differ as items too.
            _ => a == b,
        }
    }

    /// The class each of the state's objects is known to be of, where its
    /// size descr does not name one (a log's `<SizeDescr 16>`, which an
    /// int box and a float box share): what the recording of the trace
    /// that made it (`recording`, whose op indexes `allocs` are) saw its
    /// allocating op make (`Trace::recorded_classes`). `None` for the
    /// others, and where the recording saw nothing.
    pub fn recorded_object_classes(&self, pool: &Trace, recording: &Trace) -> Vec<Option<Const>> {
        self.object_classes_of(pool, &recording.recorded_classes())
    }

    /// `recorded_object_classes`, with the recording's
    /// `Trace::recorded_classes` given (`recorded`).
    pub fn object_classes_of(
        &self,
        pool: &Trace,
        recorded: &[(usize, Const)],
    ) -> Vec<Option<Const>> {
        (self.virtuals.iter().zip(&self.allocs))
            .map(|(v, alloc)| {
                let descr = pool.descr(v.descr.filter(|_| v.opcode == Opcode::NewWithVtable)?);
                let found = recorded.iter().find(|(k, _)| k == alloc);
                found
                    .filter(|_| !descr.names_class())
                    .map(|(_, c)| c.clone())
            })
            .collect()
    }

    /// The first object of the state whose size descr does not name its
    /// class and whose class is not known (`classes`, as
    /// `recorded_object_classes` gives them) to be that of the same
    /// object of a loop's state (`loop_classes`): entering the loop, such
    /// an object may be of another class than the loop's body makes it
    /// with (one descr text may be two classes).
    pub fn unknown_object_class(
        &self,
        pool: &Trace,
        classes: &[Option<Const>],
        loop_classes: &[Option<Const>],
    ) -> Option<usize> {
        (self.virtuals.iter().enumerate()).position(|(i, v)| {
            let unnamed = pool.makes_unnamed_class(v.opcode, v.descr);
            let (mine, theirs) = (classes.get(i).cloned().flatten(), loop_classes.get(i));
            unnamed && (mine.is_none() || theirs != Some(&mine))
        })
    }

    /// Whether `self` (its constants and descrs `pool`'s) and `other`
    /// (`other_pool`'s) have the same shape: as many label arguments,
    /// the same objects holding the same constants and label arguments
    /// in the same places, the same derived arguments, and the same
    /// known constants. Where the objects were allocated and the facts
    /// are not compared.
    pub fn same_shape(&self, pool: &Trace, other: &LabelState, other_pool: &Trace) -> bool {
        use crate::{DescrId, FailArg, Virtual};
        let item = |x: &FailArg, y: &FailArg| match (x, y) {
            (FailArg::Arg(a), FailArg::Arg(b)) => Self::same_item(pool, *a, other_pool, *b),
            _ => x == y,
        };
        let descr = |x: Option<DescrId>, y: Option<DescrId>| {
            x.map(|d| &pool.descr(d).text) == y.map(|d| &other_pool.descr(d).text)
        };
        let object = |x: &Virtual, y: &Virtual| {
            x.opcode == y.opcode
                && descr(x.descr, y.descr)
                && x.fields.len() == y.fields.len()
                && (x.fields.iter().zip(&y.fields))
                    .all(|((d, u), (e, w))| descr(Some(*d), Some(*e)) && item(u, w))
                && x.items.len() == y.items.len()
                && x.items.iter().zip(&y.items).all(|(u, w)| item(u, w))
        };
        let source = |x: &Source, y: &Source| {
            x.opcode == y.opcode
                && x.args.len() == y.args.len()
                && (x.args.iter().zip(&y.args))
                    .all(|(&a, &b)| item(&FailArg::Arg(a), &FailArg::Arg(b)))
                && descr(x.descr, y.descr)
        };
        let derived = |x: &Derived, y: &Derived| x.slot == y.slot && source(&x.source, &y.source);
        let known = |x: &Known, y: &Known| {
            source(&x.source, &y.source)
                && item(
                    &FailArg::Arg(Arg::Const(x.value)),
                    &FailArg::Arg(Arg::Const(y.value)),
                )
        };
        let (a, b) = (self, other);
        a.facts.len() == b.facts.len()
            && a.derived.len() == b.derived.len()
            && a.derived.iter().zip(&b.derived).all(|(x, y)| derived(x, y))
            && a.known.len() == b.known.len()
            && a.known.iter().zip(&b.known).all(|(x, y)| known(x, y))
            && a.inputs.len() == b.inputs.len()
            && a.inputs.iter().zip(&b.inputs).all(|(x, y)| item(x, y))
            && a.virtuals.len() == b.virtuals.len()
            && (a.virtuals.iter().zip(&b.virtuals)).all(|(x, y)| object(x, y))
    }

    /// Where `other` (`other_pool`'s) first differs in shape from `self`
    /// (`pool`'s) among the loop's inputs, in words; a general word where
    /// the inputs agree and something else differs (`same_shape`).
    pub fn shape_difference(&self, pool: &Trace, other: &LabelState, other_pool: &Trace) -> String {
        use crate::FailArg;
        let describe = |item: &FailArg, pool: &Trace| match item {
            FailArg::Arg(Arg::Const(c)) => {
                let mut text = String::from("the constant ");
                crate::print::write_const(&mut text, pool.constant(*c));
                text
            }
            FailArg::Arg(Arg::Value(_)) => "a value".to_string(),
            FailArg::Virtual(_) => "an object kept virtual".to_string(),
            _ => "something else".to_string(),
        };
        let differs = |x: &FailArg, y: &FailArg| match (x, y) {
            (FailArg::Arg(a @ Arg::Const(_)), FailArg::Arg(b))
            | (FailArg::Arg(a), FailArg::Arg(b @ Arg::Const(_))) => {
                !Self::same_item(pool, *a, other_pool, *b)
            }
            (FailArg::Arg(Arg::Value(_)), FailArg::Arg(Arg::Value(_))) => false,
            (FailArg::Virtual(_), FailArg::Virtual(_)) => false,
            _ => true,
        };
        let first =
            (self.inputs.iter().zip(&other.inputs).enumerate()).find(|(_, (x, y))| differs(x, y));
        if let Some((i, (x, y))) = first {
            return format!(
                "the loop's input {i} is {} at its label, {} here",
                describe(x, pool),
                describe(y, other_pool)
            );
        }
        fn contents(v: &crate::Virtual) -> impl Iterator<Item = &crate::FailArg> {
            v.fields.iter().map(|(_, f)| f).chain(&v.items)
        }
        for (j, (x, y)) in self.virtuals.iter().zip(&other.virtuals).enumerate() {
            let text =
                |v: &crate::Virtual, pool: &Trace| v.descr.map(|d| pool.descr(d).text.clone());
            if x.opcode != y.opcode || text(x, pool) != text(y, other_pool) {
                return format!("its object {j} is of another kind or size than the label's");
            }
            let field =
                (contents(x).zip(contents(y)).enumerate()).find(|(_, (u, w))| differs(u, w));
            if let Some((k, (u, w))) = field {
                return format!(
                    "what its object {j} holds in place {k} is {} at the label, {} here",
                    describe(u, pool),
                    describe(w, other_pool)
                );
            }
            if contents(x).count() != contents(y).count() {
                return format!("its object {j} holds other fields than the label's");
            }
        }
        if self.derived.len() != other.derived.len() {
            return "the loop's label reads or computes other values than the trace can".into();
        }
        // A known constant the trace could not keep: the first the label
        // has that the trace's state lacks.
        let same_known = |x: &Known, y: &Known| {
            x.source.opcode == y.source.opcode
                && x.source.args.len() == y.source.args.len()
                && (x.source.args.iter().zip(&y.source.args))
                    .all(|(&a, &b)| Self::same_item(pool, a, other_pool, b))
        };
        let lacking = (self.known.iter()).find(|k| !other.known.iter().any(|o| same_known(k, o)));
        if let Some(k) = lacking {
            let mut text = format!("the loop takes for granted that {}(", k.source.opcode);
            for (i, arg) in k.source.args.iter().enumerate() {
                if i > 0 {
                    text.push_str(", ");
                }
                match arg {
                    Arg::Value(v) => text.push_str(&format!("label argument {}", v.0)),
                    Arg::Const(c) => crate::print::write_const(&mut text, pool.constant(*c)),
                }
            }
            text.push_str(") is ");
            crate::print::write_const(&mut text, pool.constant(k.value));
            text.push_str(", which the trace cannot test to hold");
            return text;
        }
        "the objects it passes along are not those the label takes".to_string()
    }

    /// For each label argument, where the loop's state holds it first:
    /// the loop's input, then the fields and items to follow from there
    /// (in the order of `inputs`, then each object's contents).
    /// The places where a label argument is met first (`paths`): there,
    /// a state of this shape holds a label argument of its own.
    pub fn fresh_paths(&self) -> Vec<Path> {
        self.paths().into_iter().flatten().collect()
    }

    pub fn paths(&self) -> Vec<Option<Path>> {
        let mut paths = vec![None; self.facts.len()];
        for (item, path) in self.places() {
            if let crate::FailArg::Arg(Arg::Value(v)) = item {
                let slot = &mut paths[v.0 as usize];
                if slot.is_none() {
                    *slot = Some(path);
                }
            }
        }
        paths
    }

    /// The places of the state that hold a constant, with it (in the
    /// order of `places`).
    pub fn constant_places(&self) -> Vec<(Path, crate::ConstId)> {
        (self.places().into_iter())
            .filter_map(|(item, path)| match item {
                crate::FailArg::Arg(Arg::Const(c)) => Some((path, c)),
                _ => None,
            })
            .collect()
    }

    /// Every item of the state with its place: the inputs in order, each
    /// object's contents after the place where it is first met (and only
    /// there), depth first.
    fn places(&self) -> Vec<(crate::FailArg, Path)> {
        let contents: usize = (self.virtuals.iter())
            .map(|v| v.fields.len() + v.items.len())
            .sum();
        let mut places = Vec::with_capacity(self.inputs.len() + contents);
        let mut seen = vec![false; self.virtuals.len()];
        let mut stack: Vec<(crate::FailArg, usize, Vec<Step>)> = (self.inputs.iter())
            .enumerate()
            .rev()
            .map(|(i, &item)| (item, i, Vec::new()))
            .collect();
        while let Some((item, input, path)) = stack.pop() {
            if let crate::FailArg::Virtual(j) = item {
                if seen[j as usize] {
                    continue;
                }
                seen[j as usize] = true;
                // Its contents, last first: the first is taken next.
                let object = &self.virtuals[j as usize];
                for (index, &value) in object.items.iter().enumerate().rev() {
                    let step = Step::Item(index as i64, object.descr);
                    stack.push((value, input, extended(&path, step)));
                }
                for &(descr, value) in object.fields.iter().rev() {
                    stack.push((value, input, extended(&path, Step::Field(descr))));
                }
            }
            places.push((item, (input, path)));
        }
        places
    }

    /// The tests a trace entering the peeled loop at its label makes of
    /// the state it passes on where it does not know their outcome (each
    /// a guard that, failing, goes to the loop's start instead), in the
    /// order the optimizer and the validator both make them: that each
    /// constant place holds its constant, then each label argument's
    /// fact (range first, then the reference test), then that each known
    /// constant holds. A derived argument is computed after the tests of
    /// the arguments it is made of.
    pub fn entry_tests(&self) -> Vec<EntryTest> {
        let constants = (0..self.constant_places().len()).map(EntryTest::Constant);
        let facts = self.facts.iter().enumerate().flat_map(|(slot, fact)| {
            let (lower, upper) = fact.range.unwrap_or((i64::MIN, i64::MAX));
            [
                (lower != i64::MIN).then_some(EntryTest::AtLeast(slot)),
                (upper != i64::MAX).then_some(EntryTest::AtMost(slot)),
                (fact.nonnull || fact.class.is_some()).then_some(EntryTest::Object(slot)),
            ]
            .into_iter()
            .flatten()
        });
        let known = (0..self.known.len()).map(EntryTest::Known);
        constants.chain(facts).chain(known).collect()
    }
}

/// One test of an entry into a peeled loop (`LabelState::entry_tests`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryTest {
    /// The place `constant_places()[i]` holds its constant.
    Constant(usize),
    /// Label argument `slot` is at least its range's lower bound.
    AtLeast(usize),
    /// Label argument `slot` is at most its range's upper bound.
    AtMost(usize),
    /// Label argument `slot` is not null (and of its fact's class, if
    /// the fact names one).
    Object(usize),
    /// Known constant `i` holds.
    Known(usize),
}

/// A place in a loop's state: one of its inputs, then the fields and
/// items to follow from there.
pub type Path = (usize, Vec<Step>);

/// `path` and then `step`. (Made in one allocation: a clone has no
/// room for the step.)
pub fn extended(path: &[Step], step: Step) -> Vec<Step> {
    let mut steps = Vec::with_capacity(path.len() + 1);
    steps.extend_from_slice(path);
    steps.push(step);
    steps
}

/// One step from an object to what it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// A field, by its descr.
    Field(crate::DescrId),
    /// An array item, by its index, with the array's descr.
    Item(i64, Option<crate::DescrId>),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FailArg;

    #[test]
    fn a_shape_difference_says_where() {
        let mut pool = Trace::new();
        let (c48, c46) = (
            pool.add_const(Const::Int(48)),
            pool.add_const(Const::Int(46)),
        );
        let state = |inputs: Vec<FailArg>| LabelState {
            facts: vec![Fact::default()],
            inputs,
            ..LabelState::default()
        };
        let value = FailArg::Arg(Arg::Value(crate::ValueId(0)));
        let label = state(vec![value, FailArg::Arg(Arg::Const(c48))]);
        let same = state(vec![value, FailArg::Arg(Arg::Const(c48))]);
        let other = state(vec![value, FailArg::Arg(Arg::Const(c46))]);
        assert!(label.same_shape(&pool, &same, &pool));
        assert!(!label.same_shape(&pool, &other, &pool));
        assert_eq!(
            label.shape_difference(&pool, &other, &pool),
            "the loop's input 1 is the constant 48 at its label, the constant 46 here"
        );
        let virtual_there = state(vec![value, FailArg::Virtual(0)]);
        assert_eq!(
            label.shape_difference(&pool, &virtual_there, &pool),
            "the loop's input 1 is the constant 48 at its label, an object kept virtual here"
        );
    }
}
