//! Proved queries remembered between local runs, so that re-running the
//! proofs after a small change only asks the solver what changed.
//!
//! A key is a SHA-256 hash (its first 128 bits) of everything the answer depends on: the text
//! of the query exactly as the solver would get it (declarations,
//! assumptions, goal: built at test time by running the current domain
//! code), the solver's name and `--version`, the proof's name, and the
//! source text of this harness and of the solver driver (which decide what
//! an answer means), taken at build time. Any change to the proved code
//! that changes what is asked changes the key. Only proofs are stored,
//! one line each (`key name`) in a file under `target/`; counterexamples
//! and timeouts are asked again every time.
//!
//! `cache_enabled` keeps it off in CI (`CI=true`) and when the
//! environment asks for a cold run (`PROOF_CACHE=off`).

use sha2::{Digest, Sha256};
use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The harness and solver driver sources, part of every key.
const HARNESS: [&str; 4] = [
    include_str!("mod.rs"),
    include_str!("prover.rs"),
    include_str!("cache.rs"),
    include_str!("../../../smt/src/solver.rs"),
];

/// Should the cache be used, given the values of `CI` and `PROOF_CACHE`?
pub fn cache_enabled(ci: Option<&str>, setting: Option<&str>) -> bool {
    let in_ci = ci.is_some_and(|v| !matches!(v, "" | "0" | "false"));
    !in_ci && !matches!(setting, Some("off" | "0" | "false"))
}

/// A hash built up piece by piece.
#[derive(Clone)]
pub struct Key(Sha256);

impl Key {
    pub fn new() -> Key {
        let mut key = Key(Sha256::new());
        for source in HARNESS {
            key.add(source);
        }
        key
    }

    /// Adds one piece of text (its length too, so pieces cannot run into
    /// each other).
    pub fn add(&mut self, text: &str) {
        self.0.update((text.len() as u64).to_le_bytes());
        self.0.update(text.as_bytes());
    }

    pub fn value(&self) -> u128 {
        let digest = self.0.clone().finalize();
        u128::from_be_bytes(digest[..16].try_into().expect("SHA-256 has 32 bytes"))
    }
}

pub struct Cache {
    path: Option<PathBuf>,
    proved: Mutex<HashSet<u128>>,
}

impl Cache {
    /// The cache stored at `path`, or none at all.
    pub fn open(path: Option<&Path>) -> Cache {
        let text = path
            .and_then(|p| std::fs::read_to_string(p).ok())
            .unwrap_or_default();
        let proved = text
            .lines()
            .filter_map(|line| line.split(' ').next())
            .filter_map(|key| u128::from_str_radix(key, 16).ok())
            .collect();
        Cache {
            path: path.map(Path::to_path_buf),
            proved: Mutex::new(proved),
        }
    }

    pub fn contains(&self, key: u128) -> bool {
        self.path.is_some() && self.proved.lock().unwrap().contains(&key)
    }

    /// Remembers a proof (appended at once: an interrupted run keeps what
    /// it proved).
    pub fn record(&self, key: u128, name: &str) {
        let Some(path) = &self.path else { return };
        if !self.proved.lock().unwrap().insert(key) {
            return;
        }
        let line = format!("{key:032x} {name}\n");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path);
        if let Ok(mut file) = file {
            let _ = file.write_all(line.as_bytes());
        }
    }
}
