//! Robots shipped with the crate (URDF embedded at compile time), and loading by name or path.

use std::path::Path;

use crate::error::{Result, RobotError};
use crate::home::tool_down_home;
use crate::manipulator::Manipulator;
use crate::model::RobotModel;

struct Builtin {
    name: &'static str,
    urdf: &'static str,
    ee_link: &'static str,
    /// Tool pointing down (−z of the root frame), in front of the robot.
    home_q_rad: &'static [f64],
}

const BUILTINS: [Builtin; 2] = [
    Builtin {
        name: "ur5e",
        urdf: include_str!("../urdf/ur5e.urdf"),
        ee_link: "tcp",
        home_q_rad: &[
            0.0,
            -1.7,
            1.7,
            -std::f64::consts::FRAC_PI_2,
            -std::f64::consts::FRAC_PI_2,
            0.0,
        ],
    },
    Builtin {
        name: "panda",
        urdf: include_str!("../urdf/panda.urdf"),
        ee_link: "tcp",
        home_q_rad: &[0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785],
    },
];

const BUILTIN_NAMES: [&str; 2] = [BUILTINS[0].name, BUILTINS[1].name];

/// Names accepted by [`load_builtin`]: `["ur5e", "panda"]`.
pub fn builtin_names() -> &'static [&'static str] {
    &BUILTIN_NAMES
}

/// The URDF text of a builtin robot.
pub fn builtin_urdf(name: &str) -> Option<&'static str> {
    BUILTINS.iter().find(|b| b.name == name).map(|b| b.urdf)
}

/// Loads a shipped robot with its `tcp` end effector and a tool-down home pose.
pub fn load_builtin(name: &str) -> Result<Manipulator> {
    let builtin =
        BUILTINS
            .iter()
            .find(|b| b.name == name)
            .ok_or_else(|| RobotError::UnknownBuiltin {
                name: name.into(),
                known: builtin_names().join(", "),
            })?;
    let model = RobotModel::from_urdf_str(builtin.urdf, &format!("builtin:{name}"), None)?;
    let mut manipulator = Manipulator::new(model, builtin.ee_link)?;
    if builtin.home_q_rad.len() == manipulator.dof() {
        manipulator.home_q_rad = builtin.home_q_rad.to_vec();
    }
    Ok(manipulator)
}

/// End-effector link names tried, in order, when none is given.
pub const DEFAULT_EE_LINKS: [&str; 4] = ["tcp", "tool0", "ee_link", "panda_hand_tcp"];

/// Loads a builtin robot by name, or a URDF file by path.
///
/// `ee_link` defaults to the first existing of [`DEFAULT_EE_LINKS`], else the deepest link
/// (most joints from the root; first in document order on ties). A URDF file's home is the
/// tool-down pose of [`tool_down_home`] where IK finds one (else the limits' midpoint).
pub fn load_manipulator(name_or_path: &str, ee_link: Option<&str>) -> Result<Manipulator> {
    if builtin_names().contains(&name_or_path) {
        let builtin = load_builtin(name_or_path)?;
        return match ee_link {
            Some(ee) if ee != builtin.ee_link_name() => Manipulator::new(builtin.model, ee),
            _ => Ok(builtin),
        };
    }
    let model = RobotModel::from_urdf_file(Path::new(name_or_path))?;
    let ee = match ee_link {
        Some(ee) => ee.to_string(),
        None => default_ee_link(&model),
    };
    let mut manipulator = Manipulator::new(model, &ee)?;
    if let Some(home) = tool_down_home(&manipulator) {
        manipulator.home_q_rad = home;
    }
    Ok(manipulator)
}

/// [`load_manipulator`] for simulation: a collision mesh that is not there is an error naming
/// the URDF, the link and the file (a link without its collider would pass through things).
pub fn load_manipulator_for_sim(name_or_path: &str, ee_link: Option<&str>) -> Result<Manipulator> {
    let manipulator = load_manipulator(name_or_path, ee_link)?;
    let model = &manipulator.model;
    if let Some(m) = model.missing_meshes.iter().find(|m| m.role == "collision") {
        return Err(RobotError::MissingCollisionMesh {
            file: model.source.clone(),
            link: m.link.clone(),
            filename: m.filename.clone(),
            resolved: m.resolved.clone(),
        });
    }
    Ok(manipulator)
}

/// The end-effector link chosen when none is named.
pub fn default_ee_link(model: &RobotModel) -> String {
    if let Some(name) = DEFAULT_EE_LINKS
        .iter()
        .find(|name| model.link_id(name).is_some())
    {
        return (*name).to_string();
    }
    let depth = |link: usize| model.chain_to(link).len();
    let deepest = (0..model.links.len())
        .rev()
        .max_by_key(|&l| depth(l))
        .unwrap_or(model.root);
    model
        .links
        .get(deepest)
        .map(|l| l.name.clone())
        .unwrap_or_default()
}
