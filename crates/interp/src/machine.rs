//! The interpreter loop: runs a trace op by op, one `match` on the opcode,
//! with a helper per family of ops (guards, fields, arrays, strings, raw
//! memory, calls). The meaning it implements, control flow and liveness
//! included, is described in the crate documentation (`lib.rs`).
//!
//! State of a run: one slot per value id (inputs, then one per op; `None`
//! for void, not yet computed or dead), the heap, the overflow flag of the
//! last `*_ovf` op, the pending exception of the last call, the values
//! passed to `escape_*`, and the number of loop-backs.
//!
//! Assumes nothing of the trace: it need not have passed the checker.
//! Before an op runs, its argument count, descr and argument types are
//! checked against the op table, and each value it uses must be defined
//! earlier in the trace and live in this pass; results from the env are
//! checked for type and for pointing into the heap. Whatever does not fit
//! is an `InterpError`, never a panic.
//!
//! Refuses (`Unsupported`): the ops only PyPy's backend emits after GC
//! rewriting (`gc_load*`, `gc_store*`, `nursery_ptr_increment`,
//! `load_from_gc_table`, `zero_ptr_field`, `call_malloc_nursery*`,
//! `check_memory_error`), whose meaning depends on a memory layout this
//! interpreter does not model; allocations beyond `HEAP_BUDGET` cells.

use crate::arith;
use crate::env::{Call, CallOutcome, Env, MadeBy, RawAccess};
use crate::error::{ErrorKind, Fault, InterpError};
use crate::heap::{Heap, HeapObject, Interior};
use crate::value::{ObjId, Val};
use crate::{Exception, Limits, Outcome, Run};
use std::collections::BTreeMap;
use std::ops::Range;
use traceopt_ir::{
    oopspec, Arg, Const, ConstId, Descr, DescrKind, FailArg, Flags, JumpTarget, Op, Opcode, Pos,
    Trace, Type, ValueId,
};

/// The most items, bytes and objects one run may allocate in all.
pub const HEAP_BUDGET: usize = 1 << 22;

pub(crate) fn run(
    trace: &Trace,
    inputs: &[Val],
    heap: Heap,
    env: &mut dyn Env,
    limits: Limits,
) -> Result<Run, InterpError> {
    let mut m = Machine::new(trace, heap, env);
    let values = m.check_inputs(None, inputs)?;
    m.rebind(Target::Start, &values);
    let mut pc = 0;
    loop {
        match m.exec(pc)? {
            Flow::Next => pc += 1,
            Flow::Loop(target, values) => {
                m.iterations += 1;
                if m.iterations >= limits.max_iterations {
                    return Ok(m.finish(Outcome::IterationLimit { values }));
                }
                pc = m.rebind(target, &values);
            }
            Flow::Exit(outcome) => return Ok(m.finish(outcome)),
        }
    }
}

enum Flow {
    Next,
    Loop(Target, Vec<Val>),
    Exit(Outcome),
}

#[derive(Clone, Copy)]
enum Target {
    Start,
    /// The index of the label op.
    Label(usize),
}

struct Machine<'t, 'e> {
    trace: &'t Trace,
    env: &'e mut dyn Env,
    heap: Heap,
    /// One slot per value id; `None`: void, not yet computed, or dead.
    values: Vec<Option<Val>>,
    consts: Vec<Option<Val>>,
    /// The first label of each descr text.
    overflow: bool,
    exception: Option<Exception>,
    escaped: Vec<(usize, Vec<Val>)>,
    force_token: Option<Val>,
    /// What each function called by `call_loopinvariant_*` returned the
    /// first time: it returns the same, and does nothing, for the rest of
    /// the run (the promise PyPy's optimizer relies on).
    loop_invariant: BTreeMap<i64, Val>,
    /// The last may-force call called nothing (`finished_vref`).
    forced_nothing: bool,
    iterations: u64,
}

/// The op being executed, with its evaluated arguments.
struct Ctx<'a> {
    index: usize,
    opcode: Opcode,
    pos: Pos,
    args: &'a [Val],
    descr: Option<&'a Descr>,
}

impl Ctx<'_> {
    fn err(&self, kind: ErrorKind, message: impl Into<String>) -> InterpError {
        InterpError {
            kind,
            op_index: Some(self.index),
            pos: self.pos,
            message: format!("{}: {}", self.opcode, message.into()),
        }
    }

    fn fault(&self, fault: Fault) -> InterpError {
        let (kind, message) = fault.split();
        self.err(kind, message)
    }

    fn arg(&self, k: usize) -> Result<Val, InterpError> {
        self.args.get(k).copied().ok_or_else(|| {
            self.err(
                ErrorKind::Malformed,
                format!("argument {} is missing", k + 1),
            )
        })
    }

    fn wrong(&self, k: usize, expected: &str, found: Val) -> InterpError {
        self.err(
            ErrorKind::TypeMismatch,
            format!(
                "argument {} should be {expected}, found {} {found}",
                k + 1,
                found.ty()
            ),
        )
    }

    fn int(&self, k: usize) -> Result<i64, InterpError> {
        match self.arg(k)? {
            Val::Int(x) => Ok(x),
            v => Err(self.wrong(k, "an int", v)),
        }
    }

    fn reference(&self, k: usize) -> Result<Option<ObjId>, InterpError> {
        match self.arg(k)? {
            Val::Ref(r) => Ok(r),
            v => Err(self.wrong(k, "a reference", v)),
        }
    }

    fn nonnull(&self, k: usize) -> Result<ObjId, InterpError> {
        self.reference(k)?.ok_or_else(|| {
            self.err(
                ErrorKind::NullDereference,
                format!("argument {} is null", k + 1),
            )
        })
    }

    fn index(&self, k: usize, len: usize) -> Result<usize, InterpError> {
        let i = self.int(k)?;
        usize::try_from(i).ok().filter(|&i| i < len).ok_or_else(|| {
            self.err(
                ErrorKind::OutOfBounds,
                format!("index {i} outside 0..{len}"),
            )
        })
    }

    /// The value of a scalar op (see `arith`).
    fn scalar(&self) -> Result<Val, InterpError> {
        arith::eval(self.opcode, self.args).map_err(|f| self.fault(f))
    }

    fn descr(&self) -> Result<&Descr, InterpError> {
        self.descr
            .ok_or_else(|| self.err(ErrorKind::Malformed, "needs a descr"))
    }

    /// The arguments from `k` on (empty if there are fewer).
    fn rest(&self, k: usize) -> &[Val] {
        self.args.get(k..).unwrap_or(&[])
    }

    /// A value about to be stored through `descr` must have its cell type.
    /// The value a store puts in a cell of `descr`: of the cell's type,
    /// and for an integer cell narrower than a word, its low bytes
    /// (extended as the cell is signed or not), as a store to memory keeps.
    fn cell_value(&self, descr: &Descr, value: Val) -> Result<Val, InterpError> {
        match descr.value_type() {
            Some(ty) if ty != value.ty() => Err(self.err(
                ErrorKind::TypeMismatch,
                format!("{} holds {ty}s, given {} {value}", descr.text, value.ty()),
            )),
            _ => Ok(value.as_stored(descr.narrow_int())),
        }
    }

    /// A value read from the heap must have the op's result type.
    fn check_read(&self, value: Val, what: &str) -> Result<Val, InterpError> {
        let ty = self.opcode.result_type();
        if value.ty() == ty {
            Ok(value)
        } else {
            Err(self.err(
                ErrorKind::TypeMismatch,
                format!("{what} holds {} {value}, read as {ty}", value.ty()),
            ))
        }
    }
}

impl<'t, 'e> Machine<'t, 'e> {
    fn new(trace: &'t Trace, heap: Heap, env: &'e mut dyn Env) -> Machine<'t, 'e> {
        Machine {
            trace,
            env,
            heap,
            values: vec![None; trace.inputs.len() + trace.ops.len()],
            consts: vec![None; trace.num_consts()],
            overflow: false,
            exception: None,
            escaped: Vec::new(),
            force_token: None,
            loop_invariant: BTreeMap::new(),
            forced_nothing: false,
            iterations: 0,
        }
    }

    fn finish(self, outcome: Outcome) -> Run {
        Run {
            outcome,
            iterations: self.iterations,
            escaped: self.escaped,
            heap: self.heap,
            values: self.values,
        }
    }

    fn pos(&self, index: usize) -> Pos {
        self.trace
            .op_pos
            .get(index)
            .copied()
            .unwrap_or(self.trace.input_pos)
    }

    fn name(&self, v: ValueId) -> String {
        match self.trace.names.get(v.0 as usize) {
            Some(name) if !name.is_empty() => name.to_string(),
            _ => format!("value #{}", v.0),
        }
    }

    fn value_type(&self, v: ValueId) -> Option<Type> {
        let v = v.0 as usize;
        match v.checked_sub(self.trace.inputs.len()) {
            None => self.trace.inputs.get(v).copied(),
            Some(i) => self.trace.ops.get(i).map(|op| op.opcode.result_type()),
        }
    }

    /// Checks values against the trace's inputs; `at` is the jump that
    /// passes them, `None` for the values given to `run`.
    fn check_inputs(&self, at: Option<usize>, values: &[Val]) -> Result<Vec<Val>, InterpError> {
        let trace = self.trace;
        let wrong = |message: String| InterpError {
            kind: ErrorKind::WrongInputs,
            op_index: at,
            pos: at.map_or(trace.input_pos, |i| self.pos(i)),
            message,
        };
        if values.len() != trace.inputs.len() {
            return Err(wrong(format!(
                "the trace takes {} input(s), given {}",
                trace.inputs.len(),
                values.len()
            )));
        }
        for (k, (&v, &ty)) in values.iter().zip(&trace.inputs).enumerate() {
            let name = self.name(ValueId(k as u32));
            if v.ty() != ty {
                return Err(wrong(format!(
                    "input {} ({name}) is {ty}, given {} {v}",
                    k + 1,
                    v.ty()
                )));
            }
            if let Val::Ref(Some(id)) = v {
                if !self.heap.contains(id) {
                    return Err(wrong(format!(
                        "input {} ({name}) is {v}, which is not in the heap",
                        k + 1
                    )));
                }
            }
        }
        Ok(values.to_vec())
    }

    /// Starts a new pass at `target` with `values` bound to its arguments
    /// (checked by `jump`); every other value is dead. Returns the new pc.
    fn rebind(&mut self, target: Target, values: &[Val]) -> usize {
        self.values.fill(None);
        match target {
            Target::Start => {
                for (slot, &v) in self.values.iter_mut().zip(values) {
                    *slot = Some(v);
                }
                0
            }
            Target::Label(l) => {
                let args = self.trace.ops.get(l).map_or(&[][..], |op| &op.args);
                for (arg, &v) in args.iter().zip(values) {
                    if let Arg::Value(id) = arg {
                        if let Some(slot) = self.values.get_mut(id.0 as usize) {
                            *slot = Some(v);
                        }
                    }
                }
                l + 1
            }
        }
    }

    /// The value of an argument of op `index`.
    fn arg_value(&mut self, index: usize, arg: Arg) -> Result<Val, InterpError> {
        let malformed = |m: &Self, message: String| InterpError {
            kind: ErrorKind::Malformed,
            op_index: Some(index),
            pos: m.pos(index),
            message,
        };
        let v = match arg {
            Arg::Const(c) => return self.constant(index, c),
            Arg::Value(v) => v,
        };
        let own = self.trace.inputs.len() + index;
        if v.0 as usize >= own {
            return Err(malformed(
                self,
                format!("{} is used before its definition", self.name(v)),
            ));
        }
        match self.values.get(v.0 as usize) {
            Some(Some(val)) => Ok(*val),
            _ if self.value_type(v) == Some(Type::Void) => Err(malformed(
                self,
                format!("{} is the result of an op that produces none", self.name(v)),
            )),
            _ => Err(malformed(
                self,
                format!(
                    "{} is not live here (after a label, only the label's arguments are)",
                    self.name(v)
                ),
            )),
        }
    }

    fn constant(&mut self, index: usize, c: ConstId) -> Result<Val, InterpError> {
        let err = |m: &Self, kind, message: String| InterpError {
            kind,
            op_index: Some(index),
            pos: m.pos(index),
            message,
        };
        if let Some(Some(v)) = self.consts.get(c.0 as usize) {
            return Ok(*v);
        }
        let Some(constant) = self.trace.try_constant(c) else {
            return Err(err(
                self,
                ErrorKind::Malformed,
                format!("no constant #{}", c.0),
            ));
        };
        let v = match constant {
            Const::Int(x) => Val::Int(*x),
            Const::Float(bits) => Val::Float(f64::from_bits(*bits)),
            Const::Null => Val::NULL,
            Const::Class(name) => Val::Int(self.env.class_address(name)),
            // A harness's named integer (a type id): a stable number.
            Const::IntName(name) => Val::Int(self.env.class_address(name)),
            Const::Ptr(_) | Const::String { .. } => {
                let name = match constant {
                    Const::Ptr(name) => name.to_string(),
                    _ => {
                        let mut text = String::new();
                        traceopt_ir::print::write_const(&mut text, constant);
                        text
                    }
                };
                let id = match constant {
                    Const::String { unicode, text } => {
                        (self.env).const_string(&name, *unicode, text, &mut self.heap)
                    }
                    _ => self.env.const_ptr(&name, &mut self.heap),
                };
                if !self.heap.contains(id) {
                    return Err(err(
                        self,
                        ErrorKind::TypeMismatch,
                        format!(
                            "the env gave obj{} for ConstPtr({name}), which is not in the heap",
                            id.0
                        ),
                    ));
                }
                Val::Ref(Some(id))
            }
            Const::Str(_) => {
                return Err(err(
                    self,
                    ErrorKind::TypeMismatch,
                    "a string literal is only allowed as the text of debug_merge_point".into(),
                ))
            }
        };
        if let Some(slot) = self.consts.get_mut(c.0 as usize) {
            *slot = Some(v);
        }
        Ok(v)
    }

    /// Executes op `index`.
    fn exec(&mut self, index: usize) -> Result<Flow, InterpError> {
        let trace = self.trace;
        let Some(op) = trace.ops.get(index) else {
            return Err(InterpError {
                kind: ErrorKind::Malformed,
                op_index: Some(index),
                pos: self.pos(index.saturating_sub(1)),
                message: "the trace ends without jump or finish".into(),
            });
        };
        let info = op.opcode.info();
        let mut ctx = Ctx {
            index,
            opcode: op.opcode,
            pos: self.pos(index),
            args: &[],
            descr: None,
        };
        if !info.arity().accepts(op.args.len()) {
            return Err(ctx.err(
                ErrorKind::Malformed,
                format!(
                    "takes {} argument(s), given {}",
                    info.arity(),
                    op.args.len()
                ),
            ));
        }
        match op.descr {
            Some(d) => {
                ctx.descr =
                    Some(trace.try_descr(d).ok_or_else(|| {
                        ctx.err(ErrorKind::Malformed, format!("no descr #{}", d.0))
                    })?)
            }
            None if info.flags.contains(Flags::DESCR) => {
                return Err(ctx.err(ErrorKind::Malformed, "needs a descr"))
            }
            None => {}
        }
        if op.opcode == Opcode::DebugMergePoint {
            return Ok(Flow::Next);
        }
        let mut args = Vec::with_capacity(op.args.len());
        for (k, &arg) in op.args.iter().enumerate() {
            let v = self.arg_value(index, arg)?;
            let expected = match info.arg_letter(k) {
                Some(b'i') => Some((Type::Int, "an int")),
                Some(b'r') => Some((Type::Ref, "a reference")),
                Some(b'f') => Some((Type::Float, "a float")),
                _ => None,
            };
            if let Some((ty, what)) = expected {
                if v.ty() != ty {
                    return Err(ctx.wrong(k, what, v));
                }
            }
            args.push(v);
        }
        ctx.args = &args;
        let o = &ctx;

        use Opcode::*;
        let result = match op.opcode {
            // ---- control ----
            Jump => return self.jump(o),
            Finish => {
                return Ok(Flow::Exit(Outcome::Finished {
                    values: args.clone(),
                }))
            }
            Label => {
                self.enter_label(index, op);
                None
            }

            // ---- guards ----
            GuardTrue | GuardFalse | GuardValue | GuardClass | GuardNonnull | GuardIsnull
            | GuardNonnullClass | GuardGcType | GuardIsObject | GuardSubclass
            | GuardNoException | GuardException | GuardNoOverflow | GuardOverflow
            | GuardNotForced | GuardNotForced2 | GuardNotInvalidated | GuardFutureCondition
            | GuardAlwaysFails => {
                let (holds, result) = self.guard(o)?;
                if !holds {
                    return Ok(Flow::Exit(self.guard_failed(index, op)?));
                }
                result
            }

            // ---- scalar: integers, floats, casts, copies, pointer compares ----
            IntAdd | IntSub | IntMul | UintMulHigh | IntAnd | IntOr | IntXor | IntRshift
            | IntLshift | UintRshift | IntSignext | IntPydiv | IntPymod | IntLt | IntLe | IntEq
            | IntNe | IntGt | IntGe | UintLt | UintLe | UintGt | UintGe | IntIsZero | IntIsTrue
            | IntNeg | IntInvert | IntForceGeZero => Some(o.scalar()?),
            FloatAdd | FloatSub | FloatMul | FloatTruediv | FloatNeg | FloatAbs | FloatLt
            | FloatLe | FloatEq | FloatNe | FloatGt | FloatGe | SameAsI | SameAsR | SameAsF
            | PtrEq | PtrNe | InstancePtrEq | InstancePtrNe | LoadEffectiveAddress => {
                Some(o.scalar()?)
            }
            CastFloatToInt
            | CastIntToFloat
            | CastFloatToSinglefloat
            | CastSinglefloatToFloat
            | ConvertFloatBytesToLonglong
            | ConvertLonglongBytesToFloat => Some(o.scalar()?),
            IntAddOvf | IntSubOvf | IntMulOvf => {
                let (value, overflow) = arith::int_ovf(op.opcode, o.int(0)?, o.int(1)?)
                    .ok_or_else(|| o.err(ErrorKind::Unsupported, "not an overflow-checking op"))?;
                self.overflow = overflow;
                Some(Val::Int(value))
            }
            CastPtrToInt => Some(Val::Int(o.reference(0)?.map_or(0, Heap::address_of))),
            CastIntToPtr => Some(self.int_to_ptr(o)?),

            // ---- allocation ----
            New => Some(self.alloc(o, 1, |_| HeapObject::Object {
                class: 0,
                fields: BTreeMap::new(),
            })?),
            NewWithVtable => {
                let class = (self.env).class_of_size_descr(o.descr()?, MadeBy::Op(o.index));
                Some(self.alloc(o, 1, |_| HeapObject::Object {
                    class,
                    fields: BTreeMap::new(),
                })?)
            }
            NewArray | NewArrayClear => {
                let item = Val::zero(o.descr()?.value_type().unwrap_or(Type::Int));
                let len = self.length(o, 0)?;
                Some(self.alloc(o, len, |len| HeapObject::Array {
                    items: vec![item; len],
                    interior: BTreeMap::new(),
                })?)
            }
            Newstr => {
                let len = self.length(o, 0)?;
                Some(self.alloc(o, len, |len| HeapObject::Str(vec![0; len]))?)
            }
            Newunicode => {
                let len = self.length(o, 0)?;
                Some(self.alloc(o, len, |len| HeapObject::Unicode(vec![0; len]))?)
            }

            // ---- GC heap ----
            GetfieldGcI | GetfieldGcR | GetfieldGcF => Some(self.get_field(o)?),
            SetfieldGc => {
                self.set_field(o)?;
                None
            }
            ArraylenGc => {
                let (items, _) = self.array(o, o.nonnull(0)?)?;
                Some(Val::Int(items.len() as i64))
            }
            GetarrayitemGcI | GetarrayitemGcR | GetarrayitemGcF | GetarrayitemGcPureI
            | GetarrayitemGcPureR | GetarrayitemGcPureF => {
                let (items, _) = self.array(o, o.nonnull(0)?)?;
                let i = o.index(1, items.len())?;
                Some(o.check_read(items[i], &format!("item {i}"))?)
            }
            SetarrayitemGc => {
                let (id, value) = (o.nonnull(0)?, o.arg(2)?);
                let value = o.cell_value(o.descr()?, value)?;
                let (items, _) = self.array_mut(o, id)?;
                let i = o.index(1, items.len())?;
                items[i] = value;
                None
            }
            ZeroArray => {
                self.zero_array(o)?;
                None
            }
            GetinteriorfieldGcI | GetinteriorfieldGcR | GetinteriorfieldGcF => {
                Some(self.get_interior(o)?)
            }
            SetinteriorfieldGc => {
                let (id, value, descr) = (o.nonnull(0)?, o.arg(2)?, o.descr()?);
                let value = o.cell_value(descr, value)?;
                let (items, interior) = self.array_mut(o, id)?;
                let i = o.index(1, items.len())?;
                interior.insert((i, descr.text.clone()), value);
                None
            }

            // ---- strings ----
            Strlen | Unicodelen => Some(Val::Int(self.text(o, o.nonnull(0)?)?.len() as i64)),
            Strgetitem | Unicodegetitem => {
                let text = self.text(o, o.nonnull(0)?)?;
                let i = o.index(1, text.len())?;
                Some(Val::Int(i64::from(text.get(i))))
            }
            Strsetitem | Unicodesetitem => {
                let (id, c) = (o.nonnull(0)?, o.int(2)?);
                let len = self.text(o, id)?.len();
                let i = o.index(1, len)?;
                self.set_char(o, id, i, c)?;
                None
            }
            Copystrcontent | Copyunicodecontent => {
                self.copy_text(o)?;
                None
            }
            Strhash | Unicodehash => {
                let hash = match self.text(o, o.nonnull(0)?)? {
                    Text::Bytes(b) => crate::env::stable_hash(b),
                    Text::Chars(c) => {
                        let bytes: Vec<u8> = c.iter().flat_map(|c| c.to_le_bytes()).collect();
                        crate::env::stable_hash(&bytes)
                    }
                };
                Some(Val::Int(hash as i64))
            }

            // ---- raw memory (the env's) ----
            GetfieldRawI | GetfieldRawR | GetfieldRawF | RawLoadI | RawLoadF | GetarrayitemRawI
            | GetarrayitemRawF => {
                let index = if o.args.len() > 1 { o.int(1)? } else { 0 };
                let access = self.raw_access(o, index, o.opcode.result_type())?;
                Some(
                    self.env
                        .raw_load(&mut self.heap, &access)
                        .map_err(|f| o.fault(f))?,
                )
            }
            SetfieldRaw | RawStore | SetarrayitemRaw | SetinteriorfieldRaw => {
                let (index, value) = match o.args.len() {
                    2 => (0, o.arg(1)?),
                    _ => (o.int(1)?, o.arg(2)?),
                };
                let access = self.raw_access(o, index, value.ty())?;
                self.env
                    .raw_store(&mut self.heap, &access, value)
                    .map_err(|f| o.fault(f))?;
                None
            }

            // ---- calls ----
            CallMayForceR if oopspec::forces_virtual(o.descr) && o.args.len() == 2 => {
                match self.finished_vref(o)? {
                    Some(forced) => {
                        self.exception = None;
                        self.forced_nothing = true;
                        Some(forced)
                    }
                    None => Some(self.call(o, o.args.first().copied(), o.rest(1))?),
                }
            }
            CallI | CallR | CallF | CallN | CallMayForceI | CallMayForceR | CallMayForceF
            | CallMayForceN | CallPureI | CallPureR | CallPureF | CallPureN => {
                Some(self.call(o, o.args.first().copied(), o.rest(1))?)
            }
            CallLoopinvariantI | CallLoopinvariantR | CallLoopinvariantF | CallLoopinvariantN => {
                let func = o.int(0)?;
                match self.loop_invariant.get(&func) {
                    Some(&value) => {
                        self.exception = None;
                        Some(value)
                    }
                    None => {
                        let value = self.call(o, Some(Val::Int(func)), o.rest(1))?;
                        self.loop_invariant.insert(func, value);
                        Some(value)
                    }
                }
            }
            CallReleaseGilI | CallReleaseGilF | CallReleaseGilN => {
                Some(self.call(o, Some(Val::Int(o.int(1)?)), o.rest(2))?)
            }
            CallAssemblerI | CallAssemblerR | CallAssemblerF | CallAssemblerN => {
                Some(self.call(o, None, o.rest(0))?)
            }
            CondCallN => {
                if o.int(0)? != 0 {
                    self.call(o, Some(Val::Int(o.int(1)?)), o.rest(2))?;
                } else {
                    self.exception = None;
                }
                None
            }
            CondCallValueI | CondCallValueR => {
                let v = o.arg(0)?;
                if v != Val::Int(0) && v != Val::NULL {
                    self.exception = None;
                    Some(v)
                } else {
                    Some(self.call(o, Some(Val::Int(o.int(1)?)), o.rest(2))?)
                }
            }

            // ---- exceptions ----
            SaveException => Some(Val::Ref(self.exception.take().and_then(|e| e.value))),
            SaveExcClass => Some(Val::Int(self.exception.map_or(0, |e| e.class))),
            RestoreException => {
                let (class, value) = (o.int(0)?, o.reference(1)?);
                self.exception =
                    (class != 0 || value.is_some()).then_some(Exception { class, value });
                None
            }

            // ---- frames and virtual refs (the env's) ----
            ForceToken => Some(self.force_token()),
            // A virtual reference is a `JitVirtualRef` object that holds the
            // frame's force token until `virtual_ref_finish` clears it and
            // stores the real object (PyPy's virtualref.py).
            VirtualRef => {
                let layout = self.trace.vref_layout();
                let class = self.env.class_address(&layout.class);
                let fields = BTreeMap::from([
                    (layout.token, self.force_token()),
                    (layout.forced, Val::NULL),
                ]);
                Some(self.alloc(o, 1, |_| HeapObject::Object { class, fields })?)
            }
            VirtualRefFinish => {
                let (id, target) = (o.nonnull(0)?, o.arg(1)?);
                let layout = self.trace.vref_layout();
                match self.object_mut(o, id)? {
                    HeapObject::Object { fields, .. } => {
                        fields.insert(layout.token, Val::NULL);
                        if target != Val::NULL {
                            fields.insert(layout.forced, target);
                        }
                    }
                    other => {
                        return Err(o.err(
                            ErrorKind::TypeMismatch,
                            format!("obj{} is {}, not a virtual ref", id.0, other.kind_name()),
                        ))
                    }
                }
                None
            }

            // ---- markers and hints ----
            DebugMergePoint | EnterPortalFrame | LeavePortalFrame | JitDebug | Keepalive
            | ForceSpill | QuasiimmutField | RecordExactClass | RecordKnownResult
            | CondCallGcWb | CondCallGcWbArray => None,
            IncrementDebugCounter => None,
            AssertNotNone => {
                if o.reference(0)?.is_none() {
                    return Err(o.err(ErrorKind::HintViolated, "the reference is null"));
                }
                None
            }
            RecordExactValueI | RecordExactValueR => {
                let (a, b) = (o.arg(0)?, o.arg(1)?);
                if a != b {
                    return Err(o.err(ErrorKind::HintViolated, format!("{a} is not {b}")));
                }
                None
            }

            // ---- test ops ----
            EscapeI | EscapeR | EscapeF | EscapeN => {
                self.escaped.push((index, args.clone()));
                Some(
                    self.env
                        .escape(&mut self.heap, index, op.opcode.result_type(), &args),
                )
            }

            // ---- backend only ----
            GcLoadI
            | GcLoadR
            | GcLoadF
            | GcLoadIndexedI
            | GcLoadIndexedR
            | GcLoadIndexedF
            | GcStore
            | GcStoreIndexed
            | NurseryPtrIncrement
            | LoadFromGcTable
            | ZeroPtrField
            | CallMallocNursery
            | CallMallocNurseryVarsize
            | CallMallocNurseryVarsizeFrame
            | CheckMemoryError => {
                return Err(o.err(
                    ErrorKind::Unsupported,
                    "only PyPy's backend emits this op (after GC rewriting); \
                     its meaning depends on a memory layout the interpreter does not model",
                ))
            }
        };
        self.set_result(o, result)?;
        Ok(Flow::Next)
    }

    /// Stores the result of op `o` after checking it (values from the env
    /// may be of the wrong type or point nowhere).
    fn set_result(&mut self, o: &Ctx, result: Option<Val>) -> Result<(), InterpError> {
        let ty = o.opcode.result_type();
        if ty == Type::Void {
            return Ok(());
        }
        let Some(v) = result else {
            return Err(o.err(ErrorKind::Unsupported, "produced no value"));
        };
        if v.ty() != ty {
            return Err(o.err(
                ErrorKind::TypeMismatch,
                format!("gives {ty}, but its value is {} {v}", v.ty()),
            ));
        }
        if let Val::Ref(Some(id)) = v {
            if !self.heap.contains(id) {
                return Err(o.err(
                    ErrorKind::TypeMismatch,
                    format!("its value {v} is not in the heap"),
                ));
            }
        }
        if let Some(slot) = self.values.get_mut(self.trace.inputs.len() + o.index) {
            *slot = Some(v);
        }
        Ok(())
    }

    // ---- control ----

    fn jump(&mut self, o: &Ctx) -> Result<Flow, InterpError> {
        let values = o.args.to_vec();
        match self.trace.jump_target(&self.trace.ops[o.index]) {
            JumpTarget::Label(l) => {
                self.check_label(o, l)?;
                Ok(Flow::Loop(Target::Label(l), values))
            }
            JumpTarget::Start => {
                let values = self.check_inputs(Some(o.index), &values)?;
                Ok(Flow::Loop(Target::Start, values))
            }
            JumpTarget::Outside => Ok(Flow::Exit(Outcome::Jumped {
                op_index: o.index,
                values,
            })),
        }
    }

    /// Do the jump's values fit the arguments of label `l`?
    fn check_label(&self, o: &Ctx, l: usize) -> Result<(), InterpError> {
        let args = self.trace.ops.get(l).map_or(&[][..], |op| &op.args);
        if args.len() != o.args.len() {
            return Err(o.err(
                ErrorKind::Malformed,
                format!(
                    "passes {} value(s) to a label with {} argument(s) (op {l})",
                    o.args.len(),
                    args.len()
                ),
            ));
        }
        for (k, (arg, v)) in args.iter().zip(o.args).enumerate() {
            let Arg::Value(id) = *arg else {
                return Err(o.err(
                    ErrorKind::Malformed,
                    format!(
                        "argument {} of the target label (op {l}) is a constant",
                        k + 1
                    ),
                ));
            };
            let ty = self.value_type(id);
            if ty != Some(v.ty()) {
                return Err(o.err(
                    ErrorKind::TypeMismatch,
                    format!(
                        "passes {} {v} for {} of the target label (op {l})",
                        v.ty(),
                        self.name(id)
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Falling into a label: the values defined before it die, except its
    /// arguments.
    fn enter_label(&mut self, index: usize, op: &Op) {
        let own = (self.trace.inputs.len() + index).min(self.values.len());
        let keep: Vec<(usize, Option<Val>)> = op
            .args
            .iter()
            .filter_map(|a| match a {
                Arg::Value(v) => Some((
                    v.0 as usize,
                    self.values.get(v.0 as usize).copied().flatten(),
                )),
                Arg::Const(_) => None,
            })
            .collect();
        self.values[..own].fill(None);
        for (v, val) in keep {
            if let Some(slot) = self.values.get_mut(v) {
                *slot = val;
            }
        }
    }

    // ---- guards ----

    /// Whether the guard holds, and its result (`guard_exception` only).
    fn guard(&mut self, o: &Ctx) -> Result<(bool, Option<Val>), InterpError> {
        use Opcode::*;
        let holds = match o.opcode {
            GuardTrue => o.int(0)? != 0,
            GuardFalse => o.int(0)? == 0,
            GuardValue => {
                let (a, b) = (o.arg(0)?, o.arg(1)?);
                if a.ty() != b.ty() {
                    return Err(o.err(
                        ErrorKind::TypeMismatch,
                        format!("compares {} {a} with {} {b}", a.ty(), b.ty()),
                    ));
                }
                a == b
            }
            GuardNonnull => o.reference(0)?.is_some(),
            GuardIsnull => o.reference(0)?.is_none(),
            GuardGcType => self.class_of(o, o.nonnull(0)?)? == o.int(1)?,
            // An object that is no instance is of no class: it fails a
            // class test (PyPy's backend compares type ids).
            GuardClass => self.instance_of(o, o.nonnull(0)?)? == Some(o.int(1)?),
            GuardNonnullClass => match o.reference(0)? {
                None => false,
                Some(id) => self.instance_of(o, id)? == Some(o.int(1)?),
            },
            GuardSubclass => {
                let class = self.class_of(o, o.nonnull(0)?)?;
                self.env.is_subclass(class, o.int(1)?)
            }
            GuardIsObject => matches!(self.object(o, o.nonnull(0)?)?, HeapObject::Object { .. }),
            GuardNoException => self.exception.is_none(),
            GuardException => {
                let class = o.int(0)?;
                match self.exception {
                    Some(e) if e.class == class => {
                        self.exception = None;
                        return Ok((true, Some(Val::Ref(e.value))));
                    }
                    _ => false,
                }
            }
            GuardNoOverflow => !self.overflow,
            GuardOverflow => self.overflow,
            // (Nothing forced the frame where the last may-force call
            // called nothing.)
            GuardNotForced | GuardNotForced2 if self.forced_nothing => true,
            GuardNotForced | GuardNotForced2 | GuardNotInvalidated | GuardFutureCondition => {
                self.env.guard_holds(o.opcode, o.index)
            }
            GuardAlwaysFails => false,
            _ => return Err(o.err(ErrorKind::Unsupported, "not a guard")),
        };
        Ok((holds, None))
    }

    fn guard_failed(&mut self, index: usize, op: &Op) -> Result<Outcome, InterpError> {
        let objects = self.materialize(index, op)?;
        self.pending_writes(index, op, &objects)?;
        let mut fail_values = Vec::new();
        for &item in op.fail_args.iter().flatten() {
            fail_values.push(self.resume_value(index, &objects, item)?);
        }
        Ok(Outcome::GuardFailed {
            op_index: index,
            fail_values,
        })
    }

    /// The value of a resume item, the guard's virtuals built as `objects`.
    fn resume_value(
        &mut self,
        index: usize,
        objects: &[ObjId],
        item: FailArg,
    ) -> Result<Option<Val>, InterpError> {
        Ok(match item {
            FailArg::Hole => None,
            FailArg::Arg(arg) => Some(self.arg_value(index, arg)?),
            FailArg::Virtual(i) => match objects.get(i as usize) {
                Some(&id) => Some(Val::Ref(Some(id))),
                None => {
                    return Err(InterpError {
                        kind: ErrorKind::Malformed,
                        op_index: Some(index),
                        pos: self.pos(index),
                        message: format!("resume data names virtual #{i}, which it lacks"),
                    })
                }
            },
        })
    }

    /// Makes the stores the optimizer delayed past the failing guard `op`,
    /// in order, its virtuals built as `objects`.
    fn pending_writes(
        &mut self,
        index: usize,
        op: &Op,
        objects: &[ObjId],
    ) -> Result<(), InterpError> {
        for w in &op.pending {
            let err = |m: &Self, message: String| InterpError {
                kind: ErrorKind::TypeMismatch,
                op_index: Some(index),
                pos: m.pos(index),
                message: format!("{}: pending write: {message}", op.opcode),
            };
            let Val::Ref(Some(id)) = self.arg_value(index, w.object)? else {
                return Err(err(
                    self,
                    "the object is not a reference to an object".into(),
                ));
            };
            let Some(value) = self.resume_value(index, objects, w.value)? else {
                continue;
            };
            let descr = self.trace.descr(w.descr);
            let (text, value) = (descr.text.clone(), value.as_stored(descr.narrow_int()));
            match w.index {
                None => {
                    if !self.heap.set_field(id, &text, value) {
                        return Err(err(self, format!("{text} of an object without fields")));
                    }
                }
                Some(at) => {
                    let Val::Int(k) = self.arg_value(index, at)? else {
                        return Err(err(self, "the index is not an integer".into()));
                    };
                    match self.heap.get_mut(id) {
                        Some(HeapObject::Array { items, .. })
                            if usize::try_from(k).is_ok_and(|k| k < items.len()) =>
                        {
                            items[k as usize] = value;
                        }
                        _ => return Err(err(self, format!("no item {k} to write"))),
                    }
                }
            }
        }
        Ok(())
    }

    /// Builds the guard's virtual objects on the heap, as the resuming
    /// interpreter would: all of them first (they may refer to each other),
    /// then their contents. Unwritten fields and items keep the zero of a
    /// fresh allocation.
    fn materialize(&mut self, index: usize, op: &Op) -> Result<Vec<ObjId>, InterpError> {
        let err = |m: &Self, kind: ErrorKind, message: String| InterpError {
            kind,
            op_index: Some(index),
            pos: m.pos(index),
            message: format!("{}: {message}", op.opcode),
        };
        let mut objects = Vec::with_capacity(op.virtuals.len());
        for v in &op.virtuals {
            let descr = v.descr.map(|d| self.trace.descr(d));
            let len = v.items.len();
            let object = match v.opcode {
                Opcode::NewWithVtable => HeapObject::Object {
                    class: descr.map_or(0, |d| {
                        (self.env).class_of_size_descr(d, MadeBy::Virtual(&v.name, v.site))
                    }),
                    fields: BTreeMap::new(),
                },
                Opcode::New => HeapObject::Object {
                    class: 0,
                    fields: BTreeMap::new(),
                },
                Opcode::NewArray | Opcode::NewArrayClear => {
                    let ty = descr.and_then(Descr::value_type).unwrap_or(Type::Int);
                    HeapObject::Array {
                        items: vec![Val::zero(ty); len],
                        interior: BTreeMap::new(),
                    }
                }
                Opcode::Newstr => HeapObject::Str(vec![0; len]),
                Opcode::Newunicode => HeapObject::Unicode(vec![0; len]),
                other => {
                    let message =
                        format!("virtual {} stands for {other}, not an allocation", v.name);
                    return Err(err(self, ErrorKind::Malformed, message));
                }
            };
            if self.heap.cells().saturating_add(len.max(1)) > HEAP_BUDGET {
                let message = "the interpreter's heap budget is exhausted".to_string();
                return Err(err(self, ErrorKind::Unsupported, message));
            }
            objects.push(self.heap.alloc(object));
        }
        for (v, &id) in op.virtuals.iter().zip(&objects) {
            for &(field, item) in &v.fields {
                if let Some(value) = self.resume_value(index, &objects, item)? {
                    let descr = self.trace.descr(field);
                    let (text, value) = (descr.text.clone(), value.as_stored(descr.narrow_int()));
                    self.heap.set_field(id, &text, value);
                }
            }
            let narrow = v.descr.and_then(|d| self.trace.descr(d).narrow_int());
            for (k, &item) in v.items.iter().enumerate() {
                let Some(value) = self.resume_value(index, &objects, item)? else {
                    continue;
                };
                let value = value.as_stored(narrow);
                let stored = match (self.heap.get_mut(id), value) {
                    (Some(HeapObject::Array { items, .. }), value) => {
                        items[k] = value;
                        true
                    }
                    (Some(HeapObject::Str(bytes)), Val::Int(c)) => {
                        u8::try_from(c).map(|c| bytes[k] = c).is_ok()
                    }
                    (Some(HeapObject::Unicode(chars)), Val::Int(c)) => {
                        u32::try_from(c).map(|c| chars[k] = c).is_ok()
                    }
                    _ => false,
                };
                if !stored {
                    let message = format!("virtual {}: item {k} cannot hold {value}", v.name);
                    return Err(err(self, ErrorKind::TypeMismatch, message));
                }
            }
        }
        Ok(objects)
    }

    // ---- heap ----

    fn object(&self, o: &Ctx, id: ObjId) -> Result<&HeapObject, InterpError> {
        self.heap.get(id).ok_or_else(|| not_in_heap(o, id))
    }

    /// What `jit_force_virtual` of a finished vref gives without calling
    /// anything (RPython's `force_virtual`): the object in its `forced`
    /// field, where its token is null. `None` where the token is not
    /// null (the env's call forces the frame). Null in both is RPython's
    /// `InvalidVirtualRef`, a fatal error: undefined here.
    fn finished_vref(&mut self, o: &Ctx) -> Result<Option<Val>, InterpError> {
        let Some(id) = o.reference(1)? else {
            return Ok(None);
        };
        let layout = self.trace.vref_layout();
        if !matches!(self.object(o, id)?, HeapObject::Object { .. }) {
            return Ok(None);
        }
        // A field this run has not written is what the env says (a
        // fresh vref's, zero), as a read of it would give.
        let field = |me: &mut Self, text: &str| -> Result<Option<Val>, InterpError> {
            if let Some(v) = me.heap.field(id, text) {
                return Ok(Some(v));
            }
            match me.trace.find_descr(text) {
                Some(d) => Ok(Some(me.unknown_field(
                    o,
                    id,
                    me.trace.descr(d),
                    Type::Ref,
                )?)),
                None => Ok(None),
            }
        };
        if field(self, &layout.token)? != Some(Val::NULL) {
            return Ok(None);
        }
        match field(self, &layout.forced)? {
            Some(forced) if forced != Val::NULL => Ok(Some(forced)),
            _ => Err(o.err(
                ErrorKind::Undefined,
                "a vref with neither a token nor an object (RPython's InvalidVirtualRef)",
            )),
        }
    }

    fn object_mut(&mut self, o: &Ctx, id: ObjId) -> Result<&mut HeapObject, InterpError> {
        self.heap.get_mut(id).ok_or_else(|| not_in_heap(o, id))
    }

    /// The class of object `id`, if it is an instance.
    fn instance_of(&self, o: &Ctx, id: ObjId) -> Result<Option<i64>, InterpError> {
        match self.object(o, id)? {
            HeapObject::Object { class, .. } => Ok(Some(*class)),
            _ => Ok(None),
        }
    }

    fn class_of(&self, o: &Ctx, id: ObjId) -> Result<i64, InterpError> {
        match self.object(o, id)? {
            HeapObject::Object { class, .. } => Ok(*class),
            other => Err(o.err(
                ErrorKind::TypeMismatch,
                format!("obj{} is {}, which has no class", id.0, other.kind_name()),
            )),
        }
    }

    /// A length argument: not negative, and within the heap budget.
    fn length(&self, o: &Ctx, k: usize) -> Result<usize, InterpError> {
        let n = o.int(k)?;
        let len = usize::try_from(n)
            .map_err(|_| o.err(ErrorKind::Undefined, format!("negative length {n}")))?;
        if len > HEAP_BUDGET.saturating_sub(self.heap.cells()) {
            return Err(o.err(
                ErrorKind::Unsupported,
                format!(
                    "allocating {n} items exceeds the interpreter's heap budget of {HEAP_BUDGET}"
                ),
            ));
        }
        Ok(len)
    }

    fn alloc(
        &mut self,
        o: &Ctx,
        len: usize,
        make: impl FnOnce(usize) -> HeapObject,
    ) -> Result<Val, InterpError> {
        if self.heap.cells().saturating_add(len.max(1)) > HEAP_BUDGET {
            return Err(o.err(
                ErrorKind::Unsupported,
                "the interpreter's heap budget is exhausted",
            ));
        }
        Ok(Val::Ref(Some(self.heap.alloc(make(len)))))
    }

    fn get_field(&mut self, o: &Ctx) -> Result<Val, InterpError> {
        let (id, descr) = (o.nonnull(0)?, o.descr()?);
        let known = match self.object(o, id)? {
            HeapObject::Object { fields, .. } => fields.get(&*descr.text).copied(),
            other => {
                return Err(o.err(
                    ErrorKind::TypeMismatch,
                    format!("obj{} is {}, which has no fields", id.0, other.kind_name()),
                ))
            }
        };
        let value = match known {
            Some(v) => v,
            None => self.unknown_field(o, id, descr, o.opcode.result_type())?,
        };
        o.check_read(value, &format!("field {}", descr.text))
    }

    /// What field `descr` of object `id` holds where this run has not
    /// written it: the env says (zero for a fresh object), and the field
    /// holds it from then on.
    fn unknown_field(
        &mut self,
        o: &Ctx,
        id: ObjId,
        descr: &Descr,
        ty: Type,
    ) -> Result<Val, InterpError> {
        let v = (self.env)
            .read_unknown_field(&mut self.heap, id, None, descr, ty)
            .map_err(|f| o.fault(f))?;
        self.check_env_value(o, v)?;
        self.heap.set_field(id, &descr.text, v);
        Ok(v)
    }

    fn set_field(&mut self, o: &Ctx) -> Result<(), InterpError> {
        let (id, value, descr) = (o.nonnull(0)?, o.arg(1)?, o.descr()?);
        let value = o.cell_value(descr, value)?;
        match self.object_mut(o, id)? {
            HeapObject::Object { fields, .. } => {
                fields.insert(descr.text.clone(), value);
                Ok(())
            }
            other => Err(o.err(
                ErrorKind::TypeMismatch,
                format!("obj{} is {}, which has no fields", id.0, other.kind_name()),
            )),
        }
    }

    fn array(&self, o: &Ctx, id: ObjId) -> Result<(&Vec<Val>, &Interior), InterpError> {
        match self.object(o, id)? {
            HeapObject::Array { items, interior } => Ok((items, interior)),
            other => Err(o.err(
                ErrorKind::TypeMismatch,
                format!("obj{} is {}, not an array", id.0, other.kind_name()),
            )),
        }
    }

    fn array_mut(
        &mut self,
        o: &Ctx,
        id: ObjId,
    ) -> Result<(&mut Vec<Val>, &mut Interior), InterpError> {
        match self.object_mut(o, id)? {
            HeapObject::Array { items, interior } => Ok((items, interior)),
            other => Err(o.err(
                ErrorKind::TypeMismatch,
                format!("obj{} is {}, not an array", id.0, other.kind_name()),
            )),
        }
    }

    fn get_interior(&mut self, o: &Ctx) -> Result<Val, InterpError> {
        let (id, descr) = (o.nonnull(0)?, o.descr()?);
        let (items, interior) = self.array(o, id)?;
        let i = o.index(1, items.len())?;
        let key = (i, descr.text.clone());
        let value = match interior.get(&key) {
            Some(v) => *v,
            None => {
                let ty = o.opcode.result_type();
                let v = self
                    .env
                    .read_unknown_field(&mut self.heap, id, Some(i), descr, ty)
                    .map_err(|f| o.fault(f))?;
                self.check_env_value(o, v)?;
                let (_, interior) = self.array_mut(o, id)?;
                interior.insert(key, v);
                v
            }
        };
        o.check_read(value, &format!("field {} of item {i}", descr.text))
    }

    /// `zero_array(array, start, length, scale_start, scale_length)`: the
    /// bytes `start*scale_start ..+ length*scale_length` of the array's
    /// items (of the descr's item size) become zero.
    fn zero_array(&mut self, o: &Ctx) -> Result<(), InterpError> {
        let id = o.nonnull(0)?;
        let item_size = match &o.descr()?.kind {
            DescrKind::Array(a) if a.item_size > 0 => a.item_size,
            _ => 1,
        };
        let bytes = |a: usize, b: usize| -> Result<i64, InterpError> {
            o.int(a)?
                .checked_mul(o.int(b)?)
                .filter(|n| *n >= 0 && n % item_size == 0)
                .map(|n| n / item_size)
                .ok_or_else(|| {
                    o.err(
                        ErrorKind::OutOfBounds,
                        format!("byte range does not cover whole items of size {item_size}"),
                    )
                })
        };
        let (first, count) = (bytes(1, 3)?, bytes(2, 4)?);
        let (items, _) = self.array_mut(o, id)?;
        let len = items.len();
        let range = span(first, count, len).ok_or_else(|| {
            o.err(
                ErrorKind::OutOfBounds,
                format!("items {first}..+{count} outside an array of length {len}"),
            )
        })?;
        for item in &mut items[range] {
            *item = Val::zero(item.ty());
        }
        Ok(())
    }

    fn check_env_value(&self, o: &Ctx, v: Val) -> Result<(), InterpError> {
        match v {
            Val::Ref(Some(id)) if !self.heap.contains(id) => Err(o.err(
                ErrorKind::TypeMismatch,
                format!("the env gave {v}, which is not in the heap"),
            )),
            _ => Ok(()),
        }
    }

    // ---- strings ----

    /// The byte string (`str*` ops) or unicode string (`unicode*` ops).
    fn text(&self, o: &Ctx, id: ObjId) -> Result<Text<'_>, InterpError> {
        let unicode = is_unicode_op(o.opcode);
        match (self.object(o, id)?, unicode) {
            (HeapObject::Str(b), false) => Ok(Text::Bytes(b)),
            (HeapObject::Unicode(c), true) => Ok(Text::Chars(c)),
            (other, _) => Err(o.err(
                ErrorKind::TypeMismatch,
                format!(
                    "obj{} is {}, not {}",
                    id.0,
                    other.kind_name(),
                    if unicode {
                        "a unicode string"
                    } else {
                        "a string"
                    }
                ),
            )),
        }
    }

    fn set_char(&mut self, o: &Ctx, id: ObjId, i: usize, c: i64) -> Result<(), InterpError> {
        let bad = || o.err(ErrorKind::Undefined, format!("character {c} out of range"));
        let slot = match self.heap.get_mut(id) {
            Some(HeapObject::Str(b)) => b.get_mut(i).map(|slot| {
                let byte = u8::try_from(c).ok()?;
                *slot = byte;
                Some(())
            }),
            Some(HeapObject::Unicode(u)) => u.get_mut(i).map(|slot| {
                let ch = u32::try_from(c).ok().filter(|c| *c <= 0x10_ffff)?;
                *slot = ch;
                Some(())
            }),
            _ => None,
        };
        match slot {
            Some(Some(())) => Ok(()),
            Some(None) => Err(bad()),
            None => Err(o.err(
                ErrorKind::OutOfBounds,
                format!("index {i} outside the string"),
            )),
        }
    }

    /// `copystrcontent(src, dst, srcstart, dststart, length)`.
    fn copy_text(&mut self, o: &Ctx) -> Result<(), InterpError> {
        let (src, dst) = (o.nonnull(0)?, o.nonnull(1)?);
        let (src_start, dst_start, len) = (o.int(2)?, o.int(3)?, o.int(4)?);
        let range = |start: i64, total: usize| {
            span(start, len, total).ok_or_else(|| {
                o.err(
                    ErrorKind::OutOfBounds,
                    format!("{start}..+{len} outside a string of length {total}"),
                )
            })
        };
        let chunk: Vec<u32> = {
            let text = self.text(o, src)?;
            range(src_start, text.len())?.map(|i| text.get(i)).collect()
        };
        let dst_len = self.text(o, dst)?.len();
        let target = range(dst_start, dst_len)?;
        for (i, c) in target.zip(chunk) {
            self.set_char(o, dst, i, i64::from(c))?;
        }
        Ok(())
    }

    // ---- env ----

    fn int_to_ptr(&mut self, o: &Ctx) -> Result<Val, InterpError> {
        let address = o.int(0)?;
        if address == 0 {
            return Ok(Val::NULL);
        }
        if let Some(id) = self.heap.object_at(address) {
            return Ok(Val::Ref(Some(id)));
        }
        self.env
            .int_to_ptr(&mut self.heap, address)
            .map_err(|f| o.fault(f))
    }

    fn raw_access<'a>(
        &self,
        o: &Ctx<'a>,
        index: i64,
        ty: Type,
    ) -> Result<RawAccess<'a>, InterpError> {
        Ok(RawAccess {
            op_index: o.index,
            opcode: o.opcode,
            address: o.int(0)?,
            index,
            descr: o.descr,
            ty,
        })
    }

    /// Calls through the env; the call's exception becomes the pending one.
    /// The frame's force token: the env's, asked once per run.
    fn force_token(&mut self) -> Val {
        *(self.force_token).get_or_insert_with(|| self.env.force_token(&mut self.heap))
    }

    fn call(&mut self, o: &Ctx, func: Option<Val>, args: &[Val]) -> Result<Val, InterpError> {
        let result = o.opcode.result_type();
        let call = Call {
            op_index: o.index,
            opcode: o.opcode,
            func,
            args,
            descr: o.descr,
            result,
        };
        self.exception = None;
        self.forced_nothing = false;
        match self
            .env
            .call(&mut self.heap, &call)
            .map_err(|f| o.fault(f))?
        {
            CallOutcome::Returned(v) => Ok(v),
            CallOutcome::Raised(e) => {
                self.check_env_value(o, Val::Ref(e.value))?;
                self.exception = Some(e);
                Ok(Val::zero(result))
            }
        }
    }
}

/// The indices `start..start + len` of a sequence of `total` items, if
/// `start` and `len` are nonnegative and the range ends within it.
fn span(start: i64, len: i64, total: usize) -> Option<Range<usize>> {
    let start = usize::try_from(start).ok()?;
    let end = start.checked_add(usize::try_from(len).ok()?)?;
    (end <= total).then_some(start..end)
}

fn not_in_heap(o: &Ctx, id: ObjId) -> InterpError {
    o.err(
        ErrorKind::Malformed,
        format!("obj{} is not in the heap", id.0),
    )
}

fn is_unicode_op(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::Unicodelen
            | Opcode::Unicodegetitem
            | Opcode::Unicodesetitem
            | Opcode::Copyunicodecontent
            | Opcode::Unicodehash
    )
}

/// A byte or unicode string, read as code units.
enum Text<'a> {
    Bytes(&'a [u8]),
    Chars(&'a [u32]),
}

impl Text<'_> {
    fn len(&self) -> usize {
        match self {
            Text::Bytes(b) => b.len(),
            Text::Chars(c) => c.len(),
        }
    }

    /// The unit at `i`; callers check the bounds first.
    fn get(&self, i: usize) -> u32 {
        match self {
            Text::Bytes(b) => b.get(i).copied().map_or(0, u32::from),
            Text::Chars(c) => c.get(i).copied().unwrap_or(0),
        }
    }
}
