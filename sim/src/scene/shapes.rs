//! URDF / task geometry → rapier colliders, and the collision groups of scene roles.

use nalgebra::{Isometry3, UnitQuaternion, Vector3};
use rapier3d::prelude::*;
use robots::Shape;

use crate::convert::pose_from_iso;

/// Collision groups: the robot does not collide with itself; zones collide with nothing (they
/// are drawn by the camera only).
pub mod groups {
    use rapier3d::prelude::*;

    pub const ROBOT: Group = Group::GROUP_1;
    pub const ENV: Group = Group::GROUP_2;
    pub const OBJECT: Group = Group::GROUP_3;
    pub const ZONE: Group = Group::GROUP_4;

    pub fn robot() -> InteractionGroups {
        InteractionGroups::new(ROBOT, ENV.union(OBJECT), InteractionTestMode::And)
    }
    pub fn env() -> InteractionGroups {
        InteractionGroups::new(ENV, ROBOT.union(OBJECT), InteractionTestMode::And)
    }
    pub fn object() -> InteractionGroups {
        InteractionGroups::new(
            OBJECT,
            ROBOT.union(ENV).union(OBJECT),
            InteractionTestMode::And,
        )
    }
    pub fn zone() -> InteractionGroups {
        InteractionGroups::new(ZONE, Group::NONE, InteractionTestMode::And)
    }
}

/// A collider for a URDF shape placed at `body_from_geometry`. Meshes have no primitive
/// equivalent and yield `None` (the loader already reported them; their link keeps its mass).
pub fn collider_for_geometry(
    shape: &Shape,
    body_from_geometry: &Isometry3<f64>,
) -> Option<ColliderBuilder> {
    // rapier's cylinders are along y, URDF's along z.
    let z_to_y = Isometry3::from_parts(
        nalgebra::Translation3::identity(),
        UnitQuaternion::from_axis_angle(&Vector3::x_axis(), std::f64::consts::FRAC_PI_2),
    );
    let (builder, local) = match shape {
        Shape::Box { size_m } => (
            ColliderBuilder::cuboid(
                (size_m.x / 2.0) as f32,
                (size_m.y / 2.0) as f32,
                (size_m.z / 2.0) as f32,
            ),
            Isometry3::identity(),
        ),
        Shape::Cylinder { radius_m, length_m } => (
            ColliderBuilder::cylinder((length_m / 2.0) as f32, *radius_m as f32),
            z_to_y,
        ),
        Shape::Capsule { radius_m, length_m } => (
            ColliderBuilder::capsule_z((length_m / 2.0) as f32, *radius_m as f32),
            Isometry3::identity(),
        ),
        Shape::Sphere { radius_m } => (
            ColliderBuilder::ball(*radius_m as f32),
            Isometry3::identity(),
        ),
        Shape::Mesh { .. } => return None,
    };
    Some(builder.position(pose_from_iso(&(body_from_geometry * local))))
}
