//! The policy side of the controller: observation from the arm's joint state, the perceived
//! objects and the task, exactly as the simulator builds it for the policy (forward kinematics
//! for the end effector, the commanded target as proprioception, time since the task started),
//! then greedy inference and the action applied to the commanded joint target the way
//! `sim::Scene::apply` does (end-effector delta → damped least-squares IK from the target).

use std::sync::Arc;

use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};
use policy::features::{self, ACTION_DIM};
use policy::host::HostPolicy;
use policy::Policy;
use robots::Manipulator;
use sim::state::{pose7, ObjectState};
use sim::{Action, Observation, SimConfig, TaskSpec};

use crate::error::{BridgeError, Result};
use crate::protocol::{CameraImage, JointStateMsg, ObjectPose};

#[derive(Debug)]
pub struct PolicyRunner {
    pub policy: Policy,
    /// A state policy's forward pass on the host (no libtorch, no allocation per step);
    /// `None` for an image policy, which libtorch runs.
    host: Option<HostPolicy>,
    /// The instruction the host policy was given.
    instruction: String,
    robot: Arc<Manipulator>,
    sim: SimConfig,
    /// The observation of the last step, rebuilt in place.
    obs: Observation,
    /// The policy-level commanded arm target (what `Scene::q_target_rad` is in simulation).
    pub q_target_rad: Vec<f64>,
    pub gripper_target: f64,
}

impl PolicyRunner {
    pub fn new(policy: Policy, robot: Arc<Manipulator>) -> Result<PolicyRunner> {
        if policy.meta.dof != robot.dof() {
            return Err(BridgeError::Bundle(format!(
                "the policy drives {} joints, the robot has {}",
                policy.meta.dof,
                robot.dof()
            )));
        }
        let host = match policy.featurizer.model.obs {
            policy::ObsMode::State => Some(HostPolicy::new(&policy)?),
            policy::ObsMode::Rgbd => None,
        };
        let sim = policy.meta.sim.clone();
        let n = robot.dof();
        Ok(PolicyRunner {
            policy,
            host,
            instruction: String::new(),
            q_target_rad: robot.home_q_rad.clone(),
            gripper_target: 1.0,
            obs: Observation {
                time_s: 0.0,
                q_rad: vec![0.0; n],
                qd_rad_s: vec![0.0; n],
                gripper_opening: 1.0,
                world_from_ee: [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0],
                q_target_rad: vec![0.0; n],
                objects: Vec::with_capacity(8),
                images: Vec::new(),
            },
            robot,
            sim,
        })
    }

    /// The policy reads camera images (rgbd) rather than object poses.
    pub fn needs_images(&self) -> bool {
        self.policy.featurizer.model.obs == policy::ObsMode::Rgbd
    }

    /// The policy's control period (s).
    pub fn period_s(&self) -> f64 {
        self.sim.control_dt_s()
    }

    /// Starts a task from the measured configuration.
    pub fn reset(&mut self, q_rad: &[f64], gripper_opening: f64) {
        self.q_target_rad = q_rad.to_vec();
        self.robot.clamp_arm(&mut self.q_target_rad);
        self.gripper_target = gripper_opening.clamp(0.0, 1.0);
    }

    /// The observation the simulator would give the policy.
    pub fn observation(
        &self,
        state: &JointStateMsg,
        objects: &[ObjectPose],
        images: &[CameraImage],
        task: &TaskSpec,
        time_s: f64,
    ) -> Observation {
        let mut obs = self.obs.clone();
        self.fill_observation(&mut obs, state, objects, task, time_s);
        obs.images = images
            .iter()
            .map(|f| sim::CameraFrame {
                width: f.width,
                height: f.height,
                rgb: f.rgb.clone(),
                depth_m: f.depth_m.clone(),
                segmentation: Vec::new(),
            })
            .collect();
        obs
    }

    /// [`PolicyRunner::observation`] without the images, into `obs` (no allocation once its
    /// vectors have their sizes).
    fn fill_observation(
        &self,
        obs: &mut Observation,
        state: &JointStateMsg,
        objects: &[ObjectPose],
        task: &TaskSpec,
        time_s: f64,
    ) {
        let world_from_root = Isometry3::translation(0.0, 0.0, task.table.top_z_m);
        obs.time_s = time_s;
        obs.q_rad.clone_from(&state.q_rad);
        obs.qd_rad_s.clone_from(&state.qd_rad_s);
        obs.gripper_opening = state.gripper_opening;
        obs.world_from_ee = pose7(&(world_from_root * self.robot.fk(&state.q_rad)));
        obs.q_target_rad.clone_from(&self.q_target_rad);
        obs.objects.clear();
        obs.objects.extend(objects.iter().map(|o| ObjectState {
            world_from_object: o.world_from_object,
            lin_vel_m_s: o.lin_vel_m_s,
            ang_vel_rad_s: o.ang_vel_rad_s,
        }));
    }

    /// One policy step: infer the action for the current observation and move the commanded
    /// target by it. Returns false (target unchanged) when the network's output or its IK
    /// solution is not finite. A state policy's step allocates nothing once the task's
    /// instruction has been seen.
    pub fn act(
        &mut self,
        state: &JointStateMsg,
        objects: &[ObjectPose],
        images: &[CameraImage],
        task: &TaskSpec,
        time_s: f64,
    ) -> Result<bool> {
        if state.q_rad.len() != self.robot.dof() || state.qd_rad_s.len() != self.robot.dof() {
            return Err(BridgeError::config(
                "joint state",
                format!(
                    "{} positions and {} velocities, the robot has {} joints",
                    state.q_rad.len(),
                    state.qd_rad_s.len(),
                    self.robot.dof()
                ),
            ));
        }
        let mut obs = std::mem::replace(&mut self.obs, empty_observation());
        self.fill_observation(&mut obs, state, objects, task, time_s);
        let action = match self.host.as_mut() {
            Some(host) => {
                if self.instruction != task.instruction {
                    self.instruction.clone_from(&task.instruction);
                    host.set_instruction(&self.policy, &task.instruction);
                }
                host.act(&obs, task).map_err(BridgeError::from)
            }
            None => {
                let obs = self.observation(state, objects, images, task, time_s);
                self.infer_libtorch(&obs, task)
            }
        };
        self.obs = obs;
        let a = action?;
        if a.iter().any(|x| !x.is_finite()) {
            return Ok(false);
        }
        let action = features::to_sim_action(&a);
        Ok(self.apply(&action, task))
    }

    /// The action (simulator units) from libtorch: image policies.
    fn infer_libtorch(&self, obs: &Observation, task: &TaskSpec) -> Result<[f32; ACTION_DIM]> {
        let row = self.policy.featurizer.row(obs, task)?;
        let out = self.policy.infer(&[&row])?;
        Ok(self.policy.denormalize_action(&out.mean[..ACTION_DIM]))
    }

    /// `Scene::apply` for an end-effector delta, on the controller's commanded target.
    fn apply(&mut self, action: &Action, task: &TaskSpec) -> bool {
        let Action::EeDelta {
            dpos,
            drot,
            gripper,
        } = action
        else {
            return false;
        };
        let scale = &self.sim.action_scale;
        let world_from_root = Isometry3::translation(0.0, 0.0, task.table.top_z_m);
        let world_from_ee = world_from_root * self.robot.fk(&self.q_target_rad);
        let dp = Vector3::from(*dpos).map(|v| v.clamp(-1.0, 1.0)) * scale.max_ee_step_m;
        let dr = Vector3::from(*drot).map(|v| v.clamp(-1.0, 1.0)) * scale.max_ee_rot_rad;
        let target = Isometry3::from_parts(
            Translation3::from(world_from_ee.translation.vector + dp),
            UnitQuaternion::from_scaled_axis(dr) * world_from_ee.rotation,
        );
        let root_from_target = world_from_root.inverse() * target;
        let dt_s = self.sim.control_dt_s();
        if !self.robot.servo_step(
            &mut self.q_target_rad,
            &root_from_target,
            &self.sim.ik,
            dt_s,
        ) {
            return false;
        }
        self.gripper_target = gripper.clamp(0.0, 1.0);
        true
    }
}

/// An observation with no vectors (allocates nothing): a placeholder while the runner's own is
/// being filled.
fn empty_observation() -> Observation {
    Observation {
        time_s: 0.0,
        q_rad: Vec::new(),
        qd_rad_s: Vec::new(),
        gripper_opening: 0.0,
        world_from_ee: [0.0; 7],
        q_target_rad: Vec::new(),
        objects: Vec::new(),
        images: Vec::new(),
    }
}
