//! `model_hash`: SHA-256 over a canonical text serialisation of the robot body.
//!
//! Included: robot, link and joint names; joint kinds, origins, axes, limits, dynamics and
//! mimics; inertials; visual and collision geometry (mesh files by file name and scale, not by
//! directory, so the hash does not depend on where the package is installed) and colours;
//! missing meshes. Not included: `source`. Floats are printed with 9 decimals; `-0` is
//! printed as `0`.

use std::fmt::Write as _;

use nalgebra::{Isometry3, Matrix3};
use sha2::{Digest, Sha256};

use crate::model::{GeometryItem, RobotModel, Shape};

impl RobotModel {
    /// Recomputes the hash of the model's current content (see [`RobotModel::model_hash`]).
    pub fn compute_model_hash(&self) -> String {
        let text = canonical_text(self);
        let digest = Sha256::digest(text.as_bytes());
        let mut hex = String::with_capacity(64);
        for byte in digest {
            let _ = write!(hex, "{byte:02x}");
        }
        hex
    }
}

fn f(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let s = format!("{x:.9}");
    if s.trim_start_matches('-')
        .chars()
        .all(|c| c == '0' || c == '.')
    {
        "0".into()
    } else {
        s
    }
}

fn fs(xs: impl IntoIterator<Item = f64>) -> String {
    xs.into_iter().map(f).collect::<Vec<_>>().join(" ")
}

fn pose(iso: &Isometry3<f64>) -> String {
    let r = iso.rotation.to_rotation_matrix();
    format!(
        "t {} r {}",
        fs(iso.translation.vector.iter().copied()),
        fs(r.matrix().iter().copied())
    )
}

fn matrix(m: &Matrix3<f64>) -> String {
    fs(m.iter().copied())
}

fn geometry(out: &mut String, role: &str, g: &GeometryItem) {
    let shape = match &g.shape {
        Shape::Box { size_m } => format!("box {}", fs(size_m.iter().copied())),
        Shape::Cylinder { radius_m, length_m } => {
            format!("cylinder {} {}", f(*radius_m), f(*length_m))
        }
        Shape::Capsule { radius_m, length_m } => {
            format!("capsule {} {}", f(*radius_m), f(*length_m))
        }
        Shape::Sphere { radius_m } => format!("sphere {}", f(*radius_m)),
        Shape::Mesh { path, scale, .. } => format!(
            "mesh {:?} {}",
            path.file_name().map(|n| n.to_string_lossy().into_owned()),
            fs(scale.iter().copied())
        ),
    };
    let rgba = g
        .rgba
        .map(|c| fs(c.iter().map(|&v| f64::from(v))))
        .unwrap_or_else(|| "none".into());
    let _ = writeln!(
        out,
        "  {role} {:?} {} {shape} rgba {rgba}",
        g.name,
        pose(&g.link_from_geometry)
    );
}

fn canonical_text(model: &RobotModel) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "coevolve-robot-hash v1");
    let link_name = |id: usize| model.links.get(id).map_or("?", |l| l.name.as_str());
    let joint_name = |id: usize| model.joints.get(id).map_or("?", |j| j.name.as_str());
    let _ = writeln!(
        out,
        "robot {:?} root {:?}",
        model.name,
        link_name(model.root)
    );
    for link in &model.links {
        let _ = writeln!(out, "link {:?}", link.name);
        if let Some(i) = &link.inertial {
            let _ = writeln!(
                out,
                "  inertial {} {} i {}",
                f(i.mass_kg),
                pose(&i.link_from_com),
                matrix(&i.inertia_kg_m2)
            );
        }
        for g in &link.visuals {
            geometry(&mut out, "visual", g);
        }
        for g in &link.collisions {
            geometry(&mut out, "collision", g);
        }
    }
    for joint in &model.joints {
        let l = &joint.limits;
        let _ = writeln!(
            out,
            "joint {:?} {:?} {:?} -> {:?} {} axis {} limits {} dyn {} {}",
            joint.name,
            joint.kind,
            link_name(joint.parent),
            link_name(joint.child),
            pose(&joint.parent_from_joint),
            fs(joint.axis.iter().copied()),
            fs([l.lower, l.upper, l.velocity, l.effort]),
            f(joint.damping),
            f(joint.friction),
        );
        if let Some(m) = &joint.mimic {
            let _ = writeln!(
                out,
                "  mimic {:?} {} {}",
                joint_name(m.joint),
                f(m.multiplier),
                f(m.offset)
            );
        }
    }
    for m in &model.missing_meshes {
        let _ = writeln!(out, "missing {:?} {} {:?}", m.link, m.role, m.filename);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::f;

    #[test]
    fn float_formatting_is_canonical() {
        assert_eq!(f(-0.0), "0");
        assert_eq!(f(-1e-12), "0");
        assert_eq!(f(0.1), "0.100000000");
        assert_eq!(f(-2.5), "-2.500000000");
        assert_eq!(f(f64::INFINITY), "inf");
        assert_eq!(f(f64::NEG_INFINITY), "-inf");
    }
}
