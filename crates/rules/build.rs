//! Fingerprints the code a rule's proof depends on: the sources of this
//! crate (the rule semantics and the encoder), of the SMT layer (terms,
//! op encodings, the solver driver) and of the domains (the bounds the
//! checks ask about). The proof cache keys every verdict with it
//! (`prove::ENCODING_FINGERPRINT`), so any change to that code proves
//! again instead of reusing old verdicts.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        panic!("cannot read {}", dir.display());
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files(&path, out);
        } else {
            out.push(path);
        }
    }
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let crates = manifest.join("..");
    let mut hash = Sha256::new();
    for krate in ["rules", "smt", "domains"] {
        let dir = crates.join(krate).join("src");
        println!("cargo:rerun-if-changed={}", dir.display());
        let mut found = Vec::new();
        files(&dir, &mut found);
        found.sort();
        for path in found {
            let name = path
                .strip_prefix(&crates)
                .unwrap_or(&path)
                .to_string_lossy();
            let text = std::fs::read(&path).expect("reading a source file");
            for part in [name.as_bytes(), &text] {
                hash.update((part.len() as u64).to_le_bytes());
                hash.update(part);
            }
        }
    }
    let digest = hash.finalize();
    let hex: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
    println!("cargo:rustc-env=TRACEOPT_ENCODING_FINGERPRINT={hex}");
}
