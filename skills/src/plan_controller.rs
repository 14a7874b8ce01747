//! `PlanController`: follows one gripper keyframe plan through one episode. Each keyframe is
//! steered to for a fixed segment time; a carrying skill's (place, stack) keyframe ends earlier,
//! once the TCP has arrived and it and the gripper are still. Otherwise its demonstrations wait,
//! still, and then move on a clock, which a policy cloned from them cannot time (place 0.16
//! against 0.60 from the same plan moving on arrival, docs/loop-findings.md). A plan that
//! carries an object to a target (the gripper is closed when the plan turns from the object to
//! the target) passes between its two halves through a transit: straight up from wherever the
//! TCP is to the carry height (the task's lift height above the object's start, or higher
//! keyframes), then across to above the target half's first keyframe, each leg until the TCP
//! is within `TRANSIT_TOLERANCE_M` or a segment's time has passed. Without it the search's
//! cheapest plans drag the held cube over the table to the zone, which a policy cannot learn to
//! repeat.

use std::sync::Arc;

use nalgebra::{Rotation3, Vector3};
use robots::Manipulator;
use sim::config::ActionScale;
use sim::scripted::{ee_delta_action, top_down_error};
use sim::state::{iso_from_pose7, Observation};
use sim::{Action, Controller, EpisodeInfo};

use crate::explorer::{plan_anchors, plan_frame_yaw, GRIPPER_THRESHOLD, PER_KEYFRAME};

/// A transit leg ends when the TCP is this close to its waypoint (m).
const TRANSIT_TOLERANCE_M: f64 = 0.015;
/// A carrying skill's keyframe ends early once the TCP is this close to it (m) and still.
const ARRIVAL_TOLERANCE_M: f64 = 0.01;
/// Still: the TCP moved less than this in one control step (m) ...
const STILL_M: f64 = 0.001;
/// ... and the gripper opening (0 closed, 1 open) changed less than this.
const STILL_OPENING: f64 = 0.002;
/// A keyframe lasts at least this many control steps (its gripper command gets under way).
const ARRIVAL_MIN_STEPS: usize = 4;

/// One target of a plan.
#[derive(Clone, Copy, Debug)]
struct Waypoint {
    goal: Vector3<f64>,
    gripper: f64,
    /// At most this many control steps (the last waypoint is held to the end).
    steps: usize,
    /// A transit leg: ends early once reached.
    transit: bool,
    /// The goal's x, y are the TCP's when the waypoint begins (straight up).
    from_here: bool,
    /// Ends early once arrived (`ARRIVAL_TOLERANCE_M`, TCP and gripper still).
    arrive: bool,
}

/// Follows one plan through one episode.
#[derive(Debug)]
pub struct PlanController {
    robot: Arc<Manipulator>,
    world_from_root: nalgebra::Isometry3<f64>,
    scale: ActionScale,
    waypoints: Vec<Waypoint>,
    /// The waypoint each keyframe begins at (a transit before the target half's first).
    keyframe_start: Vec<usize>,
    yaw: f64,
    current: usize,
    steps_in: usize,
    /// TCP and gripper opening at the last step.
    last: Option<(Vector3<f64>, f64)>,
}

impl PlanController {
    pub fn new(info: &EpisodeInfo<'_>, params: &[f64], segment_s: f64, scale: ActionScale) -> Self {
        let (first, second, object_yaw) = plan_anchors(info.task);
        let frame = Rotation3::from_axis_angle(&Vector3::z_axis(), plan_frame_yaw(info.task));
        let k = params.len() / PER_KEYFRAME;
        let quarter = std::f64::consts::FRAC_PI_2;
        let base_yaw = object_yaw - (object_yaw / quarter).round() * quarter;
        let segment_steps = ((segment_s / info.control_dt_s).round() as usize).max(1);
        let keyframes: Vec<(Vector3<f64>, f64)> = (0..k)
            .map(|i| {
                let p = &params[i * PER_KEYFRAME..][..PER_KEYFRAME];
                let anchor = if 2 * i < k { first } else { second };
                let gripper = if p[3] > GRIPPER_THRESHOLD { 1.0 } else { 0.0 };
                (anchor + frame * Vector3::new(p[0], p[1], p[2]), gripper)
            })
            .collect();
        // A carrying skill's carry height: its lift height above the object's start.
        let carry_z = info
            .task
            .skill
            .sets_down()
            .then(|| first.z + info.task.goal.lift_height_m);
        let (waypoints, keyframe_start) = waypoints(&keyframes, carry_z, segment_steps);
        PlanController {
            robot: info.robot.clone(),
            world_from_root: info.world_from_root,
            scale,
            waypoints,
            keyframe_start,
            yaw: base_yaw + params.last().copied().unwrap_or(0.0),
            current: 0,
            steps_in: 0,
            last: None,
        }
    }

    /// Starts the plan at keyframe `first` (taking over an episode another controller began),
    /// with the transit before it if it has one.
    pub fn starting_at(mut self, first: usize) -> Self {
        let last = self.keyframe_start.len().saturating_sub(1);
        self.current = self
            .keyframe_start
            .get(first.min(last))
            .copied()
            .unwrap_or(0);
        self.steps_in = 0;
        self
    }

    /// The most control steps the plan takes from keyframe `first` to its last keyframe's
    /// start plus one segment (transit legs counted at their time limit).
    pub fn steps_from(&self, first: usize) -> usize {
        let from = self
            .keyframe_start
            .get(first)
            .copied()
            .unwrap_or(self.waypoints.len());
        self.waypoints.iter().skip(from).map(|w| w.steps).sum()
    }

    /// Moves past finished waypoints (never past the last) and fixes a from-here goal.
    fn advance(&mut self, here: &Vector3<f64>, opening: f64) {
        let still = self.last.is_some_and(|(p, o)| {
            (here - p).norm() < STILL_M && (opening - o).abs() < STILL_OPENING
        });
        self.last = Some((*here, opening));
        while self.current + 1 < self.waypoints.len() {
            let w = self.waypoints[self.current];
            let distance_m = (here - w.goal).norm();
            let arrived = w.arrive
                && still
                && self.steps_in >= ARRIVAL_MIN_STEPS
                && distance_m <= ARRIVAL_TOLERANCE_M;
            let reached = arrived || (w.transit && distance_m <= TRANSIT_TOLERANCE_M);
            if self.steps_in < w.steps && !(reached && self.steps_in > 0) {
                break;
            }
            self.current += 1;
            self.steps_in = 0;
        }
        if self.steps_in == 0 {
            if let Some(w) = self.waypoints.get_mut(self.current) {
                if w.from_here {
                    w.goal.x = here.x;
                    w.goal.y = here.y;
                    w.from_here = false;
                }
            }
        }
    }
}

/// The keyframes as waypoints, each for `segment_steps`, with a transit (up to at least
/// `carry_z`, then across) before the target half's first keyframe when the plan carries (a
/// `carry_z`, the gripper closed at the end of the first half); and where each keyframe begins.
fn waypoints(
    keyframes: &[(Vector3<f64>, f64)],
    carry_z: Option<f64>,
    segment_steps: usize,
) -> (Vec<Waypoint>, Vec<usize>) {
    let half = keyframes.len().div_ceil(2);
    let mut waypoints = Vec::with_capacity(keyframes.len() + 2);
    let mut keyframe_start = Vec::with_capacity(keyframes.len());
    let arrive = carry_z.is_some();
    let step = |goal, gripper, transit, from_here| Waypoint {
        goal,
        gripper,
        steps: segment_steps,
        transit,
        from_here,
        arrive,
    };
    for (i, &(goal, gripper)) in keyframes.iter().enumerate() {
        keyframe_start.push(waypoints.len());
        let held = i == half && i > 0 && keyframes[i - 1].1 < GRIPPER_THRESHOLD;
        if let (Some(z), true) = (carry_z, held) {
            let z = z.max(keyframes[i - 1].0.z).max(goal.z);
            waypoints.push(step(Vector3::new(0.0, 0.0, z), 0.0, true, true));
            waypoints.push(step(Vector3::new(goal.x, goal.y, z), 0.0, true, false));
        }
        waypoints.push(step(goal, gripper, false, false));
    }
    (waypoints, keyframe_start)
}

impl Controller for PlanController {
    fn act(&mut self, obs: &Observation) -> Action {
        let here = iso_from_pose7(&obs.world_from_ee).translation.vector;
        self.advance(&here, obs.gripper_opening);
        self.steps_in += 1;
        let Some(w) = self.waypoints.get(self.current).copied() else {
            // An empty plan holds still with the gripper open.
            let (dp, dr) = top_down_error(&self.robot, &self.world_from_root, obs, &here, self.yaw);
            return ee_delta_action(&dp, &dr, 1.0, &self.scale);
        };
        let (dp, dr) = top_down_error(&self.robot, &self.world_from_root, obs, &w.goal, self.yaw);
        ee_delta_action(&dp, &dr, w.gripper, &self.scale)
    }
}
