//! The time-varying part of a replay: per control step, link and object poses, camera images
//! and scalars; at the end, the outcome marker and log entry.

use nalgebra::Isometry3;
use robots::Manipulator;

use super::scene::{self, camera_entity, link_entity, object_entity};
use super::shapes;
use super::{Entity, Log, ReplayRequest};
use crate::camera::CameraFrame;
use crate::config::CameraMount;
use crate::error::Result;
use crate::reward::RewardTerms;
use crate::state::{iso_from_pose7, PhysicsState};

/// The full joint vector (indexed by `JointId`) for recorded arm and gripper positions; mimic
/// joints follow their source in `link_poses`, fixed joints read 0.
pub fn joint_vector(robot: &Manipulator, q_arm_rad: &[f64], gripper_q: &[f64]) -> Vec<f64> {
    let mut q = vec![0.0; robot.model.joints.len()];
    let arm = robot.arm_joints.iter().zip(q_arm_rad);
    let gripper = robot.gripper_joints.iter().zip(gripper_q);
    for (&j, &value) in arm.chain(gripper) {
        if let Some(slot) = q.get_mut(j) {
            *slot = value;
        }
    }
    q
}

/// Third finite difference of joint positions sampled every `dt_s` (rad/s³): entry `k` is the
/// jerk ending at sample `k + 3`.
pub fn joint_jerk(samples: &[&[f64]], dt_s: f64) -> Vec<Vec<f64>> {
    let dt3 = dt_s * dt_s * dt_s;
    samples
        .windows(4)
        .map(|w| {
            (0..w[3].len())
                .map(|i| {
                    let at = |s: &[f64]| s.get(i).copied().unwrap_or(0.0);
                    (at(w[3]) - 3.0 * at(w[2]) + 3.0 * at(w[1]) - at(w[0])) / dt3
                })
                .collect()
        })
        .collect()
}

/// Every `RewardTerms` field with its name.
pub fn reward_terms(r: &RewardTerms) -> [(&'static str, f64); 9] {
    [
        ("reach", r.reach),
        ("grasp", r.grasp),
        ("lift", r.lift),
        ("goal", r.goal),
        ("success", r.success),
        ("table_collision", r.table_collision),
        ("joint_limit", r.joint_limit),
        ("energy", r.energy),
        ("total", r.total),
    ]
}

/// Entities written every step, built once.
struct Entities {
    links: Vec<(usize, Entity)>,
    objects: Vec<Entity>,
    ee: Entity,
    q: Vec<Entity>,
    jerk: Vec<Entity>,
    rewards: Vec<Entity>,
    forces: Vec<Entity>,
    robot_env_force: Entity,
    gripper_opening: Entity,
    cameras: Vec<Entity>,
}

impl Entities {
    fn new(req: &ReplayRequest<'_>) -> Self {
        let robot = req.robot;
        let task = &req.episode.task;
        let joint_name = |j: usize| robot.model.joints.get(j).map_or("?", |x| x.name.as_str());
        let plots = Entity::new(&["plots"]);
        let cameras = req.episode.steps.iter().map(|s| s.images.len()).max();
        Entities {
            links: scene::drawn_links(robot, task)
                .into_iter()
                .map(|l| (l, link_entity(robot, l)))
                .collect(),
            objects: (0..task.objects.len())
                .map(|i| object_entity(task, i))
                .collect(),
            ee: Entity::new(&["world", "ee"]),
            q: robot
                .arm_joints
                .iter()
                .map(|&j| plots.child("joints").child("q_rad").child(joint_name(j)))
                .collect(),
            jerk: robot
                .arm_joints
                .iter()
                .map(|&j| {
                    plots
                        .child("joints")
                        .child("jerk_rad_s3")
                        .child(joint_name(j))
                })
                .collect(),
            rewards: reward_terms(&RewardTerms::default())
                .iter()
                .map(|(name, _)| plots.child("reward").child(name))
                .collect(),
            forces: task
                .objects
                .iter()
                .map(|o| {
                    plots
                        .child("contacts")
                        .child("object_peak_force_n")
                        .child(&o.name)
                })
                .collect(),
            robot_env_force: plots.child("contacts").child("robot_env_force_n"),
            gripper_opening: plots.child("gripper").child("opening"),
            cameras: (0..cameras.unwrap_or(0))
                .map(|i| camera_entity(req.config, i))
                .collect(),
        }
    }
}

/// Logs every recorded state on the timeline, then the outcome; returns warnings (malformed
/// images).
pub(super) fn log_steps(log: &Log<'_>, req: &ReplayRequest<'_>) -> Result<Vec<String>> {
    let e = req.episode;
    let ent = Entities::new(req);
    let world_from_root = Isometry3::translation(0.0, 0.0, e.task.table.top_z_m);
    let states: Vec<&PhysicsState> = std::iter::once(&e.initial_state)
        .chain(e.steps.iter().map(|s| &s.state))
        .collect();
    let samples: Vec<&[f64]> = states.iter().map(|s| s.q_rad.as_slice()).collect();
    let jerk = joint_jerk(&samples, req.config.control_dt_s());
    let mut warnings = Vec::new();
    for (k, state) in states.iter().enumerate() {
        log.set_time(k, state.time_s);
        if k == 0 {
            log.at(
                &Entity::new(&["log"]),
                &rerun::TextLog::new(format!("start: {}", e.task.instruction))
                    .with_level(rerun::TextLogLevel::INFO),
            )?;
        }
        let q = joint_vector(req.robot, &state.q_rad, &state.gripper_q);
        let root_from_link = req.robot.model.link_poses(&q);
        for (link, entity) in &ent.links {
            if let Some(pose) = root_from_link.get(*link) {
                log.at(entity, &shapes::transform(&(world_from_root * pose)))?;
            }
        }
        let world_from_ee = iso_from_pose7(&state.world_from_ee);
        log.at(&ent.ee, &shapes::transform(&world_from_ee))?;
        for (entity, object) in ent.objects.iter().zip(&state.objects) {
            log.at(
                entity,
                &shapes::transform(&iso_from_pose7(&object.world_from_object)),
            )?;
        }
        log_scalars(log, &ent, state)?;
        for (entity, value) in ent.jerk.iter().zip(
            k.checked_sub(3)
                .and_then(|i| jerk.get(i))
                .into_iter()
                .flatten(),
        ) {
            log.at(entity, &rerun::Scalars::single(*value))?;
        }
        // The initial state has no reward and no images: they come with each step.
        if let Some(step) = k.checked_sub(1).and_then(|i| e.steps.get(i)) {
            for (entity, (_, value)) in ent.rewards.iter().zip(reward_terms(&step.reward)) {
                log.at(entity, &rerun::Scalars::single(value))?;
            }
            for (i, (entity, frame)) in ent.cameras.iter().zip(&step.images).enumerate() {
                if let Some(CameraMount::Wrist { ee_from_camera }) =
                    req.config.cameras.get(i).map(|c| &c.mount)
                {
                    let world_from_camera = world_from_ee * ee_from_camera.to_isometry();
                    log.at(entity, &shapes::transform(&world_from_camera))?;
                }
                if let Err(problem) = log_frame(log, entity, frame) {
                    warnings.push(format!("step {k}, camera {i}: {problem}"));
                }
            }
        }
    }
    log_outcome(log, req)?;
    Ok(warnings)
}

fn log_scalars(log: &Log<'_>, ent: &Entities, state: &PhysicsState) -> Result<()> {
    for (entity, q) in ent.q.iter().zip(&state.q_rad) {
        log.at(entity, &rerun::Scalars::single(*q))?;
    }
    log.at(
        &ent.gripper_opening,
        &rerun::Scalars::single(state.gripper_opening),
    )?;
    for (entity, f) in ent.forces.iter().zip(&state.contacts.object_peak_force_n) {
        log.at(entity, &rerun::Scalars::single(*f))?;
    }
    log.at(
        &ent.robot_env_force,
        &rerun::Scalars::single(state.contacts.robot_env_force_n),
    )
}

/// RGB, depth (metres) and segmentation of one camera frame; `Err` (a warning, nothing logged)
/// when the buffers do not match the frame size.
fn log_frame(
    log: &Log<'_>,
    camera: &Entity,
    frame: &CameraFrame,
) -> std::result::Result<(), String> {
    let pixels = frame.width as usize * frame.height as usize;
    if frame.rgb.len() != 3 * pixels
        || frame.depth_m.len() != pixels
        || frame.segmentation.len() != pixels
    {
        return Err(format!(
            "image buffers ({} rgb bytes, {} depths, {} segment ids) do not fit {}×{} pixels; \
             not drawn",
            frame.rgb.len(),
            frame.depth_m.len(),
            frame.segmentation.len(),
            frame.width,
            frame.height
        ));
    }
    let size = [frame.width, frame.height];
    let depth: Vec<u8> = frame.depth_m.iter().flat_map(|d| d.to_le_bytes()).collect();
    let segments: Vec<u8> = frame
        .segmentation
        .iter()
        .flat_map(|s| s.to_le_bytes())
        .collect();
    let logged = log
        .at(
            &camera.child("rgb"),
            &rerun::Image::from_rgb24(frame.rgb.clone(), size),
        )
        .and_then(|()| {
            log.at(
                &camera.child("depth"),
                &rerun::DepthImage::from_data_type_and_bytes(
                    depth,
                    size,
                    rerun::ChannelDatatype::F32,
                )
                .with_meter(1.0_f32),
            )
        })
        .and_then(|()| {
            log.at(
                &camera.child("segmentation"),
                &rerun::SegmentationImage::new(
                    segments,
                    rerun::ImageFormat::segmentation(size, rerun::ChannelDatatype::U16),
                ),
            )
        });
    logged.map_err(|e| e.to_string())
}

/// A coloured marker at the goal object (or the TCP) and a log entry, at the last state's time.
fn log_outcome(log: &Log<'_>, req: &ReplayRequest<'_>) -> Result<()> {
    let e = req.episode;
    let success = e.outcome.success;
    let p = scene::marker_position(e);
    let (color, label, level) = if success {
        (
            rerun::Color::from_rgb(30, 220, 60),
            "success",
            rerun::TextLogLevel::INFO,
        )
    } else {
        (
            rerun::Color::from_rgb(230, 40, 40),
            "failure",
            rerun::TextLogLevel::ERROR,
        )
    };
    log.at(
        &Entity::new(&["world", "outcome"]),
        &rerun::Points3D::new([[p.x as f32, p.y as f32, p.z as f32]])
            .with_colors([color])
            .with_radii([0.03_f32])
            .with_labels([label]),
    )?;
    log.at(
        &Entity::new(&["log"]),
        &rerun::TextLog::new(format!(
            "{}: {} after {} steps",
            req.label,
            scene::outcome_text(e),
            e.steps.len()
        ))
        .with_level(level),
    )
}
