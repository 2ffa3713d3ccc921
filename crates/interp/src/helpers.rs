//! The helpers PyPy's optimizer knows the meaning of (a call whose descr
//! has an `OS=N` oopspec), run as they behave: the array copy, and of
//! RPython's string support concatenation, slices, conversion to unicode
//! and the equality tests. The validator gives these calls the same
//! meaning, so that a counterexample involving them replays.
//!
//! A concatenation, a slice and a conversion always make a new string; a
//! slice out of bounds, or a null where a string is needed, is undefined
//! (the real helpers would crash or raise). Equality results are the
//! words 0 and 1. An array copy moves items as one step (the source
//! read before the destination is written, so an overlapping copy within
//! one array moves what was there); a span outside either array, or a
//! null array, is undefined.

use crate::env::{Call, CallOutcome};
use crate::error::Fault;
use crate::heap::Heap;
use crate::value::{ObjId, Val};
use traceopt_ir::Descr;

use traceopt_ir::oopspec::{
    ARRAYCOPY as OS_ARRAYCOPY, STR2UNICODE as OS_STR2UNICODE,
    STREQ_CHECKNULL_CHAR as OS_STREQ_CHECKNULL_CHAR, STREQ_LENGTHOK as OS_STREQ_LENGTHOK,
    STREQ_NONNULL as OS_STREQ_NONNULL, STREQ_NONNULL_CHAR as OS_STREQ_NONNULL_CHAR,
    STREQ_SLICE_CHAR as OS_STREQ_SLICE_CHAR, STREQ_SLICE_CHECKNULL as OS_STREQ_SLICE_CHECKNULL,
    STREQ_SLICE_NONNULL as OS_STREQ_SLICE_NONNULL, STR_CONCAT as OS_STR_CONCAT,
    STR_EQUAL as OS_STR_EQUAL, STR_SLICE as OS_STR_SLICE,
};

/// The oopspecs of the helpers run here.
pub const KNOWN_HELPERS: [u32; 12] = [
    OS_ARRAYCOPY,
    OS_STR2UNICODE,
    OS_STR_CONCAT,
    OS_STR_SLICE,
    OS_STR_EQUAL,
    OS_STREQ_SLICE_CHECKNULL,
    OS_STREQ_SLICE_NONNULL,
    OS_STREQ_SLICE_CHAR,
    OS_STREQ_NONNULL,
    OS_STREQ_NONNULL_CHAR,
    OS_STREQ_CHECKNULL_CHAR,
    OS_STREQ_LENGTHOK,
];

/// What a known helper's call returns, or `None` if `call` is not one.
pub fn known_helper(heap: &mut Heap, call: &Call<'_>) -> Option<Result<CallOutcome, Fault>> {
    let os = call
        .descr
        .and_then(Descr::as_call)
        .and_then(|c| c.oopspec)?;
    KNOWN_HELPERS
        .contains(&os)
        .then(|| run(heap, os, call.args).map(CallOutcome::Returned))
}

fn run(heap: &mut Heap, os: u32, args: &[Val]) -> Result<Val, Fault> {
    let flag = |b: bool| Ok(Val::Int(i64::from(b)));
    match (os, args) {
        (OS_ARRAYCOPY, &[src, dst, Val::Int(from), Val::Int(to), Val::Int(n)]) => {
            array_copy(heap, [src, dst], from, to, n)?;
            Ok(Val::Int(0))
        }
        (OS_STR_CONCAT, &[a, b]) => {
            let mut bytes = text(heap, a)?.to_vec();
            bytes.extend_from_slice(text(heap, b)?);
            Ok(Val::Ref(Some(heap.alloc_str(bytes))))
        }
        (OS_STR_SLICE, &[s, Val::Int(start), Val::Int(stop)]) => {
            let bytes = text(heap, s)?;
            let ok = 0 <= start && start <= stop && stop <= bytes.len() as i64;
            if !ok {
                return Err(undefined(format!(
                    "a slice [{start}:{stop}] of a string of {} characters",
                    bytes.len()
                )));
            }
            let part = bytes[start as usize..stop as usize].to_vec();
            Ok(Val::Ref(Some(heap.alloc_str(part))))
        }
        (OS_STR2UNICODE, &[s]) => {
            let chars = text(heap, s)?.iter().map(|&b| u32::from(b)).collect();
            Ok(Val::Ref(Some(heap.alloc_unicode(chars))))
        }
        (OS_STR_EQUAL, &[a, b]) => match (a, b) {
            (Val::Ref(None), _) | (_, Val::Ref(None)) => flag(a == b),
            _ => flag(text(heap, a)? == text(heap, b)?),
        },
        (OS_STREQ_NONNULL, &[a, b]) => flag(text(heap, a)? == text(heap, b)?),
        (OS_STREQ_LENGTHOK, &[a, b]) => {
            let (x, y) = (text(heap, a)?, text(heap, b)?);
            if x.len() != y.len() {
                return Err(undefined("lengths said equal differ".into()));
            }
            flag(x == y)
        }
        (
            OS_STREQ_SLICE_CHECKNULL | OS_STREQ_SLICE_NONNULL,
            &[s, Val::Int(start), Val::Int(length), other],
        ) => {
            let part = span(text(heap, s)?, start, length)?;
            if os == OS_STREQ_SLICE_CHECKNULL && other == Val::NULL {
                return flag(false);
            }
            flag(part == Some(text(heap, other)?))
        }
        (OS_STREQ_SLICE_CHAR, &[s, Val::Int(start), Val::Int(length), Val::Int(c)]) => {
            let part = span(text(heap, s)?, start, length)?;
            flag(part.is_some_and(|p| p.len() == 1 && i64::from(p[0]) == c))
        }
        (OS_STREQ_NONNULL_CHAR | OS_STREQ_CHECKNULL_CHAR, &[s, Val::Int(c)]) => {
            if os == OS_STREQ_CHECKNULL_CHAR && s == Val::NULL {
                return flag(false);
            }
            let bytes = text(heap, s)?;
            flag(bytes.len() == 1 && i64::from(bytes[0]) == c)
        }
        _ => Err(Fault::TypeMismatch(format!(
            "string helper OS={os} given {} argument(s) of other types than it takes",
            args.len()
        ))),
    }
}

/// `bytes[start..start + length]`, `None` where it runs past the end;
/// undefined where it starts outside or has a negative length.
fn span(bytes: &[u8], start: i64, length: i64) -> Result<Option<&[u8]>, Fault> {
    let n = bytes.len() as i64;
    if start < 0 || length < 0 || start > n {
        return Err(undefined(format!(
            "a span of {length} characters from {start} in a string of {n}"
        )));
    }
    Ok((length <= n - start).then(|| &bytes[start as usize..(start + length) as usize]))
}

/// The characters of the byte string `s`.
fn text(heap: &Heap, s: Val) -> Result<&[u8], Fault> {
    let id: Option<ObjId> = match s {
        Val::Ref(r) => r,
        _ => return Err(Fault::TypeMismatch(format!("{s:?} given for a string"))),
    };
    let id = id.ok_or_else(|| undefined("null given for a string".into()))?;
    heap.str_bytes(id)
        .ok_or_else(|| Fault::TypeMismatch("an object that is not a string".into()))
}

fn undefined(what: String) -> Fault {
    Fault::Undefined(format!("helper: {what}"))
}

/// `n` items of array `src` from index `from` into `dst` from `to`.
fn array_copy(
    heap: &mut Heap,
    [src, dst]: [Val; 2],
    from: i64,
    to: i64,
    n: i64,
) -> Result<(), Fault> {
    let array = |v: Val| match v {
        Val::Ref(Some(id)) => Ok(id),
        _ => Err(undefined("an array copy of a null array".into())),
    };
    let (src, dst) = (array(src)?, array(dst)?);
    let span = |heap: &Heap, id: ObjId, start: i64| {
        let len = heap.array_items(id).map(|items| items.len() as i64);
        match len {
            Some(len) if 0 <= start && 0 <= n && start + n <= len => {
                Ok(start as usize..(start + n) as usize)
            }
            Some(len) => Err(undefined(format!(
                "an array copy of {n} items at {start} in an array of {len}"
            ))),
            None => Err(undefined("an array copy of what is not an array".into())),
        }
    };
    let (read, write) = (span(heap, src, from)?, span(heap, dst, to)?);
    let moved = heap.array_items(src).map(|items| items[read].to_vec());
    match (moved, heap.get_mut(dst)) {
        (Some(moved), Some(crate::heap::HeapObject::Array { items, .. })) => {
            items[write].copy_from_slice(&moved);
            Ok(())
        }
        _ => Err(undefined("an array copy of what is not an array".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use traceopt_ir::{Opcode, Type};

    fn call(heap: &mut Heap, os: u32, args: &[Val], result: Type) -> Result<Val, Fault> {
        let descr = Descr::parse(&format!("<Calli 8 i EF=0 OS={os}>")).unwrap();
        let call = Call {
            op_index: 0,
            opcode: Opcode::CallI,
            func: Some(Val::Int(0)),
            args,
            descr: Some(&descr),
            result,
        };
        match known_helper(heap, &call).expect("a known helper")? {
            CallOutcome::Returned(v) => Ok(v),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn string_helpers_do_what_rpython_does() {
        let mut heap = Heap::new();
        let ab = Val::Ref(Some(heap.alloc_str(b"ab".to_vec())));
        let c = Val::Ref(Some(heap.alloc_str(b"c".to_vec())));
        let bytes = |heap: &Heap, v: Val| match v {
            Val::Ref(Some(id)) => heap.str_bytes(id).unwrap().to_vec(),
            other => panic!("{other:?}"),
        };
        let abc = call(&mut heap, OS_STR_CONCAT, &[ab, c], Type::Ref).unwrap();
        assert_eq!(bytes(&heap, abc), b"abc");
        assert_ne!(abc, ab, "a new string");
        let b = call(
            &mut heap,
            OS_STR_SLICE,
            &[abc, Val::Int(1), Val::Int(2)],
            Type::Ref,
        )
        .unwrap();
        assert_eq!(bytes(&heap, b), b"b");
        let past = [abc, Val::Int(2), Val::Int(4)];
        assert!(matches!(
            call(&mut heap, OS_STR_SLICE, &past, Type::Ref),
            Err(Fault::Undefined(_))
        ));
        let eq = |heap: &mut Heap, os, args: &[Val]| call(heap, os, args, Type::Int).unwrap();
        let abc2 = call(&mut heap, OS_STR_CONCAT, &[ab, c], Type::Ref).unwrap();
        assert_eq!(eq(&mut heap, OS_STR_EQUAL, &[abc, abc2]), Val::Int(1));
        assert_eq!(eq(&mut heap, OS_STR_EQUAL, &[abc, ab]), Val::Int(0));
        assert_eq!(
            eq(&mut heap, OS_STR_EQUAL, &[Val::NULL, Val::NULL]),
            Val::Int(1)
        );
        assert_eq!(eq(&mut heap, OS_STR_EQUAL, &[Val::NULL, ab]), Val::Int(0));
        let slice_eq = [abc, Val::Int(0), Val::Int(2), ab];
        assert_eq!(
            eq(&mut heap, OS_STREQ_SLICE_NONNULL, &slice_eq),
            Val::Int(1)
        );
        let checknull = [abc, Val::Int(0), Val::Int(2), Val::NULL];
        assert_eq!(
            eq(&mut heap, OS_STREQ_SLICE_CHECKNULL, &checknull),
            Val::Int(0)
        );
        let char_at = [abc, Val::Int(2), Val::Int(1), Val::Int(99)];
        assert_eq!(eq(&mut heap, OS_STREQ_SLICE_CHAR, &char_at), Val::Int(1));
        assert_eq!(
            eq(&mut heap, OS_STREQ_NONNULL_CHAR, &[c, Val::Int(99)]),
            Val::Int(1)
        );
        assert_eq!(
            eq(
                &mut heap,
                OS_STREQ_CHECKNULL_CHAR,
                &[Val::NULL, Val::Int(99)]
            ),
            Val::Int(0)
        );
        let unicode = call(&mut heap, OS_STR2UNICODE, &[ab], Type::Ref).unwrap();
        let Val::Ref(Some(id)) = unicode else {
            panic!()
        };
        assert_eq!(heap.unicode_chars(id).unwrap(), &[97, 98]);
    }

    #[test]
    fn an_array_copy_moves_a_span_of_items() {
        let mut heap = Heap::new();
        let ints = |v: &[i64]| v.iter().map(|&i| Val::Int(i)).collect::<Vec<_>>();
        let a = heap.alloc_array(ints(&[1, 2, 3]));
        let b = heap.alloc_array(ints(&[0, 0, 0, 0]));
        let copy = |heap: &mut Heap, src, dst, from, to, n| {
            let args = [
                Val::Ref(src),
                Val::Ref(dst),
                Val::Int(from),
                Val::Int(to),
                Val::Int(n),
            ];
            call(heap, OS_ARRAYCOPY, &args, Type::Void)
        };
        copy(&mut heap, Some(a), Some(b), 1, 2, 2).unwrap();
        assert_eq!(heap.array_items(b).unwrap(), ints(&[0, 0, 2, 3]));
        // Within one array, what was there moves.
        copy(&mut heap, Some(a), Some(a), 0, 1, 2).unwrap();
        assert_eq!(heap.array_items(a).unwrap(), ints(&[1, 1, 2]));
        for (src, from, n) in [
            (Some(a), 2, 2),
            (Some(a), -1, 1),
            (None, 0, 1),
            (Some(a), 0, -1),
        ] {
            let result = copy(&mut heap, src, Some(b), from, 0, n);
            assert!(matches!(result, Err(Fault::Undefined(_))), "{from} {n}");
        }
    }
}
