//! Descriptors: what a field, array, call, allocation or guard refers to.
//!
//! One type for both sources of descrs. A real `PYPYLOG` prints a descr as
//! text (`<FieldS W_IntObject.inst_intval 8 pure>`, `<Calli 8 ii EF=0
//! OS=12>`, `<ArrayX 24>`, `TargetToken(1407…)`) that says only part of what
//! the descr means; PyPy's tests name descrs (`descr=valuedescr`) whose full
//! meaning a namespace file gives (`namespace.rs`). Both become the same
//! structs below; what the source does not say is marked unknown (`None`),
//! and every "unknown" reads as the cautious answer: a call of unknown
//! effects reads and writes everything, a field not known to be pure is
//! not pure, an array not known to have a length may not have one.
//!
//! The descr's text is kept exactly, for printing. Text of a known shape
//! that breaks that shape is an error; text of an unknown shape is kept as
//! `Other`. Every letter PyPy's backend prints is read: cell kinds `S U P F
//! X V` (`X` an array of structs, `V` void), call results `i r f v S L`
//! (`S` a single float passed as an int, `L` a long long passed as a
//! float), argument classes `i r f L S`, effect levels `EF=0..7`, and any
//! oopspec index `OS=N`.

use crate::opcode::Type;

#[derive(Clone, PartialEq, Debug)]
pub struct Descr {
    pub text: Box<str>,
    pub kind: DescrKind,
}

/// How a memory cell is read: PyPy's `S` signed, `U` unsigned, `P` GC
/// pointer, `F` float, `X` an inlined struct (array items), `V` void.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum CellKind {
    Signed,
    Unsigned,
    Pointer,
    Float,
    Struct,
    Void,
}

impl CellKind {
    pub fn from_letter(c: char) -> Option<CellKind> {
        Some(match c {
            'S' => CellKind::Signed,
            'U' => CellKind::Unsigned,
            'P' => CellKind::Pointer,
            'F' => CellKind::Float,
            'X' => CellKind::Struct,
            'V' => CellKind::Void,
            _ => return None,
        })
    }

    pub fn letter(self) -> char {
        match self {
            CellKind::Signed => 'S',
            CellKind::Unsigned => 'U',
            CellKind::Pointer => 'P',
            CellKind::Float => 'F',
            CellKind::Struct => 'X',
            CellKind::Void => 'V',
        }
    }

    /// The type of the value such a cell holds; `None` for a struct (read
    /// through interior field descrs) or void.
    pub fn value_type(self) -> Option<Type> {
        match self {
            CellKind::Signed | CellKind::Unsigned => Some(Type::Int),
            CellKind::Pointer => Some(Type::Ref),
            CellKind::Float => Some(Type::Float),
            CellKind::Struct | CellKind::Void => None,
        }
    }
}

/// A struct field (`<FieldS NODE.value 8>`, or a namespace `field` line).
#[derive(Clone, PartialEq, Debug)]
pub struct FieldDescr {
    pub cell: CellKind,
    /// `STRUCT.NAME`.
    pub name: Box<str>,
    pub offset: i64,
    /// Bytes; unknown in a `PYPYLOG` (which does not print it).
    pub size: Option<u32>,
    /// Never changes once the object is built (PyPy's `is_always_pure`).
    pub pure: bool,
    /// May change, but only through code that invalidates the loops that
    /// read it (`quasiimmut_field` + `guard_not_invalidated`).
    pub quasi_immutable: bool,
    /// Position among the owner's fields (the order a virtual writes them).
    pub index: Option<u32>,
    /// The size descr of the struct that holds the field, by name.
    pub owner: Option<Box<str>>,
    /// The struct a pointer field points to.
    pub points_to: Option<Box<str>>,
}

/// An array (`<ArrayS 8>`, or a namespace `array` line).
#[derive(Clone, PartialEq, Debug)]
pub struct ArrayDescr {
    pub cell: CellKind,
    pub item_size: i64,
    /// A GC array (`true`) or raw memory (`false`).
    pub gc: Option<bool>,
    /// Whether the array stores its length (raw arrays do not).
    pub has_length: Option<bool>,
    /// Items never change once written at allocation.
    pub pure: bool,
    /// Items are single floats (passed as ints).
    pub single_float: bool,
    pub points_to: Option<Box<str>>,
    /// For an array of structs: the struct and its interior field descrs.
    pub item_struct: Option<Box<str>>,
    pub interior: Option<Vec<Box<str>>>,
}

/// A field of the structs inside an array (`<InteriorFieldDescr <FieldF
/// complex.real 0>>`).
#[derive(Clone, PartialEq, Debug)]
pub struct InteriorDescr {
    /// The array descr, by name.
    pub array: Option<Box<str>>,
    pub field: FieldDescr,
}

/// What `new` or `new_with_vtable` allocates (`<SizeDescr 48>`).
#[derive(Clone, PartialEq, Debug)]
pub struct SizeDescr {
    pub size: i64,
    pub struct_name: Option<Box<str>>,
    /// Whether the struct starts with a class pointer (an instance).
    pub is_object: Option<bool>,
    /// The class `new_with_vtable` gives the object, by name.
    pub vtable: Option<Box<str>>,
    /// Every field is immutable.
    pub immutable: bool,
    /// The field descrs in order (parents first), by name.
    pub fields: Option<Vec<Box<str>>>,
}

/// PyPy's `EffectInfo.extraeffect`: what a call may do beyond its result;
/// the discriminant is PyPy's level (`EF=N`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u32)]
pub enum ExtraEffect {
    ElidableCannotRaise = 0,
    LoopInvariant = 1,
    CannotRaise = 2,
    ElidableOrMemoryError = 3,
    ElidableCanRaise = 4,
    CanRaise = 5,
    ForcesVirtualOrVirtualizable = 6,
    RandomEffects = 7,
}

impl ExtraEffect {
    const ALL: [ExtraEffect; 8] = [
        ExtraEffect::ElidableCannotRaise,
        ExtraEffect::LoopInvariant,
        ExtraEffect::CannotRaise,
        ExtraEffect::ElidableOrMemoryError,
        ExtraEffect::ElidableCanRaise,
        ExtraEffect::CanRaise,
        ExtraEffect::ForcesVirtualOrVirtualizable,
        ExtraEffect::RandomEffects,
    ];

    /// The effect of an `EF=N` level (0 to 7).
    pub fn from_level(level: u32) -> Option<ExtraEffect> {
        Self::ALL.get(level as usize).copied()
    }

    pub fn level(self) -> u32 {
        self as u32
    }

    /// PyPy's name for it, lower case, as the namespace file writes it.
    pub fn name(self) -> &'static str {
        match self {
            ExtraEffect::ElidableCannotRaise => "elidable_cannot_raise",
            ExtraEffect::LoopInvariant => "loopinvariant",
            ExtraEffect::CannotRaise => "cannot_raise",
            ExtraEffect::ElidableOrMemoryError => "elidable_or_memoryerror",
            ExtraEffect::ElidableCanRaise => "elidable_can_raise",
            ExtraEffect::CanRaise => "can_raise",
            ExtraEffect::ForcesVirtualOrVirtualizable => "forces_virtual_or_virtualizable",
            ExtraEffect::RandomEffects => "random_effects",
        }
    }

    /// The result depends on the arguments only (and the heap it reads).
    pub fn is_elidable(self) -> bool {
        matches!(
            self,
            ExtraEffect::ElidableCannotRaise
                | ExtraEffect::ElidableOrMemoryError
                | ExtraEffect::ElidableCanRaise
        )
    }

    /// Whether the call may raise (PyPy's `check_can_raise`: the levels
    /// above `cannot_raise`; a MemoryError counts).
    pub fn can_raise(self) -> bool {
        self.level() > ExtraEffect::CannotRaise.level()
    }

    /// PyPy ignores what elidable and loop-invariant calls declare they
    /// write: such calls write nothing the trace can see.
    pub fn ignores_writes(self) -> bool {
        self.is_elidable() || self == ExtraEffect::LoopInvariant
    }
}

/// The part of the heap a call reads or writes.
#[derive(Clone, PartialEq, Debug)]
pub enum HeapSet {
    /// Anything (PyPy's most general effect info, or not known).
    All,
    /// Only these fields, arrays and interior fields (by descr name).
    Listed {
        fields: Vec<Box<str>>,
        arrays: Vec<Box<str>>,
        interiors: Vec<Box<str>>,
    },
}

impl HeapSet {
    pub fn none() -> HeapSet {
        HeapSet::Listed {
            fields: Vec::new(),
            arrays: Vec::new(),
            interiors: Vec::new(),
        }
    }

    pub fn is_empty(&self) -> bool {
        matches!(self, HeapSet::Listed { fields, arrays, interiors }
            if fields.is_empty() && arrays.is_empty() && interiors.is_empty())
    }

    /// Whether the set may touch the descr of this name.
    pub fn may_touch(&self, descr_name: &str) -> bool {
        match self {
            HeapSet::All => true,
            HeapSet::Listed {
                fields,
                arrays,
                interiors,
            } => [fields, arrays, interiors]
                .iter()
                .any(|names| names.iter().any(|n| &**n == descr_name)),
        }
    }
}

/// A call (`<Calli 8 ii EF=0 OS=12>`, or a namespace `call` line).
#[derive(Clone, PartialEq, Debug)]
pub struct CallDescr {
    /// `i r f v S L`.
    pub result: char,
    pub result_size: i64,
    /// One letter per argument of the called function: `i r f L S`.
    pub arg_kinds: Box<str>,
    /// `None`: PyPy printed no effect info.
    pub effect: Option<ExtraEffect>,
    /// PyPy's oopspec index (`OS=N`), naming a known helper.
    pub oopspec: Option<u32>,
    pub reads: HeapSet,
    pub writes: HeapSet,
    /// May invalidate quasi-immutable fields; `None` if not known.
    pub can_invalidate: Option<bool>,
}

impl CallDescr {
    /// Whether the call may raise: unless its effect info says it cannot
    /// (PyPy's `check_can_raise`; no effect info, no such promise).
    pub fn can_raise(&self) -> bool {
        self.effect.map_or(true, ExtraEffect::can_raise)
    }

    /// The type of the call's result: `S` is an int, `L` a float.
    pub fn result_type(&self) -> Type {
        match self.result {
            'i' | 'S' => Type::Int,
            'r' => Type::Ref,
            'f' | 'L' => Type::Float,
            _ => Type::Void,
        }
    }
}

/// A `quasiimmut_field`'s descr: which object's field it watches.
#[derive(Clone, PartialEq, Debug)]
pub struct QuasiImmutDescr {
    /// PyPy's address of the descr object, from a `PYPYLOG`.
    pub address: Option<u64>,
    /// The constant object (a namespace `ptr` name) and field descr.
    pub object: Option<Box<str>>,
    pub field: Option<Box<str>>,
    pub mutate_field: Option<Box<str>>,
}

#[derive(Clone, PartialEq, Debug)]
pub enum DescrKind {
    Field(FieldDescr),
    Array(ArrayDescr),
    InteriorField(InteriorDescr),
    Call(CallDescr),
    Size(SizeDescr),
    QuasiImmut(QuasiImmutDescr),
    /// `<Guard0x7ffff4036e00>`
    Guard {
        address: u64,
    },
    /// `<Loop-1>` (the loop being closed) or `<Loop3>` (an existing loop);
    /// a namespace `looptoken` has no number.
    Loop {
        number: Option<i64>,
    },
    /// `TargetToken(140737287342624)`
    TargetToken {
        address: u64,
    },
    /// `<Class object at 0x…>`: a descr PyPy prints by its Python repr.
    Object {
        class: Box<str>,
        address: u64,
    },
    /// A bare name from a test (`valuedescr`) with no namespace to say
    /// what it means.
    Named,
    /// Anything else, kept as text.
    Other,
}

impl Descr {
    /// The name of the class of the objects `new_with_vtable` makes with
    /// this size descr: its vtable where a namespace gives it (so that it
    /// is the class `ConstClass(vtable)` names), else the descr's text.
    pub fn class_name(&self) -> &str {
        match &self.kind {
            DescrKind::Size(size) if size.vtable.is_some() => size.vtable.as_deref().unwrap(),
            _ => &self.text,
        }
    }

    /// Whether `new_with_vtable` of this descr makes objects of a class it
    /// names (a namespace's size descr with a vtable); a log's
    /// `<SizeDescr 16>` names none, and may make any class of that size.
    pub fn names_class(&self) -> bool {
        matches!(&self.kind, DescrKind::Size(size) if size.vtable.is_some())
    }

    /// A descr from its text; `Err` says what is wrong with a known shape.
    pub fn parse(text: &str) -> Result<Descr, String> {
        let kind = parse_kind(text)?;
        Ok(Descr {
            text: text.into(),
            kind,
        })
    }

    /// The type of the value read or written through this descr, if known.
    pub fn value_type(&self) -> Option<Type> {
        match &self.kind {
            DescrKind::Field(f) => f.cell.value_type(),
            DescrKind::InteriorField(i) => i.field.cell.value_type(),
            DescrKind::Array(a) => a.cell.value_type(),
            _ => None,
        }
    }

    /// For an integer field, interior field or array item narrower than a
    /// word: its size in bytes and whether it is signed (a char field:
    /// 1 byte, unsigned). It holds only what fits.
    pub fn narrow_int(&self) -> Option<(u32, bool)> {
        let (cell, size) = match &self.kind {
            DescrKind::Field(f) => (f.cell, f.size.map(i64::from)),
            DescrKind::InteriorField(i) => (i.field.cell, i.field.size.map(i64::from)),
            DescrKind::Array(a) => (a.cell, Some(a.item_size)),
            _ => return None,
        };
        let signed = match cell {
            CellKind::Signed => true,
            CellKind::Unsigned => false,
            _ => return None,
        };
        match size {
            Some(bytes @ 1..=7) => Some((bytes as u32, signed)),
            _ => None,
        }
    }

    pub fn as_call(&self) -> Option<&CallDescr> {
        match &self.kind {
            DescrKind::Call(call) => Some(call),
            _ => None,
        }
    }

    /// Whether a call of `descr` may raise: a call without a call descr
    /// may, as may one whose effect info does not rule it out.
    pub fn call_may_raise(descr: Option<&Descr>) -> bool {
        descr
            .and_then(Descr::as_call)
            .map_or(true, CallDescr::can_raise)
    }
}

fn parse_kind(text: &str) -> Result<DescrKind, String> {
    if let Some(inner) = text.strip_prefix('<') {
        let inner = inner
            .strip_suffix('>')
            .ok_or("a descr that opens with '<' must close with '>'")?;
        return parse_bracketed(inner);
    }
    if let Some(rest) = text.strip_prefix("TargetToken(") {
        let digits = rest.strip_suffix(')').ok_or("TargetToken( without ')'")?;
        let address = digits
            .parse()
            .map_err(|_| format!("TargetToken address '{digits}' is not a number"))?;
        return Ok(DescrKind::TargetToken { address });
    }
    // PyPy's tests sometimes give a label or jump a bare number as its
    // token (`label(i1, descr=123)`).
    if let Ok(address) = text.parse::<u64>() {
        return Ok(DescrKind::TargetToken { address });
    }
    if !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
    {
        return Ok(DescrKind::Named);
    }
    Err(format!(
        "'{}' is not a descr: expected <...>, TargetToken(N) or a name",
        crate::error::cut(text)
    ))
}

pub(crate) fn number(word: Option<&str>, what: &str) -> Result<i64, String> {
    let word = word.ok_or_else(|| format!("missing {what}"))?;
    word.parse()
        .map_err(|_| format!("{what} '{}' is not a number", crate::error::cut(word)))
}

fn hex_address(word: &str) -> Result<u64, String> {
    let digits = word.strip_prefix("0x").unwrap_or(word);
    u64::from_str_radix(digits, 16)
        .map_err(|_| format!("'{}' is not a hex address", crate::error::cut(word)))
}

/// The one letter after `prefix` in `head` (`FieldS` gives `S`).
fn letter(head: &str, prefix: &str) -> Option<char> {
    let rest = head.strip_prefix(prefix)?;
    let mut chars = rest.chars();
    let c = chars.next()?;
    chars.next().is_none().then_some(c)
}

fn parse_bracketed(inner: &str) -> Result<DescrKind, String> {
    if let Some(rest) = inner.strip_prefix("InteriorFieldDescr ") {
        let DescrKind::Field(field) = parse_kind(rest.trim())? else {
            return Err("InteriorFieldDescr must hold a field descr".into());
        };
        return Ok(DescrKind::InteriorField(InteriorDescr {
            array: None,
            field,
        }));
    }
    if let Some(addr) = inner.strip_prefix("Guard") {
        return Ok(DescrKind::Guard {
            address: hex_address(addr)?,
        });
    }
    if let Some((class, addr)) = inner.split_once(" object at ") {
        let address = hex_address(addr)?;
        if class.rsplit('.').next() == Some("QuasiImmutDescr") {
            return Ok(DescrKind::QuasiImmut(QuasiImmutDescr {
                address: Some(address),
                object: None,
                field: None,
                mutate_field: None,
            }));
        }
        return Ok(DescrKind::Object {
            class: class.into(),
            address,
        });
    }
    let mut words = inner.split_whitespace();
    let head = words.next().unwrap_or("");
    if let Some(num) = head.strip_prefix("Loop") {
        return Ok(DescrKind::Loop {
            number: Some(number(Some(num), "loop number")?),
        });
    }
    let no_more = |mut words: std::str::SplitWhitespace, what: &str| match words.next() {
        None => Ok(()),
        Some(w) => Err(format!(
            "unexpected '{}' after the {what}",
            crate::error::cut(w)
        )),
    };
    if head == "SizeDescr" {
        let size = number(words.next(), "size")?;
        no_more(words, "size")?;
        return Ok(DescrKind::Size(SizeDescr {
            size,
            struct_name: None,
            is_object: None,
            vtable: None,
            immutable: false,
            fields: None,
        }));
    }
    if let Some(c) = letter(head, "Field") {
        let cell = CellKind::from_letter(c).ok_or(format!(
            "unknown field kind '{c}' (PyPy prints S U P F X V)"
        ))?;
        let name = words.next().ok_or("field descr without a name")?.into();
        let offset = number(words.next(), "field offset")?;
        let pure = match words.next() {
            None => false,
            Some("pure") => true,
            Some(w) => {
                return Err(format!(
                    "unexpected '{}' after the field offset",
                    crate::error::cut(w)
                ))
            }
        };
        no_more(words, "'pure' flag")?;
        return Ok(DescrKind::Field(FieldDescr {
            cell,
            name,
            offset,
            size: None,
            pure,
            quasi_immutable: false,
            index: None,
            owner: None,
            points_to: None,
        }));
    }
    if let Some(c) = letter(head, "Array") {
        let cell = CellKind::from_letter(c).ok_or(format!(
            "unknown array kind '{c}' (PyPy prints S U P F X V)"
        ))?;
        let item_size = number(words.next(), "item size")?;
        no_more(words, "item size")?;
        return Ok(DescrKind::Array(ArrayDescr {
            cell,
            item_size,
            gc: None,
            has_length: None,
            pure: false,
            single_float: false,
            points_to: None,
            item_struct: None,
            interior: None,
        }));
    }
    if let Some(result) = letter(head, "Call") {
        return parse_call(result, words).map(DescrKind::Call);
    }
    Ok(DescrKind::Other)
}

fn parse_call(result: char, mut words: std::str::SplitWhitespace) -> Result<CallDescr, String> {
    if !"irfvSL".contains(result) {
        return Err(format!(
            "unknown call result kind '{result}' (PyPy prints i r f v S L)"
        ));
    }
    let result_size = number(words.next(), "result size")?;
    let mut arg_kinds: Box<str> = "".into();
    let (mut effect, mut oopspec) = (None, None);
    for (i, word) in words.enumerate() {
        if let Some(n) = word.strip_prefix("EF=") {
            let level = number(Some(n), "effect level")?;
            effect = Some(
                u32::try_from(level)
                    .ok()
                    .and_then(ExtraEffect::from_level)
                    .ok_or(format!("effect level EF={level} is not one of 0 to 7"))?,
            );
        } else if let Some(n) = word.strip_prefix("OS=") {
            let index = number(Some(n), "oopspec index")?;
            oopspec = Some(
                u32::try_from(index)
                    .map_err(|_| format!("oopspec index OS={index} is out of range"))?,
            );
        } else if i == 0 && word.bytes().all(|b| b"irfLS".contains(&b)) {
            arg_kinds = word.into();
        } else {
            return Err(format!(
                "unexpected '{}' in a call descr (expected argument kinds i r f L S, EF=N or OS=N)",
                crate::error::cut(word)
            ));
        }
    }
    // The call that forces a virtualizable (`OS_JIT_FORCE_VIRTUALIZABLE`,
    // PyPy's `clear_vable_descr`) has one effect info, made in one place
    // (virtualizable.py): it cannot raise, reads and writes nothing the
    // trace sees, and invalidates nothing. (Forcing only stores into the
    // frame what the frame already stands for.) Otherwise what a PYPYLOG
    // does not say is the cautious answer: a call with no effect info, or
    // one that may write, reads and writes everything.
    let forces_virtualizable = oopspec == Some(crate::oopspec::JIT_FORCE_VIRTUALIZABLE)
        && effect == Some(ExtraEffect::CannotRaise);
    let (reads, writes, can_invalidate) = match effect {
        _ if forces_virtualizable => (HeapSet::none(), HeapSet::none(), Some(false)),
        Some(e) if e.ignores_writes() => (HeapSet::All, HeapSet::none(), None),
        _ => (HeapSet::All, HeapSet::All, None),
    };
    Ok(CallDescr {
        result,
        result_size,
        arg_kinds,
        effect,
        oopspec,
        reads,
        writes,
        can_invalidate,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(text: &str) -> DescrKind {
        Descr::parse(text).unwrap().kind
    }

    fn field(text: &str) -> FieldDescr {
        match kind(text) {
            DescrKind::Field(f) => f,
            other => panic!("{text}: {other:?}"),
        }
    }

    fn array(text: &str) -> ArrayDescr {
        match kind(text) {
            DescrKind::Array(a) => a,
            other => panic!("{text}: {other:?}"),
        }
    }

    fn call(text: &str) -> CallDescr {
        match kind(text) {
            DescrKind::Call(c) => c,
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn field_descrs_of_every_cell_kind() {
        let f = field("<FieldS pypy.objspace.std.intobject.W_IntObject.inst_intval 8 pure>");
        assert_eq!(
            (f.cell, &*f.name, f.offset, f.pure),
            (
                CellKind::Signed,
                "pypy.objspace.std.intobject.W_IntObject.inst_intval",
                8,
                true
            )
        );
        assert_eq!((f.index, f.owner, f.size), (None, None, None));
        for (letter, cell, ty) in [
            ('S', CellKind::Signed, Some(Type::Int)),
            ('U', CellKind::Unsigned, Some(Type::Int)),
            ('P', CellKind::Pointer, Some(Type::Ref)),
            ('F', CellKind::Float, Some(Type::Float)),
            ('X', CellKind::Struct, None),
            ('V', CellKind::Void, None),
        ] {
            let d = Descr::parse(&format!("<Field{letter} S.f 16>")).unwrap();
            assert!(matches!(&d.kind, DescrKind::Field(f) if f.cell == cell && !f.pure));
            assert_eq!(d.value_type(), ty, "{letter}");
            assert_eq!(cell.letter(), letter);
        }
    }

    #[test]
    fn array_descrs_of_every_cell_kind() {
        let a = array("<ArrayP 8>");
        assert_eq!((a.cell, a.item_size), (CellKind::Pointer, 8));
        assert_eq!((a.gc, a.has_length, a.pure), (None, None, false));
        // The dict-heavy log's entry arrays: arrays of structs.
        assert_eq!(array("<ArrayX 24>").cell, CellKind::Struct);
        assert_eq!(Descr::parse("<ArrayX 24>").unwrap().value_type(), None);
        for (letter, cell) in [
            ('S', CellKind::Signed),
            ('U', CellKind::Unsigned),
            ('F', CellKind::Float),
            ('V', CellKind::Void),
        ] {
            assert_eq!(array(&format!("<Array{letter} 1>")).cell, cell);
        }
    }

    #[test]
    fn interior_field_descrs() {
        let d = Descr::parse("<InteriorFieldDescr <FieldP odictentry.value 8>>").unwrap();
        assert_eq!(d.value_type(), Some(Type::Ref));
        let DescrKind::InteriorField(i) = d.kind else {
            panic!()
        };
        assert_eq!((&*i.field.name, i.field.offset), ("odictentry.value", 8));
        assert!(Descr::parse("<InteriorFieldDescr <ArrayS 8>>").is_err());
    }

    #[test]
    fn call_descrs_of_every_result_kind() {
        let c = call("<Calli 8 ii EF=0 OS=14>");
        assert_eq!((c.result, c.result_size, &*c.arg_kinds), ('i', 8, "ii"));
        assert_eq!(c.effect, Some(ExtraEffect::ElidableCannotRaise));
        assert_eq!(c.oopspec, Some(14));
        for (letter, ty) in [
            ('i', Type::Int),
            ('r', Type::Ref),
            ('f', Type::Float),
            ('v', Type::Void),
            ('S', Type::Int),
            ('L', Type::Float),
        ] {
            let c = call(&format!("<Call{letter} 8 irfLS EF=5>"));
            assert_eq!(c.result_type(), ty, "{letter}");
            assert_eq!(&*c.arg_kinds, "irfLS");
        }
        let void = call("<Callv 0 EF=2 OS=121>");
        assert_eq!((&*void.arg_kinds, void.result_size), ("", 0));
        // PyPy's one effect info of a virtualizable's force; another
        // effect level is not that call, and stays cautious.
        assert_eq!(
            (void.reads.is_empty(), void.writes.is_empty()),
            (true, true)
        );
        assert_eq!(void.can_invalidate, Some(false));
        let other = call("<Callv 0 EF=5 OS=121>");
        assert_eq!(
            (other.reads.clone(), other.writes.clone()),
            (HeapSet::All, HeapSet::All)
        );
        let bare = call("<Calli 8 i>");
        assert_eq!(bare.effect, None);
    }

    #[test]
    fn every_effect_level_reads_back() {
        for level in 0..8 {
            let c = call(&format!("<Callr 8 r EF={level}>"));
            let effect = c.effect.unwrap();
            assert_eq!(effect.level(), level);
            // Unknown effects are the cautious ones.
            assert_eq!(c.reads, HeapSet::All);
            assert_eq!(c.can_invalidate, None);
            let writes_nothing = matches!(level, 0 | 1 | 3 | 4);
            assert_eq!(c.writes.is_empty(), writes_nothing, "EF={level}");
            assert_eq!(c.writes == HeapSet::All, !writes_nothing, "EF={level}");
        }
        assert_eq!(call("<Calli 8 i>").writes, HeapSet::All);
        assert!(Descr::parse("<Calli 8 i EF=8>").is_err());
        assert!(Descr::parse("<Calli 8 i EF=-1>").is_err());
        assert!(Descr::parse("<Calli 8 i OS=-1>").is_err());
        assert_eq!(call("<Calli 8 i OS=4000000>").oopspec, Some(4000000));
    }

    #[test]
    fn size_descrs() {
        let DescrKind::Size(s) = kind("<SizeDescr 24>") else {
            panic!()
        };
        assert_eq!((s.size, s.vtable, s.is_object), (24, None, None));
    }

    #[test]
    fn tokens_and_objects() {
        assert_eq!(kind("<Loop-1>"), DescrKind::Loop { number: Some(-1) });
        assert_eq!(kind("<Loop12>"), DescrKind::Loop { number: Some(12) });
        assert_eq!(
            kind("<Guard0x7ffff4036e00>"),
            DescrKind::Guard {
                address: 0x7ffff4036e00
            }
        );
        assert_eq!(
            kind("TargetToken(140737287342624)"),
            DescrKind::TargetToken {
                address: 140737287342624
            }
        );
        assert!(matches!(
            kind("<QuasiImmutDescr object at 0x7ffff3f7c320>"),
            DescrKind::QuasiImmut(QuasiImmutDescr {
                address: Some(0x7ffff3f7c320),
                ..
            })
        ));
        assert!(matches!(
            kind("<rpython.jit.metainterp.compile.ResumeAtPositionDescr object at 0x7f01>"),
            DescrKind::Object {
                address: 0x7f01,
                ..
            }
        ));
        assert_eq!(kind("valuedescr"), DescrKind::Named);
        assert_eq!(kind("123"), DescrKind::TargetToken { address: 123 });
        assert_eq!(kind("<JitCellToken something>"), DescrKind::Other);
    }

    #[test]
    fn rejects_known_shapes_that_are_broken() {
        for bad in [
            "<FieldS name>",
            "<FieldS name eight>",
            "<FieldQ name 8>",
            "<FieldS name 8 pure extra>",
            "<ArrayP>",
            "<ArrayZ 8>",
            "<ArrayS 8 9>",
            "<Callq 8 i>",
            "<Calli 8 q>",
            "<Calli 8 i EF=x>",
            "<Guardxyz>",
            "<SizeDescr 16",
            "<SizeDescr 16 17>",
            "TargetToken(12",
            "no good",
        ] {
            assert!(Descr::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn errors_quote_a_short_prefix_of_long_words() {
        let long = "9".repeat(5000);
        let err = Descr::parse(&format!("<FieldS name {long}>")).unwrap_err();
        assert!(err.len() < 200, "{err}");
    }
}

/// How PyPy lays out a virtual reference (its `JitVirtualRef` struct):
/// the class `virtual_ref` gives the object it makes, the field holding
/// the frame's force token, and the field `virtual_ref_finish` fills with
/// the real object. A namespace or a trace may name them; else they are
/// the descrs PyPy prints on 64-bit machines.
#[derive(Clone, PartialEq, Debug)]
pub struct VrefLayout {
    pub class: Box<str>,
    pub token: Box<str>,
    pub forced: Box<str>,
}

impl VrefLayout {
    /// The part of a layout `d` names, if any: 0 the class (a size descr
    /// of the `JitVirtualRef` struct), 1 the token field, 2 the forced
    /// field.
    pub fn part(d: &Descr) -> Option<usize> {
        match &d.kind {
            DescrKind::Size(s) if s.struct_name.as_deref() == Some("JitVirtualRef") => Some(0),
            DescrKind::Field(f) => match f.name.strip_prefix("JitVirtualRef.") {
                Some("virtual_token") => Some(1),
                Some("forced") => Some(2),
                _ => None,
            },
            _ => None,
        }
    }

    /// The layout that the first of `descrs` to name each part gives.
    pub fn find<'a>(descrs: impl IntoIterator<Item = &'a Descr>) -> VrefLayout {
        let (mut class, mut token, mut forced) = (None, None, None);
        for d in descrs {
            match VrefLayout::part(d) {
                Some(0) => _ = class.get_or_insert_with(|| d.class_name().into()),
                Some(1) => _ = token.get_or_insert_with(|| d.text.clone()),
                Some(2) => _ = forced.get_or_insert_with(|| d.text.clone()),
                _ => {}
            }
        }
        let pypy = VrefLayout::default();
        VrefLayout {
            class: class.unwrap_or(pypy.class),
            token: token.unwrap_or(pypy.token),
            forced: forced.unwrap_or(pypy.forced),
        }
    }
}

impl Default for VrefLayout {
    /// As PyPy prints it on a 64-bit machine.
    fn default() -> VrefLayout {
        VrefLayout {
            class: "<SizeDescr 24>".into(),
            token: "<FieldP JitVirtualRef.virtual_token 8>".into(),
            forced: "<FieldP JitVirtualRef.forced 16>".into(),
        }
    }
}
