//! Random heap traces: objects given and allocated, field and array
//! traffic, aliasing inputs, calls of chosen effect info, escapes, guards
//! on references, and guards whose fail arguments hold objects (so that
//! removed allocations end up in resume data).
//!
//! As for integer traces, every guard passes on the example: the
//! generator runs what it has built so far in the interpreter, on the
//! example heap and with the fuzzer's calls (`FuzzEnv`), reads the values
//! it needs (an object's class, a field, a comparison's result) from that
//! run, and keeps a new op only where the run still reaches the end.
//!
//! The example heap holds one to three objects (boxes with two int
//! fields, a float field and a link, a pair, an int array, a byte or
//! unicode string); one to three reference inputs point to them, two of
//! them to the same object in about a third of the traces. The
//! differential runs then move the inputs to other objects of the same
//! kind, which makes and breaks aliasing. Floats come with their own
//! arithmetic (the identities of the float pass, `x * 1.0` first among
//! them), strings with the ops that build, read and copy them and the
//! string helpers PyPy's optimizer knows (concatenation, slices,
//! equality). Virtual references to boxes stand for PyPy's frames.

use std::sync::{Arc, OnceLock};

use rand::RngExt;
use traceopt_interp::{stable_address, Outcome, Val};
use traceopt_ir::{Namespace, Opcode, ValueId};

use crate::entropy::Entropy;
use crate::oracle::run_on;
use crate::sketch::{ExampleObject, ExampleValue, Line, Operand, Sketch};

/// The fuzzer's namespace: its classes, fields, array and call descrs.
pub const NAMESPACE: &str = "\
box_vtable = class vtable name=BOX struct=BOX sizedescr=boxsize
pair_vtable = class vtable name=PAIR struct=PAIR sizedescr=pairsize
boxsize = size BOX size=64 object vtable=box_vtable fields=[headdescr,taildescr,linkdescr,ratiodescr,flagdescr,codedescr,identdescr,versiondescr]
pairsize = size PAIR size=16 object vtable=pair_vtable fields=[leftdescr]
headdescr = field BOX.head type=int cell=S size=8 offset=8 index=0 owner=boxsize
taildescr = field BOX.tail type=int cell=S size=8 offset=16 index=1 owner=boxsize
linkdescr = field BOX.link type=ref cell=P size=8 offset=24 index=2 owner=boxsize points_to=BOX
ratiodescr = field BOX.ratio type=float cell=F size=8 offset=32 index=3 owner=boxsize
flagdescr = field BOX.flag type=int cell=S size=1 offset=40 index=4 owner=boxsize
codedescr = field BOX.code type=int cell=U size=2 offset=42 index=5 owner=boxsize
identdescr = field BOX.ident type=int cell=S size=8 offset=48 index=6 owner=boxsize pure
versiondescr = field BOX.version type=int cell=S size=8 offset=56 index=7 owner=boxsize quasi-immutable pure
leftdescr = field PAIR.left type=int cell=S size=8 offset=8 index=0 owner=pairsize
intsdescr = array gc item=int cell=S itemsize=8
opaquecalldescr = call args=i result=i ressize=8 effect=7/random_effects reads=all writes=all
headcalldescr = call args=i result=i ressize=8 effect=2/cannot_raise reads=all writes=fields[headdescr]
quietcalldescr = call args=i result=i ressize=8 effect=2/cannot_raise reads=all writes=none
tailreadercalldescr = call args=i result=i ressize=8 effect=2/cannot_raise reads=fields[taildescr] writes=none
purecalldescr = call args=i result=i ressize=8 effect=0/elidable_cannot_raise reads=all writes=none
strconcatdescr = call args=i result=i ressize=8 effect=3/elidable_or_memoryerror oopspec=22/STR_CONCAT reads=none writes=none
strslicedescr = call args=i result=i ressize=8 effect=3/elidable_or_memoryerror oopspec=23/STR_SLICE reads=none writes=none
strequaldescr = call args=i result=i ressize=8 effect=0/elidable_cannot_raise oopspec=24/STR_EQUAL reads=none writes=none
intscopydescr = call args=i result=i ressize=8 effect=2/cannot_raise oopspec=1/ARRAYCOPY reads=arrays[intsdescr] writes=arrays[intsdescr]
vref_vtable = class vtable name=jit_virtual_ref struct=JitVirtualRef sizedescr=vrefsize
boxconst = ptr object=boxconst struct=BOX class=box_vtable head=7 ident=3 version=1
vrefsize = size JitVirtualRef size=24 object vtable=vref_vtable fields=[vreftokendescr,vrefforceddescr]
vreftokendescr = field JitVirtualRef.virtual_token type=ref cell=P size=8 offset=8 index=0 owner=vrefsize
vrefforceddescr = field JitVirtualRef.forced type=ref cell=P size=8 offset=16 index=1 owner=vrefsize points_to=object
";

/// The int fields of the namespace that calls may write, the class that
/// has each, and what a cell of it holds: bytes, and whether signed. The
/// pure field `identdescr` is not among them: it never changes once its
/// object is built. The quasi-immutable `versiondescr` is: a call may
/// change it (in PyPy that invalidates the loops that assumed it).
pub const INT_FIELDS: [(&str, &str, u32, bool); 6] = [
    ("headdescr", "box_vtable", 8, true),
    ("taildescr", "box_vtable", 8, true),
    ("flagdescr", "box_vtable", 1, true),
    ("codedescr", "box_vtable", 2, false),
    ("versiondescr", "box_vtable", 8, true),
    ("leftdescr", "pair_vtable", 8, true),
];

/// Values at the edges of the narrow cells: what fits a signed byte or
/// two unsigned bytes only just, and what does not.
const CELL_EDGES: [i64; 10] = [127, 128, -128, -129, 255, 256, 65535, 65536, -1, 0x1_0080];

/// The namespace's constant object (`ConstPtr(boxconst)`, a box), and
/// what its fields hold when a run starts (the pure `identdescr` for
/// ever; the quasi-immutable `versiondescr` until a call changes it).
pub const CONST_BOX: (&str, [(&str, i64); 3]) = (
    "boxconst",
    [("headdescr", 7), ("identdescr", 3), ("versiondescr", 1)],
);

/// The float fields of the namespace and the class that has each.
pub const FLOAT_FIELDS: [(&str, &str); 1] = [("ratiodescr", "box_vtable")];

/// The int array descr.
pub const INT_ARRAY: &str = "intsdescr";

/// The namespace, parsed once.
pub fn namespace() -> Arc<Namespace> {
    static PARSED: OnceLock<Arc<Namespace>> = OnceLock::new();
    PARSED
        .get_or_init(|| Arc::new(Namespace::parse(NAMESPACE, "fuzz namespace").unwrap()))
        .clone()
}

/// What a value is in the example run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Int(i64),
    Float,
    Null,
    Box,
    Pair,
    /// A virtual reference (PyPy's `JitVirtualRef`, to a frame).
    Vref,
    /// An int array of this length.
    Array(usize),
    /// A string of this length, of bytes or of code points.
    Text {
        unicode: bool,
        len: usize,
    },
}

impl Kind {
    /// An object (not null, not a number).
    fn is_object(self) -> bool {
        !matches!(self, Kind::Int(_) | Kind::Float | Kind::Null)
    }
}

/// Float constants: the identities' 1.0, the signed zeros, and a few
/// values exact in binary.
const FLOATS: [f64; 7] = [1.0, 1.0, 0.0, -0.0, -1.0, 0.5, 2.5];

struct HeapGen<'a> {
    rng: Entropy<'a>,
    sketch: Sketch,
    /// Every value of the last good run: name, and what it is.
    values: Vec<(String, Kind)>,
    /// Results made so far (names are unique).
    made: usize,
    /// Whether array items are cleared now and then (`zero_array`).
    clears: bool,
}

impl HeapGen<'_> {
    fn chance(&mut self, percent: u32) -> bool {
        self.rng.random_range(0..100) < percent
    }

    fn pick<T: Clone>(&mut self, items: &[T]) -> Option<T> {
        (!items.is_empty()).then(|| items[self.rng.random_range(0..items.len())].clone())
    }

    /// Values of the kinds `wanted` accepts, the recent ones more often.
    fn some(&mut self, wanted: impl Fn(Kind) -> bool) -> Option<(Operand, Kind)> {
        let fit: Vec<(String, Kind)> = (self.values.iter())
            .filter(|(_, k)| wanted(*k))
            .cloned()
            .collect();
        let n = fit.len();
        if n == 0 {
            return None;
        }
        let i = match self.chance(60) {
            true => n - 1 - self.rng.random_range(0..n.min(4)),
            false => self.rng.random_range(0..n),
        };
        Some((Operand::Value(fit[i].0.clone()), fit[i].1))
    }

    fn int(&mut self) -> Operand {
        match self.some(|k| matches!(k, Kind::Int(_))) {
            Some((v, _)) if !self.chance(25) => v,
            _ => Operand::Const(self.rng.random_range(-3..20)),
        }
    }

    /// A value for a narrow cell: now and then one at the cells' edges.
    fn narrow_value(&mut self) -> Operand {
        match self.chance(50) {
            true => Operand::Const(self.pick(&CELL_EDGES).unwrap()),
            false => self.int(),
        }
    }

    fn float(&mut self) -> Operand {
        match self.some(|k| k == Kind::Float) {
            Some((v, _)) if !self.chance(30) => v,
            _ => Operand::Float(self.pick(&FLOATS).unwrap().to_bits()),
        }
    }

    fn object(&mut self, kind: Kind) -> Option<Operand> {
        self.some(|k| k == kind).map(|(v, _)| v)
    }

    fn new_name(&mut self, letter: char) -> String {
        self.made += 1;
        format!("{letter}{}", self.made)
    }

    fn with_descr(mut line: Line, descr: &str) -> Line {
        line.descr = Some(descr.into());
        line
    }

    /// Fail arguments for a guard: a few live values, objects first.
    fn fail_args(&mut self) -> Vec<Operand> {
        let count = self.rng.random_range(0..4);
        let mut out = Vec::new();
        for _ in 0..count {
            let wanted_ref = self.chance(70);
            let v = self.some(|k| k.is_object() == wanted_ref && k != Kind::Null);
            if let Some((v, _)) = v {
                if !out.contains(&v) {
                    out.push(v);
                }
            }
        }
        out
    }

    fn guard(&mut self, opcode: Opcode, args: Vec<Operand>) -> Line {
        let mut line = Line::new(None, opcode, args);
        line.fail_args = self.fail_args();
        line
    }

    /// Tries `lines` at the end: kept if the example still runs to the
    /// end, with the values of the new run.
    fn try_lines(&mut self, lines: Vec<Line>) -> bool {
        let before = self.sketch.lines.len();
        self.sketch.lines.extend(lines);
        match example_run(&self.sketch) {
            Some(values) => {
                self.values = values;
                true
            }
            None => {
                self.sketch.lines.truncate(before);
                false
            }
        }
    }

    /// The kind of value `name` has in the last run.
    fn kind_of(&self, name: &str) -> Option<Kind> {
        self.values.iter().find(|(n, _)| n == name).map(|(_, k)| *k)
    }

    /// Builds a guard that passes on the example for a fresh comparison
    /// result `name`, once its value is known.
    fn guard_on(&mut self, name: &str) -> Option<Line> {
        let Kind::Int(v) = self.kind_of(name)? else {
            return None;
        };
        let opcode = match v {
            0 => Opcode::GuardFalse,
            _ => Opcode::GuardTrue,
        };
        Some(self.guard(opcode, vec![Operand::Value(name.into())]))
    }

    /// One step: a few ops of one kind.
    fn step(&mut self) {
        use Opcode::*;
        match self.rng.random_range(0..19) {
            0 | 1 => {
                let (descr, letter) = match self.rng.random_range(0..5) {
                    0..=2 => ("boxsize", 'p'),
                    3 => ("pairsize", 'p'),
                    _ => {
                        let name = self.new_name('p');
                        let length = self.rng.random_range(1..4);
                        let line = Line::new(Some(name), NewArray, vec![Operand::Const(length)]);
                        self.try_lines(vec![Self::with_descr(line, "intsdescr")]);
                        return;
                    }
                };
                let name = self.new_name(letter);
                let line = Line::new(Some(name.clone()), NewWithVtable, vec![]);
                let mut lines = vec![Self::with_descr(line, descr)];
                // A box's pure field is written once, as it is built.
                if descr == "boxsize" && self.chance(50) {
                    let ident = vec![Operand::Value(name), self.int()];
                    let write = Line::new(None, SetfieldGc, ident);
                    lines.push(Self::with_descr(write, "identdescr"));
                }
                self.try_lines(lines);
            }
            2..=4 => self.write_field(),
            5..=7 => self.read_field(),
            8 => self.array_item(),
            9 => self.call(),
            10 => {
                if let Some((p, _)) = self.some(Kind::is_object) {
                    let line = Line::new(None, EscapeN, vec![p]);
                    self.try_lines(vec![line]);
                }
            }
            11 => self.ref_guard(),
            12 => self.compare_refs(),
            13 => self.float_step(),
            14 | 15 => self.text_step(),
            16 => self.virtual_ref(),
            18 => self.read_write_read(),
            _ => self.int_step(),
        }
    }

    /// A box or a pair, now and then the namespace's constant box.
    fn box_or_pair(&mut self) -> Option<(Operand, Kind)> {
        match self.chance(10) {
            true => Some((Operand::Ptr(CONST_BOX.0.into()), Kind::Box)),
            false => self.some(|k| matches!(k, Kind::Box | Kind::Pair)),
        }
    }

    fn write_field(&mut self) {
        let target = self.box_or_pair();
        let Some((p, kind)) = target else { return };
        let (descr, value) = match kind {
            Kind::Pair => ("leftdescr", self.int()),
            _ => match self.rng.random_range(0..6) {
                0 => ("headdescr", self.int()),
                1 => ("taildescr", self.int()),
                2 => ("ratiodescr", self.float()),
                3 => ("flagdescr", self.narrow_value()),
                4 => ("codedescr", self.narrow_value()),
                _ => {
                    let link = match self.chance(20) {
                        true => Some(Operand::Null),
                        false => self.object(Kind::Box),
                    };
                    let Some(link) = link else { return };
                    ("linkdescr", link)
                }
            },
        };
        let line = Line::new(None, Opcode::SetfieldGc, vec![p, value]);
        self.try_lines(vec![Self::with_descr(line, descr)]);
    }

    fn read_field(&mut self) {
        use Opcode::*;
        let target = self.box_or_pair();
        let Some((p, kind)) = target else { return };
        let (descr, opcode) = match kind {
            Kind::Pair => ("leftdescr", GetfieldGcI),
            _ => match self.rng.random_range(0..11) {
                0 | 1 => ("headdescr", GetfieldGcI),
                2 => ("taildescr", GetfieldGcI),
                3 | 10 => ("ratiodescr", GetfieldGcF),
                4 => ("flagdescr", GetfieldGcI),
                5 => ("codedescr", GetfieldGcI),
                6 => ("identdescr", GetfieldGcI),
                7 => ("versiondescr", GetfieldGcI),
                _ => ("linkdescr", GetfieldGcR),
            },
        };
        let ref_read = opcode == GetfieldGcR;
        let letter = match opcode {
            GetfieldGcR => 'p',
            GetfieldGcF => 'f',
            _ => 'i',
        };
        let name = self.new_name(letter);
        let line = Line::new(Some(name.clone()), opcode, vec![p]);
        if !self.try_lines(vec![Self::with_descr(line, descr)]) || !ref_read {
            return;
        }
        // What was read: known null or not, or of its class, from here on.
        let read = Operand::Value(name.clone());
        let guard = match self.kind_of(&name) {
            Some(Kind::Null) => self.guard(GuardIsnull, vec![read]),
            _ if self.chance(50) => self.guard(GuardNonnull, vec![read]),
            _ => self.guard(
                GuardNonnullClass,
                vec![read, Operand::Class("box_vtable".into())],
            ),
        };
        self.try_lines(vec![guard]);
    }

    /// A read through one reference, a write through another of the same
    /// kind (the same object or not, as the inputs alias or not), and the
    /// read again: what a heap cache may forward only where the two
    /// cannot be the same object.
    fn read_write_read(&mut self) {
        use Opcode::*;
        let kinds = |k: Kind| matches!(k, Kind::Box | Kind::Array(_));
        let Some((p, kind)) = self.some(kinds) else {
            return;
        };
        let q = match (kind, self.chance(15)) {
            (Kind::Box, true) => Some(Operand::Ptr(CONST_BOX.0.into())),
            _ => self.some(|k| k == kind).map(|(q, _)| q),
        };
        let Some(q) = q else {
            return;
        };
        let (read, write, descr, place) = match kind {
            Kind::Array(len) => {
                let index = Operand::Const(self.rng.random_range(0..len as i64));
                (GetarrayitemGcI, SetarrayitemGc, INT_ARRAY, vec![index])
            }
            _ => {
                let descr = self.pick(&["headdescr", "headdescr", "flagdescr", "codedescr"]);
                (GetfieldGcI, SetfieldGc, descr.unwrap(), vec![])
            }
        };
        let value = match descr {
            "flagdescr" | "codedescr" => self.narrow_value(),
            _ => self.int(),
        };
        let first = self.new_name('i');
        let again = self.new_name('i');
        let lines = vec![
            Line::new(Some(first), read, [vec![p.clone()], place.clone()].concat()),
            Line::new(None, write, [vec![q], place.clone(), vec![value]].concat()),
            Line::new(Some(again), read, [vec![p], place].concat()),
        ];
        let lines = lines
            .into_iter()
            .map(|l| Self::with_descr(l, descr))
            .collect();
        self.try_lines(lines);
    }

    fn array_item(&mut self) {
        use Opcode::*;
        let target = self.some(|k| matches!(k, Kind::Array(_)));
        let Some((a, Kind::Array(length))) = target else {
            return;
        };
        // Now and then a copy of some items into another array (or the
        // same), at places inside both: PyPy's array copy helper.
        if self.chance(30) {
            if let Some((b, Kind::Array(other))) = self.some(|k| matches!(k, Kind::Array(_))) {
                let n = self.rng.random_range(0..=length.min(other));
                let from = self.rng.random_range(0..=length - n) as i64;
                let to = self.rng.random_range(0..=other - n) as i64;
                let places = [from, to, n as i64].map(Operand::Const);
                let mut args = vec![Operand::Const(0), a, b];
                args.extend(places);
                let copy = Line::new(None, CallN, args);
                self.try_lines(vec![Self::with_descr(copy, "intscopydescr")]);
                return;
            }
        }
        // Now and then some items cleared (PyPy's `zero_array`, by bytes:
        // the start and count scaled by the item size).
        if self.clears && self.chance(10) {
            let n = self.rng.random_range(0..=length);
            let from = self.rng.random_range(0..=length - n) as i64;
            let args = [from, n as i64, 8, 8].map(Operand::Const);
            let clear = Line::new(None, ZeroArray, [vec![a], args.to_vec()].concat());
            self.try_lines(vec![Self::with_descr(clear, INT_ARRAY)]);
            return;
        }
        let index =
            match self.some(|k| matches!(k, Kind::Int(v) if (0..length as i64).contains(&v))) {
                Some((v, _)) if self.chance(30) => v,
                _ => Operand::Const(self.rng.random_range(0..length as i64)),
            };
        let line = match self.rng.random_range(0..5) {
            0 | 1 => {
                let value = self.int();
                Line::new(None, SetarrayitemGc, vec![a, index, value])
            }
            2 | 3 => {
                let name = self.new_name('i');
                Line::new(Some(name), GetarrayitemGcI, vec![a, index])
            }
            _ => {
                let name = self.new_name('i');
                Line::new(Some(name), ArraylenGc, vec![a])
            }
        };
        self.try_lines(vec![Self::with_descr(line, INT_ARRAY)]);
    }

    fn call(&mut self) {
        use Opcode::*;
        let (descr, opcode) = match self.rng.random_range(0..6) {
            0 | 1 => ("opaquecalldescr", CallI),
            2 => ("headcalldescr", CallI),
            3 => ("quietcalldescr", CallI),
            4 => ("tailreadercalldescr", CallI),
            _ => ("purecalldescr", CallPureI),
        };
        let mut args = vec![Operand::Const(self.rng.random_range(1..4))];
        for _ in 0..self.rng.random_range(0..3) {
            let object = self.some(Kind::is_object);
            match object {
                Some((p, _)) if opcode == CallI && self.chance(40) => args.push(p),
                _ => args.push(self.int()),
            }
        }
        let name = self.new_name('i');
        let mut lines = vec![Self::with_descr(Line::new(Some(name), opcode, args), descr)];
        if descr == "opaquecalldescr" {
            lines.push(self.guard(GuardNoException, vec![]));
        }
        self.try_lines(lines);
    }

    /// A virtual reference to a box (PyPy's way of passing a frame that
    /// should stay virtual), perhaps passed on, then finished with the
    /// box or with null.
    fn virtual_ref(&mut self) {
        use Opcode::*;
        let Some(frame) = self.object(Kind::Box) else {
            return;
        };
        let name = self.new_name('p');
        let index = Operand::Const(self.rng.random_range(0..8));
        let line = Line::new(Some(name.clone()), VirtualRef, vec![frame.clone(), index]);
        if !self.try_lines(vec![line]) {
            return;
        }
        let vref = Operand::Value(name);
        match self.rng.random_range(0..8) {
            0 => _ = self.try_lines(vec![Line::new(None, EscapeN, vec![vref.clone()])]),
            1 | 2 => self.ref_guard(),
            _ => {}
        }
        if self.chance(80) {
            let target = match self.chance(70) {
                true => frame,
                false => Operand::Null,
            };
            self.try_lines(vec![Line::new(None, VirtualRefFinish, vec![vref, target])]);
        }
    }

    fn ref_guard(&mut self) {
        use Opcode::*;
        let Some((p, kind)) = self.some(|k| k.is_object() || k == Kind::Null) else {
            return;
        };
        let class = match kind {
            Kind::Box => Some("box_vtable"),
            Kind::Pair => Some("pair_vtable"),
            Kind::Vref => Some("vref_vtable"),
            _ => None,
        };
        let line = match (kind, class) {
            (Kind::Null, _) => self.guard(GuardIsnull, vec![p]),
            (_, Some(class)) if self.chance(70) => {
                let opcode = self.pick(&[GuardClass, GuardNonnullClass]).unwrap();
                self.guard(opcode, vec![p, Operand::Class(class.into())])
            }
            _ => self.guard(GuardNonnull, vec![p]),
        };
        self.try_lines(vec![line]);
    }

    fn compare_refs(&mut self) {
        use Opcode::*;
        let refs = |k: Kind| k.is_object() || k == Kind::Null;
        let (Some((a, _)), Some((b, _))) = (self.some(refs), self.some(refs)) else {
            return;
        };
        let opcode = self.pick(&[PtrEq, PtrNe, InstancePtrEq]).unwrap();
        let name = self.new_name('i');
        let compare = Line::new(Some(name.clone()), opcode, vec![a, b]);
        if self.try_lines(vec![compare]) {
            if let Some(guard) = self.guard_on(&name) {
                self.try_lines(vec![guard]);
            }
        }
    }

    /// Float arithmetic, conversions and comparisons (guarded).
    fn float_step(&mut self) {
        use Opcode::*;
        let (opcode, args) = match self.rng.random_range(0..8) {
            0 => (CastIntToFloat, vec![self.int()]),
            1 => (
                self.pick(&[FloatNeg, FloatAbs]).unwrap(),
                vec![self.float()],
            ),
            2 | 3 => {
                let opcode =
                    (self.pick(&[FloatLt, FloatLe, FloatEq, FloatNe, FloatGt, FloatGe])).unwrap();
                (opcode, vec![self.float(), self.float()])
            }
            _ => {
                let opcode =
                    (self.pick(&[FloatAdd, FloatSub, FloatMul, FloatMul, FloatTruediv])).unwrap();
                (opcode, vec![self.float(), self.float()])
            }
        };
        let compares = opcode.info().result == traceopt_ir::Type::Int;
        let name = self.new_name(if compares { 'i' } else { 'f' });
        let line = Line::new(Some(name.clone()), opcode, args);
        if self.try_lines(vec![line]) && compares {
            if let Some(guard) = self.guard_on(&name) {
                self.try_lines(vec![guard]);
            }
        }
    }

    /// Strings: made, written, read, measured, copied, and given to the
    /// string helpers.
    fn text_step(&mut self) {
        use Opcode::*;
        let text = self.some(|k| matches!(k, Kind::Text { .. }));
        let Some((s, Kind::Text { unicode, len })) = text.filter(|_| !self.chance(30)) else {
            self.build_text();
            return;
        };
        let [set, get, length, _] = text_ops(unicode);
        let index = |me: &mut Self| Operand::Const(me.rng.random_range(0..len.max(1) as i64));
        let line = match self.rng.random_range(0..7) {
            0 | 1 => {
                let char = match self.chance(80) {
                    true => Operand::Const(self.rng.random_range(97..123)),
                    false => self.int(),
                };
                Line::new(None, set, vec![s, index(self), char])
            }
            2 => {
                let i = index(self);
                Line::new(Some(self.new_name('i')), get, vec![s, i])
            }
            3 => Line::new(Some(self.new_name('i')), length, vec![s]),
            4 => match self.copy_into_another(unicode, s, len, 0) {
                Some(line) => line,
                None => return,
            },
            _ if unicode => return,
            5 => {
                let (start, stop) = (
                    self.rng.random_range(0..=len),
                    self.rng.random_range(0..=len),
                );
                let (start, stop) = (start.min(stop) as i64, start.max(stop) as i64);
                let args = vec![
                    Operand::Const(1),
                    s,
                    Operand::Const(start),
                    Operand::Const(stop),
                ];
                let call = Line::new(Some(self.new_name('p')), CallR, args);
                Self::with_descr(call, "strslicedescr")
            }
            _ => {
                let bytes = |k: Kind| matches!(k, Kind::Text { unicode: false, .. });
                let Some((other, _)) = self.some(bytes) else {
                    return;
                };
                let (opcode, descr, letter) = match self.chance(50) {
                    true => (CallR, "strconcatdescr", 'p'),
                    false => (CallI, "strequaldescr", 'i'),
                };
                let name = self.new_name(letter);
                let call = Line::new(
                    Some(name.clone()),
                    opcode,
                    vec![Operand::Const(1), s, other],
                );
                if self.try_lines(vec![Self::with_descr(call, descr)]) && opcode == CallI {
                    if let Some(guard) = self.guard_on(&name) {
                        self.try_lines(vec![guard]);
                    }
                }
                return;
            }
        };
        self.try_lines(vec![line]);
    }

    /// A string built as RPython builds one: allocated, every character
    /// written, and often copied at once into a part of another string
    /// of its kind (the copy an optimizer turns into character writes).
    fn build_text(&mut self) {
        use Opcode::*;
        let unicode = self.chance(30);
        let [set, ..] = text_ops(unicode);
        let name = self.new_name('p');
        let len = self.rng.random_range(0..5);
        let opcode = if unicode { Newunicode } else { Newstr };
        let made = Operand::Value(name.clone());
        let mut lines = vec![Line::new(Some(name), opcode, vec![Operand::Const(len)])];
        for i in 0..len {
            let char = Operand::Const(self.rng.random_range(97..123));
            lines.push(Line::new(
                None,
                set,
                vec![made.clone(), Operand::Const(i), char],
            ));
        }
        if len > 0 && self.chance(60) {
            lines.extend(self.copy_into_another(unicode, made, len as usize, 1));
        }
        self.try_lines(lines);
    }

    /// A copy of at least `least` characters of string `from` (of `len`)
    /// into a string of its kind with room for them (itself perhaps), at
    /// a random place; `None` where there is none.
    fn copy_into_another(
        &mut self,
        unicode: bool,
        from: Operand,
        len: usize,
        least: usize,
    ) -> Option<Line> {
        let fits = |k: Kind| matches!(k, Kind::Text { unicode: u, len: room } if u == unicode && room >= least);
        let Some((to, Kind::Text { len: room, .. })) = self.some(fits) else {
            return None;
        };
        let n = self.rng.random_range(least..=len.min(room).max(least));
        let start = self.rng.random_range(0..=len - n) as i64;
        let at = self.rng.random_range(0..=room - n) as i64;
        let places = [start, at, n as i64].map(Operand::Const);
        let copy = text_ops(unicode)[3];
        Some(Line::new(
            None,
            copy,
            [vec![from, to], places.to_vec()].concat(),
        ))
    }

    fn int_step(&mut self) {
        use Opcode::*;
        let (a, b) = (self.int(), self.int());
        let opcode = self.pick(&[IntAdd, IntSub, IntLt, IntEq, IntGt]).unwrap();
        let name = self.new_name('i');
        let line = Line::new(Some(name.clone()), opcode, vec![a, b]);
        if self.try_lines(vec![line]) && matches!(opcode, IntLt | IntEq | IntGt) {
            if let Some(guard) = self.guard_on(&name) {
                self.try_lines(vec![guard]);
            }
        }
    }
}

/// The ops that write, read, measure and copy a byte string, or a
/// unicode one.
fn text_ops(unicode: bool) -> [Opcode; 4] {
    use Opcode::*;
    match unicode {
        false => [Strsetitem, Strgetitem, Strlen, Copystrcontent],
        true => [
            Unicodesetitem,
            Unicodegetitem,
            Unicodelen,
            Copyunicodecontent,
        ],
    }
}

/// Runs a sketch on its example: every value by name and kind, or `None`
/// if the run does not reach the end.
fn example_run(sketch: &Sketch) -> Option<Vec<(String, Kind)>> {
    let trace = sketch.trace().ok()?;
    let run = run_on(&trace, &sketch.heap, &sketch.example()).ok()?;
    if !matches!(run.outcome, Outcome::Finished { .. }) {
        return None;
    }
    let box_class = stable_address("box_vtable");
    let pair_class = stable_address("pair_vtable");
    let kind = |v: Val| -> Option<Kind> {
        Some(match v {
            Val::Int(i) => Kind::Int(i),
            Val::Ref(None) => Kind::Null,
            Val::Float(_) => Kind::Float,
            Val::Ref(Some(id)) => match run.heap.get(id)? {
                traceopt_interp::HeapObject::Object { class, .. } if *class == box_class => {
                    Kind::Box
                }
                traceopt_interp::HeapObject::Object { class, .. } if *class == pair_class => {
                    Kind::Pair
                }
                traceopt_interp::HeapObject::Object { .. } => Kind::Vref,
                traceopt_interp::HeapObject::Array { items, .. } => Kind::Array(items.len()),
                traceopt_interp::HeapObject::Str(s) => Kind::Text {
                    unicode: false,
                    len: s.len(),
                },
                traceopt_interp::HeapObject::Unicode(s) => Kind::Text {
                    unicode: true,
                    len: s.len(),
                },
            },
        })
    };
    let mut values = Vec::new();
    for (i, value) in run.values.iter().enumerate() {
        let name = trace.name(ValueId(i as u32));
        if let Some(k) = value.and_then(kind) {
            values.push((name.to_string(), k));
        }
    }
    Some(values)
}

/// The example heap: one to three objects, boxes linked to each other or
/// not, a pair, an int array, a string.
fn example_heap(rng: &mut Entropy) -> Vec<ExampleObject> {
    let count = rng.random_range(1..4);
    let mut heap = Vec::new();
    for _ in 0..count {
        heap.push(match rng.random_range(0..8) {
            0..=3 => ExampleObject::Instance {
                class: "box_vtable".into(),
                fields: vec![
                    (
                        "headdescr".into(),
                        ExampleValue::Int(rng.random_range(-2..10)),
                    ),
                    (
                        "taildescr".into(),
                        ExampleValue::Int(rng.random_range(-2..10)),
                    ),
                    (
                        "linkdescr".into(),
                        ExampleValue::Ref(rng.random_range(0..count + 1usize).checked_sub(1)),
                    ),
                    (
                        "ratiodescr".into(),
                        ExampleValue::Float(FLOATS[rng.random_range(0..FLOATS.len())].to_bits()),
                    ),
                    (
                        "flagdescr".into(),
                        ExampleValue::Int(rng.random_range(-128..128)),
                    ),
                    (
                        "codedescr".into(),
                        ExampleValue::Int(rng.random_range(0..65536)),
                    ),
                    (
                        "identdescr".into(),
                        ExampleValue::Int(rng.random_range(-2..10)),
                    ),
                    (
                        "versiondescr".into(),
                        ExampleValue::Int(rng.random_range(0..3)),
                    ),
                ],
            },
            4 => ExampleObject::Instance {
                class: "pair_vtable".into(),
                fields: vec![(
                    "leftdescr".into(),
                    ExampleValue::Int(rng.random_range(0..5)),
                )],
            },
            5 | 7 => ExampleObject::Array((0..rng.random_range(1..4)).map(|i| i * 3).collect()),
            _ => {
                let unicode = rng.random_range(0..3) == 0;
                let top = if unicode { 0x3b0 } else { 97 };
                let chars = (0..rng.random_range(0..5))
                    .map(|_| rng.random_range(top..top + 4))
                    .collect();
                ExampleObject::Text { unicode, chars }
            }
        });
    }
    // A link only to a box.
    let boxes: Vec<bool> = heap
        .iter()
        .map(|o| matches!(o, ExampleObject::Instance { class, .. } if class == "box_vtable"))
        .collect();
    for object in &mut heap {
        if let ExampleObject::Instance { fields, .. } = object {
            for (_, value) in fields.iter_mut() {
                if let ExampleValue::Ref(Some(i)) = *value {
                    if !boxes[i] {
                        *value = ExampleValue::Ref(None);
                    }
                }
            }
        }
    }
    heap
}

/// Generates one heap trace of about `length` ops from `seed`.
pub fn generate_heap(rng: Entropy, length: usize) -> Sketch {
    generate_heap_with(rng, length, true, crate::Config::default().labels)
}

/// `generate_heap`, with array clears (`zero_array`) or without.
pub fn generate_heap_with(mut rng: Entropy, length: usize, clears: bool, labels: u32) -> Sketch {
    let heap = example_heap(&mut rng);
    let mut inputs = Vec::new();
    let refs = rng.random_range(1..4);
    let mut used: Vec<i64> = Vec::new();
    for k in 0..refs {
        let object = match used.last() {
            Some(&o) if rng.random_range(0..3) == 0 => o,
            _ => rng.random_range(0..heap.len() as i64),
        };
        used.push(object);
        inputs.push((format!("p{k}"), object));
    }
    for k in 0..rng.random_range(1..3) {
        inputs.push((format!("i{k}"), rng.random_range(-5..30)));
    }
    let mut g = HeapGen {
        rng,
        sketch: Sketch {
            inputs,
            heap,
            lines: Vec::new(),
            end: (Opcode::Finish, vec![]),
        },
        values: Vec::new(),
        made: 0,
        clears,
    };
    g.values = example_run(&g.sketch).unwrap_or_default();
    let mut attempts = 0;
    while g.sketch.lines.len() < length && attempts < length * 10 {
        attempts += 1;
        g.step();
    }
    // The end hands out a value or two (objects the trace kept virtual
    // are then allocated): `finish` takes one, an escape before it more.
    let mut out = Vec::new();
    for _ in 0..g.rng.random_range(0..4) {
        if let Some((v, _)) = g.some(|k| k != Kind::Null) {
            out.push(v);
        }
    }
    let end: Vec<Operand> = out.pop().into_iter().collect();
    if !out.is_empty() {
        g.sketch.lines.push(Line::new(None, Opcode::EscapeN, out));
    }
    g.sketch.end = (Opcode::Finish, end);
    // Now and then a guard that must fail: the trace never ends.
    if g.chance(3) {
        g.sketch
            .contradict_last_guard(&["box_vtable", "pair_vtable"]);
    }
    // A third of the traces are loops: the jump passes on a value of
    // each input's kind, often one the trace made (an object it may
    // keep virtual, for peeling to carry along the loop).
    if g.chance(33) {
        let inputs: Vec<String> = g.sketch.inputs.iter().map(|(n, _)| n.clone()).collect();
        let mut args = Vec::new();
        for name in inputs {
            let kind = (g.values.iter()).find(|(n, _)| *n == name).map(|&(_, k)| k);
            let alike = |k: Kind| match (kind, k) {
                (Some(Kind::Int(_)), Kind::Int(_)) => true,
                (Some(a), b) => a == b,
                (None, _) => false,
            };
            args.push(match g.some(alike) {
                Some((v, _)) if g.chance(70) => v,
                _ => Operand::Value(name),
            });
        }
        g.sketch.end = (Opcode::Jump, args);
    }
    // Now and then a label inside (drawn last, so that the rest of a
    // seed's trace is as before): a loop as a peeled one is, whose label
    // takes objects the trace made, virtual or not.
    if g.chance(labels) {
        let at = g.rng.random_range(0..=g.sketch.lines.len());
        let kinds = &g.values;
        let kind = |name: &str| (kinds.iter()).find(|(n, _)| n == name).map(|&(_, k)| k);
        let alike = |a: &str, b: &str| match (kind(a), kind(b)) {
            (Some(Kind::Int(_)), Some(Kind::Int(_))) => true,
            (Some(x), Some(y)) => x == y,
            _ => false,
        };
        g.sketch.insert_label(at, alike);
    }
    g.sketch
}
