//! The static part of a replay: props, URDF visuals, tool, TCP paths, camera models and the
//! instruction document.

use nalgebra::{Isometry3, Vector3};
use robots::{LinkId, Manipulator, Shape};

use super::shapes::{self, log_primitive};
use super::{Entity, Log, ReplayRequest};
use crate::config::CameraMount;
use crate::episode::Episode;
use crate::error::Result;
use crate::refine::metrics;
use crate::scene::props::TOOL_RGB;
use crate::scene::props::{
    FLOOR_SEGMENT, OBJECT_SEGMENT_BASE, PEDESTAL_SEGMENT, TABLE_SEGMENT, TOOL_SEGMENT,
    ZONE_SEGMENT_BASE,
};
use crate::scene::robot::ROBOT_SEGMENT_BASE;
use crate::task::{TaskSpec, ToolKind};

/// Radius of the robot pedestal (as built by `scene::props`).
const PEDESTAL_RADIUS_M: f64 = 0.09;

/// Links drawn: those with visual geometry, minus the fingers' subtrees when a tool replaces
/// the gripper (as the scene builds it).
pub(super) fn drawn_links(robot: &Manipulator, task: &TaskSpec) -> Vec<LinkId> {
    let model = &robot.model;
    let finger_roots: Vec<LinkId> = match task.tool {
        ToolKind::Gripper => Vec::new(),
        ToolKind::Spatula => robot
            .gripper_joints
            .iter()
            .filter_map(|&j| model.joints.get(j).map(|joint| joint.child))
            .collect(),
    };
    let below_finger = |link: LinkId| {
        finger_roots.contains(&link)
            || model.chain_to(link).iter().any(|&j| {
                model
                    .joints
                    .get(j)
                    .is_some_and(|joint| finger_roots.contains(&joint.child))
            })
    };
    (0..model.links.len())
        .filter(|&l| !model.links[l].visuals.is_empty() && !below_finger(l))
        .collect()
}

pub(super) fn link_entity(robot: &Manipulator, link: LinkId) -> Entity {
    let name = robot.model.links.get(link).map_or("?", |l| l.name.as_str());
    Entity::new(&["world", "robot", name])
}

pub(super) fn object_entity(task: &TaskSpec, index: usize) -> Entity {
    let name = task.objects.get(index).map_or("?", |o| o.name.as_str());
    Entity::new(&["world", "objects", name])
}

pub(super) fn camera_entity(config: &crate::config::SimConfig, index: usize) -> Entity {
    let fallback = format!("camera_{index}");
    let name = config
        .cameras
        .get(index)
        .map_or(fallback.as_str(), |c| c.name.as_str());
    Entity::new(&["world", "cameras", name])
}

/// Logs everything that does not change over the episode; returns warnings (unreadable meshes).
pub(super) fn log_static(log: &Log<'_>, req: &ReplayRequest<'_>) -> Result<Vec<String>> {
    log.fixed(
        &Entity::new(&["world"]),
        &rerun::ViewCoordinates::RIGHT_HAND_Z_UP(),
    )?;
    log_props(log, &req.episode.task)?;
    let warnings = log_robot(log, req.robot, &req.episode.task)?;
    log_ee_paths(log, req)?;
    if has_images(req.episode) {
        log_cameras(log, req)?;
    }
    log.fixed(
        &Entity::new(&["instruction"]),
        &rerun::TextDocument::from_markdown(instruction_markdown(req)),
    )?;
    Ok(warnings)
}

pub(super) fn has_images(e: &Episode) -> bool {
    e.steps.iter().any(|s| !s.images.is_empty())
}

fn log_props(log: &Log<'_>, task: &TaskSpec) -> Result<()> {
    let t = &task.table;
    log_primitive(
        log,
        &Entity::new(&["world", "table"]),
        &Isometry3::translation(
            t.center_xy_m[0],
            t.center_xy_m[1],
            t.top_z_m - t.size_m[2] / 2.0,
        ),
        &Shape::Box {
            size_m: Vector3::from(t.size_m),
        },
        shapes::rgb(t.rgb),
    )?;
    log_primitive(
        log,
        &Entity::new(&["world", "pedestal"]),
        &Isometry3::translation(0.0, 0.0, t.top_z_m / 2.0),
        &Shape::Cylinder {
            radius_m: PEDESTAL_RADIUS_M,
            length_m: t.top_z_m,
        },
        shapes::rgb([70, 70, 70]),
    )?;
    for z in &task.zones {
        let [r, g, b] = z.rgb;
        log_primitive(
            log,
            &Entity::new(&["world", "zones", &z.name]),
            &Isometry3::translation(z.center_m[0], z.center_m[1], z.center_m[2]),
            &Shape::Box {
                size_m: Vector3::from(z.half_extents_m) * 2.0,
            },
            rerun::Color::from_unmultiplied_rgba(r, g, b, 110),
        )?;
    }
    for (i, o) in task.objects.iter().enumerate() {
        let entity = object_entity(task, i);
        for (k, (object_from_part, part)) in o.kind.parts().iter().enumerate() {
            log_primitive(
                log,
                &entity.child(&format!("part_{k}")),
                object_from_part,
                part,
                shapes::rgb(o.rgb),
            )?;
        }
    }
    Ok(())
}

/// URDF visuals under their link entities, the TCP axes and the spatula.
fn log_robot(log: &Log<'_>, robot: &Manipulator, task: &TaskSpec) -> Result<Vec<String>> {
    let mut warnings = Vec::new();
    for link in drawn_links(robot, task) {
        let entity = link_entity(robot, link);
        let Some(l) = robot.model.links.get(link) else {
            continue;
        };
        for (k, item) in l.visuals.iter().enumerate() {
            let child = entity.child(&format!("visual_{k}"));
            let color = shapes::color(item.rgba.unwrap_or(shapes::DEFAULT_RGBA));
            match &item.shape {
                Shape::Mesh { path, scale, .. } => match rerun::Asset3D::from_file_path(path) {
                    Ok(asset) => {
                        log.fixed(&child, &asset.with_albedo_factor(color.0))?;
                        let s = [scale.x as f32, scale.y as f32, scale.z as f32];
                        let t = shapes::transform(&item.link_from_geometry).with_scale(s);
                        log.fixed(&child, &t)?;
                    }
                    Err(e) => warnings.push(format!(
                        "link `{}`: mesh `{}` not drawn: {e}",
                        l.name,
                        path.display()
                    )),
                },
                primitive => {
                    log_primitive(log, &child, &item.link_from_geometry, primitive, color)?
                }
            }
        }
    }
    let ee = Entity::new(&["world", "ee"]);
    log.fixed(&ee, &rerun::TransformAxes3D::new(0.06_f32))?;
    if task.tool == ToolKind::Spatula {
        for part in crate::scene::props::SPATULA_PARTS {
            log_primitive(
                log,
                &ee.child("tool").child(part.name),
                &Isometry3::translation(0.0, 0.0, part.z_in_ee_m),
                &Shape::Box {
                    size_m: Vector3::from(part.half_extents_m) * 2.0,
                },
                shapes::rgb(TOOL_RGB),
            )?;
        }
    }
    Ok(warnings)
}

/// Colour of a TCP path by label: refined green, anything else orange.
fn path_color(label: &str) -> rerun::Color {
    if label == "refined" {
        rerun::Color::from_rgb(40, 200, 90)
    } else {
        rerun::Color::from_rgb(240, 140, 30)
    }
}

fn ee_strip(e: &Episode) -> Vec<[f32; 3]> {
    metrics::ee_positions(e)
        .iter()
        .map(|p| [p.x as f32, p.y as f32, p.z as f32])
        .collect()
}

fn log_ee_paths(log: &Log<'_>, req: &ReplayRequest<'_>) -> Result<()> {
    let mut paths = vec![(req.label, req.episode)];
    paths.extend(req.companion);
    for (label, e) in paths {
        log.fixed(
            &Entity::new(&["world", "ee_path", label]),
            &rerun::LineStrips3D::new([ee_strip(e)])
                .with_colors([path_color(label)])
                .with_radii([0.003_f32])
                .with_labels([label]),
        )?;
    }
    Ok(())
}

/// Pinhole models, fixed camera poses and the segmentation legend.
fn log_cameras(log: &Log<'_>, req: &ReplayRequest<'_>) -> Result<()> {
    for (i, c) in req.config.cameras.iter().enumerate() {
        let entity = camera_entity(req.config, i);
        let s = &c.spec;
        log.fixed(
            &entity,
            &rerun::Pinhole::from_focal_length_and_resolution(
                [s.fx as f32, s.fy as f32],
                [s.width as f32, s.height as f32],
            )
            .with_principal_point([s.cx as f32, s.cy as f32])
            .with_image_plane_distance(0.15_f32),
        )?;
        let world_from_camera = match &c.mount {
            CameraMount::Fixed { world_from_camera } => Some(world_from_camera.to_isometry()),
            CameraMount::LookAt { eye_m, target_m } => Some(crate::scene::look_at(eye_m, target_m)),
            CameraMount::Wrist { .. } => None, // posed per step
        };
        if let Some(pose) = world_from_camera {
            log.fixed(&entity, &shapes::transform(&pose))?;
        }
    }
    log.fixed(
        &Entity::new(&["world", "cameras"]),
        &rerun::AnnotationContext::new(
            segment_classes(req)
                .iter()
                .map(|(id, name, c)| (*id, name.as_str(), *c)),
        ),
    )?;
    Ok(())
}

/// Segment id → name and colour, as the camera assigns them (`scene::props`, `scene::robot`).
fn segment_classes(req: &ReplayRequest<'_>) -> Vec<(u16, String, rerun::Rgba32)> {
    let task = &req.episode.task;
    let rgba = |c: [u8; 3]| rerun::Rgba32::from_rgb(c[0], c[1], c[2]);
    let mut classes = vec![
        (0, "background".to_owned(), rgba([0, 0, 0])),
        (TABLE_SEGMENT, "table".to_owned(), rgba(task.table.rgb)),
        (FLOOR_SEGMENT, "floor".to_owned(), rgba([90, 90, 96])),
        (PEDESTAL_SEGMENT, "pedestal".to_owned(), rgba([70, 70, 70])),
        (TOOL_SEGMENT, "tool".to_owned(), rgba(TOOL_RGB)),
    ];
    for (i, o) in task.objects.iter().enumerate() {
        classes.push((OBJECT_SEGMENT_BASE + i as u16, o.name.clone(), rgba(o.rgb)));
    }
    for (i, z) in task.zones.iter().enumerate() {
        classes.push((ZONE_SEGMENT_BASE + i as u16, z.name.clone(), rgba(z.rgb)));
    }
    // Robot bodies are numbered by welded body, at most one per link.
    for b in 0..req.robot.model.links.len() {
        let shade = 200u8.saturating_sub((b as u8).saturating_mul(9));
        classes.push((
            ROBOT_SEGMENT_BASE + b as u16,
            format!("robot body {b}"),
            rgba([shade, shade, 230]),
        ));
    }
    classes
}

/// One row of the raw-vs-refined table.
struct Metrics {
    label: String,
    steps: usize,
    duration_s: f64,
    path_m: f64,
    rms_jerk: f64,
    success: bool,
}

fn episode_metrics(label: &str, e: &Episode, dt_s: f64) -> Metrics {
    Metrics {
        label: label.to_owned(),
        steps: e.steps.len(),
        duration_s: metrics::duration_s(e, dt_s),
        path_m: metrics::path_length_m(e),
        rms_jerk: metrics::rms_jerk(e, dt_s),
        success: e.outcome.success,
    }
}

pub(super) fn outcome_text(e: &Episode) -> String {
    let o = &e.outcome;
    if o.success {
        match o.success_time_s {
            Some(t) => format!("success (predicate held from {t:.2} s)"),
            None => "success".to_owned(),
        }
    } else if let Some(reason) = &o.invalid {
        format!("failure: physically invalid: {reason}")
    } else if let Some(crate::reward::Failure::Broken { object }) = &o.failure {
        format!("failure: `{object}` broke (contact force above its threshold)")
    } else {
        "failure: the success predicate never held".to_owned()
    }
}

fn instruction_markdown(req: &ReplayRequest<'_>) -> String {
    let e = req.episode;
    let task = &e.task;
    let dt = req.config.control_dt_s();
    let mut md = format!(
        "# {}\n\n**Instruction:** {}\n\n- skill: `{}`, robot: `{}`\n- {} episode {} (seed {}), \
         {} control steps at {} Hz\n- outcome: {}, return {:.3}\n",
        task.name,
        task.instruction,
        task.skill.name(),
        req.robot.model.name,
        req.label,
        e.index,
        e.seed,
        e.steps.len(),
        req.config.control_hz,
        outcome_text(e),
        e.outcome.episode_return
    );
    let mut rows = vec![episode_metrics(req.label, e, dt)];
    if let Some((label, other)) = req.companion {
        rows.push(episode_metrics(label, other, dt));
    }
    md.push_str(
        "\n| episode | steps | duration (s) | TCP path (m) | RMS jerk (rad/s³) | success |\n\
         |---|---|---|---|---|---|\n",
    );
    for r in rows {
        md.push_str(&format!(
            "| {} | {} | {:.2} | {:.3} | {:.1} | {} |\n",
            r.label, r.steps, r.duration_s, r.path_m, r.rms_jerk, r.success
        ));
    }
    md
}

/// Where the outcome marker goes: the goal object at the end, else the TCP.
pub(super) fn marker_position(e: &Episode) -> Vector3<f64> {
    let last = e.steps.last().map_or(&e.initial_state, |s| &s.state);
    e.task
        .goal_object_index()
        .and_then(|i| last.objects.get(i))
        .map_or_else(|| last.ee_position_m(), |o| o.position_m())
}
