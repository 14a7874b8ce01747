//! Content-addressed blobs (packed policies) an orchestrator serves to its workers on
//! `coevolve/farm/blobs/<sha256>`: the few most recently offered are kept.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use zenoh::query::Queryable;
use zenoh::{Session, Wait};

use crate::error::{BridgeError, Result};
use crate::farm::wire;

/// Blobs kept: a generation's policy and its candidates.
const KEPT: usize = 8;

type Store = Arc<Mutex<VecDeque<(String, Arc<Vec<u8>>)>>>;

/// The blobs this orchestrator serves.
pub(super) struct Blobs {
    store: Store,
    _queryable: Queryable<()>,
}

impl Blobs {
    pub fn declare(session: &Session) -> Result<Blobs> {
        let store: Store = Arc::default();
        let shared = store.clone();
        let queryable = session
            .declare_queryable(wire::blob_key("*"))
            .callback(move |query| {
                let Some(hash) = query.key_expr().as_str().rsplit('/').next() else {
                    return;
                };
                let found = shared.lock().ok().and_then(|s| {
                    s.iter()
                        .find(|(h, _)| h == hash)
                        .map(|(_, bytes)| bytes.clone())
                });
                if let Some(bytes) = found {
                    let _ = query.reply(wire::blob_key(hash), bytes.as_slice()).wait();
                }
            })
            .wait()
            .map_err(BridgeError::zenoh)?;
        Ok(Blobs {
            store,
            _queryable: queryable,
        })
    }

    /// Serves `bytes`; their hash.
    pub fn offer(&self, bytes: Vec<u8>) -> String {
        let hash = wire::digest(&bytes);
        if let Ok(mut store) = self.store.lock() {
            if !store.iter().any(|(h, _)| *h == hash) {
                if store.len() == KEPT {
                    store.pop_front();
                }
                store.push_back((hash.clone(), Arc::new(bytes)));
            }
        }
        hash
    }
}
