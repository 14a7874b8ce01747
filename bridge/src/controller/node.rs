//! The controller on the network: zenoh subscribers feed an inbox, one dedicated thread runs
//! `ControllerCore::step` at the control rate (read–update–write: phase-locked to the arm's
//! joint states, see `clock`) and publishes the filtered commands, telemetry
//! goes out on `…/policy/status`. Bundles are verified and loaded on the subscriber's thread
//! and handed to the control thread ready to activate.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use robots::Manipulator;
use zenoh::{Session, Wait};

use super::clock::TickClock;
use super::core::{prepare_bundle, ControllerConfig, ControllerCore, PreparedBundle};
use crate::error::{BridgeError, Result};
use crate::protocol::{
    CameraMsg, DeployMsg, EstopMsg, HeartbeatMsg, JointStateMsg, ObjectsMsg, RobotKeys, TaskMsg,
    WireMessage,
};

enum Inbound {
    State(JointStateMsg),
    Objects(ObjectsMsg),
    Camera(CameraMsg),
    Task(TaskMsg),
    Heartbeat,
    Estop(EstopMsg),
    Deploy(u64, std::result::Result<Box<PreparedBundle>, String>),
}

/// How often telemetry is published (s).
const STATUS_PERIOD_S: f64 = 0.5;

/// Runs the controller until `stop` is set. Blocks the calling thread (the control thread).
pub fn run_controller(
    session: &Session,
    keys: &RobotKeys,
    robot: Arc<Manipulator>,
    config: ControllerConfig,
    stop: Arc<AtomicBool>,
) -> Result<()> {
    let (tx, rx) = mpsc::channel::<Inbound>();
    let mut subscribers = Vec::new();
    macro_rules! subscribe {
        ($key:expr, $ty:ty, $wrap:expr) => {{
            let tx = tx.clone();
            let wrap = $wrap;
            subscribers.push(
                session
                    .declare_subscriber($key)
                    .callback(move |sample| {
                        // Malformed messages are dropped here: decoding is the gate.
                        if let Ok(m) = <$ty>::decode(&sample.payload().to_bytes()) {
                            let _ = tx.send(wrap(m));
                        }
                    })
                    .wait()
                    .map_err(BridgeError::zenoh)?,
            );
        }};
    }
    subscribe!(keys.state_joints(), JointStateMsg, Inbound::State);
    subscribe!(keys.state_objects(), ObjectsMsg, Inbound::Objects);
    subscribe!(keys.state_camera(), CameraMsg, Inbound::Camera);
    subscribe!(keys.task(), TaskMsg, Inbound::Task);
    subscribe!(keys.heartbeat(), HeartbeatMsg, |_| Inbound::Heartbeat);
    subscribe!(keys.estop(), EstopMsg, Inbound::Estop);
    {
        let tx = tx.clone();
        let trusted = config.trusted_keys.clone();
        let device = config.device;
        let robot = robot.clone();
        subscribers.push(
            session
                .declare_subscriber(keys.policy_deploy())
                .callback(move |sample| {
                    let bytes = sample.payload().to_bytes();
                    let msg = match DeployMsg::decode(&bytes) {
                        Ok(m) => m,
                        Err(e) => {
                            let _ = tx.send(Inbound::Deploy(0, Err(e.to_string())));
                            return;
                        }
                    };
                    let prepared = prepare_bundle(&msg.bundle, &trusted, &robot, device)
                        .map(Box::new)
                        .map_err(|e| e.to_string());
                    let _ = tx.send(Inbound::Deploy(msg.request_id, prepared));
                })
                .wait()
                .map_err(BridgeError::zenoh)?,
        );
    }
    let ros2 = match &config.ros2 {
        Some(ros2_config) => {
            let tx = tx.clone();
            Some(crate::ros2::io::Ros2Io::start(
                session,
                &robot,
                ros2_config,
                move |s| {
                    let _ = tx.send(Inbound::State(s));
                },
            )?)
        }
        None => None,
    };
    drop(tx);
    let cmd_pub = session
        .declare_publisher(keys.cmd_joints())
        .congestion_control(zenoh::qos::CongestionControl::Drop)
        .express(true)
        .wait()
        .map_err(BridgeError::zenoh)?;
    let status_pub = session
        .declare_publisher(keys.policy_status())
        .wait()
        .map_err(BridgeError::zenoh)?;

    // One inference thread: a small policy gains little from more, and the control thread's
    // timing stays predictable next to the arm's driver on the same cores.
    tch::set_num_threads(1);
    let mut core = ControllerCore::new(robot, config.clone())?;
    let t0 = Instant::now();
    let now_ns = || t0.elapsed().as_nanos() as u64;
    let status_every = ((STATUS_PERIOD_S * config.rate_hz).round() as u64).max(1);
    let mut clock = TickClock::new(config.rate_hz, now_ns());
    let mut tick: u64 = 0;
    while !stop.load(Ordering::Relaxed) {
        // Take messages until the step is due: on its deadline, or as soon as a fresh joint
        // state arrives close enough to it.
        loop {
            let now = now_ns();
            let deadline = clock.deadline_ns();
            if now >= deadline || stop.load(Ordering::Relaxed) {
                break;
            }
            let m = match rx.recv_timeout(Duration::from_nanos(deadline - now)) {
                Ok(m) => m,
                Err(mpsc::RecvTimeoutError::Timeout) => break,
                Err(mpsc::RecvTimeoutError::Disconnected) => return Ok(()),
            };
            let now = now_ns();
            match m {
                Inbound::State(s) => {
                    core.on_joint_state(&s, now);
                    if clock.on_state(now) {
                        break;
                    }
                }
                Inbound::Objects(o) => core.on_objects(&o),
                Inbound::Camera(c) => core.on_camera(c),
                Inbound::Task(t) => {
                    if let Err(e) = core.on_task(&t) {
                        let status =
                            core.status(now, 0, false, Some(format!("task rejected: {e}")));
                        let _ = status_pub.put(status.encode()).wait();
                    }
                }
                Inbound::Heartbeat => core.on_heartbeat(now),
                Inbound::Estop(e) => core.on_estop(&e),
                Inbound::Deploy(id, prepared) => {
                    let result = prepared
                        .map_err(|e| e.to_string())
                        .and_then(|p| core.activate(*p, now).map_err(|e| e.to_string()));
                    let status = match result {
                        Ok(()) => core.status(now, id, true, None),
                        Err(e) => core.status(now, id, false, Some(e)),
                    };
                    let _ = status_pub.put(status.encode()).wait();
                }
            }
        }
        let now = now_ns();
        clock.ticked(now);
        if let Some(cmd) = core.step(now) {
            cmd_pub
                .put(cmd.encode())
                .wait()
                .map_err(BridgeError::zenoh)?;
            if let Some(ros2) = &ros2 {
                ros2.send(cmd, 1.0 / config.rate_hz)?;
            }
        }
        tick += 1;
        if tick.is_multiple_of(status_every) {
            let status = core.status(now_ns(), 0, true, None);
            let _ = status_pub.put(status.encode()).wait();
        }
    }
    drop(subscribers);
    Ok(())
}
