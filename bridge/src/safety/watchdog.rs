//! The watchdog: joint state older than `state_timeout_ms`, or (once a supervisor's heartbeat
//! has been seen) a heartbeat gap longer than `heartbeat_timeout_ms`, is a reason to stop.
//! Times are the controller's injected clock (ns), so tests drive it without sleeping.

use super::config::SafetyConfig;

#[derive(Clone, Debug)]
pub struct Watchdog {
    state_timeout_ns: u64,
    heartbeat_timeout_ns: u64,
    last_state_ns: Option<u64>,
    last_heartbeat_ns: Option<u64>,
}

impl Watchdog {
    pub fn new(config: &SafetyConfig) -> Watchdog {
        Watchdog {
            state_timeout_ns: (config.state_timeout_ms * 1e6) as u64,
            heartbeat_timeout_ns: (config.heartbeat_timeout_ms * 1e6) as u64,
            last_state_ns: None,
            last_heartbeat_ns: None,
        }
    }

    /// The same watchdog (its last arrivals kept) with new timeouts.
    pub fn with_limits(&self, config: &SafetyConfig) -> Watchdog {
        Watchdog {
            last_state_ns: self.last_state_ns,
            last_heartbeat_ns: self.last_heartbeat_ns,
            ..Watchdog::new(config)
        }
    }

    pub fn on_state(&mut self, now_ns: u64) {
        self.last_state_ns = Some(now_ns);
    }

    pub fn on_heartbeat(&mut self, now_ns: u64) {
        self.last_heartbeat_ns = Some(now_ns);
    }

    /// Whether any joint state has arrived yet.
    pub fn has_state(&self) -> bool {
        self.last_state_ns.is_some()
    }

    /// Why the arm must stop now, if it must.
    pub fn check(&self, now_ns: u64) -> Option<String> {
        match self.last_state_ns {
            None => return Some("no joint state received yet".into()),
            Some(t) if now_ns.saturating_sub(t) > self.state_timeout_ns => {
                return Some(format!(
                    "joint state is {:.1} ms old (limit {:.1} ms)",
                    now_ns.saturating_sub(t) as f64 / 1e6,
                    self.state_timeout_ns as f64 / 1e6
                ))
            }
            _ => {}
        }
        match self.last_heartbeat_ns {
            Some(t) if now_ns.saturating_sub(t) > self.heartbeat_timeout_ns => Some(format!(
                "no heartbeat for {:.1} ms (limit {:.1} ms)",
                now_ns.saturating_sub(t) as f64 / 1e6,
                self.heartbeat_timeout_ns as f64 / 1e6
            )),
            _ => None,
        }
    }
}
