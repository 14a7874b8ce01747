//! Simulation configuration: rates, motor gains, solver settings, health limits. Every field
//! documents its default; all of it is serde so runs can record and reload it.

use robots::IkConfig;
use serde::{Deserialize, Serialize};

use crate::camera::CameraSpec;
use crate::error::{Result, SimError};
use crate::task::PoseSpec;

/// How a robot's joints are simulated: reduced-coordinate multibodies (exact joints, the
/// default: matches MuJoCo's PD response to 4 digits on the anchor scene) or impulse joints
/// (faster per step, but the joint chain does not converge at low solver iteration counts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum ArticulationKind {
    /// Maximal coordinates: each link a free body held by impulse-joint constraints.
    Impulse,
    /// Reduced coordinates (Featherstone-style multibody), like MuJoCo.
    #[default]
    Multibody,
}

impl ArticulationKind {
    /// Lower-case name, as in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Self::Impulse => "impulse",
            Self::Multibody => "multibody",
        }
    }
}

impl std::str::FromStr for ArticulationKind {
    type Err = SimError;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "impulse" => Ok(Self::Impulse),
            "multibody" => Ok(Self::Multibody),
            _ => Err(SimError::config(
                "articulation",
                format!("`{s}`: expected impulse or multibody"),
            )),
        }
    }
}

/// PD position-motor gains. Applied as rapier `MotorModel::ForceBased`, so `kp` (N·m/rad or
/// N/m) and `kd` (N·m·s/rad or N·s/m) mean what MuJoCo's position actuators' kp/kv mean.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GainsConfig {
    /// Arm joints whose effort limit is at least `big_joint_effort_nm`: default kp 800.
    pub big_kp: f64,
    /// Default 40.
    pub big_kd: f64,
    /// Wrist joints (effort below the threshold): default kp 300.
    pub wrist_kp: f64,
    /// Default 15.
    pub wrist_kd: f64,
    /// Effort (N·m) separating big joints from wrist joints. Default 50.
    pub big_joint_effort_nm: f64,
    /// Gripper fingers: default kp 1000 N/m (so ~25 N squeeze on a 5 cm cube). A revolute jaw
    /// gets the same stiffness at the TCP: kp (and kd) × its lever² (axis to TCP).
    pub gripper_kp: f64,
    /// Default 20.
    pub gripper_kd: f64,
    /// Feed-forward the arm's gravity torque (as a real arm controller does). Default true.
    pub gravity_compensation: bool,
}

impl Default for GainsConfig {
    fn default() -> Self {
        GainsConfig {
            big_kp: 800.0,
            big_kd: 40.0,
            wrist_kp: 300.0,
            wrist_kd: 15.0,
            big_joint_effort_nm: 50.0,
            gripper_kp: 1000.0,
            gripper_kd: 20.0,
            gravity_compensation: true,
        }
    }
}

/// Where a camera sits.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "mount", rename_all = "snake_case")]
pub enum CameraMount {
    /// Fixed in the world: the camera frame (OpenCV: +z forward, +y down) in the world.
    Fixed { world_from_camera: PoseSpec },
    /// Looking at `target_m` from `eye_m` (world frame), world up = +z.
    LookAt { eye_m: [f64; 3], target_m: [f64; 3] },
    /// On the wrist: the camera frame in the end-effector (TCP) frame.
    Wrist { ee_from_camera: PoseSpec },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CameraConfig {
    pub name: String,
    pub mount: CameraMount,
    pub spec: CameraSpec,
}

/// Limits beyond which an episode is marked physically invalid.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HealthLimits {
    /// Default 20 m/s.
    pub max_linear_speed_m_s: f64,
    /// Default 100 rad/s.
    pub max_angular_speed_rad_s: f64,
    /// Default 0.03 m.
    pub max_penetration_m: f64,
}

impl Default for HealthLimits {
    fn default() -> Self {
        HealthLimits {
            max_linear_speed_m_s: 20.0,
            max_angular_speed_rad_s: 100.0,
            max_penetration_m: 0.03,
        }
    }
}

/// Scales of the normalised actions in [-1, 1] (see `control`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ActionScale {
    /// Joint-delta mode: rad per control step at |a| = 1. Default 0.05.
    pub max_joint_step_rad: f64,
    /// EE-delta mode: m per control step at |a| = 1. Default 0.02.
    pub max_ee_step_m: f64,
    /// EE-delta mode: rad per control step at |a| = 1. Default 0.1.
    pub max_ee_rot_rad: f64,
}

impl Default for ActionScale {
    fn default() -> Self {
        ActionScale {
            max_joint_step_rad: 0.05,
            max_ee_step_m: 0.02,
            max_ee_rot_rad: 0.1,
        }
    }
}

/// Everything about how episodes are simulated (not what task they solve).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SimConfig {
    /// Physics step. Default 0.002 s (500 Hz).
    pub physics_dt_s: f64,
    /// Control (policy) rate. Default 25 Hz: 20 physics steps per action.
    pub control_hz: f64,
    /// rapier solver iterations (substeps of the contact solve). Default 1: joints are exact in
    /// a multibody, so iterations only serve contacts (see the anchor benchmark).
    pub solver_iterations: usize,
    /// PGS sweeps per solver iteration. Default 2.
    #[serde(default = "default_pgs")]
    pub pgs_iterations: usize,
    /// Contact prediction distance (m). Default 0.005.
    #[serde(default = "default_prediction")]
    pub prediction_distance_m: f64,
    /// Multibody (default) or impulse joints for the robot.
    #[serde(default)]
    pub articulation: ArticulationKind,
    pub gains: GainsConfig,
    pub action_scale: ActionScale,
    pub ik: IkConfig,
    pub health: HealthLimits,
    /// Cameras rendered into each observation (none by default: state-only episodes are fast).
    #[serde(default)]
    pub cameras: Vec<CameraConfig>,
    /// Energy penalty weight and other reward weights.
    #[serde(default)]
    pub reward: crate::reward::RewardWeights,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            physics_dt_s: 0.002,
            control_hz: 25.0,
            solver_iterations: 1,
            pgs_iterations: default_pgs(),
            prediction_distance_m: default_prediction(),
            articulation: Default::default(),
            gains: GainsConfig::default(),
            action_scale: ActionScale::default(),
            ik: IkConfig::default(),
            health: HealthLimits::default(),
            cameras: Vec::new(),
            reward: Default::default(),
        }
    }
}

fn default_pgs() -> usize {
    2
}

fn default_prediction() -> f64 {
    0.005
}

impl SimConfig {
    /// Physics steps per control step.
    pub fn substeps(&self) -> usize {
        ((1.0 / self.control_hz) / self.physics_dt_s)
            .round()
            .max(1.0) as usize
    }

    /// Control period (s), an exact multiple of the physics step.
    pub fn control_dt_s(&self) -> f64 {
        self.substeps() as f64 * self.physics_dt_s
    }

    /// The two default cameras: a fixed one looking over the table and one on the wrist.
    pub fn default_cameras() -> Vec<CameraConfig> {
        vec![
            CameraConfig {
                name: "front".into(),
                mount: CameraMount::LookAt {
                    eye_m: [1.35, 0.0, 1.2],
                    target_m: [0.35, 0.0, 0.5],
                },
                spec: CameraSpec::default(),
            },
            CameraConfig {
                name: "wrist".into(),
                mount: CameraMount::Wrist {
                    ee_from_camera: PoseSpec {
                        xyz_m: [0.0, -0.1, -0.12],
                        rpy_rad: [-0.6, 0.0, 0.0],
                    },
                },
                spec: CameraSpec::default(),
            },
        ]
    }

    pub fn validate(&self) -> Result<()> {
        let positive = |v: f64, field: &str| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(SimError::config(field, "must be a positive number"))
            }
        };
        positive(self.physics_dt_s, "physics_dt_s")?;
        positive(self.control_hz, "control_hz")?;
        if self.control_hz * self.physics_dt_s > 1.0 {
            return Err(SimError::config(
                "control_hz",
                "control period is shorter than the physics step",
            ));
        }
        if self.solver_iterations == 0 {
            return Err(SimError::config("solver_iterations", "must be at least 1"));
        }
        if self.pgs_iterations == 0 {
            return Err(SimError::config("pgs_iterations", "must be at least 1"));
        }
        if !(self.prediction_distance_m.is_finite() && self.prediction_distance_m >= 0.0) {
            return Err(SimError::config("prediction_distance_m", "must be >= 0"));
        }
        let g = &self.gains;
        for (v, f) in [
            (g.big_kp, "gains.big_kp"),
            (g.wrist_kp, "gains.wrist_kp"),
            (g.gripper_kp, "gains.gripper_kp"),
        ] {
            positive(v, f)?;
        }
        for (v, f) in [
            (g.big_kd, "gains.big_kd"),
            (g.wrist_kd, "gains.wrist_kd"),
            (g.gripper_kd, "gains.gripper_kd"),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(SimError::config(f, "must be >= 0"));
            }
        }
        for c in &self.cameras {
            c.spec
                .validate()
                .map_err(|e| SimError::config(format!("cameras.{}.spec", c.name), e.to_string()))?;
        }
        Ok(())
    }
}
