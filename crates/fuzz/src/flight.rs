//! The flight record: what each campaign worker is doing, written to a
//! file that another process reads after this one has died or stopped
//! answering.
//!
//! A stack overflow or an abort in the optimizer kills the whole process,
//! with no panic to catch, and an optimizer that never returns holds its
//! worker forever. So `traceopt fuzz` runs its campaign in a child process
//! that keeps this record, and watches it: when the child dies, or one of
//! its workers has been inside the optimizer for too long, the record
//! says which seed's trace was being optimized, and whether it was the
//! seed's own trace or a smaller one made while shrinking a finding.
//!
//! One slot of three little-endian `u64`s per worker: the seed, the
//! state (0 idle, 1 checking the seed's trace, 2 shrinking its finding),
//! and the wall-clock time in milliseconds since the Unix epoch at which
//! the worker entered the optimizer (0: not in it). A slot is written
//! with one positioned write, so a reader sees each field whole. Without
//! a record (`open` never called) every function here does nothing.

use std::cell::Cell;
use std::fs::File;
use std::io;
use std::path::Path;
use std::sync::OnceLock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const SLOT: usize = 24;

static RECORD: OnceLock<File> = OnceLock::new();

thread_local! {
    /// This thread's worker slot and what it last wrote there.
    static WORKER: Cell<Option<(u64, u64, State)>> = const { Cell::new(None) };
}

/// What a worker is doing with its seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Idle,
    /// Checking the trace the seed gives.
    Checking,
    /// Shrinking the seed's finding: the trace being optimized is a
    /// smaller one than the seed's.
    Shrinking,
}

/// One worker's slot, as read back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub worker: usize,
    pub seed: u64,
    pub state: State,
    /// How long the worker has been inside the optimizer, if it is.
    pub optimizing_for: Option<Duration>,
}

/// Starts keeping the record in `path` (created or emptied), for the rest
/// of the process.
pub fn open(path: &Path) -> io::Result<()> {
    let file = File::create(path)?;
    RECORD
        .set(file)
        .map_err(|_| io::Error::other("the flight record is already open"))
}

/// Marks this thread as worker `index`.
pub fn set_worker(index: usize) {
    WORKER.with(|w| w.set(Some((index as u64, 0, State::Idle))));
}

/// Notes what this thread's worker does next.
pub fn note(seed: u64, state: State) {
    WORKER.with(|w| {
        if let Some((index, _, _)) = w.get() {
            w.set(Some((index, seed, state)));
            write_slot(index, seed, state, 0);
        }
    });
}

/// Runs `optimize`, with the time it started in the record meanwhile.
pub fn optimizing<T>(optimize: impl FnOnce() -> T) -> T {
    let Some((index, seed, state)) = WORKER.with(Cell::get).filter(|_| RECORD.get().is_some())
    else {
        return optimize();
    };
    write_slot(index, seed, state, now_ms().max(1));
    let result = optimize();
    write_slot(index, seed, state, 0);
    result
}

fn write_slot(index: u64, seed: u64, state: State, since_ms: u64) {
    let Some(file) = RECORD.get() else { return };
    let state = match state {
        State::Idle => 0u64,
        State::Checking => 1,
        State::Shrinking => 2,
    };
    let mut slot = [0u8; SLOT];
    for (k, field) in [seed, state, since_ms].into_iter().enumerate() {
        slot[8 * k..8 * k + 8].copy_from_slice(&field.to_le_bytes());
    }
    // A record that cannot be written only leaves a crash less explained.
    #[cfg(unix)]
    let _ = std::os::unix::fs::FileExt::write_all_at(file, &slot, index * SLOT as u64);
    #[cfg(not(unix))]
    let _ = (file, slot, index);
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// The workers' slots in the record at `path`, busy ones only.
pub fn read(path: &Path) -> io::Result<Vec<Entry>> {
    let bytes = std::fs::read(path)?;
    let now = now_ms();
    let field =
        |slot: &[u8], k: usize| u64::from_le_bytes(slot[8 * k..8 * k + 8].try_into().unwrap());
    Ok(bytes
        .chunks_exact(SLOT)
        .enumerate()
        .filter_map(|(worker, slot)| {
            let state = match field(slot, 1) {
                1 => State::Checking,
                2 => State::Shrinking,
                _ => return None,
            };
            let since = field(slot, 2);
            Some(Entry {
                worker,
                seed: field(slot, 0),
                state,
                optimizing_for: (since != 0)
                    .then(|| Duration::from_millis(now.saturating_sub(since))),
            })
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A worker number no campaign of this test binary uses: the record
    /// is the whole process's.
    const WORKER: usize = 1000;

    fn mine(path: &Path) -> Vec<Entry> {
        let entries = read(path).unwrap();
        entries.into_iter().filter(|e| e.worker == WORKER).collect()
    }

    #[test]
    fn slots_read_back_as_written() {
        let path = std::env::temp_dir().join(format!("traceopt-flight-{}", std::process::id()));
        open(&path).unwrap();
        let inside = std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    set_worker(WORKER);
                    note(42, State::Checking);
                    optimizing(|| mine(&path))
                })
                .join()
                .unwrap()
        });
        assert_eq!(inside.len(), 1);
        assert_eq!((inside[0].seed, inside[0].state), (42, State::Checking));
        assert!(inside[0].optimizing_for.is_some());
        // Out of the optimizer, the slot says so.
        let after = mine(&path);
        assert_eq!((after.len(), after[0].optimizing_for), (1, None));
        // An idle worker is left out.
        std::thread::spawn(|| {
            set_worker(WORKER);
            note(7, State::Idle);
        })
        .join()
        .unwrap();
        assert!(mine(&path).is_empty());
        // A thread that is no worker writes nothing.
        note(9, State::Shrinking);
        optimizing(|| ());
        assert!(read(&path).unwrap().iter().all(|e| e.seed != 9));
        std::fs::remove_file(&path).unwrap();
    }
}
