//! A `Scene`: one rapier world holding the robot and a task's props, stepped at the physics
//! rate under control-rate actions, observed as proprioception, privileged state and images.

pub mod camera_bench;
pub mod contacts;
pub mod props;
pub mod robot;
pub mod shapes;

use std::sync::Arc;

use nalgebra::{Isometry3, Rotation3, Translation3, UnitQuaternion, Vector3};
use rapier3d::prelude::*;
use robots::Manipulator;

pub use self::shapes::groups;
use crate::camera::{Camera, CameraFrame};
use crate::config::{CameraMount, SimConfig};
use crate::control::Action;
use crate::convert::{iso_from_pose, na_from_vec};
use crate::error::{Result, SimError};
use crate::state::{pose7, ObjectState, Observation, PhysicsState};
use crate::task::{TaskSpec, ToolKind};
use contacts::{ContactSummary, Role};
use robot::{gripper_targets, RobotArticulation};

/// Joint-limit margin counted as a "hit" (rad or m).
pub const JOINT_LIMIT_MARGIN: f64 = 0.02;

/// One simulated world: robot + task props.
pub struct Scene {
    pub world: PhysicsWorld,
    pub robot: Arc<Manipulator>,
    pub task: TaskSpec,
    pub config: Arc<SimConfig>,
    pub articulation: RobotArticulation,
    pub environment: props::Environment,
    pub objects: Vec<(RigidBodyHandle, Vec<ColliderHandle>)>,
    pub zones: Vec<ColliderHandle>,
    pub tool: Vec<ColliderHandle>,
    pub world_from_root: Isometry3<f64>,
    roles: Vec<Option<Role>>,
    q_target_rad: Vec<f64>,
    gripper_target: f64,
    contacts: ContactSummary,
    motor_energy_j: f64,
    time_s: f64,
    /// Start of the current control period and the physics steps taken in it (time is summed
    /// per period, so it does not depend on how a period is split).
    period_start_s: f64,
    period_physics_steps: usize,
    cameras: Vec<Camera>,
}

impl std::fmt::Debug for Scene {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scene")
            .field("task", &self.task.name)
            .field("time_s", &self.time_s)
            .finish_non_exhaustive()
    }
}

impl Scene {
    /// Builds the scene with the robot at its home configuration, gripper open.
    pub fn new(robot: Arc<Manipulator>, task: &TaskSpec, config: Arc<SimConfig>) -> Result<Scene> {
        task.validate()?;
        config.validate()?;
        let mut world = PhysicsWorld::new();
        world.gravity = Vector::new(0.0, 0.0, -9.81);
        world.integration_parameters.dt = config.physics_dt_s as f32;
        let params = &mut world.integration_parameters;
        params.num_solver_iterations = config.solver_iterations;
        params.num_internal_pgs_iterations = config.pgs_iterations;
        // length_unit is 1 (metres), so the normalised distance is in metres.
        params.normalized_prediction_distance = config.prediction_distance_m as f32;
        let environment = props::build_environment(&mut world, task, task.table.friction as f32);
        let world_from_root = Isometry3::translation(0.0, 0.0, task.table.top_z_m);
        let mut q_home = robot.home_q_rad.clone();
        for (q, offset) in q_home.iter_mut().zip(&task.arm_start_offset_rad) {
            *q += offset;
        }
        robot.clamp_arm(&mut q_home);
        let with_fingers = task.tool == ToolKind::Gripper;
        let mut articulation = RobotArticulation::build(
            &mut world,
            &robot,
            &robot::RobotPose {
                world_from_root: &world_from_root,
                q_arm_rad: &q_home,
                gripper_opening: 1.0,
                with_fingers,
            },
            &config.gains,
            config.articulation,
        );
        let tool = match task.tool {
            ToolKind::Gripper => Vec::new(),
            ToolKind::Spatula => {
                props::build_spatula(&mut world, articulation.ee_body, &articulation.body_from_ee)
            }
        };
        let objects: Vec<_> = task
            .objects
            .iter()
            .enumerate()
            .map(|(i, o)| props::build_object(&mut world, i, o))
            .collect();
        let zones = task
            .zones
            .iter()
            .enumerate()
            .map(|(i, z)| props::build_zone(&mut world, environment.ground, i, z))
            .collect();
        let mut roles = Vec::new();
        let mut assign = |h: ColliderHandle, r: Role| {
            let i = h.into_raw_parts().0 as usize;
            if roles.len() <= i {
                roles.resize(i + 1, None);
            }
            roles[i] = Some(r);
        };
        for c in &articulation.colliders {
            assign(*c, Role::RobotLink);
        }
        for (f, cs) in articulation.finger_colliders.iter().enumerate() {
            for c in cs {
                assign(*c, Role::Finger(f));
            }
        }
        for c in &tool {
            assign(*c, Role::Tool);
        }
        assign(environment.table, Role::Table);
        assign(environment.floor, Role::Floor);
        for (i, (_, cs)) in objects.iter().enumerate() {
            for c in cs {
                assign(*c, Role::Object(i));
            }
        }
        let cameras = config
            .cameras
            .iter()
            .map(|c| Camera::new(c.spec.clone()).map_err(SimError::from))
            .collect::<Result<Vec<_>>>()?;
        let n_fingers = articulation.finger_colliders.len();
        articulation.update_gravity_compensation(&world, 9.81);
        let gripper_target = if with_fingers { 1.0 } else { 0.0 };
        articulation.set_targets(
            &mut world,
            &q_home,
            &gripper_targets(&robot, gripper_target),
        );
        Ok(Scene {
            world,
            robot,
            task: task.clone(),
            config,
            articulation,
            environment,
            objects,
            zones,
            tool,
            world_from_root,
            roles,
            q_target_rad: q_home,
            gripper_target,
            contacts: ContactSummary::new(n_fingers, task.objects.len()),
            motor_energy_j: 0.0,
            time_s: 0.0,
            period_start_s: 0.0,
            period_physics_steps: 0,
            cameras,
        })
    }

    pub fn time_s(&self) -> f64 {
        self.time_s
    }

    pub fn q_target_rad(&self) -> &[f64] {
        &self.q_target_rad
    }

    /// Applies an action to the commanded targets (IK for end-effector deltas).
    pub fn apply(&mut self, action: &Action) -> std::result::Result<(), String> {
        action.check(self.robot.dof())?;
        let scale = &self.config.action_scale;
        let limits = self.robot.arm_limits();
        match action {
            Action::JointDelta { dq, .. } => {
                for ((q, d), l) in self.q_target_rad.iter_mut().zip(dq).zip(&limits) {
                    *q = (*q + d.clamp(-1.0, 1.0) * scale.max_joint_step_rad)
                        .clamp(l.lower, l.upper);
                }
            }
            Action::JointPosition { q_rad, .. } => {
                for ((q, t), l) in self.q_target_rad.iter_mut().zip(q_rad).zip(&limits) {
                    *q = t.clamp(l.lower, l.upper);
                }
            }
            Action::EeDelta { dpos, drot, .. } => {
                let root_from_ee = self.robot.fk(&self.q_target_rad);
                let world_from_ee = self.world_from_root * root_from_ee;
                let dp = Vector3::from(*dpos).map(|v| v.clamp(-1.0, 1.0)) * scale.max_ee_step_m;
                let dr = Vector3::from(*drot).map(|v| v.clamp(-1.0, 1.0)) * scale.max_ee_rot_rad;
                let target = Isometry3::from_parts(
                    Translation3::from(world_from_ee.translation.vector + dp),
                    UnitQuaternion::from_scaled_axis(dr) * world_from_ee.rotation,
                );
                let root_from_target = self.world_from_root.inverse() * target;
                let dt_s = self.config.control_dt_s();
                self.robot.servo_step(
                    &mut self.q_target_rad,
                    &root_from_target,
                    &self.config.ik,
                    dt_s,
                );
            }
        }
        if !self.articulation.gripper.is_empty() {
            self.gripper_target = action.gripper().clamp(0.0, 1.0);
        }
        Ok(())
    }

    /// Advances one control period (several physics steps).
    pub fn step_control(&mut self) {
        self.begin_control_period();
        self.step_physics(self.config.substeps());
    }

    /// Starts a control period: the contact summary and motor energy accumulate from here.
    pub fn begin_control_period(&mut self) {
        self.contacts = ContactSummary::new(
            self.articulation.finger_colliders.len(),
            self.task.objects.len(),
        );
        self.motor_energy_j = 0.0;
        self.period_start_s = self.time_s;
        self.period_physics_steps = 0;
    }

    /// Advances `n` physics steps towards the current targets (part of a control period, for
    /// a driver that takes commands faster than the policy acts).
    pub fn step_physics(&mut self, n: usize) {
        let dt = self.config.physics_dt_s;
        let gripper_q = gripper_targets(&self.robot, self.gripper_target);
        for _ in 0..n {
            if self.config.gains.gravity_compensation {
                self.articulation
                    .update_gravity_compensation(&self.world, 9.81);
            }
            self.articulation
                .set_targets(&mut self.world, &self.q_target_rad, &gripper_q);
            self.world.step();
            self.contacts.accumulate(&self.world, &self.roles, dt);
            self.motor_energy_j += self.motor_power_w() * dt;
        }
        self.period_physics_steps += n;
        self.time_s = self.period_start_s + self.period_physics_steps as f64 * dt;
    }

    /// |τ·q̇| summed over arm joints, with τ the PD law the motors apply (clamped to effort).
    fn motor_power_w(&self) -> f64 {
        let q = self.articulation.arm_q(&self.world);
        let qd = self.articulation.arm_qd(&self.world);
        self.articulation
            .arm
            .iter()
            .enumerate()
            .map(|(i, j)| {
                let target = self.q_target_rad.get(i).copied().unwrap_or(0.0);
                let tau = (j.kp * (target - q[i]) - j.kd * qd[i]).clamp(-j.effort, j.effort);
                (tau * qd[i]).abs()
            })
            .sum()
    }

    fn object_states(&self) -> Vec<ObjectState> {
        self.objects
            .iter()
            .map(|(b, _)| {
                let body = &self.world.bodies[*b];
                let v = na_from_vec(body.linvel());
                let w = na_from_vec(body.angvel());
                ObjectState {
                    world_from_object: pose7(&iso_from_pose(body.position())),
                    lin_vel_m_s: [v.x, v.y, v.z],
                    ang_vel_rad_s: [w.x, w.y, w.z],
                }
            })
            .collect()
    }

    pub fn physics_state(&self) -> PhysicsState {
        let q = self.articulation.arm_q(&self.world);
        let limits = self.robot.arm_limits();
        let joint_limit_hits = q
            .iter()
            .zip(&limits)
            .filter(|(q, l)| {
                **q <= l.lower + JOINT_LIMIT_MARGIN || **q >= l.upper - JOINT_LIMIT_MARGIN
            })
            .count();
        PhysicsState {
            time_s: self.time_s,
            qd_rad_s: self.articulation.arm_qd(&self.world),
            q_rad: q,
            gripper_q: self.articulation.gripper_q(&self.world),
            gripper_opening: self.articulation.gripper_opening(&self.world),
            world_from_ee: pose7(&self.articulation.world_from_ee(&self.world)),
            objects: self.object_states(),
            contacts: self.contacts.clone(),
            motor_energy_j: self.motor_energy_j,
            joint_limit_hits,
        }
    }

    /// The observation a policy sees; images only when `with_images` and cameras exist.
    pub fn observe(&self, state: &PhysicsState, with_images: bool) -> Observation {
        Observation {
            time_s: state.time_s,
            q_rad: state.q_rad.clone(),
            qd_rad_s: state.qd_rad_s.clone(),
            gripper_opening: state.gripper_opening,
            world_from_ee: state.world_from_ee,
            q_target_rad: self.q_target_rad.clone(),
            objects: state.objects.clone(),
            images: if with_images {
                self.render_all()
            } else {
                Vec::new()
            },
        }
    }

    /// The world pose of each configured camera.
    pub fn world_from_cameras(&self) -> Vec<Isometry3<f64>> {
        let world_from_ee = self.articulation.world_from_ee(&self.world);
        self.config
            .cameras
            .iter()
            .map(|c| match &c.mount {
                CameraMount::Fixed { world_from_camera } => world_from_camera.to_isometry(),
                CameraMount::LookAt { eye_m, target_m } => look_at(eye_m, target_m),
                CameraMount::Wrist { ee_from_camera } => {
                    world_from_ee * ee_from_camera.to_isometry()
                }
            })
            .collect()
    }

    /// Renders every configured camera.
    pub fn render_all(&self) -> Vec<CameraFrame> {
        (0..self.cameras.len())
            .map(|i| {
                let mut frame = CameraFrame::default();
                self.render_into(i, &mut frame);
                frame
            })
            .collect()
    }

    /// Renders camera `index` (of `SimConfig::cameras`) into `frame`, reusing its buffers.
    /// Does nothing for an index out of range.
    pub fn render_into(&self, index: usize, frame: &mut CameraFrame) {
        let Some(camera) = self.cameras.get(index) else {
            return;
        };
        let Some(pose) = self.world_from_cameras().into_iter().nth(index) else {
            return;
        };
        camera.render(&self.world.bodies, &self.world.colliders, &pose, frame);
    }

    /// Physics health: NaN/inf, exploding velocities or deep penetrations, with a reason.
    pub fn health_problem(&self, state: &PhysicsState) -> Option<String> {
        let limits = &self.config.health;
        for (handle, body) in self.world.bodies.iter() {
            let p = body.translation();
            let v = body.linvel();
            let w = body.angvel();
            let all = [p.x, p.y, p.z, v.x, v.y, v.z, w.x, w.y, w.z];
            if all.iter().any(|x| !x.is_finite()) {
                return Some(format!(
                    "body {:?}: non-finite pose or velocity",
                    handle.into_raw_parts().0
                ));
            }
            if v.length() as f64 > limits.max_linear_speed_m_s {
                return Some(format!(
                    "body {}: linear speed {:.1} m/s exceeds {} m/s",
                    handle.into_raw_parts().0,
                    v.length(),
                    limits.max_linear_speed_m_s
                ));
            }
            if w.length() as f64 > limits.max_angular_speed_rad_s {
                return Some(format!(
                    "body {}: angular speed {:.1} rad/s exceeds {} rad/s",
                    handle.into_raw_parts().0,
                    w.length(),
                    limits.max_angular_speed_rad_s
                ));
            }
        }
        if state.contacts.max_penetration_m > limits.max_penetration_m {
            return Some(format!(
                "penetration {:.3} m exceeds {} m",
                state.contacts.max_penetration_m, limits.max_penetration_m
            ));
        }
        None
    }
}

/// Camera pose looking from `eye` at `target` with world +z up (OpenCV camera axes).
pub fn look_at(eye: &[f64; 3], target: &[f64; 3]) -> Isometry3<f64> {
    let eye = Vector3::from(*eye);
    let forward = (Vector3::from(*target) - eye).normalize();
    let mut right = forward.cross(&Vector3::z());
    if right.norm() < 1e-9 {
        right = Vector3::x();
    }
    let right = right.normalize();
    let down = forward.cross(&right);
    let rotation =
        Rotation3::from_matrix_unchecked(nalgebra::Matrix3::from_columns(&[right, down, forward]));
    Isometry3::from_parts(
        Translation3::from(eye),
        UnitQuaternion::from_rotation_matrix(&rotation),
    )
}
