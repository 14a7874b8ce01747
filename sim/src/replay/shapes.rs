//! Geometry → rerun archetypes: URDF shapes, task props and poses.

use nalgebra::{Isometry3, Vector3};
use robots::Shape;

use super::{Entity, Log};
use crate::error::Result;
use crate::task::ObjectKind;

/// Default colour of URDF visuals without a material.
pub const DEFAULT_RGBA: [f32; 4] = [0.7, 0.7, 0.72, 1.0];

/// A primitive in its own frame, centred at the origin, axis (cylinders, capsules) along z.
#[derive(Clone, Debug, PartialEq)]
pub enum Primitive {
    Box {
        half_m: [f64; 3],
    },
    Cylinder {
        radius_m: f64,
        length_m: f64,
    },
    /// `length_m` is the cylindrical part.
    Capsule {
        radius_m: f64,
        length_m: f64,
    },
    Sphere {
        radius_m: f64,
    },
}

/// A URDF shape as a primitive, or the mesh file it names.
pub enum Visual<'a> {
    Primitive(Primitive),
    Mesh {
        path: &'a std::path::Path,
        scale: Vector3<f64>,
    },
}

pub fn visual(shape: &Shape) -> Visual<'_> {
    match shape {
        Shape::Box { size_m } => Visual::Primitive(Primitive::Box {
            half_m: [size_m.x / 2.0, size_m.y / 2.0, size_m.z / 2.0],
        }),
        Shape::Cylinder { radius_m, length_m } => Visual::Primitive(Primitive::Cylinder {
            radius_m: *radius_m,
            length_m: *length_m,
        }),
        Shape::Capsule { radius_m, length_m } => Visual::Primitive(Primitive::Capsule {
            radius_m: *radius_m,
            length_m: *length_m,
        }),
        Shape::Sphere { radius_m } => Visual::Primitive(Primitive::Sphere {
            radius_m: *radius_m,
        }),
        Shape::Mesh { path, scale } => Visual::Mesh {
            path,
            scale: *scale,
        },
    }
}

/// The parts of a prop in the object's frame (`ObjectKind::parts`, the same geometry the
/// physics scene is built from).
pub fn object_parts(kind: &ObjectKind) -> Vec<(Isometry3<f64>, Primitive)> {
    kind.parts()
        .iter()
        .filter_map(|(pose, shape)| match visual(shape) {
            Visual::Primitive(p) => Some((*pose, p)),
            Visual::Mesh { .. } => None,
        })
        .collect()
}

/// `parent_from_child` as a rerun transform.
pub fn transform(iso: &Isometry3<f64>) -> rerun::Transform3D {
    let t = iso.translation.vector;
    let q = iso.rotation.into_inner().coords;
    rerun::Transform3D::from_translation_rotation(
        [t.x as f32, t.y as f32, t.z as f32],
        rerun::Quaternion::from_xyzw([q.x as f32, q.y as f32, q.z as f32, q.w as f32]),
    )
}

pub fn color(rgba: [f32; 4]) -> rerun::Color {
    let c = |v: f32| (v.clamp(0.0, 1.0) * 255.0).round() as u8;
    rerun::Color::from_unmultiplied_rgba(c(rgba[0]), c(rgba[1]), c(rgba[2]), c(rgba[3]))
}

pub fn rgb(rgb: [u8; 3]) -> rerun::Color {
    rerun::Color::from_rgb(rgb[0], rgb[1], rgb[2])
}

/// Logs `primitive` (static) at `entity`, placed by `parent_from_primitive` relative to the
/// entity's parent.
pub fn log_primitive(
    log: &Log<'_>,
    entity: &Entity,
    parent_from_primitive: &Isometry3<f64>,
    primitive: &Primitive,
    color: rerun::Color,
) -> Result<()> {
    match primitive {
        Primitive::Box { half_m } => {
            let b = rerun::Boxes3D::from_half_sizes([[
                half_m[0] as f32,
                half_m[1] as f32,
                half_m[2] as f32,
            ]])
            .with_colors([color])
            .with_fill_mode(rerun::FillMode::Solid);
            log.fixed(entity, &b)?;
        }
        Primitive::Cylinder { radius_m, length_m } => {
            let c =
                rerun::Cylinders3D::from_lengths_and_radii([*length_m as f32], [*radius_m as f32])
                    .with_colors([color])
                    .with_fill_mode(rerun::FillMode::Solid);
            log.fixed(entity, &c)?;
        }
        Primitive::Capsule { radius_m, length_m } => {
            let c =
                rerun::Capsules3D::from_lengths_and_radii([*length_m as f32], [*radius_m as f32])
                    .with_colors([color])
                    .with_fill_mode(rerun::FillMode::Solid);
            log.fixed(entity, &c)?;
        }
        Primitive::Sphere { radius_m } => {
            let s = rerun::Ellipsoids3D::from_radii([*radius_m as f32])
                .with_colors([color])
                .with_fill_mode(rerun::FillMode::Solid);
            log.fixed(entity, &s)?;
        }
    }
    // rerun capsules run from the origin along +z; URDF's are centred.
    let placement = match primitive {
        Primitive::Capsule { length_m, .. } => {
            parent_from_primitive * Isometry3::translation(0.0, 0.0, -length_m / 2.0)
        }
        _ => *parent_from_primitive,
    };
    log.fixed(entity, &transform(&placement))
}
