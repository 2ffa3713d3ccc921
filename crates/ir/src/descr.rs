//! Descriptors: what a field, array, call, allocation or guard refers to.
//!
//! PyPy prints a descr as text (`<FieldS W_IntObject.inst_intval 8 pure>`,
//! `<Calli 8 ii EF=0 OS=12>`, `TargetToken(1407…)`); tests use bare names
//! (`descr=valuedescr`). We keep the text exactly, for printing, and read
//! into structure what the text tells. Text of a known shape that does not
//! follow that shape is an error; text of an unknown shape is kept as
//! `Other`.

use crate::opcode::Type;

#[derive(Clone, PartialEq, Debug)]
pub struct Descr {
    pub text: Box<str>,
    pub kind: DescrKind,
}

/// How a memory cell is read: PyPy's `S` signed, `U` unsigned, `P` GC
/// pointer, `F` float.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum CellKind {
    Signed,
    Unsigned,
    Pointer,
    Float,
}

impl CellKind {
    fn from_letter(c: char) -> Option<CellKind> {
        Some(match c {
            'S' => CellKind::Signed,
            'U' => CellKind::Unsigned,
            'P' => CellKind::Pointer,
            'F' => CellKind::Float,
            _ => return None,
        })
    }

    /// The type of the value such a cell holds.
    pub fn value_type(self) -> Type {
        match self {
            CellKind::Signed | CellKind::Unsigned => Type::Int,
            CellKind::Pointer => Type::Ref,
            CellKind::Float => Type::Float,
        }
    }
}

#[derive(Clone, PartialEq, Debug)]
pub enum DescrKind {
    /// `<FieldS owner.name OFFSET [pure]>`
    Field {
        cell: CellKind,
        name: Box<str>,
        offset: i64,
        pure: bool,
    },
    /// `<ArrayP ITEMSIZE>`
    Array { cell: CellKind, item_size: i64 },
    /// `<InteriorFieldDescr <FieldP odictentry.value 8>>`
    InteriorField { field: Box<DescrKind> },
    /// `<Calli RESULTSIZE ARGKINDS EF=N [OS=N]>`
    Call {
        result: char,
        result_size: i64,
        arg_kinds: Box<str>,
        effect: Option<u32>,
        oopspec: Option<u32>,
    },
    /// `<SizeDescr SIZE>`
    Size { size: i64 },
    /// `<Guard0x7ffff4036e00>`
    Guard { address: u64 },
    /// `<Loop-1>` (the loop being closed) or `<Loop3>` (an existing loop).
    Loop { number: i64 },
    /// `TargetToken(140737287342624)`
    TargetToken { address: u64 },
    /// `<QuasiImmutDescr object at 0x…>` and other `<Class object at 0x…>`.
    Object { class: Box<str>, address: u64 },
    /// A bare name from a test (`valuedescr`).
    Named,
    /// Anything else, kept as text.
    Other,
}

impl Descr {
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
            DescrKind::Field { cell, .. } | DescrKind::Array { cell, .. } => {
                Some(cell.value_type())
            }
            DescrKind::InteriorField { field } => match field.as_ref() {
                DescrKind::Field { cell, .. } => Some(cell.value_type()),
                _ => None,
            },
            _ => None,
        }
    }

    pub fn is_pure_field(&self) -> bool {
        matches!(self.kind, DescrKind::Field { pure: true, .. })
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
    if !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
    {
        return Ok(DescrKind::Named);
    }
    Err(format!(
        "'{text}' is not a descr: expected <...>, TargetToken(N) or a name"
    ))
}

fn number(word: Option<&str>, what: &str) -> Result<i64, String> {
    let word = word.ok_or_else(|| format!("missing {what}"))?;
    word.parse()
        .map_err(|_| format!("{what} '{word}' is not a number"))
}

fn hex_address(word: &str) -> Result<u64, String> {
    let digits = word.strip_prefix("0x").unwrap_or(word);
    u64::from_str_radix(digits, 16).map_err(|_| format!("'{word}' is not a hex address"))
}

fn parse_bracketed(inner: &str) -> Result<DescrKind, String> {
    if let Some(rest) = inner.strip_prefix("InteriorFieldDescr ") {
        let field = parse_kind(rest.trim())?;
        if !matches!(field, DescrKind::Field { .. }) {
            return Err("InteriorFieldDescr must hold a field descr".into());
        }
        return Ok(DescrKind::InteriorField {
            field: Box::new(field),
        });
    }
    if let Some(addr) = inner.strip_prefix("Guard") {
        return Ok(DescrKind::Guard {
            address: hex_address(addr)?,
        });
    }
    if let Some((class, addr)) = inner.split_once(" object at ") {
        return Ok(DescrKind::Object {
            class: class.into(),
            address: hex_address(addr)?,
        });
    }
    let mut words = inner.split_whitespace();
    let head = words.next().unwrap_or("");
    if let Some(num) = head.strip_prefix("Loop") {
        return Ok(DescrKind::Loop {
            number: number(Some(num), "loop number")?,
        });
    }
    if head == "SizeDescr" {
        return Ok(DescrKind::Size {
            size: number(words.next(), "size")?,
        });
    }
    let letter = |prefix: &str| -> Option<char> {
        let rest = head.strip_prefix(prefix)?;
        let mut chars = rest.chars();
        let c = chars.next()?;
        chars.next().is_none().then_some(c)
    };
    if let Some(c) = letter("Field") {
        let cell = CellKind::from_letter(c).ok_or(format!("unknown field kind '{c}'"))?;
        let name = words.next().ok_or("field descr without a name")?.into();
        let offset = number(words.next(), "field offset")?;
        let pure = match words.next() {
            None => false,
            Some("pure") => true,
            Some(w) => return Err(format!("unexpected '{w}' after the field offset")),
        };
        return Ok(DescrKind::Field {
            cell,
            name,
            offset,
            pure,
        });
    }
    if let Some(c) = letter("Array") {
        let cell = CellKind::from_letter(c).ok_or(format!("unknown array kind '{c}'"))?;
        return Ok(DescrKind::Array {
            cell,
            item_size: number(words.next(), "item size")?,
        });
    }
    if let Some(result) = letter("Call") {
        if !"irfv".contains(result) {
            return Err(format!("unknown call result kind '{result}'"));
        }
        let result_size = number(words.next(), "result size")?;
        let mut arg_kinds: Box<str> = "".into();
        let (mut effect, mut oopspec) = (None, None);
        for word in words {
            if let Some(n) = word.strip_prefix("EF=") {
                effect = Some(number(Some(n), "effect level")? as u32);
            } else if let Some(n) = word.strip_prefix("OS=") {
                oopspec = Some(number(Some(n), "oopspec index")? as u32);
            } else if word.bytes().all(|b| b"irfLS".contains(&b)) {
                arg_kinds = word.into();
            } else {
                return Err(format!("unexpected '{word}' in a call descr"));
            }
        }
        return Ok(DescrKind::Call {
            result,
            result_size,
            arg_kinds,
            effect,
            oopspec,
        });
    }
    Ok(DescrKind::Other)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_shapes_pypy_prints() {
        let d = Descr::parse("<FieldS pypy.objspace.std.intobject.W_IntObject.inst_intval 8 pure>")
            .unwrap();
        assert_eq!(
            d.kind,
            DescrKind::Field {
                cell: CellKind::Signed,
                name: "pypy.objspace.std.intobject.W_IntObject.inst_intval".into(),
                offset: 8,
                pure: true
            }
        );
        assert_eq!(d.value_type(), Some(Type::Int));
        let call = Descr::parse("<Calli 8 ii EF=0 OS=14>").unwrap();
        assert_eq!(
            call.kind,
            DescrKind::Call {
                result: 'i',
                result_size: 8,
                arg_kinds: "ii".into(),
                effect: Some(0),
                oopspec: Some(14)
            }
        );
        assert!(matches!(
            Descr::parse("<ArrayP 8>").unwrap().kind,
            DescrKind::Array {
                cell: CellKind::Pointer,
                item_size: 8
            }
        ));
        assert_eq!(
            Descr::parse("<Loop-1>").unwrap().kind,
            DescrKind::Loop { number: -1 }
        );
        assert_eq!(
            Descr::parse("<Guard0x7ffff4036e00>").unwrap().kind,
            DescrKind::Guard {
                address: 0x7ffff4036e00
            }
        );
        assert_eq!(
            Descr::parse("TargetToken(140737287342624)").unwrap().kind,
            DescrKind::TargetToken {
                address: 140737287342624
            }
        );
        let interior = Descr::parse("<InteriorFieldDescr <FieldP odictentry.value 8>>").unwrap();
        assert_eq!(interior.value_type(), Some(Type::Ref));
        assert!(matches!(
            Descr::parse("<QuasiImmutDescr object at 0x7ffff3f7c320>")
                .unwrap()
                .kind,
            DescrKind::Object {
                address: 0x7ffff3f7c320,
                ..
            }
        ));
        assert_eq!(Descr::parse("valuedescr").unwrap().kind, DescrKind::Named);
    }

    #[test]
    fn rejects_known_shapes_that_are_broken() {
        assert!(Descr::parse("<FieldS name>").is_err());
        assert!(Descr::parse("<FieldS name eight>").is_err());
        assert!(Descr::parse("<FieldQ name 8>").is_err());
        assert!(Descr::parse("<ArrayP>").is_err());
        assert!(Descr::parse("<Guardxyz>").is_err());
        assert!(Descr::parse("<SizeDescr 16").is_err());
        assert!(Descr::parse("TargetToken(12").is_err());
        assert!(Descr::parse("no good").is_err());
    }
}
