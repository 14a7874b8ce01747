//! RGB-D + segmentation camera rendered by ray casting against a rapier scene.
//!
//! This is the visual observation of our policies (64×64 typical). It is a pinhole camera in the
//! OpenCV convention (camera frame: +z forward along the optical axis, +x right, +y down), not a
//! rasteriser and not a physically based renderer: one ray per pixel through the pixel centre,
//! Lambert shading with one fixed directional light plus an ambient term.
//!
//! Main types: [`CameraSpec`] (intrinsics and clip range), [`Camera`] (precomputed rays and the
//! renderer), [`CameraFrame`] (the reusable output buffers), [`Appearance`] (colour and
//! segmentation id, packed in each collider's `user_data`), [`look_at`] (a `world_from_camera`
//! helper).
//!
//! Depth is the z-depth along the optical axis in metres. A pixel whose first surface lies farther
//! than `far_m` sees the background (depth `0.0`, segment `0`); a pixel whose first surface is
//! closer than `near_m` keeps that surface's colour and segment but reports depth `0.0`, as a real
//! depth sensor reports no reading for too-close objects.
//!
//! The fast path ([`Camera::render`]) gathers the visible colliders once per frame, projects each
//! one's bounding box to a pixel rectangle and ray-casts only the pixels inside it, with analytic
//! intersections for boxes, balls, capsules, cylinders and half-spaces (parry's `RayCast` for any
//! other shape). [`Camera::render_reference`] is the brute-force parry ray cast over all
//! colliders; the two agree exactly where parry is exact. parry 0.31 casts rays on cylinders and
//! cones with GJK, which is off by millimetres to centimetres at silhouettes and cap rims, so the
//! tests check cylinders against an independent f64 reference instead.

mod bench;
mod prims;
#[cfg(test)]
mod tests;

use std::sync::{Mutex, TryLockError};

use nalgebra::{Isometry3, Point3, Rotation3, Translation3, UnitQuaternion, Vector3};
use rapier3d::math::{Pose, Real, Vector};
use rapier3d::parry::query::Ray;
use rapier3d::prelude::{Collider, ColliderHandle, ColliderSet, RigidBodySet};
use serde::{Deserialize, Serialize};

pub use bench::{bench_frames_per_sec, CameraBench, PickScene};
use prims::{Prim, NO_HIT};

/// Errors of the camera module.
#[derive(Debug, thiserror::Error, PartialEq)]
#[non_exhaustive]
pub enum CameraError {
    /// A field of a [`CameraSpec`] (or an argument of its constructor) is out of range.
    #[error("sim: camera spec field `{field}` is invalid: {reason}")]
    InvalidSpec {
        /// The offending field or argument, e.g. `"far_m"`.
        field: &'static str,
        /// What is wrong with it.
        reason: String,
    },
}

/// Largest accepted image side, in pixels.
pub const MAX_IMAGE_SIDE_PX: u32 = 8192;

/// Pinhole intrinsics and clip range of a camera (OpenCV convention, pixel centres at integer
/// coordinates: the ray of pixel `(u, v)` passes through `((u - cx) / fx, (v - cy) / fy, 1)`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct CameraSpec {
    /// Image width in pixels.
    pub width: u32,
    /// Image height in pixels.
    pub height: u32,
    /// Horizontal focal length in pixels.
    pub fx: f64,
    /// Vertical focal length in pixels.
    pub fy: f64,
    /// Principal point, x, in pixels.
    pub cx: f64,
    /// Principal point, y, in pixels.
    pub cy: f64,
    /// Closest z-depth with a valid depth reading, in metres.
    pub near_m: f64,
    /// Farthest z-depth that is seen at all, in metres.
    pub far_m: f64,
}

impl Default for CameraSpec {
    /// 64×64 pixels, 60° vertical field of view, square pixels, centred principal point,
    /// near 0.02 m, far 3.0 m.
    fn default() -> Self {
        Self::from_fov_unchecked(64, 64, 60.0)
    }
}

impl CameraSpec {
    /// A spec with square pixels, a centred principal point, the given vertical field of view and
    /// the default clip range (near 0.02 m, far 3.0 m).
    pub fn from_fov(width: u32, height: u32, fov_y_deg: f64) -> Result<Self, CameraError> {
        if !(fov_y_deg.is_finite() && fov_y_deg > 0.0 && fov_y_deg < 180.0) {
            return Err(CameraError::InvalidSpec {
                field: "fov_y_deg",
                reason: format!("{fov_y_deg} is not in (0, 180) degrees"),
            });
        }
        let spec = Self::from_fov_unchecked(width, height, fov_y_deg);
        spec.validate()?;
        Ok(spec)
    }

    fn from_fov_unchecked(width: u32, height: u32, fov_y_deg: f64) -> Self {
        let fy = 0.5 * f64::from(height) / (0.5 * fov_y_deg.to_radians()).tan();
        Self {
            width,
            height,
            fx: fy,
            fy,
            cx: 0.5 * (f64::from(width) - 1.0),
            cy: 0.5 * (f64::from(height) - 1.0),
            near_m: 0.02,
            far_m: 3.0,
        }
    }

    /// Checks every field; the error names the first bad one.
    pub fn validate(&self) -> Result<(), CameraError> {
        let bad =
            |field: &'static str, reason: String| Err(CameraError::InvalidSpec { field, reason });
        for (field, side) in [("width", self.width), ("height", self.height)] {
            if side == 0 || side > MAX_IMAGE_SIDE_PX {
                return bad(
                    field,
                    format!("{side} px is not in 1..={MAX_IMAGE_SIDE_PX}"),
                );
            }
        }
        for (field, focal) in [("fx", self.fx), ("fy", self.fy)] {
            if !(focal.is_finite() && focal > 0.0) {
                return bad(
                    field,
                    format!("{focal} px is not a positive finite focal length"),
                );
            }
        }
        for (field, centre) in [("cx", self.cx), ("cy", self.cy)] {
            if !centre.is_finite() {
                return bad(field, format!("{centre} px is not finite"));
            }
        }
        if !(self.near_m.is_finite() && self.near_m >= 0.0) {
            return bad(
                "near_m",
                format!("{} m is not a finite distance >= 0", self.near_m),
            );
        }
        if !(self.far_m.is_finite() && self.far_m > self.near_m) {
            return bad(
                "far_m",
                format!(
                    "{} m is not finite and > near_m ({} m)",
                    self.far_m, self.near_m
                ),
            );
        }
        Ok(())
    }

    /// Number of pixels, `width * height`.
    pub fn pixel_count(&self) -> usize {
        self.width as usize * self.height as usize
    }
}

/// Colour and segmentation id of a collider, packed in its `user_data`: bits 0..16 hold
/// `segment_id`, bits 16..40 hold `rgb` (red lowest); higher bits are ignored. Segment 0 means
/// background (no hit); a collider whose `user_data` was never set renders black with segment 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Appearance {
    /// Segmentation id written to [`CameraFrame::segmentation`]; 0 is reserved for background.
    pub segment_id: u16,
    /// Albedo, before shading.
    pub rgb: [u8; 3],
}

impl Appearance {
    /// Packs this appearance into a collider `user_data` value.
    pub fn to_user_data(self) -> u128 {
        let [r, g, b] = self.rgb;
        u128::from(self.segment_id)
            | u128::from(r) << 16
            | u128::from(g) << 24
            | u128::from(b) << 32
    }

    /// Unpacks an appearance from a collider `user_data` value.
    pub fn from_user_data(user_data: u128) -> Self {
        let byte = |shift: u32| ((user_data >> shift) & 0xff) as u8;
        Self {
            segment_id: (user_data & 0xffff) as u16,
            rgb: [byte(16), byte(24), byte(32)],
        }
    }
}

/// One rendered image: RGB, z-depth and segmentation, row-major, top row first.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CameraFrame {
    /// Image width in pixels.
    pub width: u32,
    /// Image height in pixels.
    pub height: u32,
    /// Shaded colour, 3 bytes per pixel.
    pub rgb: Vec<u8>,
    /// Z-depth along the optical axis in metres; 0.0 where there is no valid reading.
    pub depth_m: Vec<f32>,
    /// Segment id of the first surface hit; 0 for background.
    pub segmentation: Vec<u16>,
}

impl CameraFrame {
    /// An all-background frame of the given size.
    pub fn new(width: u32, height: u32) -> Self {
        let mut frame = Self::default();
        frame.resize(width, height);
        frame
    }

    /// Sets the size, keeping the allocations when they are big enough.
    fn resize(&mut self, width: u32, height: u32) {
        let pixels = width as usize * height as usize;
        self.width = width;
        self.height = height;
        self.rgb.resize(3 * pixels, 0);
        self.depth_m.resize(pixels, 0.0);
        self.segmentation.resize(pixels, 0);
    }
}

/// Lighting of the rendered images.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ShadingSpec {
    /// Direction from the scene towards the light, in the world frame (normalised on use).
    /// Default `[0.4, 0.3, 1.0]`: from above (the world is z-up), slightly to the side.
    pub light_dir_in_world: [f64; 3],
    /// Fraction of the albedo always visible. Default 0.35.
    pub ambient: f64,
    /// Fraction of the albedo scaled by the cosine of the light incidence. Default 0.65.
    pub diffuse: f64,
    /// Colour of pixels that hit nothing. Default `[0, 0, 0]`.
    pub background_rgb: [u8; 3],
}

impl Default for ShadingSpec {
    fn default() -> Self {
        Self {
            light_dir_in_world: [0.4, 0.3, 1.0],
            ambient: 0.35,
            diffuse: 0.65,
            background_rgb: [0, 0, 0],
        }
    }
}

/// `world_from_camera` for a camera at `eye` looking at `target`, with the image "up" (−y of the
/// camera) as close to `up` as possible. If `up` is parallel to the viewing direction another
/// perpendicular axis is chosen. If `eye == target` the camera looks along world +x.
pub fn look_at(eye: &Point3<f64>, target: &Point3<f64>, up: &Vector3<f64>) -> Isometry3<f64> {
    let forward = (target - eye)
        .try_normalize(1e-12)
        .unwrap_or_else(Vector3::x);
    let right = [*up, Vector3::z(), Vector3::x(), Vector3::y()]
        .iter()
        .find_map(|candidate| forward.cross(candidate).try_normalize(1e-9))
        .unwrap_or_else(Vector3::y);
    let down = forward.cross(&right);
    let rotation =
        Rotation3::from_matrix_unchecked(nalgebra::Matrix3::from_columns(&[right, down, forward]));
    Isometry3::from_parts(
        Translation3::from(eye.coords),
        UnitQuaternion::from_rotation_matrix(&rotation),
    )
}

/// Per-frame working memory of the fast path.
#[derive(Debug, Default)]
struct Scratch {
    prims: Vec<Prim>,
    /// Index into `prims` of the first surface of each pixel, or [`NO_HIT`].
    hit_prim: Vec<u32>,
}

/// A camera with precomputed per-pixel rays and the renderer.
///
/// `render` takes `&self`; its working memory sits behind a mutex that is only ever `try_lock`ed,
/// so sharing one camera between threads is correct but allocates when two renders overlap. Give
/// each thread its own camera (cloning is cheap) to keep rendering allocation-free.
pub struct Camera {
    spec: CameraSpec,
    shading: ShadingSpec,
    /// `(x / z, y / z)` of each pixel's ray in the camera frame, row-major.
    ray_xy_per_z: Vec<[f32; 2]>,
    scratch: Mutex<Scratch>,
}

impl std::fmt::Debug for Camera {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Camera")
            .field("spec", &self.spec)
            .field("shading", &self.shading)
            .finish_non_exhaustive()
    }
}

impl Clone for Camera {
    fn clone(&self) -> Self {
        Self {
            spec: self.spec.clone(),
            shading: self.shading.clone(),
            ray_xy_per_z: self.ray_xy_per_z.clone(),
            scratch: Mutex::default(),
        }
    }
}

impl Camera {
    /// Validates `spec` and precomputes the rays, with the default [`ShadingSpec`].
    pub fn new(spec: CameraSpec) -> Result<Self, CameraError> {
        spec.validate()?;
        let mut ray_xy_per_z = Vec::with_capacity(spec.pixel_count());
        for v in 0..spec.height {
            for u in 0..spec.width {
                ray_xy_per_z.push([
                    ((f64::from(u) - spec.cx) / spec.fx) as f32,
                    ((f64::from(v) - spec.cy) / spec.fy) as f32,
                ]);
            }
        }
        Ok(Self {
            spec,
            shading: ShadingSpec::default(),
            ray_xy_per_z,
            scratch: Mutex::default(),
        })
    }

    /// Replaces the lighting.
    pub fn with_shading(mut self, shading: ShadingSpec) -> Self {
        self.shading = shading;
        self
    }

    /// The intrinsics this camera was built from.
    pub fn spec(&self) -> &CameraSpec {
        &self.spec
    }

    /// The lighting in use.
    pub fn shading(&self) -> &ShadingSpec {
        &self.shading
    }

    /// Renders every enabled, non-sensor collider into `out` (resized if needed, reusing its
    /// buffers). A collider attached to a body is drawn at the body's current pose times its
    /// offset, so bodies moved with `set_position` are seen before the next physics step.
    pub fn render(
        &self,
        bodies: &RigidBodySet,
        colliders: &ColliderSet,
        world_from_camera: &Isometry3<f64>,
        out: &mut CameraFrame,
    ) {
        self.render_filtered(bodies, colliders, world_from_camera, |_, _| false, out);
    }

    /// Like [`Self::render`] but also leaves out every collider for which `skip` returns true,
    /// e.g. `|_, c| c.parent() == Some(wrist_link)` so a wrist camera does not see its mount.
    pub fn render_filtered(
        &self,
        bodies: &RigidBodySet,
        colliders: &ColliderSet,
        world_from_camera: &Isometry3<f64>,
        skip: impl Fn(ColliderHandle, &Collider) -> bool,
        out: &mut CameraFrame,
    ) {
        match self.scratch.try_lock() {
            Ok(mut scratch) => self.render_with(
                bodies,
                colliders,
                world_from_camera,
                &skip,
                &mut scratch,
                out,
            ),
            Err(TryLockError::Poisoned(poisoned)) => {
                let mut scratch = poisoned.into_inner();
                self.render_with(
                    bodies,
                    colliders,
                    world_from_camera,
                    &skip,
                    &mut scratch,
                    out,
                );
            }
            Err(TryLockError::WouldBlock) => {
                let mut scratch = Scratch::default();
                self.render_with(
                    bodies,
                    colliders,
                    world_from_camera,
                    &skip,
                    &mut scratch,
                    out,
                );
            }
        }
    }

    fn render_with(
        &self,
        bodies: &RigidBodySet,
        colliders: &ColliderSet,
        world_from_camera: &Isometry3<f64>,
        skip: &dyn Fn(ColliderHandle, &Collider) -> bool,
        scratch: &mut Scratch,
        out: &mut CameraFrame,
    ) {
        out.resize(self.spec.width, self.spec.height);
        let world_from_camera = pose_from_isometry(world_from_camera);
        prims::gather(
            bodies,
            colliders,
            &world_from_camera,
            &self.spec,
            skip,
            &mut scratch.prims,
        );
        scratch.hit_prim.clear();
        scratch.hit_prim.resize(self.spec.pixel_count(), NO_HIT);
        // `depth_m` holds the best time of impact so far, which is the z-depth (rays have z = 1).
        out.depth_m.fill(f32::INFINITY);
        let far_m = self.spec.far_m as f32;
        for (index, prim) in scratch.prims.iter().enumerate() {
            prim.cast_rect(
                colliders,
                self.spec.width as usize,
                &self.ray_xy_per_z,
                far_m,
                index as u32,
                &scratch.prims,
                &mut out.depth_m,
                &mut scratch.hit_prim,
            );
        }
        let shader = Shader::new(&self.shading, self.spec.near_m as f32);
        for (pixel, &hit) in scratch.hit_prim.iter().enumerate() {
            let [x, y] = self.ray_xy_per_z.get(pixel).copied().unwrap_or([0.0, 0.0]);
            let dir_in_camera = Vector::new(x, y, 1.0);
            let hit = scratch.prims.get(hit as usize).map(|prim| {
                let t = out.depth_m.get(pixel).copied().unwrap_or(0.0);
                let normal_in_world = prim.normal_in_world(colliders, dir_in_camera, t);
                (t, prim.appearance, normal_in_world)
            });
            shader.write_pixel(out, pixel, hit);
        }
    }

    /// Brute-force reference renderer: every pixel ray is cast against every collider with
    /// parry's `cast_ray_and_get_normal` (20-30× slower than [`Self::render`]). Exact for boxes,
    /// balls, capsules, half-spaces and meshes; GJK-approximate for cylinders and cones.
    pub fn render_reference(
        &self,
        bodies: &RigidBodySet,
        colliders: &ColliderSet,
        world_from_camera: &Isometry3<f64>,
        skip: impl Fn(ColliderHandle, &Collider) -> bool,
        out: &mut CameraFrame,
    ) {
        out.resize(self.spec.width, self.spec.height);
        let world_from_camera = pose_from_isometry(world_from_camera);
        let visible: Vec<(Pose, &Collider)> = colliders
            .iter()
            .filter(|(handle, collider)| prims::is_visible(*handle, collider, &skip))
            .map(|(_, collider)| (prims::world_from_collider(bodies, collider), collider))
            .collect();
        let far_m = self.spec.far_m as Real;
        let shader = Shader::new(&self.shading, self.spec.near_m as f32);
        for (pixel, [x, y]) in self.ray_xy_per_z.iter().enumerate() {
            let dir_in_world = world_from_camera.rotation * Vector::new(*x, *y, 1.0);
            let ray = Ray::new(world_from_camera.translation, dir_in_world);
            let mut best: Option<(f32, Appearance, Vector)> = None;
            for (world_from_collider, collider) in &visible {
                let max_toi = best.map_or(far_m, |(t, _, _)| t);
                let Some(hit) = collider.shape().cast_ray_and_get_normal(
                    world_from_collider,
                    &ray,
                    max_toi,
                    true,
                ) else {
                    continue;
                };
                if best.is_none_or(|(t, _, _)| hit.time_of_impact < t) {
                    let appearance = Appearance::from_user_data(collider.user_data);
                    best = Some((hit.time_of_impact, appearance, hit.normal));
                }
            }
            shader.write_pixel(out, pixel, best);
        }
    }
}

/// Converts our f64 nalgebra pose to rapier's f32 glam pose.
fn pose_from_isometry(iso: &Isometry3<f64>) -> Pose {
    let q = iso.rotation.quaternion();
    let rotation =
        rapier3d::math::Rotation::from_xyzw(q.i as f32, q.j as f32, q.k as f32, q.w as f32)
            .normalize();
    let t = iso.translation.vector;
    Pose::from_parts(Vector::new(t.x as f32, t.y as f32, t.z as f32), rotation)
}

/// Turns a first hit (or its absence) into the output pixels.
struct Shader {
    light_in_world: Vector,
    ambient: f32,
    diffuse: f32,
    background_rgb: [u8; 3],
    near_m: f32,
}

impl Shader {
    fn new(shading: &ShadingSpec, near_m: f32) -> Self {
        let [x, y, z] = shading.light_dir_in_world;
        Self {
            light_in_world: Vector::new(x as f32, y as f32, z as f32).normalize_or_zero(),
            ambient: shading.ambient as f32,
            diffuse: shading.diffuse as f32,
            background_rgb: shading.background_rgb,
            near_m,
        }
    }

    /// `hit`: z-depth, appearance and world normal of the first surface (zero normal: unknown).
    fn write_pixel(
        &self,
        out: &mut CameraFrame,
        pixel: usize,
        hit: Option<(f32, Appearance, Vector)>,
    ) {
        let (depth_m, segment, rgb) = match hit {
            None => (0.0, 0, self.background_rgb),
            Some((t, appearance, normal_in_world)) => {
                let lambert = normal_in_world.dot(self.light_in_world).max(0.0);
                let gain = self.ambient + self.diffuse * lambert;
                let shade = |c: u8| (f32::from(c) * gain).round().clamp(0.0, 255.0) as u8;
                let [r, g, b] = appearance.rgb;
                let depth_m = if t >= self.near_m { t } else { 0.0 };
                (
                    depth_m,
                    appearance.segment_id,
                    [shade(r), shade(g), shade(b)],
                )
            }
        };
        if let Some(d) = out.depth_m.get_mut(pixel) {
            *d = depth_m;
        }
        if let Some(s) = out.segmentation.get_mut(pixel) {
            *s = segment;
        }
        if let Some(dst) = out.rgb.get_mut(3 * pixel..3 * pixel + 3) {
            dst.copy_from_slice(&rgb);
        }
    }
}
