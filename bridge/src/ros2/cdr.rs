//! OMG CDR (XCDR1, little endian) for the ROS 2 messages the bridge speaks, the way rmw_zenoh
//! puts them on the wire: a 4-byte encapsulation header (`00 01 00 00`), then the fields with
//! every primitive aligned to its size relative to the end of that header; strings as a `u32`
//! length counting a terminating NUL; sequences as a `u32` count then the elements.

use crate::error::{BridgeError, Result};

/// CDR little-endian encapsulation.
pub const ENCAPSULATION_LE: [u8; 4] = [0x00, 0x01, 0x00, 0x00];

#[derive(Debug)]
pub struct CdrWriter {
    bytes: Vec<u8>,
}

impl Default for CdrWriter {
    fn default() -> Self {
        CdrWriter::new()
    }
}

impl CdrWriter {
    pub fn new() -> CdrWriter {
        CdrWriter {
            bytes: ENCAPSULATION_LE.to_vec(),
        }
    }

    fn align(&mut self, n: usize) {
        while !(self.bytes.len() - 4).is_multiple_of(n) {
            self.bytes.push(0);
        }
    }

    pub fn i32(&mut self, v: i32) {
        self.align(4);
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }

    pub fn u32(&mut self, v: u32) {
        self.align(4);
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }

    pub fn f64(&mut self, v: f64) {
        self.align(8);
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }

    pub fn len(&mut self, n: usize) {
        self.u32(u32::try_from(n).unwrap_or(u32::MAX));
    }

    pub fn string(&mut self, s: &str) {
        self.len(s.len() + 1);
        self.bytes.extend_from_slice(s.as_bytes());
        self.bytes.push(0);
    }

    pub fn strings(&mut self, v: &[String]) {
        self.len(v.len());
        for s in v {
            self.string(s);
        }
    }

    pub fn f64s(&mut self, v: &[f64]) {
        self.len(v.len());
        for x in v {
            self.f64(*x);
        }
    }

    pub fn finish(self) -> Vec<u8> {
        self.bytes
    }
}

#[derive(Debug)]
pub struct CdrReader<'a> {
    bytes: &'a [u8],
    at: usize,
    type_name: &'static str,
}

impl<'a> CdrReader<'a> {
    pub fn new(bytes: &'a [u8], type_name: &'static str) -> Result<CdrReader<'a>> {
        let r = CdrReader {
            bytes,
            at: 4,
            type_name,
        };
        if bytes.len() < 4 || bytes[..2] != ENCAPSULATION_LE[..2] {
            return Err(r.error("encapsulation", "not little-endian plain CDR (00 01)"));
        }
        Ok(r)
    }

    fn error(&self, field: &str, problem: impl Into<String>) -> BridgeError {
        BridgeError::Decode {
            message: self.type_name,
            field: field.to_string(),
            problem: problem.into(),
        }
    }

    fn align(&mut self, n: usize, field: &str) -> Result<()> {
        while !(self.at - 4).is_multiple_of(n) {
            if self.at >= self.bytes.len() {
                return Err(self.error(field, "truncated"));
            }
            self.at += 1;
        }
        Ok(())
    }

    fn take(&mut self, n: usize, field: &str) -> Result<&'a [u8]> {
        if n > self.bytes.len() - self.at {
            return Err(self.error(field, "truncated"));
        }
        let out = &self.bytes[self.at..self.at + n];
        self.at += n;
        Ok(out)
    }

    pub fn i32(&mut self, field: &str) -> Result<i32> {
        self.align(4, field)?;
        let b = self.take(4, field)?;
        Ok(i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub fn u32(&mut self, field: &str) -> Result<u32> {
        self.align(4, field)?;
        let b = self.take(4, field)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub fn f64(&mut self, field: &str) -> Result<f64> {
        self.align(8, field)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(self.take(8, field)?);
        Ok(f64::from_le_bytes(a))
    }

    /// A count for elements of at least `min_size` bytes each, checked against what is left.
    pub fn count(&mut self, min_size: usize, field: &str) -> Result<usize> {
        let n = self.u32(field)? as usize;
        if n.saturating_mul(min_size.max(1)) > self.bytes.len() - self.at {
            return Err(self.error(field, format!("claims {n} elements")));
        }
        Ok(n)
    }

    pub fn string(&mut self, field: &str) -> Result<String> {
        let n = self.count(1, field)?;
        let raw = self.take(n, field)?;
        match raw.split_last() {
            Some((0, text)) => {
                String::from_utf8(text.to_vec()).map_err(|_| self.error(field, "is not UTF-8"))
            }
            _ => Err(self.error(field, "string without its terminating NUL")),
        }
    }

    pub fn strings(&mut self, field: &str) -> Result<Vec<String>> {
        let n = self.count(5, field)?;
        (0..n).map(|_| self.string(field)).collect()
    }

    pub fn f64s(&mut self, field: &str) -> Result<Vec<f64>> {
        let n = self.count(8, field)?;
        (0..n).map(|_| self.f64(field)).collect()
    }

    /// Everything consumed (trailing alignment padding up to 8 bytes aside).
    pub fn finish(self) -> Result<()> {
        let left = self.bytes.len() - self.at;
        if left > 0 && (left >= 8 || self.bytes[self.at..].iter().any(|b| *b != 0)) {
            return Err(self.error("end", format!("{left} trailing bytes")));
        }
        Ok(())
    }
}
