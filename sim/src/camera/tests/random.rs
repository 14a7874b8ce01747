//! Seeded random scenes and views for comparing the fast path with references.

use nalgebra::{Isometry3, Point3, Vector3};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rapier3d::math::Vector;
use rapier3d::prelude::{
    ColliderBuilder, ColliderSet, RigidBodyBuilder, RigidBodySet, SharedShape,
};

use super::super::look_at;
use super::appearance;

/// Shapes parry ray-casts exactly (closed forms, or a BVH of triangles).
pub(super) const PARRY_EXACT_SHAPES: &[&str] = &["cuboid", "ball", "capsule", "tetra_mesh"];
/// Shapes with an analytic intersection in the renderer.
pub(super) const ANALYTIC_SHAPES: &[&str] = &["cuboid", "ball", "capsule", "cylinder", "disc"];

fn random_builder(kind: &str, rng: &mut ChaCha8Rng) -> ColliderBuilder {
    let mut size = || rng.gen_range(0.01..0.25);
    match kind {
        "cuboid" => ColliderBuilder::cuboid(size(), size(), size()),
        "ball" => ColliderBuilder::ball(size()),
        "capsule" => ColliderBuilder::capsule_from_endpoints(
            Vector::new(size(), 0.0, 0.0),
            Vector::new(-size(), size(), 0.0),
            size() * 0.5,
        ),
        "cylinder" => ColliderBuilder::cylinder(size(), size()),
        "disc" => ColliderBuilder::cylinder(size() * 0.05, size()),
        _ => {
            let s = size();
            let vertices = vec![
                Vector::new(0.0, 0.0, 0.0),
                Vector::new(s, 0.0, 0.0),
                Vector::new(0.0, s, 0.0),
                Vector::new(0.0, 0.0, s),
            ];
            let indices = vec![[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]];
            ColliderBuilder::trimesh(vertices, indices).unwrap()
        }
    }
}

/// A floor and 40 random colliders of the given kinds in front of x = 0: a third attached to
/// bodies, collider 5 a sensor (segment 15), collider 12 disabled (segment 22).
pub(super) fn random_scene(rng: &mut ChaCha8Rng, kinds: &[&str]) -> (RigidBodySet, ColliderSet) {
    let mut bodies = RigidBodySet::new();
    let mut colliders = ColliderSet::new();
    colliders
        .insert(ColliderBuilder::new(SharedShape::halfspace(Vector::Z)).user_data(appearance(1)));
    for i in 0..40u16 {
        let builder = random_builder(kinds[usize::from(i) % kinds.len()], rng);
        let translation = Vector::new(
            rng.gen_range(0.3..2.0),
            rng.gen_range(-0.8..0.8),
            rng.gen_range(0.0..1.2),
        );
        let axis_angle = Vector::new(
            rng.gen_range(-3.0..3.0),
            rng.gen_range(-3.0..3.0),
            rng.gen_range(-3.0..3.0),
        );
        let builder = builder
            .user_data(appearance(10 + i))
            .sensor(i == 5)
            .enabled(i != 12);
        if i % 3 == 0 {
            let body = bodies.insert(
                RigidBodyBuilder::fixed()
                    .translation(translation)
                    .rotation(axis_angle),
            );
            let offset = Vector::new(0.0, 0.0, rng.gen_range(-0.1..0.1));
            colliders.insert_with_parent(builder.translation(offset), body, &mut bodies);
        } else {
            colliders.insert(builder.translation(translation).rotation(axis_angle));
        }
    }
    (bodies, colliders)
}

pub(super) fn random_view(rng: &mut ChaCha8Rng) -> Isometry3<f64> {
    let eye = Point3::new(
        rng.gen_range(-0.8..0.2),
        rng.gen_range(-0.5..0.5),
        rng.gen_range(0.2..1.6),
    );
    let target = Point3::new(
        rng.gen_range(0.8..1.5),
        rng.gen_range(-0.3..0.3),
        rng.gen_range(0.0..0.8),
    );
    look_at(&eye, &target, &Vector3::z())
}
