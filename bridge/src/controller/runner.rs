//! The policy side of the controller: observation from the arm's joint state, the perceived
//! objects and the task, exactly as the simulator builds it for the policy (forward kinematics
//! for the end effector, the commanded target as proprioception, time since the task started),
//! then greedy inference and the action applied to the commanded joint target the way
//! `sim::Scene::apply` does (end-effector delta → damped least-squares IK from the target).

use std::sync::Arc;

use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};
use policy::features::{self, ACTION_DIM};
use policy::Policy;
use robots::Manipulator;
use sim::state::{pose7, ObjectState};
use sim::{Action, Observation, SimConfig, TaskSpec};

use crate::error::{BridgeError, Result};
use crate::protocol::{CameraImage, JointStateMsg, ObjectPose};

#[derive(Debug)]
pub struct PolicyRunner {
    pub policy: Policy,
    robot: Arc<Manipulator>,
    sim: SimConfig,
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
        let sim = policy.meta.sim.clone();
        Ok(PolicyRunner {
            policy,
            q_target_rad: robot.home_q_rad.clone(),
            gripper_target: 1.0,
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
        let world_from_root = Isometry3::translation(0.0, 0.0, task.table.top_z_m);
        Observation {
            time_s,
            q_rad: state.q_rad.clone(),
            qd_rad_s: state.qd_rad_s.clone(),
            gripper_opening: state.gripper_opening,
            world_from_ee: pose7(&(world_from_root * self.robot.fk(&state.q_rad))),
            q_target_rad: self.q_target_rad.clone(),
            objects: objects
                .iter()
                .map(|o| ObjectState {
                    world_from_object: o.world_from_object,
                    lin_vel_m_s: o.lin_vel_m_s,
                    ang_vel_rad_s: o.ang_vel_rad_s,
                })
                .collect(),
            images: images
                .iter()
                .map(|f| sim::CameraFrame {
                    width: f.width,
                    height: f.height,
                    rgb: f.rgb.clone(),
                    depth_m: f.depth_m.clone(),
                    segmentation: Vec::new(),
                })
                .collect(),
        }
    }

    /// One policy step: infer the action for the current observation and move the commanded
    /// target by it. Returns false (target unchanged) when the network's output or its IK
    /// solution is not finite.
    pub fn act(
        &mut self,
        state: &JointStateMsg,
        objects: &[ObjectPose],
        images: &[CameraImage],
        task: &TaskSpec,
        time_s: f64,
    ) -> Result<bool> {
        if state.q_rad.len() != self.robot.dof() {
            return Err(BridgeError::config(
                "joint state",
                format!(
                    "{} joints, the robot has {}",
                    state.q_rad.len(),
                    self.robot.dof()
                ),
            ));
        }
        let obs = self.observation(state, objects, images, task, time_s);
        let row = self.policy.featurizer.row(&obs, task)?;
        let out = self.policy.infer(&[&row])?;
        let mut a = [0.0f32; ACTION_DIM];
        a.copy_from_slice(&out.mean[..ACTION_DIM]);
        if a.iter().any(|x| !x.is_finite()) {
            return Ok(false);
        }
        let action = features::to_sim_action(&self.policy.denormalize_action(&a));
        Ok(self.apply(&action, task))
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
