//! The heap peer set (`../shared/peer/heap/dev.txt`, PyPy's heap,
//! virtual-object and string cases), the cases PyPy optimizes without
//! unrolling: every output is proved equivalent to its input (guard by
//! guard, else end to end), and the number of cases where we emit no more
//! ops than PyPy's expected output may not drop below what it is now
//! (118 of the 130 cases that parse; `traceopt opt` over the file counts
//! 116 of 128, as its checker skips two more). The cases above PyPy are
//! printed with both op counts.

mod common;

use std::sync::Arc;
use traceopt_ir::peer::read_peer;
use traceopt_ir::Namespace;

#[test]
fn heap_peer_outputs_are_proved_and_most_no_longer_than_pypy() {
    let dir = traceopt_ir::shared_dir().join("peer/heap");
    let dir = dir.display();
    let read = |name: &str| {
        std::fs::read_to_string(format!("{dir}/{name}"))
            .unwrap_or_else(|e| panic!("{dir}/{name}: {e} (the shared peer set beside the repo)"))
    };
    let namespace = Arc::new(Namespace::parse(&read("descrs.txt"), "descrs.txt").unwrap());
    let set = read_peer(&read("dev.txt"), "dev.txt", Some(namespace));
    let cases: Vec<_> = (set.cases.iter())
        .filter(|c| !c.meta.iter().any(|(_, v)| v.contains("unroll")) && !c.name.contains("unroll"))
        .collect();
    let total = cases.len();
    assert!(total >= 128, "only {total} well-formed non-unrolled cases");
    let score = common::score_peer_cases(cases);
    let not_proved = score.not_proved.join("\n");
    assert!(score.not_proved.is_empty(), "not proved:\n{not_proved}");
    let at_or_below = score.at_or_below;
    eprintln!(
        "{at_or_below} of {total} at or below PyPy's op count; above:\n{}",
        score.above.join("\n")
    );
    assert!(
        at_or_below >= 118,
        "only {at_or_below} of {total} at or below PyPy"
    );
}
