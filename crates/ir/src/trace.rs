//! The trace: a flat, indexed list of operations in SSA form.
//!
//! Values are numbered by `ValueId`: the input arguments first
//! (`0..inputs.len()`), then one id per op, in order, whether or not the op
//! produces a value. So op `k` defines `ValueId(inputs.len() + k)`, and "used
//! after its definition" is a comparison of two integers. Constants and
//! descrs are interned per trace and referred to by index. No pointers, no
//! graph: passes walk `ops` front to back.
//!
//! Names (`i5`, `p12`) are kept so that printed traces read like their
//! source; an empty name means "none yet" and the printer invents one.
//! Source positions are kept beside the ops for error messages; they take
//! no part in equality.

use crate::descr::{Descr, DescrKind, VrefLayout};
use crate::namespace::Namespace;
use crate::opcode::{Opcode, Type};
use compact_str::CompactString;
use rustc_hash::FxHashMap as HashMap;
use smallvec::SmallVec;
use std::sync::Arc;
use thin_vec::ThinVec;

/// An op's operands: most ops have at most three, held in the op itself
/// (no allocation of their own, and read where the op is).
pub type Args = SmallVec<[Arg; 3]>;

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct ValueId(pub u32);

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct ConstId(pub u32);

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct DescrId(pub u32);

/// An operand: a value defined in the trace, or a constant. (Ordered
/// only to give sets of them a fixed order: values before constants.)
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum Arg {
    Value(ValueId),
    Const(ConstId),
}

/// A constant operand.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum Const {
    Int(i64),
    /// A float, kept as its bits so that constants can be compared and hashed.
    Float(u64),
    /// The null pointer (`NULL`, `ConstPtr(null)`).
    Null,
    /// A named GC pointer constant (`ConstPtr(ptr12)`).
    Ptr(Name),
    /// A class address given by name (`ConstClass(W_IntObject)`): an integer.
    Class(Name),
    /// A string literal (the text argument of `debug_merge_point`).
    Str(Name),
    /// A named integer of the test harness (`ConstInt(node_tid)`).
    IntName(Name),
    /// A constant string object (`s"abc"`, or `u"abc"` for unicode).
    String {
        unicode: bool,
        text: Name,
    },
}

/// The text of a named constant: most are short (`ptr12`,
/// `W_IntObject`) and held inline, so that copying a constant, as the
/// optimizer's facts do, allocates nothing.
pub type Name = CompactString;

impl Const {
    pub fn float(value: f64) -> Const {
        Const::Float(value.to_bits())
    }

    pub fn ty(&self) -> Type {
        match self {
            Const::Int(_) | Const::Class(_) | Const::IntName(_) => Type::Int,
            Const::Float(_) => Type::Float,
            Const::Null | Const::Ptr(_) | Const::String { .. } => Type::Ref,
            Const::Str(_) => Type::Str,
        }
    }
}

/// Where a `jump` goes (see `Trace::jump_target`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum JumpTarget {
    /// Back to the first op, the inputs taking the jump's values.
    Start,
    /// To the label op with this index, its arguments taking the values.
    Label(usize),
    /// To a loop outside this trace.
    Outside,
}

/// A source position (1-based line and column); 0 for ops made by a program.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Pos {
    pub line: u32,
    pub col: u32,
}

/// One operation.
#[derive(Clone, PartialEq, Debug)]
pub struct Op {
    pub opcode: Opcode,
    pub args: Args,
    pub descr: Option<DescrId>,
    /// The guard's fail arguments: `None` when the trace gives no list (as
    /// in recorded traces). (The resume data's lists are thin: one word
    /// each in every op, most of which are no guard.)
    pub fail_args: Option<ThinVec<FailArg>>,
    /// The guard's virtual objects, which its fail arguments (and each
    /// other's contents) refer to by index: allocations the trace does not
    /// do, rebuilt if the guard fails.
    pub virtuals: ThinVec<Virtual>,
    /// Writes the guard makes if it fails, before the interpreter takes
    /// over: stores the optimizer delayed past it (PyPy's pending fields).
    pub pending: ThinVec<PendingWrite>,
    /// PyPy's machine-code offset (`+523:`), kept for reference.
    pub offset: Option<u32>,
}

impl Op {
    pub fn new(opcode: Opcode, args: impl Into<Args>) -> Op {
        Op {
            opcode,
            args: args.into(),
            descr: None,
            fail_args: None,
            virtuals: ThinVec::new(),
            pending: ThinVec::new(),
            offset: None,
        }
    }

    /// Every operand of the guard's resume data: its fail arguments and
    /// its virtuals' contents.
    pub fn resume_args(&self) -> impl Iterator<Item = Arg> + '_ {
        let items = self.fail_args.iter().flatten();
        let contents = self.virtuals.iter().flat_map(Virtual::contents);
        let values = items.chain(contents).filter_map(|item| item.arg());
        let pending = self.pending.iter().flat_map(|w| {
            let place = std::iter::once(w.object).chain(w.index);
            place.chain(w.value.arg())
        });
        values.chain(pending)
    }

    /// Its operands, then those of its resume data.
    pub fn all_args(&self) -> impl Iterator<Item = Arg> + '_ {
        self.args.iter().copied().chain(self.resume_args())
    }

    /// `f` of each of `all_args`, to change it in place.
    pub fn for_each_arg_mut(&mut self, mut f: impl FnMut(&mut Arg)) {
        fn item(item: &mut FailArg, f: &mut impl FnMut(&mut Arg)) {
            if let FailArg::Arg(a) = item {
                f(a)
            }
        }
        self.args.iter_mut().for_each(&mut f);
        for a in self.fail_args.iter_mut().flatten() {
            item(a, &mut f);
        }
        for v in &mut self.virtuals {
            let fields = v.fields.iter_mut().map(|(_, value)| value);
            for a in fields.chain(&mut v.items) {
                item(a, &mut f);
            }
        }
        for w in &mut self.pending {
            f(&mut w.object);
            w.index.iter_mut().for_each(&mut f);
            item(&mut w.value, &mut f);
        }
    }

    /// `f` of each of `all_args`, in that order (plain loops: cheaper
    /// than the chained iterator where every op is visited).
    pub fn for_each_arg(&self, mut f: impl FnMut(Arg)) {
        let mut item = |item: &FailArg| {
            if let FailArg::Arg(a) = *item {
                f(a)
            }
        };
        for &a in &self.args {
            item(&FailArg::Arg(a));
        }
        for a in self.fail_args.iter().flatten() {
            item(a);
        }
        for v in &self.virtuals {
            v.contents().for_each(&mut item);
        }
        for w in &self.pending {
            item(&FailArg::Arg(w.object));
            if let Some(index) = w.index {
                item(&FailArg::Arg(index));
            }
            item(&w.value);
        }
    }
}

/// One item of a guard's resume data: a fail argument, a field value or
/// an array item of a virtual object.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum FailArg {
    /// No value (PyPy prints `None`).
    Hole,
    Arg(Arg),
    /// A virtual object of the same guard (an index into `Op::virtuals`).
    Virtual(u32),
}

impl FailArg {
    /// The operand, if it is one.
    pub fn arg(self) -> Option<Arg> {
        match self {
            FailArg::Arg(a) => Some(a),
            _ => None,
        }
    }
}

/// A store a failing guard makes: `setfield_gc(object, value,
/// descr=field)`, or `setarrayitem_gc(object, index, value,
/// descr=array)`. The value may be one of the guard's virtuals.
#[derive(Clone, PartialEq, Debug)]
pub struct PendingWrite {
    pub object: Arg,
    /// The item's index, for an array descr.
    pub index: Option<Arg>,
    pub value: FailArg,
    pub descr: DescrId,
}

/// An object that a guard's resume data describes instead of the trace
/// allocating it (the optimizer removed the allocation). If the guard
/// fails, it is built as `opcode` would build it, then its fields or items
/// are set; contents may name other virtuals of the guard, itself
/// included, so that shared and cyclic structures can be described.
#[derive(Clone, PartialEq, Debug)]
pub struct Virtual {
    /// The name it is printed with (that of the removed allocation).
    pub name: CompactString,
    /// `new_with_vtable`, `new` (fields), `new_array`, `new_array_clear`
    /// (items, with an array descr), `newstr`, `newunicode` (characters,
    /// no descr).
    pub opcode: Opcode,
    pub descr: Option<DescrId>,
    /// Field values, by field descr (the struct kinds).
    pub fields: Vec<(DescrId, FailArg)>,
    /// Items: the length is their number (the array and string kinds). A
    /// hole is an item never written (zero in a cleared array).
    pub items: Vec<FailArg>,
    /// The input op whose allocation it stands for, as an optimizer's
    /// provenance names ops (`traceopt_opt::Optimized::provenance`);
    /// `None` where not known (a trace read from text, which does not
    /// print it: its name then says).
    pub site: Option<usize>,
}

impl Virtual {
    /// Whether `opcode` allocates what a virtual can describe, and with
    /// fields (as opposed to items).
    pub fn kind_of(opcode: Opcode) -> Option<VirtualKind> {
        match opcode {
            Opcode::New | Opcode::NewWithVtable => Some(VirtualKind::Struct),
            Opcode::NewArray | Opcode::NewArrayClear => Some(VirtualKind::Array),
            Opcode::Newstr | Opcode::Newunicode => Some(VirtualKind::String),
            _ => None,
        }
    }

    /// Every item of its contents: field values, then items.
    pub fn contents(&self) -> impl Iterator<Item = &FailArg> {
        self.fields.iter().map(|(_, v)| v).chain(&self.items)
    }
}

/// What a virtual holds.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum VirtualKind {
    /// Fields, by field descr (`new`, `new_with_vtable`).
    Struct,
    /// Items, with an array descr (`new_array`, `new_array_clear`).
    Array,
    /// Characters, no descr (`newstr`, `newunicode`).
    String,
}

/// A trace: input arguments and operations.
#[derive(Clone, Debug, Default)]
pub struct Trace {
    pub inputs: Vec<Type>,
    pub ops: Vec<Op>,
    /// One name per value id; empty where no name was given. (Names are
    /// short: a `CompactString` holds them without an allocation.)
    pub names: Vec<CompactString>,
    /// Where each op came from (parallel to `ops`), and the input line.
    pub op_pos: Vec<Pos>,
    pub input_pos: Pos,
    /// What the names of a test trace mean (`descr=valuedescr`,
    /// `ConstPtr(myptr)`), when a namespace file was given.
    pub namespace: Option<Arc<Namespace>>,
    /// The ops that ran, and passed, as PyPy's tracer recorded them: all
    /// of a log's `jit-log-noopt` section, those copied of one (after
    /// guards put before them), none of any other trace. What they tell
    /// of constants held then, and holds in every run
    /// (`recorded_classes`).
    pub recorded: std::ops::Range<usize>,
    pool: Pool,
}

/// Interned constants and descrs, each with an index from key to id.
#[derive(Clone, Debug, Default)]
struct Interned {
    consts: Vec<Const>,
    descrs: Vec<Descr>,
    const_index: HashMap<Const, ConstId>,
    descr_index: HashMap<Box<str>, DescrId>,
    /// Noted as descrs come in (`push_descr`): the size descrs, and the
    /// first descr of each part of a vref layout (`VrefLayout::part`),
    /// so that neither a look for a size descr by its class nor one for
    /// the layout reads every descr.
    sizes: Vec<DescrId>,
    vref_parts: [Option<DescrId>; 3],
}

impl Interned {
    fn push_descr(&mut self, id: DescrId, descr: Descr) {
        if matches!(descr.kind, DescrKind::Size(_)) {
            self.sizes.push(id);
        }
        if let Some(part) = VrefLayout::part(&descr) {
            self.vref_parts[part].get_or_insert(id);
        }
        self.descr_index.insert(descr.text.clone(), id);
        self.descrs.push(descr);
    }
}

/// A trace's constants and descrs. An optimized trace starts from its
/// input's (`share_interned`): it shares them as `base`, without a copy,
/// and what it interns itself goes to `own`, numbered after them, so an
/// id means the same in both traces. A trace that shares nothing
/// interns straight into `base`.
#[derive(Clone, Debug, Default)]
struct Pool {
    base: Arc<Interned>,
    own: Interned,
}

impl Pool {
    fn constant(&self, c: ConstId) -> Option<&Const> {
        let i = c.0 as usize;
        match i.checked_sub(self.base.consts.len()) {
            None => Some(&self.base.consts[i]),
            Some(j) => self.own.consts.get(j),
        }
    }

    fn descr(&self, d: DescrId) -> Option<&Descr> {
        let i = d.0 as usize;
        match i.checked_sub(self.base.descrs.len()) {
            None => Some(&self.base.descrs[i]),
            Some(j) => self.own.descrs.get(j),
        }
    }

    /// Where new entries go: `base` while no other trace shares it and
    /// nothing went to `own` yet, else `own`.
    fn target(&mut self) -> &mut Interned {
        if self.own.consts.is_empty() && self.own.descrs.is_empty() {
            if let Some(base) = Arc::get_mut(&mut self.base) {
                return base;
            }
        }
        &mut self.own
    }

    fn add_const(&mut self, c: Const) -> ConstId {
        let found = self.base.const_index.get(&c);
        if let Some(&id) = found.or_else(|| self.own.const_index.get(&c)) {
            return id;
        }
        let id = ConstId((self.base.consts.len() + self.own.consts.len()) as u32);
        let to = self.target();
        to.const_index.insert(c.clone(), id);
        to.consts.push(c);
        id
    }

    fn add_descr(&mut self, descr: Descr) -> DescrId {
        if let Some(id) = self.find_descr(&descr.text) {
            return id;
        }
        let id = DescrId((self.base.descrs.len() + self.own.descrs.len()) as u32);
        self.target().push_descr(id, descr);
        id
    }

    fn find_descr(&self, text: &str) -> Option<DescrId> {
        let found = self.base.descr_index.get(text);
        found.or_else(|| self.own.descr_index.get(text)).copied()
    }

    /// All entries in one shareable table (a copy only if some are `own`).
    fn shared(&self) -> Arc<Interned> {
        if self.own.consts.is_empty() && self.own.descrs.is_empty() {
            return self.base.clone();
        }
        let mut all = Interned::clone(&self.base);
        all.consts.extend(self.own.consts.iter().cloned());
        all.descrs.extend(self.own.descrs.iter().cloned());
        all.const_index
            .extend(self.own.const_index.iter().map(|(c, &id)| (c.clone(), id)));
        all.descr_index
            .extend(self.own.descr_index.iter().map(|(d, &id)| (d.clone(), id)));
        all.sizes.extend(&self.own.sizes);
        for (part, own) in all.vref_parts.iter_mut().zip(self.own.vref_parts) {
            *part = part.or(own);
        }
        Arc::new(all)
    }
}

impl PartialEq for Trace {
    fn eq(&self, other: &Trace) -> bool {
        self.inputs == other.inputs
            && self.ops == other.ops
            && self.names == other.names
            && self.consts().eq(other.consts())
            && self.descrs().eq(other.descrs())
    }
}

impl Trace {
    pub fn new() -> Trace {
        Trace::default()
    }

    /// Appends an input argument and returns its value id.
    /// All inputs must be added before the first op.
    pub fn add_input(&mut self, ty: Type, name: &str) -> ValueId {
        assert!(self.ops.is_empty(), "inputs must come before ops");
        self.inputs.push(ty);
        self.names.push(name.into());
        ValueId(self.names.len() as u32 - 1)
    }

    /// Appends an op and returns the value id it defines.
    pub fn push(&mut self, op: Op, name: &str, pos: Pos) -> ValueId {
        self.ops.push(op);
        self.op_pos.push(pos);
        self.names.push(name.into());
        ValueId(self.names.len() as u32 - 1)
    }

    /// Starts this trace's constants and descrs as `other`'s, with the
    /// same ids: shared, not copied. Replaces what this trace interned.
    pub fn share_interned(&mut self, other: &Trace) {
        self.pool = Pool {
            base: other.pool.shared(),
            own: Interned::default(),
        };
    }

    /// `op` of trace `from`, made an op of this trace: each value `v` it
    /// uses becomes `value(v)`, its constants and descrs are interned
    /// here (resume data included). Not pushed.
    pub fn import_op(&mut self, from: &Trace, op: &Op, value: impl FnMut(ValueId) -> Arg) -> Op {
        let mut copy = op.clone();
        self.import_op_in_place(from, &mut copy, value);
        copy
    }

    /// Constant `c` of trace `from`, as this trace's: an entry of a
    /// table both share keeps its id; another is interned here.
    pub fn const_from(&mut self, from: &Trace, c: ConstId) -> ConstId {
        let shared = Arc::ptr_eq(&self.pool.base, &from.pool.base);
        if shared && (c.0 as usize) < from.pool.base.consts.len() {
            return c;
        }
        self.add_const(from.constant(c).clone())
    }

    /// Descr `d` of trace `from`, as this trace's (`const_from`).
    pub fn descr_from(&mut self, from: &Trace, d: DescrId) -> DescrId {
        let shared = Arc::ptr_eq(&self.pool.base, &from.pool.base);
        if shared && (d.0 as usize) < from.pool.base.descrs.len() {
            return d;
        }
        self.import_descr(from.descr(d))
    }

    /// `import_op` of an op taken out of `from`, changed where it is
    /// (not copied).
    pub fn import_op_in_place(
        &mut self,
        from: &Trace,
        copy: &mut Op,
        mut value: impl FnMut(ValueId) -> Arg,
    ) {
        // (The constants and descrs both traces share keep their ids:
        // most are, and need no look-up.)
        let (consts, descrs) = match Arc::ptr_eq(&self.pool.base, &from.pool.base) {
            true => (from.pool.base.consts.len(), from.pool.base.descrs.len()),
            false => (0, 0),
        };
        let mut import = |arg: &mut Arg, this: &mut Trace| {
            *arg = match *arg {
                Arg::Value(v) => value(v),
                Arg::Const(c) if (c.0 as usize) < consts => Arg::Const(c),
                Arg::Const(c) => Arg::Const(this.const_from(from, c)),
            }
        };
        copy.for_each_arg_mut(|arg| import(arg, self));
        let descr = |d: &mut DescrId, this: &mut Trace| {
            if (d.0 as usize) >= descrs {
                *d = this.descr_from(from, *d);
            }
        };
        if let Some(d) = copy.descr.as_mut() {
            descr(d, self);
        }
        for v in copy.virtuals.iter_mut() {
            // The op it names is `from`'s input's, not this trace's.
            v.site = None;
            if let Some(d) = v.descr.as_mut() {
                descr(d, self);
            }
            for (d, _) in v.fields.iter_mut() {
                descr(d, self);
            }
        }
        for w in copy.pending.iter_mut() {
            descr(&mut w.descr, self);
        }
    }

    /// Interns a constant.
    pub fn add_const(&mut self, c: Const) -> ConstId {
        self.pool.add_const(c)
    }

    /// Interns a descr, by its text.
    pub fn add_descr(&mut self, descr: Descr) -> DescrId {
        self.pool.add_descr(descr)
    }

    /// `add_descr` of a descr of another trace: copied only if this
    /// trace has none of its text yet.
    pub fn import_descr(&mut self, descr: &Descr) -> DescrId {
        (self.find_descr(&descr.text)).unwrap_or_else(|| self.add_descr(descr.clone()))
    }

    /// The id of an interned descr with this text.
    pub fn find_descr(&self, text: &str) -> Option<DescrId> {
        self.pool.find_descr(text)
    }

    /// The interned constants, in id order.
    pub fn consts(&self) -> impl Iterator<Item = &Const> + Clone {
        self.pool.base.consts.iter().chain(&self.pool.own.consts)
    }

    /// The interned descrs, in id order.
    pub fn descrs(&self) -> impl Iterator<Item = &Descr> + Clone {
        self.pool.base.descrs.iter().chain(&self.pool.own.descrs)
    }

    pub fn num_consts(&self) -> usize {
        self.pool.base.consts.len() + self.pool.own.consts.len()
    }

    pub fn num_descrs(&self) -> usize {
        self.pool.base.descrs.len() + self.pool.own.descrs.len()
    }

    /// The constant with this id, or `None` if there is none.
    pub fn try_constant(&self, c: ConstId) -> Option<&Const> {
        self.pool.constant(c)
    }

    /// The descr with this id, or `None` if there is none.
    pub fn try_descr(&self, d: DescrId) -> Option<&Descr> {
        self.pool.descr(d)
    }

    pub fn num_values(&self) -> usize {
        self.names.len()
    }

    /// The op that defines `v`, or `None` for an input argument.
    pub fn op_index(&self, v: ValueId) -> Option<usize> {
        (v.0 as usize).checked_sub(self.inputs.len())
    }

    /// The value id defined by op `index`.
    /// The run that leaves this trace at guard `guard` (a bridge's
    /// parent, up to the guard the bridge leaves), as a trace of its own:
    /// from the start, or from the last label before the guard (whose
    /// arguments become the inputs), up to the guard, which becomes a
    /// jump with the guard's fail arguments that are values (what a
    /// bridge out of it takes as its inputs: the others are virtual, or
    /// constants). `None` if `guard` is no guard with fail arguments, or
    /// reads a value from before its label.
    pub fn exit_at(&self, guard: usize) -> Option<Trace> {
        let op = self
            .ops
            .get(guard)
            .filter(|op| op.opcode.has(crate::Flags::GUARD))?;
        let start = (self.ops[..guard].iter()).rposition(|op| op.opcode == Opcode::Label);
        let mut exit = Trace::new();
        exit.namespace = self.namespace.clone();
        exit.input_pos = self.input_pos;
        let mut map: Vec<Option<Arg>> = vec![None; self.num_values()];
        let inputs: Vec<Arg> = match start {
            None => (0..self.inputs.len())
                .map(|i| Arg::Value(ValueId(i as u32)))
                .collect(),
            Some(label) => self.ops[label].args.to_vec(),
        };
        for arg in inputs {
            if let Arg::Value(v) = arg {
                if map[v.0 as usize].is_none() {
                    let ty = self.value_type(v);
                    map[v.0 as usize] = Some(Arg::Value(exit.add_input(ty, self.name(v))));
                }
            }
        }
        let first = start.map_or(0, |label| label + 1);
        if !exit.copy_ops(self, first..guard, &mut map) {
            return None;
        }
        let mut args = Vec::new();
        for item in op.fail_args.as_ref()? {
            if let FailArg::Arg(Arg::Value(v)) = item {
                args.push(map[v.0 as usize]?);
            }
        }
        let pos = self.op_pos.get(guard).copied().unwrap_or_default();
        exit.push(Op::new(Opcode::Jump, args), "", pos);
        Some(exit)
    }

    /// Appends copies of `from`'s ops in `range`, each value `v` they use
    /// as `map[v]`, and maps each result to its copy. False (and the
    /// copy stops) where an op uses a value `map` does not give.
    pub fn copy_ops(
        &mut self,
        from: &Trace,
        range: std::ops::Range<usize>,
        map: &mut [Option<Arg>],
    ) -> bool {
        for i in range {
            let mut defined = true;
            let copy = self.import_op(from, &from.ops[i], |v| {
                map[v.0 as usize].unwrap_or_else(|| {
                    defined = false;
                    Arg::Value(v)
                })
            });
            if !defined {
                return false;
            }
            let v = from.value_of_op(i);
            let pos = from.op_pos.get(i).copied().unwrap_or_default();
            map[v.0 as usize] = Some(Arg::Value(self.push(copy, from.name(v), pos)));
        }
        true
    }

    /// The class of each object the recorded ops allocate with
    /// `new_with_vtable` of a size descr that names none (a log's
    /// `<SizeDescr 16>`), as the first class guard on it names it: that
    /// guard passed when the trace was recorded, and the class of what an
    /// op allocates is a constant of the op (two ops of one descr text
    /// may make two classes: an int and a float box are both 16 bytes).
    /// By allocating op.
    pub fn recorded_classes(&self) -> Vec<(usize, Const)> {
        let end = self.recorded.end.min(self.ops.len());
        let recorded = self.recorded.start.min(end)..end;
        let mut found: Vec<(usize, Const)> = Vec::new();
        let mut tested = vec![false; recorded.len()];
        for op in &self.ops[recorded.clone()] {
            // (The opcode first: most ops are no class test, and their
            // arguments lie elsewhere in memory.)
            if !matches!(op.opcode, Opcode::GuardClass | Opcode::GuardNonnullClass) {
                continue;
            }
            let (Some(Arg::Value(v)), Some(&Arg::Const(c))) =
                (op.args.first().copied(), op.args.get(1))
            else {
                continue;
            };
            let Some(k) = self.op_index(v).filter(|k| recorded.contains(k)) else {
                continue;
            };
            let alloc = &self.ops[k];
            if self.makes_unnamed_class(alloc.opcode, alloc.descr)
                && !std::mem::replace(&mut tested[k - recorded.start], true)
            {
                found.push((k, self.constant(c).clone()));
            }
        }
        found
    }

    /// The constant objects (`ConstPtr` names) whose fields the recorded
    /// ops read or write: those ops ran when the trace was recorded, so
    /// each is a struct (not null, not an array or a string), and a
    /// constant stays the object it is. (What a field holds is no such
    /// thing: PyPy erases the type of some fields, as mapdict's
    /// `_value0`, which holds an instance in one object and an array in
    /// another.) Sorted, once each.
    pub fn recorded_structs(&self) -> Vec<Box<str>> {
        let end = self.recorded.end.min(self.ops.len());
        let recorded = &self.ops[self.recorded.start.min(end)..end];
        let mut found: Vec<Box<str>> = (recorded.iter())
            .filter(|op| {
                matches!(
                    op.opcode,
                    Opcode::GetfieldGcI
                        | Opcode::GetfieldGcR
                        | Opcode::GetfieldGcF
                        | Opcode::SetfieldGc
                )
            })
            .filter_map(|op| match op.args.first() {
                Some(&Arg::Const(c)) => match self.constant(c) {
                    Const::Ptr(name) => Some(Box::from(name.as_str())),
                    _ => None,
                },
                _ => None,
            })
            .collect();
        found.sort_unstable();
        found.dedup();
        found
    }

    /// Whether `opcode` of `descr` (this trace's) is a `new_with_vtable`
    /// whose size descr does not name the class it makes (a log's
    /// `<SizeDescr 16>`).
    pub fn makes_unnamed_class(&self, opcode: Opcode, descr: Option<DescrId>) -> bool {
        opcode == Opcode::NewWithVtable && descr.is_some_and(|d| !self.descr(d).names_class())
    }

    /// Whether one of this trace's constants is the object `name`
    /// (`ConstPtr(name)`). (A log names each trace's objects anew: the
    /// same name in another trace may be another object.)
    pub fn names_object(&self, name: &str) -> bool {
        self.consts()
            .any(|c| matches!(c, Const::Ptr(n) if **n == *name))
    }

    pub fn value_of_op(&self, index: usize) -> ValueId {
        ValueId((self.inputs.len() + index) as u32)
    }

    pub fn value_type(&self, v: ValueId) -> Type {
        match self.op_index(v) {
            None => self.inputs[v.0 as usize],
            Some(i) => self.ops[i].opcode.result_type(),
        }
    }

    pub fn arg_type(&self, arg: Arg) -> Type {
        match arg {
            Arg::Value(v) => self.value_type(v),
            Arg::Const(c) => self.constant(c).ty(),
        }
    }

    /// Like `arg_type`, but `None` for an id that names nothing in this
    /// trace (only a program building traces by hand can make one).
    pub fn try_arg_type(&self, arg: Arg) -> Option<Type> {
        match arg {
            Arg::Value(v) if (v.0 as usize) < self.inputs.len() + self.ops.len() => {
                Some(self.value_type(v))
            }
            Arg::Value(_) => None,
            Arg::Const(c) => self.try_constant(c).map(Const::ty),
        }
    }

    pub fn constant(&self, c: ConstId) -> &Const {
        self.try_constant(c).expect("constant id of this trace")
    }

    pub fn descr(&self, d: DescrId) -> &Descr {
        self.try_descr(d).expect("descr id of this trace")
    }

    /// How the trace's virtual references are laid out: as its namespace
    /// or its own descrs say, else as PyPy prints them.
    pub fn vref_layout(&self) -> VrefLayout {
        let named = self.namespace.iter().flat_map(|ns| ns.descrs());
        // (Of its own descrs, the first of each part is all `find` takes:
        // noted as they were interned, in id order.)
        // (Every id of `base` comes before those of `own`.)
        let parts = self
            .pool
            .base
            .vref_parts
            .iter()
            .chain(&self.pool.own.vref_parts);
        let mut firsts: SmallVec<[DescrId; 6]> = parts.flatten().copied().collect();
        firsts.sort();
        VrefLayout::find(named.chain(firsts.into_iter().map(|d| self.descr(d))))
    }

    /// The interned size descrs, in id order.
    pub fn size_descrs(&self) -> impl Iterator<Item = (DescrId, &Descr)> {
        let ids = self.pool.base.sizes.iter().chain(&self.pool.own.sizes);
        ids.map(|&d| (d, self.descr(d)))
    }

    /// The value's name; empty if it has none.
    pub fn name(&self, v: ValueId) -> &str {
        self.names.get(v.0 as usize).map_or("", |n| n)
    }

    /// `name`, as the trace holds it (cheaper to copy than its text).
    pub fn compact_name(&self, v: ValueId) -> &CompactString {
        static UNNAMED: CompactString = CompactString::const_new("");
        self.names.get(v.0 as usize).unwrap_or(&UNNAMED)
    }

    /// Where a `jump` goes: to a `label` of this trace with the same descr;
    /// back to the start when it has no descr and its values fit the
    /// inputs (else it leaves the trace), closes the loop being
    /// recorded (`<Loop-N>`), or the trace has no labels and the descr names
    /// no other trace; otherwise out of the trace (a bridge entering another
    /// loop: `<LoopN>`, or a `TargetToken` of a label elsewhere).
    pub fn jump_target(&self, jump: &Op) -> JumpTarget {
        let mut has_labels = false;
        for (i, op) in self.ops.iter().enumerate() {
            if op.opcode == Opcode::Label {
                has_labels = true;
                if op.descr.is_some() && op.descr == jump.descr {
                    return JumpTarget::Label(i);
                }
            }
        }
        if self.jumps_back(jump, has_labels) {
            JumpTarget::Start
        } else {
            JumpTarget::Outside
        }
    }

    /// Whether the trace has no label and ends in a jump back to its
    /// start (`jump_target`): a loop as recorded. (The jump's target
    /// first: a bridge's ops are not looked at.)
    pub fn loops_to_start(&self) -> bool {
        let Some(jump) = self.ops.last().filter(|op| op.opcode == Opcode::Jump) else {
            return false;
        };
        self.jumps_back(jump, false) && !self.ops.iter().any(|op| op.opcode == Opcode::Label)
    }

    /// Whether `jump`, matching no label of the trace (which has some
    /// where `has_labels`), goes back to the trace's start.
    fn jumps_back(&self, jump: &Op, has_labels: bool) -> bool {
        let descr = jump.descr.and_then(|d| self.try_descr(d));
        match descr.map(|d| &d.kind) {
            // PyPy's tests often end in a jump that does not fit the inputs:
            // it stands for a jump elsewhere.
            None => {
                jump.args.len() == self.inputs.len()
                    && (jump.args.iter().zip(&self.inputs))
                        .all(|(&a, &ty)| self.try_arg_type(a) == Some(ty))
            }
            Some(DescrKind::Loop { number }) => number.is_some_and(|n| n < 0),
            Some(DescrKind::TargetToken { .. }) => false,
            Some(_) => !has_labels,
        }
    }

    /// Ops that count as operations for statistics: all but `debug_merge_point`.
    pub fn real_ops(&self) -> impl Iterator<Item = &Op> {
        self.ops
            .iter()
            .filter(|op| op.opcode != Opcode::DebugMergePoint)
    }
}
