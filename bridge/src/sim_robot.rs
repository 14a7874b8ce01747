//! A simulated arm that speaks the protocol exactly like a real driver: it publishes joint
//! state (and the perceived objects, the camera images when the simulator has cameras, and the
//! task) and follows joint position commands at its
//! driver rate (default 100 Hz), stepping rapier's physics in real time between them. It runs episodes back to back, judges
//! each with the simulator's physics success predicate and publishes the outcome, so the whole
//! deploy path is testable on one machine.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use robots::Manipulator;
use sim::EpisodeStepper;
use sim::{Action, Observation, SimConfig, TaskSpec};
use zenoh::{Session, Wait};

use crate::error::{BridgeError, Result};
use crate::protocol::{
    CameraImage, CameraMsg, ControllerMode, EpisodeMsg, JointCommandMsg, JointStateMsg, ObjectPose,
    ObjectsMsg, PolicyStatusMsg, RobotKeys, TaskMsg, WireMessage,
};
use crate::transport::unix_ns;

/// Settings of a simulated arm.
#[derive(Clone, Debug)]
pub struct SimRobotConfig {
    /// Episodes to run (None: until stopped).
    pub episodes: Option<usize>,
    /// Wall-clock time per simulated second (1.0: real time).
    pub speed: f64,
    /// Driver rate (Hz): the newest command is taken and the state published this often. It
    /// must divide the simulator's physics rate and be a multiple of its control rate.
    pub driver_hz: f64,
    /// How long an episode waits for the first command for its task before it starts anyway.
    pub start_timeout_s: f64,
    /// Start each episode only once the controller reports a policy driving (ramp-in or
    /// active), so that evaluation episodes are not spent holding before a deploy.
    pub wait_for_policy: bool,
}

impl Default for SimRobotConfig {
    fn default() -> Self {
        SimRobotConfig {
            episodes: None,
            speed: 1.0,
            driver_hz: 100.0,
            start_timeout_s: 5.0,
            wait_for_policy: false,
        }
    }
}

/// What a driver and a perception system would publish for a simulator observation.
pub fn state_messages(obs: &Observation, seq: u64, stamp_ns: u64) -> (JointStateMsg, ObjectsMsg) {
    let state = JointStateMsg {
        seq,
        stamp_ns,
        q_rad: obs.q_rad.clone(),
        qd_rad_s: obs.qd_rad_s.clone(),
        gripper_opening: obs.gripper_opening,
    };
    let objects = ObjectsMsg {
        seq,
        stamp_ns,
        objects: obs
            .objects
            .iter()
            .map(|o| ObjectPose {
                world_from_object: o.world_from_object,
                lin_vel_m_s: o.lin_vel_m_s,
                ang_vel_rad_s: o.ang_vel_rad_s,
            })
            .collect(),
    };
    (state, objects)
}

/// The camera message for an observation that has images (those at control-period ends, when
/// the simulator has cameras), published before the joint state with the same `seq`.
pub fn camera_message(obs: &Observation, seq: u64, stamp_ns: u64) -> Option<CameraMsg> {
    (!obs.images.is_empty()).then(|| CameraMsg {
        seq,
        stamp_ns,
        frames: obs
            .images
            .iter()
            .map(|f| CameraImage {
                width: f.width,
                height: f.height,
                rgb: f.rgb.clone(),
                depth_m: f.depth_m.clone(),
            })
            .collect(),
    })
}

/// Outcome of one simulated episode.
#[derive(Clone, Debug, PartialEq)]
pub struct SimEpisode {
    pub index: usize,
    pub success: bool,
    pub steps: usize,
}

/// Runs episodes of `task_of(index)` (task, episode seed) until `stop` or the episode count;
/// returns the outcomes.
pub fn run_sim_robot(
    session: &Session,
    keys: &RobotKeys,
    robot: Arc<Manipulator>,
    sim: Arc<SimConfig>,
    task_of: &dyn Fn(usize) -> (TaskSpec, u64),
    config: &SimRobotConfig,
    stop: Arc<AtomicBool>,
) -> Result<Vec<SimEpisode>> {
    let latest: Arc<Mutex<Option<JointCommandMsg>>> = Arc::new(Mutex::new(None));
    let _sub = {
        let latest = latest.clone();
        session
            .declare_subscriber(keys.cmd_joints())
            .callback(move |sample| {
                if let Ok(cmd) = JointCommandMsg::decode(&sample.payload().to_bytes()) {
                    if let Ok(mut slot) = latest.lock() {
                        *slot = Some(cmd);
                    }
                }
            })
            .wait()
            .map_err(BridgeError::zenoh)?
    };
    let driving = Arc::new(AtomicBool::new(false));
    let _status = {
        let driving = driving.clone();
        session
            .declare_subscriber(keys.policy_status())
            .callback(move |sample| {
                if let Ok(s) = PolicyStatusMsg::decode(&sample.payload().to_bytes()) {
                    let on = matches!(s.mode, ControllerMode::RampIn | ControllerMode::Active);
                    driving.store(on, Ordering::Relaxed);
                }
            })
            .wait()
            .map_err(BridgeError::zenoh)?
    };
    let publisher = |key: String| {
        session
            .declare_publisher(key)
            .wait()
            .map_err(BridgeError::zenoh)
    };
    let state_pub = publisher(keys.state_joints())?;
    let objects_pub = publisher(keys.state_objects())?;
    let camera_pub = publisher(keys.state_camera())?;
    let task_pub = publisher(keys.task())?;
    let episode_pub = publisher(keys.sim_episode())?;
    let per_tick = physics_steps_per_tick(&sim, config.driver_hz)?;
    let period =
        Duration::from_secs_f64(per_tick as f64 * sim.physics_dt_s / config.speed.max(1e-3));
    let mut outcomes = Vec::new();
    let mut seq = 0u64;
    let mut index = 0usize;
    while !stop.load(Ordering::Relaxed) && config.episodes.is_none_or(|n| index < n) {
        let (task, episode_seed) = task_of(index);
        let task_seq = index as u64 + 1;
        let task_json =
            serde_json::to_string(&task).map_err(|e| BridgeError::config("task", e.to_string()))?;
        let mut stepper = EpisodeStepper::new(&robot, &task, &sim, index, episode_seed, false)?;
        let mut hold = stepper.observation().q_target_rad.clone();
        let mut gripper = 1.0;
        let publish_state = |stepper: &EpisodeStepper, seq: u64| -> Result<()> {
            let stamp_ns = unix_ns();
            if let Some(camera) = camera_message(stepper.observation(), seq, stamp_ns) {
                camera_pub
                    .put(camera.encode())
                    .wait()
                    .map_err(BridgeError::zenoh)?;
            }
            let (state, objects) = state_messages(stepper.observation(), seq, stamp_ns);
            objects_pub
                .put(objects.encode())
                .wait()
                .map_err(BridgeError::zenoh)?;
            state_pub
                .put(state.encode())
                .wait()
                .map_err(BridgeError::zenoh)
        };
        // Announce the task, then wait (publishing state) for the first command serving it.
        let waited = Instant::now();
        let mut next = Instant::now();
        loop {
            task_pub
                .put(
                    TaskMsg {
                        seq: task_seq,
                        task_json: task_json.clone(),
                    }
                    .encode(),
                )
                .wait()
                .map_err(BridgeError::zenoh)?;
            seq += 1;
            publish_state(&stepper, seq)?;
            let ready = latest
                .lock()
                .map(|c| c.as_ref().is_some_and(|c| c.task_seq == task_seq))
                .unwrap_or(false);
            let policy_ok = !config.wait_for_policy || driving.load(Ordering::Relaxed);
            if stop.load(Ordering::Relaxed)
                || (policy_ok && (ready || waited.elapsed().as_secs_f64() > config.start_timeout_s))
            {
                break;
            }
            next += period;
            std::thread::sleep(next.saturating_duration_since(Instant::now()));
        }
        let mut next = Instant::now();
        while !stepper.is_done() && !stop.load(Ordering::Relaxed) {
            if let Ok(slot) = latest.lock() {
                if let Some(cmd) = slot.as_ref() {
                    if cmd.task_seq == task_seq && cmd.q_rad.len() == hold.len() {
                        hold.clone_from(&cmd.q_rad);
                        gripper = cmd.gripper_opening;
                    }
                }
            }
            stepper.step_substeps(
                Action::JointPosition {
                    q_rad: hold.clone(),
                    gripper,
                },
                per_tick,
            );
            seq += 1;
            publish_state(&stepper, seq)?;
            next += period;
            std::thread::sleep(next.saturating_duration_since(Instant::now()));
        }
        let steps = stepper.steps_taken();
        let episode = stepper.finish();
        let success = episode.outcome.success;
        episode_pub
            .put(
                EpisodeMsg {
                    index: index as u64,
                    task_seq,
                    success,
                    steps: steps as u32,
                }
                .encode(),
            )
            .wait()
            .map_err(BridgeError::zenoh)?;
        outcomes.push(SimEpisode {
            index,
            success,
            steps,
        });
        index += 1;
    }
    Ok(outcomes)
}

/// Physics steps between two driver ticks at `driver_hz`, checked to split control periods
/// evenly.
pub fn physics_steps_per_tick(sim: &SimConfig, driver_hz: f64) -> Result<usize> {
    let per_step = sim.substeps();
    let per_tick = (1.0 / (driver_hz * sim.physics_dt_s)).round();
    let exact = (per_tick * sim.physics_dt_s * driver_hz - 1.0).abs() < 1e-6;
    if !driver_hz.is_finite() || driver_hz <= 0.0 || per_tick < 1.0 || !exact {
        return Err(BridgeError::config(
            "driver_hz",
            format!(
                "{driver_hz} Hz is not the physics rate ({} Hz) divided by a whole number",
                1.0 / sim.physics_dt_s
            ),
        ));
    }
    let per_tick = per_tick as usize;
    if !per_step.is_multiple_of(per_tick) {
        return Err(BridgeError::config(
            "driver_hz",
            format!(
                "{driver_hz} Hz does not split a control period ({per_step} physics steps of {} s) evenly",
                sim.physics_dt_s
            ),
        ));
    }
    Ok(per_tick)
}
