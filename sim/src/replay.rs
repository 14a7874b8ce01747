//! Episode replay into a [rerun](https://rerun.io) recording: a recorded [`Episode`] from the
//! episode store (`store`) becomes an `.rrd` file (`coevolve replay --spawn` opens it in a
//! viewer) with the robot's URDF visual geometry posed by forward kinematics from the recorded
//! joint positions, the task's props (table, pedestal, objects, zones), the camera images the
//! steps recorded, the end-effector path (raw against refined when both are given), per-step
//! scalars (reward terms, joint positions, joint jerk, contact forces), the instruction and the
//! outcome, on a `sim_time` timeline in simulated seconds (and a `step` sequence).
//!
//! Nothing is re-simulated: every pose comes from the recorded
//! [`PhysicsState`](crate::state::PhysicsState)s, so a replay shows exactly what was stored.
//! Not here: the `coevolve replay` argument handling (the CLI).
//!
//! Entity layout (paths are stable; tests and blueprints rely on them):
//!
//! | entity | content |
//! |---|---|
//! | `world` | view coordinates (right-handed, z up) |
//! | `world/table`, `world/pedestal` | static boxes / cylinder |
//! | `world/zones/<zone>` | static flat boxes |
//! | `world/objects/<object>` | per-step `Transform3D`; `…/part_<k>` static shapes |
//! | `world/robot/<link>` | per-step `Transform3D` (`world_from_link`); `…/visual_<k>` static URDF visuals |
//! | `world/ee` | per-step `Transform3D` (`world_from_ee`) and axes; `…/tool/*` the spatula |
//! | `world/ee_path/<raw\|refined>` | static line strips of the TCP path |
//! | `world/cameras/<camera>` | pinhole + pose; `…/rgb`, `…/depth`, `…/segmentation` images |
//! | `world/outcome` | a green (success) or red (failure) marker at the goal object at the end |
//! | `plots/reward/<term>` | every [`RewardTerms`](crate::reward::RewardTerms) field |
//! | `plots/joints/q_rad/<joint>`, `plots/joints/jerk_rad_s3/<joint>`, `plots/gripper/opening` | joint state |
//! | `plots/contacts/object_peak_force_n/<object>`, `plots/contacts/robot_env_force_n` | contact forces (N) |
//! | `instruction` | static markdown: task, instruction, outcome, raw vs refined metrics |
//! | `log` | text log: start, success or failure |

mod scene;
mod shapes;
mod source;
mod timeline;

use std::path::Path;

use robots::Manipulator;

use crate::config::SimConfig;
use crate::episode::Episode;
use crate::error::{Result, SimError};

pub use source::{
    load_input, resolve_inputs, select_episode, EpisodeSet, InputRole, ReplayInputs, Selection,
    RAW_DIRS, REFINED_DIRS,
};
pub use timeline::{joint_jerk, joint_vector, reward_terms};

/// The rerun application id of replays.
pub const APPLICATION_ID: &str = "coevolve_replay";

/// Name of the simulated-time timeline (seconds).
pub const TIMELINE: &str = "sim_time";

/// What to replay: one episode, drawn in full, and optionally the same source episode in another
/// form (its raw or refined counterpart), whose TCP path is drawn next to it.
#[derive(Clone, Copy, Debug)]
pub struct ReplayRequest<'a> {
    pub robot: &'a Manipulator,
    /// The configuration the episode ran under (control rate, cameras).
    pub config: &'a SimConfig,
    pub episode: &'a Episode,
    /// `raw` or `refined`: names the episode's TCP path entity.
    pub label: &'a str,
    /// The counterpart (label, episode): same task name and seed.
    pub companion: Option<(&'a str, &'a Episode)>,
}

impl ReplayRequest<'_> {
    /// Checks that the recorded states fit the robot (joint counts) before anything is logged.
    pub fn validate(&self) -> Result<()> {
        let arm = self.robot.arm_joints.len();
        let mut episodes = vec![(self.label, self.episode)];
        episodes.extend(self.companion);
        for (label, e) in episodes {
            let states = std::iter::once(&e.initial_state).chain(e.steps.iter().map(|s| &s.state));
            for (i, state) in states.enumerate() {
                if state.q_rad.len() != arm {
                    return Err(SimError::Replay {
                        context: format!("{label} episode {} (task `{}`)", e.index, e.task.name),
                        problem: format!(
                            "state {i} has {} arm joint positions, robot `{}` has {arm} arm joints \
                             (wrong --robot?)",
                            state.q_rad.len(),
                            self.robot.model.name
                        ),
                    });
                }
            }
        }
        Ok(())
    }

    /// Problems worth a warning that do not stop the replay (a different robot model hash).
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut episodes = vec![(self.label, self.episode)];
        episodes.extend(self.companion);
        for (label, e) in episodes {
            if e.robot_model_hash != self.robot.model.model_hash {
                out.push(format!(
                    "{label} episode {} was recorded with robot model hash {}, replaying with `{}` \
                     (hash {}): links may not match",
                    e.index,
                    short_hash(&e.robot_model_hash),
                    self.robot.model.name,
                    short_hash(&self.robot.model.model_hash)
                ));
            }
        }
        out
    }
}

fn short_hash(hash: &str) -> &str {
    hash.get(..12).unwrap_or(hash)
}

/// What a replay logged.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplaySummary {
    /// Recorded states on the timeline (the initial state and one per control step).
    pub states: usize,
    /// Robot links drawn.
    pub links: usize,
    /// Camera frames logged (each as RGB, depth and segmentation).
    pub camera_frames: usize,
    /// What was not drawn and why (unreadable meshes, malformed images, another robot model).
    pub warnings: Vec<String>,
}

/// Logs the whole replay into `rec` (static scene first, then every step on the timeline).
pub fn log_episode(
    rec: &rerun::RecordingStream,
    request: &ReplayRequest<'_>,
) -> Result<ReplaySummary> {
    log_episode_under(rec, request, &[])
}

/// [`log_episode`] with every entity path under `prefix` (several episodes in one recording,
/// e.g. a training run's live view).
pub fn log_episode_under(
    rec: &rerun::RecordingStream,
    request: &ReplayRequest<'_>,
    prefix: &[&str],
) -> Result<ReplaySummary> {
    request.validate()?;
    let log = Log {
        rec,
        prefix: Entity::new(prefix),
    };
    let mut warnings = request.warnings();
    warnings.extend(scene::log_static(&log, request)?);
    let step_warnings = timeline::log_steps(&log, request)?;
    let e = request.episode;
    let camera_frames = e
        .steps
        .iter()
        .map(|s| s.images.len())
        .sum::<usize>()
        .saturating_sub(step_warnings.len());
    warnings.extend(step_warnings);
    Ok(ReplaySummary {
        states: e.steps.len() + 1,
        links: scene::drawn_links(request.robot, &e.task).len(),
        camera_frames,
        warnings,
    })
}

/// Writes the replay to an `.rrd` file (no viewer), flushing it completely before returning.
pub fn save_rrd(path: &Path, request: &ReplayRequest<'_>) -> Result<ReplaySummary> {
    request.validate()?;
    let context = || format!("cannot write rerun recording `{}`", path.display());
    let rec = rerun::RecordingStreamBuilder::new(APPLICATION_ID)
        .save(path)
        .map_err(|e| rerun_error(context(), e))?;
    let summary = log_episode(&rec, request)?;
    rec.flush_blocking()
        .map_err(|e| rerun_error(context(), e))?;
    Ok(summary)
}

fn rerun_error(context: String, e: impl std::error::Error + Send + Sync + 'static) -> SimError {
    SimError::Rerun {
        context,
        source: Box::new(e),
    }
}

/// A thin logging handle that turns rerun errors into [`SimError::Rerun`] naming the entity,
/// logging every entity under `prefix`.
struct Log<'a> {
    rec: &'a rerun::RecordingStream,
    prefix: Entity,
}

impl Log<'_> {
    fn full(&self, path: &Entity) -> rerun::EntityPath {
        self.prefix.path.join(&path.path)
    }

    /// Logs `value` at `path` at the current time.
    fn at(&self, path: &Entity, value: &impl rerun::AsComponents) -> Result<()> {
        let full = self.full(path);
        self.rec
            .log(full.clone(), value)
            .map_err(|e| rerun_error(format!("logging `{full}`"), e))
    }

    /// Logs `value` at `path` once for the whole recording.
    fn fixed(&self, path: &Entity, value: &impl rerun::AsComponents) -> Result<()> {
        let full = self.full(path);
        self.rec
            .log_static(full.clone(), value)
            .map_err(|e| rerun_error(format!("logging `{full}`"), e))
    }

    /// Moves the timelines to control step `step` at `time_s` simulated seconds.
    fn set_time(&self, step: usize, time_s: f64) {
        self.rec.set_duration_secs(TIMELINE, time_s);
        self.rec.set_time_sequence("step", step as i64);
    }
}

/// An entity path built from unescaped parts (names from URDFs and tasks may hold any
/// character).
#[derive(Clone, Debug)]
struct Entity {
    path: rerun::EntityPath,
}

impl Entity {
    fn new(parts: &[&str]) -> Self {
        Entity {
            path: rerun::EntityPath::new(
                parts
                    .iter()
                    .map(|p| rerun::EntityPathPart::new(*p))
                    .collect(),
            ),
        }
    }

    fn child(&self, part: &str) -> Self {
        let mut parts: Vec<rerun::EntityPathPart> = self.path.iter().cloned().collect();
        parts.push(rerun::EntityPathPart::new(part));
        Entity {
            path: rerun::EntityPath::new(parts),
        }
    }
}

#[cfg(test)]
mod tests;
