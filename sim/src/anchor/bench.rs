//! Throughput bench: many independent anchor worlds, random targets every step, spread over a
//! local rayon pool (one world per task; rapier's own `parallel`/`simd8` stay off).

use std::time::Instant;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::{Anchor, AnchorConfig, AnchorScene, ArticulationKind};
use crate::error::{Result, SimError};

/// What to run. Defaults mirror `shared/anchors/mujoco_bench.py`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PhysicsBenchConfig {
    /// Scene. Default [`Anchor::ArmCube`].
    #[serde(default)]
    pub anchor: Anchor,
    /// Articulation kind. Default [`ArticulationKind::default`].
    pub articulation: ArticulationKind,
    /// Solver settings. Default [`AnchorConfig::default`].
    pub scene: AnchorConfig,
    /// Worker threads of the local rayon pool. Default 1.
    pub threads: usize,
    /// Independent episodes. Default 64.
    pub episodes: usize,
    /// Steps per episode. Default 1000.
    pub steps_per_episode: usize,
    /// Half-width of the uniform random targets (rad/m, before ctrlrange clamping). Default 0.5.
    pub target_amplitude: f32,
    /// Seed of episode 0; episode `i` uses `seed + i`. Default 0.
    pub seed: u64,
}

impl Default for PhysicsBenchConfig {
    fn default() -> Self {
        Self {
            anchor: Anchor::default(),
            articulation: ArticulationKind::default(),
            scene: AnchorConfig::default(),
            threads: 1,
            episodes: 64,
            steps_per_episode: 1000,
            target_amplitude: 0.5,
            seed: 0,
        }
    }
}

/// Result of [`run_physics_bench`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhysicsBench {
    /// Always `"coevolve-rapier"`.
    pub engine: String,
    /// Scene name.
    pub scene: String,
    /// Worker threads.
    pub threads: usize,
    /// Physics steps per second of wall time, all episodes together (scene building included).
    pub steps_per_sec: f64,
    /// Episodes run.
    pub episodes: usize,
    /// Steps per episode.
    pub steps_per_episode: usize,
    /// Articulation kind.
    pub articulation: ArticulationKind,
    /// Rapier substeps per step.
    pub solver_iterations: usize,
    /// PGS sweeps per substep.
    pub pgs_iterations: usize,
    /// Stabilization sweeps per substep.
    pub stabilization_iterations: usize,
    /// Wall time of the timed part, s.
    pub wall_s: f64,
    /// Every joint position and body velocity stayed finite.
    pub all_finite: bool,
    /// Largest body linear speed seen in any episode, m/s.
    pub max_linvel_m_per_s: f32,
    /// Largest body angular speed seen in any episode, rad/s.
    pub max_angvel_rad_per_s: f32,
    /// Largest final |q| of an arm hinge over the episodes (rad): targets are within ±0.5.
    pub max_abs_arm_q_rad: f32,
}

/// Per-episode health.
#[derive(Debug, Clone, Copy)]
struct EpisodeStats {
    finite: bool,
    max_linvel: f32,
    max_angvel: f32,
    max_abs_arm_q: f32,
}

fn run_episode(cfg: &PhysicsBenchConfig, episode: usize) -> Result<EpisodeStats> {
    let model = cfg.anchor.model();
    let mut scene = AnchorScene::new(model, cfg.articulation, &cfg.scene)?;
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed.wrapping_add(episode as u64));
    let a = cfg.target_amplitude;
    let mut stats = EpisodeStats {
        finite: true,
        max_linvel: 0.0,
        max_angvel: 0.0,
        max_abs_arm_q: 0.0,
    };
    let mut targets = vec![0.0f32; model.num_joints()];
    for _ in 0..cfg.steps_per_episode {
        for t in targets.iter_mut() {
            *t = rng.gen_range(-a..=a);
        }
        scene.set_targets(&targets);
        scene.step();
        let (lin, ang) = scene.max_speeds();
        if !(lin.is_finite() && ang.is_finite()) {
            stats.finite = false;
            break;
        }
        stats.max_linvel = stats.max_linvel.max(lin);
        stats.max_angvel = stats.max_angvel.max(ang);
    }
    let q = scene.joint_positions();
    stats.finite &= q.iter().all(|x| x.is_finite());
    stats.max_abs_arm_q = q
        .iter()
        .take(model.arm_dofs)
        .fold(0.0f32, |m, x| m.max(x.abs()));
    Ok(stats)
}

/// Runs `episodes × steps_per_episode` steps on `threads` threads and times them.
pub fn run_physics_bench(cfg: &PhysicsBenchConfig) -> Result<PhysicsBench> {
    cfg.scene.validate()?;
    if cfg.threads == 0 {
        return Err(SimError::config(
            "anchor bench threads",
            "0: at least one thread",
        ));
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(cfg.threads)
        .build()
        .map_err(|e| {
            SimError::config(
                "anchor bench threads",
                format!("rayon pool of {}: {e}", cfg.threads),
            )
        })?;

    // Warm-up (page faults, allocator, caches), untimed: one short episode per thread.
    let warm = PhysicsBenchConfig {
        steps_per_episode: 10,
        ..*cfg
    };
    pool.install(|| {
        (0..cfg.threads)
            .into_par_iter()
            .try_for_each(|e| run_episode(&warm, e).map(|_| ()))
    })?;

    let start = Instant::now();
    let stats: Vec<EpisodeStats> = pool.install(|| {
        (0..cfg.episodes)
            .into_par_iter()
            .with_max_len(1)
            .map(|e| run_episode(cfg, e))
            .collect::<Result<_, _>>()
    })?;
    let wall_s = start.elapsed().as_secs_f64();
    let steps = (cfg.episodes * cfg.steps_per_episode) as f64;

    Ok(PhysicsBench {
        engine: "coevolve-rapier".into(),
        scene: cfg.anchor.name().into(),
        threads: cfg.threads,
        steps_per_sec: if wall_s > 0.0 { steps / wall_s } else { 0.0 },
        episodes: cfg.episodes,
        steps_per_episode: cfg.steps_per_episode,
        articulation: cfg.articulation,
        solver_iterations: cfg.scene.solver_iterations,
        pgs_iterations: cfg.scene.pgs_iterations,
        stabilization_iterations: cfg.scene.stabilization_iterations,
        wall_s,
        all_finite: stats.iter().all(|s| s.finite),
        max_linvel_m_per_s: stats.iter().map(|s| s.max_linvel).fold(0.0, f32::max),
        max_angvel_rad_per_s: stats.iter().map(|s| s.max_angvel).fold(0.0, f32::max),
        max_abs_arm_q_rad: stats.iter().map(|s| s.max_abs_arm_q).fold(0.0, f32::max),
    })
}
