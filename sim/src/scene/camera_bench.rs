//! Camera throughput in the default pick scene: the UR5e at home over a lift task, rendered by
//! the default front and wrist cameras in turn (64×64 RGB-D + segmentation), on one core.

use std::sync::Arc;
use std::time::Instant;

use rand::SeedableRng;

use crate::camera::{CameraBench, CameraFrame};
use crate::config::SimConfig;
use crate::error::Result;
use crate::library::{sample_task, TaskRanges};
use crate::scene::Scene;
use crate::task::SkillKind;

/// Renders `frames` frames (alternating the two default cameras) and reports frames/s.
pub fn pick_scene_camera_bench(frames: usize) -> Result<CameraBench> {
    let robot = Arc::new(robots::load_builtin("ur5e")?);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
    let task = sample_task(SkillKind::Lift, &TaskRanges::default(), &mut rng);
    let config = SimConfig {
        cameras: SimConfig::default_cameras(),
        ..SimConfig::default()
    };
    let spec = config.cameras[0].spec.clone();
    let scene = Scene::new(robot, &task, Arc::new(config))?;
    let mut frame = CameraFrame::new(spec.width, spec.height);
    for i in 0..frames.clamp(2, 50) {
        scene.render_into(i % 2, &mut frame);
    }
    let start = Instant::now();
    for i in 0..frames.max(1) {
        scene.render_into(i % 2, &mut frame);
    }
    let wall_s = start.elapsed().as_secs_f64().max(1e-9);
    let frames_per_sec = frames.max(1) as f64 / wall_s;
    Ok(CameraBench {
        width: spec.width,
        height: spec.height,
        threads: 1,
        frames: frames.max(1),
        frames_per_sec,
        rays_per_sec: frames_per_sec * f64::from(spec.width * spec.height),
    })
}
