//! The helpers PyPy's optimizer knows the meaning of (an `OS=N` oopspec
//! on the call's descr): string helpers and array copies; and the
//! contents of string constants.
//!
//! PyPy replaces calls of these helpers by what they do (a concatenation
//! of two virtual strings becomes `newstr` and `copystrcontent`; an
//! equality of known strings a constant), so the validator gives them
//! the same meaning, as RPython's `ll_strconcat`, `ll_stringslice`,
//! `ll_streq` and the `_ll_*_str_eq_*` helpers of the JIT's support code
//! define it:
//!
//! - concatenation and slices make a fresh string (the next slot, as an
//!   allocation) whose characters are the sources' (one `lambda` array);
//! - equality compares lengths and then characters, as arrays over the
//!   index (`lambda` again, equal where both are equal everywhere);
//! - `str2unicode` makes a fresh unicode string of the same characters;
//! - an array copy (`OS_ARRAYCOPY`, `OS_ARRAYMOVE`) copies a span of
//!   items, as `copystrcontent` copies characters, where the effect info
//!   names the one array descr it writes.
//!
//! The helpers that may raise `MemoryError` are taken never to: a trace
//! that runs out of memory is not one the validator compares.
//!
//! They are not calls for the validator: no observation, no k-th call
//! unknowns; a trace that calls one and a trace that does what it does
//! agree. The interpreter does not run them, so a counterexample that
//! involves them is never a refutation (`helper_calls_differ`).

use traceopt_ir::{Descr, HeapSet};
use traceopt_smt::{Fun, Name, Solver, SolverError, Sort, Term};

use crate::heap::{
    copy_span, gc_type, is_kind, pair, type_id, Cell, Effect, Memory, ObjKind, World,
};

/// A helper the validator knows, by PyPy's oopspec index.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Helper {
    /// (s1, s2): a new string s1 + s2.
    Concat,
    /// (s, start, stop): a new string s[start:stop].
    Slice,
    /// (s): a new unicode string of the same characters.
    ToUnicode,
    /// (s1, s2): null equals null; else equal lengths and characters.
    Equal,
    /// (s1, start, length, s2): s2 not null and s1[start:start+length] == s2.
    EqualSliceCheckNull,
    /// The same, s2 known not null.
    EqualSliceNonNull,
    /// (s1, start, length, c): length 1 and s1[start] == c.
    EqualSliceChar,
    /// (s1, s2), both not null.
    EqualNonNull,
    /// (s, c), s not null: s is the one character c.
    EqualNonNullChar,
    /// (s, c): s not null and the one character c.
    EqualCheckNullChar,
    /// (s1, s2), the lengths known equal: the characters.
    EqualLengthOk,
    /// (src, dst, src_start, dst_start, length) of GC arrays (`OS_ARRAYCOPY`
    /// and `OS_ARRAYMOVE`), where the effect info names the one array
    /// descr it writes.
    ArrayCopy,
}

impl Helper {
    /// The helper a call's descr names: byte-string helpers (PyPy's
    /// `OS_STR_*`; the unicode ones are not known yet) and array copies.
    pub fn of(descr: Option<&Descr>) -> Option<Helper> {
        use traceopt_ir::oopspec as os;
        use Helper::*;
        Some(match os::of(descr)? {
            os::ARRAYCOPY | os::ARRAYMOVE if ArrayCopy.copied_items(descr).is_some() => ArrayCopy,
            os::STR2UNICODE => ToUnicode,
            os::STR_CONCAT => Concat,
            os::STR_SLICE => Slice,
            os::STR_EQUAL => Equal,
            os::STREQ_SLICE_CHECKNULL => EqualSliceCheckNull,
            os::STREQ_SLICE_NONNULL => EqualSliceNonNull,
            os::STREQ_SLICE_CHAR => EqualSliceChar,
            os::STREQ_NONNULL => EqualNonNull,
            os::STREQ_NONNULL_CHAR => EqualNonNullChar,
            os::STREQ_CHECKNULL_CHAR => EqualCheckNullChar,
            os::STREQ_LENGTHOK => EqualLengthOk,
            _ => return None,
        })
    }

    /// The items an array copy copies: the one array descr its effect
    /// info writes.
    pub fn copied_items(self, descr: Option<&Descr>) -> Option<Cell> {
        let HeapSet::Listed { arrays, .. } = &descr?.as_call()?.writes else {
            return None;
        };
        match (self, arrays.as_slice()) {
            (Helper::ArrayCopy, [array]) => Some(Cell::Item(array.clone())),
            _ => None,
        }
    }

    /// Whether it makes a new string.
    pub fn allocates(self) -> bool {
        matches!(self, Helper::Concat | Helper::Slice | Helper::ToUnicode)
    }

    /// What `newstr`/`newunicode` it stands for, for pairing.
    pub fn kind(self) -> &'static str {
        match self {
            Helper::ToUnicode => "newunicode ",
            _ => "newstr ",
        }
    }
}

/// A string's length and characters (`unicode` or bytes).
struct Text {
    length: Cell,
    chars: Cell,
}

const BYTES: Text = Text {
    length: Cell::StrLength(false),
    chars: Cell::StrChar(false),
};
const UNICODE: Text = Text {
    length: Cell::StrLength(true),
    chars: Cell::StrChar(true),
};

/// The meaning of a helper call; `args` are its words, the function
/// first.
pub(crate) fn encode_helper(
    world: &mut World,
    memory: &mut Memory,
    solver: &mut Solver,
    (helper, descr): (Helper, Option<&Descr>),
    args: &[Term],
) -> Result<Option<Effect>, SolverError> {
    use Helper::*;
    let args = &args[1..];
    if let (Some(items), [_, _, _, _, _]) = (helper.copied_items(descr), args) {
        // Both arrays are of the descr's type.
        let id = type_id(world, solver, items.descr_name())?;
        let mut typed = Vec::new();
        for array in &args[..2] {
            typed.push(gc_type(world, solver, array)?.eq(&id));
        }
        let of = (items, Cell::Length, ObjKind::Array);
        let defined = copy_span(world, memory, solver, of, args)?.and(&Term::and_all(typed));
        return Ok(Some(Effect {
            defined: Some(defined),
            ..Effect::default()
        }));
    }
    let arity = match helper {
        ArrayCopy => return Ok(None), // not five arguments: unsupported
        ToUnicode => 1,
        Concat | Equal | EqualNonNull | EqualNonNullChar | EqualCheckNullChar | EqualLengthOk => 2,
        Slice => 3,
        EqualSliceCheckNull | EqualSliceNonNull | EqualSliceChar => 4,
    };
    if args.len() != arity {
        return Ok(None); // another helper than PyPy's: unsupported
    }
    let mut e = Effect::default();
    let mut defined = Vec::new();
    // A string's length, which is never negative.
    let mut string = |s: &Term, memory: &mut Memory| -> Result<Term, SolverError> {
        defined.push(memory.nonnull_string(world, solver, s)?);
        let n = memory.length_of(world, solver, &BYTES.length, s)?;
        e.lemmas.push(Term::word(0).bv(Fun::BvSle, &n));
        Ok(n)
    };
    let flag = |t: Term| Term::ite(&t, &Term::word(1), &Term::word(0));
    match helper {
        ArrayCopy => unreachable!("array copies are encoded above"),
        Concat => {
            let (n1, n2) = (string(&args[0], memory)?, string(&args[1], memory)?);
            let total = match (
                memory.literal_length(world, &args[0]),
                memory.literal_length(world, &args[1]),
            ) {
                (Some(Term::Bv { value: a, .. }), Some(Term::Bv { value: b, .. })) => {
                    Term::word((a + b) as i64)
                }
                _ => n1.bv(Fun::BvAdd, &n2),
            };
            // No string is 2**63 characters long (the helper would fail).
            defined.push(Term::word(0).bv(Fun::BvSle, &total));
            let chars = memory.named(world, solver, &BYTES.chars)?;
            let r = memory.allocate(world, solver, None, Some((BYTES.length, total.clone())))?;
            let at = |s: &Term, i: &Term| chars.select(&pair(s, i));
            memory.fill(world, solver, (&BYTES.chars, &r, &total), |i| {
                let second = at(&args[1], &i.bv(Fun::BvSub, &n1));
                Term::ite(&i.bv(Fun::BvSlt, &n1), &at(&args[0], i), &second)
            })?;
            let zero = Term::word(0);
            memory.note_copy(&BYTES.chars, [&args[0], &zero, &zero]);
            memory.note_copy(&BYTES.chars, [&args[1], &zero, &n1]);
            e.lemmas.push(is_kind(world, solver, &r, ObjKind::Str)?);
            e.value = Some(r);
        }
        Slice => {
            let n = string(&args[0], memory)?;
            let (start, stop) = (&args[1], &args[2]);
            defined.push(Term::and_all([
                Term::word(0).bv(Fun::BvSle, start),
                start.bv(Fun::BvSle, stop),
                stop.bv(Fun::BvSle, &n),
            ]));
            let chars = memory.named(world, solver, &BYTES.chars)?;
            let length = match (start, stop) {
                (Term::Bv { value: a, .. }, Term::Bv { value: b, .. }) if a <= b => {
                    Term::word((b - a) as i64)
                }
                _ => stop.bv(Fun::BvSub, start),
            };
            let r = memory.allocate(world, solver, None, Some((BYTES.length, length.clone())))?;
            memory.fill(world, solver, (&BYTES.chars, &r, &length), |i| {
                chars.select(&pair(&args[0], &i.bv(Fun::BvAdd, start)))
            })?;
            memory.note_copy(&BYTES.chars, [&args[0], start, &Term::word(0)]);
            e.lemmas.push(is_kind(world, solver, &r, ObjKind::Str)?);
            e.value = Some(r);
        }
        ToUnicode => {
            let n = string(&args[0], memory)?;
            let chars = memory.named(world, solver, &BYTES.chars)?;
            let r = memory.allocate(world, solver, None, Some((UNICODE.length, n.clone())))?;
            memory.fill(world, solver, (&UNICODE.chars, &r, &n), |i| {
                chars.select(&pair(&args[0], i))
            })?;
            e.lemmas.push(is_kind(world, solver, &r, ObjKind::Unicode)?);
            e.value = Some(r);
        }
        Equal | EqualNonNull | EqualLengthOk => {
            let (s1, s2) = (&args[0], &args[1]);
            let null = |s: &Term| s.eq(&Term::word(0));
            let either_null = null(s1).or(&null(s2));
            let (n1, n2) = (
                memory.length_of(world, solver, &BYTES.length, s1)?,
                memory.length_of(world, solver, &BYTES.length, s2)?,
            );
            // Compared only where the lengths are equal: a constant's, if
            // either is one.
            let n = memory
                .literal_length(world, s1)
                .or(memory.literal_length(world, s2));
            let zero = Term::word(0);
            let n = n.as_ref().unwrap_or(&n1);
            let same_chars = same_span(world, memory, solver, [(s1, &zero), (s2, &zero)], n)?;
            let contents = match helper {
                EqualLengthOk => same_chars,
                _ => n1.eq(&n2).and(&same_chars),
            };
            if helper != Equal {
                for s in [s1, s2] {
                    defined.push(memory.nonnull_string(world, solver, s)?);
                }
            } else {
                for s in [s1, s2] {
                    let ok = memory.nonnull_string(world, solver, s)?;
                    defined.push(null(s).or(&ok));
                }
            }
            if helper == EqualLengthOk {
                defined.push(n1.eq(&n2));
            }
            let equal = Term::ite(&either_null, &s1.eq(s2), &contents);
            e.value = Some(flag(equal));
        }
        EqualSliceCheckNull | EqualSliceNonNull => {
            let (s1, start, length, s2) = (&args[0], &args[1], &args[2], &args[3]);
            let n1 = string(s1, memory)?;
            defined.push(slice_starts_inside(start, length, &n1));
            let s2_ok = memory.nonnull_string(world, solver, s2)?;
            let n2 = memory.length_of(world, solver, &BYTES.length, s2)?;
            // Characters of s1 past its end are read only where the
            // lengths agree and the slice fits.
            let fits = length.bv(Fun::BvSle, &n1.bv(Fun::BvSub, start));
            // Compared only where s2 is `length` long.
            let n = memory.literal_length(world, s2);
            let same = same_span(
                world,
                memory,
                solver,
                [(s1, start), (s2, &Term::word(0))],
                n.as_ref().unwrap_or(length),
            )?;
            let contents = n2.eq(length).and(&fits).and(&same);
            let checked = helper == EqualSliceCheckNull;
            e.value = Some(flag(false_if_null(
                checked,
                s2,
                s2_ok,
                contents,
                &mut defined,
            )));
        }
        EqualSliceChar => {
            let (s1, start, length, c) = (&args[0], &args[1], &args[2], &args[3]);
            let n1 = string(s1, memory)?;
            defined.push(slice_starts_inside(start, length, &n1));
            let chars = memory.named(world, solver, &BYTES.chars)?;
            let one = length.eq(&Term::word(1)).and(&start.bv(Fun::BvSlt, &n1));
            let equal = one.and(&chars.select(&pair(s1, start)).eq(c));
            e.value = Some(flag(equal));
        }
        EqualNonNullChar | EqualCheckNullChar => {
            let (s, c) = (&args[0], &args[1]);
            let ok = memory.nonnull_string(world, solver, s)?;
            let n = memory.length_of(world, solver, &BYTES.length, s)?;
            let chars = memory.named(world, solver, &BYTES.chars)?;
            let one = n
                .eq(&Term::word(1))
                .and(&chars.select(&pair(s, &Term::word(0))).eq(c));
            let checked = helper == EqualCheckNullChar;
            e.value = Some(flag(false_if_null(checked, s, ok, one, &mut defined)));
        }
    }
    e.defined = Some(Term::and_all(defined));
    Ok(Some(e))
}

/// A slice of `length` characters from `start` begins inside a string of
/// `n` characters.
fn slice_starts_inside(start: &Term, length: &Term, n: &Term) -> Term {
    Term::and_all([
        Term::word(0).bv(Fun::BvSle, start),
        Term::word(0).bv(Fun::BvSle, length),
        start.bv(Fun::BvSle, n),
    ])
}

/// `value`, where `s` must be a string (`ok`); with `checked`, `s` may
/// also be null, and the answer is then false.
fn false_if_null(checked: bool, s: &Term, ok: Term, value: Term, defined: &mut Vec<Term>) -> Term {
    if !checked {
        defined.push(ok);
        return value;
    }
    let null = s.eq(&Term::word(0));
    defined.push(null.or(&ok));
    Term::ite(&null, &Term::Bool(false), &value)
}

/// The longest span `same_span` compares character by character.
const MAX_CHARS_ONE_BY_ONE: u128 = 64;

/// The longest span of unknown length whose equality the second query
/// states exactly, character by character (`SpanMode::ShortExact`).
const EXACT_SPAN: u64 = 4;

/// How an equality of two spans of unknown length is stated: each query
/// of `check` in turn, the later ones where the earlier left a
/// counterexample that does not replay.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SpanMode {
    /// By a witness of the difference only: sound, small, and open where
    /// a counterexample needs the characters between witnesses.
    #[default]
    Witness,
    /// Also exactly, character by character, where the span is at most
    /// `EXACT_SPAN` long.
    ShortExact,
    /// As `ShortExact`, and assuming every such span is that short: a
    /// narrower question, whose counterexamples are real but whose
    /// proof proves nothing of longer spans (only a refutation counts).
    ShortOnly,
}

impl Memory {
    /// The length of `s` where a literal gives it: a string constant's,
    /// or that of a string this trace made of a literal length.
    fn literal_length(&self, world: &World, s: &Term) -> Option<Term> {
        let constant = world.string_lengths.iter().map(|(obj, n)| (obj, *n as u64));
        let made = self.literal_lengths.iter().map(|(obj, n)| (obj, *n));
        let (_, n) = constant.chain(made).find(|(obj, _)| *obj == s)?;
        Some(Term::word(n as i64))
    }

    /// `name` is the name of the value `term`: where `term` is a string of
    /// a literal length, so is `name`; it was made when `term` was.
    pub(crate) fn name_value(&mut self, name: &Term, term: &Term) {
        let known = self.literal_lengths.iter().find(|(obj, _)| obj == term);
        if let Some(&(_, n)) = known {
            self.literal_lengths.push((name.clone(), n));
        }
        self.name_made(name, term);
    }
}

impl World {
    /// A string constant's object, with its length and characters (and
    /// its kind): a string never changes, so these hold throughout.
    pub fn string_constant(
        &mut self,
        solver: &mut Solver,
        name: &str,
        unicode: bool,
        text: &str,
    ) -> Result<Term, SolverError> {
        let fresh = !self.has_object(name);
        let obj = self.old_object(solver, name)?;
        if fresh {
            let text_cells = if unicode { &UNICODE } else { &BYTES };
            let codes: Vec<i64> = match unicode {
                true => text.chars().map(|c| c as i64).collect(),
                false => text.bytes().map(i64::from).collect(),
            };
            self.string_lengths.push((obj.clone(), codes.len()));
            let text = (unicode, codes.iter().map(|&c| c as u32).collect());
            self.string_texts.insert(name.into(), text);
            let length = self.initial(solver, &text_cells.length)?;
            let mut facts = vec![length.select(&obj).eq(&Term::word(codes.len() as i64))];
            let chars = self.initial(solver, &text_cells.chars)?;
            for (i, &c) in codes.iter().enumerate() {
                facts.push(
                    chars
                        .select(&pair(&obj, &Term::word(i as i64)))
                        .eq(&Term::word(c)),
                );
            }
            let kind = if unicode {
                ObjKind::Unicode
            } else {
                ObjKind::Str
            };
            facts.push(is_kind(self, solver, &obj, kind)?);
            self.lemmas.extend(facts);
        }
        Ok(obj)
    }
}

impl Memory {
    /// Sets the characters of the fresh string `r` of length `n` to
    /// `value(index)`, leaving every other character (past its end too).
    fn fill(
        &mut self,
        world: &mut World,
        solver: &mut Solver,
        (cell, r, n): (&Cell, &Term, &Term),
        value: impl Fn(&Term) -> Term,
    ) -> Result<(), SolverError> {
        let key = Term::var("fill_key");
        let (obj, index) = (key.un(Fun::Extract(127, 64)), key.un(Fun::Extract(63, 0)));
        let old = self.named(world, solver, cell)?.select(&key);
        let inside = Term::and_all([
            obj.eq(r),
            Term::word(0).bv(Fun::BvSle, &index),
            index.bv(Fun::BvSlt, n),
        ]);
        let body = Term::ite(&inside, &value(&index), &old);
        self.set_array(cell, Term::lambda("fill_key", Sort::Bv(128), &body));
        Ok(())
    }
}

/// One equality of two spans of characters whose length is not a small
/// constant: `equal` stands for "`s1[a+i] == s2[b+i]` for every `i` in
/// `0..n`", in `chars`. `differs_at` is an index where they differ, when
/// they do.
pub(crate) struct SpanEquality {
    equal: Term,
    differs_at: Term,
    chars: Term,
    spans: [(Term, Term); 2],
    n: Term,
}

impl SpanEquality {
    /// Whether the spans agree at index `i`, where `i` is inside them.
    fn agree_at(&self, i: &Term) -> Term {
        let [(s1, a), (s2, b)] = &self.spans;
        let at = |s: &Term, start: &Term| self.chars.select(&pair(s, &start.bv(Fun::BvAdd, i)));
        let inside = Term::word(0)
            .bv(Fun::BvSle, i)
            .and(&i.bv(Fun::BvSlt, &self.n));
        inside.implies(&at(s1, a).eq(&at(s2, b)))
    }
}

/// Whether `s1[a..a+n]` and `s2[b..b+n]` hold the same characters:
/// character by character where `n` is a small constant.
///
/// Otherwise a new Boolean, with no quantifier and no `lambda`: where it
/// is false, the spans differ at a new index (a witness); where it is
/// true, they agree at the witness of every other such equality (the same
/// offset into the spans, which is where the equalities of two traces
/// that compare the same characters meet). These facts are true of the
/// real equality, so a proof that uses them holds. Later queries
/// (`SpanMode`) also state it exactly where the span is short. The characters at the
/// witnesses are read as the trace reads, so that a counterexample's heap
/// holds them; one that needs an equality these facts leave open does not
/// replay, and is unknown.
fn same_span(
    world: &mut World,
    memory: &mut Memory,
    solver: &mut Solver,
    spans: [(&Term, &Term); 2],
    n: &Term,
) -> Result<Term, SolverError> {
    let chars = memory.named(world, solver, &BYTES.chars)?;
    let [(s1, a), (s2, b)] = spans;
    if let Term::Bv { value, .. } = n {
        if *value <= MAX_CHARS_ONE_BY_ONE {
            return Ok(Term::and_all((0..*value as i64).map(|i| {
                let at = |s: &Term, start: &Term| {
                    chars.select(&pair(s, &start.bv(Fun::BvAdd, &Term::word(i))))
                };
                at(s1, a).eq(&at(s2, b))
            })));
        }
    }
    let k = world.span_equalities.len();
    let equal = world.var(
        solver,
        Name::invented(&format!("span_equal{k}")),
        Sort::Bool,
    )?;
    let differs_at = world.var(
        solver,
        Name::invented(&format!("span_differs{k}")),
        Sort::Bv(64),
    )?;
    let new = SpanEquality {
        equal: equal.clone(),
        differs_at: differs_at.clone(),
        chars,
        spans: [(s1.clone(), a.clone()), (s2.clone(), b.clone())],
        n: n.clone(),
    };
    let inside = Term::word(0)
        .bv(Fun::BvSle, &differs_at)
        .and(&differs_at.bv(Fun::BvSlt, n));
    let differ = inside.and(&new.agree_at(&differs_at).not());
    let mut lemmas = vec![equal.not().implies(&differ)];
    let mut read_at = vec![];
    if world.span_mode != SpanMode::Witness {
        // A span of at most EXACT_SPAN characters is equal exactly when
        // every one of them is.
        let indexes: Vec<Term> = (0..EXACT_SPAN as i64).map(Term::word).collect();
        let each = Term::and_all(indexes.iter().map(|i| new.agree_at(i)));
        let short = n.bv(Fun::BvSle, &Term::word(EXACT_SPAN as i64));
        lemmas.push(short.implies(&equal.eq(&each)));
        if world.span_mode == SpanMode::ShortOnly {
            lemmas.push(short);
        }
        for i in indexes {
            read_at.extend(new.spans.iter().map(|span| (span.clone(), i.clone())));
        }
    }
    for old in &world.span_equalities {
        lemmas.push(old.equal.implies(&old.agree_at(&differs_at)));
        lemmas.push(equal.implies(&new.agree_at(&old.differs_at)));
        read_at.extend(
            old.spans
                .iter()
                .map(|span| (span.clone(), differs_at.clone())),
        );
        read_at.extend(
            new.spans
                .iter()
                .map(|span| (span.clone(), old.differs_at.clone())),
        );
    }
    read_at.extend(
        new.spans
            .iter()
            .map(|span| (span.clone(), differs_at.clone())),
    );
    world.lemmas.extend(lemmas);
    world.span_equalities.push(new);
    for ((s, start), i) in read_at {
        memory.item_at(world, solver, &BYTES.chars, (&s, &start.bv(Fun::BvAdd, &i)))?;
    }
    Ok(equal)
}
