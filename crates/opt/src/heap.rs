//! The heap cache: what the trace has read from or written to the
//! fields and array items of objects, so that a later read of the same
//! place is the value already known (PyPy's `heap.py`; its delayed
//! writes are `lazy.rs`); and the results of the calls that give the same again
//! (`call_loopinvariant_*` in one run, `call_pure_*` of equal arguments).
//!
//! An entry is a place (an object and a field descr; or an array, an
//! index and an item descr) and the value it holds. A read fills it, a
//! write sets it, and a write also drops what it may have changed: the
//! entries of the same descr on every object that may be the same one
//! (`may_alias`; and, for items, at an index that may be the same). A
//! call drops the entries of what its effect info says it may write
//! (everything where it says nothing); any other op with an effect
//! drops everything. Fields PyPy marks pure never change, so their
//! entries are never dropped. Likewise a `guard_not_invalidated` with no
//! call since the last one goes, and `quasiimmut_field` (a note for
//! PyPy's dependency tracking, which does nothing when run) too.
//!
//! Besides: the characters of strings read or written (dropped when any
//! character is written or a call runs); the length of every array or
//! string allocated or measured (lengths never change); and the int
//! fields PyPy marks pure of a namespace constant, as the namespace
//! gives them.
//!
//! Two references are the same object only if they are the same value;
//! they are surely different objects when one was allocated in this
//! trace and the other existed before that allocation (an input, a
//! constant, or a value made earlier), both are distinct allocations,
//! or their lengths cannot be equal (`lengths_apart`).

use rustc_hash::FxHashMap as HashMap;
use smallvec::SmallVec;

use traceopt_ir::{
    Arg, CellKind, Const, DescrId, DescrKind, FieldValue, Flags, NamedConst, Op, Opcode, Type,
    ValueId,
};

use crate::driver::Optimizer;
use crate::inject::Bug;

/// The known contents of the heap.
#[derive(Default)]
pub(crate) struct HeapCache {
    /// What fields of objects hold, by field descr.
    fields: Fields,
    /// (array, index, item descr) -> (value, the items never change).
    items: HashMap<(Arg, Arg, DescrId), (Arg, bool)>,
    /// (loop-invariant, the call's arguments, function first) -> its
    /// result: a `call_loopinvariant_*` gives the same in one run, and a
    /// `call_pure_*` of the same arguments the same.
    calls: HashMap<(bool, Vec<Arg>), Arg>,
    /// (`strgetitem` or `unicodegetitem`, string, index) -> the
    /// character: known until a character of any string is written or a
    /// call runs.
    chars: HashMap<(Opcode, Arg, Arg), Arg>,
    /// Array or string -> its length (which never changes): from its
    /// allocation or a read of it.
    lengths: HashMap<Arg, Arg>,
    /// The objects this trace allocated.
    fresh: Fresh,
    /// A `guard_not_invalidated` passed, and no call has run since (the
    /// only thing that may invalidate the trace): another one goes.
    pub not_invalidated: bool,
}

/// The known fields, by field descr: whether the field never changes,
/// and the value of it each object holds. (By descr first: a write
/// drops entries of its descr only, and a call asks its effect info once
/// per descr. A descr's objects are few: looked up by a scan.)
#[derive(Default)]
struct Fields(HashMap<DescrId, FieldOf>);

#[derive(Default)]
struct FieldOf {
    pure: bool,
    /// (object, value).
    known: SmallVec<[(Arg, Arg); 4]>,
}

impl Fields {
    fn with_capacity(descrs: usize) -> Fields {
        Fields(HashMap::with_capacity_and_hasher(
            descrs,
            Default::default(),
        ))
    }

    fn get(&self, object: Arg, d: DescrId) -> Option<Arg> {
        let field = self.0.get(&d)?;
        (field.known.iter()).find_map(|&(o, value)| (o == object).then_some(value))
    }

    fn insert(&mut self, object: Arg, d: DescrId, value: Arg, pure: bool) {
        let field = self.0.entry(d).or_default();
        field.pure = pure;
        match field.known.iter_mut().find(|(o, _)| *o == object) {
            Some(entry) => entry.1 = value,
            None => field.known.push((object, value)),
        }
    }

    /// Drops the entries of descr `d` of the objects `drop` picks.
    fn forget(&mut self, d: DescrId, drop: impl Fn(Arg) -> bool) {
        if let Some(field) = self.0.get_mut(&d) {
            field.known.retain(|&mut (o, _)| !drop(o));
        }
    }

    /// Keeps the entries of the descrs `keep` picks (given each descr
    /// and whether its field never changes).
    fn retain(&mut self, keep: impl Fn(DescrId, bool) -> bool) {
        self.0.retain(|&d, field| keep(d, field.pure));
    }

    /// (object, descr, value) of every entry, in no fixed order.
    fn iter(&self) -> impl Iterator<Item = (Arg, DescrId, Arg)> + '_ {
        (self.0.iter()).flat_map(|(&d, field)| field.known.iter().map(move |&(o, v)| (o, d, v)))
    }
}

/// The output values that are objects the trace allocated: a flag by
/// value (looked up for every entry an aliasing write may change).
#[derive(Default)]
struct Fresh(Vec<bool>);

impl Fresh {
    fn insert(&mut self, v: ValueId) {
        let i = v.0 as usize;
        if self.0.len() <= i {
            self.0.resize(i + 1, false);
        }
        self.0[i] = true;
    }

    fn contains(&self, v: ValueId) -> bool {
        self.0.get(v.0 as usize).copied().unwrap_or(false)
    }
}

/// Whether two references may be the same object, given the objects
/// the trace allocated (`fresh`).
fn may_alias(fresh: &Fresh, a: Arg, b: Arg) -> bool {
    if a == b {
        return true;
    }
    let older = |new: ValueId, other: Arg| match other {
        Arg::Const(_) => true,
        Arg::Value(v) => v.0 < new.0 || fresh.contains(v),
    };
    let apart = |x: Arg, y: Arg| matches!(x, Arg::Value(v) if fresh.contains(v) && older(v, y));
    !(apart(a, b) || apart(b, a))
}

/// What the heap cache makes of an op.
pub(crate) enum HeapStep {
    /// A read whose value is known: the op goes.
    Known(Arg),
    /// Emit the op (and tell the cache with `after_heap_op`).
    Emit,
}

impl HeapCache {
    /// An empty cache, its tables sized for a trace of `ops` ops (they
    /// grow one doubling at a time otherwise, each a rehash).
    pub(crate) fn for_trace(ops: usize) -> HeapCache {
        HeapCache {
            fields: Fields::with_capacity(ops / 16),
            ..HeapCache::default()
        }
    }

    /// Whether two references may be the same object.
    pub(crate) fn may_alias(&self, a: Arg, b: Arg) -> bool {
        may_alias(&self.fresh, a, b)
    }

    /// Drops every entry that may change, keeping the fields and items
    /// that never do.
    fn forget_mutable(&mut self) {
        self.fields.retain(|_, pure| pure);
        self.items.retain(|_, (_, pure)| *pure);
    }
}

impl Optimizer<'_> {
    /// The place a heap read or write touches: the object, the index for
    /// an array item, and the descr.
    fn heap_place(opcode: Opcode, args: &[Arg], descr: Option<DescrId>) -> Option<Place> {
        use Opcode::*;
        let d = descr?;
        Some(match opcode {
            GetfieldGcI | GetfieldGcR | GetfieldGcF => Place::Field(args[0], d),
            SetfieldGc => Place::Field(args[0], d),
            GetarrayitemGcI | GetarrayitemGcR | GetarrayitemGcF | GetarrayitemGcPureI
            | GetarrayitemGcPureR | GetarrayitemGcPureF | SetarrayitemGc => {
                Place::Item(args[0], args[1], d)
            }
            _ => return None,
        })
    }

    /// Whether the descr's field or items never change.
    pub(crate) fn never_changes(&self, d: DescrId) -> bool {
        match &self.out.descr(d).kind {
            // A quasi-immutable field may change (and invalidate the
            // trace): only a guard_not_invalidated makes it stay.
            DescrKind::Field(f) => f.pure && !f.quasi_immutable,
            DescrKind::Array(a) => a.pure,
            _ => false,
        }
    }

    /// A write of field `d` of `object` (kept, not emitted yet): the
    /// entries of objects that may be the same one go.
    pub(crate) fn heap_forget_field(&mut self, object: Arg, d: DescrId) {
        let same_only = self.bug(Bug::AliasForward);
        let cache = &mut self.heap;
        let fresh = &cache.fresh;
        (cache.fields).forget(d, |q| {
            q == object || !same_only && may_alias(fresh, q, object)
        });
    }

    /// What field `d` of `object` is known to hold.
    pub(crate) fn heap_field(&mut self, object: Arg, d: DescrId) -> Option<Arg> {
        let value = self.heap.fields.get(object, d)?;
        self.use_known_place(Place::Field(object, d));
        Some(self.find(value))
    }

    /// A peeled body looked place `place` up: if a known constant of its
    /// label is there, it is used.
    fn use_known_place(&mut self, place: Place) {
        if self.known_places.is_empty() {
            return;
        }
        if let Some(&index) = self.known_places.get(&place) {
            self.known_used[index] = true;
        }
    }

    /// The known fields: (object, field descr, value), in a fixed order.
    pub(crate) fn known_fields(&mut self) -> Vec<(Arg, DescrId, Arg)> {
        let mut known: Vec<(Arg, DescrId, Arg)> = self.heap.fields.iter().collect();
        known.sort_unstable_by_key(|&(object, d, _)| (object, d));
        (known.into_iter())
            .map(|(object, d, value)| (self.find(object), d, self.find(value)))
            .collect()
    }

    /// The known array items: (array, index, items descr, value), in a
    /// fixed order.
    pub(crate) fn known_items(&mut self) -> Vec<(Arg, Arg, DescrId, Arg)> {
        let mut known: Vec<(Arg, Arg, DescrId, Arg)> = (self.heap.items.iter())
            .map(|(&(array, index, d), &(value, _))| (array, index, d, value))
            .collect();
        known.sort_unstable_by_key(|&(array, index, d, _)| (array, index, d));
        (known.into_iter())
            .map(|(a, i, d, value)| (self.find(a), self.find(i), d, self.find(value)))
            .collect()
    }

    /// What the call `opcode(args)` is known to give (an elidable or
    /// loop-invariant call made before).
    pub(crate) fn heap_call(&mut self, opcode: Opcode, args: &[Arg]) -> Option<Arg> {
        let value = *self.heap.calls.get(&cached_call(opcode, args)?)?;
        Some(self.find(value))
    }

    /// The call `opcode(args)` (elidable or loop-invariant) gives
    /// `value`.
    pub(crate) fn heap_knows_call(&mut self, opcode: Opcode, args: &[Arg], value: Arg) {
        if let Some(key) = cached_call(opcode, args) {
            self.heap.calls.insert(key, value);
        }
    }

    /// Item `index` (items `d`) of `array` holds `value`.
    pub(crate) fn heap_knows_item(&mut self, array: Arg, index: Arg, d: DescrId, value: Arg) {
        let pure = self.never_changes(d);
        self.heap.items.insert((array, index, d), (value, pure));
    }

    /// What item `index` (items `d`) of `array` is known to hold.
    pub(crate) fn heap_item(&mut self, array: Arg, index: Arg, d: DescrId) -> Option<Arg> {
        let value = self.heap.items.get(&(array, index, d))?.0;
        self.use_known_place(Place::Item(array, index, d));
        Some(self.find(value))
    }

    /// Field `d` of `object` holds `value`.
    pub(crate) fn heap_knows_field(&mut self, object: Arg, d: DescrId, value: Arg) {
        let pure = self.never_changes(d);
        self.heap.fields.insert(object, d, value, pure);
    }

    /// Before an op is emitted: a read of a known place is its value.
    pub(crate) fn heap_before(
        &mut self,
        opcode: Opcode,
        args: &[Arg],
        descr: Option<DescrId>,
    ) -> HeapStep {
        if let Some(key) = cached_call(opcode, args) {
            return match self.heap.calls.get(&key) {
                Some(&value) => HeapStep::Known(self.find(value)),
                None => HeapStep::Emit,
            };
        }
        if let (Opcode::ArraylenGc | Opcode::Strlen | Opcode::Unicodelen, Some(object)) =
            (opcode, args.first())
        {
            if let Some(&length) = self.heap.lengths.get(object) {
                return HeapStep::Known(self.find(length));
            }
        }
        if let (Some(Place::Field(object, d)), Opcode::GetfieldGcI) =
            (Self::heap_place(opcode, args, descr), opcode)
        {
            if let Some(value) = self.constant_field(object, d) {
                return HeapStep::Known(value);
            }
        }
        if let (Opcode::Strgetitem | Opcode::Unicodegetitem, &[s, i]) = (opcode, args) {
            if let Some(&c) = self.heap.chars.get(&(opcode, s, i)) {
                return HeapStep::Known(self.find(c));
            }
        }
        if !opcode.has(Flags::READ) || opcode.has(Flags::WRITE) {
            return HeapStep::Emit;
        }
        let place = Self::heap_place(opcode, args, descr);
        let known = match place {
            Some(Place::Field(p, d)) => self.heap.fields.get(p, d),
            Some(Place::Item(p, i, d)) => self.heap.items.get(&(p, i, d)).map(|&(value, _)| value),
            None => None,
        };
        match (known, place) {
            (Some(value), Some(place)) => {
                self.use_known_place(place);
                HeapStep::Known(self.find(value))
            }
            _ => HeapStep::Emit,
        }
    }

    /// An int field that never changes of a constant object, as the
    /// namespace gives it (a field it does not list is zero).
    fn constant_field(&mut self, object: Arg, d: DescrId) -> Option<Arg> {
        let Arg::Const(c) = object else { return None };
        let Const::Ptr(name) = self.out.constant(c) else {
            return None;
        };
        if !self.never_changes(d) {
            return None;
        }
        let DescrKind::Field(field) = &self.out.descr(d).kind else {
            return None;
        };
        let namespace = self.input.namespace.clone()?;
        let NamedConst::Ptr(ptr) = namespace.constant(name)? else {
            return None;
        };
        let (owner, field_name) = field.name.split_once('.')?;
        if field.cell != CellKind::Signed && field.cell != CellKind::Unsigned
            || ptr.struct_name.as_deref() != Some(owner)
        {
            return None;
        }
        let value = match ptr.fields.iter().find(|(n, _)| &**n == field_name) {
            Some((_, FieldValue::Int(v))) => *v,
            Some((_, FieldValue::Object(_))) => return None,
            None => 0,
        };
        Some(self.int_const(value))
    }

    /// Whether two references are surely different objects: arrays or
    /// strings whose lengths cannot be equal.
    pub(crate) fn lengths_apart(&self, a: Arg, b: Arg) -> bool {
        match (self.heap.lengths.get(&a), self.heap.lengths.get(&b)) {
            (Some(&x), Some(&y)) => self.bound(x).meet(self.bound(y)).is_err(),
            _ => false,
        }
    }

    /// For an op about to be emitted (its result `result`, if any, the
    /// id it will have): what it teaches the cache, and what it makes the
    /// cache forget. (Nothing here looks the op up in the output.)
    pub(crate) fn heap_after(&mut self, op: &Op, result: Option<ValueId>) {
        let (opcode, args, descr) = (op.opcode, &op.args, op.descr);
        if opcode == Opcode::Label {
            // A place other paths enter: nothing known holds there.
            self.heap = HeapCache::default();
            return;
        }
        if opcode.has(Flags::ALLOC) && opcode.result_type() == Type::Ref {
            if let Some(v) = result {
                self.heap.fresh.insert(v);
                use Opcode::{NewArray, NewArrayClear, Newstr, Newunicode};
                if matches!(opcode, NewArray | NewArrayClear | Newstr | Newunicode) {
                    self.heap.lengths.insert(Arg::Value(v), args[0]);
                }
            }
            return;
        }
        if let (Opcode::ArraylenGc | Opcode::Strlen | Opcode::Unicodelen, Some(v)) =
            (opcode, result)
        {
            self.heap.lengths.entry(args[0]).or_insert(Arg::Value(v));
            return;
        }
        match (opcode, &args[..], result) {
            (Opcode::Strgetitem | Opcode::Unicodegetitem, &[s, i], Some(v)) => {
                self.heap.chars.insert((opcode, s, i), Arg::Value(v));
                return;
            }
            (Opcode::Strsetitem | Opcode::Unicodesetitem, &[s, i, c], _) => {
                let read = match opcode {
                    Opcode::Strsetitem => Opcode::Strgetitem,
                    _ => Opcode::Unicodegetitem,
                };
                self.heap.chars.clear();
                self.heap.chars.insert((read, s, i), c);
                return;
            }
            (Opcode::Copystrcontent | Opcode::Copyunicodecontent, _, _) => {
                self.heap.chars.clear();
                return;
            }
            _ => {}
        }
        if opcode.has(Flags::CALL) {
            self.heap.chars.clear();
        }
        if let Some(place) = Self::heap_place(opcode, args, descr) {
            let object = match place {
                Place::Field(p, _) | Place::Item(p, _, _) => p,
            };
            // A read or a write of an object's place: it is not null, and
            // of the GC type the descr says.
            self.learn_ptr(object, true, None);
            if let Some(d) = descr {
                self.learn_layout(object, d);
            }
            let written = opcode.has(Flags::WRITE);
            let value = match (written, result) {
                (true, _) => *args.last().expect("a write has a value"),
                (false, Some(v)) => Arg::Value(v),
                (false, None) => return,
            };
            let d = descr.expect("a heap place has a descr");
            let pure = self.never_changes(d);
            match place {
                Place::Field(p, d) => {
                    if written {
                        self.heap_forget_field(p, d);
                    }
                    self.heap.fields.insert(p, d, value, pure);
                }
                Place::Item(p, i, d) => {
                    if written {
                        let cache = &self.heap;
                        let alias: Vec<_> = (cache.items.keys())
                            .filter(|(q, j, e)| {
                                *e == d
                                    && self_may_equal(&self.out, *j, i)
                                    && cache.may_alias(*q, p)
                                    && !self.lengths_apart(*q, p)
                            })
                            .copied()
                            .collect();
                        for key in alias {
                            self.heap.items.remove(&key);
                        }
                    }
                    self.heap.items.insert((p, i, d), (value, pure));
                }
            }
            return;
        }
        if let (Some(key), Some(v)) = (cached_call(opcode, args), result) {
            self.heap.calls.insert(key, Arg::Value(v));
        }
        let invalidates = match opcode.has(Flags::CALL) {
            // An array copy, or a call whose effect info says so, leaves
            // quasi-immutable fields valid.
            true => traceopt_ir::oopspec::may_invalidate(descr.map(|d| self.out.descr(d))),
            false => !keeps_the_heap(opcode),
        };
        if invalidates {
            self.heap.not_invalidated = false;
        }
        if opcode.has(Flags::CALL) {
            if self.bug(Bug::CallKeepsCache) {
                return;
            }
            let out = &self.out;
            let writes = descr
                .and_then(|d| out.descr(d).as_call())
                .map(|c| &c.writes);
            let touches = |d: DescrId, out: &traceopt_ir::Trace| {
                writes.map_or(true, |w| w.may_touch(&out.descr(d).text))
            };
            let cache = &mut self.heap;
            (cache.fields).retain(|d, pure| pure || !touches(d, out));
            cache
                .items
                .retain(|(_, _, d), (_, pure)| *pure || !touches(*d, out));
            return;
        }
        if !keeps_the_heap(opcode) {
            self.heap.forget_mutable();
        }
    }
}

/// The key a call's result is cached by, for the calls whose result
/// depends on their arguments alone (within one run).
fn cached_call(opcode: Opcode, args: &[Arg]) -> Option<(bool, Vec<Arg>)> {
    use Opcode::*;
    match opcode {
        CallLoopinvariantI | CallLoopinvariantR | CallLoopinvariantF => Some((true, args.to_vec())),
        CallPureI | CallPureR | CallPureF => Some((false, args.to_vec())),
        _ => None,
    }
}

/// A place of the heap cache.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Place {
    Field(Arg, DescrId),
    Item(Arg, Arg, DescrId),
}

/// Whether two index arguments may be equal: unless both are different
/// integer constants.
fn self_may_equal(out: &traceopt_ir::Trace, a: Arg, b: Arg) -> bool {
    let int = |x: Arg| match x {
        Arg::Const(c) => match out.constant(c) {
            traceopt_ir::Const::Int(n) => Some(*n),
            _ => None,
        },
        Arg::Value(_) => None,
    };
    match (int(a), int(b)) {
        (Some(x), Some(y)) => x == y,
        _ => true,
    }
}

/// Ops that change none of the places the cache holds: no effect at all,
/// or writes to other kinds of memory (raw memory, strings, the structs
/// inside arrays).
fn keeps_the_heap(opcode: Opcode) -> bool {
    use Opcode::*;
    opcode.removable_when_unused()
        || opcode.has(Flags::GUARD)
        || opcode.has(Flags::MARKER)
        || opcode.has(Flags::FINAL)
        || matches!(
            opcode,
            Strsetitem
                | Unicodesetitem
                | Copystrcontent
                | Copyunicodecontent
                | SetfieldRaw
                | SetarrayitemRaw
                | RawStore
                | SetinteriorfieldGc
                | SetinteriorfieldRaw
        )
}
