//! Episode store throughput: runs scripted lift episodes on the UR5e (state only, no images),
//! writes them to the store in files of 64 episodes and reads them back verified.
//!
//! Prints one JSON object:
//! `{"bench":"store","episodes":256,"bytes":...,"write_mb_per_sec":...,"read_mb_per_sec":...,"read_episodes_per_sec":...,...}`.
//! `STORE_BENCH_EPISODES` sets the number of episodes (default 256).

use std::sync::Arc;

use rand_chacha::ChaCha8Rng;
use sim::library::{sample_task, TaskRanges};
use sim::{
    BatchConfig, Controller, EpisodeBatch, EpisodeInfo, ScriptedPickPlace, SimConfig, SkillKind,
    TaskSpec,
};

fn main() -> anyhow::Result<()> {
    let episodes = match std::env::var("STORE_BENCH_EPISODES") {
        Ok(text) => text.parse()?,
        Err(_) => 256,
    };
    let robot = Arc::new(robots::load_builtin("ur5e")?);
    let config = Arc::new(SimConfig::default());
    let scale = config.action_scale.clone();
    let ranges = TaskRanges::default();
    let tasks = move |_: usize, rng: &mut ChaCha8Rng| -> TaskSpec {
        sample_task(SkillKind::Lift, &ranges, rng)
    };
    let factory = move |info: &EpisodeInfo<'_>| -> Box<dyn Controller> {
        Box::new(ScriptedPickPlace::new(info, scale.clone()))
    };
    let cfg = BatchConfig {
        episodes,
        seed: 1,
        threads: None,
        record_images: false,
    };
    let batch = EpisodeBatch::run(robot, config, &cfg, &tasks, &factory, &|| {})?;
    let dir = tempfile::tempdir()?;
    let report = sim::store::bench(&batch.episodes, dir.path())?;
    println!("{}", serde_json::to_string(&report)?);
    Ok(())
}
