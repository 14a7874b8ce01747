//! Speaking rmw_zenoh (ROS 2 Jazzy's zenoh middleware) directly: topic key expressions
//! `<domain>/<topic>/<dds type>/<RIHS01 hash>`, the 33-byte attachment every message carries
//! (i64 LE sequence number, i64 LE source timestamp in ns, a length byte 16, the 16-byte
//! publisher GID), and the liveliness tokens that make the node and its publishers and
//! subscriptions visible to `ros2 node list` / `ros2 topic list`.

use std::marker::PhantomData;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

use sha2::{Digest, Sha256};
use zenoh::liveliness::LivelinessToken;
use zenoh::pubsub::{Publisher, Subscriber};
use zenoh::{Session, Wait};

use super::msgs::RosMessage;
use crate::error::{BridgeError, Result};
use crate::transport::unix_ns;

/// rmw_zenoh's attachment: sequence number, source timestamp (ns), GID.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Attachment {
    pub sequence_number: i64,
    pub source_timestamp_ns: i64,
    pub gid: [u8; 16],
}

impl Attachment {
    pub fn encode(&self) -> [u8; 33] {
        let mut a = [0u8; 33];
        a[0..8].copy_from_slice(&self.sequence_number.to_le_bytes());
        a[8..16].copy_from_slice(&self.source_timestamp_ns.to_le_bytes());
        a[16] = 16;
        a[17..33].copy_from_slice(&self.gid);
        a
    }

    pub fn decode(bytes: &[u8]) -> Result<Attachment> {
        let bad = |problem: &str| BridgeError::Decode {
            message: "rmw_zenoh attachment",
            field: "attachment".into(),
            problem: problem.into(),
        };
        if bytes.len() != 33 {
            return Err(bad(&format!("{} bytes, expected 33", bytes.len())));
        }
        if bytes[16] != 16 {
            return Err(bad("GID length byte is not 16"));
        }
        let mut i = [0u8; 8];
        i.copy_from_slice(&bytes[0..8]);
        let sequence_number = i64::from_le_bytes(i);
        i.copy_from_slice(&bytes[8..16]);
        let source_timestamp_ns = i64::from_le_bytes(i);
        let mut gid = [0u8; 16];
        gid.copy_from_slice(&bytes[17..33]);
        Ok(Attachment {
            sequence_number,
            source_timestamp_ns,
            gid,
        })
    }
}

/// `/` → `%`, as rmw_zenoh mangles names inside liveliness keys.
pub fn mangle(name: &str) -> String {
    name.replace('/', "%")
}

/// The data key expression of `topic` (e.g. `/joint_states`) for message type `M`.
pub fn topic_key<M: RosMessage>(domain_id: u32, topic: &str) -> String {
    format!(
        "{domain_id}/{}/{}/{}",
        topic.trim_matches('/'),
        M::DDS_NAME,
        M::TYPE_HASH
    )
}

/// rmw_zenoh's QoS string for reliable, volatile, keep-last `depth` (defaults left empty).
pub fn qos_string(depth: usize) -> String {
    format!("::,{depth}:,:,:,,")
}

/// Entity kinds in liveliness keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntityKind {
    Node,
    Publisher,
    Subscription,
}

impl EntityKind {
    fn code(self) -> &'static str {
        match self {
            EntityKind::Node => "NN",
            EntityKind::Publisher => "MP",
            EntityKind::Subscription => "MS",
        }
    }
}

/// `@ros2_lv/<domain>/<zid>/<node id>/<entity id>/<kind>/<enclave>/<namespace>/<node>`
/// `[/<topic>/<type>/<hash>/<qos>]`, every field mangled; the node is entity 0 (node id 0).
pub fn liveliness_key(
    domain_id: u32,
    zid: &str,
    entity_id: u64,
    kind: EntityKind,
    namespace: &str,
    name: &str,
    topic: Option<(&str, &str, &str)>,
) -> String {
    let mut key = format!(
        "@ros2_lv/{domain_id}/{zid}/0/{entity_id}/{}/%/{}/{}",
        kind.code(),
        mangle(namespace),
        mangle(name)
    );
    if let Some((topic, dds_type, hash)) = topic {
        let topic = if topic.starts_with('/') {
            topic.to_string()
        } else {
            format!("/{topic}")
        };
        key.push_str(&format!(
            "/{}/{}/{}/{}",
            mangle(&topic),
            mangle(dds_type),
            mangle(hash),
            qos_string(QOS_DEPTH)
        ));
    }
    key
}

/// A ROS 2 node on a zenoh session.
#[derive(Debug)]
pub struct RosNode {
    session: Session,
    pub domain_id: u32,
    pub namespace: String,
    pub name: String,
    zid: String,
    next_entity: AtomicU64,
    _token: LivelinessToken,
}

/// Depth advertised for the bridge's topics.
const QOS_DEPTH: usize = 10;

impl RosNode {
    pub fn new(session: &Session, domain_id: u32, namespace: &str, name: &str) -> Result<RosNode> {
        if name.is_empty() || name.contains('/') {
            return Err(BridgeError::config(
                "ros2 node name",
                format!("`{name}` must be a plain name"),
            ));
        }
        let namespace = if namespace.starts_with('/') {
            namespace.to_string()
        } else {
            format!("/{namespace}")
        };
        let zid = session.zid().to_string();
        let key = liveliness_key(domain_id, &zid, 0, EntityKind::Node, &namespace, name, None);
        let token = session
            .liveliness()
            .declare_token(key)
            .wait()
            .map_err(BridgeError::zenoh)?;
        Ok(RosNode {
            session: session.clone(),
            domain_id,
            zid,
            namespace,
            name: name.to_string(),
            next_entity: AtomicU64::new(1),
            _token: token,
        })
    }

    /// The liveliness key of an entity of this node (`topic`: name, type, hash).
    pub fn liveliness_key(
        &self,
        entity_id: u64,
        kind: EntityKind,
        topic: Option<(&str, &str, &str)>,
    ) -> String {
        liveliness_key(
            self.domain_id,
            &self.zid,
            entity_id,
            kind,
            &self.namespace,
            &self.name,
            topic,
        )
    }

    fn entity<M: RosMessage>(
        &self,
        topic: &str,
        kind: EntityKind,
    ) -> Result<(LivelinessToken, [u8; 16])> {
        let id = self.next_entity.fetch_add(1, Ordering::Relaxed);
        let key = self.liveliness_key(id, kind, Some((topic, M::DDS_NAME, M::TYPE_HASH)));
        let mut gid = [0u8; 16];
        gid.copy_from_slice(&Sha256::digest(key.as_bytes())[..16]);
        let token = self
            .session
            .liveliness()
            .declare_token(key)
            .wait()
            .map_err(BridgeError::zenoh)?;
        Ok((token, gid))
    }

    pub fn publisher<M: RosMessage>(&self, topic: &str) -> Result<RosPublisher<M>> {
        let (token, gid) = self.entity::<M>(topic, EntityKind::Publisher)?;
        let publisher = self
            .session
            .declare_publisher(topic_key::<M>(self.domain_id, topic))
            .wait()
            .map_err(BridgeError::zenoh)?;
        Ok(RosPublisher {
            publisher,
            gid,
            sequence: AtomicI64::new(0),
            _token: token,
            _message: PhantomData,
        })
    }

    /// Subscribes `topic`; messages without a valid attachment or with a malformed payload are
    /// dropped, as rmw_zenoh does.
    pub fn subscribe<M: RosMessage + Send + 'static>(
        &self,
        topic: &str,
        callback: impl Fn(M, Attachment) + Send + Sync + 'static,
    ) -> Result<RosSubscription> {
        let (token, _) = self.entity::<M>(topic, EntityKind::Subscription)?;
        let subscriber = self
            .session
            .declare_subscriber(topic_key::<M>(self.domain_id, topic))
            .callback(move |sample| {
                let Some(att) = sample
                    .attachment()
                    .and_then(|a| Attachment::decode(&a.to_bytes()).ok())
                else {
                    return;
                };
                if let Ok(m) = M::from_cdr(&sample.payload().to_bytes()) {
                    callback(m, att);
                }
            })
            .wait()
            .map_err(BridgeError::zenoh)?;
        Ok(RosSubscription {
            _subscriber: subscriber,
            _token: token,
        })
    }
}

/// A publisher of `M` with its liveliness token.
#[derive(Debug)]
pub struct RosPublisher<M> {
    publisher: Publisher<'static>,
    gid: [u8; 16],
    sequence: AtomicI64,
    _token: LivelinessToken,
    _message: PhantomData<M>,
}

impl<M: RosMessage> RosPublisher<M> {
    pub fn publish(&self, msg: &M) -> Result<()> {
        let attachment = Attachment {
            sequence_number: self.sequence.fetch_add(1, Ordering::Relaxed) + 1,
            source_timestamp_ns: unix_ns() as i64,
            gid: self.gid,
        };
        self.publisher
            .put(msg.to_cdr())
            .attachment(attachment.encode().to_vec())
            .wait()
            .map_err(BridgeError::zenoh)
    }
}

/// A subscription with its liveliness token (dropping it undeclares both).
#[derive(Debug)]
pub struct RosSubscription {
    _subscriber: Subscriber<()>,
    _token: LivelinessToken,
}
