//! Names of the values the optimizer makes: a letter and a number (`i12`,
//! `r7`), the number from a counter that starts past the input's count of
//! values and skips the names the input has of that form (its names need
//! not follow its value numbers, so a counter alone could meet one, and
//! the output would define a name twice).
//!
//! A peeled loop's body names all its values so, its counter going on
//! from where its preamble's stopped: the two copies of the loop, each
//! naming its values after the same input, then never meet.

use compact_str::{CompactString, ToCompactString};
use rustc_hash::FxHashSet;

/// The names of a trace a fresh name could meet: of a letter and a
/// number, past its count of values.
pub(crate) struct TakenNames {
    numbers: FxHashSet<(char, u32)>,
}

impl TakenNames {
    /// Those of `names`, the names of a trace of `values` values.
    pub(crate) fn of(names: &[CompactString], values: usize) -> TakenNames {
        // Only numbers past the counter's start can be met; a name with
        // fewer digits has none (a short cut: most have fewer).
        let first = values as u32;
        let digits = first.checked_ilog10().unwrap_or(0) as usize + 1;
        let numbers = (names.iter())
            .filter(|name| name.len() > digits)
            .filter_map(|name| letter_and_number(name))
            .filter(|&(_, n)| n > first)
            .collect();
        TakenNames { numbers }
    }

    /// The next name of `letter` and a number, counting on from
    /// `counter`, that is not taken.
    pub(crate) fn fresh(&self, letter: char, counter: &mut u32) -> CompactString {
        loop {
            *counter += 1;
            if !self.numbers.contains(&(letter, *counter)) {
                return numbered_name(letter, *counter);
            }
        }
    }
}

/// The name `letter` then `number` (`i12`): what `letter_and_number`
/// reads back.
fn numbered_name(letter: char, number: u32) -> CompactString {
    let mut name = CompactString::const_new("");
    name.push(letter);
    name.push_str(&number.to_compact_string());
    name
}

/// A name of the form `i12` as ('i', 12): a letter, then a number written
/// as `format!` writes it (no leading zero).
fn letter_and_number(name: &str) -> Option<(char, u32)> {
    let mut chars = name.chars();
    let letter = chars.next()?;
    let digits = chars.as_str().as_bytes();
    let canonical = !digits.is_empty() && (digits == b"0" || digits[0] != b'0');
    if !canonical {
        return None;
    }
    // (Read digit by digit: every input name is looked at, once a fresh
    // name is wanted.)
    let mut number: u32 = 0;
    for &b in digits {
        let digit = b.wrapping_sub(b'0');
        if digit > 9 {
            return None;
        }
        number = number.checked_mul(10)?.checked_add(u32::from(digit))?;
    }
    Some((letter, number))
}
