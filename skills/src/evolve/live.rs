//! A live view of a running loop in rerun (`coevolve evolve --rerun save FILE | spawn |
//! connect URL`): after every generation, on a `generation` timeline, the held-out and fresh
//! success per skill, pool sizes, episodes, throughput and phase times, a log line, and a few
//! of the generation's episodes (a golden demonstration and a failed policy rollout per skill
//! that had them) drawn as `coevolve replay` draws them, under `episodes/gen-NNN/<skill>/…`.
//!
//! Entities: `curves/heldout/<skill>`, `curves/fresh/<skill>`, `curves/sampled/<skill>`,
//! `pool/golden/<skill>`, `pool/broken/<skill>`, `run/episodes_simulated`,
//! `run/sim_steps_per_s`, `run/phase_s/<phase>`, `run/mastered`, `log`,
//! `episodes/gen-NNN/<skill>/<golden|failure>/world/…`.

use std::path::{Path, PathBuf};

use rerun::{RecordingStream, RecordingStreamBuilder};

use super::run_dir::generation_name;
use super::state::GenerationRecord;
use super::Context;
use crate::error::{Result, SkillsError};

/// The rerun application id of live views.
pub const APPLICATION_ID: &str = "coevolve_evolve";

/// Where the live view goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LiveTarget {
    /// An `.rrd` file, flushed after every generation.
    Save(PathBuf),
    /// A rerun viewer started from PATH (or one already listening on the default port).
    Spawn,
    /// A running viewer or server, e.g. `rerun+http://127.0.0.1:9876/proxy`.
    Connect(String),
}

impl LiveTarget {
    /// `["save", FILE]`, `["spawn"]` or `["connect", URL]` (URL defaults to the local viewer).
    pub fn parse(words: &[String]) -> std::result::Result<Self, String> {
        match words {
            [mode, file] if mode == "save" => Ok(LiveTarget::Save(PathBuf::from(file))),
            [mode] if mode == "spawn" => Ok(LiveTarget::Spawn),
            [mode] if mode == "connect" => Ok(LiveTarget::Connect(
                "rerun+http://127.0.0.1:9876/proxy".to_owned(),
            )),
            [mode, url] if mode == "connect" => Ok(LiveTarget::Connect(url.clone())),
            _ => Err(format!(
                "--rerun {}: expected `save FILE`, `spawn` or `connect [URL]`",
                words.join(" ")
            )),
        }
    }
}

/// The live recording of one run.
#[derive(Debug)]
pub struct LiveView {
    rec: RecordingStream,
    what: String,
}

fn rerun_error(what: &str, e: impl std::fmt::Display) -> SkillsError {
    SkillsError::Run {
        path: PathBuf::from(what),
        problem: format!("rerun live view: {e}"),
    }
}

impl LiveView {
    pub fn open(target: &LiveTarget) -> Result<LiveView> {
        let builder = RecordingStreamBuilder::new(APPLICATION_ID);
        let (rec, what) = match target {
            LiveTarget::Save(path) => (builder.save(path), path.display().to_string()),
            LiveTarget::Spawn => (builder.spawn(), "spawned viewer".to_owned()),
            LiveTarget::Connect(url) => (builder.connect_grpc_opts(url.clone()), url.clone()),
        };
        let rec = rec.map_err(|e| rerun_error(&what, e))?;
        Ok(LiveView { rec, what })
    }

    fn scalar(&self, path: &str, value: f64) -> Result<()> {
        self.rec
            .log(path, &rerun::Scalars::single(value))
            .map_err(|e| rerun_error(&self.what, e))
    }

    /// Logs one generation's figures and episodes, then flushes.
    pub fn log_generation(&self, ctx: &Context, r: &GenerationRecord) -> Result<()> {
        // Episodes move the `sim_time` and `step` timelines; figures sit on `generation` only.
        self.rec.reset_time();
        self.rec
            .set_time_sequence("generation", r.generation as i64);
        for (skill, s) in &r.skills {
            let curves = [
                ("curves/heldout", s.heldout_success),
                ("curves/fresh", s.fresh_success),
                ("curves/sampled", s.policy_sampled_success),
            ];
            for (prefix, value) in curves {
                if let Some(v) = value {
                    self.scalar(&format!("{prefix}/{skill}"), v)?;
                }
            }
            self.scalar(&format!("pool/golden/{skill}"), s.golden_total as f64)?;
            self.scalar(&format!("pool/broken/{skill}"), s.broken as f64)?;
        }
        self.scalar("run/episodes_simulated", r.episodes_simulated as f64)?;
        self.scalar("run/sim_steps_per_s", r.sim_steps_per_sec)?;
        self.scalar("run/mastered", r.mastered.len() as f64)?;
        let train_s = r.train.as_ref().map_or(0.0, |t| t.wall_s);
        for (phase, s) in [
            ("explore", r.explore_s),
            ("train", train_s),
            ("evaluate", r.evaluate_s),
            ("synthesis", r.synthesis_s),
            ("total", r.wall_s),
        ] {
            self.scalar(&format!("run/phase_s/{phase}"), s)?;
        }
        let line = format!(
            "generation {}: {}; frontier [{}], mastered [{}]",
            r.generation,
            r.outcome(),
            r.frontier.join(", "),
            r.mastered.join(", ")
        );
        self.rec
            .log("log", &rerun::TextLog::new(line))
            .map_err(|e| rerun_error(&self.what, e))?;
        for skill in r.skills.keys() {
            self.log_episodes(ctx, r.generation, skill)?;
        }
        self.rec
            .flush_blocking()
            .map_err(|e| rerun_error(&self.what, e))
    }

    /// The generation's first golden episode and first failed rollout of `skill`, if any.
    fn log_episodes(&self, ctx: &Context, generation: usize, skill: &str) -> Result<()> {
        let sources = [
            ("golden", ctx.dir.golden(generation, skill)),
            ("failure", ctx.dir.failures(generation, skill)),
        ];
        for (label, dir) in sources {
            let Some((file, episode)) = first_episode(&dir)? else {
                continue;
            };
            let request = sim::replay::ReplayRequest {
                robot: &ctx.robot,
                config: &file.header.sim_config,
                episode: &episode,
                label,
                companion: None,
            };
            let gen = generation_name(generation);
            sim::replay::log_episode_under(&self.rec, &request, &["episodes", &gen, skill, label])?;
        }
        Ok(())
    }
}

fn first_episode(dir: &Path) -> Result<Option<(sim::store::EpisodeFile, sim::Episode)>> {
    if !dir.is_dir() {
        return Ok(None);
    }
    let scan = sim::store::read_dir(dir)?;
    let Some(file) = scan.files.into_iter().next() else {
        return Ok(None);
    };
    let episode = file.episodes.first().cloned();
    Ok(episode.map(|e| (file, e)))
}
