//! Camera throughput: 64×64 RGB-D + segmentation frames of the default pick scene (UR5e over a lift task, front and wrist cameras) on one core.
//!
//! Prints one JSON object:
//! `{"bench":"camera","width":64,"height":64,"threads":1,"frames_per_sec":...,"rays_per_sec":...}`.
//! `CAMERA_BENCH_FRAMES` sets the number of timed frames (default 5000).

use serde::Serialize;

#[derive(Serialize)]
struct Report {
    bench: &'static str,
    width: u32,
    height: u32,
    threads: usize,
    frames_per_sec: f64,
    rays_per_sec: f64,
}

fn main() -> anyhow::Result<()> {
    let frames = match std::env::var("CAMERA_BENCH_FRAMES") {
        Ok(text) => text.parse()?,
        Err(_) => 5000,
    };
    let bench = sim::scene::camera_bench::pick_scene_camera_bench(frames)?;
    let report = Report {
        bench: "camera",
        width: bench.width,
        height: bench.height,
        threads: bench.threads,
        frames_per_sec: bench.frames_per_sec,
        rays_per_sec: bench.rays_per_sec,
    };
    println!("{}", serde_json::to_string(&report)?);
    Ok(())
}
