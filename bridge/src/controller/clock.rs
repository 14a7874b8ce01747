//! When the control thread steps: read–update–write like ros2_control. A step runs as soon as
//! a fresh joint state arrives once it is nearly due, so the command answers the state it was
//! computed from before the arm's driver starts its next cycle (a free-running timer adds up
//! to a control period of latency, which cost simulator-trained policies 5–15 points of
//! success). Late or missing state falls back to a timer at the control rate, so the watchdog
//! and braking keep running.

/// Weight of the newest arrival interval in the running estimate of the driver's period.
const INTERVAL_GAIN: f64 = 0.1;

#[derive(Clone, Debug)]
pub struct TickClock {
    period_ns: f64,
    last_tick_ns: u64,
    /// Running estimate of the interval between joint states, at most a period.
    interval_ns: f64,
    last_state_ns: Option<u64>,
}

impl TickClock {
    pub fn new(rate_hz: f64, now_ns: u64) -> TickClock {
        let period_ns = 1e9 / rate_hz;
        TickClock {
            period_ns,
            last_tick_ns: now_ns,
            interval_ns: period_ns,
            last_state_ns: None,
        }
    }

    /// When the next step runs if no state triggers it first: a period after the last one,
    /// plus half a driver interval of grace while states are flowing (so a step lands on a
    /// state and stays locked to the stream).
    pub fn deadline_ns(&self) -> u64 {
        let flowing = self
            .last_state_ns
            .is_some_and(|s| s as f64 + 2.0 * self.period_ns >= self.last_tick_ns as f64);
        let grace = if flowing { self.interval_ns / 2.0 } else { 0.0 };
        self.last_tick_ns + (self.period_ns + grace) as u64
    }

    /// A joint state arrived: true when it should trigger a step now (a step is due within
    /// half a driver interval). A driver faster than the control rate triggers one step per
    /// period; one at the control rate triggers every step.
    pub fn on_state(&mut self, now_ns: u64) -> bool {
        if let Some(prev) = self.last_state_ns {
            let dt = now_ns.saturating_sub(prev) as f64;
            self.interval_ns += INTERVAL_GAIN * (dt.min(self.period_ns) - self.interval_ns);
        }
        self.last_state_ns = Some(now_ns);
        now_ns as f64 >= self.last_tick_ns as f64 + self.period_ns - self.interval_ns / 2.0
    }

    /// A step ran at `now_ns`.
    pub fn ticked(&mut self, now_ns: u64) {
        self.last_tick_ns = now_ns;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    /// Simulates `duration_ms` of states every `state_every_ns` (from `phase_ns`, with an
    /// alternating jitter) against a 100 Hz clock; returns (step times, state-driven steps).
    fn run(state_every_ns: u64, phase_ns: u64, jitter_ns: u64, until_ns: u64) -> (Vec<u64>, usize) {
        let mut clock = TickClock::new(100.0, 0);
        let mut steps = Vec::new();
        let mut by_state = 0;
        let mut k = 0u64;
        let mut next_state = phase_ns;
        loop {
            let deadline = clock.deadline_ns();
            if next_state.min(deadline) > until_ns {
                break;
            }
            if next_state <= deadline {
                let now = next_state;
                k += 1;
                next_state =
                    phase_ns + k * state_every_ns + if k.is_multiple_of(2) { jitter_ns } else { 0 };
                if clock.on_state(now) {
                    clock.ticked(now);
                    steps.push(now);
                    by_state += 1;
                }
            } else {
                clock.ticked(deadline);
                steps.push(deadline);
            }
        }
        (steps, by_state)
    }

    #[test]
    fn steps_lock_onto_a_driver_at_the_control_rate() {
        // States 3.7 ms out of phase with the clock, with ±0.8 ms jitter.
        let (steps, by_state) = run(10 * MS, 3_700_000, 800_000, 1000 * MS);
        assert!(steps.len() >= 99 && steps.len() <= 101, "{}", steps.len());
        assert!(by_state >= steps.len() - 2, "{by_state} of {}", steps.len());
    }

    #[test]
    fn a_faster_driver_still_gets_the_control_rate() {
        let (steps, by_state) = run(2 * MS, 300_000, 0, 1000 * MS);
        assert!(steps.len() >= 95 && steps.len() <= 101, "{}", steps.len());
        assert!(by_state >= steps.len() - 2);
    }

    #[test]
    fn without_state_the_timer_keeps_the_rate() {
        let (steps, by_state) = run(u64::MAX / 4, u64::MAX / 4, 0, 1000 * MS);
        assert_eq!(by_state, 0);
        assert_eq!(steps.len(), 100);
    }
}
