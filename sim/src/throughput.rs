//! Where a program's time and simulation go: process-wide counters of simulated work (every
//! control period any episode ends adds one, with its physics steps) and the process's CPU
//! time, read around a phase by a [`Meter`] into [`PhaseFigures`].
//!
//! The counters are process-wide: runs side by side in one process (tests in threads) add up,
//! so the figures are for reports, never for decisions. CPU time comes from `/proc/self/stat`
//! (Linux); elsewhere it is `None`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use serde::{Deserialize, Serialize};

static CONTROL_STEPS: AtomicU64 = AtomicU64::new(0);
static PHYSICS_STEPS: AtomicU64 = AtomicU64::new(0);

/// `/proc`'s clock tick (USER_HZ): 100 on every Linux ABI.
const TICKS_PER_S: f64 = 100.0;

/// Counts one ended control period of `physics_steps` physics steps.
pub fn count_control_period(physics_steps: usize) {
    CONTROL_STEPS.fetch_add(1, Ordering::Relaxed);
    PHYSICS_STEPS.fetch_add(physics_steps as u64, Ordering::Relaxed);
}

/// Control periods and physics steps simulated by this process so far.
pub fn simulated() -> (u64, u64) {
    (
        CONTROL_STEPS.load(Ordering::Relaxed),
        PHYSICS_STEPS.load(Ordering::Relaxed),
    )
}

/// User + system CPU time of this process so far, s (all threads); `None` off Linux.
pub fn process_cpu_s() -> Option<f64> {
    cpu_s_of("self")
}

/// User + system CPU time so far of process `pid` (a number, or `self`), s; `None` off Linux
/// or when there is no such process.
pub fn cpu_s_of(pid: &str) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name (which may hold spaces) start at field 3 (state);
    // utime and stime are fields 14 and 15.
    let rest = stat.rsplit_once(')')?.1;
    let mut fields = rest.split_whitespace().skip(11);
    let utime: f64 = fields.next()?.parse().ok()?;
    let stime: f64 = fields.next()?.parse().ok()?;
    Some((utime + stime) / TICKS_PER_S)
}

/// One phase's wall time, CPU time and simulated control steps.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PhaseFigures {
    /// Phase name (`explore`, `train`, …).
    pub phase: String,
    pub wall_s: f64,
    /// Process CPU time over the phase, s (`None` where it cannot be read).
    pub cpu_s: Option<f64>,
    /// Control steps simulated in the phase (by every episode of the process).
    pub control_steps: u64,
}

impl PhaseFigures {
    /// Control steps per second of wall time.
    pub fn control_steps_per_s(&self) -> f64 {
        self.control_steps as f64 / self.wall_s.max(1e-9)
    }

    /// CPU time ÷ (wall time × `threads`): 1.0 keeps every thread busy.
    pub fn busy_fraction(&self, threads: usize) -> Option<f64> {
        self.cpu_s
            .map(|c| c / (self.wall_s * threads.max(1) as f64).max(1e-9))
    }
}

/// Reads the counters and clocks at the start of a phase.
#[derive(Clone, Copy, Debug)]
pub struct Meter {
    start: Instant,
    cpu_s: Option<f64>,
    control_steps: u64,
}

impl Meter {
    /// Starts measuring now.
    pub fn start() -> Self {
        Self {
            start: Instant::now(),
            cpu_s: process_cpu_s(),
            control_steps: simulated().0,
        }
    }

    /// The phase `phase` from the start until now.
    pub fn stop(&self, phase: &str) -> PhaseFigures {
        let cpu_s = match (self.cpu_s, process_cpu_s()) {
            (Some(a), Some(b)) => Some((b - a).max(0.0)),
            _ => None,
        };
        PhaseFigures {
            phase: phase.to_owned(),
            wall_s: self.start.elapsed().as_secs_f64(),
            cpu_s,
            control_steps: simulated().0.saturating_sub(self.control_steps),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meter_counts_periods_and_cpu() {
        let meter = Meter::start();
        count_control_period(20);
        let mut x = 0u64;
        for i in 0..3_000_000u64 {
            x = x.wrapping_add(i * i) ^ (x >> 3);
        }
        std::hint::black_box(x);
        let f = meter.stop("spin");
        assert!(f.control_steps >= 1, "{f:?}");
        assert!(f.wall_s > 0.0);
        if cfg!(target_os = "linux") {
            let cpu = f.cpu_s.expect("Linux has /proc/self/stat");
            assert!(cpu >= 0.0 && f.busy_fraction(1).is_some(), "{f:?}");
        }
    }
}
