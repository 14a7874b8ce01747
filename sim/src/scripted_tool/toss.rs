//! The reference toss: a flip by a throw. From the raised scoop the pancake is carried over the
//! pan's centre and lifted a little; the blade then swings nose-up about a horizontal axis
//! `pivot_m` behind the pancake (across the slide direction), by `angle_rad` in `duration_s`
//! with smoothstep timing, placed so that at mid-swing the pancake moves straight up. The
//! swing's peak rate is ω = 1.5·angle/duration: the decelerating blade lets the pancake go near
//! it, rising at about ω·pivot and spinning at ω, and pulls back toward the robot so that it
//! falls into the pan. A flight of t ≈ 2ω·pivot/g turns it by ω·t, so half a turn needs
//! ω²·pivot ≈ π·g/2 ([`TossScript::half_turn`]).

use std::sync::Arc;

use nalgebra::{Point3, Translation3, Unit, Vector3};
use rand_chacha::ChaCha8Rng;

use super::{Leg, ScriptedTool, ToolScript};
use crate::config::ActionScale;
use crate::episode::{BatchConfig, Controller, Episode, EpisodeBatch, EpisodeInfo};
use crate::library::{sample_task, TaskRanges};
use crate::state::Observation;
use crate::task::SkillKind;
use crate::SimConfig;

const G_M_S2: f64 = 9.81;

/// How the reference throws (lengths in m, angles in rad, times in s).
#[derive(Clone, Debug, PartialEq)]
pub struct TossScript {
    /// How far the pancake is raised above the scoop's height before the throw.
    pub lift_m: f64,
    /// Distance from the swing's axis to the pancake's centre.
    pub pivot_m: f64,
    /// How far the blade swings.
    pub angle_rad: f64,
    /// How long the swing takes.
    pub duration_s: f64,
    /// How far the blade then pulls back toward the robot, and in what time.
    pub retreat_m: f64,
    pub retreat_s: f64,
}

impl TossScript {
    /// A swing of `angle_rad` peaking at `rate_rad_s`, with the pivot distance that gives the
    /// pancake half a turn in its flight.
    pub fn half_turn(rate_rad_s: f64, angle_rad: f64) -> Self {
        TossScript {
            lift_m: 0.03,
            pivot_m: std::f64::consts::PI * G_M_S2 / (2.0 * rate_rad_s * rate_rad_s),
            angle_rad,
            duration_s: 1.5 * angle_rad / rate_rad_s,
            retreat_m: 0.15,
            retreat_s: 0.3,
        }
    }

    /// The swing's peak angular rate (rad/s).
    pub fn peak_rate_rad_s(&self) -> f64 {
        1.5 * self.angle_rad / self.duration_s
    }

    /// The blade's peak speed where the pancake sits (m/s).
    pub fn peak_speed_m_s(&self) -> f64 {
        self.peak_rate_rad_s() * self.pivot_m
    }
}

impl ScriptedTool {
    /// Toss, once the pancake is on the raised blade: carry, swing, pull back.
    pub(super) fn plan_toss(&mut self, obs: &Observation, toss: &TossScript) {
        let (Some((l, d)), Some((from, leg))) = (self.layout, self.plan.last()) else {
            return;
        };
        let end = leg.end(from);
        let Some(now) = obs.objects.get(l.disc).map(|o| o.position_m()) else {
            return;
        };
        let up = Vector3::z();
        let shift = Vector3::new(l.pan_xy.x - now.x, l.pan_xy.y - now.y, toss.lift_m);
        let carried = Translation3::from(shift) * end;
        let center = now + shift;
        // At mid-swing the pancake is level with the pivot, straight ahead of it along d.
        let half = toss.angle_rad / 2.0;
        let pivot = Point3::from(center - toss.pivot_m * (d * half.cos() - up * half.sin()));
        let swing = Leg::Turn {
            pivot,
            axis: Unit::new_normalize(d.cross(&up)),
            angle_rad: toss.angle_rad,
            duration_s: toss.duration_s,
        };
        let away = Translation3::from(-d * toss.retreat_m) * swing.end(&carried);
        let legs = vec![
            Leg::Move {
                world_from_tcp: carried,
                duration_s: 1.2,
            },
            swing,
            Leg::Move {
                world_from_tcp: away,
                duration_s: toss.retreat_s,
            },
        ];
        self.push_legs(end, legs);
    }
}

/// The control a toss is tried under: the UR5e at a control rate, with end-effector caps given
/// per second (the action scale is they divided by the rate) and its URDF joint speed limits
/// scaled by `joint_speed_factor` (1: as they are).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TossSetting {
    pub control_hz: f64,
    pub max_rot_rad_s: f64,
    pub max_speed_m_s: f64,
    pub joint_speed_factor: f64,
}

impl TossSetting {
    /// The loop's policies: 25 Hz, 0.1 rad and 0.02 m per action, the URDF's joint speeds.
    pub fn policy() -> Self {
        TossSetting {
            control_hz: 25.0,
            max_rot_rad_s: 2.5,
            max_speed_m_s: 0.5,
            joint_speed_factor: 1.0,
        }
    }
}

/// `episodes` flip variants of `seed` (the default family), scooped and tossed by the
/// reference under `setting`.
pub fn run_toss(
    setting: &TossSetting,
    toss: &TossScript,
    episodes: usize,
    seed: u64,
) -> crate::Result<Vec<Episode>> {
    let mut robot = robots::load_builtin("ur5e")?;
    for j in robot.arm_joints.clone() {
        robot.model.joints[j].limits.velocity *= setting.joint_speed_factor;
    }
    let hz = setting.control_hz;
    let config = Arc::new(SimConfig {
        control_hz: hz,
        action_scale: ActionScale {
            max_ee_rot_rad: setting.max_rot_rad_s / hz,
            max_ee_step_m: setting.max_speed_m_s / hz,
            ..ActionScale::default()
        },
        ..SimConfig::default()
    });
    let scale = config.action_scale.clone();
    let tasks = move |_: usize, rng: &mut ChaCha8Rng| {
        sample_task(SkillKind::Flip, &TaskRanges::default(), rng)
    };
    let script = ToolScript {
        toss: Some(toss.clone()),
        ..ToolScript::default()
    };
    let factory = move |info: &EpisodeInfo<'_>| -> Box<dyn Controller> {
        Box::new(ScriptedTool::new(info, scale.clone(), script.clone()))
    };
    let cfg = BatchConfig {
        episodes,
        seed,
        threads: None,
        record_images: false,
    };
    Ok(EpisodeBatch::run(Arc::new(robot), config, &cfg, &tasks, &factory, &|| {})?.episodes)
}
