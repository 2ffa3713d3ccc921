//! `seeds DIR FIRST COUNT [BYTES]`: writes the fuzz target's inputs for
//! the campaign's seeds FIRST.. FIRST+COUNT-1, integer traces for even
//! seeds and heap traces for odd ones: a mode byte, then BYTES (default
//! 1024) bytes of the seed's choices. They start libFuzzer where a
//! campaign starts, and measure what the campaign's own traces reach.

use std::path::PathBuf;

use traceopt_fuzz::entropy::seed_bytes;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(dir), Some(first), Some(count)) = (args.first(), args.get(1), args.get(2)) else {
        eprintln!("usage: seeds DIR FIRST COUNT [BYTES]");
        std::process::exit(2);
    };
    let number = |s: &str| -> u64 {
        s.parse().unwrap_or_else(|_| {
            eprintln!("not a number: {s}");
            std::process::exit(2)
        })
    };
    let (first, count) = (number(first), number(count));
    let len = args.get(3).map_or(1024, |s| number(s) as usize);
    let dir = PathBuf::from(dir);
    std::fs::create_dir_all(&dir).expect("the corpus directory");
    for seed in first..first + count {
        let mut input = vec![(seed & 1) as u8];
        input.extend(seed_bytes(seed, len));
        std::fs::write(dir.join(format!("seed-{seed}")), input).expect("a corpus file");
    }
}
