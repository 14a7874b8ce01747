//! The controller's logic with no network and no clock of its own (copper-style lifecycle:
//! messages in, `step(now_ns)` out), so tests drive it tick by tick. Every command leaves
//! through the safety filter; the watchdog and the latched e-stop override the policy; a newly
//! activated policy is blended in from the held position over `ramp_in_s`.

use std::sync::Arc;
use std::time::Instant;

use ed25519_dalek::VerifyingKey;
use robots::Manipulator;
use sim::TaskSpec;

use super::runner::PolicyRunner;
use super::telemetry::LatencyWindow;
use crate::bundle::Bundle;
use crate::error::{BridgeError, Result};
use crate::protocol::{
    CameraMsg, ControllerMode, EstopMsg, JointCommandMsg, JointStateMsg, ObjectsMsg,
    PolicyStatusMsg, TaskMsg,
};
use crate::safety::{SafetyConfig, SafetyFilter, Watchdog};

/// A bundle that passed every trust check, with its policy loaded (done off the control
/// thread: loading takes longer than a control period).
#[derive(Debug)]
pub struct PreparedBundle {
    pub runner: PolicyRunner,
    pub safety: SafetyConfig,
    pub bundle_hash: String,
    pub skill: String,
}

/// Parses, verifies (signature, trusted key, content, robot model) and loads a bundle.
pub fn prepare_bundle(
    bytes: &[u8],
    trusted: &[VerifyingKey],
    robot: &Arc<Manipulator>,
    device: tch::Device,
) -> Result<PreparedBundle> {
    let bundle = Bundle::parse(bytes)?;
    bundle.verify(trusted, &robot.model.model_hash)?;
    let policy = bundle.load_policy(device)?;
    if policy.meta.robot_model_hash != robot.model.model_hash {
        return Err(BridgeError::Bundle(
            "the checkpoint inside was trained for another robot model".into(),
        ));
    }
    Ok(PreparedBundle {
        runner: PolicyRunner::new(policy, robot.clone())?,
        safety: bundle.manifest.safety.clone(),
        bundle_hash: bundle.content_hash.clone(),
        skill: bundle.manifest.skill.clone(),
    })
}

/// Settings of one controller.
#[derive(Clone, Debug)]
pub struct ControllerConfig {
    /// Safety-loop rate (Hz); policy inference runs at the policy's own rate within it.
    pub rate_hz: f64,
    /// The controller's own limits; a bundle can only tighten them.
    pub safety: SafetyConfig,
    pub trusted_keys: Vec<VerifyingKey>,
    pub device: tch::Device,
    /// Also (or only, for a ROS 2 arm) read joint state from and send commands to ROS 2
    /// topics through rmw_zenoh.
    pub ros2: Option<crate::ros2::io::Ros2Config>,
}

#[derive(Debug)]
struct Active {
    runner: PolicyRunner,
    bundle_hash: String,
    skill: String,
    period_ns: u64,
    next_infer_ns: u64,
    /// `seq` of the joint state the last inference saw.
    inferred_seq: Option<u64>,
    ramp_start_ns: u64,
}

#[derive(Debug)]
pub struct ControllerCore {
    robot: Arc<Manipulator>,
    config: ControllerConfig,
    safety: SafetyConfig,
    filter: SafetyFilter,
    watchdog: Watchdog,
    mode: ControllerMode,
    detail: String,
    estop_latched: bool,
    active: Option<Active>,
    state: Option<JointStateMsg>,
    objects: Option<ObjectsMsg>,
    camera: Option<CameraMsg>,
    task: Option<(u64, TaskSpec)>,
    task_start_ns: u64,
    resync: bool,
    hold_q_rad: Vec<f64>,
    target: Vec<f64>,
    ticks: u64,
    seq: u64,
    inferred: bool,
    /// The last command sent (rewritten in place each tick).
    command: JointCommandMsg,
    pub latency: LatencyWindow,
}

impl ControllerCore {
    pub fn new(robot: Arc<Manipulator>, config: ControllerConfig) -> Result<ControllerCore> {
        let filter = SafetyFilter::new(robot.clone(), &config.safety, config.rate_hz)?;
        let n = robot.dof();
        Ok(ControllerCore {
            watchdog: Watchdog::new(&config.safety),
            safety: config.safety.clone(),
            filter,
            robot,
            mode: ControllerMode::Idle,
            detail: "waiting for joint state".into(),
            estop_latched: false,
            active: None,
            state: None,
            objects: None,
            camera: None,
            task: None,
            task_start_ns: 0,
            resync: false,
            hold_q_rad: vec![0.0; n],
            target: vec![0.0; n],
            ticks: 0,
            seq: 0,
            inferred: false,
            command: JointCommandMsg {
                seq: 0,
                stamp_ns: 0,
                task_seq: 0,
                q_rad: Vec::with_capacity(n),
                gripper_opening: 1.0,
            },
            latency: LatencyWindow::new(4096),
            config,
        })
    }

    pub fn mode(&self) -> ControllerMode {
        self.mode
    }

    /// Whether the last `step` ran the policy.
    pub fn last_step_inferred(&self) -> bool {
        self.inferred
    }

    pub fn filter(&self) -> &SafetyFilter {
        &self.filter
    }

    /// A joint-state reading (copied into the controller's own, allocating nothing once it
    /// has one of this size).
    pub fn on_joint_state(&mut self, msg: &JointStateMsg, now_ns: u64) {
        if msg.q_rad.len() != self.robot.dof() || msg.q_rad.iter().any(|q| !q.is_finite()) {
            // A malformed reading does not refresh the watchdog.
            return;
        }
        self.watchdog.on_state(now_ns);
        let first = !self.filter.is_initialized();
        if first || self.resync {
            // Start (or restart after the arm was reset for a new task) from where it is.
            if self.filter.reset(&msg.q_rad, msg.gripper_opening).is_ok() {
                self.hold_q_rad.copy_from_slice(&msg.q_rad);
                if let Some(a) = &mut self.active {
                    a.runner.reset(&msg.q_rad, msg.gripper_opening);
                    a.next_infer_ns = now_ns;
                }
                self.task_start_ns = now_ns;
                self.resync = false;
                if first {
                    self.detail = "holding".into();
                }
            }
        }
        match &mut self.state {
            Some(state) => state.clone_from(msg),
            None => self.state = Some(msg.clone()),
        }
    }

    /// Perceived object poses (copied like the joint state).
    pub fn on_objects(&mut self, msg: &ObjectsMsg) {
        match &mut self.objects {
            Some(objects) => objects.clone_from(msg),
            None => self.objects = Some(msg.clone()),
        }
    }

    /// Camera images (for rgbd policies), stamped with the joint state's `seq`.
    pub fn on_camera(&mut self, msg: CameraMsg) {
        self.camera = Some(msg);
    }

    /// A new task: the arm may have been reset for it, so the trajectory restarts from the
    /// next joint state.
    pub fn on_task(&mut self, msg: &TaskMsg) -> Result<()> {
        let task: TaskSpec = serde_json::from_str(&msg.task_json)
            .map_err(|e| BridgeError::config("task_json", format!("not a task spec: {e}")))?;
        task.validate()?;
        if self.task.as_ref().map(|(s, _)| *s) != Some(msg.seq) {
            self.task = Some((msg.seq, task));
            self.objects = None;
            self.resync = true;
        }
        Ok(())
    }

    pub fn on_heartbeat(&mut self, now_ns: u64) {
        self.watchdog.on_heartbeat(now_ns);
    }

    pub fn on_estop(&mut self, msg: &EstopMsg) {
        if msg.engage {
            self.estop_latched = true;
            self.active = None;
            self.mode = ControllerMode::EStopped;
            self.detail = format!("e-stop: {}", msg.reason);
        } else if self.estop_latched {
            self.estop_latched = false;
            self.mode = ControllerMode::Idle;
            self.detail = format!("e-stop released: {}", msg.reason);
        }
    }

    /// Activates a verified, loaded bundle (see [`prepare_bundle`]); `Err` says why not.
    pub fn activate(&mut self, prepared: PreparedBundle, now_ns: u64) -> Result<()> {
        if self.estop_latched {
            return Err(BridgeError::Bundle(
                "the e-stop is latched; release it first".into(),
            ));
        }
        let PreparedBundle {
            mut runner,
            safety: bundle_safety,
            bundle_hash,
            skill,
        } = prepared;
        let safety = self.config.safety.tightest(&bundle_safety);
        let mut filter = SafetyFilter::new(self.robot.clone(), &safety, self.config.rate_hz)?;
        if self.filter.is_initialized() {
            if !self.filter.at_rest() {
                return Err(BridgeError::Bundle(
                    "the arm is still moving; deploy when it holds".into(),
                ));
            }
            // The commanded trajectory stays continuous: the new filter starts where the old
            // one holds.
            filter.reset(self.filter.q_cmd_rad(), self.filter.gripper_cmd())?;
            runner.reset(self.filter.q_cmd_rad(), self.filter.gripper_cmd());
            self.hold_q_rad.copy_from_slice(self.filter.q_cmd_rad());
        }
        filter.hits = self.filter.hits.clone();
        self.filter = filter;
        self.watchdog = self.watchdog.with_limits(&safety);
        self.safety = safety;
        let period_ns = (runner.period_s() * 1e9) as u64;
        self.detail = format!("activated `{skill}`");
        self.active = Some(Active {
            runner,
            bundle_hash,
            skill,
            period_ns,
            next_infer_ns: now_ns,
            inferred_seq: None,
            ramp_start_ns: now_ns,
        });
        self.mode = ControllerMode::RampIn;
        Ok(())
    }

    /// One control period. Returns the command to publish, if any. Allocates nothing in the
    /// steady state (a state policy active on a task it has seen).
    pub fn step(&mut self, now_ns: u64) -> Option<&JointCommandMsg> {
        let started = Instant::now();
        self.ticks += 1;
        self.inferred = false;
        if let Some(reason) = self.watchdog.check(now_ns) {
            if self.watchdog.has_state() && self.mode != ControllerMode::Stopped {
                self.mode = ControllerMode::Stopped;
                self.detail = format!("watchdog: {reason}");
                self.active = None;
            }
        } else if self.mode == ControllerMode::Stopped && self.filter.at_rest() {
            self.mode = ControllerMode::Idle;
            self.detail = format!("{}; cleared, holding (redeploy to resume)", self.detail);
        }
        let mut drive = false;
        let mut gripper = self.filter.gripper_cmd();
        if let (Some(a), Some(state), Some((_, task)), false) = (
            self.active.as_mut(),
            self.state.as_ref(),
            self.task.as_ref(),
            self.resync,
        ) {
            // Inference at the policy's rate, phase-locked to the arm's state: once due (within
            // half a control tick of the deadline, so jitter neither skips nor doubles a
            // period) it waits for a state it has not seen yet (an rgbd policy: with the camera
            // images taken with it), as in simulation where every action answers a fresh
            // observation; half a period late it goes ahead with the last one.
            let tick_ns = (1e9 / self.config.rate_hz) as u64;
            let due = now_ns + tick_ns / 2 >= a.next_infer_ns;
            let images = a.runner.needs_images();
            let camera = self.camera.as_ref().map(|c| (c.seq, c.frames.as_slice()));
            let fresh = a.inferred_seq != Some(state.seq)
                && (!images || camera.is_some_and(|(seq, _)| seq == state.seq));
            let overdue = now_ns >= a.next_infer_ns + a.period_ns / 2;
            let perceived = if images {
                camera.is_some()
            } else {
                self.objects.is_some()
            };
            if due && perceived && (fresh || overdue) {
                a.next_infer_ns = now_ns + a.period_ns;
                a.inferred_seq = Some(state.seq);
                self.inferred = true;
                let time_s = now_ns.saturating_sub(self.task_start_ns) as f64 / 1e9;
                let objects = self.objects.as_ref().map_or(&[][..], |o| &o.objects[..]);
                let frames = camera.map_or(&[][..], |(_, f)| f);
                match a.runner.act(state, objects, frames, task, time_s) {
                    Ok(true) => {}
                    Ok(false) => self.filter.hits.non_finite += 1,
                    Err(e) => self.detail = format!("policy: {e}"),
                }
            }
            let ramp = if self.safety.ramp_in_s <= 0.0 {
                1.0
            } else {
                (now_ns.saturating_sub(a.ramp_start_ns) as f64 / 1e9 / self.safety.ramp_in_s)
                    .min(1.0)
            };
            if ramp >= 1.0 && self.mode == ControllerMode::RampIn {
                self.mode = ControllerMode::Active;
            }
            for (i, t) in self.target.iter_mut().enumerate() {
                let h = self.hold_q_rad[i];
                *t = h + ramp * (a.runner.q_target_rad[i] - h);
            }
            gripper = a.runner.gripper_target;
            drive = matches!(self.mode, ControllerMode::RampIn | ControllerMode::Active);
        }
        // Otherwise (idle, stopped, e-stopped, waiting for task or objects): brake and hold.
        let target = drive.then_some(self.target.as_slice());
        let emitted = self.filter.step(target, gripper, now_ns);
        self.latency
            .record(started.elapsed().as_secs_f64() as f32 * 1e6);
        if !emitted {
            return None;
        }
        self.seq += 1;
        let cmd = &mut self.command;
        cmd.seq = self.seq;
        cmd.stamp_ns = now_ns;
        cmd.task_seq = self.task.as_ref().map_or(0, |(s, _)| *s);
        cmd.q_rad.clear();
        cmd.q_rad.extend_from_slice(self.filter.q_cmd_rad());
        cmd.gripper_opening = self.filter.gripper_cmd();
        Some(&self.command)
    }

    /// Telemetry (`request_id` 0: periodic; otherwise the answer to that deploy).
    pub fn status(
        &mut self,
        now_ns: u64,
        request_id: u64,
        accepted: bool,
        detail: Option<String>,
    ) -> PolicyStatusMsg {
        let (p50, p99, max) = self.latency.percentiles();
        PolicyStatusMsg {
            stamp_ns: now_ns,
            mode: self.mode,
            active_bundle: self
                .active
                .as_ref()
                .map_or(String::new(), |a| a.bundle_hash.clone()),
            skill: self
                .active
                .as_ref()
                .map_or(String::new(), |a| a.skill.clone()),
            request_id,
            accepted,
            detail: detail.unwrap_or_else(|| self.detail.clone()),
            ticks: self.ticks,
            loop_p50_us: p50,
            loop_p99_us: p99,
            loop_max_us: max,
            loop_histogram: self.latency.histogram(),
            hits: self.filter.hits.clone(),
        }
    }
}
