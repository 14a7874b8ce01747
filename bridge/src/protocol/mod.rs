//! The coevolve robot protocol over zenoh: key expressions per robot and the versioned,
//! compact binary messages that travel on them (`bridge/PROTOCOL.md` is the reference).

pub mod messages;
pub mod wire;

pub use messages::*;

/// Key expressions of one robot, `coevolve/<robot_id>/…`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RobotKeys {
    pub robot_id: String,
}

impl RobotKeys {
    /// Keys for `robot_id` (letters, digits, `-` and `_` only: it becomes one key chunk).
    pub fn new(robot_id: &str) -> crate::error::Result<RobotKeys> {
        let ok = !robot_id.is_empty()
            && robot_id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !ok {
            return Err(crate::error::BridgeError::Config {
                field: "robot_id".into(),
                problem: format!(
                    "`{robot_id}` must be non-empty ASCII letters, digits, `-` or `_`"
                ),
            });
        }
        Ok(RobotKeys {
            robot_id: robot_id.to_string(),
        })
    }

    fn key(&self, suffix: &str) -> String {
        format!("coevolve/{}/{suffix}", self.robot_id)
    }

    pub fn state_joints(&self) -> String {
        self.key("state/joints")
    }
    pub fn state_objects(&self) -> String {
        self.key("state/objects")
    }
    pub fn state_camera(&self) -> String {
        self.key("state/camera")
    }
    pub fn task(&self) -> String {
        self.key("task")
    }
    pub fn sim_episode(&self) -> String {
        self.key("sim/episode")
    }
    pub fn cmd_joints(&self) -> String {
        self.key("cmd/joints")
    }
    pub fn policy_deploy(&self) -> String {
        self.key("policy/deploy")
    }
    pub fn policy_status(&self) -> String {
        self.key("policy/status")
    }
    pub fn estop(&self) -> String {
        self.key("estop")
    }
    pub fn heartbeat(&self) -> String {
        self.key("heartbeat")
    }
}
