//! Geometry → rerun archetypes: URDF shapes, task props and poses.

use nalgebra::Isometry3;
use robots::Shape;

use super::{Entity, Log};
use crate::error::Result;

/// Default colour of URDF visuals without a material.
pub const DEFAULT_RGBA: [f32; 4] = [0.7, 0.7, 0.72, 1.0];

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

/// Logs a primitive `shape` (static) at `entity`, placed by `parent_from_primitive` relative to
/// the entity's parent, in URDF conventions (centred, cylinders and capsules along z). Meshes
/// are drawn by the caller from their files (`rerun::Asset3D`), so they log nothing here.
pub fn log_primitive(
    log: &Log<'_>,
    entity: &Entity,
    parent_from_primitive: &Isometry3<f64>,
    primitive: &Shape,
    color: rerun::Color,
) -> Result<()> {
    match primitive {
        Shape::Mesh { .. } => return Ok(()),
        Shape::Box { size_m } => {
            let b = rerun::Boxes3D::from_half_sizes([[
                (size_m.x / 2.0) as f32,
                (size_m.y / 2.0) as f32,
                (size_m.z / 2.0) as f32,
            ]])
            .with_colors([color])
            .with_fill_mode(rerun::FillMode::Solid);
            log.fixed(entity, &b)?;
        }
        Shape::Cylinder { radius_m, length_m } => {
            let c =
                rerun::Cylinders3D::from_lengths_and_radii([*length_m as f32], [*radius_m as f32])
                    .with_colors([color])
                    .with_fill_mode(rerun::FillMode::Solid);
            log.fixed(entity, &c)?;
        }
        Shape::Capsule { radius_m, length_m } => {
            let c =
                rerun::Capsules3D::from_lengths_and_radii([*length_m as f32], [*radius_m as f32])
                    .with_colors([color])
                    .with_fill_mode(rerun::FillMode::Solid);
            log.fixed(entity, &c)?;
        }
        Shape::Sphere { radius_m } => {
            let s = rerun::Ellipsoids3D::from_radii([*radius_m as f32])
                .with_colors([color])
                .with_fill_mode(rerun::FillMode::Solid);
            log.fixed(entity, &s)?;
        }
    }
    // rerun capsules run from the origin along +z; URDF's are centred.
    let placement = match primitive {
        Shape::Capsule { length_m, .. } => {
            parent_from_primitive * Isometry3::translation(0.0, 0.0, -length_m / 2.0)
        }
        _ => *parent_from_primitive,
    };
    log.fixed(entity, &transform(&placement))
}
