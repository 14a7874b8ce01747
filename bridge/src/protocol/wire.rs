//! The byte-level codec under every message: a 4-byte header (`b"CE"`, the protocol version,
//! the message kind), then little-endian fields. Sequences carry a `u32` length; decoding
//! checks every length against the bytes left, so hostile input cannot allocate more than it
//! sent, and a message must be consumed exactly (trailing bytes are an error).

use crate::error::{BridgeError, Result};

/// The first two bytes of every message.
pub const MAGIC: [u8; 2] = *b"CE";
/// The wire version this build speaks; a message with any other version is rejected.
pub const VERSION: u8 = 2;

/// Appends fields to a message buffer.
#[derive(Debug, Default)]
pub struct Writer {
    pub bytes: Vec<u8>,
}

impl Writer {
    pub fn new(kind: u8) -> Writer {
        let mut bytes = Vec::with_capacity(64);
        bytes.extend_from_slice(&MAGIC);
        bytes.push(VERSION);
        bytes.push(kind);
        Writer { bytes }
    }

    pub fn u8(&mut self, v: u8) {
        self.bytes.push(v);
    }

    pub fn u32(&mut self, v: u32) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }

    pub fn u64(&mut self, v: u64) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }

    pub fn f32(&mut self, v: f32) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }

    pub fn f64(&mut self, v: f64) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }

    pub fn bool(&mut self, v: bool) {
        self.u8(u8::from(v));
    }

    fn len(&mut self, n: usize) {
        // Messages are far below 4 GiB; a longer field is a programming error upstream.
        self.u32(u32::try_from(n).unwrap_or(u32::MAX));
    }

    pub fn f64s(&mut self, v: &[f64]) {
        self.len(v.len());
        for x in v {
            self.f64(*x);
        }
    }

    pub fn f32s(&mut self, v: &[f32]) {
        self.len(v.len());
        for x in v {
            self.f32(*x);
        }
    }

    pub fn bytes(&mut self, v: &[u8]) {
        self.len(v.len());
        self.bytes.extend_from_slice(v);
    }

    pub fn str(&mut self, v: &str) {
        self.bytes(v.as_bytes());
    }
}

/// Reads fields back, failing with the message name and field on any inconsistency.
#[derive(Debug)]
pub struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    message: &'static str,
}

impl<'a> Reader<'a> {
    /// Checks the header (magic, version, kind) and positions after it.
    pub fn new(bytes: &'a [u8], kind: u8, message: &'static str) -> Result<Reader<'a>> {
        let mut r = Reader {
            bytes,
            at: 0,
            message,
        };
        let head = r.take(4, "header")?;
        if head[..2] != MAGIC {
            return Err(r.error("header", "not a coevolve message (bad magic)"));
        }
        if head[2] != VERSION {
            return Err(r.error(
                "header",
                format!("wire version {} (this build speaks {VERSION})", head[2]),
            ));
        }
        if head[3] != kind {
            return Err(r.error(
                "header",
                format!("message kind {} where {kind} was expected", head[3]),
            ));
        }
        Ok(r)
    }

    /// An error naming this message and `field`.
    pub fn error(&self, field: &str, problem: impl Into<String>) -> BridgeError {
        BridgeError::Decode {
            message: self.message,
            field: field.to_string(),
            problem: problem.into(),
        }
    }

    fn take(&mut self, n: usize, field: &str) -> Result<&'a [u8]> {
        let left = self.bytes.len() - self.at;
        if n > left {
            return Err(self.error(field, format!("needs {n} bytes, {left} left")));
        }
        let out = &self.bytes[self.at..self.at + n];
        self.at += n;
        Ok(out)
    }

    fn array<const N: usize>(&mut self, field: &str) -> Result<[u8; N]> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N, field)?);
        Ok(out)
    }

    pub fn u8(&mut self, field: &str) -> Result<u8> {
        Ok(self.array::<1>(field)?[0])
    }

    pub fn u32(&mut self, field: &str) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array(field)?))
    }

    pub fn u64(&mut self, field: &str) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array(field)?))
    }

    pub fn f32(&mut self, field: &str) -> Result<f32> {
        Ok(f32::from_le_bytes(self.array(field)?))
    }

    pub fn f64(&mut self, field: &str) -> Result<f64> {
        Ok(f64::from_le_bytes(self.array(field)?))
    }

    pub fn bool(&mut self, field: &str) -> Result<bool> {
        match self.u8(field)? {
            0 => Ok(false),
            1 => Ok(true),
            v => Err(self.error(field, format!("boolean byte {v} (0 or 1 expected)"))),
        }
    }

    /// A length prefix for elements of `elem_size` bytes, checked against the bytes left.
    fn len(&mut self, elem_size: usize, field: &str) -> Result<usize> {
        let n = self.u32(field)? as usize;
        let left = self.bytes.len() - self.at;
        if n.saturating_mul(elem_size.max(1)) > left {
            return Err(self.error(
                field,
                format!("claims {n} elements of {elem_size} bytes, {left} bytes left"),
            ));
        }
        Ok(n)
    }

    pub fn f64s(&mut self, field: &str) -> Result<Vec<f64>> {
        let n = self.len(8, field)?;
        (0..n).map(|_| self.f64(field)).collect()
    }

    pub fn f32s(&mut self, field: &str) -> Result<Vec<f32>> {
        let n = self.len(4, field)?;
        (0..n).map(|_| self.f32(field)).collect()
    }

    pub fn bytes(&mut self, field: &str) -> Result<Vec<u8>> {
        let n = self.len(1, field)?;
        Ok(self.take(n, field)?.to_vec())
    }

    pub fn str(&mut self, field: &str) -> Result<String> {
        let raw = self.bytes(field)?;
        String::from_utf8(raw).map_err(|_| self.error(field, "is not UTF-8"))
    }

    /// An element count for a sequence of records of at least `min_size` bytes each.
    pub fn count(&mut self, min_size: usize, field: &str) -> Result<usize> {
        self.len(min_size, field)
    }

    /// Ends decoding: every byte must have been consumed.
    pub fn finish(self) -> Result<()> {
        let left = self.bytes.len() - self.at;
        if left != 0 {
            return Err(self.error("end", format!("{left} trailing bytes")));
        }
        Ok(())
    }
}
