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

use std::cell::RefCell;

use nalgebra::{Isometry3, Matrix6xX, Vector3};
use serde::{Deserialize, Serialize};

use crate::dls::{damped_solve, prioritised_step, PriorityScratch, MAX_ROWS};
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
        self.solve(root_from_target, q_seed_rad, cfg, true)
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
        self.solve(root_from_target, q_seed_rad, cfg, false)
    }

    /// One servo step of the commanded arm targets `q_target_rad` towards `root_from_target`:
    /// [`Manipulator::ik_local`] from the targets, each joint's change capped at its velocity
    /// limit times `dt_s` (no cap where the model gives none), then the position limits.
    /// False (targets unchanged) when the solver returns a non-finite configuration.
    /// Allocates nothing once the calling thread has solved for an arm of this many joints
    /// (a control loop's steady state).
    pub fn servo_step(
        &self,
        q_target_rad: &mut [f64],
        root_from_target: &Isometry3<f64>,
        cfg: &IkConfig,
        dt_s: f64,
    ) -> bool {
        with_workspace(self.dof(), |ws| {
            let solver = self.solver(root_from_target, cfg, false);
            solver.solve(ws, q_target_rad);
            if !ws.best_q.iter().all(|q| q.is_finite()) {
                return false;
            }
            for ((q, s), &j) in q_target_rad
                .iter_mut()
                .zip(&ws.best_q)
                .zip(&self.arm_joints)
            {
                let l = &self.model.joints[j].limits;
                let max_step = if l.velocity.is_finite() && l.velocity > 0.0 {
                    l.velocity * dt_s
                } else {
                    f64::INFINITY
                };
                *q = clamp_to(*q + (s - *q).clamp(-max_step, max_step), l);
            }
            true
        })
    }

    fn solve(
        &self,
        root_from_target: &Isometry3<f64>,
        q_seed_rad: &[f64],
        cfg: &IkConfig,
        restarts: bool,
    ) -> IkSolution {
        with_workspace(self.dof(), |ws| {
            let solver = self.solver(root_from_target, cfg, restarts);
            let (r, iterations) = solver.solve(ws, q_seed_rad);
            IkSolution {
                converged: solver.converged(&r),
                q_rad: ws.best_q.clone(),
                iterations,
                pos_err_m: r.pos_err_m,
                rot_err_rad: r.rot_err_rad,
            }
        })
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
            weight,
            prioritise_position: weight > 0.0 && self.dof() < 6,
        }
    }
}

thread_local! {
    /// Each thread's solver buffers, kept between solves.
    static WORKSPACE: RefCell<Workspace> = RefCell::new(Workspace::default());
}

/// Runs `f` with this thread's workspace sized for `n` joints.
fn with_workspace<T>(n: usize, f: impl FnOnce(&mut Workspace) -> T) -> T {
    WORKSPACE.with(|cell| match cell.try_borrow_mut() {
        Ok(mut ws) => {
            ws.resize(n);
            f(&mut ws)
        }
        // Only reachable by a solve inside a solve; a fresh workspace keeps it correct.
        Err(_) => {
            let mut ws = Workspace::default();
            ws.resize(n);
            f(&mut ws)
        }
    })
}

/// The solver's buffers for an arm of `n` joints.
#[derive(Debug, Default)]
struct Workspace {
    limits: Vec<JointLimits>,
    q: Vec<f64>,
    q_new: Vec<f64>,
    best_q: Vec<f64>,
    candidate: Vec<f64>,
    dq: Vec<f64>,
    step: Vec<f64>,
    frozen: Vec<bool>,
    jac: Matrix6xX<f64>,
    /// The weighted Jacobian (rows × n, row-major) and its copy with frozen columns zeroed.
    jw: Vec<f64>,
    jf: Vec<f64>,
    priority: PriorityScratch,
}

impl Workspace {
    fn resize(&mut self, n: usize) {
        for v in [
            &mut self.q,
            &mut self.q_new,
            &mut self.best_q,
            &mut self.candidate,
            &mut self.dq,
            &mut self.step,
        ] {
            v.resize(n, 0.0);
        }
        self.frozen.resize(n, false);
        self.jw.resize(MAX_ROWS * n, 0.0);
        self.jf.resize(MAX_ROWS * n, 0.0);
        self.priority.resize(n);
    }
}

struct Solver<'a> {
    manipulator: &'a Manipulator,
    target: &'a Isometry3<f64>,
    cfg: &'a IkConfig,
    weight: f64,
    /// Restart from random configurations when an attempt stalls (else stop there).
    restarts: bool,
    /// Fewer than six arm joints: position first, orientation in what is left.
    prioritise_position: bool,
}

#[derive(Clone, Copy)]
struct Residual {
    /// Weighted error vector: position (m) then weighted rotation vector (`rows` of them).
    e: [f64; MAX_ROWS],
    rows: usize,
    /// Unweighted position (m) and rotation-vector (rad) errors, root frame.
    pos: Vector3<f64>,
    rot: Vector3<f64>,
    pos_err_m: f64,
    rot_err_rad: f64,
}

impl Residual {
    fn cost(&self) -> f64 {
        self.e[..self.rows].iter().map(|x| x * x).sum()
    }
}

impl Solver<'_> {
    /// Solves into `ws.best_q`; returns the best residual and the iterations used.
    fn solve(&self, ws: &mut Workspace, q_seed_rad: &[f64]) -> (Residual, usize) {
        ws.limits.clear();
        let joints = &self.manipulator.model.joints;
        ws.limits.extend(
            self.manipulator
                .arm_joints
                .iter()
                .map(|&j| joints[j].limits),
        );
        for (i, q) in ws.q.iter_mut().enumerate() {
            let seed = q_seed_rad.get(i).or(self.manipulator.home_q_rad.get(i));
            let value = seed.copied().filter(|v| v.is_finite()).unwrap_or(0.0);
            *q = clamp_to(value, &ws.limits[i]);
        }
        let mut r = self.residual(&ws.q);
        ws.best_q.copy_from_slice(&ws.q);
        let mut best = r;
        // Damping = mu * min(λ, ‖e‖): λ far from the target, shrinking to Gauss-Newton near
        // it; mu grows after a rejected step (Levenberg-Marquardt) and decays after a good one.
        let mut mu = 1.0;
        let mut attempt = Attempt::new(&r);
        let mut rng = SplitMix64::new(0x5EED_1C0F_FEE0_0001);
        let mut iterations = 0;
        while !self.converged(&r) && iterations < self.cfg.max_iterations {
            iterations += 1;
            self.weighted_jacobian(ws, r.rows);
            let mut accepted = false;
            for _ in 0..TRIALS_PER_ITERATION {
                let damping = mu * self.min_damping().min(r.cost().sqrt()).max(1e-9);
                self.step(ws, &r, damping);
                let r_new = self.residual(&ws.q_new);
                if r_new.cost() < r.cost() {
                    std::mem::swap(&mut ws.q, &mut ws.q_new);
                    r = r_new;
                    mu = (mu * 0.5).max(1.0);
                    accepted = true;
                    break;
                }
                mu *= 4.0;
            }
            if r.cost() < best.cost() {
                ws.best_q.copy_from_slice(&ws.q);
                best = r;
            }
            if !self.converged(&r) && (attempt.stalled(&r) || !accepted) {
                if !self.restarts {
                    break;
                }
                r = self.restart_seed(ws, &mut rng);
                mu = 1.0;
                attempt = Attempt::new(&r);
            }
        }
        (best, iterations)
    }

    /// Puts into `ws.q` the best (lowest cost) of [`RESTART_CANDIDATES`] random
    /// configurations within the limits (forward kinematics only); returns its residual.
    fn restart_seed(&self, ws: &mut Workspace, rng: &mut SplitMix64) -> Residual {
        let mut best: Option<Residual> = None;
        for _ in 0..RESTART_CANDIDATES {
            for (q, l) in ws.candidate.iter_mut().zip(&ws.limits) {
                *q = rng.in_limits(l.lower, l.upper);
            }
            let r = self.residual(&ws.candidate);
            if best.is_none_or(|b| r.cost() < b.cost()) {
                ws.q.copy_from_slice(&ws.candidate);
                best = Some(r);
            }
        }
        best.unwrap_or_else(|| self.residual(&ws.q))
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
        let mut e = [0.0; MAX_ROWS];
        e[..3].copy_from_slice(pos.as_slice());
        let rows = if self.weight == 0.0 {
            3
        } else {
            let w = if self.prioritise_position {
                rot * (self.weight * PRIORITY_ROT_WEIGHT)
            } else {
                rot * self.weight
            };
            e[3..].copy_from_slice(w.as_slice());
            6
        };
        Residual {
            e,
            rows,
            pos,
            rot,
            pos_err_m: pos.norm(),
            rot_err_rad: rot.norm(),
        }
    }

    /// The Jacobian at `ws.q` into `ws.jw` (row-major), its rotation rows scaled by the
    /// orientation weight (3 rows when the weight is 0; unscaled under position priority,
    /// whose step weighs nothing).
    fn weighted_jacobian(&self, ws: &mut Workspace, rows: usize) {
        self.manipulator.jacobian_to(&ws.q, &mut ws.jac);
        let n = ws.q.len();
        for c in 0..n {
            for row in 0..rows {
                let scale = if row < 3 || self.prioritise_position {
                    1.0
                } else {
                    self.weight
                };
                ws.jw[row * n + c] = ws.jac[(row, c)] * scale;
            }
        }
    }

    /// One damped-least-squares step from `ws.q` into `ws.q_new`, clamped to the limits.
    /// Joints at a limit that the step would push further out are frozen and the step is
    /// recomputed.
    fn step(&self, ws: &mut Workspace, r: &Residual, damping: f64) {
        let n = ws.q.len();
        let rows = r.rows;
        ws.frozen.fill(false);
        ws.dq.fill(0.0);
        for _ in 0..=n {
            ws.jf[..rows * n].copy_from_slice(&ws.jw[..rows * n]);
            for (c, _) in ws.frozen.iter().enumerate().filter(|(_, f)| **f) {
                for row in 0..rows {
                    ws.jf[row * n + c] = 0.0;
                }
            }
            let solved = if self.prioritise_position {
                let (pos, rot) = (r.pos.into(), r.rot.into());
                prioritised_step(&ws.jf, &pos, &rot, damping, &mut ws.priority, &mut ws.step)
            } else {
                damped_solve(&ws.jf[..rows * n], rows, &r.e, damping, &mut ws.step)
            };
            if !solved {
                break;
            }
            ws.dq.copy_from_slice(&ws.step);
            let mut changed = false;
            for (i, l) in ws.limits.iter().enumerate() {
                let at_lower = ws.q[i] <= l.lower + 1e-12 && ws.dq[i] < 0.0;
                let at_upper = ws.q[i] >= l.upper - 1e-12 && ws.dq[i] > 0.0;
                if !ws.frozen[i] && (at_lower || at_upper) {
                    ws.frozen[i] = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        let largest = ws.dq.iter().fold(0.0f64, |m, d| m.max(d.abs()));
        let max_step = self.cfg.max_step_rad;
        if max_step.is_finite() && max_step > 0.0 && largest > max_step {
            ws.dq.iter_mut().for_each(|d| *d *= max_step / largest);
        }
        for (((out, qi), di), l) in ws.q_new.iter_mut().zip(&ws.q).zip(&ws.dq).zip(&ws.limits) {
            *out = clamp_to(qi + di, l);
        }
    }
}
