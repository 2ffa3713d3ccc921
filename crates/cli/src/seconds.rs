//! Options in seconds (`--timeout`, `--time`, `--solver-timeout`): one
//! clap value parser for every command, so that no value a `Duration`
//! cannot hold (negative, NaN, infinite, 1e30) gets past the arguments.

use std::time::Duration;

/// The longest time any option takes, in seconds (about 11.5 days).
pub const MAX_SECONDS: f64 = 1_000_000.0;

/// A number of seconds from 0 to `MAX_SECONDS` (a clap value parser).
pub fn seconds(text: &str) -> Result<Duration, String> {
    parse_seconds(text, true)
}

/// A number of seconds more than 0, at most `MAX_SECONDS`.
pub fn positive_seconds(text: &str) -> Result<Duration, String> {
    parse_seconds(text, false)
}

fn parse_seconds(text: &str, zero: bool) -> Result<Duration, String> {
    let range = if zero {
        "from 0 to"
    } else {
        "more than 0, at most"
    };
    text.trim()
        .parse::<f64>()
        .ok()
        // Negative, too large, infinite and NaN values are in no range.
        .filter(|s| (0.0..=MAX_SECONDS).contains(s))
        .map(Duration::from_secs_f64)
        .filter(|d| zero || !d.is_zero())
        .ok_or_else(|| format!("give a number of seconds {range} {MAX_SECONDS} (e.g. 10 or 0.5)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_go_from_zero_to_the_maximum() {
        assert_eq!(seconds("0"), Ok(Duration::ZERO));
        assert_eq!(positive_seconds(" 0.5 "), Ok(Duration::from_millis(500)));
        assert_eq!(
            positive_seconds("1000000"),
            Ok(Duration::from_secs(1_000_000))
        );
        for bad in ["0", "1e-12", "1000000.5", "-0.5", "inf", "NaN", ""] {
            assert!(positive_seconds(bad).is_err(), "{bad}");
        }
    }
}
