//! The body codec: episodes as postcard (f64s as their raw 8 little-endian bytes), through
//! wire types of our own.
//!
//! Why wire types: postcard (like every compact non-self-describing format) cannot decode
//! serde's internally tagged enums (`Action` is `#[serde(tag = "mode")]`, `TaskSpec`'s object
//! kinds `#[serde(tag = "type")]`). So actions go through [`WireAction`] (variant indices fixed
//! here, whatever order `Action` lists them in), the task through its JSON text (exact: the
//! workspace's serde_json has `float_roundtrip`; a task is a few hundred bytes next to its
//! steps), and camera images as byte blocks (one copy each way instead of a call per pixel).
//! Everything else is the sim types' own serde derives. Changing any recorded type changes the
//! body layout and needs a `FORMAT_VERSION` bump; `tests/store_roundtrip.rs` pins the layout.

use std::borrow::Cow;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::StoreProblem;
use crate::camera::CameraFrame;
use crate::control::Action;
use crate::episode::{Episode, Outcome, StepRecord};
use crate::reward::RewardTerms;
use crate::state::PhysicsState;
use crate::task::TaskSpec;

#[derive(Serialize, Deserialize)]
struct WireEpisode<'a> {
    index: usize,
    seed: u64,
    /// `TaskSpec` as JSON.
    task_json: Cow<'a, str>,
    robot_model_hash: Cow<'a, str>,
    initial_state: Cow<'a, PhysicsState>,
    #[serde(borrow)]
    steps: Vec<WireStep<'a>>,
    outcome: Cow<'a, Outcome>,
}

#[derive(Serialize, Deserialize)]
struct WireStep<'a> {
    action: WireAction<'a>,
    q_target_rad: Cow<'a, [f64]>,
    state: Cow<'a, PhysicsState>,
    reward: Cow<'a, RewardTerms>,
    #[serde(borrow)]
    images: Vec<WireFrame<'a>>,
}

/// `Action` with externally tagged variants in a fixed order: append new variants, never
/// reorder.
#[derive(Serialize, Deserialize)]
enum WireAction<'a> {
    JointDelta {
        dq: Cow<'a, [f64]>,
        gripper: f64,
    },
    EeDelta {
        dpos: [f64; 3],
        drot: [f64; 3],
        gripper: f64,
    },
    JointPosition {
        q_rad: Cow<'a, [f64]>,
        gripper: f64,
    },
}

/// A `CameraFrame` with its pixel arrays as little-endian byte blocks.
#[derive(Serialize, Deserialize)]
struct WireFrame<'a> {
    width: u32,
    height: u32,
    #[serde(borrow)]
    rgb: Bytes<'a>,
    #[serde(borrow)]
    depth_m_le: Bytes<'a>,
    #[serde(borrow)]
    segmentation_le: Bytes<'a>,
}

/// A byte block, serialized with `serialize_bytes` and borrowed from the input when decoding.
struct Bytes<'a>(Cow<'a, [u8]>);

impl Serialize for Bytes<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(&self.0)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Bytes<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Bytes<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a byte block")
            }
            fn visit_borrowed_bytes<E>(self, v: &'de [u8]) -> Result<Self::Value, E> {
                Ok(Bytes(Cow::Borrowed(v)))
            }
            fn visit_bytes<E>(self, v: &[u8]) -> Result<Self::Value, E> {
                Ok(Bytes(Cow::Owned(v.to_vec())))
            }
            fn visit_byte_buf<E>(self, v: Vec<u8>) -> Result<Self::Value, E> {
                Ok(Bytes(Cow::Owned(v)))
            }
        }
        deserializer.deserialize_bytes(Visitor)
    }
}

/// Episodes → postcard bytes.
pub(super) fn encode_body(episodes: &[Episode]) -> Result<Vec<u8>, StoreProblem> {
    let wire = episodes
        .iter()
        .map(WireEpisode::from_episode)
        .collect::<Result<Vec<_>, _>>()?;
    postcard::to_stdvec(&wire).map_err(|e| StoreProblem::Body(format!("cannot encode: {e}")))
}

/// Postcard bytes → episodes; rejects trailing bytes and inconsistent images.
pub(super) fn decode_body(body: &[u8]) -> Result<Vec<Episode>, StoreProblem> {
    let (wire, rest): (Vec<WireEpisode<'_>>, _) = postcard::take_from_bytes(body)
        .map_err(|e| StoreProblem::Body(format!("cannot decode: {e}")))?;
    if !rest.is_empty() {
        return Err(StoreProblem::Body(format!(
            "{} trailing bytes after the last episode",
            rest.len()
        )));
    }
    wire.into_iter().map(WireEpisode::into_episode).collect()
}

impl<'a> WireEpisode<'a> {
    fn from_episode(episode: &'a Episode) -> Result<Self, StoreProblem> {
        let Episode {
            index,
            seed,
            task,
            robot_model_hash,
            initial_state,
            steps,
            outcome,
        } = episode;
        let task_json = serde_json::to_string(task).map_err(|e| {
            StoreProblem::Body(format!("episode {index}: cannot encode its task: {e}"))
        })?;
        Ok(WireEpisode {
            index: *index,
            seed: *seed,
            task_json: Cow::Owned(task_json),
            robot_model_hash: Cow::Borrowed(robot_model_hash),
            initial_state: Cow::Borrowed(initial_state),
            steps: steps.iter().map(WireStep::from_step).collect(),
            outcome: Cow::Borrowed(outcome),
        })
    }

    fn into_episode(self) -> Result<Episode, StoreProblem> {
        let index = self.index;
        let task: TaskSpec = serde_json::from_str(&self.task_json).map_err(|e| {
            StoreProblem::Body(format!("episode {index}: its task does not decode: {e}"))
        })?;
        let steps = self
            .steps
            .into_iter()
            .enumerate()
            .map(|(i, step)| {
                step.into_step().map_err(|problem| {
                    StoreProblem::Body(format!("episode {index}, step {i}: {problem}"))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Episode {
            index,
            seed: self.seed,
            task,
            robot_model_hash: self.robot_model_hash.into_owned(),
            initial_state: self.initial_state.into_owned(),
            steps,
            outcome: self.outcome.into_owned(),
        })
    }
}

impl<'a> WireStep<'a> {
    fn from_step(step: &'a StepRecord) -> Self {
        let StepRecord {
            action,
            q_target_rad,
            state,
            reward,
            images,
        } = step;
        WireStep {
            action: WireAction::from_action(action),
            q_target_rad: Cow::Borrowed(q_target_rad),
            state: Cow::Borrowed(state),
            reward: Cow::Borrowed(reward),
            images: images.iter().map(WireFrame::from_frame).collect(),
        }
    }

    fn into_step(self) -> Result<StepRecord, String> {
        Ok(StepRecord {
            action: self.action.into_action(),
            q_target_rad: self.q_target_rad.into_owned(),
            state: self.state.into_owned(),
            reward: self.reward.into_owned(),
            images: self
                .images
                .into_iter()
                .enumerate()
                .map(|(i, frame)| frame.into_frame().map_err(|p| format!("image {i}: {p}")))
                .collect::<Result<Vec<_>, _>>()?,
        })
    }
}

impl<'a> WireAction<'a> {
    fn from_action(action: &'a Action) -> Self {
        match action {
            Action::JointDelta { dq, gripper } => WireAction::JointDelta {
                dq: Cow::Borrowed(dq),
                gripper: *gripper,
            },
            Action::EeDelta {
                dpos,
                drot,
                gripper,
            } => WireAction::EeDelta {
                dpos: *dpos,
                drot: *drot,
                gripper: *gripper,
            },
            Action::JointPosition { q_rad, gripper } => WireAction::JointPosition {
                q_rad: Cow::Borrowed(q_rad),
                gripper: *gripper,
            },
        }
    }

    fn into_action(self) -> Action {
        match self {
            WireAction::JointDelta { dq, gripper } => Action::JointDelta {
                dq: dq.into_owned(),
                gripper,
            },
            WireAction::EeDelta {
                dpos,
                drot,
                gripper,
            } => Action::EeDelta {
                dpos,
                drot,
                gripper,
            },
            WireAction::JointPosition { q_rad, gripper } => Action::JointPosition {
                q_rad: q_rad.into_owned(),
                gripper,
            },
        }
    }
}

impl<'a> WireFrame<'a> {
    fn from_frame(frame: &'a CameraFrame) -> Self {
        let CameraFrame {
            width,
            height,
            rgb,
            depth_m,
            segmentation,
        } = frame;
        WireFrame {
            width: *width,
            height: *height,
            rgb: Bytes(Cow::Borrowed(rgb)),
            depth_m_le: Bytes(Cow::Owned(
                depth_m.iter().flat_map(|d| d.to_le_bytes()).collect(),
            )),
            segmentation_le: Bytes(Cow::Owned(
                segmentation.iter().flat_map(|s| s.to_le_bytes()).collect(),
            )),
        }
    }

    /// Checks the block sizes against `width × height` (as `CameraFrame` guarantees).
    fn into_frame(self) -> Result<CameraFrame, String> {
        let pixels = self.width as usize * self.height as usize;
        let check = |name: &str, len: usize, per_pixel: usize| {
            if len == pixels * per_pixel {
                Ok(())
            } else {
                Err(format!(
                    "{name} has {len} bytes, a {}×{} image needs {}",
                    self.width,
                    self.height,
                    pixels * per_pixel
                ))
            }
        };
        check("rgb", self.rgb.0.len(), 3)?;
        check("depth", self.depth_m_le.0.len(), 4)?;
        check("segmentation", self.segmentation_le.0.len(), 2)?;
        Ok(CameraFrame {
            width: self.width,
            height: self.height,
            rgb: self.rgb.0.into_owned(),
            depth_m: self
                .depth_m_le
                .0
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
            segmentation: self
                .segmentation_le
                .0
                .chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]]))
                .collect(),
        })
    }
}
