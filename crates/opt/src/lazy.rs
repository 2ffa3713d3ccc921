//! Delayed writes (PyPy's lazy setfields): a `setfield_gc` to an object
//! that exists is not emitted at once but kept, one per field descr, until
//! something could see the field. A later write to the same place drops
//! it; a read of the same place is its value. So a field set and restored
//! around an inlined call (the execution context's `topframeref`, set to
//! a virtual ref and back) costs nothing, and the virtual ref stays
//! virtual.
//!
//! A write of what the field holds (as the heap cache knew before the
//! kept writes) is none, and drops the kept one.
//!
//! A kept write is emitted (its value forced) just before:
//! - a write of its field descr to another object, or a read of it from
//!   an object that may be the same one (`HeapCache::may_alias`);
//! - a plain call whose effect info says it may read or write its field
//!   descr (one with no effect info: every kept write); never an
//!   elidable call (`call_pure_*`), whose result is a function of its
//!   arguments whatever its effect info says it reads;
//! - any op that may read or change fields some other way, or hand
//!   objects out: other calls, escapes, the end of the trace, labels, and
//!   every op with an effect the heap cache does not know to keep fields;
//! - a guard, unless the value is a virtual object: then the guard's
//!   resume data makes the write where it fails (a pending write), and the
//!   object stays virtual. An `*_ovf` op counts as its overflow guard,
//!   which must follow it with nothing between.
//!
//! Array items, raw memory and strings are other cells: their ops leave
//! kept writes kept.

use smallvec::SmallVec;
use traceopt_ir::{smallvec, Arg, Args, DescrId, Flags, Op, Opcode, PendingWrite, ThinVec};

use crate::driver::Optimizer;
use crate::inject::Bug;
use crate::virtuals::Mapped;

/// A write not emitted yet.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LazyWrite {
    /// The object (an output value) and its field descr (an output descr).
    object: Arg,
    descr: DescrId,
    value: Mapped,
    /// What the field holds meanwhile, if known: a write of that is none.
    held: Option<Arg>,
    /// The input `setfield_gc` it stands for.
    input_index: usize,
}

impl Optimizer<'_> {
    /// Handles input op `op` (at `index`) if it is a field write or read
    /// that the kept writes decide: gives whether it did. Any other op
    /// first emits the kept writes it could see.
    pub(crate) fn lazy_op(&mut self, index: usize, op: &Op) -> bool {
        use Opcode::*;
        if op.opcode == VirtualRefFinish {
            if let Some(write) = self.vref_finish_as_write(op) {
                return self.lazy_op(index, &write);
            }
        }
        if self.lazy.is_empty() && op.opcode != SetfieldGc {
            return false;
        }
        let descr = op.descr;
        match (op.opcode, descr) {
            (SetfieldGc, Some(descr)) if !self.never_changes(descr) => {
                let object = self.arg(op.args[0]);
                // One kept write per descr: another object's goes out.
                self.emit_lazy_where(|w, _| w.descr == descr && w.object != object);
                let value = self.mapped(op.args[1]);
                let kept = self
                    .lazy
                    .iter()
                    .find(|w| w.descr == descr && w.object == object);
                let held = match kept {
                    Some(w) => w.held,
                    None => self.heap_field(object, descr),
                };
                self.lazy.retain(|w| w.descr != descr);
                if let (Mapped::Out(v), Some(held)) = (value, held) {
                    if self.find(v) == held {
                        // The field holds it already (a write of it and
                        // back, as around an inlined call, is none).
                        self.heap_knows_field(object, descr, held);
                        return true;
                    }
                }
                self.lazy.push(LazyWrite {
                    object,
                    descr,
                    value,
                    held,
                    input_index: index,
                });
                self.heap_forget_field(object, descr);
                if let Mapped::Out(value) = value {
                    self.heap_knows_field(object, descr, value);
                }
                true
            }
            (GetfieldGcI | GetfieldGcR | GetfieldGcF, Some(descr)) => {
                let object = self.arg(op.args[0]);
                let kept = self
                    .lazy
                    .iter()
                    .find(|w| w.descr == descr && w.object == object);
                if let Some(w) = kept.copied() {
                    // (A cut that cannot be built leaves the read to the
                    // heap: the kept write goes out first.)
                    if let Ok(value) = self.as_read(op.opcode, Some(descr), w.value) {
                        self.learn_ptr(object, true, None);
                        let result = self.input.value_of_op(index);
                        self.bind(result, value);
                        return true;
                    }
                }
                let same_only = self.bug(Bug::WriteAfterAliasingRead);
                self.emit_lazy_where(|w, cache| {
                    w.descr == descr
                        && (w.object == object || !same_only && cache.may_alias(w.object, object))
                });
                false
            }
            // The guard on the overflow flag must follow the op at once:
            // the writes that guard would emit go before the op.
            (opcode, _) if opcode.has(Flags::OVF) && !opcode.has(Flags::CALL) => {
                self.emit_lazy_where(|w, _| matches!(w.value, Mapped::Out(_)));
                false
            }
            (opcode, _) if opcode.is_guard() => {
                // Values that exist are written now; virtuals wait in the
                // guard's resume data (`pending_writes`).
                self.emit_lazy_where(|w, _| matches!(w.value, Mapped::Out(_)));
                false
            }
            (opcode, _) if keeps_fields(opcode) => false,
            // A plain call sees and changes only the fields its effect
            // info names: the other kept writes stay kept.
            (CallI | CallR | CallF | CallN, _) => {
                let input = self.input;
                let effects = (op.descr).and_then(|d| input.descr(d).as_call());
                let seen: SmallVec<[DescrId; 8]> = (self.lazy.iter())
                    .map(|w| w.descr)
                    .filter(|&d| {
                        let name = &self.out.descr(d).text;
                        effects.map_or(true, |c| {
                            c.reads.may_touch(name) || c.writes.may_touch(name)
                        })
                    })
                    .collect();
                self.emit_lazy_where(|w, _| seen.contains(&w.descr));
                false
            }
            _ => {
                self.emit_lazy_where(|_, _| true);
                false
            }
        }
    }

    /// `virtual_ref_finish(vref, NULL)` of a vref that exists does no
    /// more than write null to its token field (PyPy's virtualize.py
    /// makes it that write): as a write, it is kept like any other, and
    /// the writes it would otherwise emit stay kept (a vref written to
    /// `topframeref` and overwritten stays virtual).
    fn vref_finish_as_write(&mut self, op: &Op) -> Option<Op> {
        // (Mapped, not forwarded: a virtual frame stays virtual here.)
        let target = self.mapped(op.args[1]);
        if !matches!(target, Mapped::Out(a) if self.is_null(a)) {
            return None;
        }
        let [_, token_field, _] = self.vref_descrs()?;
        let mut write = Op::new(Opcode::SetfieldGc, Args::from_slice(&op.args));
        write.descr = Some(token_field);
        Some(write)
    }

    /// Emits the kept writes `which` selects, in the order they were made.
    pub(crate) fn emit_lazy_where(
        &mut self,
        which: impl Fn(&LazyWrite, &crate::heap::HeapCache) -> bool,
    ) {
        if !self.lazy.iter().any(|w| which(w, &self.heap)) {
            return;
        }
        // (Taken out in place: the kept ones keep the list's room.)
        let heap = &self.heap;
        let mut now: SmallVec<[LazyWrite; 4]> = SmallVec::new();
        self.lazy.retain(|w| {
            let selected = which(w, heap);
            if selected {
                now.push(*w);
            }
            !selected
        });
        for w in now {
            let value = self.forced_arg(w.value);
            let mut set = Op::new(Opcode::SetfieldGc, smallvec![w.object, value]);
            set.descr = Some(w.descr);
            self.emit_for(set, None, w.input_index);
            self.heap_knows_field(w.object, w.descr, value);
        }
    }

    /// The kept writes of virtual objects, as pending writes of a guard,
    /// added to `pending`. Holds them in the resume data being built.
    pub(crate) fn pending_writes(
        &mut self,
        pending: &mut ThinVec<PendingWrite>,
        mut resume_value: impl FnMut(&mut Self, Mapped) -> traceopt_ir::FailArg,
    ) {
        // (By index, not a copy of the list: describing a value changes
        // no kept write.)
        for i in 0..self.lazy.len() {
            let w = self.lazy[i];
            if matches!(w.value, Mapped::Virtual(_)) {
                let value = resume_value(self, w.value);
                pending.push(PendingWrite {
                    object: w.object,
                    index: None,
                    value,
                    descr: w.descr,
                });
            }
        }
    }
}

/// Ops that neither read nor change fields nor hand objects out: the
/// kept writes stay kept across them.
fn keeps_fields(opcode: Opcode) -> bool {
    use Opcode::*;
    // An elidable call (`call_pure_*`) writes no field, and what it gives
    // depends on its arguments alone: PyPy's contract for elidable
    // functions (the same arguments give the same result, and the call
    // may be moved earlier), which the validator takes as the meaning.
    if opcode.has(Flags::CALL) && opcode.has(Flags::PURE) {
        return true;
    }
    if opcode.has(Flags::CALL) || opcode.has(Flags::FINAL) {
        return false;
    }
    let array_or_string = matches!(
        opcode,
        GetarrayitemGcI
            | GetarrayitemGcR
            | GetarrayitemGcF
            | GetarrayitemGcPureI
            | GetarrayitemGcPureR
            | GetarrayitemGcPureF
            | SetarrayitemGc
            | ArraylenGc
            | Strlen
            | Strgetitem
            | Strsetitem
            | Unicodelen
            | Unicodegetitem
            | Unicodesetitem
            | GetarrayitemRawI
            | GetarrayitemRawF
            | SetarrayitemRaw
            | GetfieldRawI
            | GetfieldRawR
            | GetfieldRawF
            | SetfieldRaw
            | RawLoadI
            | RawLoadF
            | RawStore
    );
    array_or_string
        || opcode.has(Flags::MARKER)
        || opcode == ForceToken
        || (opcode.removable_when_unused() && !opcode.has(Flags::READ))
}
