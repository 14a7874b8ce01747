//! Scripted spatula use: the reference scoop and flip that show the kitchen's physics allows
//! them. Like `scripted`, it reads privileged state (the pancake's pose, the pan's spec) and is
//! a test reference, never a data source for learning.
//!
//! Both start the same way: the blade, pitched so its leading edge is lowest, goes down
//! beside the pancake to the pan's floor and slides under it, away from the robot, until the
//! pancake (pushed to the far wall if it does not ride up at once) is on the blade; the blade
//! levels and rises. That is the scoop. A flip then carries the pancake back, lowers it to
//! just above the floor and turns the blade about a line under the pancake's far rim like a
//! page, pushes on, and backs away. A toss (`ToolScript::toss`, `toss.rs`) throws it instead:
//! the blade swings up fast under it and pulls away, and the pancake turns over in the air.

use std::sync::Arc;

use nalgebra::{Isometry3, Matrix3, Point3, Rotation3, Translation3, UnitQuaternion, Vector3};
use robots::Manipulator;

use crate::config::ActionScale;
use crate::control::Action;
use crate::episode::{Controller, EpisodeInfo};
use crate::scene::props::SPATULA_PARTS;
use crate::scripted::ee_delta_action;
use crate::state::Observation;
use crate::task::{ObjectKind, SkillKind, TaskSpec};

mod toss;
pub use toss::{run_toss, TossScript, TossSetting};

/// How the reference moves the spatula (lengths in m, angles in rad, times in s).
#[derive(Clone, Debug, PartialEq)]
pub struct ToolScript {
    /// Blade pitch while sliding under (leading edge lowest).
    pub slide_pitch_rad: f64,
    /// Gap between the blade's leading edge and the pancake's rim before the slide.
    pub start_gap_m: f64,
    /// Height of the leading edge's lower corner above the pan floor while sliding.
    pub slide_clearance_m: f64,
    /// How far short of the pan's far wall the leading edge stops.
    pub slide_overshoot_m: f64,
    /// Slide speed: gentle keeps the pancake whole.
    pub slide_speed_m_s: f64,
    /// Scoop: how high the levelled blade is raised.
    pub scoop_rise_m: f64,
    /// Flip: the turn pivots at the pancake's far rim, put this far before the pan's centre
    /// (along the slide direction), with the pancake's underside this high above the floor and
    /// the pivot this high (at or below the floor: the blade by the rim then moves away from
    /// the floor as it turns, and cannot pinch the rim against it).
    pub flip_pivot_before_center_m: f64,
    pub flip_carry_clearance_m: f64,
    pub flip_pivot_height_m: f64,
    /// Flip: the pivot is at most this far from the robot's base (horizontally): past it the
    /// arm is nearly stretched out, and the turn stalls short of vertical.
    pub flip_pivot_max_reach_m: f64,
    /// Flip: how far the blade turns about the line under the pancake's far rim.
    pub flip_turn_rad: f64,
    /// Flip: how long the turn takes.
    pub flip_turn_s: f64,
    /// Flip: how far the turned blade pushes on along the slide direction.
    pub flip_push_m: f64,
    /// Flip: how far the blade backs away (and rises) after the turn.
    pub flip_retreat_m: f64,
    /// Flip by a throw instead of the turn (none: the quasi-static turn).
    pub toss: Option<TossScript>,
}

impl Default for ToolScript {
    fn default() -> Self {
        ToolScript {
            slide_pitch_rad: 0.06,
            start_gap_m: 0.01,
            slide_clearance_m: 0.0,
            slide_overshoot_m: 0.014,
            slide_speed_m_s: 0.05,
            scoop_rise_m: 0.07,
            flip_pivot_before_center_m: 0.035,
            flip_carry_clearance_m: 0.003,
            flip_pivot_height_m: -0.002,
            flip_pivot_max_reach_m: 0.50,
            flip_turn_rad: 2.5,
            flip_turn_s: 2.0,
            flip_push_m: 0.03,
            flip_retreat_m: 0.06,
            toss: None,
        }
    }
}

/// One leg of the plan: the TCP goes from the previous leg's end to `world_from_tcp` in
/// `duration_s` (smoothstep timing), or turns about a world-frame axis.
#[derive(Clone, Debug)]
enum Leg {
    Move {
        world_from_tcp: Isometry3<f64>,
        duration_s: f64,
    },
    /// A turn by `angle_rad` about the axis through `pivot` along `axis` (world frame).
    Turn {
        pivot: Point3<f64>,
        axis: nalgebra::Unit<Vector3<f64>>,
        angle_rad: f64,
        duration_s: f64,
    },
}

impl Leg {
    fn duration_s(&self) -> f64 {
        match self {
            Leg::Move { duration_s, .. } | Leg::Turn { duration_s, .. } => *duration_s,
        }
    }

    /// The TCP pose a fraction `u` ∈ [0, 1] along the leg that starts at `from`.
    fn at(&self, from: &Isometry3<f64>, u: f64) -> Isometry3<f64> {
        let s = u * u * (3.0 - 2.0 * u);
        match self {
            Leg::Move { world_from_tcp, .. } => from.lerp_slerp(world_from_tcp, s),
            Leg::Turn {
                pivot,
                axis,
                angle_rad,
                ..
            } => {
                let turn = UnitQuaternion::from_axis_angle(axis, angle_rad * s);
                let about_pivot =
                    Translation3::from(pivot.coords) * turn * Translation3::from(-pivot.coords);
                about_pivot * from
            }
        }
    }

    fn end(&self, from: &Isometry3<f64>) -> Isometry3<f64> {
        self.at(from, 1.0)
    }
}

/// The reference scoop / flip controller for one episode.
#[derive(Debug)]
pub struct ScriptedTool {
    task: TaskSpec,
    robot: Arc<Manipulator>,
    world_from_root: Isometry3<f64>,
    scale: ActionScale,
    control_dt_s: f64,
    script: ToolScript,
    /// Planned at the first step: the legs and the pose each starts from.
    plan: Vec<(Isometry3<f64>, Leg)>,
    step: usize,
    /// The pancake and pan and the slide direction, from the first step.
    layout: Option<(Layout, Vector3<f64>)>,
    /// Flip: whether the turn has been planned (once the pancake is on the raised blade).
    turn_planned: bool,
}

/// The blade box of the spatula (TCP frame: centre on the TCP z axis, normal along it).
fn blade() -> (f64, [f64; 3]) {
    let b = SPATULA_PARTS
        .iter()
        .find(|p| p.name == "blade")
        .unwrap_or(&SPATULA_PARTS[SPATULA_PARTS.len() - 1]);
    (b.z_in_ee_m, b.half_extents_m)
}

/// A rotation from its x and z axes (z is made orthogonal to x).
fn frame(x: Vector3<f64>, z: Vector3<f64>) -> UnitQuaternion<f64> {
    let x = x.normalize();
    let z = (z - x * x.dot(&z)).normalize();
    let y = z.cross(&x);
    UnitQuaternion::from_rotation_matrix(&Rotation3::from_matrix_unchecked(Matrix3::from_columns(
        &[x, y, z],
    )))
}

impl ScriptedTool {
    pub fn new(info: &EpisodeInfo<'_>, scale: ActionScale, script: ToolScript) -> Self {
        ScriptedTool {
            task: info.task.clone(),
            robot: info.robot.clone(),
            world_from_root: info.world_from_root,
            scale,
            control_dt_s: info.control_dt_s,
            script,
            plan: Vec::new(),
            step: 0,
            layout: None,
            turn_planned: false,
        }
    }

    /// The pancake (goal object) and pan (goal support): centre, radius and the pan floor's
    /// height, from the first observation and the task.
    fn layout(&self, obs: &Observation) -> Option<Layout> {
        let goal = &self.task.goal;
        let disc = self.task.object_index(goal.object.as_deref()?)?;
        let pan = self.task.object_index(goal.support.as_deref()?)?;
        let ObjectKind::Disc {
            radius_m,
            thickness_m,
        } = self.task.objects[disc].kind
        else {
            return None;
        };
        let ObjectKind::Pan {
            radius_m: pan_radius_m,
            ..
        } = self.task.objects[pan].kind
        else {
            return None;
        };
        let disc_now = obs.objects.get(disc)?.position_m();
        let pan_spec = &self.task.objects[pan];
        let pan_center = Vector3::from(pan_spec.pose.xyz_m);
        // The pan's base is 1 cm thick, centred on the pan's pose (`ObjectKind::parts`).
        let floor_z_m = pan_center.z + 0.005;
        Some(Layout {
            disc,
            disc_thickness_m: thickness_m,
            disc_xy: Vector3::new(disc_now.x, disc_now.y, 0.0),
            disc_radius_m: radius_m,
            pan_xy: Vector3::new(pan_center.x, pan_center.y, 0.0),
            pan_radius_m,
            floor_z_m,
        })
    }

    fn make_plan(&mut self, obs: &Observation) {
        let Some(l) = self.layout(obs) else {
            return;
        };
        let s = &self.script;
        let (blade_z_m, [half_x, _, half_z]) = blade();
        // Slide away from the robot's base: the blade goes down on the pan's near side, where
        // the wrist stays clear of the rim.
        let base = self.world_from_root.translation.vector;
        let d = (l.pan_xy - Vector3::new(base.x, base.y, 0.0))
            .try_normalize(1e-6)
            .unwrap_or_else(Vector3::x);
        let up = Vector3::z();
        let (sa, ca) = s.slide_pitch_rad.sin_cos();
        let blade_rot = |pitch_sin: f64, pitch_cos: f64| {
            frame(
                d * pitch_cos - up * pitch_sin,
                -d * pitch_sin - up * pitch_cos,
            )
        };
        let pitched = blade_rot(sa, ca);
        let level = blade_rot(0.0, 1.0);
        // Blade centre such that the leading edge's lower corner sits `clearance` above the
        // floor, `gap` before the pancake's rim.
        let corner_in_blade = Vector3::new(half_x, 0.0, half_z);
        let corner_offset = pitched * corner_in_blade;
        let corner_start = l.disc_xy - d * (l.disc_radius_m + s.start_gap_m)
            + up * (l.floor_z_m + s.slide_clearance_m);
        let start_center = corner_start - corner_offset;
        let tcp_from_blade = Translation3::new(0.0, 0.0, blade_z_m);
        let tcp = |center: Vector3<f64>, rot: UnitQuaternion<f64>| {
            Isometry3::from_parts(Translation3::from(center), rot) * tcp_from_blade.inverse()
        };
        let above = tcp(start_center + up * 0.08, pitched);
        let down = tcp(start_center, pitched);
        // Slide until the leading edge is `overshoot` short of the far wall: a pancake pushed
        // along instead of lifted is stopped there and rides up the blade.
        let corner_end = l.pan_xy + d * (l.pan_radius_m - s.slide_overshoot_m);
        let slide_m = (corner_end - corner_start).dot(&d);
        let under_center = start_center + d * slide_m;
        let under = tcp(under_center, pitched);
        let slide_s = (slide_m / s.slide_speed_m_s).max(0.2);
        let mut legs = vec![
            Leg::Move {
                world_from_tcp: above,
                duration_s: 2.0,
            },
            Leg::Move {
                world_from_tcp: down,
                duration_s: 1.0,
            },
            Leg::Move {
                world_from_tcp: under,
                duration_s: slide_s,
            },
        ];
        let raised_center = under_center + up * s.scoop_rise_m;
        legs.push(Leg::Move {
            world_from_tcp: tcp(raised_center, level),
            duration_s: 1.5,
        });
        self.layout = Some((l, d));
        let from = self.commanded_tcp(obs);
        self.push_legs(from, legs);
    }

    fn push_legs(&mut self, mut from: Isometry3<f64>, legs: Vec<Leg>) {
        for leg in legs {
            let end = leg.end(&from);
            self.plan.push((from, leg));
            from = end;
        }
    }

    /// Flip, once the pancake is on the raised blade: carry it so that its far rim is where
    /// the turn should pivot (a little before the pan's centre, so that it lands on the centre),
    /// lower it to just above the floor, and turn the blade about that rim: the pancake's top
    /// normal swings toward d, its rim meets the floor and it falls over onto its top. Then the
    /// blade backs away toward the robot and up. Planned from the pancake's measured pose.
    fn plan_turn(&mut self, obs: &Observation) {
        let (Some((l, d)), Some((from, leg))) = (self.layout, self.plan.last()) else {
            return;
        };
        let end = leg.end(from);
        let Some(now) = obs.objects.get(l.disc).map(|o| o.position_m()) else {
            return;
        };
        let thickness_m = l.disc_thickness_m;
        let s = &self.script;
        let up = Vector3::z();
        let r = l.disc_radius_m;
        let base = self.world_from_root.translation.vector;
        let base_xy = Vector3::new(base.x, base.y, 0.0);
        let pan_reach_m = (l.pan_xy - base_xy).dot(&d);
        let before_m = s
            .flip_pivot_before_center_m
            .max(pan_reach_m - s.flip_pivot_max_reach_m);
        let pivot_xy = l.pan_xy - d * before_m;
        let before =
            pivot_xy - d * r + up * (l.floor_z_m + s.flip_carry_clearance_m + thickness_m / 2.0);
        let carried =
            Translation3::from(Vector3::new(before.x - now.x, before.y - now.y, 0.0)) * end;
        let lowered = Translation3::from(up * (before.z - now.z)) * carried;
        let pivot = Point3::from(pivot_xy + up * (l.floor_z_m + s.flip_pivot_height_m));
        let turn = Leg::Turn {
            pivot,
            axis: nalgebra::Unit::new_normalize(up.cross(&d)),
            angle_rad: s.flip_turn_rad,
            duration_s: s.flip_turn_s,
        };
        // The wrist turns the blade only so far past vertical (about 115° here): a push along
        // d then tips a pancake standing on its rim over.
        let turned = Translation3::from(d * s.flip_push_m) * turn.end(&lowered);
        let away = Translation3::from(-d * s.flip_retreat_m + up * s.flip_retreat_m) * turned;
        let legs = vec![
            Leg::Move {
                world_from_tcp: carried,
                duration_s: 1.2,
            },
            Leg::Move {
                world_from_tcp: lowered,
                duration_s: 0.8,
            },
            turn,
            Leg::Move {
                world_from_tcp: turned,
                duration_s: 0.6,
            },
            Leg::Move {
                world_from_tcp: away,
                duration_s: 1.0,
            },
        ];
        self.push_legs(end, legs);
    }

    fn plan_duration_s(&self) -> f64 {
        self.plan.iter().map(|(_, leg)| leg.duration_s()).sum()
    }

    fn commanded_tcp(&self, obs: &Observation) -> Isometry3<f64> {
        self.world_from_root * self.robot.fk(&obs.q_target_rad)
    }

    /// The planned TCP pose at control step `step` (the last leg's end once the plan is done).
    fn target(&self, step: usize) -> Option<Isometry3<f64>> {
        let mut t = step as f64 * self.control_dt_s;
        for (from, leg) in &self.plan {
            let d = leg.duration_s();
            if t <= d {
                return Some(leg.at(from, (t / d).clamp(0.0, 1.0)));
            }
            t -= d;
        }
        self.plan.last().map(|(from, leg)| leg.end(from))
    }
}

#[derive(Clone, Copy, Debug)]
struct Layout {
    /// The pancake's object index.
    disc: usize,
    disc_thickness_m: f64,
    disc_xy: Vector3<f64>,
    disc_radius_m: f64,
    pan_xy: Vector3<f64>,
    pan_radius_m: f64,
    floor_z_m: f64,
}

impl Controller for ScriptedTool {
    fn act(&mut self, obs: &Observation) -> Action {
        if self.plan.is_empty() && self.step == 0 {
            self.make_plan(obs);
        }
        self.step += 1;
        let t = self.step as f64 * self.control_dt_s;
        if self.task.skill == SkillKind::Flip && !self.turn_planned && t >= self.plan_duration_s() {
            self.turn_planned = true;
            match self.script.toss.clone() {
                Some(toss) => self.plan_toss(obs, &toss),
                None => self.plan_turn(obs),
            }
        }
        let Some(goal) = self.target(self.step) else {
            return ee_delta_action(&Vector3::zeros(), &Vector3::zeros(), 1.0, &self.scale);
        };
        let now = self.commanded_tcp(obs);
        let dp = goal.translation.vector - now.translation.vector;
        let dr = (goal.rotation * now.rotation.inverse()).scaled_axis();
        ee_delta_action(&dp, &dr, 1.0, &self.scale)
    }
}
