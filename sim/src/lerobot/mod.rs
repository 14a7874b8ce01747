//! Episodes → a LeRobot dataset (format v3.0, as `lerobot` 0.6 reads it with
//! `LeRobotDataset(repo_id, root=DIR)`, offline): `meta/info.json`, `meta/stats.json`,
//! `meta/tasks.parquet`, `meta/episodes/chunk-000/file-000.parquet` and
//! `data/chunk-CCC/file-FFF.parquet`. The dataset is written beside `out` and moved into
//! place when complete, so an interrupted export leaves no half dataset.
//!
//! `action` is the commanded absolute joint targets and gripper target (what LeRobot arms
//! take); `action.ee_delta` the commanded TCP motion in the world frame (m, rad) and gripper.

mod columns;
mod frames;
mod image;
mod stats;
mod tables;

use std::path::Path;
use std::sync::Arc;

use robots::Manipulator;
use serde_json::json;

use crate::config::SimConfig;
use crate::episode::Episode;
use crate::error::SimError;
use columns::{Column, Dtype, Feature};
pub use frames::{episode_frames, EpisodeFrames, EE_DELTA_DIM, POSE_DIM};
pub use stats::{FeatureStats, QUANTILES};
use tables::{DataWriter, EpisodeRow};

pub type Result<T> = std::result::Result<T, SimError>;

/// LeRobot's defaults: files per chunk directory, data file size.
pub const CHUNKS_SIZE: usize = 1000;
pub const DATA_FILE_MB: usize = 100;

pub(crate) fn problem(path: &Path, e: impl std::fmt::Display) -> SimError {
    SimError::Export {
        context: format!("`{}`", path.display()),
        problem: e.to_string(),
    }
}

fn bad(context: impl Into<String>, problem: impl Into<String>) -> SimError {
    SimError::Export {
        context: context.into(),
        problem: problem.into(),
    }
}

/// How to export.
#[derive(Clone, Debug)]
pub struct ExportOptions {
    /// `robot_type` in `info.json`.
    pub robot_type: String,
    /// Export the recorded camera images (every episode must have them).
    pub cameras: bool,
    /// Start a new data file once one holds about this many MB.
    pub data_file_mb: usize,
}

/// What an export wrote.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ExportReport {
    pub episodes: usize,
    pub frames: usize,
    pub tasks: Vec<String>,
    pub fps: u32,
    pub data_files: usize,
    pub features: Vec<String>,
}

/// The features of an export, in column order.
fn features(robot: &Manipulator, sim: &SimConfig, objects: usize, cameras: bool) -> Vec<Feature> {
    let joints: Vec<String> = robot
        .arm_joints
        .iter()
        .map(|&j| robot.model.joints[j].name.clone())
        .chain(["gripper".to_owned()])
        .collect();
    let axes = |prefix: &str, names: &[&str]| -> Vec<String> {
        names.iter().map(|n| format!("{prefix}{n}")).collect()
    };
    let pose = ["x", "y", "z", "qx", "qy", "qz", "qw"];
    let mut out = vec![
        Feature::vector("observation.state", joints.clone()),
        Feature::vector("observation.ee_pose", axes("", &pose)),
    ];
    if objects > 0 {
        let names = (0..objects)
            .flat_map(|i| axes(&format!("object{i}."), &pose))
            .collect();
        out.push(Feature::vector("observation.environment_state", names));
    }
    if cameras {
        for c in &sim.cameras {
            let (h, w) = (c.spec.height, c.spec.width);
            out.push(Feature::image(
                &format!("observation.images.{}", c.name),
                h,
                w,
                false,
            ));
            out.push(Feature::image(
                &format!("observation.images.{}_depth", c.name),
                h,
                w,
                true,
            ));
        }
    }
    out.push(Feature::vector("action", joints));
    let ee = ["dx", "dy", "dz", "rx", "ry", "rz", "gripper"];
    out.push(Feature::vector("action.ee_delta", axes("", &ee)));
    out.push(Feature::scalar("next.reward", Dtype::Float32));
    out.push(Feature::scalar("next.done", Dtype::Bool));
    out.push(Feature::scalar("next.success", Dtype::Bool));
    out.push(Feature::scalar("timestamp", Dtype::Float32));
    for name in ["frame_index", "episode_index", "index", "task_index"] {
        out.push(Feature::scalar(name, Dtype::Int64));
    }
    out
}

/// Image columns of one camera: colour and depth PNGs with their pixel statistics.
fn image_columns(frames: &[crate::camera::CameraFrame]) -> [Column; 2] {
    let pixels = frames.first().map_or(1, |f| (f.width * f.height) as usize);
    let stride = (pixels / 1024).max(1);
    let column = |depth: bool| {
        let png = frames
            .iter()
            .map(|f| {
                if depth {
                    image::depth_png(f)
                } else {
                    image::rgb_png(f)
                }
            })
            .collect();
        let mut stats =
            FeatureStats::of_columns(image::channel_samples(frames, depth, stride), true);
        stats.count = frames.len() as u64;
        Column::Images { png, stats }
    };
    [column(false), column(true)]
}

/// The columns of one episode, in feature order.
fn episode_columns(
    f: EpisodeFrames,
    fps: u32,
    episode: usize,
    first: usize,
    task: usize,
) -> Vec<Column> {
    let n = f.len();
    let mut out = vec![Column::vectors(&f.state), Column::vectors(&f.ee_pose)];
    if f.environment.first().is_some_and(|r| !r.is_empty()) {
        out.push(Column::vectors(&f.environment));
    }
    for camera in &f.images {
        out.extend(image_columns(camera));
    }
    out.push(Column::vectors(&f.action));
    out.push(Column::vectors(&f.ee_delta));
    out.push(Column::Float32(f.reward));
    out.push(Column::Bool(f.done));
    out.push(Column::Bool(f.success));
    out.push(Column::Float32(
        (0..n).map(|i| (i as f64 / f64::from(fps)) as f32).collect(),
    ));
    out.push(Column::Int64((0..n as i64).collect()));
    out.push(Column::Int64(vec![episode as i64; n]));
    out.push(Column::Int64((first as i64..(first + n) as i64).collect()));
    out.push(Column::Int64(vec![task as i64; n]));
    out
}

fn check(
    episodes: &[&Episode],
    robot: &Manipulator,
    sim: &SimConfig,
    cameras: bool,
) -> Result<u32> {
    let fps = sim.control_hz.round();
    if (sim.control_hz - fps).abs() > 1e-9 || fps < 1.0 {
        return Err(bad(
            "sim config field `control_hz`",
            format!(
                "{} Hz: LeRobot needs a whole number of frames per second",
                sim.control_hz
            ),
        ));
    }
    if cameras && sim.cameras.is_empty() {
        return Err(bad(
            "--cameras",
            "the episodes' simulator settings have no cameras",
        ));
    }
    for e in episodes {
        let which = || format!("episode {} (seed {})", e.index, e.seed);
        if e.robot_model_hash != robot.model.model_hash {
            return Err(bad(
                which(),
                format!(
                    "recorded on robot model {}, not `{}` ({})",
                    e.robot_model_hash, robot.model.name, robot.model.model_hash
                ),
            ));
        }
        if e.steps.is_empty() {
            return Err(bad(which(), "has no recorded steps"));
        }
        if cameras && e.steps.iter().any(|s| s.images.len() != sim.cameras.len()) {
            return Err(bad(which(), format!("has no recorded images of its {} cameras (record with cameras, or export without them)", sim.cameras.len())));
        }
    }
    Ok(fps as u32)
}

/// Writes `episodes` as a LeRobot dataset at `out` (which must not exist yet).
pub fn export(
    episodes: &[&Episode],
    robot: &Arc<Manipulator>,
    sim: &Arc<SimConfig>,
    opts: &ExportOptions,
    out: &Path,
) -> Result<ExportReport> {
    if episodes.is_empty() {
        return Err(bad("export", "no episodes to export"));
    }
    if out.exists() {
        return Err(problem(
            out,
            "already exists: remove it or choose another output directory",
        ));
    }
    let fps = check(episodes, robot, sim, opts.cameras)?;
    let objects = episodes
        .iter()
        .map(|e| e.initial_state.objects.len())
        .max()
        .unwrap_or(0);
    let features = features(robot, sim, objects, opts.cameras);
    let partial = out.with_extension("partial");
    if partial.exists() {
        std::fs::remove_dir_all(&partial).map_err(|e| problem(&partial, e))?;
    }
    let mut tasks: Vec<String> = Vec::new();
    let mut rows = Vec::with_capacity(episodes.len());
    let mut data = DataWriter::new(&partial, &features, CHUNKS_SIZE, opts.data_file_mb << 20);
    let mut frames_total = 0;
    for (i, e) in episodes.iter().enumerate() {
        let task = tasks
            .iter()
            .position(|t| *t == e.task.instruction)
            .unwrap_or_else(|| {
                tasks.push(e.task.instruction.clone());
                tasks.len() - 1
            });
        let f = episode_frames(e, robot, sim, objects, opts.cameras)?;
        let length = f.len();
        let columns = episode_columns(f, fps, i, frames_total, task);
        let data_file = data.append(&columns)?;
        rows.push(EpisodeRow {
            task: e.task.instruction.clone(),
            length,
            data_file,
            from_index: frames_total,
            stats: columns.iter().map(Column::stats).collect(),
        });
        frames_total += length;
    }
    let data_files = rows.last().map_or(0, |r| r.data_file + 1);
    data.finish()?;
    tables::write_episodes(&partial, &features, &rows, CHUNKS_SIZE)?;
    tables::write_tasks(&partial, &tasks)?;
    let stats: serde_json::Map<String, serde_json::Value> = features
        .iter()
        .enumerate()
        .filter_map(|(k, f)| {
            let parts: Vec<&FeatureStats> = rows.iter().map(|r| &r.stats[k]).collect();
            stats::aggregate(&parts).map(|s| (f.name.clone(), s.to_json()))
        })
        .collect();
    write_json(
        &partial.join("meta/stats.json"),
        &serde_json::Value::Object(stats),
    )?;
    let info = json!({
        "codebase_version": "v3.0",
        "robot_type": opts.robot_type,
        "total_episodes": rows.len(),
        "total_frames": frames_total,
        "total_tasks": tasks.len(),
        "chunks_size": CHUNKS_SIZE,
        "data_files_size_in_mb": opts.data_file_mb,
        "video_files_size_in_mb": 200,
        "fps": fps,
        "splits": {"train": format!("0:{}", rows.len())},
        "data_path": "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet",
        "video_path": null,
        "features": features.iter().map(|f| (f.name.clone(), f.info_json())).collect::<serde_json::Map<_, _>>(),
    });
    write_json(&partial.join("meta/info.json"), &info)?;
    std::fs::rename(&partial, out).map_err(|e| problem(out, e))?;
    Ok(ExportReport {
        episodes: rows.len(),
        frames: frames_total,
        tasks,
        fps,
        data_files,
        features: features.iter().map(|f| f.name.clone()).collect(),
    })
}

fn write_json(path: &Path, value: &serde_json::Value) -> Result<()> {
    let text = serde_json::to_string_pretty(value).map_err(|e| problem(path, e))?;
    std::fs::write(path, text).map_err(|e| problem(path, e))
}
