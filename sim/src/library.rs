//! The default task families: for each skill, parameter ranges and a seeded sampler that turns
//! them into `TaskSpec` variants. The curriculum (skills crate) mutates these specs further.

use rand::Rng;
use robots::Manipulator;
use serde::{Deserialize, Serialize};

use crate::task::{
    GoalSpec, ObjectKind, ObjectSpec, PoseSpec, SkillKind, TableSpec, TaskSpec, ZoneSpec,
};

/// A closed interval `[lo, hi]` sampled uniformly.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Range {
    pub lo: f64,
    pub hi: f64,
}

impl Range {
    pub const fn new(lo: f64, hi: f64) -> Self {
        Range { lo, hi }
    }

    pub fn sample(&self, rng: &mut impl Rng) -> f64 {
        if self.hi > self.lo {
            rng.gen_range(self.lo..=self.hi)
        } else {
            self.lo
        }
    }

    pub fn is_valid(&self) -> bool {
        self.lo.is_finite() && self.hi.is_finite() && self.lo <= self.hi
    }
}

/// Parameter ranges of a tabletop task family (positions in the world frame, robot base at
/// the origin, table top at `table.top_z_m`). Two named presets: `easy` (the default: red
/// cubes of 4.5–5.5 cm in a 20 × 36 cm patch) and `wide` ([`TaskRanges::wide`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskRanges {
    pub object_x_m: Range,
    pub object_y_m: Range,
    pub object_yaw_rad: Range,
    /// A cube's edge; a box's short side and its height; a cylinder's diameter (m).
    pub cube_size_m: Range,
    pub object_mass_kg: Range,
    pub object_friction: Range,
    /// Minimum distance between the object and the zone / support (m).
    pub min_separation_m: f64,
    pub zone_half_extent_m: Range,
    pub lift_height_m: Range,
    pub max_duration_s: f64,
    /// The table and every position in the family (object and zone positions, separations,
    /// lift and reach heights) are this fraction of the full-size layout: 1 for full-size
    /// arms, less for a desk arm ([`workspace_scale`], applied by [`TaskRanges::scaled`]).
    /// Object sizes, masses and frictions are not scaled. Default 1.
    #[serde(default = "unit_scale")]
    pub workspace_scale: f64,
    /// Shares of objects (goal and distractors) that are boxes of other proportions and
    /// upright cylinders; the rest are cubes. Default 0 and 0.
    #[serde(default)]
    pub box_share: f64,
    #[serde(default)]
    pub cylinder_share: f64,
    /// A box's long side over its short side; a cylinder's height over its diameter.
    /// Default [1, 1].
    #[serde(default = "unit_range")]
    pub aspect: Range,
    /// How many distractor objects stand on the table: a whole number drawn uniformly within
    /// the range. Default [0, 0].
    #[serde(default = "zero_range")]
    pub distractors: Range,
    /// The arm starts up to this far from its home in each joint, uniformly (rad). Default 0.
    #[serde(default)]
    pub arm_start_spread_rad: f64,
}

fn unit_scale() -> f64 {
    1.0
}

fn unit_range() -> Range {
    Range::new(1.0, 1.0)
}

fn zero_range() -> Range {
    Range::new(0.0, 0.0)
}

/// A box's long side and a cylinder's height are capped here (m): every object fits the
/// full-size grippers across its short side and stands steadily.
const MAX_LONG_SIDE_M: f64 = 0.1;
const MAX_CYLINDER_HEIGHT_M: f64 = 0.12;
const DISTRACTOR_RGB: [u8; 3] = [215, 190, 60];

impl TaskRanges {
    /// The wide families: objects of 3–7 cm that are cubes, boxes up to twice as long as they
    /// are wide, or upright cylinders, 0.05–1 kg, friction 0.3–1.2, anywhere on a 40 × 60 cm
    /// patch of the table at any yaw, zones of 6–14 cm, lifts of 5–15 cm, up to one
    /// distractor, and an arm that starts up to 0.15 rad from home in every joint.
    pub fn wide() -> TaskRanges {
        TaskRanges {
            object_x_m: Range::new(0.3, 0.7),
            object_y_m: Range::new(-0.3, 0.3),
            object_yaw_rad: Range::new(-std::f64::consts::FRAC_PI_2, std::f64::consts::FRAC_PI_2),
            cube_size_m: Range::new(0.03, 0.07),
            object_mass_kg: Range::new(0.05, 1.0),
            object_friction: Range::new(0.3, 1.2),
            min_separation_m: 0.12,
            zone_half_extent_m: Range::new(0.03, 0.07),
            lift_height_m: Range::new(0.05, 0.15),
            box_share: 1.0 / 3.0,
            cylinder_share: 1.0 / 3.0,
            aspect: Range::new(1.0, 2.0),
            distractors: Range::new(0.0, 1.0),
            arm_start_spread_rad: 0.15,
            ..TaskRanges::default()
        }
    }

    /// A named preset: `easy` (the default) or `wide`.
    pub fn preset(name: &str) -> Result<TaskRanges, String> {
        match name {
            "easy" => Ok(TaskRanges::default()),
            "wide" => Ok(TaskRanges::wide()),
            other => Err(format!("`{other}`: expected easy or wide")),
        }
    }

    /// These ranges with every position scaled by `s` (`workspace_scale` multiplied by it).
    pub fn scaled(&self, s: f64) -> TaskRanges {
        let scale = |r: Range| Range::new(r.lo * s, r.hi * s);
        TaskRanges {
            object_x_m: scale(self.object_x_m),
            object_y_m: scale(self.object_y_m),
            min_separation_m: self.min_separation_m * s,
            lift_height_m: scale(self.lift_height_m),
            workspace_scale: self.workspace_scale * s,
            ..self.clone()
        }
    }

    /// The default ranges laid out for `robot`'s workspace.
    pub fn for_robot(robot: &Manipulator) -> TaskRanges {
        TaskRanges::default().scaled(workspace_scale(robot))
    }
}

/// The fraction of the full-size task layout `robot` can work in: its top-down reach over
/// the table ([`robots::home::top_down_reach_m`]) against the full-size arms' (at most 1, so
/// the UR5e and the Panda get exactly the default families).
pub fn workspace_scale(robot: &Manipulator) -> f64 {
    let reach_m = robots::home::top_down_reach_m(robot);
    let s = reach_m / robots::home::FULL_SIZE_TOP_DOWN_REACH_M;
    if s.is_finite() && s > 0.0 {
        s.min(1.0)
    } else {
        1.0
    }
}

impl Default for TaskRanges {
    fn default() -> Self {
        TaskRanges {
            object_x_m: Range::new(0.38, 0.58),
            object_y_m: Range::new(-0.18, 0.18),
            object_yaw_rad: Range::new(-0.6, 0.6),
            cube_size_m: Range::new(0.045, 0.055),
            object_mass_kg: Range::new(0.08, 0.15),
            object_friction: Range::new(0.7, 1.0),
            min_separation_m: 0.14,
            zone_half_extent_m: Range::new(0.04, 0.05),
            lift_height_m: Range::new(0.08, 0.12),
            max_duration_s: 10.0,
            workspace_scale: 1.0,
            box_share: 0.0,
            cylinder_share: 0.0,
            aspect: unit_range(),
            distractors: zero_range(),
            arm_start_spread_rad: 0.0,
        }
    }
}

const CUBE_RGB: [u8; 3] = [200, 40, 40];
const CUBE2_RGB: [u8; 3] = [40, 90, 200];
const ZONE_RGB: [u8; 3] = [40, 180, 70];

fn instruction(skill: SkillKind) -> &'static str {
    match skill {
        SkillKind::Reach => "move the gripper to the green target",
        SkillKind::Push => "push the red cube into the green zone",
        SkillKind::Grasp => "grasp the red cube",
        SkillKind::Lift => "pick up the red cube and lift it",
        SkillKind::Place => "put the red cube in the green zone",
        SkillKind::Stack => "stack the red cube on the blue cube",
        SkillKind::Scoop => "scoop the pancake out of the pan",
        SkillKind::Flip => "flip the pancake in the pan",
    }
}

/// Samples `(x, y)` in the ranges at least `min_sep` from every point in `avoid`.
fn sample_xy(r: &TaskRanges, rng: &mut impl Rng, avoid: &[[f64; 2]], min_sep: f64) -> [f64; 2] {
    let mut best = [r.object_x_m.sample(rng), r.object_y_m.sample(rng)];
    let dist = |p: [f64; 2]| {
        avoid
            .iter()
            .map(|a| ((p[0] - a[0]).powi(2) + (p[1] - a[1]).powi(2)).sqrt())
            .fold(f64::INFINITY, f64::min)
    };
    for _ in 0..64 {
        if dist(best) >= min_sep {
            break;
        }
        let candidate = [r.object_x_m.sample(rng), r.object_y_m.sample(rng)];
        if dist(candidate) > dist(best) {
            best = candidate;
        }
    }
    best
}

/// A goal object or distractor of the family at `xy`: a cube, a box or an upright cylinder by
/// the shares (the shape is drawn only where the family has other shapes, so the easy family
/// draws exactly what it always did), standing on the table top.
fn object(
    name: &str,
    xy: [f64; 2],
    ranges: &TaskRanges,
    rng: &mut impl Rng,
    top_z: f64,
    rgb: [u8; 3],
) -> ObjectSpec {
    let yaw = ranges.object_yaw_rad.sample(rng);
    let size = ranges.cube_size_m.sample(rng);
    let kind = if ranges.box_share + ranges.cylinder_share > 0.0 {
        let u: f64 = rng.gen();
        let aspect = ranges.aspect.sample(rng);
        if u < ranges.cylinder_share {
            ObjectKind::Cylinder {
                radius_m: size / 2.0,
                height_m: (size * aspect).min(MAX_CYLINDER_HEIGHT_M),
            }
        } else if u < ranges.cylinder_share + ranges.box_share {
            let height = ranges.cube_size_m.sample(rng);
            ObjectKind::Cube {
                size_m: [(size * aspect).min(MAX_LONG_SIDE_M), size, height],
            }
        } else {
            ObjectKind::Cube { size_m: [size; 3] }
        }
    } else {
        ObjectKind::Cube { size_m: [size; 3] }
    };
    let half_height = kind.half_extents_m()[2];
    ObjectSpec {
        name: name.to_owned(),
        kind,
        pose: PoseSpec {
            xyz_m: [xy[0], xy[1], top_z + half_height],
            rpy_rad: [0.0, 0.0, yaw],
        },
        mass_kg: ranges.object_mass_kg.sample(rng),
        friction: ranges.object_friction.sample(rng),
        rgb,
        fixed: false,
        fragile_force_n: None,
    }
}

/// Distractors: a whole number of objects within the family's range, each clear of `avoid`.
fn distractors(
    ranges: &TaskRanges,
    rng: &mut impl Rng,
    avoid: &mut Vec<[f64; 2]>,
    top_z: f64,
) -> Vec<ObjectSpec> {
    if ranges.distractors.hi < 1.0 {
        return Vec::new();
    }
    let lo = ranges.distractors.lo.max(0.0).round() as usize;
    let hi = ranges.distractors.hi.max(0.0).round() as usize;
    let n = rng.gen_range(lo..=hi.max(lo));
    (0..n)
        .map(|k| {
            let xy = sample_xy(ranges, rng, avoid, ranges.min_separation_m);
            avoid.push(xy);
            object(
                &format!("distractor{k}"),
                xy,
                ranges,
                rng,
                top_z,
                DISTRACTOR_RGB,
            )
        })
        .collect()
}

/// Arm joints given a start offset: as many as the largest shipped arm has (a smaller arm
/// uses the first ones), so a variant is the same whichever arm runs it.
const ARM_START_JOINTS: usize = 7;

/// The arm's start offsets: uniform within the spread per joint (none when the spread is 0).
fn arm_start(ranges: &TaskRanges, rng: &mut impl Rng) -> Vec<f64> {
    let spread = ranges.arm_start_spread_rad;
    if !(spread.is_finite() && spread > 0.0) {
        return Vec::new();
    }
    (0..ARM_START_JOINTS)
        .map(|_| rng.gen_range(-spread..=spread))
        .collect()
}

fn cube(name: &str, xy: [f64; 2], yaw: f64, size: f64, top_z: f64, rgb: [u8; 3]) -> ObjectSpec {
    ObjectSpec {
        name: name.to_owned(),
        kind: ObjectKind::Cube { size_m: [size; 3] },
        pose: PoseSpec {
            xyz_m: [xy[0], xy[1], top_z + size / 2.0],
            rpy_rad: [0.0, 0.0, yaw],
        },
        mass_kg: 0.1,
        friction: 0.8,
        rgb,
        fixed: false,
        fragile_force_n: None,
    }
}

/// Samples a variant of the default task family of `skill`.
pub fn sample_task(skill: SkillKind, ranges: &TaskRanges, rng: &mut impl Rng) -> TaskSpec {
    let table = TableSpec::default().scaled(ranges.workspace_scale);
    let top = table.top_z_m;
    let mut objects = Vec::new();
    let mut zones = Vec::new();
    let mut goal = GoalSpec {
        object: Some("cube".into()),
        zone: None,
        support: None,
        lift_height_m: ranges.lift_height_m.sample(rng),
        reach_tolerance_m: 0.02,
        hold_s: 0.2,
    };
    let tool = skill.tool();
    match skill {
        SkillKind::Scoop | SkillKind::Flip => {
            let pan_xy = [
                ranges.object_x_m.sample(rng),
                0.5 * ranges.object_y_m.sample(rng),
            ];
            let pan_radius = 0.14;
            objects.push(ObjectSpec {
                name: "pan".into(),
                kind: ObjectKind::Pan {
                    radius_m: pan_radius,
                    wall_height_m: 0.03,
                    handle_length_m: 0.15,
                },
                pose: PoseSpec::at([pan_xy[0], pan_xy[1], top + 0.005]),
                mass_kg: 1.2,
                friction: 0.6,
                rgb: [50, 50, 55],
                fixed: true,
                fragile_force_n: None,
            });
            let thickness = 0.012;
            objects.push(ObjectSpec {
                name: "pancake".into(),
                kind: ObjectKind::Disc {
                    radius_m: 0.05,
                    thickness_m: thickness,
                },
                pose: PoseSpec {
                    xyz_m: [pan_xy[0], pan_xy[1], top + 0.01 + thickness / 2.0 + 0.001],
                    rpy_rad: [0.0, 0.0, ranges.object_yaw_rad.sample(rng)],
                },
                mass_kg: 0.05,
                friction: 0.3,
                rgb: [230, 190, 110],
                fixed: false,
                fragile_force_n: Some(40.0),
            });
            goal.object = Some("pancake".into());
            goal.support = Some("pan".into());
        }
        _ => {
            let xy = sample_xy(ranges, rng, &[], 0.0);
            objects.push(object("cube", xy, ranges, rng, top, CUBE_RGB));
            let mut taken = vec![xy];
            match skill {
                SkillKind::Reach | SkillKind::Push | SkillKind::Place => {
                    let zxy = sample_xy(ranges, rng, &[xy], ranges.min_separation_m);
                    let h = ranges.zone_half_extent_m.sample(rng);
                    let reach_z = if skill == SkillKind::Reach {
                        0.15 * ranges.workspace_scale
                    } else {
                        0.0
                    };
                    taken.push(zxy);
                    zones.push(ZoneSpec {
                        name: "target".into(),
                        center_m: [zxy[0], zxy[1], top + reach_z],
                        half_extents_m: [h, h, 0.002],
                        rgb: ZONE_RGB,
                    });
                    goal.zone = Some("target".into());
                    if skill == SkillKind::Reach {
                        goal.object = None;
                    }
                }
                SkillKind::Stack => {
                    let bxy = sample_xy(ranges, rng, &[xy], ranges.min_separation_m);
                    let size = ranges.cube_size_m.sample(rng) + 0.01;
                    let mut base = cube("base", bxy, 0.0, size, top, CUBE2_RGB);
                    base.mass_kg = 0.3;
                    objects.push(base);
                    taken.push(bxy);
                    goal.support = Some("base".into());
                }
                _ => {}
            }
            objects.extend(distractors(ranges, rng, &mut taken, top));
        }
    }
    let arm_start_offset_rad = arm_start(ranges, rng);
    let seq: u32 = rng.gen();
    TaskSpec {
        name: format!("{}/{seq:08x}", skill.name()),
        skill,
        instruction: instruction(skill).to_owned(),
        table,
        objects,
        zones,
        tool,
        goal,
        // A flip is a scoop and a turn: half as long again.
        max_duration_s: match skill {
            SkillKind::Flip => 1.5 * ranges.max_duration_s,
            _ => ranges.max_duration_s,
        },
        arm_start_offset_rad,
    }
}
