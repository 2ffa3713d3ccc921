//! Where the generators' choices come from: a seeded PRNG (campaigns:
//! trace k is seed + k), or the bytes of a coverage-guided fuzzer's input
//! (`fuzz/`, cargo-fuzz), read as the PRNG's output would be. A byte
//! string is then a trace: libFuzzer's mutations of it change some of
//! the generator's choices and keep the rest, and its coverage feedback
//! keeps the inputs that reach new code of the optimizer. Past the end of
//! the bytes, choices come from a PRNG seeded by their length.
//!
//! The bytes `StdRng::seed_from_u64(s)` would give (`seed_bytes`) make
//! the same trace as seed `s`, so a campaign's traces can be handed to
//! the coverage-guided fuzzer as its starting corpus, and the reach of
//! both measured on the same instrumented build.

use std::convert::Infallible;

use rand::rngs::StdRng;
use rand::{SeedableRng, TryRng};

/// The generators' source of choices.
#[derive(Debug)]
pub enum Entropy<'a> {
    Seeded(StdRng),
    Bytes {
        data: &'a [u8],
        /// Where the next choice is read.
        at: usize,
        /// What comes after the bytes.
        rest: StdRng,
    },
}

impl<'a> Entropy<'a> {
    pub fn seeded(seed: u64) -> Entropy<'static> {
        Entropy::Seeded(StdRng::seed_from_u64(seed))
    }

    pub fn bytes(data: &'a [u8]) -> Entropy<'a> {
        Entropy::Bytes {
            data,
            at: 0,
            rest: StdRng::seed_from_u64(data.len() as u64),
        }
    }

    /// The next `N` bytes of choices.
    fn next_bytes<const N: usize>(&mut self) -> [u8; N] {
        let mut bytes = [0; N];
        let Ok(()) = self.try_fill_bytes(&mut bytes);
        bytes
    }
}

/// The first `len` bytes seed `seed` gives the generators.
pub fn seed_bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut out = vec![0; len];
    let Ok(()) = rng.try_fill_bytes(&mut out);
    out
}

impl TryRng for Entropy<'_> {
    type Error = Infallible;

    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        match self {
            Entropy::Seeded(rng) => rng.try_next_u32(),
            _ => Ok(u32::from_le_bytes(self.next_bytes())),
        }
    }

    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        match self {
            Entropy::Seeded(rng) => rng.try_next_u64(),
            _ => Ok(u64::from_le_bytes(self.next_bytes())),
        }
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        match self {
            Entropy::Seeded(rng) => rng.try_fill_bytes(dst),
            Entropy::Bytes { data, at, rest } => {
                let take = dst.len().min(data.len() - *at);
                dst[..take].copy_from_slice(&data[*at..*at + take]);
                *at += take;
                rest.try_fill_bytes(&mut dst[take..])
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::{generate, generate_from_bytes, Config};

    #[test]
    fn a_seeds_bytes_make_the_seeds_trace() {
        for heap in [false, true] {
            let config = Config {
                heap,
                ..Config::default()
            };
            for seed in 0..40 {
                let bytes = seed_bytes(seed, 1 << 16);
                let (from_seed, from_bytes) = (
                    generate(seed, &config),
                    generate_from_bytes(&bytes, &config),
                );
                assert_eq!(
                    from_seed.text(),
                    from_bytes.text(),
                    "seed {seed}, heap {heap}"
                );
                // Other bytes, another trace.
                let other = generate_from_bytes(&seed_bytes(seed + 1000, 1 << 16), &config);
                assert_ne!(from_seed.text(), other.text(), "seed {seed}, heap {heap}");
            }
        }
    }

    #[test]
    fn bytes_are_read_in_order_then_the_rest_follows() {
        let mut e = Entropy::bytes(&[1, 0, 0, 0, 2, 0]);
        assert_eq!(e.try_next_u32(), Ok(1));
        // Two bytes left: the rest of the word comes from the PRNG.
        let word = e.try_next_u32().unwrap();
        assert_eq!(word & 0xffff, 2);
        let mut after = StdRng::seed_from_u64(6);
        let mut tail = [0u8; 2];
        let Ok(()) = after.try_fill_bytes(&mut tail);
        assert_eq!(word >> 16, u32::from(u16::from_le_bytes(tail)));
    }
}
