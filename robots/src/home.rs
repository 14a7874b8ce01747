//! A tool-down home configuration for an arm that comes without one (any URDF file).

use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};

use crate::ik::IkConfig;
use crate::manipulator::Manipulator;
use crate::summary::{first_joint_origin, reach_estimate_m, REACH_SAMPLES};

/// Where the home TCP sits, as fractions of the arm's reach from its first joint: ahead (root
/// +x) and above.
const HOME_AHEAD: f64 = 0.4;
const HOME_ABOVE: f64 = 0.2;

/// Arm joint positions with the TCP pointing down (its z along the root's −z, its x along the
/// root's x) in front of the robot: `HOME_AHEAD` of the reach ahead of the first joint and
/// `HOME_ABOVE` of it above, solved by IK from the limits' midpoint. `None` when IK does not
/// converge there (the caller keeps its home).
pub fn tool_down_home(m: &Manipulator) -> Option<Vec<f64>> {
    let reach_m = reach_estimate_m(m, REACH_SAMPLES);
    if !(reach_m.is_finite() && reach_m > 0.0) {
        return None;
    }
    let origin = first_joint_origin(m)?;
    let target = Isometry3::from_parts(
        Translation3::from(origin + Vector3::new(HOME_AHEAD * reach_m, 0.0, HOME_ABOVE * reach_m)),
        UnitQuaternion::from_axis_angle(&Vector3::x_axis(), std::f64::consts::PI),
    );
    let solution = m.ik(&target, &m.home_q_rad, &IkConfig::default());
    solution.converged.then_some(solution.q_rad)
}

/// Height of the TCP above the root for [`top_down_reach_m`] (m): a grasp over a table level
/// with the robot's base.
const TOP_DOWN_HEIGHT_M: f64 = 0.1;
/// Horizontal distances tried by [`top_down_reach_m`], as fractions of the reach estimate.
const TOP_DOWN_STEPS: usize = 40;
/// The top-down reach the default task families are laid out for: the shipped full-size arms
/// (UR5e, Panda) reach at least this far.
pub const FULL_SIZE_TOP_DOWN_REACH_M: f64 = 0.7;

/// How far ahead of its first joint (m, horizontally along the root's x) the arm can hold its
/// TCP pointing down at `TOP_DOWN_HEIGHT_M` above the root: the largest of evenly spaced
/// distances up to the reach estimate at which IK converges (0 when none does).
pub fn top_down_reach_m(m: &Manipulator) -> f64 {
    let reach_m = reach_estimate_m(m, REACH_SAMPLES);
    let Some(origin) = first_joint_origin(m) else {
        return 0.0;
    };
    if !(reach_m.is_finite() && reach_m > 0.0) {
        return 0.0;
    }
    let down = UnitQuaternion::from_axis_angle(&Vector3::x_axis(), std::f64::consts::PI);
    (1..=TOP_DOWN_STEPS)
        .rev()
        .map(|k| reach_m * k as f64 / TOP_DOWN_STEPS as f64)
        .find(|&x| {
            let target = Isometry3::from_parts(
                Translation3::new(origin.x + x, origin.y, TOP_DOWN_HEIGHT_M),
                down,
            );
            m.ik(&target, &m.home_q_rad, &IkConfig::default()).converged
        })
        .unwrap_or(0.0)
}
