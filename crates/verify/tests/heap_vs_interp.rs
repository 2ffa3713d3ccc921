//! The validator's heap encodings agree with the reference interpreter.
//! For each family of heap ops (struct fields, wide and narrow; arrays;
//! strings; the string helpers PyPy knows; unicode strings and character
//! copies; floats kept in fields
//! and items, and float arithmetic; object identity; virtual refs; guards
//! on references), random cases (200
//! per family in CI, `HEAP_CASES=10000` for more) are written as groups
//! of ops on objects the trace allocates, a few groups to a trace that
//! passes every group's results to `escape_n`. The interpreter runs the
//! trace; the validator must then prove it equivalent to a trace that just
//! escapes the interpreter's values, which the solver can only do if its
//! reading of every op gives those values too. One batch per
//! family with a single result off by one must be refuted, so that the
//! check can fail. Guards are cases too: each group's guards pass, and the
//! last group of a batch may end with one that fails, which the other
//! trace stands for with `guard_true(0)`; so an encoding that lets a guard
//! pass that the interpreter fails, or the other way round, is refuted.

use std::sync::Arc;
use std::time::Duration;
use traceopt_interp::{run, DefaultEnv, Limits, Outcome, Val};
use traceopt_ir::{parse_trace_with, Namespace};
use traceopt_smt::Solver;
use traceopt_verify::{verify, Verdict};

/// Cases per family in CI; `HEAP_CASES=10000` for the full check.
const CASES_PER_FAMILY: usize = 200;
/// Small traces: the solver's time grows faster than their length.
const GROUPS_PER_TRACE: usize = 5;

fn cases_per_family() -> usize {
    std::env::var("HEAP_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(CASES_PER_FAMILY)
}

/// The first batch checked (`HEAP_FROM`, to re-run a failure without
/// the batches before it; they are still generated, so the cases are
/// the same).
fn first_batch() -> usize {
    std::env::var("HEAP_FROM")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

fn namespace() -> Arc<Namespace> {
    let path = traceopt_ir::shared_dir().join("peer/heap/descrs.txt");
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

/// The byte-string helpers PyPy knows (concatenation, slices, conversion
/// to unicode, the equality tests), three to a case, on new strings of 0
/// to 2 characters of a two-letter alphabet (so that equal strings are
/// common), of a literal length or not, and constants, or null where a
/// helper takes it.
fn string_helpers(rng: &mut Rng, g: usize) -> Group {
    let mut ops = String::new();
    let mut lengths = [0; 2];
    for (k, name) in ["ps", "pt"].iter().enumerate() {
        let n = rng.below(3);
        lengths[k] = n;
        ops += &format!("{name}{g} = newstr({n})\n");
        for i in 0..n {
            ops += &format!("strsetitem({name}{g}, {i}, {})\n", 97 + rng.below(2));
        }
    }
    // Two more whose length no literal gives (an op's result), which the
    // validator compares by a witness of their difference.
    for name in ["pv", "px"] {
        let n = rng.below(3);
        ops += &format!("i{name}n{g} = int_add({n}, 0)\n{name}{g} = newstr(i{name}n{g})\n");
        for i in 0..n {
            ops += &format!("strsetitem({name}{g}, {i}, {})\n", 97 + rng.below(2));
        }
    }
    let (s, t) = (format!("ps{g}"), format!("pt{g}"));
    let maybe_null = |rng: &mut Rng, p: &str| match rng.below(4) {
        0 => "NULL".to_string(),
        _ => p.to_string(),
    };
    let n = lengths[0];
    let start = rng.below(n + 1);
    let stop = start + rng.below(n - start + 1);
    let length = rng.below(3);
    let c = 97 + rng.below(2);
    // The other string of an equality: a constant (whose length the
    // validator knows, as in PyPy's traces), of the same length as s for
    // `streq_lengthok`.
    let constant = |rng: &mut Rng, len: u64| {
        let text: String = (0..len)
            .map(|_| ['a', 'b'][rng.below(2) as usize])
            .collect();
        format!("s\"{text}\"")
    };
    let length_of_u = rng.below(3);
    let (u, same_length) = (constant(rng, length_of_u), constant(rng, n));
    let (a, b) = (maybe_null(rng, &s), maybe_null(rng, &u));
    let (u_or_null, s_or_null) = (maybe_null(rng, &u), maybe_null(rng, &s));
    let slice = format!("{s}, {start}, {length}");
    // Each helper's ops, and their results (then a character of each new
    // string, where it has one).
    let mut helpers = vec![
        format!("ie{g} = call_i(0, {a}, {b}, descr=strequaldescr)"),
        format!("in{g} = call_i(0, {s}, {u}, descr=streq_nonnull_descr)"),
        format!("io{g} = call_i(0, {s}, {same_length}, descr=streq_lengthok_descr)"),
        format!("ia{g} = call_i(0, {slice}, {u_or_null}, descr=streq_slice_checknull_descr)"),
        format!("ib{g} = call_i(0, {slice}, {u}, descr=streq_slice_nonnull_descr)"),
        format!("ih{g} = call_i(0, {slice}, {c}, descr=streq_slice_char_descr)"),
        format!("ij{g} = call_i(0, {s}, {c}, descr=streq_nonnull_char_descr)"),
        format!("ik{g} = call_i(0, {s_or_null}, {c}, descr=streq_checknull_char_descr)"),
        format!("iv{g} = call_i(0, pv{g}, px{g}, descr=strequaldescr)"),
        format!(
            "iw{g} = int_add({length}, 0)\n\
             iy{g} = call_i(0, {s}, {start}, iw{g}, px{g}, descr=streq_slice_checknull_descr)"
        ),
    ];
    let mut made = vec![
        (
            format!("pc{g} = call_r(0, {s}, {t}, descr=strconcatdescr)"),
            "strlen",
            "strgetitem",
            lengths[0] + lengths[1],
        ),
        (
            format!("pl{g} = call_r(0, {s}, {start}, {stop}, descr=strslicedescr)"),
            "strlen",
            "strgetitem",
            stop - start,
        ),
        (
            format!("pu{g} = call_r(0, {s}, descr=s2u_descr)"),
            "unicodelen",
            "unicodegetitem",
            n,
        ),
    ];
    for (k, (call, len, item, size)) in made.drain(..).enumerate() {
        let p = ["pc", "pl", "pu"][k];
        let mut op = format!("{call}\ni{p}{g} = {len}({p}{g})");
        if size > 0 {
            op += &format!("\nic{p}{g} = {item}({p}{g}, {})", rng.below(size));
        }
        helpers.push(op);
    }
    // Three of them, so that a trace stays small.
    let mut outs = Vec::new();
    for _ in 0..3 {
        let op = helpers.swap_remove(rng.below(helpers.len() as u64) as usize);
        for line in op.lines() {
            outs.push(line.split(' ').next().unwrap().to_string());
        }
        ops += &op;
        ops.push('\n');
    }
    let outs = outs
        .into_iter()
        .filter(|o| o.starts_with('i') || o.starts_with('j'));
    (ops, outs.collect())
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

/// Virtual refs: the class and fields a vref has, before and after
/// `virtual_ref_finish` (of the node it stands for, or of null).
fn vrefs(rng: &mut Rng, g: usize) -> Group {
    let target = [format!("pn{g}"), "NULL".into()][rng.below(2) as usize].clone();
    let read = |p: &str| {
        format!(
            "p{p}t{g} = getfield_gc_r(pv{g}, descr=virtualtokendescr)\n\
             i{p}t{g} = ptr_eq(p{p}t{g}, pf{g})\n\
             p{p}f{g} = getfield_gc_r(pv{g}, descr=virtualforceddescr)\n\
             i{p}f{g} = ptr_eq(p{p}f{g}, pn{g})\ni{p}z{g} = ptr_eq(p{p}f{g}, NULL)\n"
        )
    };
    let ops = format!(
        "pn{g} = new_with_vtable(descr=nodesize)\npv{g} = virtual_ref(pn{g}, {})\n\
         pf{g} = force_token()\nguard_class(pv{g}, ConstClass(jit_virtual_ref_vtable)) []\n\
         {}virtual_ref_finish(pv{g}, {target})\n{}",
        rng.below(3),
        read("a"),
        read("b")
    );
    let outs = ["iat", "iaf", "iaz", "ibt", "ibf", "ibz"].map(|p| format!("{p}{g}"));
    (ops, outs.to_vec())
}

/// Unicode strings: a new one of 1 to 4 code points, each written, a
/// copy of part of it into another, characters read back from both.
fn unicode(rng: &mut Rng, g: usize) -> Group {
    let n = 1 + rng.below(4);
    let mut ops = format!("pu{g} = newunicode({n})\npv{g} = newunicode({n})\n");
    for i in 0..n {
        let c = [rng.below(128), rng.below(0x11_0000)][rng.below(2) as usize];
        ops += &format!("unicodesetitem(pu{g}, {i}, {c})\n");
    }
    let len = rng.below(n + 1);
    let (from, to) = (rng.below(n - len + 1), rng.below(n - len + 1));
    ops += &format!("copyunicodecontent(pu{g}, pv{g}, {from}, {to}, {len})\n");
    let (i, j) = (rng.below(n), rng.below(n));
    ops += &format!(
        "ia{g} = unicodegetitem(pv{g}, {i})\nib{g} = unicodegetitem(pu{g}, {j})\n\
         il{g} = unicodelen(pv{g})\n"
    );
    (ops, ["ia", "ib", "il"].map(|p| format!("{p}{g}")).to_vec())
}

/// Floats kept in a field and an array item, read back (their bits
/// unchanged, NaNs and signed zeros included).
fn floats(rng: &mut Rng, g: usize) -> Group {
    const FLOATS: [&str; 8] = [
        "0.0", "-0.0", "1.5", "-2.25", "1e+300", "inf", "-inf", "nan",
    ];
    let mut pick = || FLOATS[rng.below(FLOATS.len() as u64) as usize];
    let (x, y, z) = (pick(), pick(), pick());
    let ops = format!(
        "pf{g} = new_with_vtable(descr=nodesize)\npa{g} = new_array_clear(2, descr=floatarraydescr)\n\
         setfield_gc(pf{g}, {x}, descr=floatdescr)\nsetarrayitem_gc(pa{g}, 1, {y}, descr=floatarraydescr)\n\
         setarrayitem_gc(pa{g}, 0, {z}, descr=floatarraydescr)\n\
         fa{g} = getfield_gc_f(pf{g}, descr=floatdescr)\nfb{g} = getarrayitem_gc_f(pa{g}, 1, descr=floatarraydescr)\n\
         fc{g} = getarrayitem_gc_f(pa{g}, 0, descr=floatarraydescr)\n"
    );
    (ops, ["fa", "fb", "fc"].map(|p| format!("{p}{g}")).to_vec())
}

/// Float arithmetic: two values (signed zeros, infinities, NaN, a
/// subnormal, inexact quotients) through a binary op, a sign op and a
/// comparison, and conversions to and from integers.
fn float_ops(rng: &mut Rng, g: usize) -> Group {
    const FLOATS: [&str; 12] = [
        "0.0",
        "-0.0",
        "1.5",
        "-2.25",
        "3.0",
        "0.1",
        "1e+300",
        "5e-324",
        "inf",
        "-inf",
        "nan",
        "9007199254740993.0",
    ];
    let mut pick = || FLOATS[rng.below(FLOATS.len() as u64) as usize];
    let (x, y) = (pick(), pick());
    let binary = ["float_add", "float_sub", "float_mul", "float_truediv"];
    let sign = ["float_neg", "float_abs"];
    let compare = [
        "float_lt", "float_le", "float_eq", "float_ne", "float_gt", "float_ge",
    ];
    let mut choose = |ops: &[&'static str]| ops[rng.below(ops.len() as u64) as usize];
    let (b, s, c) = (choose(&binary), choose(&sign), choose(&compare));
    let whole = ["-2.9", "1e+18", "-0.0", "4503599627370497.5"][rng.below(4) as usize];
    let word = rng.word();
    let ops = format!(
        "fb{g} = {b}({x}, {y})\nfs{g} = {s}(fb{g})\nic{g} = {c}(fs{g}, {x})\n\
         it{g} = cast_float_to_int({whole})\nfi{g} = cast_int_to_float({word})\n"
    );
    (
        ops,
        ["fb", "fs", "ic", "it", "fi"]
            .map(|p| format!("{p}{g}"))
            .to_vec(),
    )
}

/// Guards on references: two nodes of different classes, one maybe
/// pointing to the other, and null read from a cleared field; a guard
/// (class, non-null, null, non-null of a class, value) on one of them.
/// Each guard is chosen to pass, but for one in a batch's last group that
/// must fail (`failing`).
fn guards(rng: &mut Rng, g: usize, failing: bool) -> Group {
    let (a, b) = (format!("pa{g}"), format!("pb{g}"));
    let linked = rng.below(2) == 0;
    let mut ops =
        format!("{a} = new_with_vtable(descr=nodesize)\n{b} = new_with_vtable(descr=nodesize2)\n");
    if linked {
        ops += &format!("setfield_gc({a}, {b}, descr=nextdescr)\n");
    }
    ops += &format!("pn{g} = getfield_gc_r({a}, descr=nextdescr)\n");
    // Each subject: its name, its class (None: null) and which object it
    // is (pn is b where linked).
    let subjects = [
        (a.clone(), Some("node_vtable"), "a"),
        (b.clone(), Some("node_vtable2"), "b"),
        (
            format!("pn{g}"),
            linked.then_some("node_vtable2"),
            if linked { "b" } else { "null" },
        ),
    ];
    let outs = vec![format!("ie{g}")];
    loop {
        let (subject, class, identity) = &subjects[rng.below(3) as usize];
        let other = &subjects[rng.below(3) as usize];
        let want = ["node_vtable", "node_vtable2"][rng.below(2) as usize];
        let (guard, passes) = match rng.below(5) {
            0 => (
                format!("guard_class({subject}, ConstClass({want})) []"),
                *class == Some(want),
            ),
            1 => (format!("guard_nonnull({subject}) []"), class.is_some()),
            2 => (format!("guard_isnull({subject}) []"), class.is_none()),
            3 => (
                format!("guard_nonnull_class({subject}, ConstClass({want})) []"),
                *class == Some(want),
            ),
            _ => (
                format!("guard_value({subject}, {}) []", other.0),
                identity == &other.2,
            ),
        };
        // guard_class needs an object: only where it is not null.
        let defined = !guard.starts_with("guard_class") || class.is_some();
        if defined && passes != failing {
            ops += &format!("{guard}\nie{g} = ptr_eq({subject}, {})\n", other.0);
            return (ops, outs);
        }
    }
}

/// A trace of `groups` groups and how it ends, as the interpreter runs
/// it: the values it escapes, or `None` where a guard fails (only the last
/// group's may, with `failing`).
fn batch_of(
    family: &dyn Fn(&mut Rng, usize, bool) -> Group,
    rng: &mut Rng,
    groups: usize,
    failing: bool,
) -> (String, Option<Vec<String>>) {
    let mut text = String::from("[]\n");
    let mut outs = Vec::new();
    for g in 0..groups {
        let (ops, o) = family(rng, g, failing && g + 1 == groups);
        text += &ops;
        outs.extend(o);
    }
    text += &format!("escape_n({})\nfinish()\n", outs.join(", "));
    let trace =
        parse_trace_with(&text, "batch", Some(namespace())).unwrap_or_else(|e| panic!("{e}"));
    let run = run(&trace, &[], &mut DefaultEnv, Limits::default())
        .unwrap_or_else(|e| panic!("{e}\n{text}"));
    match run.outcome {
        Outcome::Finished { .. } => {
            assert!(!failing, "{text}");
            let values = run.escaped[0].1.iter().map(constant).collect();
            (text, Some(values))
        }
        Outcome::GuardFailed { .. } if failing => (text, None),
        other => panic!("{other:?}\n{text}"),
    }
}

/// A value as a constant of the trace format.
fn constant(v: &Val) -> String {
    match v {
        Val::Int(i) => i.to_string(),
        Val::Float(f) if f.is_nan() => "nan".into(),
        Val::Float(f) if f.is_infinite() => (if *f > 0.0 { "inf" } else { "-inf" }).into(),
        Val::Float(f) => format!("{f:?}"),
        other => panic!("{other:?}"),
    }
}

fn batch(
    family: fn(&mut Rng, usize) -> Group,
    rng: &mut Rng,
    groups: usize,
) -> (String, Vec<String>) {
    let (text, values) = batch_of(&|rng, g, _| family(rng, g), rng, groups, false);
    (text, values.unwrap())
}

fn verdict(before: &str, values: &[String], solver: &mut Solver) -> Verdict {
    verdict_of(
        before,
        &format!("[]\nescape_n({})\nfinish()\n", values.join(", ")),
        solver,
    )
}

fn verdict_of(before: &str, after: &str, solver: &mut Solver) -> Verdict {
    let ns = Some(namespace());
    let before = parse_trace_with(before, "before", ns.clone()).unwrap();
    let after = parse_trace_with(after, "after", ns).unwrap();
    verify(&before, &after, solver).unwrap()
}

/// Seconds the solver may spend on a query about one case.
const CASE_SECONDS: u64 = 60;

/// Seconds for a query about a batch of several cases.
const BATCH_SECONDS: u64 = 10;

fn solver() -> Solver {
    solver_with(CASE_SECONDS)
}

fn solver_with(seconds: u64) -> Solver {
    Solver::start(None, Duration::from_secs(seconds))
        .unwrap_or_else(|e| panic!("{e}\n(the test command installs z3: see README)"))
}

fn cross_check(name: &str, family: fn(&mut Rng, usize) -> Group, seed: u64) {
    cross_check_by(name, family, seed, GROUPS_PER_TRACE);
}

/// `cross_check`, `groups` cases to a trace.
fn cross_check_by(name: &str, family: fn(&mut Rng, usize) -> Group, seed: u64, groups: usize) {
    cross_check_part(name, family, seed, groups, (0, 1));
}

/// `cross_check_by` on part `p` of `n` of the batches (those whose index
/// is `p` modulo `n`): a family split into tests that run in parallel
/// checks the same batches, the whole generated in each.
fn cross_check_part(
    name: &str,
    family: fn(&mut Rng, usize) -> Group,
    seed: u64,
    groups: usize,
    (p, n): (usize, usize),
) {
    // A batch gets a short time: where it runs out, each of its cases is
    // checked on its own, with the full time (quicker than the rare batch
    // the solver finds hard as a whole).
    let mut batch_solver = solver_with(BATCH_SECONDS);
    let mut solver = solver();
    let mut rng = Rng(seed);
    for k in 0..cases_per_family().div_ceil(groups) {
        let start = Rng(rng.0);
        let (text, values) = batch(family, &mut rng, groups);
        // The wrong value of the first batch's check below (drawn in
        // every part, so that all parts generate the same batches).
        let wrong_at = (k == 0).then(|| rng.below(values.len() as u64) as usize);
        if k < first_batch() || k % n != p {
            continue;
        }
        let solver_for_batch = if groups > 1 {
            &mut batch_solver
        } else {
            &mut solver
        };
        match verdict(&text, &values, solver_for_batch) {
            Verdict::Proved => {}
            // Too much for the solver at once: each case on its own (the
            // same cases, from the same generator state).
            Verdict::Unknown(_) if groups > 1 => {
                let mut again = start;
                for g in 0..groups {
                    let (ops, outs) = family(&mut again, g);
                    let one = |_: &mut Rng, _, _| (ops.clone(), outs.clone());
                    let (text, values) = batch_of(&one, &mut Rng(0), 1, false);
                    match verdict(&text, &values.unwrap(), &mut solver) {
                        Verdict::Proved => {}
                        other => panic!("{name}, batch {k}, case {g}: {other:?}\n{text}"),
                    }
                }
            }
            other => panic!(
                "{name}, batch {k}: the validator disagrees: {other:?}\n{text}\nthe interpreter gives {}",
                values.join(", ")
            ),
        }
        if k % 50 == 49 && std::env::var("HEAP_CASES").is_ok() {
            // A long run says how far it got (rerun from there with
            // HEAP_FROM).
            eprintln!("{name}: batches up to {k} agree");
        }
        if let Some(i) = wrong_at {
            // The check can fail: one value off is refuted.
            let mut wrong = values.clone();
            wrong[i] = match wrong[i].parse::<i64>() {
                Ok(n) => n.wrapping_add(1).to_string(),
                Err(_) if wrong[i] == "1.0" => "2.0".into(),
                Err(_) => "1.0".into(),
            };
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
fn string_helpers_agree_with_the_interpreter() {
    // Two cases to a trace: each holds three helpers. The longest family,
    // in two tests that run in parallel: even batches here, odd ones below.
    cross_check_part("string helpers", string_helpers, STRING_HELPERS, 2, (0, 2));
}

#[test]
fn string_helpers_agree_with_the_interpreter_odd_batches() {
    cross_check_part("string helpers", string_helpers, STRING_HELPERS, 2, (1, 2));
}

const STRING_HELPERS: u64 = 0x0bad_cafe_1357_9bdf;

#[test]
fn identities_agree_with_the_interpreter() {
    cross_check("identity", identity, 0x0fed_cba9_8765_4321);
}

#[test]
fn unicode_strings_and_copies_agree_with_the_interpreter() {
    cross_check("unicode", unicode, 0x5555_aaaa_1234_4321);
}

#[test]
fn virtual_refs_agree_with_the_interpreter() {
    cross_check("vrefs", vrefs, 0x3c6e_f372_fe94_f82b);
}

#[test]
fn float_arithmetic_agrees_with_the_interpreter() {
    cross_check("float ops", float_ops, 0x6a09_e667_f3bc_c908);
}

#[test]
fn floats_in_the_heap_agree_with_the_interpreter() {
    cross_check("floats", floats, 0x7777_1111_2222_3333);
}

/// Guards on references: a batch whose guards all pass is proved equal to
/// its values; one whose last guard fails is proved equal to a trace that
/// fails `guard_true(0)` at once, and refuted against one that does not
/// fail.
#[test]
fn guards_on_references_agree_with_the_interpreter() {
    let mut solver = solver();
    let mut rng = Rng(0x3141_5926_5358_9793);
    for k in 0..cases_per_family().div_ceil(GROUPS_PER_TRACE) {
        let failing = k % 2 == 1;
        let (text, values) = batch_of(&guards, &mut rng, GROUPS_PER_TRACE, failing);
        let verdict = match &values {
            Some(values) => verdict(&text, values, &mut solver),
            None => verdict_of(&text, "[]\nguard_true(0) []\nfinish()\n", &mut solver),
        };
        assert_eq!(verdict, Verdict::Proved, "guards, batch {k}\n{text}");
        if k < 2 {
            // The check can fail: the other ending is refuted.
            let wrong = match &values {
                Some(_) => "[]\nguard_true(0) []\nfinish()\n".to_string(),
                None => "[]\nfinish()\n".to_string(),
            };
            match verdict_of(&text, &wrong, &mut solver) {
                Verdict::Refuted(_) => {}
                other => panic!("guards: a wrong ending was not refuted: {other:?}\n{text}"),
            }
        }
    }
}
