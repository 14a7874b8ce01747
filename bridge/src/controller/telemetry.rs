//! Control-loop latency: a fixed-size ring of recent tick durations (no allocation per tick)
//! with percentiles computed when a status message is built.

/// Upper edges (µs) of the latency histogram's buckets; one more bucket holds the rest.
pub const LATENCY_BUCKETS_US: [f32; 7] = [50.0, 100.0, 200.0, 500.0, 1000.0, 2000.0, 5000.0];

/// Recent tick durations in microseconds.
#[derive(Clone, Debug)]
pub struct LatencyWindow {
    samples_us: Vec<f32>,
    next: usize,
    filled: bool,
    max_us: f32,
    scratch: Vec<f32>,
}

impl LatencyWindow {
    pub fn new(capacity: usize) -> LatencyWindow {
        LatencyWindow {
            samples_us: vec![0.0; capacity.max(1)],
            next: 0,
            filled: false,
            max_us: 0.0,
            scratch: Vec::with_capacity(capacity.max(1)),
        }
    }

    pub fn record(&mut self, us: f32) {
        self.samples_us[self.next] = us;
        self.next = (self.next + 1) % self.samples_us.len();
        self.filled |= self.next == 0;
        self.max_us = self.max_us.max(us);
    }

    pub fn len(&self) -> usize {
        if self.filled {
            self.samples_us.len()
        } else {
            self.next
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// (p50, p99, max since start) in microseconds; zeros when empty.
    pub fn percentiles(&mut self) -> (f32, f32, f32) {
        let n = self.len();
        if n == 0 {
            return (0.0, 0.0, 0.0);
        }
        self.scratch.clear();
        self.scratch.extend_from_slice(&self.samples_us[..n]);
        self.scratch.sort_by(f32::total_cmp);
        let at = |p: f64| self.scratch[((n - 1) as f64 * p).round() as usize];
        (at(0.5), at(0.99), self.max_us)
    }

    /// Counts of the recent ticks per [`LATENCY_BUCKETS_US`] bucket (and one over the last).
    pub fn histogram(&self) -> Vec<u32> {
        let mut counts = vec![0u32; LATENCY_BUCKETS_US.len() + 1];
        for us in &self.samples_us[..self.len()] {
            let bucket = LATENCY_BUCKETS_US
                .iter()
                .position(|edge| us <= edge)
                .unwrap_or(LATENCY_BUCKETS_US.len());
            counts[bucket] += 1;
        }
        counts
    }
}
