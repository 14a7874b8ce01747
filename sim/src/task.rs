//! `TaskSpec`: a serde description of one task variant — props, poses, sizes, masses,
//! frictions, colours, target zones and the instruction — so that the curriculum can generate
//! and mutate tasks as data.

use serde::{Deserialize, Serialize};

use crate::error::{Result, SimError};

/// The skill a task exercises; selects the physics success predicate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkillKind {
    /// Bring the tool centre point to the target zone's centre.
    Reach,
    /// Slide the object into the target zone without lifting it.
    Push,
    /// Hold the object between both fingers, lifted off the table.
    Grasp,
    /// Grasp and raise the object by `lift_height_m`.
    Lift,
    /// Put the object in the target zone, released and at rest.
    Place,
    /// Put the object on top of the support object, released and at rest.
    Stack,
    /// Lift the disc off the pan on the tool (spatula), free of the pan, unbroken.
    Scoop,
    /// Turn the disc over so it rests upside down on the pan.
    Flip,
}

impl SkillKind {
    pub const ALL: [SkillKind; 8] = [
        SkillKind::Reach,
        SkillKind::Push,
        SkillKind::Grasp,
        SkillKind::Lift,
        SkillKind::Place,
        SkillKind::Stack,
        SkillKind::Scoop,
        SkillKind::Flip,
    ];

    /// What the skill's tasks mount on the flange: the kitchen's skills use the spatula.
    pub fn tool(self) -> ToolKind {
        match self {
            SkillKind::Scoop | SkillKind::Flip => ToolKind::Spatula,
            _ => ToolKind::Gripper,
        }
    }

    /// The skill carries its object to a target and sets it down there (place, stack).
    pub fn sets_down(self) -> bool {
        matches!(self, SkillKind::Place | SkillKind::Stack)
    }

    pub fn name(self) -> &'static str {
        match self {
            SkillKind::Reach => "reach",
            SkillKind::Push => "push",
            SkillKind::Grasp => "grasp",
            SkillKind::Lift => "lift",
            SkillKind::Place => "place",
            SkillKind::Stack => "stack",
            SkillKind::Scoop => "scoop",
            SkillKind::Flip => "flip",
        }
    }

    pub fn parse(name: &str) -> Result<SkillKind> {
        SkillKind::ALL
            .into_iter()
            .find(|k| k.name() == name)
            .ok_or_else(|| SimError::Unknown {
                what: "task",
                name: name.to_owned(),
                known: SkillKind::ALL.map(SkillKind::name).join(", "),
            })
    }
}

/// A pose given as position (m) and fixed-axis roll-pitch-yaw (rad), like URDF's `<origin>`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PoseSpec {
    pub xyz_m: [f64; 3],
    #[serde(default)]
    pub rpy_rad: [f64; 3],
}

impl PoseSpec {
    pub fn at(xyz_m: [f64; 3]) -> Self {
        PoseSpec {
            xyz_m,
            rpy_rad: [0.0; 3],
        }
    }

    pub fn to_isometry(&self) -> nalgebra::Isometry3<f64> {
        let [x, y, z] = self.xyz_m;
        let [r, p, yaw] = self.rpy_rad;
        nalgebra::Isometry3::from_parts(
            nalgebra::Translation3::new(x, y, z),
            nalgebra::UnitQuaternion::from_euler_angles(r, p, yaw),
        )
    }
}

/// Geometry of a prop. All sizes in metres.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ObjectKind {
    /// A box with full edge lengths `size_m` (a cube when they are equal).
    Cube { size_m: [f64; 3] },
    /// A flat cylinder lying on its face (a pancake, a coaster): axis along the object's z.
    Disc { radius_m: f64, thickness_m: f64 },
    /// A plate: a thin disc, usually heavier and a placement target.
    Plate { radius_m: f64, thickness_m: f64 },
    /// A frying pan: a round base, a ring wall of `wall_segments` boxes, and a handle along +x.
    Pan {
        radius_m: f64,
        wall_height_m: f64,
        handle_length_m: f64,
    },
    /// An upright cylinder (a can, a bottle): axis along the object's z.
    Cylinder { radius_m: f64, height_m: f64 },
}

impl ObjectKind {
    /// Half extents of the object's bounding box in its own frame (m); a pan's leaves out
    /// its handle.
    pub fn half_extents_m(&self) -> [f64; 3] {
        match self {
            ObjectKind::Cube { size_m } => size_m.map(|s| s / 2.0),
            ObjectKind::Disc {
                radius_m,
                thickness_m,
            }
            | ObjectKind::Plate {
                radius_m,
                thickness_m,
            } => [*radius_m, *radius_m, thickness_m / 2.0],
            ObjectKind::Cylinder { radius_m, height_m } => [*radius_m, *radius_m, height_m / 2.0],
            ObjectKind::Pan {
                radius_m,
                wall_height_m,
                ..
            } => [*radius_m, *radius_m, wall_height_m / 2.0],
        }
    }

    /// Round in plan view (cylinders, discs, plates, the pan): any grasp yaw is as good.
    pub fn is_round(&self) -> bool {
        !matches!(self, ObjectKind::Cube { .. })
    }

    /// The object's parts in its own frame, as URDF-style primitives (cylinders along z): the
    /// one description both the physics scene and the replay draw from.
    pub fn parts(&self) -> Vec<(nalgebra::Isometry3<f64>, robots::Shape)> {
        use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};
        use robots::Shape;
        let cylinder = |radius_m: f64, length_m: f64| Shape::Cylinder { radius_m, length_m };
        match self {
            ObjectKind::Cube { size_m } => vec![(
                Isometry3::identity(),
                Shape::Box {
                    size_m: Vector3::from(*size_m),
                },
            )],
            ObjectKind::Disc {
                radius_m,
                thickness_m,
            }
            | ObjectKind::Plate {
                radius_m,
                thickness_m,
            } => vec![(Isometry3::identity(), cylinder(*radius_m, *thickness_m))],
            ObjectKind::Cylinder { radius_m, height_m } => {
                vec![(Isometry3::identity(), cylinder(*radius_m, *height_m))]
            }
            ObjectKind::Pan {
                radius_m,
                wall_height_m,
                handle_length_m,
            } => {
                let (base_thickness, wall, segments) = (0.01, 0.006, 16);
                let mut parts = vec![(Isometry3::identity(), cylinder(*radius_m, base_thickness))];
                let chord = 2.0 * radius_m * (std::f64::consts::PI / segments as f64).tan();
                for i in 0..segments {
                    let a = i as f64 * std::f64::consts::TAU / segments as f64;
                    let pose = Isometry3::from_parts(
                        Translation3::new(
                            (radius_m + wall / 2.0) * a.cos(),
                            (radius_m + wall / 2.0) * a.sin(),
                            wall_height_m / 2.0,
                        ),
                        UnitQuaternion::from_axis_angle(&Vector3::z_axis(), a),
                    );
                    let size_m = Vector3::new(wall, chord, *wall_height_m);
                    parts.push((pose, Shape::Box { size_m }));
                }
                parts.push((
                    Isometry3::translation(
                        radius_m + handle_length_m / 2.0,
                        0.0,
                        wall_height_m / 2.0,
                    ),
                    Shape::Box {
                        size_m: Vector3::new(*handle_length_m, 0.024, 0.016),
                    },
                ));
                parts
            }
        }
    }
}

/// A prop in the scene.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ObjectSpec {
    pub name: String,
    pub kind: ObjectKind,
    /// Initial pose of the object frame (its centre) in the world.
    pub pose: PoseSpec,
    pub mass_kg: f64,
    pub friction: f64,
    pub rgb: [u8; 3],
    /// Fixed props (a pan bolted to the stove) do not move.
    #[serde(default)]
    pub fixed: bool,
    /// A fragile object breaks (the episode fails) when any contact force on it exceeds this.
    #[serde(default)]
    pub fragile_force_n: Option<f64>,
}

/// A target zone: an axis-aligned box region on the table, drawn but not collidable.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ZoneSpec {
    pub name: String,
    pub center_m: [f64; 3],
    pub half_extents_m: [f64; 3],
    pub rgb: [u8; 3],
}

/// The table every task is set on (a box whose top face is at `top_z_m`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TableSpec {
    pub center_xy_m: [f64; 2],
    pub size_m: [f64; 3],
    pub top_z_m: f64,
    pub friction: f64,
    pub rgb: [u8; 3],
}

impl Default for TableSpec {
    /// The anchor scene's table: 0.6 × 0.8 × 0.4 m centred 0.5 m in front of the robot.
    fn default() -> Self {
        TableSpec {
            center_xy_m: [0.5, 0.0],
            size_m: [0.6, 0.8, 0.4],
            top_z_m: 0.4,
            friction: 0.8,
            rgb: [150, 111, 76],
        }
    }
}

impl TableSpec {
    /// This table with its footprint and position scaled by `s` (its height kept).
    pub fn scaled(&self, s: f64) -> TableSpec {
        TableSpec {
            center_xy_m: self.center_xy_m.map(|v| v * s),
            size_m: [self.size_m[0] * s, self.size_m[1] * s, self.size_m[2]],
            ..self.clone()
        }
    }
}

/// What is mounted on the flange.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolKind {
    /// The robot's own parallel-jaw gripper from its URDF.
    #[default]
    Gripper,
    /// A spatula (handle + thin blade) rigidly mounted instead of the gripper's fingers.
    Spatula,
}

/// What success means for this variant, beyond the skill kind.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GoalSpec {
    /// The object the skill acts on (name in `objects`); unused for reach.
    pub object: Option<String>,
    /// Target zone (name in `zones`): reach, push, place.
    pub zone: Option<String>,
    /// Support object (name in `objects`): stack onto it, flip onto it (the pan).
    pub support: Option<String>,
    /// Lift: how far above its start the object must be raised (m).
    #[serde(default = "default_lift_height")]
    pub lift_height_m: f64,
    /// Reach: tolerance on the TCP-to-zone-centre distance (m).
    #[serde(default = "default_reach_tolerance")]
    pub reach_tolerance_m: f64,
    /// The predicate must hold this long, continuously, to count as success (s).
    #[serde(default = "default_hold")]
    pub hold_s: f64,
}

fn default_lift_height() -> f64 {
    0.1
}
fn default_reach_tolerance() -> f64 {
    0.02
}
fn default_hold() -> f64 {
    0.2
}

/// One task variant: everything needed to build the scene and judge success.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskSpec {
    /// Variant name, unique within a task family (e.g. `lift/seed-17`).
    pub name: String,
    pub skill: SkillKind,
    /// Natural-language instruction given to the policy.
    pub instruction: String,
    #[serde(default)]
    pub table: TableSpec,
    pub objects: Vec<ObjectSpec>,
    #[serde(default)]
    pub zones: Vec<ZoneSpec>,
    #[serde(default)]
    pub tool: ToolKind,
    pub goal: GoalSpec,
    /// Episode time limit (s).
    pub max_duration_s: f64,
    /// Where the arm starts, as offsets from the robot's home per arm joint (rad; clamped
    /// into the limits; missing entries 0, extra ones ignored). Empty: at home.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arm_start_offset_rad: Vec<f64>,
}

impl TaskSpec {
    /// Index of the named object.
    pub fn object_index(&self, name: &str) -> Option<usize> {
        self.objects.iter().position(|o| o.name == name)
    }

    /// Index of the goal's object, if the goal names one that the task has.
    pub fn goal_object_index(&self) -> Option<usize> {
        self.goal
            .object
            .as_deref()
            .and_then(|n| self.object_index(n))
    }

    /// The index of the object the goal rests on (stack's base, the pan), if the task names one.
    pub fn goal_support_index(&self) -> Option<usize> {
        self.goal
            .support
            .as_deref()
            .and_then(|n| self.object_index(n))
    }

    /// The zone the goal names, if the task has it.
    pub fn goal_zone(&self) -> Option<&ZoneSpec> {
        self.goal
            .zone
            .as_deref()
            .and_then(|n| self.zones.iter().find(|z| z.name == n))
    }

    pub fn zone_index(&self, name: &str) -> Option<usize> {
        self.zones.iter().position(|z| z.name == name)
    }

    /// Checks every field a scene or predicate relies on; the error names the field.
    pub fn validate(&self) -> Result<()> {
        let err = |field: String, problem: &str| Err(SimError::task(&self.name, field, problem));
        if !(self.max_duration_s.is_finite() && self.max_duration_s > 0.0) {
            return err(
                "max_duration_s".into(),
                "must be a positive number of seconds",
            );
        }
        if self.arm_start_offset_rad.iter().any(|q| !q.is_finite()) {
            return err("arm_start_offset_rad".into(), "every offset must be finite");
        }
        let t = &self.table;
        if t.size_m.iter().any(|s| !(s.is_finite() && *s > 0.0)) {
            return err("table.size_m".into(), "every size must be positive");
        }
        if !(t.friction.is_finite() && t.friction >= 0.0) {
            return err("table.friction".into(), "must be >= 0");
        }
        for (i, o) in self.objects.iter().enumerate() {
            let f = |name: &str| format!("objects[{i}] ({}).{name}", o.name);
            if !(o.mass_kg.is_finite() && o.mass_kg > 0.0) {
                return err(f("mass_kg"), "must be positive");
            }
            if !(o.friction.is_finite() && o.friction >= 0.0) {
                return err(f("friction"), "must be >= 0");
            }
            if o.pose
                .xyz_m
                .iter()
                .chain(&o.pose.rpy_rad)
                .any(|v| !v.is_finite())
            {
                return err(f("pose"), "must be finite");
            }
            let dims: Vec<f64> = match &o.kind {
                ObjectKind::Cube { size_m } => size_m.to_vec(),
                ObjectKind::Disc {
                    radius_m,
                    thickness_m,
                }
                | ObjectKind::Plate {
                    radius_m,
                    thickness_m,
                } => vec![*radius_m, *thickness_m],
                ObjectKind::Cylinder { radius_m, height_m } => vec![*radius_m, *height_m],
                ObjectKind::Pan {
                    radius_m,
                    wall_height_m,
                    handle_length_m,
                } => vec![*radius_m, *wall_height_m, *handle_length_m],
            };
            if dims.iter().any(|d| !(d.is_finite() && *d > 0.0)) {
                return err(f("kind"), "every dimension must be positive");
            }
            if let Some(force) = o.fragile_force_n {
                if !(force.is_finite() && force > 0.0) {
                    return err(f("fragile_force_n"), "must be positive");
                }
            }
            if self.objects[..i].iter().any(|p| p.name == o.name) {
                return err(f("name"), "duplicate object name");
            }
        }
        for (i, z) in self.zones.iter().enumerate() {
            if z.half_extents_m
                .iter()
                .any(|h| !(h.is_finite() && *h > 0.0))
            {
                return err(
                    format!("zones[{i}] ({}).half_extents_m", z.name),
                    "must be positive",
                );
            }
        }
        let g = &self.goal;
        if let Some(o) = &g.object {
            if self.object_index(o).is_none() {
                return err("goal.object".into(), "names no object of this task");
            }
        }
        if let Some(s) = &g.support {
            if self.object_index(s).is_none() {
                return err("goal.support".into(), "names no object of this task");
            }
        }
        if let Some(z) = &g.zone {
            if self.zone_index(z).is_none() {
                return err("goal.zone".into(), "names no zone of this task");
            }
        }
        let needs_object = !matches!(self.skill, SkillKind::Reach);
        if needs_object && g.object.is_none() {
            return err("goal.object".into(), "this skill needs an object");
        }
        let needs_zone = matches!(
            self.skill,
            SkillKind::Reach | SkillKind::Push | SkillKind::Place
        );
        if needs_zone && g.zone.is_none() {
            return err("goal.zone".into(), "this skill needs a target zone");
        }
        let needs_support = matches!(
            self.skill,
            SkillKind::Stack | SkillKind::Scoop | SkillKind::Flip
        );
        if needs_support && g.support.is_none() {
            return err("goal.support".into(), "this skill needs a support object");
        }
        if !(g.hold_s.is_finite() && g.hold_s >= 0.0) {
            return err("goal.hold_s".into(), "must be >= 0");
        }
        Ok(())
    }

    /// Parses a task from JSON, naming the source in errors, and validates it.
    pub fn from_json(text: &str, source: &str) -> Result<TaskSpec> {
        let spec: TaskSpec = serde_json::from_str(text).map_err(|e| SimError::Json {
            context: format!("task file {source}"),
            source: e,
        })?;
        spec.validate()?;
        Ok(spec)
    }
}
