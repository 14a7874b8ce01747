//! The safety filter between any policy and the motors. It turns a joint target (or nothing:
//! brake and hold) into the next joint position command of a jerk-limited trajectory that
//! never leaves its limits, whatever the target.
//!
//! The commanded trajectory is integrated with the control period `dt`:
//! `a' ∈ [a − j·dt, a + j·dt] ∩ [−a_max, a_max]`, `v' = v + a'·dt`, `q' = q + v'·dt`, so the
//! command differences are exactly the velocity, acceleration and jerk that are bounded.
//! Position limits, velocity limits and the end-effector box are kept by look-ahead: a step is
//! taken only if braking from the state it leads to (a fixed, deterministic jerk-limited
//! braking law) stays inside every limit until the arm is at rest. Braking from a state that
//! passed the check is the continuation of the checked trajectory, so a safe step always
//! exists: the filter blends the step toward the target with the braking step by bisection.

use std::sync::Arc;

use robots::Manipulator;

use super::config::{SafetyConfig, SafetyLimits};
use crate::error::{BridgeError, Result};
use crate::protocol::LimitHits;

/// Velocity and acceleration below which a braking arm counts as at rest.
const REST_EPS: f64 = 1e-9;
/// Braking look-ahead horizon (control periods); not at rest by then counts as unsafe.
const MAX_BRAKE_STEPS: usize = 4000;
/// Bisection steps between the braking step and the step toward the target.
const BISECTION_STEPS: usize = 12;
/// Bisection steps for the acceleration that stops a joint on its target.
const TRACK_BISECTION_STEPS: usize = 30;

/// The braking law: drive acceleration so the velocity reaches zero as acceleration does
/// (`v + a|a|/2j → 0`), within the jerk window and the acceleration bound.
fn brake_accel(v: f64, a: f64, a_max: f64, j_dt: f64, dt: f64, j: f64) -> f64 {
    let want = -(v + a * a.abs() / (2.0 * j)) / dt;
    want.clamp(a - j_dt, a + j_dt).clamp(-a_max, a_max)
}

/// Where one joint comes to rest if it takes acceleration `a1` for one period from `(q, v)` and
/// then follows the braking law.
fn stop_position(q: f64, v: f64, a1: f64, a_max: f64, j: f64, dt: f64) -> f64 {
    let j_dt = j * dt;
    let (mut q, mut v, mut a) = (q, v, a1);
    v += a * dt;
    q += v * dt;
    for _ in 0..MAX_BRAKE_STEPS {
        if v.abs() < REST_EPS && a.abs() < REST_EPS {
            break;
        }
        a = brake_accel(v, a, a_max, j_dt, dt, j);
        v += a * dt;
        q += v * dt;
    }
    q
}

#[derive(Debug)]
pub struct SafetyFilter {
    pub limits: SafetyLimits,
    robot: Arc<Manipulator>,
    dt_s: f64,
    min_period_ns: u64,
    q: Vec<f64>,
    v: Vec<f64>,
    a: Vec<f64>,
    gripper: f64,
    initialized: bool,
    last_emit_ns: Option<u64>,
    // Scratch buffers (no allocation per tick).
    a_target: Vec<f64>,
    a_brake: Vec<f64>,
    a_try: Vec<f64>,
    sim_q: Vec<f64>,
    sim_v: Vec<f64>,
    sim_a: Vec<f64>,
    pub hits: LimitHits,
}

impl SafetyFilter {
    /// A filter for `robot` running every `1 / rate_hz` seconds.
    pub fn new(robot: Arc<Manipulator>, config: &SafetyConfig, rate_hz: f64) -> Result<Self> {
        if !(rate_hz.is_finite() && rate_hz > 0.0) {
            return Err(BridgeError::config(
                "rate_hz",
                format!("{rate_hz} must be > 0"),
            ));
        }
        let limits = SafetyLimits::from_model(&robot, config)?;
        let n = limits.dof();
        Ok(SafetyFilter {
            limits,
            robot,
            dt_s: 1.0 / rate_hz,
            min_period_ns: (1e9 / config.max_command_rate_hz) as u64,
            q: vec![0.0; n],
            v: vec![0.0; n],
            a: vec![0.0; n],
            gripper: 1.0,
            initialized: false,
            last_emit_ns: None,
            a_target: vec![0.0; n],
            a_brake: vec![0.0; n],
            a_try: vec![0.0; n],
            sim_q: vec![0.0; n],
            sim_v: vec![0.0; n],
            sim_a: vec![0.0; n],
            hits: LimitHits::default(),
        })
    }

    pub fn dt_s(&self) -> f64 {
        self.dt_s
    }

    /// Starts the commanded trajectory at rest at the measured configuration (clamped into
    /// the limits).
    pub fn reset(&mut self, q_measured_rad: &[f64], gripper_opening: f64) -> Result<()> {
        if q_measured_rad.len() != self.limits.dof()
            || q_measured_rad.iter().any(|q| !q.is_finite())
        {
            return Err(BridgeError::config(
                "joint state",
                format!(
                    "{} finite joint positions expected, got {:?}",
                    self.limits.dof(),
                    q_measured_rad
                ),
            ));
        }
        for (i, q) in q_measured_rad.iter().enumerate() {
            self.q[i] = q.clamp(self.limits.q_min_rad[i], self.limits.q_max_rad[i]);
        }
        self.v.fill(0.0);
        self.a.fill(0.0);
        self.gripper = if gripper_opening.is_finite() {
            gripper_opening.clamp(0.0, 1.0)
        } else {
            1.0
        };
        self.initialized = true;
        Ok(())
    }

    pub fn is_initialized(&self) -> bool {
        self.initialized
    }

    /// The commanded joint positions, velocities and accelerations.
    pub fn q_cmd_rad(&self) -> &[f64] {
        &self.q
    }
    pub fn v_cmd_rad_s(&self) -> &[f64] {
        &self.v
    }
    pub fn a_cmd_rad_s2(&self) -> &[f64] {
        &self.a
    }
    pub fn gripper_cmd(&self) -> f64 {
        self.gripper
    }

    /// Whether the commanded trajectory is at rest.
    pub fn at_rest(&self) -> bool {
        self.v.iter().chain(&self.a).all(|x| x.abs() < REST_EPS)
    }

    /// Advances one control period toward `target_q_rad` (`None`: brake and hold). Returns
    /// whether a command should be sent (false before `reset` or when rate-limited).
    pub fn step(&mut self, target_q_rad: Option<&[f64]>, gripper_target: f64, now_ns: u64) -> bool {
        if !self.initialized {
            return false;
        }
        if let Some(last) = self.last_emit_ns {
            if now_ns.saturating_sub(last) < self.min_period_ns {
                self.hits.rate += 1;
                return false;
            }
        }
        self.last_emit_ns = Some(now_ns);
        let n = self.limits.dof();
        let target = match target_q_rad {
            Some(t) if t.len() == n && t.iter().all(|x| x.is_finite()) => Some(t),
            Some(_) => {
                self.hits.non_finite += 1;
                None
            }
            None => None,
        };
        if gripper_target.is_finite() {
            self.gripper = gripper_target.clamp(0.0, 1.0);
        } else {
            self.hits.non_finite += 1;
        }
        let (dt, j, a_max) = self.dynamics();
        let j_dt = j * dt;
        for i in 0..n {
            let (v, a) = (self.v[i], self.a[i]);
            self.a_brake[i] = brake_accel(v, a, a_max, j_dt, dt, j);
            self.a_target[i] = match target {
                Some(t) => {
                    let (lo, hi) = (self.limits.q_min_rad[i], self.limits.q_max_rad[i]);
                    let goal = t[i].clamp(lo, hi);
                    if goal != t[i] {
                        self.hits.position += 1;
                    }
                    self.track_accel(i, goal)
                }
                None => self.a_brake[i],
            };
        }
        // Largest blend toward the target whose look-ahead is safe (0 = braking).
        let mut best = 0.0;
        if self.safe_with(1.0) {
            best = 1.0;
        } else {
            let (mut lo, mut hi) = (0.0, 1.0);
            for _ in 0..BISECTION_STEPS {
                let mid = 0.5 * (lo + hi);
                if self.safe_with(mid) {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            best = f64::max(best, lo);
            if target.is_some() {
                self.count_blocking_limit();
            }
        }
        for i in 0..n {
            let a = self.a_brake[i] + best * (self.a_target[i] - self.a_brake[i]);
            self.a[i] = a;
            self.v[i] += a * dt;
            self.q[i] += self.v[i] * dt;
            // A guard only: the look-ahead keeps positions inside already.
            self.q[i] = self.q[i].clamp(self.limits.q_min_rad[i], self.limits.q_max_rad[i]);
        }
        if self.at_rest() {
            self.v.fill(0.0);
            self.a.fill(0.0);
        }
        true
    }

    /// The next acceleration of joint `i` toward `goal`: a step onto it where the bounds allow
    /// one; else full push while braking from the step it leads to still stops short of the
    /// goal, otherwise the acceleration whose braking stop lands on the goal (bisection; the stop is monotone in the acceleration), so the joint
    /// arrives as fast as its bounds allow and never overshoots a target that holds still.
    fn track_accel(&self, i: usize, goal: f64) -> f64 {
        let (dt, j, a_max) = self.dynamics();
        let j_dt = j * dt;
        let (q, v, a) = (self.q[i], self.v[i], self.a[i]);
        let mut lo = (a - j_dt).max(-a_max);
        let mut hi = (a + j_dt).min(a_max);
        // Stay inside the velocity bound where the jerk window allows it.
        let v_max = self.limits.v_max_rad_s[i];
        let (v_lo, v_hi) = ((-v_max - v) / dt, (v_max - v) / dt);
        if v_lo <= hi && v_hi >= lo {
            lo = lo.max(v_lo);
            hi = hi.min(v_hi);
        }
        // Land on the goal next tick and stay there when the bounds allow it: the command
        // steps like the targets a simulator-trained policy expects, and a settling joint
        // comes exactly to rest instead of dithering.
        let v1 = (goal - q) / dt;
        let (a1, a2) = ((v1 - v) / dt, -v1 / dt);
        if v1.abs() <= v_max
            && a1.abs() <= a_max
            && a2.abs() <= a_max
            && (a1 - a).abs() <= j_dt
            && (a2 - a1).abs() <= j_dt
            && a2.abs() <= j_dt
        {
            return a1;
        }
        let overshoot = |a1: f64| stop_position(q, v, a1, a_max, j, dt) - goal;
        if overshoot(hi) <= 0.0 {
            return hi;
        }
        if overshoot(lo) >= 0.0 {
            return lo;
        }
        for _ in 0..TRACK_BISECTION_STEPS {
            let mid = 0.5 * (lo + hi);
            if overshoot(mid) > 0.0 {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        0.5 * (lo + hi)
    }

    /// Attributes a blocked step to the limit that braking would have hit.
    fn count_blocking_limit(&mut self) {
        let n = self.limits.dof();
        let mut velocity = false;
        for i in 0..n {
            let v1 = self.v[i] + self.a_target[i] * self.dt_s;
            if v1.abs() >= self.limits.v_max_rad_s[i] * 0.999 {
                velocity = true;
            }
        }
        if velocity {
            self.hits.velocity += 1;
        } else if self.inside_box(&self.q) {
            self.hits.acceleration += 1;
        } else {
            self.hits.workspace += 1;
        }
    }

    /// Control period (s), jerk bound and acceleration bound.
    fn dynamics(&self) -> (f64, f64, f64) {
        (
            self.dt_s,
            self.limits.j_max_rad_s3,
            self.limits.a_max_rad_s2,
        )
    }

    fn inside_box(&self, q: &[f64]) -> bool {
        let p = self.robot.fk(q).translation.vector;
        (0..3).all(|k| {
            p[k] >= self.limits.workspace_min_m[k] && p[k] <= self.limits.workspace_max_m[k]
        })
    }

    fn state_ok(&self, q: &[f64], v: &[f64]) -> bool {
        let l = &self.limits;
        (0..l.dof()).all(|i| {
            q[i] >= l.q_min_rad[i] && q[i] <= l.q_max_rad[i] && v[i].abs() <= l.v_max_rad_s[i]
        }) && self.inside_box(q)
    }

    /// Takes the step blended `alpha` of the way from braking to the target and brakes from
    /// there; true when every state on the way stays inside the limits and it comes to rest.
    fn safe_with(&mut self, alpha: f64) -> bool {
        let n = self.limits.dof();
        let (dt, j, a_max) = self.dynamics();
        let j_dt = j * dt;
        for i in 0..n {
            self.a_try[i] = self.a_brake[i] + alpha * (self.a_target[i] - self.a_brake[i]);
        }
        let mut q = std::mem::take(&mut self.sim_q);
        let mut v = std::mem::take(&mut self.sim_v);
        let mut a = std::mem::take(&mut self.sim_a);
        for i in 0..n {
            a[i] = self.a_try[i];
            v[i] = self.v[i] + a[i] * dt;
            q[i] = self.q[i] + v[i] * dt;
        }
        let mut ok = self.state_ok(&q, &v);
        let mut steps = 0;
        while ok && !(v.iter().chain(&a[..]).all(|x| x.abs() < REST_EPS)) {
            steps += 1;
            if steps > MAX_BRAKE_STEPS {
                ok = false;
                break;
            }
            for i in 0..n {
                a[i] = brake_accel(v[i], a[i], a_max, j_dt, dt, j);
                v[i] += a[i] * dt;
                q[i] += v[i] * dt;
            }
            ok = self.state_ok(&q, &v);
        }
        self.sim_q = q;
        self.sim_v = v;
        self.sim_a = a;
        ok
    }
}
