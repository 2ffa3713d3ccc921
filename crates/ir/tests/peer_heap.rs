//! PyPy's heap, virtual-object and loop test cases (`../shared/peer/heap`)
//! with their namespace: every case parses with its names resolved, checks
//! and round-trips, except the listed ones, each refused for a fault of the
//! case itself. And the namespace agrees with what a real log prints for
//! each of its descrs.

use std::path::PathBuf;
use std::sync::Arc;
use traceopt_ir::peer::read_peer;
use traceopt_ir::{
    check, parse_trace_with, print_trace, CheckOptions, Descr, DescrKind, HeapSet, Namespace,
};

fn heap_dir() -> PathBuf {
    traceopt_ir::shared_dir().join("peer/heap")
}

fn namespace() -> Arc<Namespace> {
    let path = heap_dir().join("descrs.txt");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (../shared must sit beside the repo)",
            path.display()
        )
    });
    Arc::new(Namespace::parse(&text, "descrs.txt").unwrap_or_else(|e| panic!("{e}")))
}

/// The cases refused, why the case is wrong, and a piece of the error.
/// PyPy's harness accepts them because its optimizer looks only at what
/// each test exercises; read strictly, each is a typo or an ill-typed use.
const REFUSED: &[(&str, &str, &str)] = &[
    ("test_residual_call_invalidate_some_caches", "reads the ref field bdescr with getfield_gc_i", "as bdescr says"),
    ("test_remove_guard_subclass_2", "names the int result of getfield_gc_i 'p1' (otherdescr is a ref field: the op should be getfield_gc_r)", "result name starting with 'i'"),
    ("test_setfield_aliasing_by_class", "names the int result of getfield_gc_i 'p5' (nextdescr is a ref field)", "result name starting with 'i'"),
    ("test_setfield_aliasing_by_field_content_bug", "names the int result of getfield_gc_i 'p5' (nextdescr is a ref field)", "result name starting with 'i'"),
    ("test_duplicate_getarrayitem_after_setarrayitem_2", "names the int result of getarrayitem_gc_i 'p4' (arraydescr2 holds refs)", "result name starting with 'i'"),
    ("test_ooisnull_oononnull_via_virtual", "stores a ref into the int field valuedescr", "as valuedescr says"),
    ("test_virtual_raw_malloc_force", "stores the int 789 into a raw float array", "as rawarraydescr_float says"),
    ("test_call_pure_returning_virtual", "names the int result of call_pure_i 'p2' (the string slice is a ref: call_pure_r)", "result name starting with 'i'"),
    ("test_setgetfield_raw", "reads raw memory through a GC ref, with the ref field nextdescr read as an int", "argument 1 of getfield_raw_i"),
    ("test_pure", "reads the int field valuedescr3 with getfield_gc_r", "as valuedescr3 says"),
    ("test_getfield_guard_const_preamble", "reads the int field valuedescr with getfield_gc_r", "as valuedescr says"),
    ("test_constnats_among_virtual_fileds", "reads and writes refs through the int field valuedescr", "as valuedescr says"),
    ("test_forced_virtual_pure_getfield", "reads the int field valuedescr3 with getfield_gc_r", "as valuedescr3 says"),
    ("test_setarrayitem_lazy", "stores refs into the int array arraydescr", "as arraydescr says"),
    ("test_arraylen_bound", "reads refs from the int array arraydescr", "as arraydescr says"),
    ("test_loopinvariant_constant_unicodegetitem", "gives unicodegetitem a descr, which the op does not take", "unicodegetitem takes none"),
    ("test_specialized_to_cached_constant_setfield", "names the (void) result of setfield_gc 'i18'", "setfield_gc produces no value"),
    ("test_heap_cache_forced_virtuals", "stores and reads ints through the ref field bdescr", "as bdescr says"),
    ("test_setinteriorfield_should_not_clear_cache", "writes setinteriorfield_raw without a descr: no field is named", "a descr for setinteriorfield_raw"),
    ("test_unroll_failargs", "reads the int field valuedescr with getfield_gc_r", "as valuedescr says"),
    ("test_cached_arrayitem_write_descr", "calls call_i with no function at all", "at least 1 argument"),
    ("test_division_bound_bug", "has a stray ',' after 'int_invert(i4)'", "found ','"),
    ("test_bound_arraylen", "stores a ref into the int array arraydescr", "as arraydescr says"),
];

/// The test's name: `test_optimizeopt.py:408 test_x (optimize_loop)` gives `test_x`.
fn short_name(name: &str) -> &str {
    name.split_whitespace().nth(1).unwrap_or(name)
}

#[test]
fn every_heap_case_parses_and_checks_or_is_refused_for_a_reason() {
    let ns = namespace();
    let path = heap_dir().join("dev.txt");
    let text = std::fs::read_to_string(&path).unwrap();
    let set = read_peer(&text, "dev.txt", Some(ns.clone()));
    // Which case each line belongs to, to name the case of a parse error.
    let case_at = |line: u32| -> &str {
        let starts = text.lines().take(line as usize).enumerate();
        let header = starts.filter(|(_, l)| l.starts_with("### ")).last();
        header.map_or("", |(_, l)| short_name(&l[4..]))
    };
    let mut refused: Vec<(String, String)> = set
        .errors
        .iter()
        .map(|e| (case_at(e.line).to_string(), e.to_string()))
        .collect();
    let options = CheckOptions {
        require_fail_args: false,
        partial: true,
    };
    let mut accepted = 0;
    for case in &set.cases {
        let parts = [
            Some(&case.ops),
            Some(&case.expected),
            case.preamble.as_ref(),
            case.short.as_ref(),
        ];
        let mut errors = Vec::new();
        for trace in parts.into_iter().flatten() {
            errors.extend(check(trace, "dev.txt", options));
            let printed = print_trace(trace);
            let again = parse_trace_with(&printed, "printed", Some(ns.clone()))
                .unwrap_or_else(|e| panic!("{}: {e}\n{printed}", case.name));
            assert!(
                again == *trace,
                "{}: round trip changed\n{printed}",
                case.name
            );
        }
        match errors.first() {
            Some(e) => refused.push((short_name(&case.name).into(), e.to_string())),
            None => accepted += 1,
        }
    }
    assert_eq!(
        set.cases.len() + set.errors.len(),
        299,
        "dev.txt has 299 cases"
    );
    let mut unexplained = Vec::new();
    for (name, error) in &refused {
        match REFUSED.iter().find(|(n, ..)| n == name) {
            Some((_, _, piece)) if error.contains(piece) => {}
            _ => unexplained.push(format!("{name}: {error}")),
        }
    }
    assert!(
        unexplained.is_empty(),
        "refused without a reason listed:\n{}",
        unexplained.join("\n")
    );
    let stale: Vec<&str> = REFUSED
        .iter()
        .map(|(n, ..)| *n)
        .filter(|n| !refused.iter().any(|(r, _)| r == n))
        .collect();
    assert!(
        stale.is_empty(),
        "listed as refused but accepted now: {stale:?}"
    );
    assert_eq!(accepted, 299 - REFUSED.len());
}

#[test]
fn names_resolve_to_full_descrs() {
    let ns = namespace();
    let DescrKind::Field(f) = &ns.descr("nextdescr").unwrap().kind else {
        panic!()
    };
    assert_eq!((f.index, f.owner.as_deref()), (Some(4), Some("nodesize")));
    let DescrKind::Size(s) = &ns.descr("nodesize").unwrap().kind else {
        panic!()
    };
    assert_eq!(s.vtable.as_deref(), Some("node_vtable"));
    assert_eq!(s.fields.as_ref().unwrap()[4].as_ref(), "nextdescr");
    let DescrKind::Size(s) = &ns.descr("nodesize3").unwrap().kind else {
        panic!()
    };
    assert!(s.immutable);
    let call = ns.descr("writeadescr").unwrap().as_call().unwrap();
    assert!(call.writes.may_touch("adescr") && !call.writes.may_touch("valuedescr"));
    assert_eq!(
        ns.descr("plaincalldescr")
            .unwrap()
            .as_call()
            .unwrap()
            .writes,
        HeapSet::All
    );
    let elidable = ns.descr("elidablecalldescr").unwrap().as_call().unwrap();
    assert!(
        elidable.writes.is_empty(),
        "PyPy ignores an elidable call's writes"
    );
    let DescrKind::Field(q) = &ns.descr("quasifielddescr").unwrap().kind else {
        panic!()
    };
    assert!(q.quasi_immutable && q.pure);
    let Some(traceopt_ir::NamedConst::Ptr(p)) = ns.constant("myptr") else {
        panic!()
    };
    assert_eq!(
        (&*p.object, p.class.as_deref()),
        ("nodeaddr", Some("node_vtable"))
    );
}

/// What a real log prints for a name reads into a descr that the
/// namespace's full descr refines: the known parts agree, the rest is
/// unknown (and unknown is the cautious answer).
#[test]
fn the_pypylog_text_of_each_descr_agrees_with_the_namespace() {
    let ns = namespace();
    let mut compared = 0;
    for full in ns.descrs() {
        let Some(text) = ns.pypylog_text(&full.text).filter(|t| t.starts_with('<')) else {
            continue;
        };
        let seen = Descr::parse(text).unwrap_or_else(|e| panic!("{}: {text}: {e}", full.text));
        let agree = match (&full.kind, &seen.kind) {
            (DescrKind::Field(a), DescrKind::Field(b)) => {
                (a.cell, &a.name, a.offset, a.pure) == (b.cell, &b.name, b.offset, b.pure)
                    && b.index.is_none()
            }
            (DescrKind::Array(a), DescrKind::Array(b)) => {
                (a.cell, a.item_size) == (b.cell, b.item_size) && b.gc.is_none()
            }
            (DescrKind::InteriorField(a), DescrKind::InteriorField(b)) => {
                (a.field.cell, &a.field.name, a.field.offset)
                    == (b.field.cell, &b.field.name, b.field.offset)
            }
            (DescrKind::Size(a), DescrKind::Size(b)) => a.size == b.size && b.vtable.is_none(),
            (DescrKind::Call(a), DescrKind::Call(b)) => {
                // The namespace's arg classes are the descr's; a real log
                // prints the same letters. What the log's text gives of
                // the effect sets is all, or the namespace's (PyPy's one
                // effect info of a virtualizable's force).
                (a.result, a.result_size, &a.arg_kinds, a.effect, a.oopspec)
                    == (b.result, b.result_size, &b.arg_kinds, b.effect, b.oopspec)
                    && (b.reads == HeapSet::All || b.reads == a.reads)
                    && (b.writes == HeapSet::All || a.writes.is_empty())
            }
            (DescrKind::QuasiImmut(_), DescrKind::QuasiImmut(_)) => true,
            (DescrKind::Loop { .. }, DescrKind::Loop { .. }) => true,
            _ => false,
        };
        assert!(
            agree,
            "{}: {:?}\nagainst {text}: {:?}",
            full.text, full.kind, seen.kind
        );
        compared += 1;
    }
    assert!(compared >= 100, "only {compared} descrs compared");
}
