//! A tiny deterministic generator (SplitMix64) for reproducible sampling without `rand`.

#[derive(Debug, Clone)]
pub(crate) struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in [lower, upper]; an infinite side is replaced so that the interval spans
    /// at most 2π (e.g. [-π, π] for a continuous joint).
    pub fn in_limits(&mut self, lower: f64, upper: f64) -> f64 {
        use std::f64::consts::{PI, TAU};
        let (lo, hi) = match (lower.is_finite(), upper.is_finite()) {
            (true, true) => (lower, upper),
            (true, false) => (lower, lower + TAU),
            (false, true) => (upper - TAU, upper),
            (false, false) => (-PI, PI),
        };
        lo + (hi - lo) * self.next_f64()
    }
}
