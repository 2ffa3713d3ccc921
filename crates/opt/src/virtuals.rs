//! Allocation removal: an object the trace allocates is not allocated
//! while the optimizer can follow everything done to it (a virtual
//! object, as in the paper "Allocation Removal by Partial Evaluation in a
//! Tracing JIT" and PyPy's `virtualize.py`).
//!
//! `new`, `new_with_vtable`, and `new_array`/`new_array_clear` of a
//! constant length make a virtual: its class or descr and the values of
//! its fields or items, each an output value or another virtual. Writes
//! to it change those values; reads of it are them (zero where never
//! written: a new object is zeroed); `arraylen_gc`, `ptr_eq` and the
//! guards on references are decided by what it is. At a guard, a virtual
//! among the fail arguments (or inside another) goes into the resume
//! data, to be built only if the guard fails.
//!
//! `newstr`/`newunicode` of a constant length make a virtual string the
//! same way: characters set, copied in (from another virtual string or a
//! string constant, at constant places) and read back, and its length.
//! Concatenations, slices and equalities (PyPy's string helpers) of
//! strings whose characters are all known are done here. Resume data
//! describes objects only, so a guard that holds a virtual string has it
//! built first. An array copy (`OS_ARRAYCOPY`) between
//! virtual arrays at constant places moves items and calls nothing.
//!
//! Any other use needs the object to exist: it is forced. Its allocation
//! and the writes of its non-zero fields and items (in the order they
//! were first written) are emitted just before the op that uses it, and
//! from there it is that output value. Virtuals it holds are forced
//! first, recursively; a cycle is closed because an object is an output
//! value from the moment its allocation is emitted.

use smallvec::SmallVec;

use traceopt_ir::{
    oopspec, smallvec, Arg, Const, Descr, DescrId, DescrKind, FailArg, Op, Opcode, SeenClass, Step,
    ThinVec, Type, ValueId, Virtual, VrefLayout,
};

use crate::driver::{Infeasible, Optimizer};
use crate::inject::Bug;

/// The longest array kept virtual (a longer one is allocated as recorded).
const MAX_VIRTUAL_ITEMS: i64 = 256;

/// The longest copy of characters into a virtual string that keeps it
/// virtual.
const MAX_CHARS_COPIED: usize = 2;

/// What an input value stands for in the output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mapped {
    Out(Arg),
    /// A virtual object (an index into `Virtuals::objects`).
    Virtual(u32),
}

/// One virtual object.
#[derive(Clone, Debug)]
struct VirtualObject {
    /// The input op that allocates it.
    alloc: usize,
    opcode: Opcode,
    /// Its size or array descr (an output descr).
    descr: Option<DescrId>,
    /// Field values in the order first written (output field descrs).
    fields: SmallVec<[(DescrId, Mapped); 4]>,
    /// Array items; `None` where never written.
    items: Vec<Option<Mapped>>,
    /// The output value it became when forced.
    forced: Option<ValueId>,
    /// Its index among a label's objects, where the label made it
    /// (`enter_state`): a previous pass allocated it, or the trace that
    /// entered the loop.
    of_label: Option<u32>,
}

impl VirtualObject {
    /// The input op it stands for, as `Optimized::provenance` names ops.
    fn origin(&self, input: &traceopt_ir::Trace) -> usize {
        match self.of_label {
            Some(j) => input.ops.len() + j as usize,
            None => self.alloc,
        }
    }
}

/// Where a write into a virtual object goes (`virtual_write`).
enum Slot {
    Field(DescrId),
    Item(usize),
}

/// The virtual objects one resume data describes: (object, its index
/// among the resume data's virtuals). Few: looked up by a scan.
type Described = SmallVec<[(u32, u32); 8]>;

/// The virtual objects, and which input values stand for them.
#[derive(Default)]
pub(crate) struct Virtuals {
    objects: Vec<VirtualObject>,
    /// Input value -> the virtual it stands for.
    of_input: Vec<Option<u32>>,
}

impl Virtuals {
    pub(crate) fn for_inputs(values: usize) -> Virtuals {
        Virtuals {
            // (About one op in sixteen allocates: room for them
            // up front, not copied as the list grows.)
            objects: Vec::with_capacity(values / 16),
            of_input: vec![None; values],
        }
    }

    /// The virtual an input value stands for, if it is one not forced.
    pub(crate) fn of(&self, v: ValueId) -> Option<u32> {
        let k = (*self.of_input.get(v.0 as usize)?)?;
        self.objects[k as usize].forced.is_none().then_some(k)
    }

    /// The output value an input value's virtual was forced into.
    pub(crate) fn forced(&self, v: ValueId) -> Option<ValueId> {
        let k = (*self.of_input.get(v.0 as usize)?)?;
        self.objects[k as usize].forced
    }
}

impl Optimizer<'_> {
    /// An input argument as a virtual or an output argument, without
    /// forcing.
    pub(crate) fn mapped(&mut self, arg: Arg) -> Mapped {
        match arg {
            Arg::Value(v) => match self.virtuals.of(v) {
                Some(k) => Mapped::Virtual(k),
                None => Mapped::Out(self.arg(arg)),
            },
            Arg::Const(_) => Mapped::Out(self.arg(arg)),
        }
    }

    /// A stored value as it stands now (a virtual forced since is its
    /// output value).
    fn current(&mut self, m: Mapped) -> Mapped {
        match m {
            Mapped::Virtual(k) => match self.virtuals.objects[k as usize].forced {
                Some(v) => Mapped::Out(Arg::Value(v)),
                None => m,
            },
            Mapped::Out(a) => Mapped::Out(self.find(a)),
        }
    }

    /// Makes the input value `v` stand for `m`.
    pub(crate) fn bind(&mut self, v: ValueId, m: Mapped) {
        match self.current(m) {
            Mapped::Out(a) => self.map[v.0 as usize] = Some(a),
            Mapped::Virtual(k) => self.virtuals.of_input[v.0 as usize] = Some(k),
        }
    }

    /// A value that is an output argument, forcing a virtual.
    pub(crate) fn forced_arg(&mut self, m: Mapped) -> Arg {
        match self.current(m) {
            Mapped::Out(a) => a,
            Mapped::Virtual(k) => Arg::Value(self.force(k)),
        }
    }

    /// Emits the allocation of virtual `k` and the writes of its contents
    /// (forcing the virtuals it holds); gives the object.
    pub(crate) fn force(&mut self, k: u32) -> ValueId {
        let object = self.virtuals.objects[k as usize].clone();
        if let Some(v) = object.forced {
            return v;
        }
        let input = self.input;
        let alloc = &input.ops[object.alloc];
        let mut op = Op::new(object.opcode, Vec::new());
        op.descr = object.descr;
        let text = matches!(object.opcode, Opcode::Newstr | Opcode::Newunicode);
        if text || matches!(object.opcode, Opcode::NewArray | Opcode::NewArrayClear) {
            op.args.push(self.int_const(object.items.len() as i64));
        }
        let name = input.compact_name(input.value_of_op(object.alloc));
        if self.passes.heap {
            self.heap_after(&op, Some(ValueId(self.out.num_values() as u32)));
        }
        // One a label made stands for the label's object, not for what
        // this pass allocates (`Optimized::provenance`); made with the
        // loop op's descr, it is of that op's class (an entry shows its
        // objects of it).
        let v = self.emit_for(op, Some(name), object.alloc);
        *self.provenance.last_mut().expect("the allocation's") = Some(object.origin(input));
        self.virtuals.objects[k as usize].forced = Some(v);
        self.learn_allocation(alloc, v, Some(object.alloc));
        let object_arg = Arg::Value(v);
        for (descr, value) in object.fields {
            let value = self.forced_arg(value);
            if !self.is_zero(value) {
                let mut set = Op::new(Opcode::SetfieldGc, smallvec![object_arg, value]);
                set.descr = Some(descr);
                self.emit_write(set);
            }
        }
        let set_item = match object.opcode {
            Opcode::Newstr => Opcode::Strsetitem,
            Opcode::Newunicode => Opcode::Unicodesetitem,
            _ => Opcode::SetarrayitemGc,
        };
        for (index, item) in object.items.into_iter().enumerate() {
            let Some(item) = item else { continue };
            let value = self.forced_arg(item);
            if !self.is_zero(value) {
                let index = self.int_const(index as i64);
                let mut set = Op::new(set_item, smallvec![object_arg, index, value]);
                set.descr = object.descr;
                self.emit_write(set);
            }
        }
        v
    }

    /// Emits a write that forcing needs, telling the heap cache.
    fn emit_write(&mut self, op: Op) {
        if self.passes.heap {
            self.heap_after(&op, None);
        }
        self.emit(op, Some(&crate::driver::UNNAMED));
    }

    /// Whether an output argument is a constant zero (int 0, null, 0.0),
    /// which a new object already holds.
    fn is_zero(&self, a: Arg) -> bool {
        matches!(a, Arg::Const(c) if matches!(self.out.constant(c), Const::Int(0) | Const::Null | Const::Float(0)))
    }

    /// The zero of a type, as an output constant.
    fn zero(&mut self, ty: Type) -> Arg {
        match ty {
            Type::Ref => self.null_const(),
            Type::Float => Arg::Const(self.out.add_const(Const::Float(0))),
            _ => self.int_const(0),
        }
    }

    /// The class a virtual has, if its descr names one, or the recorded
    /// trace's guards do (of its allocation: a label's object is of the
    /// class of the loop's op that made it, as an entry must show).
    fn virtual_class(&self, k: u32) -> Option<Const> {
        let object = &self.virtuals.objects[k as usize];
        if object.opcode != Opcode::NewWithVtable {
            return None;
        }
        let named = match &self.out.descr(object.descr?).kind {
            DescrKind::Size(size) => size.vtable.as_deref().map(|name| Const::Class(name.into())),
            _ => None,
        };
        named.or_else(|| self.site_class(object.alloc))
    }

    /// Takes the class recorded guard `guard` tests of virtual `k` for
    /// the class its allocating op makes, where the optimizer may claim
    /// so (`SeenClass`): in a pass from the trace's start, which has no
    /// label objects (every virtual is made by an op of the pass).
    fn see_class(&mut self, k: u32, guard: usize) {
        if !self.may_see_classes {
            return;
        }
        let claim = SeenClass {
            site: self.virtuals.objects[k as usize].alloc,
            guard,
        };
        if self.take_seen_class(claim) {
            self.seen_classes.push(claim);
        }
    }

    /// Takes the class `claim` gives its allocating op for granted, if
    /// the claim fits the input; whether it does.
    pub(crate) fn take_seen_class(&mut self, claim: SeenClass) -> bool {
        let Some(class) = claim.class(self.input) else {
            return false;
        };
        let class = self.input.constant(class).clone();
        self.site_classes.insert(claim.site, class);
        true
    }

    /// An array index argument that is a constant inside virtual `k`.
    fn virtual_index(&mut self, k: u32, index: Arg) -> Option<usize> {
        let index = self.arg(index);
        let i = self.as_int(index)?;
        let len = self.virtuals.objects[k as usize].items.len();
        (0..len as i64).contains(&i).then_some(i as usize)
    }

    /// An array copy (`OS_ARRAYCOPY`: function, source, destination,
    /// source start, destination start, length) of nothing, or between
    /// virtual arrays at constant places inside both: the items move in
    /// the optimizer and nothing is called. `false` where it is not one.
    fn virtual_array_copy(&mut self, op: &Op) -> bool {
        let [_, src, dst, src_start, dst_start, length] = op.args[..] else {
            return false;
        };
        let length_arg = self.arg(length);
        if self.as_int(length_arg) == Some(0) {
            // Nothing to copy, whatever the arrays.
            return true;
        }
        let (Mapped::Virtual(from), Mapped::Virtual(to)) = (self.mapped(src), self.mapped(dst))
        else {
            return false;
        };
        let Some([from_start, to_start, n]) = self.places([src_start, dst_start, length]) else {
            return false;
        };
        let objects = &mut self.virtuals.objects;
        let fits = |k: u32, start: usize| start + n <= objects[k as usize].items.len();
        if !fits(from, from_start) || !fits(to, to_start) {
            return false;
        }
        let moved = objects[from as usize].items[from_start..from_start + n].to_vec();
        objects[to as usize].items[to_start..to_start + n].copy_from_slice(&moved);
        true
    }

    /// Arguments that are all constants not below zero (indexes and
    /// lengths), as such.
    fn places<const N: usize>(&mut self, args: [Arg; N]) -> Option<[usize; N]> {
        let mut out = [0; N];
        for (slot, a) in out.iter_mut().zip(args) {
            let a = self.arg(a);
            *slot = usize::try_from(self.as_int(a)?).ok()?;
        }
        Some(out)
    }

    /// The characters of a byte-string argument the optimizer knows all
    /// of: a virtual string's (zero where never written) or a constant's.
    fn known_text(&mut self, arg: Arg) -> Option<Vec<Mapped>> {
        match self.mapped(arg) {
            Mapped::Virtual(k) => {
                let object = &self.virtuals.objects[k as usize];
                if object.opcode != Opcode::Newstr {
                    return None;
                }
                let items = object.items.clone();
                Some(
                    (items.into_iter())
                        .map(|c| c.unwrap_or_else(|| Mapped::Out(self.int_const(0))))
                        .collect(),
                )
            }
            Mapped::Out(Arg::Const(c)) => match self.out.constant(c).clone() {
                Const::String {
                    unicode: false,
                    text,
                } => Some(
                    (text.bytes())
                        .map(|b| Mapped::Out(self.int_const(i64::from(b))))
                        .collect(),
                ),
                _ => None,
            },
            Mapped::Out(_) => None,
        }
    }

    /// A byte-string helper (`OS_STR_CONCAT`, `OS_STR_SLICE`,
    /// `OS_STR_EQUAL`) on strings whose characters are all known: a
    /// concatenation or slice is a new virtual string of them; an
    /// equality of different lengths is 0, of no characters 1, of one
    /// character an `int_eq` of the two. `false` where it is not one.
    fn virtual_string_helper(&mut self, index: usize, op: &Op) -> bool {
        use traceopt_ir::oopspec::{STR_CONCAT, STR_EQUAL, STR_SLICE};
        let Some(os) = oopspec::of(op.descr.map(|d| self.input.descr(d))) else {
            return false;
        };
        let result = self.input.value_of_op(index);
        let new_string = |me: &mut Self, text: Vec<Mapped>| {
            me.new_virtual(index, Opcode::Newstr, None, text.len());
            let k = me.virtuals.objects.len() - 1;
            me.virtuals.objects[k].items = text.into_iter().map(Some).collect();
        };
        match (os, &op.args[..]) {
            (STR_CONCAT, &[_, a, b]) => {
                let (Some(mut x), Some(y)) = (self.known_text(a), self.known_text(b)) else {
                    return false;
                };
                x.extend(y);
                new_string(self, x);
            }
            (STR_SLICE, &[_, s, start, stop]) => {
                let Some(text) = self.known_text(s) else {
                    return false;
                };
                match self.places([start, stop]) {
                    Some([i, j]) if i <= j && j <= text.len() => {
                        new_string(self, text[i..j].to_vec())
                    }
                    _ => return false,
                }
            }
            (STR_EQUAL, &[_, a, b]) => {
                let null =
                    |me: &mut Self, x: Arg| matches!(me.mapped(x), Mapped::Out(c) if me.is_null(c));
                let equal = match (null(self, a), null(self, b)) {
                    (true, true) => Mapped::Out(self.int_const(1)),
                    (true, false) | (false, true) => {
                        // Null and a string known to exist.
                        let other = if null(self, a) { b } else { a };
                        if self.known_text(other).is_none() {
                            return false;
                        }
                        Mapped::Out(self.int_const(0))
                    }
                    (false, false) => {
                        let (Some(x), Some(y)) = (self.known_text(a), self.known_text(b)) else {
                            return false;
                        };
                        match (x.len() == y.len(), &x[..], &y[..]) {
                            (false, _, _) => Mapped::Out(self.int_const(0)),
                            (true, [], []) => Mapped::Out(self.int_const(1)),
                            (true, &[Mapped::Out(c)], &[Mapped::Out(d)]) => {
                                let input = self.input;
                                let name = Some(input.compact_name(result));
                                let eq = self.int_op(Opcode::IntEq, smallvec![c, d], name, 0);
                                match eq {
                                    Ok(v) => Mapped::Out(v),
                                    Err(_) => return false,
                                }
                            }
                            _ if x == y => Mapped::Out(self.int_const(1)),
                            _ => return false,
                        }
                    }
                };
                self.bind(result, equal);
            }
            _ => return false,
        }
        true
    }

    /// `copystrcontent`/`copyunicodecontent` (source, destination, source
    /// start, destination start, length) of a few characters at constant
    /// places, from a virtual string or a string constant: into a virtual
    /// string they move in the optimizer, into one that exists they are
    /// written one by one. `false` where it is not one.
    fn virtual_text_copy(&mut self, op: &Op) -> bool {
        let [src, dst, src_start, dst_start, length] = op.args[..] else {
            return false;
        };
        let to = match (self.mapped(dst), self.mapped(src)) {
            (Mapped::Virtual(to), _) => Some(to),
            // Only a virtual source is worth writing out character by
            // character (a constant's copy is one op).
            (Mapped::Out(_), Mapped::Virtual(_)) => None,
            (Mapped::Out(_), Mapped::Out(_)) => return false,
        };
        let Some([from_start, to_start, n]) = self.places([src_start, dst_start, length]) else {
            return false;
        };
        if n > MAX_CHARS_COPIED {
            // Built later, the string would take a write per character
            // where the copy is one op.
            return false;
        }
        let source: Vec<Option<Mapped>> = match self.mapped(src) {
            Mapped::Virtual(from) => self.virtuals.objects[from as usize].items.clone(),
            Mapped::Out(Arg::Const(c)) => match self.out.constant(c).clone() {
                Const::String { unicode, text } => {
                    let chars: Vec<i64> = match unicode {
                        true => text.chars().map(|c| i64::from(u32::from(c))).collect(),
                        false => text.bytes().map(i64::from).collect(),
                    };
                    (chars.into_iter())
                        .map(|c| Some(Mapped::Out(self.int_const(c))))
                        .collect()
                }
                _ => return false,
            },
            Mapped::Out(_) => return false,
        };
        if from_start + n > source.len() {
            return false;
        }
        let moved = source[from_start..from_start + n].to_vec();
        let Some(to) = to else {
            // Into a string that exists: a write per character.
            let object = self.arg(dst);
            let set = match op.opcode {
                Opcode::Copystrcontent => Opcode::Strsetitem,
                _ => Opcode::Unicodesetitem,
            };
            for (i, c) in moved.into_iter().enumerate() {
                let c = c.unwrap_or_else(|| Mapped::Out(self.int_const(0)));
                let value = self.forced_arg(c);
                let index = self.int_const((to_start + i) as i64);
                self.emit_write(Op::new(set, smallvec![object, index, value]));
            }
            return true;
        };
        let target_len = self.virtuals.objects[to as usize].items.len();
        if to_start + n > target_len {
            return false;
        }
        self.virtuals.objects[to as usize].items[to_start..to_start + n].copy_from_slice(&moved);
        true
    }

    /// `new` or `new_with_vtable` (`may_be_quick`): a virtual object, made
    /// at once as `optimize_op` makes it (by `virtual_op`), without going
    /// through the rest of the pipeline. A write into a virtual object is
    /// done so too (`virtual_write`).
    #[inline(never)]
    pub(crate) fn quick_op(&mut self, index: usize, op: &Op) {
        self.call_removed = false;
        self.new_virtual(index, op.opcode, op.descr, 0);
    }

    /// A `setfield_gc` into a virtual object, or a `setarrayitem_gc` at
    /// a constant index inside one (most writes of a recorded trace, a
    /// third of its ops), done at once as `quick_op` does its ops;
    /// `false`, and nothing done, for any other write.
    #[inline(never)]
    pub(crate) fn virtual_write(&mut self, op: &Op) -> bool {
        let Some(&Arg::Value(object)) = op.args.first() else {
            return false;
        };
        let Some(k) = self.virtuals.of(object) else {
            return false;
        };
        let (slot, value) = match op.opcode {
            Opcode::SetfieldGc => match op.descr {
                Some(descr) => (Slot::Field(descr), op.args[1]),
                None => return false,
            },
            _ => {
                // (As `virtual_index` finds it, for a constant index.)
                let index = match op.args[1] {
                    index @ Arg::Const(_) => self.as_int(index),
                    Arg::Value(_) => None,
                };
                let len = self.virtuals.objects[k as usize].items.len();
                match index.and_then(|i| usize::try_from(i).ok()) {
                    Some(i) if i < len => (Slot::Item(i), op.args[2]),
                    _ => return false,
                }
            }
        };
        self.learn_dereference(op);
        self.call_removed = false;
        let value = self.mapped(value);
        match slot {
            Slot::Field(descr) => self.set_virtual_field(k, descr, value),
            Slot::Item(i) => self.virtuals.objects[k as usize].items[i] = Some(value),
        }
        true
    }

    /// Handles an op that makes or uses a virtual without forcing it;
    /// `false` where the op is not one (it is then optimized as usual,
    /// forcing any virtual argument).
    pub(crate) fn virtual_op(&mut self, index: usize, op: &Op) -> Result<bool, Infeasible> {
        use Opcode::*;
        // (Most ops are of none of the opcodes below: they are not looked
        // into.)
        if !may_be_virtual_op(op.opcode) {
            return Ok(false);
        }
        let result = self.input.value_of_op(index);
        let first = op.args.first().map(|&a| self.mapped(a));
        match (op.opcode, first) {
            (New | NewWithVtable, _) => {
                let descr = op.descr;
                self.new_virtual(index, op.opcode, descr, 0);
            }
            (NewArray | NewArrayClear, Some(Mapped::Out(len))) => match self.as_int(len) {
                Some(n) if (0..=MAX_VIRTUAL_ITEMS).contains(&n) => {
                    let descr = op.descr;
                    self.new_virtual(index, op.opcode, descr, n as usize);
                }
                _ => return Ok(false),
            },
            (Newstr | Newunicode, Some(Mapped::Out(len))) => match self.as_int(len) {
                Some(n) if (0..=MAX_VIRTUAL_ITEMS).contains(&n) => {
                    self.new_virtual(index, op.opcode, None, n as usize);
                }
                _ => return Ok(false),
            },
            (Strsetitem | Unicodesetitem, Some(Mapped::Virtual(k))) => {
                let Some(i) = self.virtual_index(k, op.args[1]) else {
                    let index = self.arg(op.args[1]);
                    return Ok(self.as_int(index).is_some());
                };
                let value = self.mapped(op.args[2]);
                self.virtuals.objects[k as usize].items[i] = Some(value);
            }
            (Strgetitem | Unicodegetitem, Some(Mapped::Virtual(k))) => {
                let Some(i) = self.virtual_index(k, op.args[1]) else {
                    return Ok(false);
                };
                let value = match self.virtuals.objects[k as usize].items[i] {
                    Some(value) => value,
                    None => Mapped::Out(self.int_const(0)),
                };
                self.bind(result, value);
            }
            (Strlen | Unicodelen, Some(Mapped::Virtual(k))) => {
                let len = self.virtuals.objects[k as usize].items.len() as i64;
                let len = self.int_const(len);
                self.bind(result, Mapped::Out(len));
            }
            (Copystrcontent | Copyunicodecontent, _) => {
                if !self.virtual_text_copy(op) {
                    return Ok(false);
                }
            }
            (SetfieldGc, Some(Mapped::Virtual(k))) => {
                let Some(descr) = op.descr else {
                    return Ok(false);
                };
                let value = self.mapped(op.args[1]);
                self.set_virtual_field(k, descr, value);
            }
            (GetfieldGcI | GetfieldGcR | GetfieldGcF, Some(Mapped::Virtual(k))) => {
                let Some(descr) = op.descr else {
                    return Ok(false);
                };
                let known = (self.virtuals.objects[k as usize].fields.iter())
                    .find(|(d, _)| *d == descr)
                    .map(|&(_, value)| value);
                let value = match known {
                    Some(value) => self.as_read(op.opcode, Some(descr), value)?,
                    None => Mapped::Out(self.zero(op.opcode.result_type())),
                };
                self.bind(result, value);
            }
            (SetarrayitemGc, Some(Mapped::Virtual(k))) => {
                let Some(i) = self.virtual_index(k, op.args[1]) else {
                    // A constant index outside: the write is undefined,
                    // and so the trace from here; nothing need be done.
                    let index = self.arg(op.args[1]);
                    return Ok(self.as_int(index).is_some());
                };
                let value = self.mapped(op.args[2]);
                self.virtuals.objects[k as usize].items[i] = Some(value);
            }
            (
                GetarrayitemGcI | GetarrayitemGcR | GetarrayitemGcF | GetarrayitemGcPureI
                | GetarrayitemGcPureR | GetarrayitemGcPureF,
                Some(Mapped::Virtual(k)),
            ) => {
                let Some(i) = self.virtual_index(k, op.args[1]) else {
                    return Ok(false);
                };
                let value = match self.virtuals.objects[k as usize].items[i] {
                    Some(value) => value,
                    None => Mapped::Out(self.zero(op.opcode.result_type())),
                };
                self.bind(result, value);
            }
            (ArraylenGc, Some(Mapped::Virtual(k))) => {
                let len = self.virtuals.objects[k as usize].items.len() as i64;
                let len = self.int_const(len);
                self.bind(result, Mapped::Out(len));
            }
            (SameAsR, Some(object @ Mapped::Virtual(_))) => self.bind(result, object),
            // A marker that a field of the object is quasi-immutable
            // (PyPy's `record_quasiimmut_field`): of an object not yet
            // allocated there is nothing to watch, and nothing to force.
            (QuasiimmutField, Some(Mapped::Virtual(_))) => {}
            (CallMayForceR, _) if self.finished_vref(index, op) => {
                // Nothing called: nothing raised, nothing forced.
                self.call_removed = true;
            }
            (CallR | CallI, _) if self.virtual_string_helper(index, op) => {
                // Nothing called: nothing raised.
                self.call_removed = true;
            }
            (CallN, _) if is_array_copy(self.input, op) => {
                if !self.virtual_array_copy(op) {
                    return Ok(false);
                }
                // It cannot raise (PyPy's effect info for it).
                self.call_removed = true;
            }
            // A virtual ref holds the frame's force token, not the frame
            // (PyPy's virtualize.py): an object of the vref class, itself
            // virtual, whose frame stays virtual.
            (VirtualRef, _) => {
                let Some([size, token_field, _]) = self.vref_descrs() else {
                    return Ok(false);
                };
                let token = self.emit(Op::new(ForceToken, Vec::new()), None);
                self.new_virtual(index, NewWithVtable, Some(size), 0);
                let k = self.virtuals.objects.len() - 1;
                let token = Mapped::Out(Arg::Value(token));
                self.virtuals.objects[k].fields.push((token_field, token));
            }
            (VirtualRefFinish, Some(Mapped::Virtual(k))) => {
                let Some([_, token_field, forced_field]) = self.vref_descrs() else {
                    return Ok(false);
                };
                let target = self.mapped(op.args[1]);
                let null = matches!(target, Mapped::Out(a) if self.is_null(a));
                let nonnull = match target {
                    Mapped::Virtual(_) => true,
                    Mapped::Out(a) => self.ptr_info(a).nonnull,
                };
                // The forced field takes a target that is not null; one
                // that may be null may be stored all the same while the
                // field still holds null (storing null changes nothing).
                let forced_now = self.virtuals.objects[k as usize].fields.iter();
                let forced_null = !forced_now
                    .filter(|(d, _)| *d == forced_field)
                    .any(|&(_, v)| !matches!(v, Mapped::Out(a) if self.is_null(a)));
                if !null && !nonnull && !forced_null {
                    return Ok(false);
                }
                let zero = Mapped::Out(self.null_const());
                self.set_virtual_field(k, token_field, zero);
                if !null {
                    self.set_virtual_field(k, forced_field, target);
                }
            }
            (PtrEq | PtrNe | InstancePtrEq | InstancePtrNe, Some(first)) => {
                let second = self.mapped(op.args[1]);
                if !matches!(first, Mapped::Virtual(_)) && !matches!(second, Mapped::Virtual(_)) {
                    return Ok(false);
                }
                // A virtual is itself and nothing else: no other value
                // can refer to an object not yet allocated.
                let same = first == second;
                let equal = matches!(op.opcode, PtrEq | InstancePtrEq);
                let truth = self.int_const(i64::from(same == equal));
                self.bind(result, Mapped::Out(truth));
            }
            (
                GuardNonnull | AssertNotNone | GuardIsnull | GuardClass | GuardNonnullClass,
                Some(Mapped::Virtual(k)),
            ) => match op.opcode {
                GuardNonnull | AssertNotNone => {}
                GuardIsnull => {
                    return Err(self.infeasible(index, op, "its reference is a new object"))
                }
                _ => {
                    if self.virtual_class(k).is_none() {
                        self.see_class(k, index);
                    }
                    let Some(class) = self.virtual_class(k) else {
                        return Ok(false);
                    };
                    let wanted = self.arg(op.args[1]);
                    match self.constant_of(wanted) {
                        Some(c) if c == class => {}
                        Some(_) => {
                            return Err(self.infeasible(index, op, "a new object of another class"))
                        }
                        None => return Ok(false),
                    }
                }
            },
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Makes the result of input op `index` a virtual that `opcode` (with
    /// output descr `descr`) allocates, of `len` items.
    fn new_virtual(&mut self, index: usize, opcode: Opcode, descr: Option<DescrId>, len: usize) {
        let k = self.virtuals.objects.len() as u32;
        self.virtuals.objects.push(VirtualObject {
            alloc: index,
            opcode,
            descr,
            fields: SmallVec::new(),
            items: vec![None; len],
            forced: None,
            of_label: None,
        });
        let result = self.input.value_of_op(index);
        self.virtuals.of_input[result.0 as usize] = Some(k);
    }

    /// `jit_force_virtual(vref)` (`OS_JIT_FORCE_VIRTUAL`) of a virtual
    /// vref that `virtual_ref_finish` has finished with a value (its token
    /// null, its forced field written): RPython's `force_virtual` then
    /// returns that object and does nothing else, so it is the result and
    /// nothing is called (PyPy's virtualize.py, which also wants the value
    /// known not null: where it is null, `force_virtual` fails with
    /// RPython's fatal `InvalidVirtualRef`, which no trace goes on from).
    /// `false` where it is not such a call.
    fn finished_vref(&mut self, index: usize, op: &Op) -> bool {
        let descr = op.descr.map(|d| self.input.descr(d));
        if !oopspec::forces_virtual(descr) || op.args.len() != 2 {
            return false;
        }
        let Mapped::Virtual(k) = self.mapped(op.args[1]) else {
            return false;
        };
        let Some([size, token_field, forced_field]) = self.vref_descrs() else {
            return false;
        };
        let object = &self.virtuals.objects[k as usize];
        if object.descr != Some(size) {
            return false;
        }
        let field = |d: DescrId| (object.fields.iter().find(|(f, _)| *f == d)).map(|&(_, v)| v);
        let (Some(Mapped::Out(token)), Some(forced)) = (field(token_field), field(forced_field))
        else {
            return false;
        };
        if !self.is_null(token) {
            return false;
        }
        let result = self.input.value_of_op(index);
        self.bind(result, forced);
        true
    }

    /// Sets a field of virtual `k`.
    fn set_virtual_field(&mut self, k: u32, descr: DescrId, value: Mapped) {
        let fields = &mut self.virtuals.objects[k as usize].fields;
        match fields.iter_mut().find(|(d, _)| *d == descr) {
            Some(field) => field.1 = value,
            None => fields.push((descr, value)),
        }
    }

    /// The output descrs of the virtual ref layout: the vref class's size
    /// descr, the token field and the forced field, from the input's
    /// descrs, its namespace, or the layout PyPy prints (looked up once).
    pub(crate) fn vref_descrs(&mut self) -> Option<[DescrId; 3]> {
        if let Some(found) = self.vref_descrs {
            return found;
        }
        let found = self.find_vref_descrs();
        self.vref_descrs = Some(found);
        found
    }

    fn find_vref_descrs(&mut self) -> Option<[DescrId; 3]> {
        let layout = self.input.vref_layout();
        let class =
            |d: &Descr| matches!(d.kind, DescrKind::Size(_)) && *d.class_name() == *layout.class;
        let size = self
            .input
            .size_descrs()
            .find(|(_, d)| class(d))
            .map(|(id, _)| id);
        Some([
            size.or_else(|| self.descr_beyond_input(class))?,
            self.descr_named(&layout.token)?,
            self.descr_named(&layout.forced)?,
        ])
    }

    /// The output descr with this text: the input's index finds it
    /// (texts are interned once each, so where the index has none, no
    /// descr of the input has it), else `descr_beyond_input`.
    fn descr_named(&mut self, text: &str) -> Option<DescrId> {
        (self.input.find_descr(text)).or_else(|| self.descr_beyond_input(|d| *d.text == *text))
    }

    /// The output descr of the first of the input's namespace's descrs,
    /// or of the default vref layout's, where `wanted` holds (no descr of
    /// the input itself is wanted).
    fn descr_beyond_input(&mut self, wanted: impl Fn(&Descr) -> bool) -> Option<DescrId> {
        let named = self.input.namespace.iter().flat_map(|ns| ns.descrs());
        // (Parsed once per process: most traces have no vref of their own.)
        static PRINTED: std::sync::OnceLock<Vec<Descr>> = std::sync::OnceLock::new();
        let printed = || {
            let descrs = PRINTED.get_or_init(|| {
                let pypy = VrefLayout::default();
                [pypy.class, pypy.token, pypy.forced]
                    .into_iter()
                    .filter_map(|t| Descr::parse(&t).ok())
                    .collect()
            });
            descrs.iter().find(|d| wanted(d)).cloned()
        };
        let descr = (named.into_iter().find(|d| wanted(d)).cloned()).or_else(printed)?;
        Some(self.out.add_descr(descr))
    }

    /// The resume data of output guard `out` (its fail arguments and
    /// virtuals copied from the input): arguments forwarded, and those
    /// that are virtual described among its virtuals.
    pub(crate) fn resume_data(&mut self, out: &mut Op) {
        let nothing_pending = !out.opcode.is_guard() || self.lazy.is_empty();
        if out.fail_args.is_none()
            && out.virtuals.is_empty()
            && out.pending.is_empty()
            && nothing_pending
        {
            return;
        }
        let mut described = Described::new();
        let mut virtuals = std::mem::take(&mut out.virtuals);
        // The input's own virtuals; those described below are appended,
        // their contents already output values.
        let copied = virtuals.len();
        let mut fail_args = out.fail_args.take();
        for item in fail_args.iter_mut().flatten() {
            *item = self.resume_item(*item, &mut virtuals, &mut described);
        }
        for i in 0..copied {
            let mut fields = std::mem::take(&mut virtuals[i].fields);
            for (_, item) in &mut fields {
                *item = self.resume_item(*item, &mut virtuals, &mut described);
            }
            let mut items = std::mem::take(&mut virtuals[i].items);
            for item in &mut items {
                *item = self.resume_item(*item, &mut virtuals, &mut described);
            }
            (virtuals[i].fields, virtuals[i].items) = (fields, items);
        }
        // The input's pending writes, then the kept writes of virtuals
        // (`lazy.rs`), which the guard makes if it fails.
        let mut pending = std::mem::take(&mut out.pending);
        for w in &mut pending {
            w.object = self.arg(w.object);
            w.index = w.index.map(|i| self.arg(i));
            w.value = self.resume_item(w.value, &mut virtuals, &mut described);
        }
        if out.opcode.is_guard() && !self.lazy.is_empty() {
            self.pending_writes(&mut pending, |me, m| {
                me.resume_value(m, &mut virtuals, &mut described)
            });
        }
        if !pending.is_empty() && fail_args.is_none() {
            fail_args = Some(Default::default());
        }
        out.fail_args = fail_args;
        out.virtuals = virtuals;
        out.pending = pending;
    }

    /// The state the input's values `args` are in, as resume data
    /// describes it: each an output argument or a virtual (described
    /// among the returned virtuals, with the input op that allocates
    /// each). Nothing is forced but strings.
    pub(crate) fn capture_state(
        &mut self,
        args: &[Arg],
    ) -> (Vec<FailArg>, Vec<Virtual>, Vec<usize>) {
        let mut described = Described::new();
        let mut virtuals = ThinVec::new();
        let items = (args.iter())
            .map(|&a| self.resume_item(FailArg::Arg(a), &mut virtuals, &mut described))
            .collect();
        let mut allocs = vec![0; virtuals.len()];
        for &(k, i) in &described {
            allocs[i as usize] = self.virtuals.objects[k as usize].alloc;
        }
        (items, virtuals.into(), allocs)
    }

    /// Allocates the object that input argument `root` holds at
    /// `steps` (fields and items followed through virtual objects), if
    /// it is virtual: a label argument of its own is wanted there.
    pub(crate) fn force_at(&mut self, root: Arg, steps: &[Step]) {
        if let Some(Mapped::Virtual(k)) = self.at_place(root, steps) {
            self.force(k);
        }
    }

    /// What input argument `root` holds at `steps`, followed through
    /// virtual objects (`None` where one is not virtual or lacks it).
    pub(crate) fn at_place(&mut self, root: Arg, steps: &[Step]) -> Option<Mapped> {
        let mut m = self.mapped(root);
        for &step in steps {
            let Mapped::Virtual(k) = self.current(m) else {
                return None;
            };
            m = *self.place_in(k, step)?;
        }
        Some(self.current(m))
    }

    /// Makes what input argument `root` holds at `steps` (a place inside
    /// virtual objects) `value`.
    pub(crate) fn set_place(&mut self, root: Arg, steps: &[Step], value: Arg) {
        let Some((&last, path)) = steps.split_last() else {
            return;
        };
        if let Some(Mapped::Virtual(k)) = self.at_place(root, path) {
            if let Some(place) = self.place_in(k, last) {
                *place = Mapped::Out(value);
            }
        }
    }

    /// The place of virtual object `k` that `step` goes to.
    fn place_in(&mut self, k: u32, step: Step) -> Option<&mut Mapped> {
        let object = &mut self.virtuals.objects[k as usize];
        match step {
            Step::Field(d) => (object.fields.iter_mut())
                .find(|(e, _)| *e == d)
                .map(|(_, v)| v),
            Step::Item(i, _) => usize::try_from(i)
                .ok()
                .and_then(|i| object.items.get_mut(i))
                .and_then(|item| item.as_mut()),
        }
    }

    /// Makes input value `i` stand for `items[i]`: an output argument, or
    /// a virtual of `virtuals` (contents output arguments or each other),
    /// allocated by input op `allocs[j]`.
    pub(crate) fn enter_state(
        &mut self,
        items: &[FailArg],
        virtuals: &[Virtual],
        allocs: &[usize],
    ) {
        let base = self.virtuals.objects.len() as u32;
        let mapped = |item: FailArg| match item {
            FailArg::Arg(a) => Some(Mapped::Out(a)),
            FailArg::Virtual(j) => Some(Mapped::Virtual(base + j)),
            FailArg::Hole => None,
        };
        for (j, (v, &alloc)) in virtuals.iter().zip(allocs).enumerate() {
            self.virtuals.objects.push(VirtualObject {
                alloc,
                opcode: v.opcode,
                descr: v.descr,
                fields: (v.fields.iter())
                    .filter_map(|&(d, x)| Some((d, mapped(x)?)))
                    .collect(),
                items: v.items.iter().map(|&x| mapped(x)).collect(),
                forced: None,
                of_label: Some(j as u32),
            });
        }
        for (i, &item) in items.iter().enumerate() {
            match item {
                FailArg::Arg(a) => self.map[i] = Some(a),
                FailArg::Virtual(j) => self.virtuals.of_input[i] = Some(base + j),
                FailArg::Hole => {}
            }
        }
    }

    /// One input item of resume data, in the output.
    fn resume_item(
        &mut self,
        item: FailArg,
        virtuals: &mut ThinVec<Virtual>,
        described: &mut Described,
    ) -> FailArg {
        match item {
            FailArg::Arg(a) => {
                let m = self.mapped(a);
                self.resume_value(m, virtuals, described)
            }
            other => other,
        }
    }

    /// A value in resume data: an output argument, or a virtual of the
    /// guard (described once, when first met).
    fn resume_value(
        &mut self,
        m: Mapped,
        virtuals: &mut ThinVec<Virtual>,
        described: &mut Described,
    ) -> FailArg {
        let k = match self.current(m) {
            Mapped::Out(a) => return FailArg::Arg(a),
            Mapped::Virtual(k) => k,
        };
        if let Some(&(_, i)) = described.iter().find(|(object, _)| *object == k) {
            return FailArg::Virtual(i);
        }
        // Resume data describes objects, not strings: a string is built.
        if matches!(
            self.virtuals.objects[k as usize].opcode,
            Opcode::Newstr | Opcode::Newunicode
        ) {
            return FailArg::Arg(Arg::Value(self.force(k)));
        }
        let i = virtuals.len() as u32;
        described.push((k, i));
        let object = &self.virtuals.objects[k as usize];
        let input = self.input;
        let (field_count, item_count) = (object.fields.len(), object.items.len());
        virtuals.push(Virtual {
            name: input.name(input.value_of_op(object.alloc)).into(),
            opcode: object.opcode,
            descr: object.descr,
            fields: Vec::new(),
            items: Vec::new(),
            site: Some(object.origin(input)),
        });
        // (By index: describing a field's object may add objects, so
        // that none is borrowed meanwhile.)
        let mut fields = Vec::with_capacity(field_count);
        for f in 0..field_count {
            let (d, value) = self.virtuals.objects[k as usize].fields[f];
            fields.push((d, self.resume_value(value, virtuals, described)));
        }
        if self.bug(Bug::ResumeDropsField) {
            fields.pop();
        }
        let mut items = Vec::with_capacity(item_count);
        for j in 0..item_count {
            items.push(match self.virtuals.objects[k as usize].items[j] {
                Some(value) => self.resume_value(value, virtuals, described),
                None => FailArg::Hole,
            });
        }
        let v = &mut virtuals[i as usize];
        v.fields = fields;
        v.items = items;
        FailArg::Virtual(i)
    }
}

/// Whether `op` calls PyPy's array copy helper (`OS_ARRAYCOPY`).
fn is_array_copy(input: &traceopt_ir::Trace, op: &Op) -> bool {
    oopspec::of(op.descr.map(|d| input.descr(d))) == Some(oopspec::ARRAYCOPY)
}

/// Whether `quick_op` may take an op of `opcode` (kept in step with it).
pub(crate) fn may_be_quick(opcode: Opcode) -> bool {
    matches!(opcode, Opcode::New | Opcode::NewWithVtable)
}

/// Whether `virtual_op` handles some ops of `opcode` (it looks into no
/// other).
fn may_be_virtual_op(opcode: Opcode) -> bool {
    use Opcode::*;
    matches!(
        opcode,
        New | NewWithVtable
            | NewArray
            | NewArrayClear
            | Newstr
            | Newunicode
            | Strsetitem
            | Unicodesetitem
            | Strgetitem
            | Unicodegetitem
            | Strlen
            | Unicodelen
            | Copystrcontent
            | Copyunicodecontent
            | SetfieldGc
            | GetfieldGcI
            | GetfieldGcR
            | GetfieldGcF
            | SetarrayitemGc
            | GetarrayitemGcI
            | GetarrayitemGcR
            | GetarrayitemGcF
            | GetarrayitemGcPureI
            | GetarrayitemGcPureR
            | GetarrayitemGcPureF
            | ArraylenGc
            | SameAsR
            | QuasiimmutField
            | CallR
            | CallI
            | CallN
            | CallMayForceR
            | VirtualRef
            | VirtualRefFinish
            | PtrEq
            | PtrNe
            | InstancePtrEq
            | InstancePtrNe
            | GuardNonnull
            | AssertNotNone
            | GuardIsnull
            | GuardClass
            | GuardNonnullClass
    )
}
