//! The fast path's per-frame list of visible colliders ("prims"): their pose relative to the
//! camera, their pixel rectangle, and analytic ray intersections in the collider's local frame.
//!
//! All pixel rays start at the camera centre and have a camera-frame direction with z = 1, so a
//! time of impact is directly the z-depth.

use rapier3d::math::{Mat3, Pose, Real, Rotation, Vector};
use rapier3d::parry::query::{PointQuery, Ray, RayCast};
use rapier3d::parry::shape::{Capsule, Shape, TypedShape};
use rapier3d::prelude::{Collider, ColliderHandle, ColliderSet, RigidBodySet};

use super::{Appearance, CameraSpec};

/// `hit_prim` value of a pixel that hit nothing.
pub(super) const NO_HIT: u32 = u32::MAX;

/// Pixels a projected bounding box is grown by, against rounding in the projection and in the
/// intersection tests (both are far below this).
const RECT_MARGIN_PX: f32 = 0.05;

/// Smallest clip depth (metres) used when projecting a bounding box.
const MIN_PROJECTABLE_Z_M: f32 = 1e-6;

/// Local-frame AABB coordinates beyond this (metres) are treated as unbounded.
const MAX_BOUNDED_EXTENT_M: f32 = 1e6;

/// Shapes with a hand-written intersection; everything else goes through parry.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Cuboid {
        half_extents: Vector,
    },
    Ball {
        radius: Real,
    },
    Capsule(Capsule),
    /// Axis along local y, as parry's `Cylinder`.
    Cylinder {
        half_height: Real,
        radius: Real,
    },
    /// Solid on the side opposite `normal`; boundary through the local origin.
    HalfSpace {
        normal: Vector,
    },
    Other,
}

impl Kind {
    fn of(shape: &dyn Shape) -> Self {
        match shape.as_typed_shape() {
            TypedShape::Cuboid(c) => Self::Cuboid {
                half_extents: c.half_extents,
            },
            TypedShape::Ball(b) => Self::Ball { radius: b.radius },
            TypedShape::Capsule(c) => Self::Capsule(*c),
            TypedShape::Cylinder(c) => Self::Cylinder {
                half_height: c.half_height,
                radius: c.radius,
            },
            TypedShape::HalfSpace(h) => Self::HalfSpace { normal: h.normal },
            _ => Self::Other,
        }
    }

    /// First time of impact in `[0, max_t]` of the ray `o + t d` (local frame) with the solid
    /// shape; 0 when `o` is inside. `other` is the shape itself for [`Kind::Other`].
    #[inline]
    fn cast(&self, o: Vector, d: Vector, max_t: Real, other: Option<&dyn Shape>) -> Option<Real> {
        match *self {
            Self::Cuboid { half_extents } => {
                let inv = d.recip();
                let t1 = (-half_extents - o) * inv;
                let t2 = (half_extents - o) * inv;
                let t_in = t1.min(t2).max_element().max(0.0);
                let t_out = t1.max(t2).min_element().min(max_t);
                (t_in <= t_out).then_some(t_in)
            }
            Self::Ball { radius } => {
                if o.length_squared() <= radius * radius {
                    return Some(0.0);
                }
                let (t_in, _) = sphere_span(o, d, radius)?;
                (t_in >= 0.0 && t_in <= max_t).then_some(t_in)
            }
            Self::Capsule(capsule) => capsule.cast_local_ray(&Ray::new(o, d), max_t, true),
            Self::Cylinder {
                half_height,
                radius,
            } => cylinder_cast(o, d, half_height, radius, max_t),
            Self::HalfSpace { normal } => {
                let height = normal.dot(o);
                if height < 0.0 {
                    return Some(0.0);
                }
                let t = -height / normal.dot(d);
                (t >= 0.0 && t <= max_t).then_some(t)
            }
            Self::Other => other?.cast_local_ray(&Ray::new(o, d), max_t, true),
        }
    }

    /// Outward unit normal (local frame) at the hit `t` of the ray `o + t d`; zero when the ray
    /// starts inside the shape.
    fn normal(&self, o: Vector, d: Vector, t: Real, other: Option<&dyn Shape>) -> Vector {
        if t <= 0.0 {
            return Vector::ZERO;
        }
        let p = o + d * t;
        match *self {
            Self::Cuboid { half_extents } => {
                let q = (p / half_extents).abs();
                let axis = if q.x >= q.y && q.x >= q.z {
                    Vector::X
                } else if q.y >= q.z {
                    Vector::Y
                } else {
                    Vector::Z
                };
                axis * p.dot(axis).signum()
            }
            Self::Ball { .. } => p.normalize_or_zero(),
            Self::Capsule(capsule) => {
                let (a, b) = (capsule.segment.a, capsule.segment.b);
                let ab = b - a;
                let s =
                    ((p - a).dot(ab) / ab.length_squared().max(Real::MIN_POSITIVE)).clamp(0.0, 1.0);
                (p - (a + ab * s)).normalize_or_zero()
            }
            Self::Cylinder {
                half_height,
                radius,
            } => {
                let radial = Vector::new(p.x, 0.0, p.z);
                if p.y.abs() - half_height > radial.length() - radius {
                    Vector::new(0.0, p.y.signum(), 0.0)
                } else {
                    radial.normalize_or_zero()
                }
            }
            Self::HalfSpace { normal } => normal,
            Self::Other => other
                .and_then(|s| s.cast_local_ray_and_get_normal(&Ray::new(o, d), Real::MAX, true))
                .map_or(Vector::ZERO, |hit| hit.normal),
        }
    }
}

/// Entry and exit times of the line `o + t d` through the sphere of `radius` at the origin,
/// computed from the closest approach (robust for far origins).
#[inline]
fn sphere_span(o: Vector, d: Vector, radius: Real) -> Option<(Real, Real)> {
    let dd = d.length_squared();
    let t_closest = -o.dot(d) / dd;
    let closest = o + d * t_closest;
    let half_chord_sq = radius * radius - closest.length_squared();
    if half_chord_sq < 0.0 || dd == 0.0 {
        return None;
    }
    let half_span = (half_chord_sq / dd).sqrt();
    Some((t_closest - half_span, t_closest + half_span))
}

/// Solid cylinder of axis y: intersection of the slab `|y| <= half_height` and the infinite
/// cylinder `x² + z² <= radius²`.
#[inline]
fn cylinder_cast(
    o: Vector,
    d: Vector,
    half_height: Real,
    radius: Real,
    max_t: Real,
) -> Option<Real> {
    let (mut t_in, mut t_out) = (0.0, max_t);
    if d.y != 0.0 {
        let inv = 1.0 / d.y;
        let (a, b) = ((-half_height - o.y) * inv, (half_height - o.y) * inv);
        t_in = a.min(b).max(t_in);
        t_out = a.max(b).min(t_out);
    } else if o.y.abs() > half_height {
        return None;
    }
    let o_xz = Vector::new(o.x, 0.0, o.z);
    let d_xz = Vector::new(d.x, 0.0, d.z);
    if d_xz.length_squared() == 0.0 {
        if o_xz.length_squared() > radius * radius {
            return None;
        }
    } else {
        let (a, b) = sphere_span(o_xz, d_xz, radius)?;
        t_in = t_in.max(a);
        t_out = t_out.min(b);
    }
    (t_in <= t_out).then_some(t_in)
}

/// A visible collider, posed for one frame.
#[derive(Clone, Debug)]
pub(super) struct Prim {
    kind: Kind,
    handle: ColliderHandle,
    /// Position in the collider set's iteration order: equal times of impact go to the lowest,
    /// as in the brute-force renderer.
    order: u32,
    pub(super) appearance: Appearance,
    /// The camera centre in the collider frame.
    camera_origin_in_local: Vector,
    local_from_camera: Mat3,
    world_from_local: Rotation,
    /// A lower bound of the z-depth of any point of the shape (>= 0).
    min_z_m: f32,
    /// Pixel rectangle `[u_begin, u_end) × [v_begin, v_end)` that contains every hit pixel.
    u_range: (usize, usize),
    v_range: (usize, usize),
}

/// The colliders a camera draws: enabled, not sensors, not skipped.
pub(super) fn is_visible(
    handle: ColliderHandle,
    collider: &Collider,
    skip: &dyn Fn(ColliderHandle, &Collider) -> bool,
) -> bool {
    collider.is_enabled() && !collider.is_sensor() && !skip(handle, collider)
}

/// The collider's pose from its parent body's current pose when it has one (so a body moved with
/// `set_position` is seen where it is before the next physics step), else its own.
pub(super) fn world_from_collider(bodies: &RigidBodySet, collider: &Collider) -> Pose {
    match (collider.parent(), collider.position_wrt_parent()) {
        (Some(parent), Some(parent_from_collider)) => {
            bodies.get(parent).map_or(*collider.position(), |body| {
                body.position() * parent_from_collider
            })
        }
        _ => *collider.position(),
    }
}

/// Fills `prims` with the colliders that can appear in the image, nearest first.
pub(super) fn gather(
    bodies: &RigidBodySet,
    colliders: &ColliderSet,
    world_from_camera: &Pose,
    spec: &CameraSpec,
    skip: &dyn Fn(ColliderHandle, &Collider) -> bool,
    prims: &mut Vec<Prim>,
) {
    prims.clear();
    let camera_from_world = world_from_camera.inverse();
    for (order, (handle, collider)) in colliders.iter().enumerate() {
        if !is_visible(handle, collider, skip) {
            continue;
        }
        let world_from_local = world_from_collider(bodies, collider);
        let camera_from_local = camera_from_world * world_from_local;
        let kind = Kind::of(collider.shape());
        let local_from_camera = camera_from_local.inverse();
        let Some(footprint) = footprint(
            &kind,
            collider.shape(),
            &camera_from_local,
            local_from_camera.translation,
            spec,
        ) else {
            continue;
        };
        prims.push(Prim {
            kind,
            handle,
            order: u32::try_from(order).unwrap_or(u32::MAX),
            appearance: Appearance::from_user_data(collider.user_data),
            camera_origin_in_local: local_from_camera.translation,
            local_from_camera: Mat3::from_quat(local_from_camera.rotation),
            world_from_local: world_from_local.rotation,
            min_z_m: footprint.min_z_m,
            u_range: footprint.u_range,
            v_range: footprint.v_range,
        });
    }
    prims.sort_unstable_by(|a, b| a.min_z_m.total_cmp(&b.min_z_m).then(a.order.cmp(&b.order)));
}

struct Footprint {
    min_z_m: f32,
    u_range: (usize, usize),
    v_range: (usize, usize),
}

/// Where the shape can appear: a conservative pixel rectangle and lower depth bound, or `None`
/// when it is behind the camera, beyond `far_m` or off-image.
///
/// Every point seen through a pixel has `|p| <= k z` with `k` the longest pixel ray (z = 1),
/// so a shape at distance `dist` from the camera is only ever hit at `z >= dist / k`. The
/// rectangle is the projection of the shape's local AABB clipped to that half-space.
fn footprint(
    kind: &Kind,
    shape: &dyn Shape,
    camera_from_local: &Pose,
    camera_origin_in_local: Vector,
    spec: &CameraSpec,
) -> Option<Footprint> {
    let (width, height) = (spec.width as usize, spec.height as usize);
    let whole_image = |min_z_m: f32| Footprint {
        min_z_m,
        u_range: (0, width),
        v_range: (0, height),
    };
    let k = longest_ray_per_z(spec);
    if let Kind::HalfSpace { normal } = kind {
        let height_m = normal.dot(camera_origin_in_local);
        return Some(whole_image((height_m / k * (1.0 - 1e-5)).max(0.0)));
    }
    let aabb = shape.compute_local_aabb();
    let bounded = aabb.mins.abs().max(aabb.maxs.abs()).max_element() <= MAX_BOUNDED_EXTENT_M;
    let distance_m = aabb.distance_to_local_point(camera_origin_in_local, true);
    // Shrunk a little so the bound stays conservative in f32.
    let min_z_m = distance_m / k * (1.0 - 1e-5);
    let projectable = min_z_m >= MIN_PROJECTABLE_Z_M; // false for NaN
    if !bounded || !projectable {
        return Some(whole_image(0.0));
    }
    if min_z_m > spec.far_m as f32 {
        return None;
    }
    let mut corners = [Vector::ZERO; 8];
    for (i, corner) in corners.iter_mut().enumerate() {
        let pick = |bit: usize, lo: f32, hi: f32| if i & bit == 0 { lo } else { hi };
        let local = Vector::new(
            pick(1, aabb.mins.x, aabb.maxs.x),
            pick(2, aabb.mins.y, aabb.maxs.y),
            pick(4, aabb.mins.z, aabb.maxs.z),
        );
        *corner = camera_from_local * local;
    }
    let mut bounds = ImageBounds::new(spec);
    for (i, a) in corners.iter().enumerate() {
        if a.z >= min_z_m {
            bounds.add(*a);
        }
        // The AABB's edges: corner pairs that differ in one bit.
        for bit in [1, 2, 4] {
            let Some(b) = corners.get(i | bit).filter(|_| i & bit == 0) else {
                continue;
            };
            if (a.z < min_z_m) != (b.z < min_z_m) {
                bounds.add(*a + (*b - *a) * ((min_z_m - a.z) / (b.z - a.z)));
            }
        }
    }
    let u_range = pixel_range(bounds.u_min, bounds.u_max, width)?;
    let v_range = pixel_range(bounds.v_min, bounds.v_max, height)?;
    Some(Footprint {
        min_z_m,
        u_range,
        v_range,
    })
}

/// Largest `|(x, y, 1)|` over the pixel rays (they are longest at the image corners).
fn longest_ray_per_z(spec: &CameraSpec) -> f32 {
    let x = (spec
        .cx
        .abs()
        .max((f64::from(spec.width) - 1.0 - spec.cx).abs()))
        / spec.fx;
    let y = (spec
        .cy
        .abs()
        .max((f64::from(spec.height) - 1.0 - spec.cy).abs()))
        / spec.fy;
    // Rounded up a little so the bound stays conservative in f32.
    ((1.0 + x * x + y * y).sqrt() * (1.0 + 1e-5)) as f32
}

/// Running bounds of projected points, in pixels.
struct ImageBounds {
    fx: f32,
    fy: f32,
    cx: f32,
    cy: f32,
    u_min: f32,
    u_max: f32,
    v_min: f32,
    v_max: f32,
}

impl ImageBounds {
    fn new(spec: &CameraSpec) -> Self {
        Self {
            fx: spec.fx as f32,
            fy: spec.fy as f32,
            cx: spec.cx as f32,
            cy: spec.cy as f32,
            u_min: f32::INFINITY,
            u_max: f32::NEG_INFINITY,
            v_min: f32::INFINITY,
            v_max: f32::NEG_INFINITY,
        }
    }

    /// Adds a camera-frame point with `z > 0`.
    fn add(&mut self, p: Vector) {
        let (u, v) = (self.fx * p.x / p.z + self.cx, self.fy * p.y / p.z + self.cy);
        (self.u_min, self.u_max) = (self.u_min.min(u), self.u_max.max(u));
        (self.v_min, self.v_max) = (self.v_min.min(v), self.v_max.max(v));
    }
}

/// Integer pixel coordinates in `[lo, hi]` (grown by the margin), clipped to `[0, size)`.
fn pixel_range(lo: f32, hi: f32, size: usize) -> Option<(usize, usize)> {
    let size_f = size as f32;
    let begin = (lo - RECT_MARGIN_PX).ceil().clamp(0.0, size_f);
    let end = ((hi + RECT_MARGIN_PX).floor() + 1.0).clamp(0.0, size_f);
    // NaN bounds fail this test too.
    (begin < end).then_some((begin as usize, end as usize))
}

impl Prim {
    fn other_shape<'a>(&self, colliders: &'a ColliderSet) -> Option<&'a dyn Shape> {
        match self.kind {
            Kind::Other => colliders.get(self.handle).map(|c| c.shape()),
            _ => None,
        }
    }

    /// Casts this prim's pixels, keeping per pixel the nearest hit in `best_t` / `hit_prim`.
    /// `index` is this prim's index in `prims`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn cast_rect(
        &self,
        colliders: &ColliderSet,
        width: usize,
        ray_xy_per_z: &[[f32; 2]],
        far_m: f32,
        index: u32,
        prims: &[Prim],
        best_t: &mut [f32],
        hit_prim: &mut [u32],
    ) {
        let other = self.other_shape(colliders);
        let (u_begin, u_end) = self.u_range;
        let o = self.camera_origin_in_local;
        let m = &self.local_from_camera;
        for v in self.v_range.0..self.v_range.1 {
            let row = v * width + u_begin..v * width + u_end;
            let (Some(rays), Some(ts), Some(hits)) = (
                ray_xy_per_z.get(row.clone()),
                best_t.get_mut(row.clone()),
                hit_prim.get_mut(row),
            ) else {
                continue;
            };
            for ((&[x, y], t_best), hit) in rays.iter().zip(ts.iter_mut()).zip(hits.iter_mut()) {
                if self.min_z_m > *t_best {
                    continue;
                }
                let d = *m * Vector::new(x, y, 1.0);
                let Some(t) = self.kind.cast(o, d, t_best.min(far_m), other) else {
                    continue;
                };
                let wins = t < *t_best
                    || (t == *t_best
                        && prims
                            .get(*hit as usize)
                            .is_some_and(|p| self.order < p.order));
                if wins {
                    *t_best = t;
                    *hit = index;
                }
            }
        }
    }

    /// World-frame outward normal where the camera-frame ray `dir_in_camera` hits at `t`.
    pub(super) fn normal_in_world(
        &self,
        colliders: &ColliderSet,
        dir_in_camera: Vector,
        t: f32,
    ) -> Vector {
        let d = self.local_from_camera * dir_in_camera;
        let n = self.kind.normal(
            self.camera_origin_in_local,
            d,
            t,
            self.other_shape(colliders),
        );
        self.world_from_local * n
    }
}
