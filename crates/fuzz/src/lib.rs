//! traceopt's fuzzer: random traces (`gen`), written as editable
//! sketches (`sketch`), checked by an oracle of differential runs and the
//! SMT validator (`oracle`), cut down when they fail (`shrink`), in
//! campaigns on several threads (`campaign`); or existing traces, mutated
//! (`mutate`). Heap traces (`heapgen`) run with calls that do what their
//! effect info allows (`env`). Seed 000 did this by hand
//! "for many nights"; here it is a command.

pub mod campaign;
pub mod entropy;
pub mod env;
pub mod flight;
pub mod gen;
pub mod heapgen;
pub mod mutate;
pub mod oracle;
pub mod shrink;
pub mod sketch;

pub use campaign::{run, Counters, Options, Report, Summary};
pub use gen::{generate, generate_from_bytes, Config, Mix};
pub use oracle::{check, Cleared, Finding};
pub use sketch::{ExampleObject, ExampleValue, Sketch};
