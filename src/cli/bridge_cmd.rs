//! The bridge commands: `controller` (runs on the robot's computer), `sim-robot` (a simulated
//! arm speaking the same protocol), `deploy` (sign and send a run's policy, wait for the
//! controller's answer), `estop`, and `keys generate`.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};
use bridge::bundle::{self, BundleInfo};
use bridge::controller::{run_controller, ControllerConfig};
use bridge::protocol::{
    DeployMsg, EstopMsg, HeartbeatMsg, PolicyStatusMsg, RobotKeys, WireMessage,
};
use bridge::safety::SafetyConfig;
use bridge::transport::ZenohArgs;
use clap::{Args, Subcommand};
use serde::Deserialize;
use zenoh::Wait;

/// How to reach the zenoh network (every zenoh command takes these).
#[derive(Debug, Args, Clone)]
pub struct NetArgs {
    /// Endpoint to connect to, e.g. tcp/127.0.0.1:7447 (repeatable).
    #[arg(long)]
    pub connect: Vec<String>,
    /// Endpoint to listen on, e.g. tcp/127.0.0.1:7447 (repeatable).
    #[arg(long)]
    pub listen: Vec<String>,
    /// A zenoh JSON5 configuration file (TLS, authentication, scouting); the endpoints above
    /// are added to it. Without it multicast scouting is off.
    #[arg(long)]
    pub zenoh_config: Option<PathBuf>,
    /// zenoh mode: peer (default) or client.
    #[arg(long)]
    pub mode: Option<String>,
}

impl NetArgs {
    fn open(&self) -> anyhow::Result<zenoh::Session> {
        Ok(ZenohArgs {
            connect: self.connect.clone(),
            listen: self.listen.clone(),
            config_file: self.zenoh_config.clone(),
            mode: self.mode.clone(),
        }
        .open()?)
    }
}

#[derive(Debug, Args)]
pub struct ControllerArgs {
    #[arg(long)]
    pub robot_id: String,
    /// Built-in robot name or URDF path.
    #[arg(long, default_value = "ur5e")]
    pub robot: String,
    /// JSON file: {"rate_hz": 100, "safety": {...}, "trusted_keys": ["keys/ops.pub"]}.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// A trusted public key file (repeatable; adds to the config's).
    #[arg(long = "trusted-key")]
    pub trusted_keys: Vec<PathBuf>,
    /// Safety-loop rate (Hz); overrides the config.
    #[arg(long)]
    pub rate_hz: Option<f64>,
    #[arg(long, default_value = "cpu")]
    pub device: String,
    /// Also speak ROS 2 through rmw_zenoh: joint state from --ros2-joint-states, commands to
    /// --ros2-command-topic.
    #[arg(long)]
    pub ros2: bool,
    #[arg(long, default_value_t = 0)]
    pub ros2_domain: u32,
    #[arg(long, default_value = "/joint_states")]
    pub ros2_joint_states: String,
    #[arg(long, default_value = "/joint_trajectory_controller/joint_trajectory")]
    pub ros2_command_topic: String,
    /// trajectory (JointTrajectory) or float64-array (Float64MultiArray).
    #[arg(long, default_value = "trajectory")]
    pub ros2_command: String,
    #[command(flatten)]
    pub net: NetArgs,
}

/// The `--config` file of `coevolve controller`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct ControllerFile {
    rate_hz: Option<f64>,
    safety: SafetyConfig,
    trusted_keys: Vec<PathBuf>,
}

/// Set on SIGINT/SIGTERM: the loops finish their current period and leave the arm holding.
fn stop_flag() -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        let _ = signal_hook::flag::register(sig, stop.clone());
    }
    stop
}

pub fn controller(args: &ControllerArgs) -> anyhow::Result<()> {
    let robot = Arc::new(robots::load_manipulator(&args.robot, None)?);
    let file: ControllerFile = match &args.config {
        Some(p) => {
            let text = std::fs::read_to_string(p).with_context(|| format!("{}", p.display()))?;
            serde_json::from_str(&text).with_context(|| format!("{}", p.display()))?
        }
        None => ControllerFile::default(),
    };
    file.safety
        .validate()
        .with_context(|| "controller config")?;
    let mut trusted = Vec::new();
    for p in file.trusted_keys.iter().chain(&args.trusted_keys) {
        trusted.push(bridge::keys::load_verifying_key(p)?);
    }
    if trusted.is_empty() {
        eprintln!("controller: no trusted keys: every bundle will be rejected");
    }
    let config = ControllerConfig {
        rate_hz: args.rate_hz.or(file.rate_hz).unwrap_or(100.0),
        safety: file.safety,
        trusted_keys: trusted,
        device: policy::device::parse_device(&args.device)?,
        ros2: if args.ros2 {
            Some(bridge::ros2::io::Ros2Config {
                domain_id: args.ros2_domain,
                joint_states_topic: args.ros2_joint_states.clone(),
                command_topic: args.ros2_command_topic.clone(),
                command: bridge::ros2::io::parse_command_kind(&args.ros2_command)?,
                ..Default::default()
            })
        } else {
            None
        },
    };
    let keys = RobotKeys::new(&args.robot_id)?;
    let session = args.net.open()?;
    eprintln!(
        "controller `{}` ({}, {} Hz): listening on coevolve/{}/…",
        args.robot_id, robot.model.name, config.rate_hz, args.robot_id
    );
    run_controller(&session, &keys, robot, config, stop_flag())?;
    let _ = session.close().wait();
    Ok(())
}

#[derive(Debug, Args)]
pub struct SimRobotArgs {
    #[arg(long)]
    pub robot_id: String,
    #[arg(long, default_value = "ur5e")]
    pub robot: String,
    /// Skill tree whose skill's held-out variants the arm runs, in order.
    #[arg(long, default_value = "default")]
    pub tree: String,
    #[arg(long, default_value = "reach")]
    pub skill: String,
    /// Episodes to run, then print the outcome as JSON and exit (default: until stopped).
    #[arg(long)]
    pub episodes: Option<usize>,
    /// Run the skill's default task family with this seed instead of the tree's held-out
    /// variants: the same variants as `coevolve eval --task SKILL --seed SEED`.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Simulated time per wall-clock time (1 = real time).
    #[arg(long, default_value_t = 1.0)]
    pub speed: f64,
    /// Driver rate (Hz): how often the arm takes the newest command and publishes its state
    /// (the physics rate divided by a whole number, a multiple of the control rate).
    #[arg(long, default_value_t = 100.0)]
    pub driver_hz: f64,
    /// Start each episode only once the controller reports a policy driving.
    #[arg(long)]
    pub wait_for_policy: bool,
    /// Render the default front and wrist cameras and publish them on `…/state/camera` at the
    /// policy rate (for rgbd policies).
    #[arg(long)]
    pub cameras: bool,
    #[command(flatten)]
    pub net: NetArgs,
}

pub fn sim_robot(args: &SimRobotArgs) -> anyhow::Result<()> {
    let robot = Arc::new(robots::load_manipulator_for_sim(&args.robot, None)?);
    let tree = skills::SkillTree::named(&args.tree)?.for_robot(&robot);
    let skill = tree
        .get(&args.skill)
        .with_context(|| format!("tree `{}` has no skill `{}`", tree.name, args.skill))?
        .clone();
    let (tasks, seeds) = match args.seed {
        Some(seed) => {
            policy::rollout::task_variants(skill.kind, args.episodes.unwrap_or(100), seed, &robot)
        }
        None => skills::evolve::evaluate::heldout_variants(&skill),
    };
    let mut sim = sim::SimConfig::default();
    if args.cameras {
        sim.cameras = sim::SimConfig::default_cameras();
    }
    let sim = Arc::new(sim);
    let keys = RobotKeys::new(&args.robot_id)?;
    let session = args.net.open()?;
    eprintln!(
        "sim-robot `{}` ({}): {} held-out variants of `{}`",
        args.robot_id,
        robot.model.name,
        tasks.len(),
        args.skill
    );
    let n = tasks.len();
    let task_of = |i: usize| (tasks[i % n].clone(), seeds[i % n]);
    let config = bridge::sim_robot::SimRobotConfig {
        episodes: args.episodes,
        speed: args.speed,
        driver_hz: args.driver_hz,
        wait_for_policy: args.wait_for_policy,
        ..Default::default()
    };
    let outcomes = bridge::sim_robot::run_sim_robot(
        &session,
        &keys,
        robot,
        sim,
        &task_of,
        &config,
        stop_flag(),
    )?;
    let successes = outcomes.iter().filter(|o| o.success).count();
    println!(
        "{}",
        serde_json::json!({
            "skill": args.skill,
            "episodes": outcomes.len(),
            "successes": successes,
            "success_rate": successes as f64 / outcomes.len().max(1) as f64,
            "outcomes": outcomes.iter().map(|o| serde_json::json!({
                "index": o.index, "success": o.success, "steps": o.steps})).collect::<Vec<_>>(),
        })
    );
    let _ = session.close().wait();
    Ok(())
}

#[derive(Debug, Args)]
pub struct DeployArgs {
    /// The run directory whose current policy is deployed.
    #[arg(
        long,
        required_unless_present = "checkpoint",
        conflicts_with = "checkpoint"
    )]
    pub run: Option<PathBuf>,
    /// Or a checkpoint directory (`coevolve train --out`).
    #[arg(long)]
    pub checkpoint: Option<PathBuf>,
    #[arg(long)]
    pub skill: String,
    #[arg(long)]
    pub robot_id: String,
    /// The signing key (`coevolve keys generate`).
    #[arg(long)]
    pub key: PathBuf,
    /// Safety limits to ship with the bundle (JSON); the controller enforces the tighter.
    #[arg(long)]
    pub safety: Option<PathBuf>,
    /// How long to wait for the controller's answer (s).
    #[arg(long, default_value_t = 30.0)]
    pub timeout_s: f64,
    /// After an accepted deploy, keep sending heartbeats and printing status for this long (s).
    #[arg(long, default_value_t = 0.0)]
    pub supervise_s: f64,
    #[command(flatten)]
    pub net: NetArgs,
}

pub fn deploy(args: &DeployArgs) -> anyhow::Result<()> {
    let (checkpoint, source, heldout_success) = match (&args.run, &args.checkpoint) {
        (Some(run_path), _) => {
            let run = skills::evolve::run_dir::RunDir::new(run_path);
            let state = run.read_state()?;
            let Some(checkpoint) = &state.checkpoint else {
                bail!("{}: the run has no accepted policy yet", run_path.display());
            };
            let Some(skill) = state.skills.get(&args.skill) else {
                bail!(
                    "{}: the run has no skill `{}` (it has {})",
                    run_path.display(),
                    args.skill,
                    state.skills.keys().cloned().collect::<Vec<_>>().join(", ")
                );
            };
            if !skill.trained {
                bail!(
                    "{}: the policy was never trained on `{}`",
                    run_path.display(),
                    args.skill
                );
            }
            (
                run_path.join(checkpoint),
                format!("{} ({checkpoint})", run_path.display()),
                skill.heldout.last().map(|(_, s)| *s),
            )
        }
        (None, Some(dir)) => (dir.clone(), dir.display().to_string(), None),
        (None, None) => bail!("give --run or --checkpoint"),
    };
    let safety: SafetyConfig = match &args.safety {
        Some(p) => {
            let text = std::fs::read_to_string(p).with_context(|| format!("{}", p.display()))?;
            serde_json::from_str(&text).with_context(|| format!("{}", p.display()))?
        }
        None => SafetyConfig::default(),
    };
    let key = bridge::keys::load_signing_key(&args.key)?;
    let info = BundleInfo {
        skill: args.skill.clone(),
        source,
        heldout_success,
        safety,
    };
    let bytes = bundle::build(&checkpoint, &info, Some(&key))?;
    let hash = bundle::Bundle::parse(&bytes)?.content_hash;
    eprintln!(
        "deploy: bundle {hash} ({} bytes) to `{}`",
        bytes.len(),
        args.robot_id
    );
    deploy_bytes(
        &args.net,
        &args.robot_id,
        bytes,
        args.timeout_s,
        args.supervise_s,
    )
}

/// Sends a bundle, waits for the answer to it, prints it; then optionally supervises.
pub fn deploy_bytes(
    net: &NetArgs,
    robot_id: &str,
    bundle: Vec<u8>,
    timeout_s: f64,
    supervise_s: f64,
) -> anyhow::Result<()> {
    let keys = RobotKeys::new(robot_id)?;
    let session = net.open()?;
    let status = session
        .declare_subscriber(keys.policy_status())
        .wait()
        .map_err(bridge::BridgeError::zenoh)?;
    let heartbeat = session
        .declare_publisher(keys.heartbeat())
        .wait()
        .map_err(bridge::BridgeError::zenoh)?;
    let request_id = bridge::transport::unix_ns() | 1;
    let msg = DeployMsg { request_id, bundle }.encode();
    let start = Instant::now();
    let mut last_send = None::<Instant>;
    let answer = loop {
        // Resend until answered: the controller may not be subscribed yet.
        if last_send.is_none_or(|t| t.elapsed() > Duration::from_secs(2)) {
            session
                .put(keys.policy_deploy(), msg.clone())
                .wait()
                .map_err(bridge::BridgeError::zenoh)?;
            last_send = Some(Instant::now());
        }
        if start.elapsed().as_secs_f64() > timeout_s {
            bail!("no answer from controller `{robot_id}` within {timeout_s} s");
        }
        if let Ok(Some(sample)) = status.recv_timeout(Duration::from_millis(100)) {
            if let Ok(s) = PolicyStatusMsg::decode(&sample.payload().to_bytes()) {
                if s.request_id == request_id {
                    break s;
                }
            }
        }
    };
    print_status(&answer);
    if !answer.accepted {
        bail!(
            "controller `{robot_id}` rejected the bundle: {}",
            answer.detail
        );
    }
    let until = Instant::now() + Duration::from_secs_f64(supervise_s.max(0.0));
    let mut seq = 0;
    while Instant::now() < until {
        seq += 1;
        let hb = HeartbeatMsg {
            seq,
            stamp_ns: bridge::transport::unix_ns(),
            sender: "coevolve deploy".into(),
        };
        heartbeat
            .put(hb.encode())
            .wait()
            .map_err(bridge::BridgeError::zenoh)?;
        if let Ok(Some(sample)) = status.recv_timeout(Duration::from_millis(100)) {
            if let Ok(s) = PolicyStatusMsg::decode(&sample.payload().to_bytes()) {
                if s.request_id == 0 && seq % 20 == 0 {
                    print_status(&s);
                }
            }
        }
    }
    let _ = session.close().wait();
    Ok(())
}

/// The latency histogram as `{"≤50": n, …, ">5000": n}` (µs).
fn histogram_json(counts: &[u32]) -> serde_json::Value {
    let edges = bridge::controller::LATENCY_BUCKETS_US;
    let mut map = serde_json::Map::new();
    for (i, count) in counts.iter().enumerate() {
        let name = match (edges.get(i), edges.last()) {
            (Some(edge), _) => format!("<={edge}"),
            (None, Some(last)) => format!(">{last}"),
            (None, None) => "all".to_owned(),
        };
        map.insert(name, (*count).into());
    }
    map.into()
}

fn print_status(s: &PolicyStatusMsg) {
    println!(
        "{}",
        serde_json::json!({
            "accepted": s.accepted,
            "mode": s.mode.name(),
            "skill": s.skill,
            "active_bundle": s.active_bundle,
            "detail": s.detail,
            "ticks": s.ticks,
            "loop_p50_us": s.loop_p50_us,
            "loop_p99_us": s.loop_p99_us,
            "loop_max_us": s.loop_max_us,
            "loop_histogram_us": histogram_json(&s.loop_histogram),
            "limit_hits": {
                "non_finite": s.hits.non_finite, "position": s.hits.position,
                "velocity": s.hits.velocity, "acceleration": s.hits.acceleration,
                "workspace": s.hits.workspace, "rate": s.hits.rate,
            },
        })
    );
}

#[derive(Debug, Args)]
pub struct EstopArgs {
    #[arg(long)]
    pub robot_id: String,
    /// Release a latched e-stop instead of engaging it.
    #[arg(long)]
    pub release: bool,
    #[arg(long, default_value = "operator")]
    pub reason: String,
    #[command(flatten)]
    pub net: NetArgs,
}

pub fn estop(args: &EstopArgs) -> anyhow::Result<()> {
    let keys = RobotKeys::new(&args.robot_id)?;
    let session = args.net.open()?;
    let msg = EstopMsg {
        engage: !args.release,
        reason: args.reason.clone(),
    };
    // A few repeats: the first put may race the connection being established.
    for _ in 0..5 {
        session
            .put(keys.estop(), msg.encode())
            .wait()
            .map_err(bridge::BridgeError::zenoh)?;
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = session.close().wait();
    Ok(())
}

#[derive(Debug, Subcommand)]
pub enum KeysCommand {
    /// Make an ed25519 signing key pair: OUT.key (secret, mode 600) and OUT.pub.
    Generate {
        #[arg(long)]
        out: PathBuf,
    },
}

pub fn keys(cmd: &KeysCommand) -> anyhow::Result<()> {
    match cmd {
        KeysCommand::Generate { out } => {
            let (secret, public) = bridge::keys::save_pair(&bridge::keys::generate(), out)?;
            println!("{}\n{}", secret.display(), public.display());
            Ok(())
        }
    }
}
