//! The validator's heap encodings agree with the reference interpreter.
//! For each family of heap ops (struct fields, wide and narrow; arrays;
//! strings; object identity), random cases (200 per family in CI,
//! `HEAP_CASES=10000` for more) are written as groups of ops on objects
//! the trace allocates, 20 groups to a trace that
//! passes every group's results to `escape_n`. The interpreter runs the
//! trace; the validator must then prove it equivalent to a trace that just
//! escapes the interpreter's values, which the solver can only do if its
//! reading of every op gives those values too. One batch per
//! family with a single result off by one must be refuted, so that the
//! check can fail.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use traceopt_interp::{run, DefaultEnv, Limits, Outcome, Val};
use traceopt_ir::{parse_trace_with, Namespace};
use traceopt_smt::Solver;
use traceopt_verify::{verify, Verdict};

/// Cases per family in CI; `HEAP_CASES=10000` for the full check.
const CASES_PER_FAMILY: usize = 200;
const GROUPS_PER_TRACE: usize = 20;

fn cases_per_family() -> usize {
    std::env::var("HEAP_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(CASES_PER_FAMILY)
}

fn namespace() -> Arc<Namespace> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/peer/heap/descrs.txt");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Arc::new(Namespace::parse(&text, "descrs.txt").unwrap())
}

/// A small deterministic generator (xorshift64*), so failures reproduce.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// Edge values often, random words otherwise.
    fn word(&mut self) -> i64 {
        const EDGES: [i64; 10] = [0, 1, -1, 255, 256, -256, 127, -128, i64::MIN, i64::MAX];
        match self.below(3) {
            0 => EDGES[self.below(EDGES.len() as u64) as usize],
            1 => self.below(600) as i64 - 300,
            _ => self.next() as i64,
        }
    }
}

/// One group: ops with names suffixed by `g`, and the values it finishes
/// with.
type Group = (String, Vec<String>);

/// Struct fields: two nodes, writes through either, narrow `chardescr`
/// (one unsigned byte), a ref field and identity of what it holds.
fn fields(rng: &mut Rng, g: usize) -> Group {
    let (a, b) = (format!("pa{g}"), format!("pb{g}"));
    let pick = |rng: &mut Rng| {
        if rng.below(2) == 0 {
            a.clone()
        } else {
            b.clone()
        }
    };
    let mut ops =
        format!("{a} = new_with_vtable(descr=nodesize)\n{b} = new_with_vtable(descr=nodesize)\n");
    for _ in 0..3 {
        let (target, value) = (pick(rng), rng.word());
        let descr = ["valuedescr", "chardescr"][rng.below(2) as usize];
        ops += &format!("setfield_gc({target}, {value}, descr={descr})\n");
    }
    let (target, held) = (pick(rng), pick(rng));
    ops += &format!("setfield_gc({target}, {held}, descr=nextdescr)\n");
    let mut outs = Vec::new();
    for (k, descr) in ["valuedescr", "chardescr"].iter().enumerate() {
        let from = pick(rng);
        ops += &format!("i{k}x{g} = getfield_gc_i({from}, descr={descr})\n");
        outs.push(format!("i{k}x{g}"));
    }
    let from = pick(rng);
    ops += &format!(
        "pn{g} = getfield_gc_r({from}, descr=nextdescr)\nie{g} = ptr_eq(pn{g}, {a})\n\
         inn{g} = ptr_ne(pn{g}, {b})\n"
    );
    outs.extend([format!("ie{g}"), format!("inn{g}")]);
    (ops, outs)
}

/// Arrays: a cleared array of 1 to 4 items, writes and reads in bounds,
/// its length.
fn arrays(rng: &mut Rng, g: usize) -> Group {
    let n = 1 + rng.below(4) as i64;
    let mut ops = format!("pa{g} = new_array_clear({n}, descr=arraydescr)\n");
    for _ in 0..2 {
        let (i, v) = (rng.below(n as u64), rng.word());
        ops += &format!("setarrayitem_gc(pa{g}, {i}, {v}, descr=arraydescr)\n");
    }
    let i = rng.below(n as u64);
    ops += &format!(
        "ig{g} = getarrayitem_gc_i(pa{g}, {i}, descr=arraydescr)\n\
         il{g} = arraylen_gc(pa{g}, descr=arraydescr)\n"
    );
    (ops, vec![format!("ig{g}"), format!("il{g}")])
}

/// Strings: a new string of 1 to 4 characters, every one written (a
/// character is a byte), one read back, the length.
fn strings(rng: &mut Rng, g: usize) -> Group {
    let n = 1 + rng.below(4);
    let mut ops = format!("ps{g} = newstr({n})\n");
    for i in 0..n {
        let c = rng.below(256);
        ops += &format!("strsetitem(ps{g}, {i}, {c})\n");
    }
    let i = rng.below(n);
    ops += &format!("ic{g} = strgetitem(ps{g}, {i})\nil{g} = strlen(ps{g})\n");
    (ops, vec![format!("ic{g}"), format!("il{g}")])
}

/// Identity: new objects are distinct from each other and from null.
fn identity(rng: &mut Rng, g: usize) -> Group {
    let (a, b) = (format!("pa{g}"), format!("pb{g}"));
    let same = if rng.below(2) == 0 {
        a.clone()
    } else {
        b.clone()
    };
    let ops = format!(
        "{a} = new(descr=ssize)\n{b} = new(descr=ssize)\n\
         ie{g} = ptr_eq({a}, {same})\nin{g} = ptr_ne({b}, {same})\n\
         iz{g} = ptr_eq({a}, NULL)\nii{g} = instance_ptr_eq({same}, {b})\n"
    );
    let outs = ["ie", "in", "iz", "ii"].map(|p| format!("{p}{g}")).to_vec();
    (ops, outs)
}

/// A trace of `groups` groups and the values it finishes with, as the
/// interpreter computes them.
fn batch(family: fn(&mut Rng, usize) -> Group, rng: &mut Rng, groups: usize) -> (String, Vec<i64>) {
    let mut text = String::from("[]\n");
    let mut outs = Vec::new();
    for g in 0..groups {
        let (ops, o) = family(rng, g);
        text += &ops;
        outs.extend(o);
    }
    text += &format!("escape_n({})\nfinish()\n", outs.join(", "));
    let trace =
        parse_trace_with(&text, "batch", Some(namespace())).unwrap_or_else(|e| panic!("{e}"));
    let run = run(&trace, &[], &mut DefaultEnv, Limits::default())
        .unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert!(matches!(run.outcome, Outcome::Finished { .. }), "{text}");
    let values = run.escaped[0]
        .1
        .iter()
        .map(|v| match v {
            Val::Int(i) => *i,
            other => panic!("{other:?}"),
        })
        .collect();
    (text, values)
}

fn verdict(before: &str, values: &[i64], solver: &mut Solver) -> Verdict {
    let words: Vec<String> = values.iter().map(i64::to_string).collect();
    let after = format!("[]\nescape_n({})\nfinish()\n", words.join(", "));
    let ns = Some(namespace());
    let before = parse_trace_with(before, "before", ns.clone()).unwrap();
    let after = parse_trace_with(&after, "after", ns).unwrap();
    verify(&before, &after, solver).unwrap()
}

fn cross_check(name: &str, family: fn(&mut Rng, usize) -> Group, seed: u64) {
    let mut solver = Solver::start(None, Duration::from_secs(60))
        .unwrap_or_else(|e| panic!("{e}\n(the test command installs z3: see README)"));
    let mut rng = Rng(seed);
    for k in 0..cases_per_family().div_ceil(GROUPS_PER_TRACE) {
        let (text, values) = batch(family, &mut rng, GROUPS_PER_TRACE);
        match verdict(&text, &values, &mut solver) {
            Verdict::Proved => {}
            other => panic!("{name}, batch {k}: the validator disagrees: {other:?}\n{text}"),
        }
        if k == 0 {
            // The check can fail: one value off by one is refuted.
            let mut wrong = values.clone();
            let i = rng.below(wrong.len() as u64) as usize;
            wrong[i] = wrong[i].wrapping_add(1);
            match verdict(&text, &wrong, &mut solver) {
                Verdict::Refuted(_) => {}
                other => panic!("{name}: a wrong value was not refuted: {other:?}\n{text}"),
            }
        }
    }
}

#[test]
fn struct_fields_agree_with_the_interpreter() {
    cross_check("fields", fields, 0x9e37_79b9_7f4a_7c15);
}

#[test]
fn arrays_agree_with_the_interpreter() {
    cross_check("arrays", arrays, 0x2545_f491_4f6c_dd1d);
}

#[test]
fn strings_agree_with_the_interpreter() {
    cross_check("strings", strings, 0x1234_5678_9abc_def1);
}

#[test]
fn identities_agree_with_the_interpreter() {
    cross_check("identity", identity, 0x0fed_cba9_8765_4321);
}
