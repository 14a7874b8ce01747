//! Robot → rapier articulation: one rigid body per group of links welded by fixed joints,
//! impulse joints with PD position motors for the movable joints, joint-state readback and
//! gravity compensation.
//!
//! Impulse joints, not multibody joints: on the anchor arm-cube scene they ran ≈2.5× faster
//! per step than rapier's reduced-coordinate multibodies with the same gains and fidelity within
//! a few percent (see `anchor` and README); the joint drift they allow is sub-millimetre at our
//! gains and is measured (`q` is read back from the actual body poses, never assumed).

use nalgebra::{Isometry3, Vector3};
use rapier3d::prelude::*;
use robots::{JointId, JointKind, LinkId, Manipulator};

use crate::camera::Appearance;
use crate::config::{ArticulationKind, GainsConfig};
use crate::convert::{iso_from_pose, na_from_vec, pose_from_iso, rotation_x_to, vec_from_na};
use crate::scene::groups;
use crate::scene::shapes::collider_for_geometry;

/// Segmentation id of robot link bodies: `ROBOT_SEGMENT_BASE + body index`.
pub const ROBOT_SEGMENT_BASE: u16 = 100;

/// Handle of a built joint, by articulation kind.
#[derive(Clone, Copy, Debug)]
pub enum JointHandle {
    Impulse(ImpulseJointHandle),
    Multibody(MultibodyJointHandle),
}

/// Where and how a robot is placed when built.
#[derive(Clone, Copy, Debug)]
pub struct RobotPose<'a> {
    /// The root link's frame in the world.
    pub world_from_root: &'a Isometry3<f64>,
    pub q_arm_rad: &'a [f64],
    /// Gripper opening in [0, 1].
    pub gripper_opening: f64,
    /// With `false` the gripper joints' subtrees are left out (a tool is mounted instead).
    pub with_fingers: bool,
}

/// One movable joint as built in rapier.
#[derive(Clone, Debug)]
pub struct BuiltJoint {
    pub joint: JointId,
    pub handle: JointHandle,
    pub parent_body: RigidBodyHandle,
    pub child_body: RigidBodyHandle,
    /// Joint frame (x = motion axis) in the parent body frame / in the child body frame.
    pub parent_body_from_frame: Isometry3<f64>,
    pub child_body_from_frame: Isometry3<f64>,
    pub kind: JointKind,
    pub kp: f64,
    pub kd: f64,
    pub effort: f64,
    pub lower: f64,
    pub upper: f64,
    /// Bodies moved by this joint (for gravity compensation).
    pub downstream_bodies: Vec<RigidBodyHandle>,
}

/// The robot inside a rapier world.
#[derive(Clone, Debug)]
pub struct RobotArticulation {
    /// Body of each link (`None` for links not built, e.g. fingers replaced by a tool).
    pub link_body: Vec<Option<RigidBodyHandle>>,
    /// Each link's frame in its body's frame.
    pub body_from_link: Vec<Isometry3<f64>>,
    pub bodies: Vec<RigidBodyHandle>,
    pub arm: Vec<BuiltJoint>,
    pub gripper: Vec<BuiltJoint>,
    pub ee_body: RigidBodyHandle,
    pub body_from_ee: Isometry3<f64>,
    /// Colliders of the gripper's finger bodies, one list per gripper joint; a single jaw adds
    /// the colliders of the link it is hinged on (the fixed jaw) as a second finger.
    pub finger_colliders: Vec<Vec<ColliderHandle>>,
    pub colliders: Vec<ColliderHandle>,
    gravity_bias_rad: Vec<f64>,
}

fn is_below(model: &robots::RobotModel, link: LinkId, ancestor: LinkId) -> bool {
    let mut l = link;
    loop {
        if l == ancestor {
            return true;
        }
        match model.links.get(l).and_then(|k| k.parent_joint) {
            Some(j) => l = model.joints[j].parent,
            None => return false,
        }
    }
}

impl RobotArticulation {
    /// Builds the robot as `pose` says (root placement, joints, gripper, fingers or a tool).
    pub fn build(
        world: &mut PhysicsWorld,
        robot: &Manipulator,
        pose: &RobotPose<'_>,
        gains: &GainsConfig,
        kind: ArticulationKind,
    ) -> RobotArticulation {
        let RobotPose {
            world_from_root,
            q_arm_rad,
            gripper_opening,
            with_fingers,
        } = *pose;
        let model = &robot.model;
        let positions = robot.joint_positions(q_arm_rad, gripper_opening);
        let root_from_link = model.link_poses(&positions);
        let n_links = model.links.len();
        let mut link_body: Vec<Option<RigidBodyHandle>> = vec![None; n_links];
        let mut body_from_link = vec![Isometry3::identity(); n_links];
        // Links whose subtree is dropped (fingers when a tool replaces them).
        let dropped = |l: LinkId| {
            !with_fingers
                && robot
                    .gripper_joints
                    .iter()
                    .any(|&j| is_below(model, l, model.joints[j].child))
        };
        let mut bodies = Vec::new();
        let mut colliders = Vec::new();
        let mut body_links: Vec<Vec<LinkId>> = Vec::new();
        // Links in topological order: the root, then each joint's child.
        let order = std::iter::once(model.root).chain(model.joints.iter().map(|j| j.child));
        for link in order {
            if dropped(link) {
                continue;
            }
            let starts_body = match model.links[link].parent_joint {
                None => true,
                Some(j) => model.joints[j].kind.is_movable(),
            };
            if starts_body {
                let world_from_link = world_from_root * root_from_link[link];
                let builder = if link == model.root {
                    RigidBodyBuilder::fixed()
                } else {
                    RigidBodyBuilder::dynamic()
                };
                let handle = world.insert_body(
                    builder
                        .pose(pose_from_iso(&world_from_link))
                        .can_sleep(false),
                );
                link_body[link] = Some(handle);
                bodies.push(handle);
                body_links.push(vec![link]);
            } else if let Some(j) = model.links[link].parent_joint {
                let parent = model.joints[j].parent;
                link_body[link] = link_body[parent];
                body_from_link[link] = body_from_link[parent] * model.joints[j].parent_from_joint;
                if let Some(b) = link_body[parent] {
                    if let Some(entry) = bodies.iter().position(|h| *h == b) {
                        body_links[entry].push(link);
                    }
                }
            }
        }
        // Mass properties and colliders per body.
        let mut link_colliders: Vec<Vec<ColliderHandle>> = vec![Vec::new(); n_links];
        for (bi, links) in body_links.iter().enumerate() {
            let body = bodies[bi];
            let mut mass = MassProperties::default();
            for &l in links {
                let link = &model.links[l];
                if let Some(inertial) = &link.inertial {
                    let body_from_com = body_from_link[l] * inertial.link_from_com;
                    let r = body_from_com.rotation.to_rotation_matrix();
                    let inertia = r.matrix() * inertial.inertia_kg_m2 * r.matrix().transpose();
                    let c = body_from_com.translation.vector;
                    let m3 = rapier3d::math::Matrix::from_cols_array(&[
                        inertia[(0, 0)] as f32,
                        inertia[(1, 0)] as f32,
                        inertia[(2, 0)] as f32,
                        inertia[(0, 1)] as f32,
                        inertia[(1, 1)] as f32,
                        inertia[(2, 1)] as f32,
                        inertia[(0, 2)] as f32,
                        inertia[(1, 2)] as f32,
                        inertia[(2, 2)] as f32,
                    ]);
                    mass += MassProperties::with_inertia_matrix(
                        vec_from_na(&c),
                        inertial.mass_kg as f32,
                        m3,
                    );
                }
                let rgba_of_link = link.visuals.iter().find_map(|v| v.rgba);
                let geometry = if link.collisions.is_empty() {
                    &link.visuals
                } else {
                    &link.collisions
                };
                for g in geometry {
                    let rgba = g.rgba.or(rgba_of_link).unwrap_or([0.6, 0.6, 0.6, 1.0]);
                    let appearance = Appearance {
                        segment_id: ROBOT_SEGMENT_BASE + bi as u16,
                        rgb: rgba_to_rgb(rgba),
                    };
                    let Some(builder) = collider_for_geometry(
                        &g.shape,
                        &(body_from_link[l] * g.link_from_geometry),
                    ) else {
                        continue;
                    };
                    let c = world.insert_collider(
                        builder
                            .density(0.0)
                            .friction(1.0)
                            .collision_groups(groups::robot())
                            .user_data(appearance.to_user_data()),
                        Some(body),
                    );
                    colliders.push(c);
                    link_colliders[l].push(c);
                }
            }
            if mass.mass() > 0.0 && model.root != links[0] {
                world.bodies[body].set_additional_mass_properties(mass, true);
            } else if model.root != links[0] {
                world.bodies[body].set_additional_mass_properties(
                    MassProperties::new(Vector::ZERO, 0.01, Vector::splat(1e-5)),
                    true,
                );
            }
        }
        let build_joint = |world: &mut PhysicsWorld, jid: JointId, kp: f64, kd: f64| {
            let joint = &model.joints[jid];
            let parent_body = link_body[joint.parent]?;
            let child_body = link_body[joint.child]?;
            let align = Isometry3::from_parts(
                nalgebra::Translation3::identity(),
                rotation_x_to(&joint.axis.into_inner()),
            );
            let parent_body_from_frame =
                body_from_link[joint.parent] * joint.parent_from_joint * align;
            let child_body_from_frame = body_from_link[joint.child] * align;
            let (mask, axis) = match joint.kind {
                JointKind::Prismatic => (JointAxesMask::LOCKED_PRISMATIC_AXES, JointAxis::LinX),
                _ => (JointAxesMask::LOCKED_REVOLUTE_AXES, JointAxis::AngX),
            };
            let kd_total = kd + joint.damping;
            let mut builder = GenericJointBuilder::new(mask)
                .local_frame1(pose_from_iso(&parent_body_from_frame))
                .local_frame2(pose_from_iso(&child_body_from_frame))
                .contacts_enabled(false)
                .motor_model(axis, MotorModel::ForceBased)
                .motor_max_force(axis, joint.limits.effort as f32);
            if joint.limits.lower.is_finite() && joint.limits.upper.is_finite() {
                builder =
                    builder.limits(axis, [joint.limits.lower as f32, joint.limits.upper as f32]);
            }
            let handle = match kind {
                ArticulationKind::Impulse => JointHandle::Impulse(world.insert_impulse_joint(
                    parent_body,
                    child_body,
                    builder.build(),
                )),
                ArticulationKind::Multibody => {
                    let h =
                        world.insert_multibody_joint(parent_body, child_body, builder.build())?;
                    if let Some((mb, link_id)) = world.multibody_joints.get_mut(h) {
                        if let Some(dof) = mb.link(link_id).map(|l| l.assembly_id()) {
                            if let Some(d) = mb.damping_mut().get_mut(dof) {
                                *d = kd_total as f32;
                            }
                        }
                    }
                    JointHandle::Multibody(h)
                }
            };
            let downstream_bodies = bodies
                .iter()
                .zip(&body_links)
                .filter(|(_, links)| is_below(model, links[0], joint.child))
                .map(|(b, _)| *b)
                .collect();
            Some(BuiltJoint {
                joint: jid,
                handle,
                parent_body,
                child_body,
                parent_body_from_frame,
                child_body_from_frame,
                kind: joint.kind,
                kp,
                kd: kd_total,
                effort: joint.limits.effort,
                lower: joint.limits.lower,
                upper: joint.limits.upper,
                downstream_bodies,
            })
        };
        let arm: Vec<BuiltJoint> = robot
            .arm_joints
            .iter()
            .filter_map(|&j| {
                let big = model.joints[j].limits.effort >= gains.big_joint_effort_nm;
                let (kp, kd) = if big {
                    (gains.big_kp, gains.big_kd)
                } else {
                    (gains.wrist_kp, gains.wrist_kd)
                };
                build_joint(world, j, kp, kd)
            })
            .collect();
        let gripper: Vec<BuiltJoint> = robot
            .gripper_joints
            .iter()
            .filter_map(|&j| {
                // The gains are a fingertip's (N/m, N·s/m); a revolute jaw gets the same
                // stiffness at the TCP: × lever² (N·m/rad, N·m·s/rad).
                let lever_sq = jaw_lever_m(robot, &root_from_link, j).powi(2);
                build_joint(
                    world,
                    j,
                    gains.gripper_kp * lever_sq,
                    gains.gripper_kd * lever_sq,
                )
            })
            .collect();
        let mut finger_colliders: Vec<Vec<ColliderHandle>> = gripper
            .iter()
            .map(|g| {
                let body = &world.bodies[g.child_body];
                body.colliders().to_vec()
            })
            .collect();
        // A single jaw closes against the link it is hinged on: that link is the other finger.
        if let [jaw] = robot.gripper_joints.as_slice() {
            if finger_colliders.len() == 1 {
                finger_colliders.push(link_colliders[model.joints[*jaw].parent].clone());
            }
        }
        if kind == ArticulationKind::Multibody {
            // A multibody starts at zero joint coordinates whatever its bodies' poses: move the
            // coordinates to the requested configuration and the bodies with them.
            let start: Vec<(JointHandle, f64)> = arm
                .iter()
                .map(|j| j.handle)
                .zip(q_arm_rad.iter().copied())
                .chain(
                    gripper
                        .iter()
                        .map(|j| j.handle)
                        .zip(gripper_targets(robot, gripper_opening)),
                )
                .collect();
            set_multibody_coordinates(world, &start);
        }
        let ee_body = link_body[robot.ee_link].unwrap_or(bodies[0]);
        let body_from_ee = body_from_link[robot.ee_link];
        let n_arm = arm.len();
        let articulation = RobotArticulation {
            link_body,
            body_from_link,
            bodies,
            arm,
            gripper,
            ee_body,
            body_from_ee,
            finger_colliders,
            colliders,
            gravity_bias_rad: vec![0.0; n_arm],
        };
        articulation.set_targets(world, q_arm_rad, &gripper_targets(robot, gripper_opening));
        articulation
    }

    fn frame_poses(
        &self,
        world: &PhysicsWorld,
        j: &BuiltJoint,
    ) -> (Isometry3<f64>, Isometry3<f64>) {
        let parent = iso_from_pose(world.bodies[j.parent_body].position());
        let child = iso_from_pose(world.bodies[j.child_body].position());
        (
            parent * j.parent_body_from_frame,
            child * j.child_body_from_frame,
        )
    }

    fn joint_position(&self, world: &PhysicsWorld, j: &BuiltJoint) -> f64 {
        if let JointHandle::Multibody(h) = j.handle {
            return world
                .multibody_joints
                .get(h)
                .and_then(|(mb, id)| mb.link(id))
                .map_or(f64::NAN, |l| l.joint().coords()[free_axis(j.kind)] as f64);
        }
        let (f1, f2) = self.frame_poses(world, j);
        let rel = f1.inverse() * f2;
        match j.kind {
            JointKind::Prismatic => rel.translation.vector.x,
            _ => {
                let q = rel.rotation.into_inner();
                let angle = 2.0 * q.i.atan2(q.w);
                // Wrap to (-π, π].
                (angle + std::f64::consts::PI).rem_euclid(2.0 * std::f64::consts::PI)
                    - std::f64::consts::PI
            }
        }
    }

    fn joint_velocity(&self, world: &PhysicsWorld, j: &BuiltJoint) -> f64 {
        let (f1, _) = self.frame_poses(world, j);
        let axis = f1.rotation * Vector3::x();
        let parent = &world.bodies[j.parent_body];
        let child = &world.bodies[j.child_body];
        match j.kind {
            JointKind::Prismatic => {
                let p = vec_from_na(&f1.translation.vector);
                let v = na_from_vec(child.velocity_at_point(p) - parent.velocity_at_point(p));
                v.dot(&axis)
            }
            _ => (na_from_vec(child.angvel()) - na_from_vec(parent.angvel())).dot(&axis),
        }
    }

    /// Measured arm joint positions (rad or m), read from the body poses.
    pub fn arm_q(&self, world: &PhysicsWorld) -> Vec<f64> {
        self.arm
            .iter()
            .map(|j| self.joint_position(world, j))
            .collect()
    }

    pub fn arm_qd(&self, world: &PhysicsWorld) -> Vec<f64> {
        self.arm
            .iter()
            .map(|j| self.joint_velocity(world, j))
            .collect()
    }

    pub fn gripper_q(&self, world: &PhysicsWorld) -> Vec<f64> {
        self.gripper
            .iter()
            .map(|j| self.joint_position(world, j))
            .collect()
    }

    /// Measured gripper opening in [0, 1] (mean over fingers); 0 without fingers.
    pub fn gripper_opening(&self, world: &PhysicsWorld) -> f64 {
        if self.gripper.is_empty() {
            return 0.0;
        }
        let sum: f64 = self
            .gripper
            .iter()
            .map(|j| {
                let range = (j.upper - j.lower).max(1e-9);
                ((self.joint_position(world, j) - j.lower) / range).clamp(0.0, 1.0)
            })
            .sum();
        sum / self.gripper.len() as f64
    }

    pub fn world_from_ee(&self, world: &PhysicsWorld) -> Isometry3<f64> {
        iso_from_pose(world.bodies[self.ee_body].position()) * self.body_from_ee
    }

    /// Recomputes the gravity feed-forward from the current body poses: the motor target of
    /// each arm joint is shifted by −G/kp so the PD force cancels gravity's torque G.
    pub fn update_gravity_compensation(&mut self, world: &PhysicsWorld, gravity_m_s2: f64) {
        for (i, j) in self.arm.iter().enumerate() {
            let (f1, _) = self.frame_poses(world, j);
            let axis = f1.rotation * Vector3::x();
            let origin = f1.translation.vector;
            let mut torque = 0.0;
            for b in &j.downstream_bodies {
                let body = &world.bodies[*b];
                let com = na_from_vec(body.center_of_mass());
                let force = Vector3::new(0.0, 0.0, -gravity_m_s2 * body.mass() as f64);
                torque += match j.kind {
                    JointKind::Prismatic => force.dot(&axis),
                    _ => (com - origin).cross(&force).dot(&axis),
                };
            }
            self.gravity_bias_rad[i] = -torque / j.kp;
        }
    }

    /// Sets motor targets: arm joints (rad/m) plus the current gravity bias, gripper joints.
    pub fn set_targets(&self, world: &mut PhysicsWorld, q_arm_rad: &[f64], gripper_q: &[f64]) {
        for (i, j) in self.arm.iter().enumerate() {
            let target = q_arm_rad.get(i).copied().unwrap_or(0.0) + self.gravity_bias_rad[i];
            set_motor(world, j, target);
        }
        for (i, j) in self.gripper.iter().enumerate() {
            set_motor(world, j, gripper_q.get(i).copied().unwrap_or(j.lower));
        }
    }
}

fn set_motor(world: &mut PhysicsWorld, j: &BuiltJoint, target: f64) {
    match j.handle {
        JointHandle::Impulse(h) => {
            let axis = match j.kind {
                JointKind::Prismatic => JointAxis::LinX,
                _ => JointAxis::AngX,
            };
            if let Some(joint) = world.impulse_joints.get_mut(h, false) {
                joint
                    .data
                    .set_motor_position(axis, target as f32, j.kp as f32, j.kd as f32);
            }
        }
        JointHandle::Multibody(h) => {
            if let Some((mb, id)) = world.multibody_joints.get_mut(h) {
                if let Some(link) = mb.link_mut(id) {
                    link.joint
                        .set_spring(free_axis(j.kind), j.kp as f32, target as f32);
                }
            }
        }
    }
}

/// Sets the generalized coordinates of multibody joints (all in one multibody) and updates the
/// link bodies' poses to match.
fn set_multibody_coordinates(world: &mut PhysicsWorld, coordinates: &[(JointHandle, f64)]) {
    let mut root = None;
    let mut displacement: Vec<(usize, f64)> = Vec::new();
    for (handle, q) in coordinates {
        if let JointHandle::Multibody(h) = handle {
            if let Some((mb, link)) = world.multibody_joints.get(*h) {
                if let Some(l) = mb.link(link) {
                    displacement.push((l.assembly_id(), *q));
                    root = Some(*h);
                }
            }
        }
    }
    let Some(root) = root else { return };
    if let Some((mb, _)) = world.multibody_joints.get_mut(root) {
        let mut disp = vec![0.0; mb.ndofs()];
        for (i, q) in displacement {
            if let Some(d) = disp.get_mut(i) {
                *d = q as f32;
            }
        }
        mb.apply_displacements(&disp);
        mb.forward_kinematics(&world.bodies, true);
        mb.update_rigid_bodies(&mut world.bodies, true);
    }
}

/// A revolute gripper joint's lever: the distance from its axis to the TCP (m) in the built
/// configuration; 1 for a prismatic finger (its gains are used as they are).
fn jaw_lever_m(robot: &Manipulator, root_from_link: &[Isometry3<f64>], j: JointId) -> f64 {
    let model = &robot.model;
    let joint = &model.joints[j];
    if joint.kind == JointKind::Prismatic {
        return 1.0;
    }
    let root_from_joint = root_from_link[joint.parent] * joint.parent_from_joint;
    let tcp = root_from_link[robot.ee_link].translation.vector;
    let axis = root_from_joint.rotation * joint.axis.into_inner();
    let offset = tcp - root_from_joint.translation.vector;
    let lever = (offset - axis * axis.dot(&offset)).norm();
    if lever.is_finite() && lever > 1e-3 {
        lever
    } else {
        1.0
    }
}

/// Index of the free axis in rapier's spatial layout (0..3 linear, 3..6 angular).
fn free_axis(kind: JointKind) -> usize {
    match kind {
        JointKind::Prismatic => 0,
        _ => 3,
    }
}

/// Gripper joint targets for an opening in [0, 1].
pub fn gripper_targets(robot: &Manipulator, opening: f64) -> Vec<f64> {
    let o = opening.clamp(0.0, 1.0);
    robot
        .gripper_joints
        .iter()
        .map(|&j| {
            let l = robot.model.joints[j].limits;
            l.lower + (l.upper - l.lower) * o
        })
        .collect()
}

fn rgba_to_rgb(rgba: [f32; 4]) -> [u8; 3] {
    [
        (rgba[0].clamp(0.0, 1.0) * 255.0).round() as u8,
        (rgba[1].clamp(0.0, 1.0) * 255.0).round() as u8,
        (rgba[2].clamp(0.0, 1.0) * 255.0).round() as u8,
    ]
}
