//! The messages, grouped by direction. Each has one `encode` and one `decode` (the
//! [`WireMessage`] trait); the field order below is the wire order (PROTOCOL.md mirrors it).

use super::wire::{Reader, Writer};
use crate::error::Result;

/// A message with a fixed kind byte.
pub trait WireMessage: Sized {
    const KIND: u8;
    const NAME: &'static str;
    fn write(&self, w: &mut Writer);
    fn read(r: &mut Reader<'_>) -> Result<Self>;

    fn encode(&self) -> Vec<u8> {
        let mut w = Writer::new(Self::KIND);
        self.write(&mut w);
        w.bytes
    }

    /// Decodes exactly one message (wrong header, short fields or trailing bytes fail).
    fn decode(bytes: &[u8]) -> Result<Self> {
        let mut r = Reader::new(bytes, Self::KIND, Self::NAME)?;
        let m = Self::read(&mut r)?;
        r.finish()?;
        Ok(m)
    }
}

// ---- robot → controller -------------------------------------------------------------------

/// Measured arm state from the driver (`…/state/joints`).
#[derive(Debug, PartialEq)]
pub struct JointStateMsg {
    pub seq: u64,
    pub stamp_ns: u64,
    pub q_rad: Vec<f64>,
    pub qd_rad_s: Vec<f64>,
    /// Gripper opening in [0, 1] (1 = open).
    pub gripper_opening: f64,
}

/// `clone_from` reuses the vectors (the controller copies each reading without allocating).
impl Clone for JointStateMsg {
    fn clone(&self) -> Self {
        JointStateMsg {
            seq: self.seq,
            stamp_ns: self.stamp_ns,
            q_rad: self.q_rad.clone(),
            qd_rad_s: self.qd_rad_s.clone(),
            gripper_opening: self.gripper_opening,
        }
    }

    fn clone_from(&mut self, source: &Self) {
        self.seq = source.seq;
        self.stamp_ns = source.stamp_ns;
        self.q_rad.clone_from(&source.q_rad);
        self.qd_rad_s.clone_from(&source.qd_rad_s);
        self.gripper_opening = source.gripper_opening;
    }
}

impl WireMessage for JointStateMsg {
    const KIND: u8 = 1;
    const NAME: &'static str = "JointState";
    fn write(&self, w: &mut Writer) {
        w.u64(self.seq);
        w.u64(self.stamp_ns);
        w.f64s(&self.q_rad);
        w.f64s(&self.qd_rad_s);
        w.f64(self.gripper_opening);
    }
    fn read(r: &mut Reader<'_>) -> Result<Self> {
        Ok(JointStateMsg {
            seq: r.u64("seq")?,
            stamp_ns: r.u64("stamp_ns")?,
            q_rad: r.f64s("q_rad")?,
            qd_rad_s: r.f64s("qd_rad_s")?,
            gripper_opening: r.f64("gripper_opening")?,
        })
    }
}

/// One tracked object: pose `[x, y, z, qx, qy, qz, qw]` in the world frame (m), velocities.
#[derive(Clone, Debug, PartialEq)]
pub struct ObjectPose {
    pub world_from_object: [f64; 7],
    pub lin_vel_m_s: [f64; 3],
    pub ang_vel_rad_s: [f64; 3],
}

/// Perceived object states (`…/state/objects`), in the task's object order.
#[derive(Debug, PartialEq)]
pub struct ObjectsMsg {
    pub seq: u64,
    pub stamp_ns: u64,
    pub objects: Vec<ObjectPose>,
}

/// `clone_from` reuses the vector, as for [`JointStateMsg`].
impl Clone for ObjectsMsg {
    fn clone(&self) -> Self {
        ObjectsMsg {
            seq: self.seq,
            stamp_ns: self.stamp_ns,
            objects: self.objects.clone(),
        }
    }

    fn clone_from(&mut self, source: &Self) {
        self.seq = source.seq;
        self.stamp_ns = source.stamp_ns;
        self.objects.clone_from(&source.objects);
    }
}

const OBJECT_BYTES: usize = 13 * 8;

impl WireMessage for ObjectsMsg {
    const KIND: u8 = 2;
    const NAME: &'static str = "Objects";
    fn write(&self, w: &mut Writer) {
        w.u64(self.seq);
        w.u64(self.stamp_ns);
        w.u32(u32::try_from(self.objects.len()).unwrap_or(u32::MAX));
        for o in &self.objects {
            for v in o
                .world_from_object
                .iter()
                .chain(&o.lin_vel_m_s)
                .chain(&o.ang_vel_rad_s)
            {
                w.f64(*v);
            }
        }
    }
    fn read(r: &mut Reader<'_>) -> Result<Self> {
        let seq = r.u64("seq")?;
        let stamp_ns = r.u64("stamp_ns")?;
        let n = r.count(OBJECT_BYTES, "objects")?;
        let mut objects = Vec::with_capacity(n);
        for _ in 0..n {
            let mut v = [0.0; 13];
            for x in &mut v {
                *x = r.f64("objects")?;
            }
            objects.push(ObjectPose {
                world_from_object: [v[0], v[1], v[2], v[3], v[4], v[5], v[6]],
                lin_vel_m_s: [v[7], v[8], v[9]],
                ang_vel_rad_s: [v[10], v[11], v[12]],
            });
        }
        Ok(ObjectsMsg {
            seq,
            stamp_ns,
            objects,
        })
    }
}

/// Camera images from the robot (`…/state/camera`), in the order of the policy's camera
/// configuration, stamped with the `seq` of the joint state they were taken with.
#[derive(Clone, Debug, PartialEq)]
pub struct CameraMsg {
    pub seq: u64,
    pub stamp_ns: u64,
    pub frames: Vec<CameraImage>,
}

/// One RGB-D image, row-major, top row first.
#[derive(Clone, Debug, PartialEq)]
pub struct CameraImage {
    pub width: u32,
    pub height: u32,
    /// 3 bytes per pixel.
    pub rgb: Vec<u8>,
    /// Z-depth along the optical axis (m), 0 where there is no reading.
    pub depth_m: Vec<f32>,
}

impl WireMessage for CameraMsg {
    const KIND: u8 = 5;
    const NAME: &'static str = "Camera";
    fn write(&self, w: &mut Writer) {
        w.u64(self.seq);
        w.u64(self.stamp_ns);
        w.u32(u32::try_from(self.frames.len()).unwrap_or(u32::MAX));
        for f in &self.frames {
            w.u32(f.width);
            w.u32(f.height);
            w.bytes(&f.rgb);
            w.f32s(&f.depth_m);
        }
    }
    fn read(r: &mut Reader<'_>) -> Result<Self> {
        let seq = r.u64("seq")?;
        let stamp_ns = r.u64("stamp_ns")?;
        // width, height and two length prefixes at least.
        let n = r.count(16, "frames")?;
        let mut frames = Vec::with_capacity(n);
        for _ in 0..n {
            let width = r.u32("width")?;
            let height = r.u32("height")?;
            let pixels = width as usize * height as usize;
            let rgb = r.bytes("rgb")?;
            if rgb.len() != 3 * pixels {
                return Err(r.error(
                    "rgb",
                    format!("{} bytes for a {width}×{height} image", rgb.len()),
                ));
            }
            let depth_m = r.f32s("depth_m")?;
            if depth_m.len() != pixels {
                return Err(r.error(
                    "depth_m",
                    format!("{} values for a {width}×{height} image", depth_m.len()),
                ));
            }
            frames.push(CameraImage {
                width,
                height,
                rgb,
                depth_m,
            });
        }
        Ok(CameraMsg {
            seq,
            stamp_ns,
            frames,
        })
    }
}

/// The task the arm should perform (`…/task`): a `TaskSpec` as JSON (instruction, objects,
/// zones, goal), published by an operator, or by the simulated arm at each episode start.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskMsg {
    pub seq: u64,
    pub task_json: String,
}

impl WireMessage for TaskMsg {
    const KIND: u8 = 3;
    const NAME: &'static str = "Task";
    fn write(&self, w: &mut Writer) {
        w.u64(self.seq);
        w.str(&self.task_json);
    }
    fn read(r: &mut Reader<'_>) -> Result<Self> {
        Ok(TaskMsg {
            seq: r.u64("seq")?,
            task_json: r.str("task_json")?,
        })
    }
}

/// An episode outcome judged by the simulated arm's physics (`…/sim/episode`).
#[derive(Clone, Debug, PartialEq)]
pub struct EpisodeMsg {
    pub index: u64,
    pub task_seq: u64,
    pub success: bool,
    pub steps: u32,
}

impl WireMessage for EpisodeMsg {
    const KIND: u8 = 4;
    const NAME: &'static str = "Episode";
    fn write(&self, w: &mut Writer) {
        w.u64(self.index);
        w.u64(self.task_seq);
        w.bool(self.success);
        w.u32(self.steps);
    }
    fn read(r: &mut Reader<'_>) -> Result<Self> {
        Ok(EpisodeMsg {
            index: r.u64("index")?,
            task_seq: r.u64("task_seq")?,
            success: r.bool("success")?,
            steps: r.u32("steps")?,
        })
    }
}

// ---- controller → robot -------------------------------------------------------------------

/// A filtered joint position command (`…/cmd/joints`).
#[derive(Clone, Debug, PartialEq)]
pub struct JointCommandMsg {
    pub seq: u64,
    pub stamp_ns: u64,
    /// The task (`TaskMsg::seq`) the command serves, 0 when none; a simulated arm ignores
    /// commands for a task it has already reset away from.
    pub task_seq: u64,
    pub q_rad: Vec<f64>,
    pub gripper_opening: f64,
}

impl WireMessage for JointCommandMsg {
    const KIND: u8 = 10;
    const NAME: &'static str = "JointCommand";
    fn write(&self, w: &mut Writer) {
        w.u64(self.seq);
        w.u64(self.stamp_ns);
        w.u64(self.task_seq);
        w.f64s(&self.q_rad);
        w.f64(self.gripper_opening);
    }
    fn read(r: &mut Reader<'_>) -> Result<Self> {
        Ok(JointCommandMsg {
            seq: r.u64("seq")?,
            stamp_ns: r.u64("stamp_ns")?,
            task_seq: r.u64("task_seq")?,
            q_rad: r.f64s("q_rad")?,
            gripper_opening: r.f64("gripper_opening")?,
        })
    }
}

// ---- operator ↔ controller ----------------------------------------------------------------

/// Liveness of the supervising station (`…/heartbeat`).
#[derive(Clone, Debug, PartialEq)]
pub struct HeartbeatMsg {
    pub seq: u64,
    pub stamp_ns: u64,
    pub sender: String,
}

impl WireMessage for HeartbeatMsg {
    const KIND: u8 = 20;
    const NAME: &'static str = "Heartbeat";
    fn write(&self, w: &mut Writer) {
        w.u64(self.seq);
        w.u64(self.stamp_ns);
        w.str(&self.sender);
    }
    fn read(r: &mut Reader<'_>) -> Result<Self> {
        Ok(HeartbeatMsg {
            seq: r.u64("seq")?,
            stamp_ns: r.u64("stamp_ns")?,
            sender: r.str("sender")?,
        })
    }
}

/// Emergency stop (`…/estop`): `engage` latches it; a release clears the latch.
#[derive(Clone, Debug, PartialEq)]
pub struct EstopMsg {
    pub engage: bool,
    pub reason: String,
}

impl WireMessage for EstopMsg {
    const KIND: u8 = 21;
    const NAME: &'static str = "Estop";
    fn write(&self, w: &mut Writer) {
        w.bool(self.engage);
        w.str(&self.reason);
    }
    fn read(r: &mut Reader<'_>) -> Result<Self> {
        Ok(EstopMsg {
            engage: r.bool("engage")?,
            reason: r.str("reason")?,
        })
    }
}

/// A signed policy bundle to activate (`…/policy/deploy`); see `bundle.rs` for its bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct DeployMsg {
    pub request_id: u64,
    pub bundle: Vec<u8>,
}

impl WireMessage for DeployMsg {
    const KIND: u8 = 22;
    const NAME: &'static str = "Deploy";
    fn write(&self, w: &mut Writer) {
        w.u64(self.request_id);
        w.bytes(&self.bundle);
    }
    fn read(r: &mut Reader<'_>) -> Result<Self> {
        Ok(DeployMsg {
            request_id: r.u64("request_id")?,
            bundle: r.bytes("bundle")?,
        })
    }
}

/// What the controller is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ControllerMode {
    /// No policy: holding the last commanded position.
    Idle = 0,
    /// Blending a newly activated policy in.
    RampIn = 1,
    /// A policy is driving the arm.
    Active = 2,
    /// Watchdog tripped (stale state or missing heartbeat): braking, then holding.
    Stopped = 3,
    /// E-stop latched: braking, then holding until released.
    EStopped = 4,
}

impl ControllerMode {
    pub fn name(self) -> &'static str {
        match self {
            ControllerMode::Idle => "idle",
            ControllerMode::RampIn => "ramp-in",
            ControllerMode::Active => "active",
            ControllerMode::Stopped => "stopped",
            ControllerMode::EStopped => "estopped",
        }
    }

    fn from_u8(v: u8) -> Option<ControllerMode> {
        Some(match v {
            0 => ControllerMode::Idle,
            1 => ControllerMode::RampIn,
            2 => ControllerMode::Active,
            3 => ControllerMode::Stopped,
            4 => ControllerMode::EStopped,
            _ => return None,
        })
    }
}

/// Safety-filter interventions since the controller started.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LimitHits {
    pub non_finite: u64,
    pub position: u64,
    pub velocity: u64,
    pub acceleration: u64,
    pub workspace: u64,
    pub rate: u64,
}

/// Telemetry (`…/policy/status`), published periodically and as the answer to a deploy.
#[derive(Clone, Debug, PartialEq)]
pub struct PolicyStatusMsg {
    pub stamp_ns: u64,
    pub mode: ControllerMode,
    /// Content hash of the active bundle ("" when none).
    pub active_bundle: String,
    pub skill: String,
    /// The deploy request this status answers (0 when periodic) and whether it was accepted.
    pub request_id: u64,
    pub accepted: bool,
    /// Human-readable detail: why a bundle was rejected, why the watchdog tripped.
    pub detail: String,
    pub ticks: u64,
    /// Control-loop latency (inference + safety) percentiles in microseconds.
    pub loop_p50_us: f32,
    pub loop_p99_us: f32,
    pub loop_max_us: f32,
    /// The recent ticks' latency histogram: counts per bucket of upper edges
    /// `controller::LATENCY_BUCKETS_US` (50, 100, 200, 500, 1000, 2000, 5000 µs), then over.
    pub loop_histogram: Vec<u32>,
    pub hits: LimitHits,
}

impl WireMessage for PolicyStatusMsg {
    const KIND: u8 = 23;
    const NAME: &'static str = "PolicyStatus";
    fn write(&self, w: &mut Writer) {
        w.u64(self.stamp_ns);
        w.u8(self.mode as u8);
        w.str(&self.active_bundle);
        w.str(&self.skill);
        w.u64(self.request_id);
        w.bool(self.accepted);
        w.str(&self.detail);
        w.u64(self.ticks);
        w.f32(self.loop_p50_us);
        w.f32(self.loop_p99_us);
        w.f32(self.loop_max_us);
        w.u32(self.loop_histogram.len() as u32);
        for count in &self.loop_histogram {
            w.u32(*count);
        }
        let h = &self.hits;
        for v in [
            h.non_finite,
            h.position,
            h.velocity,
            h.acceleration,
            h.workspace,
            h.rate,
        ] {
            w.u64(v);
        }
    }
    fn read(r: &mut Reader<'_>) -> Result<Self> {
        let stamp_ns = r.u64("stamp_ns")?;
        let mode_byte = r.u8("mode")?;
        let mode = ControllerMode::from_u8(mode_byte).ok_or_else(|| {
            crate::error::BridgeError::Decode {
                message: Self::NAME,
                field: "mode".into(),
                problem: format!("unknown mode {mode_byte}"),
            }
        })?;
        Ok(PolicyStatusMsg {
            stamp_ns,
            mode,
            active_bundle: r.str("active_bundle")?,
            skill: r.str("skill")?,
            request_id: r.u64("request_id")?,
            accepted: r.bool("accepted")?,
            detail: r.str("detail")?,
            ticks: r.u64("ticks")?,
            loop_p50_us: r.f32("loop_p50_us")?,
            loop_p99_us: r.f32("loop_p99_us")?,
            loop_max_us: r.f32("loop_max_us")?,
            loop_histogram: {
                let n = r.count(4, "loop_histogram")?;
                (0..n)
                    .map(|_| r.u32("loop_histogram"))
                    .collect::<Result<_>>()?
            },
            hits: LimitHits {
                non_finite: r.u64("hits.non_finite")?,
                position: r.u64("hits.position")?,
                velocity: r.u64("hits.velocity")?,
                acceleration: r.u64("hits.acceleration")?,
                workspace: r.u64("hits.workspace")?,
                rate: r.u64("hits.rate")?,
            },
        })
    }
}
