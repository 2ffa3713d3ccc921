//! The optimizer under libFuzzer: the input's first byte chooses integer
//! or heap traces, the rest are the generator's choices
//! (`traceopt_fuzz::entropy`); the trace is optimized and both traces run
//! on the example and on sampled inputs (the campaign's oracle without
//! the solver, for speed). A finding panics with the trace, which
//! libFuzzer saves as a crash input. `TRACEOPT_INJECT_BUG=name` switches
//! on one of the optimizer's injected bugs, to see the fuzzer find it.

#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use traceopt_fuzz::campaign::samples;
use traceopt_fuzz::{check, generate_from_bytes, Config};
use traceopt_opt::{Bug, Passes};

fn passes() -> Passes {
    static PASSES: OnceLock<Passes> = OnceLock::new();
    *PASSES.get_or_init(|| {
        let bug = std::env::var("TRACEOPT_INJECT_BUG").ok().map(|name| {
            Bug::from_name(&name).unwrap_or_else(|| panic!("no injected bug named {name}"))
        });
        Passes {
            bug,
            ..Passes::default()
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, choices)) = data.split_first() else {
        return;
    };
    let config = Config {
        heap: mode & 1 == 1,
        ..Config::default()
    };
    let sketch = generate_from_bytes(choices, &config);
    let trace = sketch.trace().expect("generated traces parse");
    let inputs = samples(data.len() as u64, &sketch, 4);
    if let Err(finding) = check(&trace, &sketch.heap, &sketch.example(), &inputs, passes(), None) {
        panic!("{finding}\n{}", sketch.text());
    }
});
