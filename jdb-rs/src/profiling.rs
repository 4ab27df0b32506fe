//! Profiling settings shared by the `profile` command and the one-shot `jdb-rs profile`: the
//! defaults and how durations are written.

use std::time::Duration;

/// Sampling interval when none is given (HPROF's default was 10 ms too).
pub const DEFAULT_INTERVAL: Duration = Duration::from_millis(10);
/// Traces listed by `profile report` when no count is given.
pub const DEFAULT_TOP: usize = 20;

/// Bytes between allocation samples when none is given: JVMTI's default, 512 KiB. Each sample
/// takes a stack, so denser sampling costs in proportion (see BENCHMARKS.md: at 32 KiB an
/// allocation-bound program ran about twice as long); ask for less with `profile alloc start N`.
pub const DEFAULT_ALLOC_INTERVAL: i32 = 512 * 1024;

/// `10ms`, `1s`, `500us`, `2m`; a bare number is seconds.
pub fn parse_duration(text: &str) -> Option<Duration> {
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let value: f64 = number.parse().ok()?;
    let seconds = match unit {
        "" | "s" => value,
        "ms" => value / 1e3,
        "us" | "µs" => value / 1e6,
        "m" | "min" => value * 60.0,
        _ => return None,
    };
    (seconds.is_finite() && seconds > 0.0).then(|| Duration::from_secs_f64(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_take_units() {
        assert_eq!(parse_duration("10ms"), Some(Duration::from_millis(10)));
        assert_eq!(parse_duration("500us"), Some(Duration::from_micros(500)));
        assert_eq!(parse_duration("2"), Some(Duration::from_secs(2)));
        assert_eq!(parse_duration("1m"), Some(Duration::from_secs(60)));
        assert_eq!(parse_duration("0"), None);
        assert_eq!(parse_duration("10 parsecs"), None);
        assert_eq!(parse_duration(""), None);
    }
}
