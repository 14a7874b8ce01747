//! Keyframe plans for a tool (the spatula): what the search explores for the kitchen's skills.
//!
//! A keyframe puts the tool tip (the middle of the blade's leading edge) at an offset from an
//! anchor, in a frame whose x axis points from the robot's base to the anchor (so one plan
//! serves a pan anywhere on the table), with the blade pitched about its lateral axis
//! (positive: leading edge down; a flip's turn goes past π/2), and reaches it in its own
//! segment time. Between keyframes the tip moves on a straight line while the pitch changes
//! evenly (smoothstep timing): one keyframe pair slides the blade slowly along the floor,
//! another turns it about its edge. A plan-level yaw turns the blade about the vertical. There
//! is no gripper command. Anchors are the gripper plans' (`explorer`): the object's start for
//! the first half of the keyframes, the goal's target for the second.

use std::sync::Arc;

use nalgebra::{Isometry3, Matrix3, Rotation3, Translation3, UnitQuaternion, Vector3};
use robots::Manipulator;
use sim::config::ActionScale;
use sim::scene::props::spatula_tip_in_ee;
use sim::scripted::ee_delta_action;
use sim::state::Observation;
use sim::{Action, Controller, EpisodeInfo};

use crate::explorer::{plan_anchors, CemConfig, PlanDistribution, PlanLayout};

/// Parameters per tool keyframe: tip offset along, across and up (m), pitch (rad), segment
/// time (s).
pub const PER_TOOL_KEYFRAME: usize = 5;

/// A keyframe's pitch parameter (rad), after the tip offset.
pub const PITCH_PARAM: usize = 3;
/// How far a failing search widens the goal half's pitch spread (`explorer`): a flip's turn
/// (about 2.5 rad) is 2.5 spreads from a scoop's level blade.
pub const PITCH_WIDEN_STD_RAD: f64 = 1.0;

/// Segment times are kept in this range (s).
pub const SEGMENT_S: (f64, f64) = (0.2, 4.0);
/// Pitch is kept in this range (rad): a little past level the other way, up to upside down.
const PITCH_RAD: (f64, f64) = (-0.5, 3.2);

/// Where a tool-plan search starts: keyframes at their anchor's height, level, one default
/// segment time each, spread as far across as along; yaw 0.
pub fn initial_tool_plan(cfg: &CemConfig) -> PlanDistribution {
    let mut mean = Vec::new();
    let mut std = Vec::new();
    let spread = cfg.init_offset_std_m;
    for _ in 0..cfg.tool_keyframes {
        mean.extend([0.0, 0.0, 0.0, 0.0, cfg.segment_s]);
        std.extend([spread, spread, spread, 0.3, 0.5]);
    }
    mean.push(0.0);
    std.push(0.3);
    PlanDistribution {
        mean,
        std,
        layout: PlanLayout::Tool,
        fixed_keyframes: 0,
    }
}

/// Keyframes in a tool plan.
pub fn tool_plan_keyframes(plan: &[f64]) -> usize {
    plan.len() / PER_TOOL_KEYFRAME
}

/// The TCP pose that puts the tool tip (`tip_in_ee_m`, TCP frame) at `world_tip_m` with the
/// blade facing `heading` (horizontal, unit) and pitched `pitch_rad` about its lateral axis
/// (positive: leading edge down), the approach axis down when level.
fn world_from_tcp(
    heading: &Vector3<f64>,
    tip_in_ee_m: &Vector3<f64>,
    world_tip_m: &Vector3<f64>,
    pitch_rad: f64,
) -> Isometry3<f64> {
    let (s, c) = pitch_rad.sin_cos();
    let up = Vector3::z();
    let x = heading * c - up * s;
    let z = -heading * s - up * c;
    let rotation = UnitQuaternion::from_rotation_matrix(&Rotation3::from_matrix_unchecked(
        Matrix3::from_columns(&[x, z.cross(&x), z]),
    ));
    Isometry3::from_parts(Translation3::from(*world_tip_m), rotation)
        * Translation3::from(-tip_in_ee_m)
}

#[derive(Clone, Copy, Debug)]
struct ToolKeyframe {
    world_tip_m: Vector3<f64>,
    pitch_rad: f64,
    duration_s: f64,
}

/// Follows one tool plan through one episode.
#[derive(Debug)]
pub struct ToolPlanController {
    robot: Arc<Manipulator>,
    world_from_root: Isometry3<f64>,
    scale: ActionScale,
    keyframes: Vec<ToolKeyframe>,
    /// The blade's forward direction (horizontal, unit) and the tip in the TCP frame.
    heading: Vector3<f64>,
    tip_in_ee_m: Vector3<f64>,
    control_dt_s: f64,
    /// The commanded TCP when the plan started: the first segment leaves from it.
    start: Option<Isometry3<f64>>,
    step: usize,
}

impl ToolPlanController {
    pub fn new(info: &EpisodeInfo<'_>, params: &[f64], scale: ActionScale) -> Self {
        let (first, second, _) = plan_anchors(info.task);
        let base = info.world_from_root.translation.vector;
        let toward = Vector3::new(first.x - base.x, first.y - base.y, 0.0)
            .try_normalize(1e-6)
            .unwrap_or_else(Vector3::x);
        let across = Vector3::z().cross(&toward);
        let k = tool_plan_keyframes(params);
        let keyframes = (0..k)
            .map(|i| {
                let p = &params[i * PER_TOOL_KEYFRAME..][..PER_TOOL_KEYFRAME];
                let anchor = if 2 * i < k { first } else { second };
                ToolKeyframe {
                    world_tip_m: anchor + toward * p[0] + across * p[1] + Vector3::z() * p[2],
                    pitch_rad: p[PITCH_PARAM].clamp(PITCH_RAD.0, PITCH_RAD.1),
                    duration_s: p[4].clamp(SEGMENT_S.0, SEGMENT_S.1),
                }
            })
            .collect();
        let yaw = params.get(k * PER_TOOL_KEYFRAME).copied().unwrap_or(0.0);
        ToolPlanController {
            robot: info.robot.clone(),
            world_from_root: info.world_from_root,
            scale,
            keyframes,
            heading: UnitQuaternion::from_axis_angle(&Vector3::z_axis(), yaw) * toward,
            tip_in_ee_m: spatula_tip_in_ee(),
            control_dt_s: info.control_dt_s,
            start: None,
            step: 0,
        }
    }

    fn tcp(&self, tip: &Vector3<f64>, pitch_rad: f64) -> Isometry3<f64> {
        world_from_tcp(&self.heading, &self.tip_in_ee_m, tip, pitch_rad)
    }

    /// The planned TCP pose at time `t_s` into the plan.
    fn target(&self, start: &Isometry3<f64>, mut t_s: f64) -> Option<Isometry3<f64>> {
        let smooth = |u: f64| u * u * (3.0 - 2.0 * u);
        let mut previous: Option<&ToolKeyframe> = None;
        for k in &self.keyframes {
            if t_s <= k.duration_s {
                let u = smooth((t_s / k.duration_s).clamp(0.0, 1.0));
                let end = self.tcp(&k.world_tip_m, k.pitch_rad);
                return Some(match previous {
                    None => start.lerp_slerp(&end, u),
                    Some(p) => self.tcp(
                        &p.world_tip_m.lerp(&k.world_tip_m, u),
                        p.pitch_rad + (k.pitch_rad - p.pitch_rad) * u,
                    ),
                });
            }
            t_s -= k.duration_s;
            previous = Some(k);
        }
        previous.map(|k| self.tcp(&k.world_tip_m, k.pitch_rad))
    }
}

impl Controller for ToolPlanController {
    fn act(&mut self, obs: &Observation) -> Action {
        let now = self.world_from_root * self.robot.fk(&obs.q_target_rad);
        let start = *self.start.get_or_insert(now);
        self.step += 1;
        let goal = self
            .target(&start, self.step as f64 * self.control_dt_s)
            .unwrap_or(now);
        let dp = goal.translation.vector - now.translation.vector;
        let dr = (goal.rotation * now.rotation.inverse()).scaled_axis();
        ee_delta_action(&dp, &dr, 1.0, &self.scale)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::Point3;

    #[test]
    fn the_tcp_pose_puts_the_tip_on_its_keyframe_at_any_pitch() {
        let heading = Vector3::new(0.6, 0.8, 0.0);
        let tip_in_ee = spatula_tip_in_ee();
        let tip = Vector3::new(0.5, 0.1, 0.42);
        for pitch in [-0.3, 0.0, 0.06, 1.2, 2.5] {
            let tcp = world_from_tcp(&heading, &tip_in_ee, &tip, pitch);
            let at = tcp * Point3::from(tip_in_ee);
            assert!((at.coords - tip).norm() < 1e-12, "pitch {pitch}: {at}");
            // The blade's forward axis: along the heading when level, its leading edge going
            // down as the pitch grows.
            let forward = tcp.rotation * Vector3::x();
            assert!(
                (forward.z + pitch.sin()).abs() < 1e-12,
                "pitch {pitch}: {forward}"
            );
            assert!((forward.xy().normalize() - heading.xy()).norm() < 1e-9 || pitch.cos() < 0.0);
        }
        let level = world_from_tcp(&heading, &tip_in_ee, &tip, 0.0);
        assert!((level.rotation * Vector3::z() + Vector3::z()).norm() < 1e-12);
    }

    #[test]
    fn an_initial_tool_plan_has_its_layout_and_size() {
        let cfg = CemConfig::default();
        let d = initial_tool_plan(&cfg);
        assert_eq!(d.layout, PlanLayout::Tool);
        assert_eq!(d.mean.len(), cfg.tool_keyframes * PER_TOOL_KEYFRAME + 1);
        assert_eq!(tool_plan_keyframes(&d.mean), cfg.tool_keyframes);
        assert_eq!(d.std.len(), d.mean.len());
    }

    #[test]
    fn an_approach_fixed_plan_searches_only_its_goal_half() {
        use rand::SeedableRng;
        let cfg = CemConfig::default();
        let mut scoop = initial_tool_plan(&cfg);
        scoop.std.iter_mut().for_each(|s| *s = 0.01);
        scoop.mean[3] = 0.06;
        let flip = scoop.with_approach_fixed(&cfg);
        let half = cfg.tool_keyframes.div_ceil(2) * PER_TOOL_KEYFRAME;
        let yaw = flip.mean.len() - 1;
        assert!(flip.std[..half].iter().all(|s| *s == 0.0));
        assert_eq!(flip.std[yaw], 0.0);
        // The goal half is spread like a fresh search's.
        assert_eq!(flip.std[half], cfg.init_offset_std_m);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let plan = flip.sample(&mut rng);
        assert_eq!(plan[..half], scoop.mean[..half]);
        assert_eq!(plan[yaw], scoop.mean[yaw]);
        assert_ne!(plan[half..yaw], scoop.mean[half..yaw]);
        assert!((0..=yaw).all(|d| flip.is_fixed(d) == (d < half || d == yaw)));
    }
}
