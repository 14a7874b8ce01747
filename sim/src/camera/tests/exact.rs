//! An independent f64 brute-force reference for the analytic shapes, written from the textbook
//! formulas rather than shared with the renderer. parry's own ray casts on cylinders and cones
//! go through GJK and are off by millimetres to centimetres (see
//! `parry_gjk_cylinder_false_hit_is_not_reproduced`), so they cannot serve as ground truth there.

use nalgebra::{Isometry3, Quaternion, Translation3, UnitQuaternion, Vector3};
use rapier3d::parry::shape::TypedShape;
use rapier3d::prelude::{Collider, ColliderHandle, ColliderSet, RigidBodySet};

use super::super::{prims, Appearance, CameraSpec};

type V = Vector3<f64>;

fn v(x: rapier3d::math::Vector) -> V {
    V::new(f64::from(x.x), f64::from(x.y), f64::from(x.z))
}

fn iso(pose: &rapier3d::math::Pose) -> Isometry3<f64> {
    let q = pose.rotation;
    let rotation = UnitQuaternion::from_quaternion(Quaternion::new(
        f64::from(q.w),
        f64::from(q.x),
        f64::from(q.y),
        f64::from(q.z),
    ));
    Isometry3::from_parts(Translation3::from(v(pose.translation)), rotation)
}

/// Roots of `a t² + 2 b t + c = 0`, ascending.
fn roots(a: f64, b: f64, c: f64) -> Option<(f64, f64)> {
    let disc = b * b - a * c;
    (a > 0.0 && disc >= 0.0).then(|| ((-b - disc.sqrt()) / a, (-b + disc.sqrt()) / a))
}

/// Span of the line `o + t d` inside the ball of `radius` at `centre`.
fn ball_span(o: V, d: V, centre: V, radius: f64) -> Option<(f64, f64)> {
    let oc = o - centre;
    roots(d.dot(&d), oc.dot(&d), oc.dot(&oc) - radius * radius)
}

/// Span inside the infinite cylinder of `radius` around the line through `a` along unit `axis`.
fn tube_span(o: V, d: V, a: V, axis: V, radius: f64) -> Option<(f64, f64)> {
    let (op, dp) = ((o - a) - axis * (o - a).dot(&axis), d - axis * d.dot(&axis));
    roots(dp.dot(&dp), op.dot(&dp), op.dot(&op) - radius * radius)
}

/// Span inside the slab `lo <= x·axis <= hi`.
fn slab_span(o: V, d: V, axis: V, lo: f64, hi: f64) -> Option<(f64, f64)> {
    let (oa, da) = (o.dot(&axis), d.dot(&axis));
    if da == 0.0 {
        return (lo <= oa && oa <= hi).then_some((f64::NEG_INFINITY, f64::INFINITY));
    }
    let (t1, t2) = ((lo - oa) / da, (hi - oa) / da);
    Some((t1.min(t2), t1.max(t2)))
}

fn intersect(spans: &[Option<(f64, f64)>]) -> Option<(f64, f64)> {
    spans
        .iter()
        .try_fold((f64::NEG_INFINITY, f64::INFINITY), |(lo, hi), span| {
            let (a, b) = (*span)?;
            Some((lo.max(a), hi.min(b)))
        })
        .filter(|(lo, hi)| lo <= hi)
}

/// First time in `[0, ∞)` inside the union of convex spans (0 when the origin is inside).
fn first_time(spans: &[Option<(f64, f64)>]) -> Option<f64> {
    spans
        .iter()
        .flatten()
        .filter(|(_, hi)| *hi >= 0.0)
        .map(|(lo, _)| lo.max(0.0))
        .min_by(f64::total_cmp)
}

/// Local-frame time of impact with the solid shape, or `None` (also for unsupported shapes).
fn local_time(collider: &Collider, o: V, d: V) -> Option<f64> {
    let (x, y, z) = (V::x(), V::y(), V::z());
    match collider.shape().as_typed_shape() {
        TypedShape::Cuboid(c) => {
            let h = v(c.half_extents);
            first_time(&[intersect(&[
                slab_span(o, d, x, -h.x, h.x),
                slab_span(o, d, y, -h.y, h.y),
                slab_span(o, d, z, -h.z, h.z),
            ])])
        }
        TypedShape::Ball(b) => first_time(&[ball_span(o, d, V::zeros(), f64::from(b.radius))]),
        TypedShape::Cylinder(c) => {
            let (h, r) = (f64::from(c.half_height), f64::from(c.radius));
            first_time(&[intersect(&[
                slab_span(o, d, y, -h, h),
                tube_span(o, d, V::zeros(), y, r),
            ])])
        }
        TypedShape::Capsule(c) => {
            let (a, b, r) = (v(c.segment.a), v(c.segment.b), f64::from(c.radius));
            let axis = (b - a).normalize();
            let body = intersect(&[
                slab_span(o, d, axis, a.dot(&axis), b.dot(&axis)),
                tube_span(o, d, a, axis, r),
            ]);
            first_time(&[body, ball_span(o, d, a, r), ball_span(o, d, b, r)])
        }
        TypedShape::HalfSpace(h) => {
            let n = v(h.normal);
            first_time(&[slab_span(o, d, n, f64::NEG_INFINITY, 0.0)])
        }
        _ => None,
    }
}

/// Segmentation and z-depth (0 where none or closer than `near_m`) by brute force in f64.
pub(super) fn render(
    spec: &CameraSpec,
    bodies: &RigidBodySet,
    colliders: &ColliderSet,
    world_from_camera: &Isometry3<f64>,
    skip: impl Fn(ColliderHandle, &Collider) -> bool,
) -> (Vec<u16>, Vec<f64>) {
    let visible: Vec<(Isometry3<f64>, &Collider)> = colliders
        .iter()
        .filter(|(h, c)| prims::is_visible(*h, c, &skip))
        .map(|(_, c)| (iso(&prims::world_from_collider(bodies, c)), c))
        .collect();
    let mut segments = Vec::new();
    let mut depths = Vec::new();
    for row in 0..spec.height {
        for col in 0..spec.width {
            let dir_in_camera = V::new(
                (f64::from(col) - spec.cx) / spec.fx,
                (f64::from(row) - spec.cy) / spec.fy,
                1.0,
            );
            let mut best: Option<(f64, u16)> = None;
            for (world_from_local, collider) in &visible {
                let local_from_camera = world_from_local.inverse() * world_from_camera;
                let o = local_from_camera.translation.vector;
                let d = local_from_camera.rotation * dir_in_camera;
                let Some(t) = local_time(collider, o, d).filter(|t| *t <= spec.far_m) else {
                    continue;
                };
                if best.is_none_or(|(best_t, _)| t < best_t) {
                    best = Some((t, Appearance::from_user_data(collider.user_data).segment_id));
                }
            }
            let (t, segment) = best.unwrap_or((0.0, 0));
            segments.push(segment);
            depths.push(if t >= spec.near_m { t } else { 0.0 });
        }
    }
    (segments, depths)
}
