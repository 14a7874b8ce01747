//! URDF loading: `urdf-rs` parse, structural checks ([`crate::tree`]), value checks and
//! conversion into [`RobotModel`].

use std::collections::HashMap;
use std::path::Path;

use nalgebra::{Isometry3, Matrix3, Translation3, Unit, UnitQuaternion, Vector3};

use crate::error::{Result, RobotError};
use crate::mesh_path;
use crate::model::{
    GeometryItem, Inertial, Joint, JointKind, JointLimits, Link, Mimic, MissingMesh, RobotModel,
    Shape,
};
use crate::tree;
use crate::xml_scan::{self, Presence};

impl RobotModel {
    /// What [`crate::load_manipulator`] loads this model by again: the builtin's name, else
    /// the URDF file's path as it was given. Stores and checkpoints record it.
    pub fn load_name(&self) -> &str {
        self.source.strip_prefix("builtin:").unwrap_or(&self.source)
    }

    /// Loads a URDF file (plain URDF, e.g. the output of `xacro`). Mesh paths are resolved
    /// relative to the file's folder; meshes that are not found are dropped and listed in
    /// [`RobotModel::missing_meshes`].
    pub fn from_urdf_file(path: &Path) -> Result<RobotModel> {
        let text = std::fs::read_to_string(path).map_err(|source| RobotError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let base_dir = path.parent().filter(|p| !p.as_os_str().is_empty());
        Self::from_urdf_str(
            &text,
            &path.display().to_string(),
            Some(base_dir.unwrap_or(Path::new("."))),
        )
    }

    /// Loads URDF text. `source` names it in errors and in [`RobotModel::source`];
    /// `base_dir` is the folder relative mesh paths and `package://` searches start from
    /// (the current directory when `None`).
    pub fn from_urdf_str(urdf: &str, source: &str, base_dir: Option<&Path>) -> Result<RobotModel> {
        let robot = urdf_rs::read_from_string(urdf).map_err(|e| RobotError::Xml {
            file: source.into(),
            message: e.to_string(),
        })?;
        let topology = tree::topology(&robot, source)?;
        let cx = Context {
            file: source,
            base_dir,
            presence: xml_scan::scan(urdf),
            materials: material_table(&robot),
        };

        let mut missing_meshes = Vec::new();
        let mut links = robot
            .links
            .iter()
            .map(|l| cx.link(l, &mut missing_meshes))
            .collect::<Result<Vec<_>>>()?;

        // New JointId = position in topological order.
        let mut new_id = vec![0; robot.joints.len()];
        for (id, &urdf_index) in topology.joint_order.iter().enumerate() {
            new_id[urdf_index] = id;
        }
        let mut joints = Vec::with_capacity(robot.joints.len());
        for &urdf_index in &topology.joint_order {
            let (parent, child) = topology.parent_child[urdf_index];
            let joint = cx.joint(&robot.joints[urdf_index], parent, child)?;
            let id = joints.len();
            links[parent].child_joints.push(id);
            links[child].parent_joint = Some(id);
            joints.push(joint);
        }
        cx.resolve_mimics(&robot, &new_id, &mut joints)?;

        let mut model = RobotModel {
            name: robot.name.clone(),
            source: source.into(),
            links,
            joints,
            root: topology.root,
            missing_meshes,
            model_hash: String::new(),
        };
        model.model_hash = model.compute_model_hash();
        Ok(model)
    }
}

/// Robot-level materials, then materials defined inline in visuals (first definition wins).
fn material_table(robot: &urdf_rs::Robot) -> HashMap<String, [f64; 4]> {
    let mut table = HashMap::new();
    let inline = robot
        .links
        .iter()
        .flat_map(|l| l.visual.iter().filter_map(|v| v.material.as_ref()));
    for m in robot.materials.iter().chain(inline) {
        if let Some(color) = &m.color {
            table.entry(m.name.clone()).or_insert(color.rgba.0);
        }
    }
    table
}

struct Context<'a> {
    file: &'a str,
    base_dir: Option<&'a Path>,
    presence: Presence,
    materials: HashMap<String, [f64; 4]>,
}

impl Context<'_> {
    fn invalid(
        &self,
        element: &'static str,
        name: &str,
        field: &str,
        problem: String,
    ) -> RobotError {
        RobotError::InvalidValue {
            file: self.file.into(),
            element,
            name: name.into(),
            field: field.into(),
            problem,
        }
    }

    /// Errors unless every value is finite.
    fn finite(&self, element: &'static str, name: &str, field: &str, values: &[f64]) -> Result<()> {
        match values.iter().find(|v| !v.is_finite()) {
            Some(v) => Err(self.invalid(element, name, field, format!("value {v} is not finite"))),
            None => Ok(()),
        }
    }

    fn pose(
        &self,
        element: &'static str,
        name: &str,
        field: &str,
        p: &urdf_rs::Pose,
    ) -> Result<Isometry3<f64>> {
        self.finite(element, name, &format!("{field} xyz"), &p.xyz.0)?;
        self.finite(element, name, &format!("{field} rpy"), &p.rpy.0)?;
        Ok(pose_to_isometry(p))
    }

    fn link(&self, l: &urdf_rs::Link, missing: &mut Vec<MissingMesh>) -> Result<Link> {
        let inertial = self.inertial(l)?;
        let mut visuals = Vec::new();
        for (i, v) in l.visual.iter().enumerate() {
            let field = format!("<visual #{i}>");
            let origin = self.pose("link", &l.name, &format!("{field}<origin>"), &v.origin)?;
            let rgba = self.rgba(l, &field, v.material.as_ref())?;
            if let Some(shape) = self.shape(l, &field, "visual", &v.geometry, missing)? {
                visuals.push(GeometryItem {
                    name: v.name.clone(),
                    link_from_geometry: origin,
                    shape,
                    rgba,
                });
            }
        }
        let mut collisions = Vec::new();
        for (i, c) in l.collision.iter().enumerate() {
            let field = format!("<collision #{i}>");
            let origin = self.pose("link", &l.name, &format!("{field}<origin>"), &c.origin)?;
            if let Some(shape) = self.shape(l, &field, "collision", &c.geometry, missing)? {
                collisions.push(GeometryItem {
                    name: c.name.clone(),
                    link_from_geometry: origin,
                    shape,
                    rgba: None,
                });
            }
        }
        Ok(Link {
            name: l.name.clone(),
            inertial,
            visuals,
            collisions,
            parent_joint: None,
            child_joints: Vec::new(),
        })
    }

    fn inertial(&self, l: &urdf_rs::Link) -> Result<Option<Inertial>> {
        let u = &l.inertial;
        let i = &u.inertia;
        let values = [i.ixx, i.ixy, i.ixz, i.iyy, i.iyz, i.izz];
        let is_default = u.mass.value == 0.0
            && values.iter().all(|&v| v == 0.0)
            && u.origin.xyz.0 == [0.0; 3]
            && u.origin.rpy.0 == [0.0; 3];
        if is_default && !self.presence.links_with_inertial.contains(&l.name) {
            return Ok(None);
        }
        let name = l.name.as_str();
        let mass = u.mass.value;
        if !(mass.is_finite() && mass > 0.0) {
            let problem = format!("mass {mass} kg must be finite and positive");
            return Err(self.invalid("link", name, "<inertial><mass value>", problem));
        }
        let link_from_com = self.pose("link", name, "<inertial><origin>", &u.origin)?;
        self.finite("link", name, "<inertial><inertia>", &values)?;
        if let Some(d) = [i.ixx, i.iyy, i.izz].into_iter().find(|&d| d < 0.0) {
            let problem = format!("diagonal entry {d} kg·m² is negative");
            return Err(self.invalid("link", name, "<inertial><inertia>", problem));
        }
        #[rustfmt::skip]
        let inertia_kg_m2 = Matrix3::new(
            i.ixx, i.ixy, i.ixz,
            i.ixy, i.iyy, i.iyz,
            i.ixz, i.iyz, i.izz,
        );
        Ok(Some(Inertial {
            mass_kg: mass,
            link_from_com,
            inertia_kg_m2,
        }))
    }

    fn rgba(
        &self,
        l: &urdf_rs::Link,
        field: &str,
        m: Option<&urdf_rs::Material>,
    ) -> Result<Option<[f32; 4]>> {
        let Some(m) = m else { return Ok(None) };
        let rgba = match &m.color {
            Some(c) => Some(c.rgba.0),
            None => self.materials.get(&m.name).copied(),
        };
        let Some(rgba) = rgba else { return Ok(None) };
        self.finite(
            "link",
            &l.name,
            &format!("{field}<material {:?}> rgba", m.name),
            &rgba,
        )?;
        Ok(Some(rgba.map(|c| c.clamp(0.0, 1.0) as f32)))
    }

    /// Converts a geometry; `None` when it is a mesh whose file is missing (recorded).
    fn shape(
        &self,
        l: &urdf_rs::Link,
        field: &str,
        role: &'static str,
        g: &urdf_rs::Geometry,
        missing: &mut Vec<MissingMesh>,
    ) -> Result<Option<Shape>> {
        let dims = |what: &str, values: &[f64]| -> Result<()> {
            let field = format!("{field}<geometry><{what}>");
            self.finite("link", &l.name, &field, values)?;
            match values.iter().find(|&&v| v < 0.0) {
                Some(v) => Err(self.invalid(
                    "link",
                    &l.name,
                    &field,
                    format!("dimension {v} m is negative"),
                )),
                None => Ok(()),
            }
        };
        let shape = match g {
            urdf_rs::Geometry::Box { size } => {
                dims("box size", &size.0)?;
                Shape::Box {
                    size_m: Vector3::from(size.0),
                }
            }
            urdf_rs::Geometry::Cylinder { radius, length } => {
                dims("cylinder", &[*radius, *length])?;
                Shape::Cylinder {
                    radius_m: *radius,
                    length_m: *length,
                }
            }
            urdf_rs::Geometry::Capsule { radius, length } => {
                dims("capsule", &[*radius, *length])?;
                Shape::Capsule {
                    radius_m: *radius,
                    length_m: *length,
                }
            }
            urdf_rs::Geometry::Sphere { radius } => {
                dims("sphere", &[*radius])?;
                Shape::Sphere { radius_m: *radius }
            }
            urdf_rs::Geometry::Mesh { filename, scale } => {
                let scale = scale.map_or([1.0; 3], |s| s.0);
                self.finite(
                    "link",
                    &l.name,
                    &format!("{field}<geometry><mesh scale>"),
                    &scale,
                )?;
                let resolved = mesh_path::resolve(filename, self.base_dir);
                if !resolved.exists {
                    missing.push(MissingMesh {
                        link: l.name.clone(),
                        filename: filename.clone(),
                        resolved: resolved.path,
                        role,
                    });
                    return Ok(None);
                }
                let is_stl = resolved
                    .path
                    .extension()
                    .is_some_and(|e| e.eq_ignore_ascii_case("stl"));
                let data = is_stl
                    .then(|| crate::stl::read_stl(&resolved.path).map(std::sync::Arc::new))
                    .transpose()?;
                Shape::Mesh {
                    path: resolved.path,
                    scale: Vector3::from(scale),
                    data,
                }
            }
        };
        Ok(Some(shape))
    }

    fn joint(&self, j: &urdf_rs::Joint, parent: usize, child: usize) -> Result<Joint> {
        let name = j.name.as_str();
        let kind = match j.joint_type {
            urdf_rs::JointType::Revolute => JointKind::Revolute,
            urdf_rs::JointType::Continuous => JointKind::Continuous,
            urdf_rs::JointType::Prismatic => JointKind::Prismatic,
            urdf_rs::JointType::Fixed => JointKind::Fixed,
            ref other => {
                return Err(RobotError::UnsupportedJoint {
                    file: self.file.into(),
                    joint: name.into(),
                    kind: format!("{other:?}").to_lowercase(),
                })
            }
        };
        let parent_from_joint = self.pose("joint", name, "<origin>", &j.origin)?;
        let axis = self.axis(j, kind)?;
        let limits = self.limits(j, kind)?;
        let (damping, friction) = j
            .dynamics
            .as_ref()
            .map_or((0.0, 0.0), |d| (d.damping, d.friction));
        self.finite(
            "joint",
            name,
            "<dynamics damping/friction>",
            &[damping, friction],
        )?;
        Ok(Joint {
            name: name.into(),
            kind,
            parent,
            child,
            parent_from_joint,
            axis,
            limits,
            damping,
            friction,
            mimic: None,
        })
    }

    fn axis(&self, j: &urdf_rs::Joint, kind: JointKind) -> Result<Unit<Vector3<f64>>> {
        let v = Vector3::from(j.axis.xyz.0);
        self.finite("joint", &j.name, "<axis xyz>", &j.axis.xyz.0)?;
        match Unit::try_new(v, 1e-9) {
            Some(axis) => Ok(axis),
            None if kind == JointKind::Fixed => Ok(Vector3::x_axis()),
            None => Err(self.invalid(
                "joint",
                &j.name,
                "<axis xyz>",
                "axis has zero length".into(),
            )),
        }
    }

    fn limits(&self, j: &urdf_rs::Joint, kind: JointKind) -> Result<JointLimits> {
        let name = j.name.as_str();
        let u = &j.limit;
        let field = "<limit>";
        if let Some(v) = [u.lower, u.upper, u.velocity, u.effort]
            .into_iter()
            .find(|v| v.is_nan())
        {
            return Err(self.invalid("joint", name, field, format!("value {v} is not a number")));
        }
        let given =
            self.presence.joints_with_limit.contains(name) || *u != urdf_rs::JointLimit::default();
        let mut limits = JointLimits {
            lower: u.lower,
            upper: u.upper,
            velocity: u.velocity,
            effort: u.effort,
        };
        match kind {
            JointKind::Fixed => {
                return Ok(JointLimits {
                    lower: 0.0,
                    upper: 0.0,
                    velocity: 0.0,
                    effort: 0.0,
                })
            }
            JointKind::Continuous if !given => {
                let inf = f64::INFINITY;
                return Ok(JointLimits {
                    lower: -inf,
                    upper: inf,
                    velocity: inf,
                    effort: inf,
                });
            }
            JointKind::Continuous => {
                limits.lower = f64::NEG_INFINITY;
                limits.upper = f64::INFINITY;
            }
            JointKind::Revolute | JointKind::Prismatic if !given => {
                let problem = "missing <limit> (required for revolute and prismatic joints)".into();
                return Err(self.invalid("joint", name, field, problem));
            }
            JointKind::Revolute | JointKind::Prismatic => {
                if limits.lower > limits.upper {
                    let problem = format!("lower {} > upper {}", limits.lower, limits.upper);
                    return Err(self.invalid("joint", name, "<limit lower/upper>", problem));
                }
            }
        }
        if limits.velocity <= 0.0 {
            let problem = format!("velocity limit {} must be positive", limits.velocity);
            return Err(self.invalid("joint", name, "<limit velocity>", problem));
        }
        if limits.effort < 0.0 {
            let problem = format!("effort limit {} must not be negative", limits.effort);
            return Err(self.invalid("joint", name, "<limit effort>", problem));
        }
        Ok(limits)
    }

    fn resolve_mimics(
        &self,
        robot: &urdf_rs::Robot,
        new_id: &[usize],
        joints: &mut [Joint],
    ) -> Result<()> {
        let by_name: HashMap<&str, usize> = robot
            .joints
            .iter()
            .enumerate()
            .map(|(i, j)| (j.name.as_str(), new_id[i]))
            .collect();
        for (urdf_index, uj) in robot.joints.iter().enumerate() {
            let Some(m) = &uj.mimic else { continue };
            let err = |problem: &str| RobotError::InvalidMimic {
                file: self.file.into(),
                joint: uj.name.clone(),
                target: m.joint.clone(),
                problem: problem.into(),
            };
            let target = *by_name
                .get(m.joint.as_str())
                .ok_or_else(|| err("no joint with this name"))?;
            let multiplier = m.multiplier.unwrap_or(1.0);
            let offset = m.offset.unwrap_or(0.0);
            self.finite(
                "joint",
                &uj.name,
                "<mimic multiplier/offset>",
                &[multiplier, offset],
            )?;
            let id = new_id[urdf_index];
            if !joints[id].kind.is_movable() {
                return Err(err("a fixed joint cannot mimic"));
            }
            if !joints[target].kind.is_movable() {
                return Err(err("the mimicked joint is fixed"));
            }
            joints[id].mimic = Some(Mimic {
                joint: target,
                multiplier,
                offset,
            });
        }
        // Mimic chains must end at a non-mimic joint.
        for (id, j) in joints.iter().enumerate() {
            let mut current = id;
            for _ in 0..=joints.len() {
                match &joints[current].mimic {
                    Some(m) => current = m.joint,
                    None => break,
                }
            }
            if joints[current].mimic.is_some() {
                let target = j
                    .mimic
                    .as_ref()
                    .map_or(String::new(), |m| joints[m.joint].name.clone());
                return Err(RobotError::InvalidMimic {
                    file: self.file.into(),
                    joint: j.name.clone(),
                    target,
                    problem: "mimic joints form a cycle".into(),
                });
            }
        }
        Ok(())
    }
}

/// URDF `<origin>` to an isometry; `rpy` is fixed-axis: R = Rz(yaw)·Ry(pitch)·Rx(roll).
pub(crate) fn pose_to_isometry(p: &urdf_rs::Pose) -> Isometry3<f64> {
    let [x, y, z] = p.xyz.0;
    let [roll, pitch, yaw] = p.rpy.0;
    Isometry3::from_parts(
        Translation3::new(x, y, z),
        UnitQuaternion::from_euler_angles(roll, pitch, yaw),
    )
}
