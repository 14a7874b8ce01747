//! Safety limits: the configurable part (`SafetyConfig`, serde, every default documented) and
//! the per-joint limits it resolves to against a robot model (`SafetyLimits::from_model`).

use serde::{Deserialize, Serialize};

use crate::error::{BridgeError, Result};
use robots::Manipulator;

/// What the safety filter enforces. A bundle may carry its own `SafetyConfig`; the controller
/// then enforces the tighter of the two, field by field (`tightest`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SafetyConfig {
    /// Kept clear of each URDF position limit (rad). Default 0.02.
    pub position_margin_rad: f64,
    /// Fraction of each joint's URDF velocity limit that commands may use. Default 1.0.
    pub velocity_fraction: f64,
    /// Bound on the commanded position trajectory's acceleration (rad/s²); the arm's own
    /// servo then follows that trajectory. Default 400: the simulator trains policies whose
    /// joint targets step every control period and a position servo that follows them, so the
    /// commands must be allowed to step too. Measured on held-out reach variants with the arm
    /// following every 100 Hz command (`bridge/examples/lockstep.rs`): 40 → 0.45, 100 → 0.60,
    /// 200 → 0.85, 400 → 0.95–1.00 against 1.00 in the simulator. Tighten it (and the jerk
    /// bound) for a gentler arm, at that cost until policies are trained with those bounds.
    pub max_accel_rad_s2: f64,
    /// Bound on the commanded trajectory's jerk (rad/s³). Default 400 000 (at 100 Hz the
    /// acceleration may change sign within a tick; 40 000 cost 5–10 points of success).
    pub max_jerk_rad_s3: f64,
    /// Axis-aligned box the end effector must stay in, in the robot base frame (m).
    /// Default x, y in [-0.95, 0.95], z in [-0.02, 1.2] (above the mounting surface).
    pub workspace_min_m: [f64; 3],
    pub workspace_max_m: [f64; 3],
    /// Joint state older than this trips the watchdog (ms). Default 100.
    pub state_timeout_ms: f64,
    /// Once a heartbeat has been seen, a gap longer than this trips the watchdog (ms).
    /// Default 1000.
    pub heartbeat_timeout_ms: f64,
    /// Commands closer together than 1 / this are dropped (Hz). Default 1000.
    pub max_command_rate_hz: f64,
    /// A newly activated policy is blended in over this long (s). Default 1.0.
    pub ramp_in_s: f64,
}

impl Default for SafetyConfig {
    fn default() -> Self {
        SafetyConfig {
            position_margin_rad: 0.02,
            velocity_fraction: 1.0,
            max_accel_rad_s2: 400.0,
            max_jerk_rad_s3: 400_000.0,
            workspace_min_m: [-0.95, -0.95, -0.02],
            workspace_max_m: [0.95, 0.95, 1.2],
            state_timeout_ms: 100.0,
            heartbeat_timeout_ms: 1000.0,
            max_command_rate_hz: 1000.0,
            ramp_in_s: 1.0,
        }
    }
}

impl SafetyConfig {
    /// Every field finite and in range; the workspace box not inverted.
    pub fn validate(&self) -> Result<()> {
        let positive = |v: f64, field: &str| -> Result<()> {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(BridgeError::config(
                    format!("safety.{field}"),
                    format!("{v} must be finite and > 0"),
                ))
            }
        };
        if !(self.position_margin_rad.is_finite() && self.position_margin_rad >= 0.0) {
            return Err(BridgeError::config(
                "safety.position_margin_rad",
                "must be finite and >= 0",
            ));
        }
        if !(self.velocity_fraction > 0.0 && self.velocity_fraction <= 1.0) {
            return Err(BridgeError::config(
                "safety.velocity_fraction",
                format!("{} must be in (0, 1]", self.velocity_fraction),
            ));
        }
        positive(self.max_accel_rad_s2, "max_accel_rad_s2")?;
        positive(self.max_jerk_rad_s3, "max_jerk_rad_s3")?;
        positive(self.state_timeout_ms, "state_timeout_ms")?;
        positive(self.heartbeat_timeout_ms, "heartbeat_timeout_ms")?;
        positive(self.max_command_rate_hz, "max_command_rate_hz")?;
        if !(self.ramp_in_s.is_finite() && self.ramp_in_s >= 0.0) {
            return Err(BridgeError::config(
                "safety.ramp_in_s",
                "must be finite and >= 0",
            ));
        }
        for i in 0..3 {
            let (lo, hi) = (self.workspace_min_m[i], self.workspace_max_m[i]);
            if !(lo.is_finite() && hi.is_finite() && lo < hi) {
                return Err(BridgeError::config(
                    "safety.workspace_min_m/workspace_max_m",
                    format!("axis {i}: [{lo}, {hi}] is empty, inverted or not finite"),
                ));
            }
        }
        Ok(())
    }

    /// The tighter of two configurations, field by field (the box is intersected).
    pub fn tightest(&self, other: &SafetyConfig) -> SafetyConfig {
        let mut out = SafetyConfig {
            position_margin_rad: self.position_margin_rad.max(other.position_margin_rad),
            velocity_fraction: self.velocity_fraction.min(other.velocity_fraction),
            max_accel_rad_s2: self.max_accel_rad_s2.min(other.max_accel_rad_s2),
            max_jerk_rad_s3: self.max_jerk_rad_s3.min(other.max_jerk_rad_s3),
            workspace_min_m: self.workspace_min_m,
            workspace_max_m: self.workspace_max_m,
            state_timeout_ms: self.state_timeout_ms.min(other.state_timeout_ms),
            heartbeat_timeout_ms: self.heartbeat_timeout_ms.min(other.heartbeat_timeout_ms),
            max_command_rate_hz: self.max_command_rate_hz.min(other.max_command_rate_hz),
            ramp_in_s: self.ramp_in_s.max(other.ramp_in_s),
        };
        for i in 0..3 {
            out.workspace_min_m[i] = self.workspace_min_m[i].max(other.workspace_min_m[i]);
            out.workspace_max_m[i] = self.workspace_max_m[i].min(other.workspace_max_m[i]);
        }
        out
    }
}

/// Per-joint bounds resolved against a robot: what the filter actually enforces.
#[derive(Clone, Debug, PartialEq)]
pub struct SafetyLimits {
    pub q_min_rad: Vec<f64>,
    pub q_max_rad: Vec<f64>,
    pub v_max_rad_s: Vec<f64>,
    pub a_max_rad_s2: f64,
    pub j_max_rad_s3: f64,
    pub workspace_min_m: [f64; 3],
    pub workspace_max_m: [f64; 3],
}

impl SafetyLimits {
    /// Limits from the URDF (position limits shrunk by the margin, velocity limits scaled)
    /// and the config. Joints without finite limits get ±2π and 1 rad/s.
    pub fn from_model(robot: &Manipulator, config: &SafetyConfig) -> Result<SafetyLimits> {
        config.validate()?;
        let mut limits = SafetyLimits {
            q_min_rad: Vec::new(),
            q_max_rad: Vec::new(),
            v_max_rad_s: Vec::new(),
            a_max_rad_s2: config.max_accel_rad_s2,
            j_max_rad_s3: config.max_jerk_rad_s3,
            workspace_min_m: config.workspace_min_m,
            workspace_max_m: config.workspace_max_m,
        };
        for (i, l) in robot.arm_limits().iter().enumerate() {
            let lo = if l.lower.is_finite() {
                l.lower
            } else {
                -std::f64::consts::TAU
            };
            let hi = if l.upper.is_finite() {
                l.upper
            } else {
                std::f64::consts::TAU
            };
            let (lo, hi) = (
                lo + config.position_margin_rad,
                hi - config.position_margin_rad,
            );
            if lo >= hi {
                return Err(BridgeError::config(
                    "safety.position_margin_rad",
                    format!("leaves no room on arm joint {i} ([{lo}, {hi}])"),
                ));
            }
            let v = if l.velocity.is_finite() && l.velocity > 0.0 {
                l.velocity
            } else {
                1.0
            };
            limits.q_min_rad.push(lo);
            limits.q_max_rad.push(hi);
            limits.v_max_rad_s.push(v * config.velocity_fraction);
        }
        Ok(limits)
    }

    pub fn dof(&self) -> usize {
        self.q_min_rad.len()
    }
}
