//! A representative pick scene and the camera throughput measurement behind
//! `benches/camera.rs` and `coevolve bench camera`.

use std::time::Instant;

use nalgebra::{Isometry3, Point3, Vector3};
use rapier3d::math::{Real, Rotation, Vector};
use rapier3d::prelude::{
    ColliderBuilder, ColliderHandle, ColliderSet, RigidBodyBuilder, RigidBodyHandle, RigidBodySet,
    SharedShape,
};
use serde::{Deserialize, Serialize};

use super::{look_at, Appearance, Camera, CameraError, CameraFrame, CameraSpec};

/// A static pick scene (z-up): floor, table with legs, a UR5e-like arm reaching over the table
/// with a two-finger gripper, three cubes, a ball and a thin plate; plus two camera poses.
#[derive(Debug)]
pub struct PickScene {
    /// All bodies (fixed).
    pub bodies: RigidBodySet,
    /// All colliders, each with an [`Appearance`] in its `user_data`.
    pub colliders: ColliderSet,
    /// A fixed camera looking at the table from the front.
    pub world_from_scene_camera: Isometry3<f64>,
    /// A camera on the wrist, looking down past the fingers.
    pub world_from_wrist_camera: Isometry3<f64>,
    /// The body holding the wrist camera's housing; leave its colliders out of wrist renders.
    pub wrist_mount: RigidBodyHandle,
}

impl PickScene {
    /// Builds the scene.
    pub fn new() -> Self {
        let mut bodies = RigidBodySet::new();
        let mut colliders = ColliderSet::new();
        let mut scene = SceneBuilder {
            colliders: &mut colliders,
            next_segment: 1,
        };

        scene.add(
            ColliderBuilder::new(SharedShape::halfspace(Vector::Z)),
            [120, 120, 110],
        );
        let table_top_z: Real = 0.75;
        scene.add_box(
            [0.55, 0.0, table_top_z - 0.02],
            [0.4, 0.6, 0.02],
            0.0,
            [150, 110, 70],
        );
        for (x, y) in [(0.2, -0.55), (0.2, 0.55), (0.9, -0.55), (0.9, 0.55)] {
            let leg_half_z = 0.5 * (table_top_z - 0.04);
            scene.add_box(
                [x, y, leg_half_z],
                [0.03, 0.03, leg_half_z],
                0.0,
                [110, 80, 50],
            );
        }

        // Arm: base on the table edge, upper arm and forearm reaching to a wrist above the cube.
        let grey = [200, 200, 205];
        let blue = [60, 90, 160];
        scene.add_cylinder([0.0, 0.0, 0.75], [0.0, 0.0, 0.84], 0.075, grey);
        scene.add_cylinder([0.0, 0.0, 0.84], [0.0, 0.0, 0.92], 0.06, blue);
        scene.add_cylinder([0.0, -0.07, 0.92], [0.0, 0.12, 0.92], 0.06, blue);
        scene.add_capsule([0.0, 0.12, 0.92], [0.3, 0.12, 1.15], 0.055, grey);
        scene.add_cylinder([0.3, 0.04, 1.15], [0.3, 0.18, 1.15], 0.05, blue);
        scene.add_capsule([0.3, 0.05, 1.15], [0.6, 0.05, 1.0], 0.04, grey);
        scene.add_cylinder([0.6, -0.01, 1.0], [0.6, 0.1, 1.0], 0.04, blue);
        scene.add_cylinder([0.6, 0.0, 1.0], [0.6, 0.0, 0.92], 0.04, blue);
        scene.add_cylinder([0.6, 0.0, 0.92], [0.6, 0.0, 0.88], 0.04, grey);
        scene.add_box([0.6, 0.0, 0.86], [0.04, 0.06, 0.02], 0.0, [40, 40, 40]);
        for y in [-0.035, 0.035] {
            scene.add_box([0.6, y, 0.81], [0.01, 0.008, 0.035], 0.0, [30, 30, 30]);
        }

        // Objects on the table.
        scene.add_box(
            [0.6, 0.0, table_top_z + 0.025],
            [0.025; 3],
            0.0,
            [200, 40, 40],
        );
        scene.add_box(
            [0.45, 0.2, table_top_z + 0.025],
            [0.025; 3],
            0.5,
            [40, 180, 60],
        );
        scene.add_box(
            [0.75, -0.2, table_top_z + 0.02],
            [0.02; 3],
            -0.3,
            [230, 200, 40],
        );
        scene.add(
            ColliderBuilder::ball(0.03).translation(Vector::new(0.8, 0.15, table_top_z + 0.03)),
            [240, 130, 30],
        );
        scene.add_cylinder(
            [0.45, -0.15, table_top_z],
            [0.45, -0.15, table_top_z + 0.01],
            0.08,
            [230, 230, 230],
        );

        // Wrist camera housing, on its own body so wrist renders can leave it out.
        let wrist_mount =
            bodies.insert(RigidBodyBuilder::fixed().translation(Vector::new(0.65, 0.0, 0.9)));
        let housing = ColliderBuilder::cuboid(0.015, 0.02, 0.015).user_data(
            Appearance {
                segment_id: scene.next_segment,
                rgb: [20, 20, 20],
            }
            .to_user_data(),
        );
        colliders.insert_with_parent(housing, wrist_mount, &mut bodies);

        let up = Vector3::z();
        Self {
            bodies,
            colliders,
            world_from_scene_camera: look_at(
                &Point3::new(1.4, 0.0, 1.35),
                &Point3::new(0.5, 0.0, 0.8),
                &up,
            ),
            world_from_wrist_camera: look_at(
                &Point3::new(0.65, 0.0, 0.89),
                &Point3::new(0.6, 0.0, 0.75),
                &up,
            ),
            wrist_mount,
        }
    }

    /// True for colliders attached to the wrist camera's mount.
    pub fn is_on_wrist_mount(&self, collider: &rapier3d::prelude::Collider) -> bool {
        collider.parent() == Some(self.wrist_mount)
    }
}

impl Default for PickScene {
    fn default() -> Self {
        Self::new()
    }
}

struct SceneBuilder<'a> {
    colliders: &'a mut ColliderSet,
    next_segment: u16,
}

impl SceneBuilder<'_> {
    fn add(&mut self, builder: ColliderBuilder, rgb: [u8; 3]) -> ColliderHandle {
        let appearance = Appearance {
            segment_id: self.next_segment,
            rgb,
        };
        self.next_segment = self.next_segment.saturating_add(1);
        self.colliders
            .insert(builder.user_data(appearance.to_user_data()))
    }

    fn add_box(&mut self, centre: [Real; 3], half: [Real; 3], yaw_rad: Real, rgb: [u8; 3]) {
        let builder = ColliderBuilder::cuboid(half[0], half[1], half[2])
            .translation(Vector::from_array(centre))
            .rotation(Vector::new(0.0, 0.0, yaw_rad));
        self.add(builder, rgb);
    }

    /// A cylinder whose axis runs from `a` to `b`.
    fn add_cylinder(&mut self, a: [Real; 3], b: [Real; 3], radius: Real, rgb: [u8; 3]) {
        let (a, b) = (Vector::from_array(a), Vector::from_array(b));
        let axis = b - a;
        let rotation = Rotation::from_rotation_arc(Vector::Y, axis.normalize_or(Vector::Y));
        let builder = ColliderBuilder::cylinder(0.5 * axis.length(), radius)
            .translation(0.5 * (a + b))
            .rotation(rotation.to_scaled_axis());
        self.add(builder, rgb);
    }

    fn add_capsule(&mut self, a: [Real; 3], b: [Real; 3], radius: Real, rgb: [u8; 3]) {
        let builder = ColliderBuilder::capsule_from_endpoints(
            Vector::from_array(a),
            Vector::from_array(b),
            radius,
        );
        self.add(builder, rgb);
    }
}

/// Result of [`bench_frames_per_sec`].
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct CameraBench {
    /// Image width in pixels.
    pub width: u32,
    /// Image height in pixels.
    pub height: u32,
    /// Threads used (the measurement is single-threaded).
    pub threads: usize,
    /// Frames timed.
    pub frames: usize,
    /// Rendered frames per second on one core.
    pub frames_per_sec: f64,
    /// `frames_per_sec * width * height`.
    pub rays_per_sec: f64,
}

/// Renders `frames` 64×64 frames of [`PickScene`] on the calling thread, alternating the scene
/// camera and the wrist camera (which leaves out its own housing), and reports the throughput.
pub fn bench_frames_per_sec(frames: usize) -> Result<CameraBench, CameraError> {
    let scene = PickScene::new();
    let camera = Camera::new(CameraSpec::default())?;
    let spec = camera.spec().clone();
    let mut frame = CameraFrame::new(spec.width, spec.height);
    let render = |i: usize, frame: &mut CameraFrame| {
        if i.is_multiple_of(2) {
            camera.render(
                &scene.bodies,
                &scene.colliders,
                &scene.world_from_scene_camera,
                frame,
            );
        } else {
            let skip =
                |_: ColliderHandle, c: &rapier3d::prelude::Collider| scene.is_on_wrist_mount(c);
            camera.render_filtered(
                &scene.bodies,
                &scene.colliders,
                &scene.world_from_wrist_camera,
                skip,
                frame,
            );
        }
    };
    for i in 0..frames.clamp(2, 50) {
        render(i, &mut frame);
    }
    let frames = frames.max(1);
    let start = Instant::now();
    for i in 0..frames {
        render(i, &mut frame);
    }
    let elapsed_s = start.elapsed().as_secs_f64().max(1e-9);
    let frames_per_sec = frames as f64 / elapsed_s;
    Ok(CameraBench {
        width: spec.width,
        height: spec.height,
        threads: 1,
        frames,
        frames_per_sec,
        rays_per_sec: frames_per_sec * spec.pixel_count() as f64,
    })
}
