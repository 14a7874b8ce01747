//! The side-by-side report with MuJoCo behind `coevolve bench physics`, per anchor scene: our
//! throughput at 1 and N threads, MuJoCo's (`shared/anchors/mujoco_bench.py`, run through the
//! project venv) in the same run, and both engines' fidelity probes.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};

use crate::error::Result;

use super::{
    fidelity, run_physics_bench, Anchor, AnchorConfig, ArticulationKind, Fidelity, PhysicsBench,
    PhysicsBenchConfig,
};

/// What [`physics_report_with`] runs.
#[derive(Debug, Clone, PartialEq)]
pub struct PhysicsReportConfig {
    /// Scene. Default [`Anchor::ArmCube`].
    pub anchor: Anchor,
    /// Threads of the parallel run (the other run uses 1).
    pub threads: usize,
    /// Also run MuJoCo (needs the venv from `scripts/python-env.sh`, created if missing).
    pub with_mujoco: bool,
    /// Articulation kind. Default [`ArticulationKind::default`].
    pub articulation: ArticulationKind,
    /// Solver settings. Default [`AnchorConfig::default`].
    pub scene: AnchorConfig,
    /// Repository root (holds `.venv`, `scripts/`, `benches/`). Default: `$COEVOLVE_ROOT`, else
    /// the workspace this crate was built in.
    pub repo_root: PathBuf,
    /// Folder with `mujoco_arm_cube.xml` and `mujoco_bench.py`. Default:
    /// `$COEVOLVE_ANCHORS_DIR`, else the first of `<root>/benches/anchors` (a vendored copy),
    /// `<root>/shared/anchors`, `<root>/../shared/anchors` that exists. A scene file missing
    /// there is taken from `<root>/benches/anchors` (the panda-cube scene is ours).
    pub anchors_dir: Option<PathBuf>,
}

impl PhysicsReportConfig {
    /// Defaults for `threads` threads.
    pub fn new(threads: usize, with_mujoco: bool) -> Self {
        let repo_root = std::env::var_os("COEVOLVE_ROOT")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                Path::new(env!("CARGO_MANIFEST_DIR"))
                    .parent()
                    .map(Path::to_path_buf)
                    .unwrap_or_default()
            });
        let anchors_dir = std::env::var_os("COEVOLVE_ANCHORS_DIR")
            .map(PathBuf::from)
            .or_else(|| {
                [
                    repo_root.join("benches/anchors"),
                    repo_root.join("shared/anchors"),
                    repo_root.join("../shared/anchors"),
                ]
                .into_iter()
                .find(|d| d.join("mujoco_arm_cube.xml").is_file())
            });
        Self {
            anchor: Anchor::default(),
            threads,
            with_mujoco,
            articulation: ArticulationKind::default(),
            scene: AnchorConfig::default(),
            repo_root,
            anchors_dir,
        }
    }
}

/// Output of `mujoco_bench.py --json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MujocoBench {
    /// `"mujoco"`.
    pub engine: String,
    /// MuJoCo version.
    pub version: String,
    /// Rollout threads.
    pub threads: usize,
    /// Steps per second.
    pub steps_per_sec: f64,
    /// Episodes.
    pub episodes: usize,
    /// Steps per episode.
    pub steps_per_episode: usize,
}

/// Both engines' fidelity probes: ours flattened, MuJoCo's under `mujoco`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FidelityReport {
    /// Ours.
    #[serde(flatten)]
    pub ours: Fidelity,
    /// MuJoCo's, when it ran.
    pub mujoco: Option<Fidelity>,
}

/// The physics bench report (`coevolve bench physics --json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhysicsReport {
    /// Always `"physics"`.
    pub bench: String,
    /// Anchor scene (`arm-cube`, `panda-cube`).
    pub scene: String,
    /// Articulation kind.
    pub articulation: ArticulationKind,
    /// Threads of the parallel run.
    pub threads: usize,
    /// Our steps/s on 1 thread.
    pub steps_per_sec_1t: f64,
    /// Our steps/s on `threads` threads.
    pub steps_per_sec: f64,
    /// `steps_per_sec / steps_per_sec_1t`.
    pub scaling: f64,
    /// MuJoCo's steps/s on 1 thread (same run).
    pub mujoco_steps_per_sec_1t: Option<f64>,
    /// MuJoCo's steps/s on `threads` threads (same run).
    pub mujoco_steps_per_sec: Option<f64>,
    /// `steps_per_sec_1t / mujoco_steps_per_sec_1t`.
    pub ratio_1t: Option<f64>,
    /// `steps_per_sec / mujoco_steps_per_sec`.
    pub ratio: Option<f64>,
    /// MuJoCo's version.
    pub mujoco_version: Option<String>,
    /// Why the MuJoCo fields are null, when they are.
    pub note: Option<String>,
    /// Our bench runs (solver settings, health).
    pub rapier_1t: PhysicsBench,
    /// Our parallel run.
    pub rapier: PhysicsBench,
    /// Fidelity probes, ours and MuJoCo's.
    pub fidelity: FidelityReport,
}

/// [`physics_report_with`] with the default articulation and solver settings.
pub fn physics_report(threads: usize, with_mujoco: bool) -> Result<PhysicsReport> {
    physics_report_with(&PhysicsReportConfig::new(threads, with_mujoco))
}

/// Runs our bench at 1 and `threads` threads, MuJoCo's at the same counts (interleaved, so a
/// noisy machine hits both alike), and both fidelity probes. MuJoCo failures do not fail the
/// report: its fields are null and `note` says why.
pub fn physics_report_with(cfg: &PhysicsReportConfig) -> Result<PhysicsReport> {
    let bench_cfg = |threads| PhysicsBenchConfig {
        anchor: cfg.anchor,
        articulation: cfg.articulation,
        scene: cfg.scene,
        threads,
        ..PhysicsBenchConfig::default()
    };
    let mut mujoco = MujocoSide {
        runner: cfg.with_mujoco.then(|| MujocoRunner::new(cfg)),
        note: None,
    };

    let rapier_1t = run_physics_bench(&bench_cfg(1))?;
    let mj_1t = mujoco.run(|r| r.bench(1));
    let rapier = run_physics_bench(&bench_cfg(cfg.threads))?;
    let mj = mujoco.run(|r| r.bench(cfg.threads));
    let mj_fidelity = mujoco.run(MujocoRunner::fidelity);
    let note = if cfg.with_mujoco {
        mujoco.note
    } else {
        Some("mujoco not run (with_mujoco = false)".into())
    };
    let ours = fidelity(cfg.anchor.model(), cfg.articulation, &cfg.scene)?;
    let ratio = |ours: f64, theirs: Option<&MujocoBench>| theirs.map(|m| ours / m.steps_per_sec);
    Ok(PhysicsReport {
        bench: "physics".into(),
        scene: cfg.anchor.name().into(),
        articulation: cfg.articulation,
        threads: cfg.threads,
        steps_per_sec_1t: rapier_1t.steps_per_sec,
        steps_per_sec: rapier.steps_per_sec,
        scaling: rapier.steps_per_sec / rapier_1t.steps_per_sec,
        mujoco_steps_per_sec_1t: mj_1t.as_ref().map(|m| m.steps_per_sec),
        mujoco_steps_per_sec: mj.as_ref().map(|m| m.steps_per_sec),
        ratio_1t: ratio(rapier_1t.steps_per_sec, mj_1t.as_ref()),
        ratio: ratio(rapier.steps_per_sec, mj.as_ref()),
        mujoco_version: mj_1t.as_ref().or(mj.as_ref()).map(|m| m.version.clone()),
        note,
        rapier_1t,
        rapier,
        fidelity: FidelityReport {
            ours,
            mujoco: mj_fidelity,
        },
    })
}

type MjResult<T> = std::result::Result<T, MujocoError>;

/// The MuJoCo side of a report: its runner (if asked for) and the first failure.
struct MujocoSide {
    runner: Option<MjResult<MujocoRunner>>,
    note: Option<String>,
}

impl MujocoSide {
    /// Runs `f` if MuJoCo is available; a failure becomes the note (the first one wins).
    fn run<T>(&mut self, f: impl FnOnce(&MujocoRunner) -> MjResult<T>) -> Option<T> {
        let result = match self.runner.as_ref()? {
            Ok(runner) => f(runner),
            Err(e) => Err(e.clone()),
        };
        result
            .map_err(|e| self.note.get_or_insert(e.to_string()))
            .ok()
    }
}

/// A located python with mujoco, and the anchor files.
#[derive(Debug, Clone)]
struct MujocoRunner {
    python: PathBuf,
    elbow: &'static str,
    scene_xml: PathBuf,
    bench_py: PathBuf,
    fidelity_py: PathBuf,
}

/// Cloneable error text for the MuJoCo side (so one failure can be reported for every field).
#[derive(Debug, Clone)]
struct MujocoError(String);

impl std::fmt::Display for MujocoError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "sim: mujoco anchor: {}", self.0)
    }
}

impl MujocoRunner {
    fn new(cfg: &PhysicsReportConfig) -> MjResult<Self> {
        let anchors = cfg.anchors_dir.clone().ok_or_else(|| {
            MujocoError(
                "no anchors folder with mujoco_arm_cube.xml (set COEVOLVE_ANCHORS_DIR or put \
                 shared/anchors beside the repository)"
                    .into(),
            )
        })?;
        let python = ensure_venv(&cfg.repo_root)?;
        let model = cfg.anchor.model();
        let scene_xml = [&anchors, &cfg.repo_root.join("benches/anchors")]
            .into_iter()
            .map(|d| d.join(model.mjcf_file))
            .find(|p| p.is_file())
            .ok_or_else(|| {
                MujocoError(format!(
                    "no {} in {} or <root>/benches/anchors",
                    model.mjcf_file,
                    anchors.display()
                ))
            })?;
        Ok(Self {
            python,
            elbow: model.joints.get(model.elbow).map_or("j3", |j| j.name),
            scene_xml,
            bench_py: anchors.join("mujoco_bench.py"),
            fidelity_py: cfg.repo_root.join("benches/mujoco_fidelity.py"),
        })
    }

    fn run_json<T: serde::de::DeserializeOwned>(&self, args: &[&std::ffi::OsStr]) -> MjResult<T> {
        let out = Command::new(&self.python)
            .args(args)
            .output()
            .map_err(|e| MujocoError(format!("could not run {}: {e}", self.python.display())))?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() {
            return Err(MujocoError(format!(
                "{} {:?} failed ({}): {}",
                self.python.display(),
                args,
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        let line = stdout
            .lines()
            .rev()
            .find(|l| l.trim_start().starts_with('{'))
            .unwrap_or("");
        serde_json::from_str(line)
            .map_err(|e| MujocoError(format!("unexpected output of {:?}: {e}: {stdout}", args)))
    }

    fn bench(&self, threads: usize) -> MjResult<MujocoBench> {
        let threads = threads.to_string();
        self.run_json(&[
            self.bench_py.as_os_str(),
            self.scene_xml.as_os_str(),
            threads.as_ref(),
            "--json".as_ref(),
        ])
    }

    fn fidelity(&self) -> MjResult<Fidelity> {
        self.run_json(&[
            self.fidelity_py.as_os_str(),
            self.scene_xml.as_os_str(),
            "--elbow".as_ref(),
            self.elbow.as_ref(),
        ])
    }
}

/// The venv's python, running `scripts/python-env.sh` first when the venv is missing.
fn ensure_venv(repo_root: &Path) -> MjResult<PathBuf> {
    let python = repo_root.join(".venv/bin/python");
    if python.is_file() {
        return Ok(python);
    }
    let script = repo_root.join("scripts/python-env.sh");
    let out = Command::new("bash")
        .arg(&script)
        .output()
        .map_err(|e| MujocoError(format!("could not run {}: {e}", script.display())))?;
    if !out.status.success() || !python.is_file() {
        return Err(MujocoError(format!(
            "{} failed ({}), no {}: {}",
            script.display(),
            out.status,
            python.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(python)
}
