//! Inverse kinematics: damped least squares (Levenberg-Marquardt style) within joint limits.
//!
//! Each iteration evaluates the Jacobian once and tries damped steps
//! `dq = Jᵀ (J Jᵀ + λ² I)⁻¹ e`, with λ = mu · min(`damping`, ‖e‖) (Gauss-Newton-like near the
//! target), `dq` scaled so that no joint moves more than `max_step_rad`, the result clamped to
//! the limits (joints pinned at a limit are taken out of the step). A step is accepted only if
//! it lowers the weighted error; otherwise mu grows. An attempt that stops making progress
//! (a local minimum, e.g. the wrong elbow/shoulder branch) is restarted from the best of
//! several deterministic random configurations. The result is the best configuration seen,
//! so the same call always returns the same answer.
//!
//! An arm with fewer than six joints cannot reach every orientation at every position (a
//! 5-DOF arm cannot tilt its tool sideways out of its arm plane). Its steps are prioritised:
//! the position is solved first, and the orientation only within the joint motions that leave
//! the position alone, so the orientation axis it cannot reach is given up instead of being
//! traded against position.

use nalgebra::{DMatrix, DVector, Isometry3, Vector3};
use serde::{Deserialize, Serialize};

use crate::manipulator::{clamp_to, Manipulator};
use crate::model::JointLimits;
use crate::rng::SplitMix64;

/// Options for [`Manipulator::ik`]. Missing fields deserialize to their defaults.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct IkConfig {
    /// Damped-least-squares damping λ far from the target (near it ‖e‖ is used when smaller;
    /// raised automatically after a step that does not reduce the error). Default 0.05.
    pub damping: f64,
    /// Iteration budget, restarts included. Default 100.
    pub max_iterations: usize,
    /// Position tolerance (m). Default 1e-4.
    pub tol_pos_m: f64,
    /// Orientation tolerance (rad). Default 1e-3.
    pub tol_rot_rad: f64,
    /// Largest change of any joint per iteration (rad, or m for prismatic joints). Default 0.2.
    pub max_step_rad: f64,
    /// Weight of the orientation error (rad) against the position error (m); 0 solves for
    /// position only. Default 1.0.
    pub orientation_weight: f64,
}

impl Default for IkConfig {
    fn default() -> Self {
        Self {
            damping: 0.05,
            max_iterations: 100,
            tol_pos_m: 1e-4,
            tol_rot_rad: 1e-3,
            max_step_rad: 0.2,
            orientation_weight: 1.0,
        }
    }
}

/// Result of [`Manipulator::ik`]: the best configuration found (within the joint limits).
#[derive(Clone, Debug, PartialEq)]
pub struct IkSolution {
    pub q_rad: Vec<f64>,
    /// Both errors are within tolerance (orientation ignored when its weight is 0).
    pub converged: bool,
    pub iterations: usize,
    /// ‖p_target − p_ee‖ (m).
    pub pos_err_m: f64,
    /// Angle of `root_from_target · ee_from_root` rotation (rad).
    pub rot_err_rad: f64,
}

/// Iterations without a 10 % improvement of the attempt's best cost before a restart.
const STALL_LIMIT: usize = 3;
/// Random configurations scored per restart (forward kinematics only, not iterations).
const RESTART_CANDIDATES: usize = 256;
/// Trial steps (with growing damping) per iteration before the attempt is abandoned.
const TRIALS_PER_ITERATION: usize = 6;
/// Under position priority, the rotation's share of the cost (per unit orientation weight):
/// 1 rad of orientation error costs as much as 10 mm of position error, so a step is accepted
/// for the orientation only where it keeps the position.
const PRIORITY_ROT_WEIGHT: f64 = 0.01;

/// Progress of one attempt (from the seed or from a restart).
struct Attempt {
    best_cost: f64,
    since_progress: usize,
}

impl Attempt {
    fn new(r: &Residual) -> Self {
        Self {
            best_cost: r.cost(),
            since_progress: 0,
        }
    }

    /// Counts an iteration; true when the attempt should be abandoned.
    fn stalled(&mut self, r: &Residual) -> bool {
        if r.cost() < 0.8 * self.best_cost {
            self.best_cost = r.cost();
            self.since_progress = 0;
        } else {
            self.since_progress += 1;
        }
        self.since_progress >= STALL_LIMIT
    }
}

impl Manipulator {
    /// Solves for arm joint positions that put the end effector at `root_from_target`,
    /// starting from `q_seed_rad` (missing entries take `home_q_rad`). Never panics; when it
    /// does not converge it returns the best configuration seen.
    pub fn ik(
        &self,
        root_from_target: &Isometry3<f64>,
        q_seed_rad: &[f64],
        cfg: &IkConfig,
    ) -> IkSolution {
        self.solver(root_from_target, cfg, true).solve(q_seed_rad)
    }

    /// [`Manipulator::ik`] without restarts: damped least squares from `q_seed_rad` only,
    /// so the answer stays on the seed's branch (the nearest configuration it can reach).
    /// For servoing a small end-effector step, where a restart's far-away configuration
    /// would make the arm whip across its workspace.
    pub fn ik_local(
        &self,
        root_from_target: &Isometry3<f64>,
        q_seed_rad: &[f64],
        cfg: &IkConfig,
    ) -> IkSolution {
        self.solver(root_from_target, cfg, false).solve(q_seed_rad)
    }

    /// One servo step of the commanded arm targets `q_target_rad` towards `root_from_target`:
    /// [`Manipulator::ik_local`] from the targets, each joint's change capped at its velocity
    /// limit times `dt_s` (no cap where the model gives none), then the position limits.
    /// False (targets unchanged) when the solver returns a non-finite configuration.
    pub fn servo_step(
        &self,
        q_target_rad: &mut [f64],
        root_from_target: &Isometry3<f64>,
        cfg: &IkConfig,
        dt_s: f64,
    ) -> bool {
        let solution = self.ik_local(root_from_target, q_target_rad, cfg);
        if !solution.q_rad.iter().all(|q| q.is_finite()) {
            return false;
        }
        for ((q, s), l) in q_target_rad
            .iter_mut()
            .zip(&solution.q_rad)
            .zip(self.arm_limits())
        {
            let max_step = if l.velocity.is_finite() && l.velocity > 0.0 {
                l.velocity * dt_s
            } else {
                f64::INFINITY
            };
            *q = clamp_to(*q + (s - *q).clamp(-max_step, max_step), &l);
        }
        true
    }

    fn solver<'a>(
        &'a self,
        root_from_target: &'a Isometry3<f64>,
        cfg: &'a IkConfig,
        restarts: bool,
    ) -> Solver<'a> {
        let weight = if cfg.orientation_weight.is_finite() {
            cfg.orientation_weight.max(0.0)
        } else {
            1.0
        };
        Solver {
            manipulator: self,
            target: root_from_target,
            cfg,
            restarts,
            limits: self.arm_limits(),
            weight,
            prioritise_position: weight > 0.0 && self.dof() < 6,
        }
    }
}

struct Solver<'a> {
    manipulator: &'a Manipulator,
    target: &'a Isometry3<f64>,
    cfg: &'a IkConfig,
    limits: Vec<JointLimits>,
    weight: f64,
    /// Restart from random configurations when an attempt stalls (else stop there).
    restarts: bool,
    /// Fewer than six arm joints: position first, orientation in what is left.
    prioritise_position: bool,
}

#[derive(Clone)]
struct Residual {
    /// Weighted error vector: position (m) then weighted rotation vector (3 or 6 rows).
    e: DVector<f64>,
    /// Unweighted position (m) and rotation-vector (rad) errors, root frame.
    pos: Vector3<f64>,
    rot: Vector3<f64>,
    pos_err_m: f64,
    rot_err_rad: f64,
}

impl Residual {
    fn cost(&self) -> f64 {
        self.e.norm_squared()
    }
}

impl Solver<'_> {
    fn solve(&self, q_seed_rad: &[f64]) -> IkSolution {
        let mut q: Vec<f64> = (0..self.limits.len())
            .map(|i| {
                let seed = q_seed_rad.get(i).or(self.manipulator.home_q_rad.get(i));
                let value = seed.copied().filter(|v| v.is_finite()).unwrap_or(0.0);
                clamp_to(value, &self.limits[i])
            })
            .collect();
        let mut r = self.residual(&q);
        let mut best = (q.clone(), r.clone());
        // Damping = mu * min(λ, ‖e‖): λ far from the target, shrinking to Gauss-Newton near
        // it; mu grows after a rejected step (Levenberg-Marquardt) and decays after a good one.
        let mut mu = 1.0;
        let mut attempt = Attempt::new(&r);
        let mut rng = SplitMix64::new(0x5EED_1C0F_FEE0_0001);
        let mut iterations = 0;
        while !self.converged(&r) && iterations < self.cfg.max_iterations {
            iterations += 1;
            let jac = self.weighted_jacobian(&q, r.e.len());
            let mut accepted = false;
            for _ in 0..TRIALS_PER_ITERATION {
                let damping = mu * self.min_damping().min(r.cost().sqrt()).max(1e-9);
                let q_new = self.step(&q, &r, &jac, damping);
                let r_new = self.residual(&q_new);
                if r_new.cost() < r.cost() {
                    q = q_new;
                    r = r_new;
                    mu = (mu * 0.5).max(1.0);
                    accepted = true;
                    break;
                }
                mu *= 4.0;
            }
            if r.cost() < best.1.cost() {
                best = (q.clone(), r.clone());
            }
            if !self.converged(&r) && (attempt.stalled(&r) || !accepted) {
                if !self.restarts {
                    break;
                }
                (q, r) = self.restart_seed(&mut rng);
                mu = 1.0;
                attempt = Attempt::new(&r);
            }
        }
        let (q_rad, r) = best;
        IkSolution {
            converged: self.converged(&r),
            q_rad,
            iterations,
            pos_err_m: r.pos_err_m,
            rot_err_rad: r.rot_err_rad,
        }
    }

    /// The best (lowest cost) of [`RESTART_CANDIDATES`] random configurations within the
    /// limits (forward kinematics only).
    fn restart_seed(&self, rng: &mut SplitMix64) -> (Vec<f64>, Residual) {
        let mut sample = || {
            let q: Vec<f64> = self
                .limits
                .iter()
                .map(|l| rng.in_limits(l.lower, l.upper))
                .collect();
            let r = self.residual(&q);
            (q, r)
        };
        let mut best = sample();
        for _ in 1..RESTART_CANDIDATES {
            let candidate = sample();
            if candidate.1.cost() < best.1.cost() {
                best = candidate;
            }
        }
        best
    }

    fn min_damping(&self) -> f64 {
        if self.cfg.damping.is_finite() && self.cfg.damping > 0.0 {
            self.cfg.damping
        } else {
            0.05
        }
    }

    fn converged(&self, r: &Residual) -> bool {
        r.pos_err_m <= self.cfg.tol_pos_m
            && (self.weight == 0.0 || r.rot_err_rad <= self.cfg.tol_rot_rad)
    }

    fn residual(&self, q: &[f64]) -> Residual {
        let ee = self.manipulator.fk(q);
        let pos: Vector3<f64> = self.target.translation.vector - ee.translation.vector;
        let rot: Vector3<f64> = (self.target.rotation * ee.rotation.inverse()).scaled_axis();
        let e = if self.weight == 0.0 {
            DVector::from_column_slice(pos.as_slice())
        } else {
            let w = if self.prioritise_position {
                rot * (self.weight * PRIORITY_ROT_WEIGHT)
            } else {
                rot * self.weight
            };
            DVector::from_column_slice(&[pos.x, pos.y, pos.z, w.x, w.y, w.z])
        };
        Residual {
            e,
            pos,
            rot,
            pos_err_m: pos.norm(),
            rot_err_rad: rot.norm(),
        }
    }

    /// The Jacobian with its rotation rows scaled by the orientation weight (3 rows when the
    /// weight is 0; unscaled under position priority, whose step weighs nothing).
    fn weighted_jacobian(&self, q: &[f64], rows: usize) -> DMatrix<f64> {
        let jac = self.manipulator.jacobian(q);
        let mut jw = DMatrix::<f64>::zeros(rows, q.len());
        for c in 0..q.len() {
            for row in 0..rows {
                let scale = if row < 3 || self.prioritise_position {
                    1.0
                } else {
                    self.weight
                };
                jw[(row, c)] = jac[(row, c)] * scale;
            }
        }
        jw
    }

    /// One damped-least-squares step from `q`, clamped to the limits. Joints at a limit that
    /// the step would push further out are frozen and the step is recomputed.
    fn step(&self, q: &[f64], r: &Residual, jw: &DMatrix<f64>, damping: f64) -> Vec<f64> {
        let n = q.len();
        let mut frozen = vec![false; n];
        let mut dq = DVector::zeros(n);
        for _ in 0..=n {
            let mut jf = jw.clone();
            for (c, _) in frozen.iter().enumerate().filter(|(_, f)| **f) {
                jf.column_mut(c).fill(0.0);
            }
            let solved = if self.prioritise_position {
                prioritised_step(&jf, r, damping)
            } else {
                damped_solve(&jf, &r.e, damping)
            };
            let Some(step) = solved else { break };
            dq = step;
            let mut changed = false;
            for (i, l) in self.limits.iter().enumerate() {
                let at_lower = q[i] <= l.lower + 1e-12 && dq[i] < 0.0;
                let at_upper = q[i] >= l.upper - 1e-12 && dq[i] > 0.0;
                if !frozen[i] && (at_lower || at_upper) {
                    frozen[i] = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        let largest = dq.amax();
        let max_step = self.cfg.max_step_rad;
        if max_step.is_finite() && max_step > 0.0 && largest > max_step {
            dq *= max_step / largest;
        }
        q.iter()
            .zip(dq.iter())
            .zip(&self.limits)
            .map(|((qi, di), l)| clamp_to(qi + di, l))
            .collect()
    }
}

/// `jᵀ (j jᵀ + λ² I)⁻¹ e`: the damped least-squares step; `None` when the system is singular.
fn damped_solve(j: &DMatrix<f64>, e: &DVector<f64>, damping: f64) -> Option<DVector<f64>> {
    let rows = j.nrows();
    let a = j * j.transpose() + DMatrix::identity(rows, rows) * (damping * damping);
    let chol = a.cholesky()?;
    Some(j.transpose() * chol.solve(e))
}

/// The position-first step of a 6-row Jacobian `j`: the damped step for the position error,
/// plus the damped step for what is left of the rotation error within the null space of the
/// position rows (so it does not move the end effector's origin, to first order).
fn prioritised_step(j: &DMatrix<f64>, r: &Residual, damping: f64) -> Option<DVector<f64>> {
    let n = j.ncols();
    let jp = j.rows(0, 3).into_owned();
    let jo = j.rows(3, 3).into_owned();
    let a = &jp * jp.transpose() + DMatrix::identity(3, 3) * (damping * damping);
    let chol = a.cholesky()?;
    let jp_pinv = jp.transpose() * chol.inverse();
    let dq_pos = &jp_pinv * DVector::from_column_slice(r.pos.as_slice());
    let null = DMatrix::identity(n, n) - &jp_pinv * &jp;
    let jo_null = &jo * &null;
    let rot_left = DVector::from_column_slice(r.rot.as_slice()) - &jo * &dq_pos;
    let dq_rot = damped_solve(&jo_null, &rot_left, damping)?;
    Some(dq_pos + null * dq_rot)
}
