//! The class of what `new_with_vtable` makes where its size descr does
//! not name the class (a log's `<SizeDescr 16>`). Objects of one size are
//! of many classes in PyPy (`W_IntObject`, `W_BoolObject`, `W_FloatObject`
//! are all 16 bytes), so such a class is an unknown, one per allocating
//! op of the recorded trace (its *site*): an op's descr is a constant of
//! the op, so every object one op makes is of one class, which may be
//! any, and two ops may make two classes.
//!
//! Each unnamed allocation gets a key, the descr's text and its site;
//! allocations of one key share one unknown class, others have their own.
//!
//! - BEFORE's op `i` is site `i`, unless the caller says it builds what
//!   another op of BEFORE makes (`Given::built`: a peeled loop's label
//!   objects, built in the induction's second comparison, are the loop
//!   op's, whose descr the body allocates them with where it must).
//! - AFTER's op is the site of the BEFORE op its provenance names (the
//!   optimizer's claim of what it stands for), if that op allocates with
//!   the same text. With no provenance at all (`verify` of two traces),
//!   the site of the BEFORE allocation it is paired with (`pairing`):
//!   the text does not say which class an op makes, and reading paired
//!   allocations alike is how two texts are compared. Otherwise a site
//!   of its own.
//! - A virtual of resume data is made by the op its site names (its
//!   provenance, `Virtual::site`), if of its text; where it names none
//!   (a trace read from text), the allocation its name names (the
//!   optimizer names a virtual after the allocation it removed):
//!   BEFORE's op of that name, else the trace's own. Otherwise a site of
//!   its own.
//!
//! A `virtual_ref` is a site too, of the class the trace's vref layout
//! names (its key is that class): an optimizer that removes one builds
//! the `JitVirtualRef` with `new_with_vtable` of that size descr.

use std::collections::HashMap;

use traceopt_interp::MadeBy;
use traceopt_ir::{Op, Opcode, Trace};

/// The class keys of one trace's unnamed allocations.
#[derive(Default)]
pub(crate) struct Sites {
    /// By op index.
    ops: HashMap<usize, Box<str>>,
    /// By virtual name and site.
    virtuals: HashMap<(Box<str>, Option<usize>), Box<str>>,
    /// The class of the traces' vrefs, where a key is it.
    vref: Option<Box<str>>,
}

impl Sites {
    /// The key of what `made_by` makes, if it is an unnamed allocation:
    /// `Err` with the class constant's name where it is a vref's.
    pub fn key(&self, made_by: MadeBy<'_>) -> Option<Result<&str, &str>> {
        let key = match made_by {
            MadeBy::Op(index) => self.ops.get(&index),
            MadeBy::Virtual(name, site) => self.virtuals.get(&(name.into(), site)),
        }?;
        Some(match self.vref.as_deref() {
            Some(class) if **key == *class => Err(class),
            _ => Ok(key),
        })
    }

    /// BEFORE's keys, where `built` lists the ops that build what another
    /// op makes (op, the other op).
    pub fn before(before: &Trace, built: &[(usize, usize)]) -> Sites {
        let site = |i: usize| (built.iter().find(|&&(op, _)| op == i)).map_or(i, |&(_, s)| s);
        let vref = before.vref_layout().class;
        let mut sites = Sites {
            vref: Some(vref.clone()),
            ..Sites::default()
        };
        for (i, op) in before.ops.iter().enumerate() {
            if op.opcode == Opcode::VirtualRef {
                sites.ops.insert(i, vref.clone());
            } else if let Some(text) = unnamed_text(before, op) {
                sites.ops.insert(i, key(text, &site(i).to_string()));
            }
        }
        sites.virtuals_of(before, None, "b");
        sites
    }

    /// AFTER's keys: `provenance`, where given, names the BEFORE op each
    /// op of AFTER stands for; else `partners` the BEFORE allocation each
    /// is paired with.
    pub fn after(
        after: &Trace,
        (before, before_sites): (&Trace, &Sites),
        provenance: Option<&[Option<usize>]>,
        partners: &[Option<usize>],
    ) -> Sites {
        let mut sites = Sites::default();
        let vref = before.vref_layout().class;
        for (j, op) in after.ops.iter().enumerate() {
            let Some(text) = unnamed_text(after, op) else {
                continue;
            };
            let origin = match provenance {
                Some(p) => p.get(j).copied().flatten(),
                None => partners.get(j).copied().flatten(),
            };
            let shared = origin
                .filter(|&i| site_text(before, i, &vref) == Some(text))
                .and_then(|i| before_sites.ops.get(&i));
            let own = || key(text, &format!("a{j}"));
            sites.ops.insert(j, shared.cloned().unwrap_or_else(own));
        }
        sites.virtuals_of(after, Some((before, before_sites)), "a");
        sites
    }

    /// The keys of `trace`'s unnamed virtuals: where a virtual names its
    /// site (`Virtual::site`, an op of `before`), that op's if of its
    /// text, else its own; by name, the allocation of `before`, else of
    /// `trace`, of that name and text, else its own (`own` marks them).
    fn virtuals_of(&mut self, trace: &Trace, before: Option<(&Trace, &Sites)>, own: &str) {
        let unnamed = (trace.ops.iter())
            .flat_map(|op| &op.virtuals)
            .filter_map(|v| Some((v, unnamed_virtual_text(trace, v.opcode, v.descr)?)));
        let mut named: Option<[Named; 2]> = None;
        let vref = before.map(|(b, _)| b.vref_layout().class);
        for (v, text) in unnamed {
            let id: (Box<str>, _) = (v.name.as_str().into(), v.site);
            if self.virtuals.contains_key(&id) {
                continue;
            }
            let [in_before, mine] = named.get_or_insert_with(|| {
                let in_before = before.map(|(b, _)| named_allocations(b));
                [in_before.unwrap_or_default(), named_allocations(trace)]
            });
            let of_before = before.zip(vref.as_deref()).and_then(|((b, sites), vref)| {
                let i = match v.site {
                    Some(site) => site,
                    None => *in_before.get(&*v.name)?,
                };
                (site_text(b, i, vref) == Some(text)).then(|| sites.ops.get(&i))?
            });
            let of_mine = (mine.get(&*v.name))
                .filter(|&&j| v.site.is_none() && unnamed_text(trace, &trace.ops[j]) == Some(text))
                .and_then(|j| self.ops.get(j));
            let site = v.site.map_or_else(String::new, |s| format!("#{s}"));
            let found = (of_before.or(of_mine).cloned())
                .unwrap_or_else(|| key(text, &format!("{own}:{}{site}", v.name)));
            self.virtuals.insert(id, found);
        }
    }
}

/// The key of an unnamed allocation of descr text `text` at `site` (with
/// a space, which no `ConstClass` name has: no key names a constant).
fn key(text: &str, site: &str) -> Box<str> {
    format!("{text} @{site}").into()
}

/// The text of `op`'s size descr, if it is a `new_with_vtable` whose
/// descr does not name its class.
fn unnamed_text<'t>(trace: &'t Trace, op: &Op) -> Option<&'t str> {
    unnamed_virtual_text(trace, op.opcode, op.descr)
}

fn unnamed_virtual_text(
    trace: &Trace,
    opcode: Opcode,
    descr: Option<traceopt_ir::DescrId>,
) -> Option<&str> {
    let descr = trace.descr(descr.filter(|_| opcode == Opcode::NewWithVtable)?);
    (!descr.names_class()).then_some(&*descr.text)
}

/// The text of the size descr of what `trace`'s op `i` makes, if it is
/// a site: an unnamed allocation's, or a `virtual_ref`'s class `vref`.
fn site_text<'t>(trace: &'t Trace, i: usize, vref: &'t str) -> Option<&'t str> {
    let op = trace.ops.get(i)?;
    match op.opcode {
        Opcode::VirtualRef => Some(vref),
        _ => unnamed_text(trace, op),
    }
}

/// Allocating ops by the names of their values.
type Named<'t> = HashMap<&'t str, usize>;

/// `trace`'s `new_with_vtable` ops by the names of their values.
fn named_allocations(trace: &Trace) -> Named<'_> {
    (trace.ops.iter().enumerate())
        .filter(|(_, op)| matches!(op.opcode, Opcode::NewWithVtable | Opcode::VirtualRef))
        .map(|(i, _)| (trace.name(trace.value_of_op(i)), i))
        .collect()
}
