//! The namespace of PyPy's optimizer tests: what each descr and constant
//! name means.
//!
//! PyPy's tests write `descr=valuedescr`, `ConstClass(node_vtable)`,
//! `ConstPtr(myptr)`, `ConstInt(node_tid)`; the names are defined by the
//! test harness. A namespace file (`../shared/peer/heap/descrs.txt`) gives
//! each name its meaning, one line a name:
//!
//! ```text
//! NAME = KIND FACTS | PYPYLOG (N cases)
//! ```
//!
//! KIND is `field`, `size`, `array`, `interior`, `call`, `quasiimmut`,
//! `looptoken` (descrs) or `class`, `ptr`, `typeid`, `local` (constants);
//! FACTS are `key=value` words and flags, with `(...)` remarks ignored;
//! PYPYLOG is the text a real log prints for the name. Descr lines become
//! the same `Descr` structs a `PYPYLOG` text gives (`descr.rs`), with
//! nothing unknown. Every fact is read or refused: an unknown kind, key or
//! flag, a bad number, or a reference to a name of the wrong kind is an
//! error at its line.

use crate::descr::{
    ArrayDescr, CallDescr, CellKind, Descr, DescrKind, ExtraEffect, FieldDescr, HeapSet,
    InteriorDescr, QuasiImmutDescr, SizeDescr,
};
use crate::error::{cut, ParseError};
use crate::opcode::Type;
use std::collections::HashMap;

/// A class (vtable) constant: `ConstClass(NAME)`.
#[derive(Clone, PartialEq, Debug)]
pub struct ClassInfo {
    pub name: Option<Box<str>>,
    pub struct_name: Option<Box<str>>,
    /// The size descr of the instances, by name.
    pub size_descr: Option<Box<str>>,
    /// PyPy's subclass range (`guard_subclass`): ids `min..=max`.
    pub subclass_range: Option<(i64, i64)>,
}

/// A value stored in a constant object's field.
#[derive(Clone, PartialEq, Debug)]
pub enum FieldValue {
    Int(i64),
    /// Another constant object, by its `object=` identity.
    Object(Box<str>),
}

/// A constant object: `ConstPtr(NAME)`.
#[derive(Clone, PartialEq, Debug)]
pub struct PtrInfo {
    /// Its identity: names with the same object are the same object.
    pub object: Box<str>,
    /// The struct, for a struct object.
    pub struct_name: Option<Box<str>>,
    /// The item type and length, for an array (`GcArray(Signed)`).
    pub array: Option<(Box<str>, i64)>,
    /// Its class (`None` if the struct has none or its class is unset).
    pub class: Option<Box<str>>,
    /// Fields given a value, by field name (`next`, `value`); the others
    /// are zero.
    pub fields: Vec<(Box<str>, FieldValue)>,
}

/// What a constant name stands for.
#[derive(Clone, PartialEq, Debug)]
pub enum NamedConst {
    Class(ClassInfo),
    Ptr(PtrInfo),
    /// The GC type id of the size or array descr of this name.
    TypeId {
        of: Box<str>,
    },
    /// A constant a test defines itself, described in words.
    Local {
        text: Box<str>,
    },
}

/// All names of one namespace file.
#[derive(Clone, Debug, Default)]
pub struct Namespace {
    pub file: String,
    descrs: HashMap<Box<str>, Descr>,
    consts: HashMap<Box<str>, NamedConst>,
    /// The text a `PYPYLOG` prints for each name.
    pypylog: HashMap<Box<str>, Box<str>>,
    /// Line of each name, for errors.
    lines: HashMap<Box<str>, u32>,
}

impl Namespace {
    pub fn descr(&self, name: &str) -> Option<&Descr> {
        self.descrs.get(name)
    }

    pub fn constant(&self, name: &str) -> Option<&NamedConst> {
        self.consts.get(name)
    }

    /// The name of the constant that is the GC type id of a descr.
    pub fn type_id_of(&self, descr: &str) -> Option<&str> {
        let mut names = self.consts.iter().filter_map(|(name, c)| match c {
            NamedConst::TypeId { of } if &**of == descr => Some(&**name),
            _ => None,
        });
        names.next()
    }

    /// What a real log prints for this name.
    pub fn pypylog_text(&self, name: &str) -> Option<&str> {
        self.pypylog.get(name).map(|t| &**t)
    }

    /// Every descr, sorted by name.
    pub fn descrs(&self) -> Vec<&Descr> {
        let mut all: Vec<&Descr> = self.descrs.values().collect();
        all.sort_by(|a, b| a.text.cmp(&b.text));
        all
    }

    /// Reads a namespace file.
    pub fn parse(text: &str, file: &str) -> Result<Namespace, ParseError> {
        let mut ns = Namespace {
            file: file.into(),
            ..Namespace::default()
        };
        for (i, line) in text.lines().enumerate() {
            let line_no = i as u32 + 1;
            let body = line.trim();
            if body.is_empty() || body.starts_with('#') {
                continue;
            }
            let err = |col: usize, expected: &str, found: &str, hint: &str| ParseError {
                file: file.into(),
                line: line_no,
                col: col as u32 + 1,
                expected: expected.into(),
                found: crate::error::show_found(found),
                hint: (!hint.is_empty()).then(|| hint.into()),
            };
            let Some((name, rest)) = line.split_once(" = ") else {
                return Err(err(0, "'NAME = KIND FACTS | PYPYLOG'", body, ""));
            };
            let name = name.trim();
            if name.is_empty()
                || !name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
            {
                return Err(err(0, "a name of letters, digits, '_' and '.'", name, ""));
            }
            if let Some(first) = ns.lines.get(name) {
                return Err(err(
                    0,
                    "a name not defined before",
                    name,
                    &format!("'{name}' is already defined on line {first}"),
                ));
            }
            let (facts, pypylog) = match rest.rsplit_once(" | ") {
                Some((facts, pypylog)) => (facts, Some(strip_case_count(pypylog))),
                None => (rest, None),
            };
            let facts_col = line.len() - rest.len();
            let entry = Entry::read(facts).map_err(|why| {
                err(
                    facts_col,
                    "KIND FACTS (see the format at the top of the namespace file)",
                    facts,
                    &why,
                )
            })?;
            let name: Box<str> = name.into();
            match entry {
                Entry::Descr(kind) => {
                    ns.descrs.insert(
                        name.clone(),
                        Descr {
                            text: name.clone(),
                            kind,
                        },
                    );
                }
                Entry::Const(c) => {
                    ns.consts.insert(name.clone(), c);
                }
            }
            if let Some(p) = pypylog {
                ns.pypylog.insert(name.clone(), p.into());
            }
            ns.lines.insert(name, line_no);
        }
        ns.check_references()?;
        Ok(ns)
    }

    /// Every name a line refers to exists and is of the right kind.
    fn check_references(&self) -> Result<(), ParseError> {
        let mut names: Vec<&Box<str>> = self.lines.keys().collect();
        names.sort_by_key(|n| self.lines[*n]);
        for name in names {
            let problem = match (self.descrs.get(name), self.consts.get(name)) {
                (Some(d), _) => self.descr_problem(d),
                (_, Some(c)) => self.const_problem(c),
                _ => None,
            };
            if let Some(why) = problem {
                return Err(ParseError {
                    file: self.file.clone(),
                    line: self.lines[name],
                    col: 1,
                    expected: "references to names of the right kind".into(),
                    found: format!("'{name}'"),
                    hint: Some(why),
                });
            }
        }
        Ok(())
    }

    fn is_descr(&self, name: &str, want: fn(&DescrKind) -> bool) -> bool {
        self.descrs.get(name).is_some_and(|d| want(&d.kind))
    }

    fn descr_problem(&self, descr: &Descr) -> Option<String> {
        let is_size = |k: &DescrKind| matches!(k, DescrKind::Size(_));
        let is_field = |k: &DescrKind| matches!(k, DescrKind::Field(_));
        let is_array = |k: &DescrKind| matches!(k, DescrKind::Array(_));
        let is_interior = |k: &DescrKind| matches!(k, DescrKind::InteriorField(_));
        let mut wanted: Vec<(&str, KindTest, &str)> = Vec::new();
        match &descr.kind {
            DescrKind::Field(f) => {
                if let Some(owner) = f.owner.as_deref() {
                    wanted.push((owner, is_size, "owner= names a size descr"));
                }
            }
            DescrKind::Size(s) => {
                for f in s.fields.iter().flatten() {
                    // A field may be named by its descr or, where the
                    // namespace has no descr for it, as STRUCT.NAME.
                    if !f.contains('.') {
                        wanted.push((f, is_field, "fields= lists field descrs"));
                    }
                }
                if let Some(class) = s.vtable.as_deref() {
                    if !matches!(self.consts.get(class), Some(NamedConst::Class(_))) {
                        return Some(format!("vtable={class} names no class"));
                    }
                }
            }
            DescrKind::Array(a) => {
                for f in a.interior.iter().flatten() {
                    wanted.push((f, is_interior, "interior= lists interior descrs"));
                }
            }
            DescrKind::InteriorField(i) => {
                if let Some(array) = i.array.as_deref() {
                    wanted.push((array, is_array, "array= names an array descr"));
                }
            }
            DescrKind::Call(c) => {
                for set in [&c.reads, &c.writes] {
                    if let HeapSet::Listed {
                        fields,
                        arrays,
                        interiors,
                    } = set
                    {
                        wanted.extend(fields.iter().map(|f| (&**f, is_field as _, "fields[...]")));
                        wanted.extend(arrays.iter().map(|a| (&**a, is_array as _, "arrays[...]")));
                        wanted.extend(
                            interiors
                                .iter()
                                .map(|i| (&**i, is_interior as _, "interiors[...]")),
                        );
                    }
                }
            }
            DescrKind::QuasiImmut(q) => {
                if let Some(field) = q.field.as_deref() {
                    wanted.push((field, is_field, "field= names a field descr"));
                }
                if let Some(object) = q.object.as_deref() {
                    if !matches!(self.consts.get(object), Some(NamedConst::Ptr(_))) {
                        return Some(format!("object={object} names no constant object"));
                    }
                }
            }
            _ => {}
        }
        wanted
            .into_iter()
            .find(|(name, want, _)| !self.is_descr(name, *want))
            .map(|(name, _, rule)| format!("'{name}' is not defined as it should be: {rule}"))
    }

    fn const_problem(&self, c: &NamedConst) -> Option<String> {
        match c {
            NamedConst::Class(class) => class
                .size_descr
                .as_deref()
                .filter(|d| !self.is_descr(d, |k| matches!(k, DescrKind::Size(_))))
                .map(|d| format!("sizedescr={d} names no size descr")),
            NamedConst::Ptr(p) => p
                .class
                .as_deref()
                .filter(|c| !matches!(self.consts.get(*c), Some(NamedConst::Class(_))))
                .map(|c| format!("class={c} names no class")),
            NamedConst::TypeId { of } => (!self.descrs.contains_key(of))
                .then(|| format!("the type id of '{of}', which is not a descr")),
            NamedConst::Local { .. } => None,
        }
    }
}

/// Whether a descr is of the kind a reference needs.
type KindTest = fn(&DescrKind) -> bool;

/// `ConstPtr(ptrN) (47 cases)` without the count.
fn strip_case_count(text: &str) -> &str {
    let text = text.trim();
    match text.rsplit_once(" (") {
        Some((head, tail)) if tail.ends_with(" cases)") => head.trim(),
        _ => text,
    }
}

enum Entry {
    Descr(DescrKind),
    Const(NamedConst),
}

/// The facts of one line, consumed one by one; whatever is left is an error.
struct Facts<'a> {
    words: Vec<&'a str>,
}

impl<'a> Facts<'a> {
    /// Splits into words, leaving out `(...)` remarks (which may hold spaces).
    fn new(text: &'a str) -> Facts<'a> {
        let mut words = Vec::new();
        let mut depth = 0usize;
        for word in text.split_whitespace() {
            if depth > 0 || word.starts_with('(') {
                depth += word.matches('(').count();
                depth = depth.saturating_sub(word.matches(')').count());
                continue;
            }
            words.push(word);
        }
        Facts { words }
    }

    fn flag(&mut self, flag: &str) -> bool {
        let before = self.words.len();
        self.words.retain(|w| *w != flag);
        self.words.len() < before
    }

    fn value(&mut self, key: &str) -> Option<&'a str> {
        let at = self
            .words
            .iter()
            .position(|w| w.strip_prefix(key).is_some_and(|r| r.starts_with('=')))?;
        let word = self.words.remove(at);
        Some(&word[key.len() + 1..])
    }

    fn required(&mut self, key: &str) -> Result<&'a str, String> {
        self.value(key).ok_or_else(|| format!("missing {key}="))
    }

    fn number(&mut self, key: &str) -> Result<Option<i64>, String> {
        self.value(key)
            .map(|v| {
                v.parse()
                    .map_err(|_| format!("{key}={} is not a number", cut(v)))
            })
            .transpose()
    }

    /// The first word, which must not be a `key=value`.
    fn head(&mut self, what: &str) -> Result<&'a str, String> {
        match self.words.first() {
            Some(w) if !w.contains('=') => Ok(self.words.remove(0)),
            _ => Err(format!("missing {what}")),
        }
    }

    fn done(self) -> Result<(), String> {
        match self.words.first() {
            None => Ok(()),
            Some(w) => Err(format!("unknown fact '{}'", cut(w))),
        }
    }
}

fn name_list(text: &str) -> Result<Vec<Box<str>>, String> {
    let inner = text
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .ok_or_else(|| format!("'{}' is not a list [a,b,...]", cut(text)))?;
    Ok(inner
        .split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(Into::into)
        .collect())
}

/// `all`, `none`, or `fields[a,b]+arrays[c]+interiors[d]`.
fn heap_set(text: &str) -> Result<HeapSet, String> {
    match text {
        "all" => return Ok(HeapSet::All),
        "none" => return Ok(HeapSet::none()),
        _ => {}
    }
    let (mut fields, mut arrays, mut interiors) = (Vec::new(), Vec::new(), Vec::new());
    for part in text.split('+') {
        let (kind, list) = part.split_once('[').ok_or_else(|| {
            format!(
                "'{}' is not fields[...], arrays[...] or interiors[...]",
                cut(part)
            )
        })?;
        let names = name_list(&format!("[{list}"))?;
        match kind {
            "fields" => fields.extend(names),
            "arrays" => arrays.extend(names),
            "interiors" => interiors.extend(names),
            _ => {
                return Err(format!(
                    "'{}' is not fields, arrays or interiors",
                    cut(kind)
                ))
            }
        }
    }
    Ok(HeapSet::Listed {
        fields,
        arrays,
        interiors,
    })
}

fn cell(facts: &mut Facts) -> Result<CellKind, String> {
    let letter = facts.required("cell")?;
    let mut chars = letter.chars();
    match (chars.next().and_then(CellKind::from_letter), chars.next()) {
        (Some(cell), None) => Ok(cell),
        _ => Err(format!("cell={} is not one of S U P F X V", cut(letter))),
    }
}

/// `type=` must agree with the cell letter.
fn check_type(facts: &mut Facts, cell: CellKind) -> Result<(), String> {
    let Some(ty) = facts.value("type").or_else(|| facts.value("item")) else {
        return Ok(());
    };
    let agrees = match ty {
        "int" => cell.value_type() == Some(Type::Int),
        "ref" => cell.value_type() == Some(Type::Ref),
        "float" => cell.value_type() == Some(Type::Float),
        "struct" => cell == CellKind::Struct,
        _ => return Err(format!("type {} is not int, ref, float or struct", cut(ty))),
    };
    if agrees {
        Ok(())
    } else {
        Err(format!("type {ty} disagrees with cell={}", cell.letter()))
    }
}

fn field_facts(facts: &mut Facts, name: &str) -> Result<FieldDescr, String> {
    let cell = cell(facts)?;
    check_type(facts, cell)?;
    let size = facts.number("size")?;
    let size = size
        .map(|s| u32::try_from(s).map_err(|_| format!("size={s} is out of range")))
        .transpose()?;
    Ok(FieldDescr {
        cell,
        name: name.into(),
        offset: facts.number("offset")?.ok_or("missing offset=")?,
        size,
        pure: facts.flag("pure"),
        quasi_immutable: facts.flag("quasi-immutable"),
        index: facts
            .number("index")?
            .map(|i| u32::try_from(i).map_err(|_| format!("index={i} is out of range")))
            .transpose()?,
        owner: facts.value("owner").filter(|o| *o != "-").map(Into::into),
        points_to: facts.value("points_to").map(Into::into),
    })
}

/// `effect=5/can_raise`: the level must name the effect it says.
fn effect(text: &str) -> Result<ExtraEffect, String> {
    let (level, name) = text.split_once('/').unwrap_or((text, ""));
    let effect = level
        .parse()
        .ok()
        .and_then(ExtraEffect::from_level)
        .ok_or_else(|| format!("effect={} is not a level 0 to 7", cut(text)))?;
    if !name.is_empty() && name != effect.name() {
        return Err(format!(
            "effect level {level} is {}, not {}",
            effect.name(),
            cut(name)
        ));
    }
    Ok(effect)
}

impl Entry {
    fn read(text: &str) -> Result<Entry, String> {
        let mut facts = Facts::new(text);
        let kind = facts.head("a kind")?;
        let entry = match kind {
            "field" => {
                let name = facts.head("STRUCT.NAME")?;
                Entry::Descr(DescrKind::Field(field_facts(&mut facts, name)?))
            }
            "interior" => {
                let array = facts.required("array")?.into();
                let name = facts.required("field")?;
                let field = field_facts(&mut facts, name)?;
                Entry::Descr(DescrKind::InteriorField(InteriorDescr {
                    array: Some(array),
                    field,
                }))
            }
            "size" => {
                let struct_name = facts.head("the struct's name")?.into();
                let size = facts.number("size")?.ok_or("missing size=")?;
                let is_object = match (facts.flag("object"), facts.flag("plain")) {
                    (true, false) => true,
                    (false, true) => false,
                    _ => return Err("a size descr is 'object' or 'plain'".into()),
                };
                let vtable = facts.value("vtable").map(Into::into);
                if is_object != vtable.is_some() {
                    return Err("an 'object' has a vtable=, a 'plain' struct none".into());
                }
                Entry::Descr(DescrKind::Size(SizeDescr {
                    size,
                    struct_name: Some(struct_name),
                    is_object: Some(is_object),
                    vtable,
                    immutable: facts.flag("immutable"),
                    fields: Some(name_list(facts.required("fields")?)?),
                }))
            }
            "array" => {
                let gc = match facts.head("gc or raw")? {
                    "gc" => true,
                    "raw" => false,
                    other => return Err(format!("'{}' is not gc or raw", cut(other))),
                };
                let cell = cell(&mut facts)?;
                check_type(&mut facts, cell)?;
                let interior = facts.value("interior").map(name_list).transpose()?;
                Entry::Descr(DescrKind::Array(ArrayDescr {
                    cell,
                    item_size: facts.number("itemsize")?.ok_or("missing itemsize=")?,
                    gc: Some(gc),
                    has_length: Some(!facts.flag("nolength")),
                    pure: facts.flag("pure"),
                    single_float: facts.flag("singlefloat"),
                    points_to: facts.value("points_to").map(Into::into),
                    item_struct: facts.value("struct").map(Into::into),
                    interior,
                }))
            }
            "call" => {
                let args = facts.required("args")?;
                let arg_kinds: Box<str> = if args == "-" { "".into() } else { args.into() };
                if !arg_kinds.bytes().all(|b| b"irfLS".contains(&b)) {
                    return Err(format!("args={} is not made of i r f L S", cut(args)));
                }
                let result = facts.required("result")?;
                let result = match result.as_bytes() {
                    [c] if b"irfvSL".contains(c) => *c as char,
                    _ => return Err(format!("result={} is not i r f v S or L", cut(result))),
                };
                let effect = effect(facts.required("effect")?)?;
                let oopspec = facts
                    .value("oopspec")
                    .map(|o| {
                        o.split('/')
                            .next()
                            .and_then(|n| n.parse::<u32>().ok())
                            .ok_or_else(|| format!("oopspec={} is not N/NAME", cut(o)))
                    })
                    .transpose()?;
                let reads = heap_set(facts.required("reads")?)?;
                let mut writes = heap_set(facts.required("writes")?)?;
                if effect.ignores_writes() {
                    writes = HeapSet::none();
                }
                Entry::Descr(DescrKind::Call(CallDescr {
                    result,
                    result_size: facts.number("ressize")?.ok_or("missing ressize=")?,
                    arg_kinds,
                    effect: Some(effect),
                    oopspec,
                    reads,
                    writes,
                    can_invalidate: Some(facts.flag("can_invalidate")),
                }))
            }
            "quasiimmut" => Entry::Descr(DescrKind::QuasiImmut(QuasiImmutDescr {
                address: None,
                object: Some(facts.required("object")?.into()),
                field: Some(facts.required("field")?.into()),
                mutate_field: facts.value("mutate_field").map(Into::into),
            })),
            "looptoken" => return Ok(Entry::Descr(DescrKind::Loop { number: None })),
            "class" => {
                if facts.head("'vtable'")? != "vtable" {
                    return Err("a class line reads 'class vtable ...'".into());
                }
                let subclass_range = facts
                    .value("subclassrange")
                    .map(|r| {
                        r.split_once("..")
                            .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
                            .ok_or_else(|| format!("subclassrange={} is not MIN..MAX", cut(r)))
                    })
                    .transpose()?;
                Entry::Const(NamedConst::Class(ClassInfo {
                    name: facts.value("name").map(Into::into),
                    struct_name: facts.value("struct").map(Into::into),
                    size_descr: facts.value("sizedescr").map(Into::into),
                    subclass_range,
                }))
            }
            "ptr" => Entry::Const(NamedConst::Ptr(ptr_facts(&mut facts)?)),
            "typeid" => {
                let of = text.split_whitespace().last().unwrap_or("");
                return Ok(Entry::Const(NamedConst::TypeId { of: of.into() }));
            }
            "local" => {
                let words = text.trim_start().strip_prefix("local").unwrap_or("");
                return Ok(Entry::Const(NamedConst::Local {
                    text: words.trim().into(),
                }));
            }
            other => {
                return Err(format!(
                    "unknown kind '{}': expected field, size, array, interior, call, \
                     quasiimmut, looptoken, class, ptr, typeid or local",
                    cut(other)
                ))
            }
        };
        facts.done()?;
        Ok(entry)
    }
}

/// `object=OBJ struct=S [class=C] FIELD=VALUE...` or `object=OBJ
/// GcArray(T) length=N zeroed`.
fn ptr_facts(facts: &mut Facts) -> Result<PtrInfo, String> {
    let object = facts.required("object")?.into();
    let array = match facts.words.first() {
        Some(w) if w.starts_with("GcArray(") => {
            let item = facts.words.remove(0);
            let item = item
                .strip_prefix("GcArray(")
                .and_then(|i| i.strip_suffix(')'))
                .filter(|i| !i.is_empty())
                .ok_or_else(|| format!("'{}' is not GcArray(ITEM)", cut(item)))?;
            let length = facts.number("length")?.ok_or("missing length=")?;
            facts.flag("zeroed");
            Some((item.into(), length))
        }
        _ => None,
    };
    let struct_name = facts.value("struct").map(Into::into);
    if array.is_none() && struct_name.is_none() {
        return Err("a ptr is a struct=S or a GcArray(T)".into());
    }
    let class = facts
        .value("class")
        .filter(|c| *c != "unset")
        .map(Into::into);
    let mut fields = Vec::new();
    for word in std::mem::take(&mut facts.words) {
        let Some((field, value)) = word.split_once('=') else {
            return Err(format!("unknown fact '{}'", cut(word)));
        };
        let value = match value.parse() {
            Ok(n) => FieldValue::Int(n),
            Err(_) => FieldValue::Object(value.into()),
        };
        fields.push((field.into(), value));
    }
    Ok(PtrInfo {
        object,
        struct_name,
        array,
        class,
        fields,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = "\
# a comment
node_vtable = class vtable name=NODE struct=NODE sizedescr=nodesize subclassrange=0..2 | ConstClass(NODE) (42 cases)
nodesize = size NODE size=48 object vtable=node_vtable fields=[valuedescr,nextdescr] | <SizeDescr 48>
valuedescr = field NODE.value type=int cell=S size=8 offset=8 index=0 owner=nodesize | <FieldS NODE.value 8> (153 cases)
nextdescr = field NODE.next type=ref cell=P size=8 offset=40 index=1 owner=nodesize points_to=NODE | <FieldP NODE.next 40>
myptr = ptr object=nodeaddr struct=NODE class=node_vtable next=nodeaddr value=5 (other fields zero) | ConstPtr(ptrN)
arr = ptr object=arr GcArray(Signed) length=13 zeroed | ConstPtr(ptrN)
arraydescr = array gc item=int cell=S itemsize=8 | <ArrayS 8>
elidable = call args=i result=i ressize=8 effect=0/elidable_cannot_raise reads=fields[valuedescr] writes=none (declared writes fields[valuedescr], ignored: elidable) | <Calli 8 i EF=0>
writes = call args=ii result=v ressize=0 effect=5/can_raise oopspec=1/ARRAYCOPY reads=none writes=fields[valuedescr]+arrays[arraydescr] can_invalidate | <Callv 0 ii EF=5 OS=1>
node_tid = typeid the GC type id of nodesize | an integer
loop = looptoken a stand-in | <Loop0>
";

    fn ns() -> Namespace {
        Namespace::parse(SMALL, "ns.txt").unwrap()
    }

    #[test]
    fn reads_every_kind() {
        let ns = ns();
        let DescrKind::Field(f) = &ns.descr("nextdescr").unwrap().kind else {
            panic!()
        };
        assert_eq!(
            (f.cell, f.offset, f.size, f.index),
            (CellKind::Pointer, 40, Some(8), Some(1))
        );
        assert_eq!(f.owner.as_deref(), Some("nodesize"));
        assert_eq!(f.points_to.as_deref(), Some("NODE"));
        let DescrKind::Size(s) = &ns.descr("nodesize").unwrap().kind else {
            panic!()
        };
        assert_eq!(s.vtable.as_deref(), Some("node_vtable"));
        assert_eq!(s.fields.as_ref().unwrap().len(), 2);
        let call = ns.descr("elidable").unwrap().as_call().unwrap();
        assert!(call.writes.is_empty(), "elidable calls write nothing");
        assert!(call.reads.may_touch("valuedescr"));
        assert!(!call.reads.may_touch("nextdescr"));
        let call = ns.descr("writes").unwrap().as_call().unwrap();
        assert!(call.writes.may_touch("arraydescr"));
        assert!(!call.writes.may_touch("nextdescr"));
        assert_eq!(call.oopspec, Some(1));
        assert_eq!(call.can_invalidate, Some(true));
        let Some(NamedConst::Ptr(p)) = ns.constant("myptr") else {
            panic!()
        };
        assert_eq!(p.class.as_deref(), Some("node_vtable"));
        assert_eq!(
            p.fields,
            vec![
                ("next".into(), FieldValue::Object("nodeaddr".into())),
                ("value".into(), FieldValue::Int(5))
            ]
        );
        let Some(NamedConst::Ptr(a)) = ns.constant("arr") else {
            panic!()
        };
        assert_eq!(a.array, Some(("Signed".into(), 13)));
        assert_eq!(
            ns.constant("node_tid"),
            Some(&NamedConst::TypeId {
                of: "nodesize".into()
            })
        );
        assert_eq!(ns.pypylog_text("valuedescr"), Some("<FieldS NODE.value 8>"));
        assert_eq!(
            ns.descr("loop").unwrap().kind,
            DescrKind::Loop { number: None }
        );
    }

    fn error_of(line: &str) -> ParseError {
        let text = format!("{SMALL}{line}\n");
        Namespace::parse(&text, "ns.txt").unwrap_err()
    }

    #[test]
    fn refuses_what_it_cannot_read_at_its_line() {
        let last = SMALL.lines().count() as u32 + 1;
        for bad in [
            "x = bogus kind",
            "x = field S.f type=int cell=Q offset=8",
            "x = field S.f type=ref cell=S offset=8",
            "x = field S.f type=int cell=S offset=eight",
            "x = field S.f type=int cell=S offset=8 shiny",
            "x = call args=i result=i ressize=8 effect=9 reads=all writes=all",
            "x = call args=i result=i ressize=8 effect=5/elidable_cannot_raise reads=all writes=all",
            "x = call args=i result=i ressize=8 effect=5 reads=things[a] writes=all",
            "x = call args=i result=i ressize=8 effect=5 reads=fields[nope] writes=all",
            "x = field S.f type=int cell=S offset=8 owner=valuedescr",
            "x = ptr object=o struct=NODE class=nodesize",
            "valuedescr = field S.f type=int cell=S offset=8",
            "no equals sign",
        ] {
            let err = error_of(bad);
            assert_eq!(err.line, last, "{bad}: {err}");
        }
    }

    #[test]
    fn errors_name_the_file_line_and_column() {
        let last = SMALL.lines().count() as u32 + 1;
        let err = error_of("x = field S.f type=int cell=Q offset=8");
        assert_eq!((err.file.as_str(), err.line, err.col), ("ns.txt", last, 5));
        let err = error_of("bad name = field S.f type=int cell=S offset=8");
        assert_eq!((err.line, err.col), (last, 1), "{err}");
        assert!(err.expected.contains("a name of letters"), "{err}");
        let err = error_of("valuedescr = field S.f type=int cell=S offset=8");
        assert!(err.hint.unwrap().contains("already defined on line 4"));
        let err = error_of("x = field type=int cell=S offset=8");
        assert!(err.hint.unwrap().contains("missing STRUCT.NAME"));
        assert_eq!(error_of("no equals sign").hint, None);
        let err = error_of("x = call args=i result=q ressize=8 effect=5 reads=all writes=all");
        assert!(err.hint.unwrap().contains("result=q"));
    }

    #[test]
    fn every_kind_of_reference_is_checked() {
        for bad in [
            "x = size S size=8 plain fields=[nowhere]",
            "x = size S size=8 object vtable=nodesize fields=[]",
            "x = array gc item=struct cell=X itemsize=8 interior=[valuedescr]",
            "x = interior array=valuedescr field=S.f type=int cell=S size=8 offset=0",
            "x = quasiimmut object=myptr field=nodesize",
            "x = quasiimmut object=node_vtable field=valuedescr",
            "x = class vtable sizedescr=valuedescr",
            "x = typeid the GC type id of nowhere",
        ] {
            let err = error_of(bad);
            assert!(err.expected.contains("references"), "{bad}: {err}");
        }
    }

    #[test]
    fn raw_arrays_may_have_no_length() {
        let text =
            format!("{SMALL}raw = array raw item=int cell=S itemsize=8 nolength | <ArrayS 8>\n");
        let ns = Namespace::parse(&text, "ns.txt").unwrap();
        let length = |name: &str| match &ns.descr(name).unwrap().kind {
            DescrKind::Array(a) => (a.gc, a.has_length),
            _ => panic!(),
        };
        assert_eq!(length("raw"), (Some(false), Some(false)));
        assert_eq!(length("arraydescr"), (Some(true), Some(true)));
    }

    #[test]
    fn interiors_in_a_call_effect() {
        let ns = Namespace::parse(
            &format!(
                "{SMALL}sarr = array gc item=struct cell=X itemsize=16 interior=[re] | <ArrayX 16>\n\
                 re = interior array=sarr field=C.re type=float cell=F size=8 offset=0 | x\n\
                 c = call args=i result=v ressize=0 effect=2 reads=interiors[re] writes=interiors[re] | y\n"
            ),
            "ns.txt",
        )
        .unwrap();
        let call = ns.descr("c").unwrap().as_call().unwrap();
        assert!(call.writes.may_touch("re") && !call.writes.may_touch("sarr"));
    }

    #[test]
    fn the_pypylog_text_keeps_its_own_parentheses() {
        let ns = ns();
        assert_eq!(ns.pypylog_text("node_tid"), Some("an integer"));
        let ns = Namespace::parse(
            "t = typeid of x | an integer (the type id)\nx = looptoken | <Loop0>\n",
            "n",
        )
        .unwrap();
        assert_eq!(ns.pypylog_text("t"), Some("an integer (the type id)"));
    }

    #[test]
    fn any_cut_of_any_line_is_an_answer_not_a_panic() {
        let text = format!(
            "{SMALL}arr2 = ptr object=a GcArray(Ptr(TUPLE)) length=3 zeroed | ConstPtr(ptrN)\n"
        );
        for (i, line) in text.lines().enumerate() {
            for end in (0..=line.len()).filter(|&e| line.is_char_boundary(e)) {
                let mut lines: Vec<&str> = text.lines().collect();
                lines[i] = &line[..end];
                let _ = Namespace::parse(&lines.join("\n"), "ns.txt");
            }
        }
        let err = error_of("x = ptr object=o GcArray( length=1");
        assert!(err.hint.unwrap().contains("GcArray(ITEM)"));
    }
}
