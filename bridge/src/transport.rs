//! zenoh sessions from command-line settings: `--connect` / `--listen` endpoints (e.g.
//! `tcp/127.0.0.1:7447`), an optional `--zenoh-config` JSON5 file, and multicast scouting off
//! unless that file turns it on — so tests and benches stay on loopback. Gossip scouting (over
//! the connections made) stays on, so two peers connected to a third find each other.

use std::path::PathBuf;

use zenoh::{Config, Session, Wait};

use crate::error::{BridgeError, Result};

/// How to reach the zenoh network.
#[derive(Clone, Debug, Default)]
pub struct ZenohArgs {
    pub connect: Vec<String>,
    pub listen: Vec<String>,
    pub config_file: Option<PathBuf>,
    /// `peer` (default) or `client`.
    pub mode: Option<String>,
}

impl ZenohArgs {
    /// Peer listening on `endpoint`.
    pub fn listen(endpoint: &str) -> ZenohArgs {
        ZenohArgs {
            listen: vec![endpoint.to_string()],
            ..ZenohArgs::default()
        }
    }

    /// Peer connecting to `endpoint`.
    pub fn connect(endpoint: &str) -> ZenohArgs {
        ZenohArgs {
            connect: vec![endpoint.to_string()],
            ..ZenohArgs::default()
        }
    }

    /// The zenoh configuration these settings describe.
    pub fn config(&self) -> Result<Config> {
        let mut config = match &self.config_file {
            Some(path) => Config::from_file(path).map_err(|e| {
                BridgeError::config("--zenoh-config", format!("{}: {e}", path.display()))
            })?,
            None => {
                let mut c = Config::default();
                // No multicast: peers find each other only through the given endpoints, and
                // gossip over those connections lets peers that share one reach each other.
                set(&mut c, "scouting/multicast/enabled", "false")?;
                c
            }
        };
        if let Some(mode) = &self.mode {
            if mode != "peer" && mode != "client" && mode != "router" {
                return Err(BridgeError::config(
                    "--mode",
                    format!("`{mode}`: expected peer, client or router"),
                ));
            }
            set(&mut config, "mode", &format!("\"{mode}\""))?;
        }
        let list = |v: &[String]| -> Result<String> {
            serde_json::to_string(v).map_err(|e| BridgeError::config("endpoints", e.to_string()))
        };
        if !self.connect.is_empty() {
            set(&mut config, "connect/endpoints", &list(&self.connect)?)?;
        }
        if !self.listen.is_empty() {
            set(&mut config, "listen/endpoints", &list(&self.listen)?)?;
        }
        Ok(config)
    }

    pub fn open(&self) -> Result<Session> {
        zenoh::open(self.config()?)
            .wait()
            .map_err(BridgeError::zenoh)
    }

    /// Opens the session, retrying the `--connect` endpoints for up to `timeout` (`None`: until
    /// they answer) instead of failing at once when the router is not up yet.
    pub fn open_waiting(&self, timeout: Option<std::time::Duration>) -> Result<Session> {
        let mut config = self.config()?;
        let ms = timeout.map_or(-1, |t| i64::try_from(t.as_millis()).unwrap_or(i64::MAX));
        set(&mut config, "connect/timeout_ms", &ms.to_string())?;
        zenoh::open(config).wait().map_err(BridgeError::zenoh)
    }
}

fn set(config: &mut Config, key: &str, value: &str) -> Result<()> {
    config
        .insert_json5(key, value)
        .map_err(|e| BridgeError::config(key, format!("{value}: {e}")))
}

/// Nanoseconds since the Unix epoch (message stamps).
pub fn unix_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}
