//! The peephole rules of `rules/*.rules`, compiled by `build.rs` into a
//! decision-tree matcher (see `traceopt_rules::compile`). `rewrite` tries
//! them on one op; `RULES` names them, for statistics.

include!(concat!(env!("OUT_DIR"), "/rules.rs"));
