//! Ed25519 signing keys for policy bundles: generation, and one-line text files
//! (`coevolve-ed25519-secret-v1 <hex seed>`, `coevolve-ed25519-public-v1 <hex key>`) that are
//! written atomically (the secret one readable by its owner only) and read with errors that
//! name the file and the problem.

use std::path::{Path, PathBuf};

use ed25519_dalek::{SigningKey, VerifyingKey};

use crate::error::{BridgeError, Result};

const SECRET_TAG: &str = "coevolve-ed25519-secret-v1";
const PUBLIC_TAG: &str = "coevolve-ed25519-public-v1";

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex<const N: usize>(s: &str) -> Option<[u8; N]> {
    if s.len() != 2 * N || !s.is_ascii() {
        return None;
    }
    let mut out = [0u8; N];
    for (i, o) in out.iter_mut().enumerate() {
        *o = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

/// A fresh key pair from the operating system's random source.
pub fn generate() -> SigningKey {
    SigningKey::generate(&mut rand::rngs::OsRng)
}

fn key_error(path: &Path, problem: impl Into<String>) -> BridgeError {
    BridgeError::Key {
        path: path.to_path_buf(),
        problem: problem.into(),
    }
}

fn write_atomic(path: &Path, text: &str, secret: bool) -> Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| BridgeError::io(dir, e))?;
    let tmp = dir.join(format!(
        ".{}.tmp",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("key")
    ));
    std::fs::write(&tmp, text).map_err(|e| BridgeError::io(&tmp, e))?;
    #[cfg(unix)]
    if secret {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o600))
            .map_err(|e| BridgeError::io(&tmp, e))?;
    }
    #[cfg(not(unix))]
    let _ = secret;
    std::fs::rename(&tmp, path).map_err(|e| BridgeError::io(path, e))
}

/// Writes `<stem>.key` (secret) and `<stem>.pub` (public); refuses to overwrite a secret key.
pub fn save_pair(key: &SigningKey, stem: &Path) -> Result<(PathBuf, PathBuf)> {
    let secret = stem.with_extension("key");
    let public = stem.with_extension("pub");
    if secret.exists() {
        return Err(key_error(
            &secret,
            "exists already; refusing to overwrite a signing key",
        ));
    }
    write_atomic(
        &secret,
        &format!("{SECRET_TAG} {}\n", hex(&key.to_bytes())),
        true,
    )?;
    write_atomic(
        &public,
        &format!("{PUBLIC_TAG} {}\n", hex(&key.verifying_key().to_bytes())),
        false,
    )?;
    Ok((secret, public))
}

fn read_tagged<const N: usize>(path: &Path, tag: &str) -> Result<[u8; N]> {
    let text = std::fs::read_to_string(path).map_err(|e| BridgeError::io(path, e))?;
    let mut parts = text.split_whitespace();
    match (parts.next(), parts.next(), parts.next()) {
        (Some(t), Some(h), None) if t == tag => unhex::<N>(h)
            .ok_or_else(|| key_error(path, format!("the key must be {} hex digits", 2 * N))),
        (Some(t), _, _) if t == SECRET_TAG || t == PUBLIC_TAG => Err(key_error(
            path,
            format!(
                "holds a `{t}` key where a `{tag}` one is expected (the other half of the pair?)"
            ),
        )),
        _ => Err(key_error(path, format!("expected one line `{tag} <hex>`"))),
    }
}

pub fn load_signing_key(path: &Path) -> Result<SigningKey> {
    Ok(SigningKey::from_bytes(&read_tagged::<32>(
        path, SECRET_TAG,
    )?))
}

pub fn load_verifying_key(path: &Path) -> Result<VerifyingKey> {
    let bytes = read_tagged::<32>(path, PUBLIC_TAG)?;
    VerifyingKey::from_bytes(&bytes)
        .map_err(|e| key_error(path, format!("not a valid ed25519 public key: {e}")))
}
