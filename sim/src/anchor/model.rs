//! The anchor scenes as data: [`AnchorModel`], and [`ARM_CUBE`], a transcription of
//! `shared/anchors/mujoco_arm_cube.xml` (the Panda-class scene is in `panda.rs`).
//!
//! Frames: MuJoCo's, z up. Every body frame has the identity orientation at `q = 0`, so a
//! body's pose in its parent is a pure translation and a joint axis reads the same in the
//! parent, the child and the world.

use rapier3d::math::Vector;

/// Physics timestep of the MJCF `<option timestep>`.
pub const DT_S: f32 = 0.002;
/// Gravity along world z, m/s².
pub const GRAVITY_Z_M_PER_S2: f32 = -9.81;
/// Sliding friction of every geom (MJCF default `friction="0.8 …"`).
pub const FRICTION: f32 = 0.8;
/// Joint armature (reflected rotor inertia) of both scenes, kg·m² for hinges, kg for slides.
pub const ARMATURE: f32 = 0.1;
/// Cube half-extent of both scenes, m.
pub const CUBE_HALF_EXTENT_M: f32 = 0.025;
/// Cube mass of both scenes, kg.
pub const CUBE_MASS_KG: f32 = 0.1;

/// One anchor scene: an arm on a fixed base, a fixed table box, a free cube, a floor.
#[derive(Debug)]
pub struct AnchorModel {
    /// Scene name (`arm-cube`, `panda-cube`).
    pub name: &'static str,
    /// The MJCF file MuJoCo runs (in the anchors folder).
    pub mjcf_file: &'static str,
    /// The servoed joints, in actuator order; the first `arm_dofs` are the arm's hinges.
    pub joints: &'static [JointSpec],
    /// Number of arm hinges (the rest are finger slides).
    pub arm_dofs: usize,
    /// The arm's bodies, parents before children; index 0 is the base.
    pub links: &'static [LinkSpec],
    /// Index into `joints` of the elbow, the second joint the sag probes read (the shoulder is
    /// index 1, the base yaw index 0).
    pub elbow: usize,
    /// Table: a fixed box, centre in the world, m.
    pub table_center_m: [f32; 3],
    /// Table half-extents, m.
    pub table_half_extents_m: [f32; 3],
    /// Cube: free body resting on the table, centre in the world, m.
    pub cube_center_m: [f32; 3],
}

impl AnchorModel {
    /// Number of servoed joints (= actuators).
    pub fn num_joints(&self) -> usize {
        self.joints.len()
    }

    /// World position of every arm body at `q = 0`, m.
    pub fn link_positions_in_world_m(&self) -> Vec<Vector> {
        let mut out: Vec<Vector> = Vec::with_capacity(self.links.len());
        for link in self.links {
            let parent = link
                .parent
                .and_then(|p| out.get(p).copied())
                .unwrap_or(Vector::ZERO);
            out.push(parent + vec3(link.pos_in_parent_m));
        }
        out
    }
}

/// The arm-cube scene: a UR5e-class arm (`shared/anchors/mujoco_arm_cube.xml`).
pub static ARM_CUBE: AnchorModel = AnchorModel {
    name: "arm-cube",
    mjcf_file: "mujoco_arm_cube.xml",
    joints: &JOINTS,
    arm_dofs: 6,
    links: &ARM_LINKS,
    elbow: 2,
    table_center_m: [0.5, 0.0, 0.2],
    table_half_extents_m: [0.3, 0.4, 0.2],
    cube_center_m: [0.5, 0.0, 0.425],
};

/// A collision shape, in its body's frame, with its mass (inertia from uniform density).
#[derive(Debug, Clone, Copy)]
pub enum GeomSpec {
    /// MJCF `capsule fromto`: segment end points and radius, m.
    Capsule {
        a_m: [f32; 3],
        b_m: [f32; 3],
        radius_m: f32,
        mass_kg: f32,
    },
    /// MJCF `cylinder`: centre, unit axis, half-height and radius, m.
    Cylinder {
        center_m: [f32; 3],
        axis: [f32; 3],
        half_height_m: f32,
        radius_m: f32,
        mass_kg: f32,
    },
    /// MJCF `box`: centre and half-extents, m.
    Cuboid {
        center_m: [f32; 3],
        half_extents_m: [f32; 3],
        mass_kg: f32,
    },
}

/// Joint type of an actuated joint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JointType {
    /// MJCF `hinge` (rad).
    Revolute,
    /// MJCF `slide` (m).
    Prismatic,
}

/// One actuated joint and its position servo (MJCF `<position>`).
#[derive(Debug, Clone, Copy)]
pub struct JointSpec {
    /// MJCF joint name.
    pub name: &'static str,
    /// Hinge or slide.
    pub joint_type: JointType,
    /// Joint axis in the parent (= child) frame.
    pub axis: [f32; 3],
    /// Servo stiffness `kp` (N·m/rad or N/m).
    pub kp: f32,
    /// Servo damping `kv` (N·m·s/rad or N·s/m).
    pub kv: f32,
    /// Passive joint damping (MJCF `damping`).
    pub damping: f32,
    /// Actuator `ctrlrange`: targets are clamped to it.
    pub ctrl_range: [f32; 2],
    /// Joint `range`, if limited.
    pub limits: Option<[f32; 2]>,
}

/// A body of the arm: where it sits in its parent, the joint that moves it and its geoms.
#[derive(Debug, Clone, Copy)]
pub struct LinkSpec {
    /// MJCF body name.
    pub name: &'static str,
    /// Index of the parent in the model's links; `None` for the base (welded to the world).
    pub parent: Option<usize>,
    /// Body origin in the parent frame at `q = 0`, m (world position for the base).
    pub pos_in_parent_m: [f32; 3],
    /// Index into the model's joints of the joint between parent and this body.
    pub joint: Option<usize>,
    /// Geoms of this body. A joint-less body (the `hand`) is welded to its parent, so its
    /// geoms are listed on the parent (same rigid body, same physics).
    pub geoms: &'static [GeomSpec],
}

/// The MJCF default `ctrlrange="-6.28 6.28"` (a literal, not 2π).
#[allow(clippy::approx_constant)]
const ARM_CTRL: [f32; 2] = [-6.28, 6.28];

/// The arm-cube scene's eight servoed joints, in actuator order (j1..j6, gl, gr).
pub const JOINTS: [JointSpec; 8] = [
    revolute("j1", [0.0, 0.0, 1.0], 800.0, 40.0),
    revolute("j2", [0.0, 1.0, 0.0], 800.0, 40.0),
    revolute("j3", [0.0, 1.0, 0.0], 800.0, 40.0),
    revolute("j4", [0.0, 1.0, 0.0], 300.0, 15.0),
    revolute("j5", [0.0, 0.0, 1.0], 300.0, 15.0),
    revolute("j6", [0.0, 1.0, 0.0], 300.0, 15.0),
    finger("gl", [-0.03, 0.0]),
    finger("gr", [0.0, 0.03]),
];

const fn revolute(name: &'static str, axis: [f32; 3], kp: f32, kv: f32) -> JointSpec {
    hinge(name, axis, kp, kv, 2.0)
}

/// An unlimited hinge servo with the MJCF default `ctrlrange`.
pub(super) const fn hinge(
    name: &'static str,
    axis: [f32; 3],
    kp: f32,
    kv: f32,
    damping: f32,
) -> JointSpec {
    JointSpec {
        name,
        joint_type: JointType::Revolute,
        axis,
        kp,
        kv,
        damping,
        ctrl_range: ARM_CTRL,
        limits: None,
    }
}

/// A finger slide along x: servo kp 200, kv 10, damping 5, `range = ctrlrange`.
pub(super) const fn finger(name: &'static str, range_m: [f32; 2]) -> JointSpec {
    JointSpec {
        name,
        joint_type: JointType::Prismatic,
        axis: [1.0, 0.0, 0.0],
        kp: 200.0,
        kv: 10.0,
        damping: 5.0,
        ctrl_range: range_m,
        limits: Some(range_m),
    }
}

const FINGER_BOX: [GeomSpec; 1] = [GeomSpec::Cuboid {
    center_m: [0.0, 0.0, 0.0],
    half_extents_m: [0.008, 0.03, 0.012],
    mass_kg: 0.05,
}];

/// The arm's bodies, parents before children. Index 0 is the base.
pub const ARM_LINKS: [LinkSpec; 9] = [
    LinkSpec {
        name: "base",
        parent: None,
        pos_in_parent_m: [0.0, 0.0, 0.4],
        joint: None,
        geoms: &[GeomSpec::Cylinder {
            center_m: [0.0, 0.0, 0.0],
            axis: [0.0, 0.0, 1.0],
            half_height_m: 0.04,
            radius_m: 0.06,
            mass_kg: 4.0,
        }],
    },
    LinkSpec {
        name: "shoulder",
        parent: Some(0),
        pos_in_parent_m: [0.0, 0.0, 0.1625],
        joint: Some(0),
        geoms: &[GeomSpec::Capsule {
            a_m: [0.0, 0.0, -0.05],
            b_m: [0.0, 0.0, 0.05],
            radius_m: 0.06,
            mass_kg: 3.761,
        }],
    },
    LinkSpec {
        name: "upper_arm",
        parent: Some(1),
        pos_in_parent_m: [0.0, 0.138, 0.0],
        joint: Some(1),
        geoms: &[GeomSpec::Capsule {
            a_m: [0.0, 0.0, 0.0],
            b_m: [0.425, 0.0, 0.0],
            radius_m: 0.055,
            mass_kg: 8.058,
        }],
    },
    LinkSpec {
        name: "forearm",
        parent: Some(2),
        pos_in_parent_m: [0.425, -0.131, 0.0],
        joint: Some(2),
        geoms: &[GeomSpec::Capsule {
            a_m: [0.0, 0.0, 0.0],
            b_m: [0.392, 0.0, 0.0],
            radius_m: 0.045,
            mass_kg: 2.846,
        }],
    },
    LinkSpec {
        name: "wrist1",
        parent: Some(3),
        pos_in_parent_m: [0.392, 0.0, 0.0],
        joint: Some(3),
        geoms: &[GeomSpec::Capsule {
            a_m: [0.0, 0.0, 0.0],
            b_m: [0.0, 0.127, 0.0],
            radius_m: 0.04,
            mass_kg: 1.37,
        }],
    },
    LinkSpec {
        name: "wrist2",
        parent: Some(4),
        pos_in_parent_m: [0.0, 0.127, -0.0997],
        joint: Some(4),
        geoms: &[GeomSpec::Capsule {
            a_m: [0.0, 0.0, 0.0],
            b_m: [0.0, 0.0, 0.0997],
            radius_m: 0.04,
            mass_kg: 1.3,
        }],
    },
    LinkSpec {
        name: "wrist3",
        parent: Some(5),
        pos_in_parent_m: [0.0, 0.0996, 0.0],
        joint: Some(5),
        geoms: &[
            GeomSpec::Cylinder {
                center_m: [0.0, 0.01, 0.0],
                axis: [0.0, 1.0, 0.0],
                half_height_m: 0.01,
                radius_m: 0.04,
                mass_kg: 0.365,
            },
            // The `hand` body (no joint, so welded to wrist3), at (0, 0.08, 0).
            GeomSpec::Cuboid {
                center_m: [0.0, 0.08, 0.0],
                half_extents_m: [0.05, 0.02, 0.02],
                mass_kg: 0.5,
            },
        ],
    },
    LinkSpec {
        name: "lf",
        parent: Some(6),
        // hand (0, 0.08, 0) + (0.03, 0.04, 0)
        pos_in_parent_m: [0.03, 0.12, 0.0],
        joint: Some(6),
        geoms: &FINGER_BOX,
    },
    LinkSpec {
        name: "rf",
        parent: Some(6),
        pos_in_parent_m: [-0.03, 0.12, 0.0],
        joint: Some(7),
        geoms: &FINGER_BOX,
    },
];

/// A `[f32; 3]` as a rapier vector.
pub fn vec3(v: [f32; 3]) -> Vector {
    Vector::new(v[0], v[1], v[2])
}
