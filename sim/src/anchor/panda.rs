//! The panda-cube anchor scene as data: a transcription of `benches/anchors/mujoco_panda_cube.xml`
//! (a Panda-class 7-DOF arm at Menagerie's `home` pose, which is its `q = 0`, hand 2 cm above a
//! cube). Frames as in `model.rs`: every body frame is the world's at `q = 0`.

use super::model::{finger, hinge, AnchorModel, GeomSpec, JointSpec, LinkSpec};

/// The Panda-class scene.
pub static PANDA_CUBE: AnchorModel = AnchorModel {
    name: "panda-cube",
    mjcf_file: "mujoco_panda_cube.xml",
    joints: &PANDA_JOINTS,
    arm_dofs: 7,
    links: &PANDA_LINKS,
    elbow: 3,
    table_center_m: [0.55, 0.0, 0.225],
    table_half_extents_m: [0.3, 0.4, 0.225],
    cube_center_m: [0.5545, 0.0, 0.475],
};

/// Joint damping of the arm's hinges (Menagerie's default class).
const DAMPING: f32 = 1.0;

/// The nine servoed joints, in actuator order (j1..j7, gl, gr); kv = kp / 10.
const PANDA_JOINTS: [JointSpec; 9] = [
    hinge("j1", [0.0, 0.0, 1.0], 4500.0, 450.0, DAMPING),
    hinge("j2", [0.0, 1.0, 0.0], 4500.0, 450.0, DAMPING),
    hinge("j3", [0.0, 0.0, 1.0], 3500.0, 350.0, DAMPING),
    hinge("j4", [0.0, -1.0, 0.0], 3500.0, 350.0, DAMPING),
    hinge("j5", [1.0, 0.0, 0.0], 2000.0, 200.0, DAMPING),
    hinge("j6", [0.0, -1.0, 0.0], 2000.0, 200.0, DAMPING),
    hinge("j7", [0.0, 0.0, -1.0], 2000.0, 200.0, DAMPING),
    finger("gl", [0.0, 0.04]),
    finger("gr", [-0.04, 0.0]),
];

const fn capsule(a_m: [f32; 3], b_m: [f32; 3], radius_m: f32, mass_kg: f32) -> GeomSpec {
    GeomSpec::Capsule {
        a_m,
        b_m,
        radius_m,
        mass_kg,
    }
}

const fn link(
    name: &'static str,
    parent: usize,
    pos_in_parent_m: [f32; 3],
    joint: usize,
    geoms: &'static [GeomSpec],
) -> LinkSpec {
    LinkSpec {
        name,
        parent: Some(parent),
        pos_in_parent_m,
        joint: Some(joint),
        geoms,
    }
}

/// Finger origin in link7's frame: hand (0, 0, −0.107) + (0, 0, −0.0584).
const FINGER_IN_LINK7_M: [f32; 3] = [0.0, 0.0, -0.1654];

const fn finger_box(x_m: f32) -> [GeomSpec; 1] {
    [GeomSpec::Cuboid {
        center_m: [x_m, 0.0, -0.0225],
        half_extents_m: [0.01, 0.01, 0.0225],
        mass_kg: 0.015,
    }]
}

/// The arm's bodies, parents before children. Index 0 is the base (`link0`).
const PANDA_LINKS: [LinkSpec; 10] = [
    LinkSpec {
        name: "link0",
        parent: None,
        pos_in_parent_m: [0.0, 0.0, 0.0],
        joint: None,
        geoms: &[GeomSpec::Cylinder {
            center_m: [0.0, 0.0, 0.07],
            axis: [0.0, 0.0, 1.0],
            half_height_m: 0.07,
            radius_m: 0.06,
            mass_kg: 0.63,
        }],
    },
    link(
        "link1",
        0,
        [0.0, 0.0, 0.333],
        0,
        &[capsule(
            [0.0, 0.0, -0.13],
            [0.0, 0.0, -0.02],
            0.06,
            4.970684,
        )],
    ),
    link(
        "link2",
        1,
        [0.0; 3],
        1,
        &[capsule([0.0; 3], [0.0, 0.0, 0.12], 0.06, 0.646926)],
    ),
    link(
        "link3",
        2,
        [0.0, 0.0, 0.316],
        2,
        &[capsule([0.0, 0.0, -0.14], [0.0; 3], 0.06, 3.228604)],
    ),
    link(
        "link4",
        3,
        [0.0825, 0.0, 0.0],
        3,
        &[capsule([0.0; 3], [0.0, 0.0, 0.0825], 0.055, 3.587895)],
    ),
    link(
        "link5",
        4,
        [0.384, 0.0, 0.0825],
        4,
        &[capsule([-0.3, 0.0, 0.0], [-0.06, 0.0, 0.0], 0.05, 1.225946)],
    ),
    link(
        "link6",
        5,
        [0.0; 3],
        5,
        &[capsule([0.0; 3], [0.088, 0.0, 0.0], 0.045, 1.666555)],
    ),
    link(
        "link7",
        6,
        [0.088, 0.0, 0.0],
        6,
        &[
            capsule([0.0; 3], [0.0, 0.0, -0.05], 0.04, 0.735522),
            // The `hand` body (no joint, so welded to link7), at (0, 0, −0.107).
            GeomSpec::Cuboid {
                center_m: [0.0, 0.0, -0.136],
                half_extents_m: [0.1, 0.03, 0.029],
                mass_kg: 0.73,
            },
        ],
    ),
    link("lf", 7, FINGER_IN_LINK7_M, 7, &finger_box(0.015)),
    link("rf", 7, FINGER_IN_LINK7_M, 8, &finger_box(-0.015)),
];
