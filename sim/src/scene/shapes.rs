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

/// A collider for a URDF shape placed at `body_from_geometry`. An STL mesh collides as the
/// convex hull of its scaled vertices (as MuJoCo treats meshes); other mesh formats and
/// degenerate hulls yield `None` (the link keeps its mass, without a collider).
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
        Shape::Mesh {
            data: Some(mesh),
            scale,
            ..
        } => {
            let s = scale.map(|v| v as f32);
            let points: Vec<Vector> = mesh
                .vertices()
                .map(|v| Vector::new(v[0] * s.x, v[1] * s.y, v[2] * s.z))
                .collect();
            (
                ColliderBuilder::convex_hull(&points)?,
                Isometry3::identity(),
            )
        }
        Shape::Mesh { data: None, .. } => return None,
    };
    Some(builder.position(pose_from_iso(&(body_from_geometry * local))))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use robots::stl::MeshData;

    use super::*;

    #[test]
    fn an_stl_mesh_collides_as_the_hull_of_its_scaled_vertices() {
        let tetra = MeshData {
            triangles: vec![
                [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
                [[0.0, 0.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]],
                [[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
                [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 0.0]],
            ],
        };
        let shape = Shape::Mesh {
            path: "tetra.stl".into(),
            scale: Vector3::new(0.5, 0.25, 0.1),
            data: Some(Arc::new(tetra)),
        };
        let at = Isometry3::translation(1.0, 2.0, 3.0);
        let collider = collider_for_geometry(&shape, &at)
            .map(|b| b.build())
            .unwrap_or_else(|| panic!("no collider for an STL mesh"));
        let aabb = collider.compute_aabb();
        let (lo, hi) = (aabb.mins, aabb.maxs);
        for (got, want) in [lo.x, lo.y, lo.z, hi.x, hi.y, hi.z]
            .iter()
            .zip([1.0, 2.0, 3.0, 1.5, 2.25, 3.1])
        {
            assert!((got - want).abs() < 1e-4, "aabb {lo:?}..{hi:?}");
        }
        let other = Shape::Mesh {
            path: "arm.dae".into(),
            scale: Vector3::new(1.0, 1.0, 1.0),
            data: None,
        };
        assert!(collider_for_geometry(&other, &at).is_none());
    }
}
