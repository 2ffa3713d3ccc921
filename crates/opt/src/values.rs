//! What the optimizer knows of each output value, by its kind: an
//! integer's bound (`intbounds`), a reference's facts (`PtrInfo`: not
//! null, its class), nothing for a float.
//!
//! Facts come from what made the value (an allocation is not null, and
//! `new_with_vtable` gives its class) and from guards that passed; they
//! hold from there to the end of the trace, since a value never changes
//! (an object's class never does).

use std::borrow::Cow;

use traceopt_domains::IntBound;
use traceopt_ir::{
    Arg, Const, DescrId, DescrKind, Fact, Flags, NamedConst, Op, Opcode, Type, ValueId,
};

use crate::driver::Optimizer;

/// What the passes keep of one output value (`Optimizer::values`).
#[derive(Clone, Debug)]
pub(crate) struct Value {
    /// What it was made equal to later (union-find: `Optimizer::find`).
    pub replaced: Option<Arg>,
    /// What is known of it.
    pub info: Info,
    /// It is an `*_ovf` op's, whose `guard_no_overflow` followed.
    pub no_overflow: bool,
}

impl Default for Value {
    fn default() -> Value {
        Value {
            replaced: None,
            info: Info::Nothing,
            no_overflow: false,
        }
    }
}

/// The facts about one output value.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Info {
    Int(IntBound),
    Ptr(PtrInfo),
    Nothing,
}

/// What is known of a reference.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct PtrInfo {
    pub nonnull: bool,
    /// Its class, as the constant guards compare it with (an object
    /// with a known class is never null).
    pub class: Option<Const>,
    /// The array descr (by name) its items or length were read or
    /// written by: its GC type.
    pub layout: Option<compact_str::CompactString>,
    /// A field of a struct that is an object (has a vtable) was read or
    /// written: it is an instance (of that class or a subclass).
    pub is_object: bool,
    /// A field of it was read or written, it passed a class test, or it
    /// was allocated as a struct: it is a struct, not an array or a
    /// string (so a field read of it is defined, where not null).
    pub instance: bool,
}

impl Optimizer<'_> {
    /// The bound of an output value (unbounded if none is known).
    pub(crate) fn value_bound(&self, v: ValueId) -> IntBound {
        match &self.values[v.0 as usize].info {
            Info::Int(bound) => *bound,
            _ => IntBound::unbounded(),
        }
    }

    pub(crate) fn set_bound(&mut self, v: ValueId, bound: IntBound) {
        self.values[v.0 as usize].info = Info::Int(bound);
    }

    /// What is known of a reference argument: a constant is null or not;
    /// a value has the facts gathered so far.
    pub(crate) fn ptr_info(&self, arg: Arg) -> PtrInfo {
        self.ptr_facts(arg).into_owned()
    }

    /// `ptr_info`, a value's facts borrowed rather than copied (for the
    /// tests that only look).
    pub(crate) fn ptr_facts(&self, arg: Arg) -> Cow<'_, PtrInfo> {
        match arg {
            // A namespace's constant object has the class it gives.
            Arg::Const(c) => Cow::Owned(PtrInfo {
                nonnull: !matches!(self.out.constant(c), Const::Null),
                class: match (self.out.constant(c), self.out.namespace.as_deref()) {
                    (Const::Ptr(name), Some(namespace)) => match namespace.constant(name) {
                        Some(traceopt_ir::NamedConst::Ptr(info)) => info
                            .class
                            .as_deref()
                            .map(|class| Const::Class(class.into())),
                        _ => None,
                    },
                    _ => None,
                },
                ..PtrInfo::default()
            }),
            Arg::Value(v) => match &self.values[v.0 as usize].info {
                Info::Ptr(info) => Cow::Borrowed(info),
                _ => Cow::Owned(PtrInfo::default()),
            },
        }
    }

    /// What is known of an argument, as a fact a guard could check: an
    /// integer's range (its known bits are left out), a reference's
    /// class or that it is not null.
    pub(crate) fn fact(&self, arg: Arg) -> Fact {
        match self.out.arg_type(arg) {
            Type::Int => {
                let bound = self.bound(arg);
                let full = (bound.lower, bound.upper) == (i64::MIN, i64::MAX);
                Fact {
                    range: (!full).then_some((bound.lower, bound.upper)),
                    ..Fact::default()
                }
            }
            Type::Ref => {
                let info = self.ptr_info(arg);
                Fact {
                    nonnull: info.nonnull || info.class.is_some(),
                    class: info.class,
                    ..Fact::default()
                }
            }
            _ => Fact::default(),
        }
    }

    /// Takes `fact` of an input for granted, as if a guard had checked it.
    pub(crate) fn assume(&mut self, input: Arg, fact: &Fact) {
        if let Some((lower, upper)) = fact.range {
            self.narrow(input, IntBound::range(lower, upper), 0);
        }
        if fact.nonnull || fact.class.is_some() {
            self.learn_ptr(input, true, fact.class.clone());
        }
    }

    /// Whether the reference argument is the null constant.
    pub(crate) fn is_null(&self, arg: Arg) -> bool {
        matches!(arg, Arg::Const(c) if matches!(self.out.constant(c), Const::Null))
    }

    /// The constant an argument is, if it is one.
    pub(crate) fn constant_of(&self, arg: Arg) -> Option<Const> {
        match arg {
            Arg::Const(c) => Some(self.out.constant(c).clone()),
            Arg::Value(_) => None,
        }
    }

    /// The null constant of the output.
    pub(crate) fn null_const(&mut self) -> Arg {
        let out = &mut self.out;
        Arg::Const(*self.null.get_or_insert_with(|| out.add_const(Const::Null)))
    }

    /// What an allocation teaches of the reference it gives: it is not
    /// null, and `new_with_vtable` gives its class (where the size descr
    /// names it, or the recorded trace's guards on what input op `site`
    /// makes do).
    pub(crate) fn learn_allocation(&mut self, op: &Op, v: ValueId, site: Option<usize>) {
        if !op.opcode.has(Flags::ALLOC) || op.opcode.result_type() != Type::Ref {
            return;
        }
        let class = match (op.opcode, op.descr.map(|d| &self.input.descr(d).kind)) {
            (Opcode::NewWithVtable, Some(DescrKind::Size(size))) => {
                size.vtable.as_deref().map(|name| Const::Class(name.into()))
            }
            _ => None,
        };
        let class = class.or_else(|| self.site_class(site?));
        self.learn_ptr(Arg::Value(v), true, class);
        if matches!(op.opcode, Opcode::New | Opcode::NewWithVtable) {
            if let Info::Ptr(info) = &mut self.values[v.0 as usize].info {
                info.instance = true;
            }
        }
    }

    /// Whether `op` is a call that returns an RPython instance or null (a
    /// thread-local read of one): its fields may be read once it is not
    /// null.
    pub(crate) fn returns_instance(&self, op: &Op) -> bool {
        if !op.opcode.has(Flags::CALL) || op.opcode.result_type() != Type::Ref {
            return false;
        }
        let function = match op.args.first() {
            Some(&Arg::Const(c)) => self.out.constant(c),
            _ => return false,
        };
        let descr = op.descr.map(|d| self.out.descr(d));
        traceopt_ir::oopspec::returns_instance(descr, function)
    }

    /// What is known of reference value `v`, to add to in place.
    fn ptr_info_mut(&mut self, v: ValueId) -> &mut PtrInfo {
        let entry = &mut self.values[v.0 as usize].info;
        if !matches!(entry, Info::Ptr(_)) {
            *entry = Info::Ptr(PtrInfo::default());
        }
        match entry {
            Info::Ptr(info) => info,
            _ => unreachable!("made a reference's just above"),
        }
    }

    /// `v` is an instance of some class, or null.
    pub(crate) fn learn_instance(&mut self, v: ValueId) {
        let info = self.ptr_info_mut(v);
        info.instance = true;
        info.is_object = true;
    }

    /// `ptr_eq` and friends where the facts decide them: a reference is
    /// itself; null is not an object known not to be null; objects of
    /// different known classes differ; and the same two references
    /// compared before (by either test) compare the same way.
    pub(crate) fn compare_refs(&mut self, opcode: Opcode, a: Arg, b: Arg) -> Option<Arg> {
        let equal = ref_test(opcode)?;
        let (pa, pb) = (self.ptr_facts(a), self.ptr_facts(b));
        let null_and_not = |x: Arg, y: &PtrInfo| self.is_null(x) && y.nonnull;
        let classes_differ = matches!((&pa.class, &pb.class), (Some(x), Some(y)) if x != y);
        // String constants of different texts are different objects, as
        // are arrays or strings of lengths that cannot be equal.
        let text = |x: Arg| match x {
            Arg::Const(c) => match self.out.constant(c) {
                Const::String { unicode, text } => Some((*unicode, text)),
                _ => None,
            },
            _ => None,
        };
        let known_apart =
            matches!((text(a), text(b)), (Some(x), Some(y)) if x != y) || self.lengths_apart(a, b);
        let same = if a == b {
            true
        } else if null_and_not(a, &pb) || null_and_not(b, &pa) || classes_differ || known_apart {
            false
        } else {
            let pair = unordered(a, b);
            let &(earlier, earlier_equal) = self.ref_tests.get(&pair)?;
            if let Some(&index) = self.known_ref_tests.get(&pair) {
                self.known_used[index] = true;
            }
            let earlier = self.find(earlier);
            if earlier_equal == equal {
                return Some(earlier);
            }
            (self.as_int(earlier)? != 0) == earlier_equal
        };
        Some(self.int_const(i64::from(same == equal)))
    }

    /// A reference test `v` was emitted: it is 0 or 1, and the same test
    /// of the same references is `v`.
    pub(crate) fn learn_ref_test(&mut self, opcode: Opcode, args: &[Arg], v: ValueId) {
        if ref_test(opcode).is_some() {
            self.set_bound(v, IntBound::range(0, 1));
            self.know_ref_test(opcode, args, Arg::Value(v));
        }
    }

    /// The reference test `opcode(args)` gives `value` (an op's, or a
    /// peeled loop's label argument or known constant): the same test
    /// of the same references, or the opposite one, is decided by it.
    pub(crate) fn know_ref_test(&mut self, opcode: Opcode, args: &[Arg], value: Arg) {
        let Some(equal) = ref_test(opcode) else {
            return;
        };
        self.ref_tests
            .entry(unordered(args[0], args[1]))
            .or_insert((value, equal));
    }

    /// `v` compares a reference with null and is known to be `truth`:
    /// the reference is null, or not null, from here on.
    pub(crate) fn learn_null_test(&mut self, v: ValueId, truth: bool) {
        let Some(index) = self.defining_op(v) else {
            return;
        };
        let op = &self.out.ops[index];
        let Some(equal) = ref_test(op.opcode) else {
            return;
        };
        let (a, b) = (op.args[0], op.args[1]);
        let (a, b) = (self.find(a), self.find(b));
        let reference = match (self.is_null(a), self.is_null(b)) {
            (false, true) => a,
            (true, false) => b,
            _ => return,
        };
        match (equal == truth, reference) {
            (true, Arg::Value(p)) => {
                let null = self.null_const();
                self.make_equal_to(p, null);
            }
            (false, _) => self.learn_ptr(reference, true, None),
            _ => {}
        }
    }

    /// A field or item of `arg` of descr `d` was read or written: an
    /// array descr is its GC type; a field of an object struct makes it an
    /// instance (of that struct or one that inherits the field, so not
    /// its exact type).
    pub(crate) fn learn_layout(&mut self, arg: Arg, d: DescrId) {
        let Arg::Value(v) = arg else { return };
        let descr = self.out.descr(d);
        match &descr.kind {
            DescrKind::Array(_) => {
                let layout = Some(descr.text.as_ref().into());
                self.ptr_info_mut(v).layout = layout;
            }
            DescrKind::Field(f) => {
                let owner = f.owner.as_deref();
                let namespace = self.input.namespace.as_deref();
                let size = owner.and_then(|o| namespace?.descr(o)).map(|d| &d.kind);
                let is_object =
                    matches!(size, Some(DescrKind::Size(s)) if s.is_object == Some(true));
                let info = self.ptr_info_mut(v);
                info.instance = true;
                info.is_object |= is_object;
            }
            _ => {}
        }
    }

    /// Whether a guard on the GC type of `p` (`guard_gc_type` against
    /// `type_id`, or `guard_is_object` if `None`) is known to pass.
    pub(crate) fn gc_type_known(&self, p: Arg, type_id: Option<Arg>) -> bool {
        let info = self.ptr_info(p);
        let Some(type_id) = type_id else {
            return info.is_object;
        };
        let (Some(layout), Some(namespace), Arg::Const(c)) =
            (info.layout, &self.input.namespace, type_id)
        else {
            return false;
        };
        match self.out.constant(c) {
            Const::IntName(name) => matches!(
                namespace.constant(name),
                Some(NamedConst::TypeId { of }) if **of == *layout
            ),
            _ => false,
        }
    }

    /// An op that reads or writes what its first argument points to
    /// (a field, an item, a length) is undefined on null: from here on
    /// (the input's run gets to it) the reference is not null.
    pub(crate) fn learn_dereference(&mut self, op: &Op) {
        use Opcode::*;
        let dereferences = matches!(
            op.opcode,
            GetfieldGcI
                | GetfieldGcR
                | GetfieldGcF
                | SetfieldGc
                | GetarrayitemGcI
                | GetarrayitemGcR
                | GetarrayitemGcF
                | SetarrayitemGc
                | ArraylenGc
                | Strlen
                | Unicodelen
        );
        let Some(&Arg::Value(input)) = op.args.first().filter(|_| dereferences) else {
            return;
        };
        if let (true, Some(Arg::Value(v))) = (self.passes.guards, self.map[input.0 as usize]) {
            self.learn_ptr(Arg::Value(v), true, None);
        }
    }

    /// Adds to what is known of a reference value.
    pub(crate) fn learn_ptr(&mut self, arg: Arg, nonnull: bool, class: Option<Const>) {
        let Arg::Value(v) = arg else { return };
        let info = self.ptr_info_mut(v);
        info.nonnull |= nonnull || class.is_some();
        if class.is_some() {
            info.class = class;
            info.instance = true;
        }
    }
}

/// Whether `opcode` tests references for equality (`Some(true)`) or
/// inequality (`Some(false)`).
pub(crate) fn ref_test(opcode: Opcode) -> Option<bool> {
    match opcode {
        Opcode::PtrEq | Opcode::InstancePtrEq => Some(true),
        Opcode::PtrNe | Opcode::InstancePtrNe => Some(false),
        _ => None,
    }
}

/// A pair of references in a fixed order (equality is symmetric).
pub(crate) fn unordered(a: Arg, b: Arg) -> (Arg, Arg) {
    let key = |x: Arg| match x {
        Arg::Value(v) => (0, v.0),
        Arg::Const(c) => (1, c.0),
    };
    if key(a) <= key(b) {
        (a, b)
    } else {
        (b, a)
    }
}
