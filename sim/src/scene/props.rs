//! Props from a `TaskSpec`: floor, table, robot pedestal, objects (cubes, discs, plates, the
//! pan), target zones and the spatula tool.

use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};
use rapier3d::prelude::*;

use crate::camera::Appearance;
use crate::convert::{pose_from_iso, vec_from_na};
use crate::scene::groups;
use crate::scene::shapes::collider_for_geometry;
use crate::task::{ObjectKind, ObjectSpec, TaskSpec};

pub const TABLE_SEGMENT: u16 = 1;
pub const FLOOR_SEGMENT: u16 = 2;
pub const PEDESTAL_SEGMENT: u16 = 3;
pub const TOOL_SEGMENT: u16 = 9;
/// Objects get `OBJECT_SEGMENT_BASE + index`, zones `ZONE_SEGMENT_BASE + index`.
pub const OBJECT_SEGMENT_BASE: u16 = 10;
pub const ZONE_SEGMENT_BASE: u16 = 60;

/// Handles of the static environment.
#[derive(Clone, Debug)]
pub struct Environment {
    pub ground: RigidBodyHandle,
    pub table: ColliderHandle,
    pub floor: ColliderHandle,
    pub pedestal: ColliderHandle,
}

pub fn build_environment(world: &mut PhysicsWorld, task: &TaskSpec, friction: f32) -> Environment {
    let ground = world.insert_body(RigidBodyBuilder::fixed());
    let t = &task.table;
    let table = world.insert_collider(
        ColliderBuilder::cuboid(
            (t.size_m[0] / 2.0) as f32,
            (t.size_m[1] / 2.0) as f32,
            (t.size_m[2] / 2.0) as f32,
        )
        .translation(Vector::new(
            t.center_xy_m[0] as f32,
            t.center_xy_m[1] as f32,
            (t.top_z_m - t.size_m[2] / 2.0) as f32,
        ))
        .friction(t.friction as f32)
        .collision_groups(groups::env())
        .user_data(
            Appearance {
                segment_id: TABLE_SEGMENT,
                rgb: t.rgb,
            }
            .to_user_data(),
        ),
        Some(ground),
    );
    // The floor is a thick slab rather than a halfspace so the camera sees a bounded shape.
    let floor = world.insert_collider(
        ColliderBuilder::cuboid(3.0, 3.0, 0.05)
            .translation(Vector::new(0.0, 0.0, -0.05))
            .friction(friction)
            .collision_groups(groups::env())
            .user_data(
                Appearance {
                    segment_id: FLOOR_SEGMENT,
                    rgb: [90, 90, 96],
                }
                .to_user_data(),
            ),
        Some(ground),
    );
    // The robot stands on a pedestal whose top is level with the table.
    let pedestal = world.insert_collider(
        ColliderBuilder::cylinder((t.top_z_m / 2.0) as f32, 0.09)
            .position(pose_from_iso(&Isometry3::from_parts(
                Translation3::new(0.0, 0.0, t.top_z_m / 2.0 - 0.001),
                UnitQuaternion::from_axis_angle(&Vector3::x_axis(), std::f64::consts::FRAC_PI_2),
            )))
            .collision_groups(groups::zone())
            .user_data(
                Appearance {
                    segment_id: PEDESTAL_SEGMENT,
                    rgb: [70, 70, 70],
                }
                .to_user_data(),
            ),
        Some(ground),
    );
    Environment {
        ground,
        table,
        floor,
        pedestal,
    }
}

/// Inserts an object; returns its body and colliders.
pub fn build_object(
    world: &mut PhysicsWorld,
    index: usize,
    spec: &ObjectSpec,
) -> (RigidBodyHandle, Vec<ColliderHandle>) {
    let builder = if spec.fixed {
        RigidBodyBuilder::fixed()
    } else {
        RigidBodyBuilder::dynamic()
    };
    let body = world.insert_body(
        builder
            .pose(pose_from_iso(&spec.pose.to_isometry()))
            .can_sleep(false),
    );
    let appearance = Appearance {
        segment_id: OBJECT_SEGMENT_BASE + index as u16,
        rgb: spec.rgb,
    };
    let mut builders: Vec<ColliderBuilder> = spec
        .kind
        .parts()
        .iter()
        .filter_map(|(pose, shape)| collider_for_geometry(shape, pose))
        .collect();
    if let ObjectKind::Disc {
        radius_m,
        thickness_m,
    } = spec.kind
    {
        // A pancake's rim is rounded all round: a blade's edge meets it below its middle and
        // lifts it, where a square rim would only be pushed along; and a turned pancake finds
        // no flat band across its rim to stand on (a real one is too soft to stand).
        let border_m = thickness_m * 0.45;
        for b in &mut builders {
            b.shape = SharedShape::round_cylinder(
                (thickness_m / 2.0 - border_m) as f32,
                (radius_m - border_m) as f32,
                border_m as f32,
            );
        }
    }
    // Spread the mass over the parts by volume.
    let volumes: Vec<f64> = builders
        .iter()
        .map(|b| b.shape.mass_properties(1.0).mass() as f64)
        .collect();
    let total: f64 = volumes.iter().sum::<f64>().max(1e-12);
    let mut colliders = Vec::new();
    for (builder, volume) in builders.into_iter().zip(volumes) {
        let c = world.insert_collider(
            builder
                .mass((spec.mass_kg * volume / total) as f32)
                .friction(spec.friction as f32)
                .collision_groups(groups::object())
                .user_data(appearance.to_user_data()),
            Some(body),
        );
        colliders.push(c);
    }
    (body, colliders)
}

/// Inserts a target zone: a flat box drawn on the table that collides with nothing.
pub fn build_zone(
    world: &mut PhysicsWorld,
    ground: RigidBodyHandle,
    index: usize,
    zone: &crate::task::ZoneSpec,
) -> ColliderHandle {
    let h = zone.half_extents_m;
    world.insert_collider(
        ColliderBuilder::cuboid(h[0] as f32, h[1] as f32, h[2] as f32)
            .translation(vec_from_na(&Vector3::from(zone.center_m)))
            .collision_groups(groups::zone())
            .user_data(
                Appearance {
                    segment_id: ZONE_SEGMENT_BASE + index as u16,
                    rgb: zone.rgb,
                }
                .to_user_data(),
            ),
        Some(ground),
    )
}

/// One box of the spatula, in the TCP frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ToolPart {
    pub name: &'static str,
    /// Centre along the TCP z axis (m).
    pub z_in_ee_m: f64,
    pub half_extents_m: [f64; 3],
    pub mass_kg: f64,
    /// Length of the bevel that thins the box's +x end to an edge on its +z face (the face
    /// toward the work when the TCP points down): a blade's leading edge. 0: a plain box.
    pub bevel_m: f64,
}

/// The spatula: a handle along the approach axis and a thin blade at its end.
pub const SPATULA_PARTS: [ToolPart; 2] = [
    ToolPart {
        name: "handle",
        z_in_ee_m: -0.04,
        half_extents_m: [0.008, 0.008, 0.05],
        mass_kg: 0.15,
        bevel_m: 0.0,
    },
    ToolPart {
        name: "blade",
        z_in_ee_m: 0.03,
        half_extents_m: [0.035, 0.04, 0.001],
        mass_kg: 0.05,
        bevel_m: 0.008,
    },
];

/// The spatula's tool tip in the TCP frame: the middle of the blade's leading (+x) edge, on
/// the face toward the work (+z).
pub fn spatula_tip_in_ee() -> Vector3<f64> {
    let blade = &SPATULA_PARTS[1];
    let [half_x, _, half_z] = blade.half_extents_m;
    Vector3::new(half_x, 0.0, blade.z_in_ee_m + half_z)
}

/// Spatula colour.
pub const TOOL_RGB: [u8; 3] = [180, 180, 190];

/// Mounts a spatula on `body` at `body_from_ee` (the TCP): a handle along the approach axis
/// and a thin blade (7 × 8 cm, 2 mm) across it; the wrist pitches the blade to slide it under
/// a disc.
pub fn build_spatula(
    world: &mut PhysicsWorld,
    body: RigidBodyHandle,
    body_from_ee: &Isometry3<f64>,
) -> Vec<ColliderHandle> {
    let appearance = Appearance {
        segment_id: TOOL_SEGMENT,
        rgb: TOOL_RGB,
    }
    .to_user_data();
    let parts = SPATULA_PARTS.map(|part| {
        (
            Isometry3::translation(0.0, 0.0, part.z_in_ee_m),
            tool_part_shape(&part),
            part.mass_kg as f32,
        )
    });
    parts
        .into_iter()
        .map(|(pose, shape, mass)| {
            world.insert_collider(
                ColliderBuilder::new(shape)
                    .position(pose_from_iso(&(body_from_ee * pose)))
                    .mass(mass)
                    .friction(0.4)
                    .collision_groups(groups::robot())
                    .user_data(appearance),
                Some(body),
            )
        })
        .collect()
}

/// A tool part's collider shape: its box, or with a bevel the convex hull whose top (−z) face
/// stops `bevel_m` short of the +x end, so the end is an edge on the bottom face.
fn tool_part_shape(part: &ToolPart) -> SharedShape {
    let [hx, hy, hz] = part.half_extents_m.map(|v| v as f32);
    if part.bevel_m <= 0.0 {
        return SharedShape::cuboid(hx, hy, hz);
    }
    let top_x = hx - part.bevel_m as f32;
    let mut points = Vec::with_capacity(8);
    for y in [-hy, hy] {
        for x in [-hx, hx] {
            points.push(Vector::new(x, y, hz));
        }
        for x in [-hx, top_x] {
            points.push(Vector::new(x, y, -hz));
        }
    }
    SharedShape::convex_hull(&points).unwrap_or_else(|| SharedShape::cuboid(hx, hy, hz))
}
