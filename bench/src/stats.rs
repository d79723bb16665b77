//! Latency samples and their summary.

use std::time::Duration;

/// Latencies in microseconds, and how long the run that produced them took.
#[derive(Default)]
pub struct Samples {
    pub micros: Vec<u64>,
    pub errors: u64,
    pub elapsed: Duration,
}

/// What a table row shows.
#[derive(Clone, Copy)]
pub struct Summary {
    pub per_second: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub errors: u64,
}

impl Samples {
    pub fn merge(&mut self, other: Samples) {
        self.micros.extend(other.micros);
        self.errors += other.errors;
        self.elapsed = self.elapsed.max(other.elapsed);
    }

    pub fn summary(&mut self) -> Summary {
        self.micros.sort_unstable();
        let secs = self.elapsed.as_secs_f64().max(f64::EPSILON);
        Summary {
            per_second: self.micros.len() as f64 / secs,
            p50_ms: percentile(&self.micros, 0.50),
            p99_ms: percentile(&self.micros, 0.99),
            errors: self.errors,
        }
    }
}

/// The nearest-rank percentile of sorted microseconds, in milliseconds.
fn percentile(sorted: &[u64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1] as f64 / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<u64> = (1..=100).map(|i| i * 1000).collect();
        assert_eq!(percentile(&v, 0.50), 50.0);
        assert_eq!(percentile(&v, 0.99), 99.0);
        assert_eq!(percentile(&[7000], 0.99), 7.0);
        assert!(percentile(&[], 0.5).is_nan());
    }
}
