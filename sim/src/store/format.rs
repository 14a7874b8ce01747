//! The byte layout of one episode file and its checks: magic, format version, lengths, the
//! JSON header, the postcard body and the SHA-256 footer (see the `store` module docs).

use std::path::Path;

use sha2::{Digest, Sha256};

use super::wire;
use super::{EpisodeFile, FileHeader, StoreProblem};
use crate::episode::Episode;

/// The first 8 bytes of every episode file.
pub const MAGIC: [u8; 8] = *b"COEVEP01";
/// The format version this build writes, and the only one it reads.
pub const FORMAT_VERSION: u32 = 1;
/// Bytes of the SHA-256 footer.
pub const CHECKSUM_LEN: usize = 32;

/// Encodes a whole file: `header` (whose `episode_count` and `format_version` must describe
/// `episodes`; [`FileHeader::new`] does) and the episodes.
pub fn encode_file(header: &FileHeader, episodes: &[Episode]) -> Result<Vec<u8>, StoreProblem> {
    let header_json = serde_json::to_vec(header)
        .map_err(|e| StoreProblem::Header(format!("cannot encode: {e}")))?;
    let header_len = u32::try_from(header_json.len())
        .map_err(|_| StoreProblem::Header(format!("{} bytes is over 4 GiB", header_json.len())))?;
    let body = wire::encode_body(episodes)?;
    let mut bytes =
        Vec::with_capacity(MAGIC.len() + 16 + header_json.len() + body.len() + CHECKSUM_LEN);
    bytes.extend_from_slice(&MAGIC);
    bytes.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    bytes.extend_from_slice(&header_len.to_le_bytes());
    bytes.extend_from_slice(&header_json);
    bytes.extend_from_slice(&(body.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&body);
    let checksum = Sha256::digest(&bytes);
    bytes.extend_from_slice(&checksum);
    Ok(bytes)
}

/// Decodes and verifies a whole file held in memory; `path` is where it came from (kept in the
/// result, used in no check).
pub fn decode_file(path: &Path, bytes: &[u8]) -> Result<EpisodeFile, StoreProblem> {
    let layout = Layout::parse(bytes)?;
    let covered = &bytes[..layout.footer_at];
    let stored = &bytes[layout.footer_at..];
    let computed = Sha256::digest(covered);
    if computed.as_slice() != stored {
        return Err(StoreProblem::ChecksumMismatch {
            stored: hex(stored),
            computed: hex(&computed),
        });
    }
    let header: FileHeader = serde_json::from_slice(&bytes[layout.header.clone()])
        .map_err(|e| StoreProblem::Header(format!("not a valid file header: {e}")))?;
    if header.format_version != layout.version {
        return Err(StoreProblem::Header(format!(
            "says format version {}, the file's version field says {}",
            header.format_version, layout.version
        )));
    }
    let episodes = wire::decode_body(&bytes[layout.body])?;
    if episodes.len() != header.episode_count {
        return Err(StoreProblem::Body(format!(
            "holds {} episodes, the header says {}",
            episodes.len(),
            header.episode_count
        )));
    }
    Ok(EpisodeFile {
        path: path.to_path_buf(),
        byte_len: bytes.len() as u64,
        header,
        episodes,
    })
}

/// Where the parts of a file lie, from its fixed-size fields (nothing verified beyond sizes).
struct Layout {
    version: u32,
    header: std::ops::Range<usize>,
    body: std::ops::Range<usize>,
    footer_at: usize,
}

impl Layout {
    fn parse(bytes: &[u8]) -> Result<Layout, StoreProblem> {
        let len = bytes.len();
        let truncated = |part: &'static str, needed: u64| StoreProblem::Truncated {
            part,
            len: len as u64,
            needed,
        };
        let magic = bytes.get(..MAGIC.len()).unwrap_or(bytes);
        if magic != &MAGIC[..magic.len()] {
            return Err(StoreProblem::BadMagic {
                found: magic.escape_ascii().to_string(),
            });
        }
        if magic.len() < MAGIC.len() {
            return Err(truncated("magic", MAGIC.len() as u64));
        }
        let mut at = MAGIC.len();
        let version =
            u32::from_le_bytes(field(bytes, &mut at).ok_or(truncated("format version", 12))?);
        if version != FORMAT_VERSION {
            return Err(StoreProblem::UnsupportedVersion {
                found: version,
                supported: FORMAT_VERSION,
            });
        }
        let header_len =
            u32::from_le_bytes(field(bytes, &mut at).ok_or(truncated("header length", 16))?);
        let header = span(at, u64::from(header_len), len).map_err(|n| truncated("header", n))?;
        at = header.end;
        let body_len_at = at;
        let body_len = u64::from_le_bytes(
            field(bytes, &mut at).ok_or(truncated("body length", body_len_at as u64 + 8))?,
        );
        let body = span(at, body_len, len).map_err(|n| truncated("body", n))?;
        let footer_at = body.end;
        let end = span(footer_at, CHECKSUM_LEN as u64, len)
            .map_err(|n| truncated("checksum footer", n))?
            .end;
        if len > end {
            return Err(StoreProblem::TrailingBytes {
                extra: (len - end) as u64,
            });
        }
        Ok(Layout {
            version,
            header,
            body,
            footer_at,
        })
    }
}

/// Reads the fixed-size little-endian field at `*at` and advances past it.
fn field<const N: usize>(bytes: &[u8], at: &mut usize) -> Option<[u8; N]> {
    let value = bytes.get(*at..at.checked_add(N)?)?.try_into().ok()?;
    *at += N;
    Some(value)
}

/// The range `start..start + len` if a file of `file_len` bytes holds it; otherwise the file
/// length it would need.
fn span(start: usize, len: u64, file_len: usize) -> Result<std::ops::Range<usize>, u64> {
    let end = (start as u64).saturating_add(len);
    if end > file_len as u64 {
        return Err(end);
    }
    // `end <= file_len`, so it fits in usize.
    Ok(start..end as usize)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
