//! Policy bundles: what a controller accepts to run. A bundle is a checkpoint (its files), a
//! JSON manifest (skill, robot model and its hash, the safety limits it was validated with,
//! each file's SHA-256) and an ed25519 signature over the SHA-256 content hash of both.
//!
//! Bytes: `b"CEBUNDLE"`, version `u8`, manifest (`u32` length + JSON), file count `u32`, each
//! file (name and data, `u32` length-prefixed), then `1` + public key (32) + signature (64), or
//! `0` for an unsigned bundle (which every controller rejects). The content hash covers every
//! byte before the signature flag. Trailing bytes are an error.

use std::path::Path;

use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{BridgeError, Result};
use crate::keys::hex;
use crate::safety::SafetyConfig;

const MAGIC: &[u8; 8] = b"CEBUNDLE";
const VERSION: u8 = 1;

/// One checkpoint file listed in the manifest.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileEntry {
    pub name: String,
    pub sha256: String,
    pub bytes: u64,
}

/// What a bundle says about itself.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub format: u32,
    pub skill: String,
    /// Where the policy came from (run directory and generation), for people.
    pub source: String,
    /// The simulator's held-out success the policy was accepted with.
    pub heldout_success: Option<f64>,
    pub robot_name: String,
    pub robot_model_hash: String,
    /// The policy's control rate (Hz): how often the controller runs inference.
    pub policy_hz: f64,
    pub safety: SafetyConfig,
    pub files: Vec<FileEntry>,
}

/// A parsed bundle (not yet trusted: see [`Bundle::verify`]).
#[derive(Clone, Debug)]
pub struct Bundle {
    pub manifest: Manifest,
    pub files: Vec<(String, Vec<u8>)>,
    /// Hex SHA-256 of the signed content.
    pub content_hash: String,
    pub signature: Option<(VerifyingKey, Signature)>,
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(&u32::try_from(b.len()).unwrap_or(u32::MAX).to_le_bytes());
    out.extend_from_slice(b);
}

fn content_bytes(manifest: &Manifest, files: &[(String, Vec<u8>)]) -> Result<Vec<u8>> {
    let json = serde_json::to_vec(manifest)
        .map_err(|e| BridgeError::Bundle(format!("manifest does not serialise: {e}")))?;
    let mut out =
        Vec::with_capacity(json.len() + files.iter().map(|f| f.1.len() + 64).sum::<usize>());
    out.extend_from_slice(MAGIC);
    out.push(VERSION);
    put_bytes(&mut out, &json);
    out.extend_from_slice(&u32::try_from(files.len()).unwrap_or(u32::MAX).to_le_bytes());
    for (name, data) in files {
        put_bytes(&mut out, name.as_bytes());
        put_bytes(&mut out, data);
    }
    Ok(out)
}

/// Everything needed to describe a checkpoint in a bundle.
#[derive(Clone, Debug)]
pub struct BundleInfo {
    pub skill: String,
    pub source: String,
    pub heldout_success: Option<f64>,
    pub safety: SafetyConfig,
}

/// Packs the checkpoint in `checkpoint_dir` and signs it (`key = None`: unsigned, for tests
/// of the rejection path).
pub fn build(
    checkpoint_dir: &Path,
    info: &BundleInfo,
    key: Option<&SigningKey>,
) -> Result<Vec<u8>> {
    info.safety.validate()?;
    let policy = policy::checkpoint::load(checkpoint_dir, tch::Device::Cpu)?;
    let mut names: Vec<String> = std::fs::read_dir(checkpoint_dir)
        .map_err(|e| BridgeError::io(checkpoint_dir, e))?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_file())
        .filter_map(|e| e.file_name().to_str().map(str::to_owned))
        .filter(|n| !n.starts_with('.'))
        .collect();
    names.sort();
    let mut files = Vec::new();
    let mut entries = Vec::new();
    for name in names {
        let path = checkpoint_dir.join(&name);
        let data = std::fs::read(&path).map_err(|e| BridgeError::io(&path, e))?;
        entries.push(FileEntry {
            name: name.clone(),
            sha256: sha256_hex(&data),
            bytes: data.len() as u64,
        });
        files.push((name, data));
    }
    let manifest = Manifest {
        format: 1,
        skill: info.skill.clone(),
        source: info.source.clone(),
        heldout_success: info.heldout_success,
        robot_name: policy.meta.robot_name.clone(),
        robot_model_hash: policy.meta.robot_model_hash.clone(),
        policy_hz: policy.meta.sim.control_hz,
        safety: info.safety.clone(),
        files: entries,
    };
    let mut out = content_bytes(&manifest, &files)?;
    match key {
        Some(k) => {
            let digest = Sha256::digest(&out);
            let sig = k.sign(&digest);
            out.push(1);
            out.extend_from_slice(&k.verifying_key().to_bytes());
            out.extend_from_slice(&sig.to_bytes());
        }
        None => out.push(0),
    }
    Ok(out)
}

struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        if n > self.bytes.len() - self.at {
            return Err(BridgeError::Bundle(format!("truncated in {what}")));
        }
        let out = &self.bytes[self.at..self.at + n];
        self.at += n;
        Ok(out)
    }
    fn u32(&mut self, what: &str) -> Result<usize> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
    }
    fn sized(&mut self, what: &str) -> Result<&'a [u8]> {
        let n = self.u32(what)?;
        self.take(n, what)
    }
}

impl Bundle {
    /// Parses bundle bytes (structure only: nothing is trusted yet).
    pub fn parse(bytes: &[u8]) -> Result<Bundle> {
        let mut c = Cursor { bytes, at: 0 };
        if c.take(8, "magic")? != MAGIC {
            return Err(BridgeError::Bundle(
                "not a coevolve bundle (bad magic)".into(),
            ));
        }
        let version = c.take(1, "version")?[0];
        if version != VERSION {
            return Err(BridgeError::Bundle(format!(
                "bundle version {version} (this build reads {VERSION})"
            )));
        }
        let manifest: Manifest = serde_json::from_slice(c.sized("manifest")?)
            .map_err(|e| BridgeError::Bundle(format!("manifest: {e}")))?;
        let n = c.u32("file count")?;
        if n > manifest.files.len() || n > 1024 {
            return Err(BridgeError::Bundle(format!(
                "{n} files, the manifest lists {}",
                manifest.files.len()
            )));
        }
        let mut files = Vec::with_capacity(n);
        for _ in 0..n {
            let name = std::str::from_utf8(c.sized("file name")?)
                .map_err(|_| BridgeError::Bundle("a file name is not UTF-8".into()))?
                .to_string();
            files.push((name, c.sized("file data")?.to_vec()));
        }
        let content_hash = sha256_hex(&bytes[..c.at]);
        let signature = match c.take(1, "signature flag")?[0] {
            0 => None,
            1 => {
                let mut key = [0u8; 32];
                key.copy_from_slice(c.take(32, "public key")?);
                let mut sig = [0u8; 64];
                sig.copy_from_slice(c.take(64, "signature")?);
                let key = VerifyingKey::from_bytes(&key)
                    .map_err(|e| BridgeError::Bundle(format!("signer key is invalid: {e}")))?;
                Some((key, Signature::from_bytes(&sig)))
            }
            f => return Err(BridgeError::Bundle(format!("signature flag {f} (0 or 1)"))),
        };
        if c.at != bytes.len() {
            return Err(BridgeError::Bundle(format!(
                "{} trailing bytes",
                bytes.len() - c.at
            )));
        }
        Ok(Bundle {
            manifest,
            files,
            content_hash,
            signature,
        })
    }

    /// Trust checks, in order: signed, by a trusted key, signature matches the content, every
    /// file matches its manifest hash, built for this robot model, sane safety limits.
    pub fn verify(&self, trusted: &[VerifyingKey], robot_model_hash: &str) -> Result<()> {
        let (key, sig) = self
            .signature
            .as_ref()
            .ok_or_else(|| BridgeError::Bundle("it is unsigned".into()))?;
        if !trusted.contains(key) {
            return Err(BridgeError::Bundle(format!(
                "signed by key {}…, which this controller does not trust",
                &hex(&key.to_bytes())[..16]
            )));
        }
        let digest = decode_hex32(&self.content_hash)?;
        key.verify(&digest, sig).map_err(|_| {
            BridgeError::Bundle("the signature does not match its content (tampered?)".into())
        })?;
        if self.files.len() != self.manifest.files.len() {
            return Err(BridgeError::Bundle(
                "file list differs from the manifest".into(),
            ));
        }
        for ((name, data), entry) in self.files.iter().zip(&self.manifest.files) {
            if *name != entry.name || sha256_hex(data) != entry.sha256 {
                return Err(BridgeError::Bundle(format!(
                    "file `{name}` does not match its manifest hash"
                )));
            }
        }
        if self.manifest.robot_model_hash != robot_model_hash {
            return Err(BridgeError::Bundle(format!(
                "built for robot `{}` (model hash {}…), this controller drives model {}…",
                self.manifest.robot_name,
                self.manifest
                    .robot_model_hash
                    .chars()
                    .take(12)
                    .collect::<String>(),
                robot_model_hash.chars().take(12).collect::<String>()
            )));
        }
        self.manifest.safety.validate()
    }

    /// Loads the bundled checkpoint (after `verify`).
    pub fn load_policy(&self, device: tch::Device) -> Result<policy::Policy> {
        let dir = tempfile::tempdir().map_err(|e| BridgeError::io(std::env::temp_dir(), e))?;
        for (name, data) in &self.files {
            if name.contains('/') || name.contains('\\') || name.starts_with('.') {
                return Err(BridgeError::Bundle(format!(
                    "file name `{name}` is not plain"
                )));
            }
            let path = dir.path().join(name);
            std::fs::write(&path, data).map_err(|e| BridgeError::io(&path, e))?;
        }
        Ok(policy::checkpoint::load(dir.path(), device)?)
    }
}

fn decode_hex32(s: &str) -> Result<[u8; 32]> {
    let mut out = [0u8; 32];
    if s.len() != 64 {
        return Err(BridgeError::Bundle("content hash is malformed".into()));
    }
    for (i, o) in out.iter_mut().enumerate() {
        *o = u8::from_str_radix(&s[2 * i..2 * i + 2], 16)
            .map_err(|_| BridgeError::Bundle("content hash is malformed".into()))?;
    }
    Ok(out)
}
