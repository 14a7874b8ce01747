//! [`AnchorScene`]: an anchor scene ([`AnchorModel`]) built in rapier, with either articulation
//! kind.

use rapier3d::math::{Pose, Rotation, Vector};
use rapier3d::prelude::nalgebra::Unit;
use rapier3d::prelude::{
    ColliderBuilder, GenericJoint, ImpulseJointHandle, IntegrationParameters, MassProperties,
    MotorModel, MultibodyJointHandle, PhysicsWorld, PrismaticJointBuilder, RevoluteJointBuilder,
    RigidBodyBuilder, RigidBodyHandle,
};

use super::model::{self, AnchorModel, GeomSpec, JointSpec, JointType, ARMATURE};
use super::{AnchorConfig, ArticulationKind};
use crate::error::{Result, SimError};

/// Index of a joint's free axis in rapier's 6-DoF spatial layout (`0..3` linear, `3..6`
/// angular); our joints are built with their axis on the joint frame's x.
fn free_axis_index(joint_type: JointType) -> usize {
    match joint_type {
        JointType::Prismatic => 0,
        JointType::Revolute => 3,
    }
}

/// Handles of one servoed joint, by articulation kind.
#[derive(Debug, Clone, Copy)]
enum JointHandle {
    Impulse(ImpulseJointHandle),
    Multibody(MultibodyJointHandle),
}

/// An anchor scene (see `shared/anchors/README.md`) in a rapier world.
///
/// Lifecycle: [`AnchorScene::new`], then per control tick [`AnchorScene::set_targets`] and
/// [`AnchorScene::step`]; read back with [`AnchorScene::joint_positions`].
pub struct AnchorScene {
    model: &'static AnchorModel,
    world: PhysicsWorld,
    kind: ArticulationKind,
    /// Rigid bodies of the model's links, same order.
    link_bodies: Vec<RigidBodyHandle>,
    /// For each of the model's joints: its handle and the bodies it connects (parent, child).
    joints: Vec<(JointHandle, RigidBodyHandle, RigidBodyHandle)>,
    cube: RigidBodyHandle,
    /// Damping (N·m·s/rad or N·s/m) given to rapier for each joint; see [`servo_damping`].
    damping_in_rapier: Vec<f32>,
    targets: Vec<f32>,
}

impl std::fmt::Debug for AnchorScene {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AnchorScene")
            .field("model", &self.model.name)
            .field("kind", &self.kind)
            .field("targets", &self.targets)
            .field("damping_in_rapier", &self.damping_in_rapier)
            .finish_non_exhaustive()
    }
}

/// Damping to hand rapier so its implicit spring-damper matches MuJoCo's servo.
///
/// MuJoCo (`implicitfast`) applies `kp·(target − q) − (kv + d)·v⁺`: `kp` on the position at the
/// start of the step, damping on the new velocity. Rapier's motors and multibody springs are
/// backward Euler, `kp·(target − q − h·v⁺) − c·v⁺`, i.e. an extra damping of `kp·h` (h = the
/// solver substep). With `c = kv + d − kp·h` both update rules are the same linear map.
pub fn servo_damping(joint: &JointSpec, substep_s: f32, match_mujoco: bool) -> f32 {
    let total = joint.kv + joint.damping;
    if match_mujoco {
        (total - joint.kp * substep_s).max(0.0)
    } else {
        total
    }
}

impl AnchorScene {
    /// Builds `model`'s scene at `q = 0`, all bodies awake and unable to sleep.
    pub fn new(
        model: &'static AnchorModel,
        kind: ArticulationKind,
        config: &AnchorConfig,
    ) -> Result<Self> {
        config.validate()?;
        let mut world = PhysicsWorld::new();
        world.gravity = Vector::new(0.0, 0.0, model::GRAVITY_Z_M_PER_S2);
        world.integration_parameters = integration_parameters(config);
        let substep_s = config.dt_s / config.solver_iterations as f32;

        // Floor (a half-space at z = 0) and table: colliders without a body.
        world.insert_collider(
            ColliderBuilder::halfspace(Unit::new_unchecked(Vector::Z)).friction(model::FRICTION),
            None,
        );
        let t = model.table_half_extents_m;
        world.insert_collider(
            ColliderBuilder::cuboid(t[0], t[1], t[2])
                .translation(model::vec3(model.table_center_m))
                .friction(model::FRICTION),
            None,
        );

        let link_bodies = insert_links(&mut world, model, kind);
        let damping_in_rapier: Vec<f32> = model
            .joints
            .iter()
            .map(|j| servo_damping(j, substep_s, config.match_mujoco_discretization))
            .collect();
        let joints = insert_joints(&mut world, model, kind, &link_bodies, &damping_in_rapier)?;

        let h = model::CUBE_HALF_EXTENT_M;
        let cube_body = RigidBodyBuilder::dynamic()
            .translation(model::vec3(model.cube_center_m))
            .can_sleep(false);
        let cube_collider = ColliderBuilder::cuboid(h, h, h)
            .mass(model::CUBE_MASS_KG)
            .friction(model::FRICTION);
        let (cube, _) = world.insert(cube_body, cube_collider);

        let n = model.num_joints();
        let mut scene = Self {
            model,
            world,
            kind,
            link_bodies,
            joints,
            cube,
            damping_in_rapier,
            targets: vec![0.0; n],
        };
        if kind == ArticulationKind::Multibody {
            scene.init_multibody_dofs()?;
        }
        scene.set_targets(&vec![0.0; n]);
        Ok(scene)
    }

    /// The scene's model.
    pub fn model(&self) -> &'static AnchorModel {
        self.model
    }

    /// The articulation kind this scene was built with.
    pub fn kind(&self) -> ArticulationKind {
        self.kind
    }

    /// The wrapped rapier world (read-only).
    pub fn world(&self) -> &PhysicsWorld {
        &self.world
    }

    /// Simulated time step, s.
    pub fn dt_s(&self) -> f32 {
        self.world.integration_parameters.dt
    }

    /// Multibody: per-DoF joint damping and armature, as MuJoCo's `damping`/`armature` (the
    /// servo's `kv` is folded into the damping, see [`servo_damping`]).
    fn init_multibody_dofs(&mut self) -> Result<()> {
        for (i, (handle, _, _)) in self.joints.iter().enumerate() {
            let JointHandle::Multibody(h) = *handle else {
                continue;
            };
            let name = self.model.joints[i].name;
            let (mb, link_id) = self
                .world
                .multibody_joints
                .get_mut(h)
                .ok_or_else(|| build_error(format!("multibody joint {name}")))?;
            let dof = mb
                .link(link_id)
                .map(|l| l.assembly_id())
                .ok_or_else(|| build_error(format!("multibody link of {name}")))?;
            if let Some(d) = mb.damping_mut().get_mut(dof) {
                *d = self.damping_in_rapier[i];
            }
            if let Some(a) = mb.armature_mut().get_mut(dof) {
                *a = ARMATURE;
            }
        }
        Ok(())
    }

    /// Sets the position targets in actuator order (rad for hinges, m for the fingers),
    /// clamped to each actuator's `ctrlrange` like MuJoCo does. Joints past `targets.len()`
    /// keep theirs; extra targets are ignored.
    pub fn set_targets(&mut self, targets: &[f32]) {
        for (i, (spec, target)) in self.model.joints.iter().zip(targets).enumerate() {
            let target = target.clamp(spec.ctrl_range[0], spec.ctrl_range[1]);
            self.targets[i] = target;
            let damping = self.damping_in_rapier[i];
            match self.joints[i].0 {
                JointHandle::Impulse(h) => {
                    if let Some(joint) = self.world.impulse_joints.get_mut(h, false) {
                        let axis = motor_axis(spec.joint_type);
                        joint
                            .data
                            .set_motor_position(axis, target, spec.kp, damping);
                    }
                }
                JointHandle::Multibody(h) => {
                    if let Some((mb, link_id)) = self.world.multibody_joints.get_mut(h) {
                        if let Some(link) = mb.link_mut(link_id) {
                            link.joint.set_spring(
                                free_axis_index(spec.joint_type),
                                spec.kp,
                                target,
                            );
                        }
                    }
                }
            }
        }
    }

    /// The targets in force (after clamping).
    pub fn targets(&self) -> &[f32] {
        &self.targets
    }

    /// Advances the world by one timestep.
    pub fn step(&mut self) {
        self.world.step();
    }

    /// Joint positions (rad, m) in actuator order.
    pub fn joint_positions(&self) -> Vec<f32> {
        (0..self.joints.len())
            .map(|i| self.joint_position(i))
            .collect()
    }

    /// Position (rad, m) of joint `i` in actuator order; NaN past the last.
    pub fn joint_position(&self, i: usize) -> f32 {
        let (Some((handle, parent, child)), Some(spec)) =
            (self.joints.get(i), self.model.joints.get(i))
        else {
            return f32::NAN;
        };
        match handle {
            JointHandle::Multibody(h) => self
                .world
                .multibody_joints
                .get(*h)
                .and_then(|(mb, id)| mb.link(id))
                .map(|l| l.joint().coords()[free_axis_index(spec.joint_type)])
                .unwrap_or(f32::NAN),
            JointHandle::Impulse(h) => self.impulse_joint_position(*h, *parent, *child, spec),
        }
    }

    /// Joint velocities (rad/s, m/s) in actuator order, from the bodies' velocities.
    pub fn joint_velocities(&self) -> Vec<f32> {
        let mut v = vec![0.0; self.joints.len()];
        for (i, (_, parent, child)) in self.joints.iter().enumerate() {
            let (Some(p), Some(c)) = (
                self.world.bodies.get(*parent),
                self.world.bodies.get(*child),
            ) else {
                v[i] = f32::NAN;
                continue;
            };
            let spec = &self.model.joints[i];
            let axis_in_world = p.rotation() * model::vec3(spec.axis);
            v[i] = match spec.joint_type {
                JointType::Revolute => (c.angvel() - p.angvel()).dot(axis_in_world),
                // Both fingers slide on a body (the hand) whose frame origin is their joint's
                // anchor offset; the relative velocity of the child origin is what we want.
                JointType::Prismatic => {
                    let anchor = c.translation();
                    let vp = p.linvel() + p.angvel().cross(anchor - p.center_of_mass());
                    let vc = c.linvel() + c.angvel().cross(anchor - c.center_of_mass());
                    (vc - vp).dot(axis_in_world)
                }
            };
        }
        v
    }

    fn impulse_joint_position(
        &self,
        handle: ImpulseJointHandle,
        parent: RigidBodyHandle,
        child: RigidBodyHandle,
        spec: &JointSpec,
    ) -> f32 {
        let (Some(joint), Some(p), Some(c)) = (
            self.world.impulse_joints.get(handle),
            self.world.bodies.get(parent),
            self.world.bodies.get(child),
        ) else {
            return f32::NAN;
        };
        match spec.joint_type {
            JointType::Revolute => joint
                .data
                .as_revolute()
                .map(|r| r.angle(p.rotation(), c.rotation()))
                .unwrap_or(f32::NAN),
            JointType::Prismatic => {
                let anchor1 = p.position() * joint.data.local_frame1;
                let anchor2 = c.position() * joint.data.local_frame2;
                let axis = anchor1.rotation * Vector::X;
                (anchor2.translation - anchor1.translation).dot(axis)
            }
        }
    }

    /// Cube centre in the world, m.
    pub fn cube_position_m(&self) -> Vector {
        self.world
            .bodies
            .get(self.cube)
            .map(|b| b.translation())
            .unwrap_or(Vector::NAN)
    }

    /// Largest linear (m/s) and angular (rad/s) speed over the arm links and the cube.
    pub fn max_speeds(&self) -> (f32, f32) {
        let mut lin = 0.0f32;
        let mut ang = 0.0f32;
        for h in self.link_bodies.iter().chain(std::iter::once(&self.cube)) {
            if let Some(b) = self.world.bodies.get(*h) {
                // NaN propagates through `max` only one way; make it win explicitly.
                let (l, a) = (b.linvel().length(), b.angvel().length());
                lin = if l.is_nan() || lin.is_nan() {
                    f32::NAN
                } else {
                    lin.max(l)
                };
                ang = if a.is_nan() || ang.is_nan() {
                    f32::NAN
                } else {
                    ang.max(a)
                };
            }
        }
        (lin, ang)
    }
}

/// Rapier refused an element of the scene (does not happen with the built-in model).
fn build_error(what: String) -> SimError {
    SimError::config(format!("anchor scene: {what}"), "rapier refused it")
}

/// Rapier's step settings from an [`AnchorConfig`].
pub fn integration_parameters(config: &AnchorConfig) -> IntegrationParameters {
    let mut p = IntegrationParameters {
        dt: config.dt_s,
        ..IntegrationParameters::default()
    };
    p.num_solver_iterations = config.solver_iterations;
    p.num_internal_pgs_iterations = config.pgs_iterations;
    p.num_internal_stabilization_iterations = config.stabilization_iterations;
    p.warmstart_joints = config.warmstart_joints;
    p.normalized_prediction_distance = config.prediction_distance_m;
    p.max_ccd_substeps = usize::from(config.ccd);
    p
}

fn motor_axis(joint_type: JointType) -> rapier3d::prelude::JointAxis {
    match joint_type {
        JointType::Revolute => rapier3d::prelude::JointAxis::AngX,
        JointType::Prismatic => rapier3d::prelude::JointAxis::LinX,
    }
}

/// Rotation taking rapier's cylinder axis (y) onto `axis`.
fn cylinder_rotation(axis: Vector) -> Rotation {
    Rotation::from_rotation_arc(Vector::Y, axis.normalize())
}

fn collider_of(geom: &GeomSpec) -> ColliderBuilder {
    let builder = match *geom {
        GeomSpec::Capsule {
            a_m,
            b_m,
            radius_m,
            mass_kg,
        } => ColliderBuilder::capsule_from_endpoints(model::vec3(a_m), model::vec3(b_m), radius_m)
            .mass(mass_kg),
        GeomSpec::Cylinder {
            center_m,
            axis,
            half_height_m,
            radius_m,
            mass_kg,
        } => ColliderBuilder::cylinder(half_height_m, radius_m)
            .position(Pose::from_parts(
                model::vec3(center_m),
                cylinder_rotation(model::vec3(axis)),
            ))
            .mass(mass_kg),
        GeomSpec::Cuboid {
            center_m,
            half_extents_m: e,
            mass_kg,
        } => ColliderBuilder::cuboid(e[0], e[1], e[2])
            .translation(model::vec3(center_m))
            .mass(mass_kg),
    };
    builder.friction(model::FRICTION)
}

/// Inserts the arm's rigid bodies with their colliders. With impulse joints the armature of a
/// hinge is added to its child's inertia about the joint axis (see the module docs).
fn insert_links(
    world: &mut PhysicsWorld,
    model: &AnchorModel,
    kind: ArticulationKind,
) -> Vec<RigidBodyHandle> {
    let positions = model.link_positions_in_world_m();
    let mut handles = Vec::with_capacity(model.links.len());
    for (link, pos) in model.links.iter().zip(positions) {
        let mut body = if link.parent.is_none() {
            RigidBodyBuilder::fixed()
        } else {
            RigidBodyBuilder::dynamic()
        }
        .translation(pos)
        .can_sleep(false);
        if kind == ArticulationKind::Impulse {
            if let Some(joint) = link.joint.and_then(|j| model.joints.get(j)) {
                if joint.joint_type == JointType::Revolute {
                    let axis = model::vec3(joint.axis);
                    body = body.additional_mass_properties(MassProperties::new(
                        Vector::ZERO,
                        0.0,
                        axis.abs() * ARMATURE,
                    ));
                }
            }
        }
        let handle = world.insert_body(body);
        for geom in link.geoms {
            world.insert_collider(collider_of(geom), Some(handle));
        }
        handles.push(handle);
    }
    handles
}

fn joint_data(spec: &JointSpec, anchor_in_parent_m: Vector, damping: f32) -> GenericJoint {
    let axis = model::vec3(spec.axis);
    let mut data: GenericJoint = match spec.joint_type {
        JointType::Revolute => RevoluteJointBuilder::new(axis)
            .local_anchor1(anchor_in_parent_m)
            .contacts_enabled(false)
            .motor_model(MotorModel::ForceBased)
            .motor_position(0.0, spec.kp, damping)
            .build()
            .into(),
        JointType::Prismatic => {
            let mut b = PrismaticJointBuilder::new(axis)
                .local_anchor1(anchor_in_parent_m)
                .contacts_enabled(false)
                .motor_model(MotorModel::ForceBased)
                .motor_position(0.0, spec.kp, damping);
            if let Some(l) = spec.limits {
                b = b.limits(l);
            }
            b.build().into()
        }
    };
    data.set_contacts_enabled(false);
    data
}

fn insert_joints(
    world: &mut PhysicsWorld,
    model: &AnchorModel,
    kind: ArticulationKind,
    links: &[RigidBodyHandle],
    damping: &[f32],
) -> Result<Vec<(JointHandle, RigidBodyHandle, RigidBodyHandle)>> {
    let mut out = Vec::with_capacity(model.num_joints());
    for (child_index, link) in model.links.iter().enumerate() {
        let (Some(parent_index), Some(joint_index)) = (link.parent, link.joint) else {
            continue;
        };
        let (Some(spec), Some(&parent), Some(&child)) = (
            model.joints.get(joint_index),
            links.get(parent_index),
            links.get(child_index),
        ) else {
            return Err(build_error(format!("link {} indices", link.name)));
        };
        let mut data = joint_data(
            spec,
            model::vec3(link.pos_in_parent_m),
            damping[joint_index],
        );
        let handle = match kind {
            ArticulationKind::Impulse => {
                JointHandle::Impulse(world.insert_impulse_joint(parent, child, data))
            }
            ArticulationKind::Multibody => {
                // Multibody servos are implicit joint springs set in `set_targets`, plus the
                // per-DoF damping: no motor constraint in the solver.
                data.motor_axes = rapier3d::prelude::JointAxesMask::empty();
                let h = world
                    .insert_multibody_joint(parent, child, data)
                    .ok_or_else(|| build_error(format!("multibody joint {}", spec.name)))?;
                JointHandle::Multibody(h)
            }
        };
        out.push((joint_index, (handle, parent, child)));
    }
    out.sort_by_key(|(i, _)| *i);
    if out.len() != model.num_joints() || out.iter().enumerate().any(|(k, (i, _))| k != *i) {
        return Err(build_error("one link per servoed joint".into()));
    }
    Ok(out.into_iter().map(|(_, j)| j).collect())
}
