//! STL meshes (binary and ASCII) → vertices, for collision hulls. Errors name the file and,
//! for ASCII, the line.

use std::path::Path;

use crate::error::{Result, RobotError};

/// The triangles of a mesh file: three vertices each, in the file's units.
#[derive(Clone, Debug, PartialEq)]
pub struct MeshData {
    pub triangles: Vec<[[f32; 3]; 3]>,
}

impl MeshData {
    /// Every vertex (with repeats), for a convex hull.
    pub fn vertices(&self) -> impl Iterator<Item = [f32; 3]> + '_ {
        self.triangles.iter().flatten().copied()
    }
}

fn bad(path: &Path, problem: impl Into<String>) -> RobotError {
    RobotError::Mesh {
        path: path.to_owned(),
        problem: problem.into(),
    }
}

/// Reads a binary or ASCII STL file. A binary file is recognised by its size (84 bytes +
/// 50 per triangle, the count stored at byte 80), whatever its header says; anything else must
/// be ASCII STL.
pub fn read_stl(path: &Path) -> Result<MeshData> {
    let bytes = std::fs::read(path).map_err(|e| bad(path, format!("cannot read: {e}")))?;
    let mesh = match binary_count(&bytes) {
        Some(n) => binary(&bytes, n),
        None => ascii(path, &bytes)?,
    };
    if mesh.triangles.is_empty() {
        return Err(bad(path, "the mesh has no triangles"));
    }
    if mesh.vertices().flatten().any(|v| !v.is_finite()) {
        return Err(bad(path, "a vertex coordinate is not a finite number"));
    }
    Ok(mesh)
}

fn binary_count(bytes: &[u8]) -> Option<usize> {
    let count: [u8; 4] = bytes.get(80..84)?.try_into().ok()?;
    let n = u32::from_le_bytes(count) as usize;
    (bytes.len() == 84 + 50 * n).then_some(n)
}

fn binary(bytes: &[u8], n: usize) -> MeshData {
    let f =
        |at: usize| f32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
    let triangles = (0..n)
        .map(|t| {
            // 12 bytes of normal, then three vertices of 12 bytes, then 2 attribute bytes.
            let base = 84 + 50 * t + 12;
            let v = |k: usize| [f(base + 12 * k), f(base + 12 * k + 4), f(base + 12 * k + 8)];
            [v(0), v(1), v(2)]
        })
        .collect();
    MeshData { triangles }
}

fn ascii(path: &Path, bytes: &[u8]) -> Result<MeshData> {
    let text = std::str::from_utf8(bytes).map_err(|_| {
        bad(
            path,
            "neither binary STL (its size does not match the triangle count at byte 80) nor ASCII text",
        )
    })?;
    if !text.trim_start().starts_with("solid") {
        return Err(bad(path, "ASCII STL must start with `solid` (and a binary STL's size must be 84 + 50 × its triangle count)"));
    }
    let mut triangles = Vec::new();
    let mut current: Vec<[f32; 3]> = Vec::with_capacity(3);
    for (i, line) in text.lines().enumerate() {
        let mut words = line.split_whitespace();
        match words.next() {
            Some("vertex") => {
                let coords: Vec<f32> = words.filter_map(|w| w.parse().ok()).collect();
                let [x, y, z] = coords[..] else {
                    return Err(bad(
                        path,
                        format!(
                            "line {}: a vertex needs three numbers: `{}`",
                            i + 1,
                            line.trim()
                        ),
                    ));
                };
                current.push([x, y, z]);
            }
            Some("endloop") => {
                let Ok(triangle) = <[[f32; 3]; 3]>::try_from(current.as_slice()) else {
                    return Err(bad(
                        path,
                        format!(
                            "line {}: a facet has {} vertices, not 3",
                            i + 1,
                            current.len()
                        ),
                    ));
                };
                triangles.push(triangle);
                current.clear();
            }
            _ => {}
        }
    }
    Ok(MeshData { triangles })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TETRA: [[[f32; 3]; 3]; 4] = [
        [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
        [[0.0, 0.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]],
        [[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
        [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 0.0]],
    ];

    /// A binary STL of `triangles` (header that starts with `solid`, as some exporters write).
    pub fn binary_stl(triangles: &[[[f32; 3]; 3]]) -> Vec<u8> {
        let mut out = b"solid exported by a CAD tool".to_vec();
        out.resize(80, b' ');
        out.extend((triangles.len() as u32).to_le_bytes());
        for t in triangles {
            out.extend([0u8; 12]);
            for v in t {
                for c in v {
                    out.extend(c.to_le_bytes());
                }
            }
            out.extend([0u8; 2]);
        }
        out
    }

    fn ascii_stl(triangles: &[[[f32; 3]; 3]]) -> String {
        let mut s = "solid tetra\n".to_owned();
        for t in triangles {
            s += "  facet normal 0 0 0\n    outer loop\n";
            for v in t {
                s += &format!("      vertex {} {} {}\n", v[0], v[1], v[2]);
            }
            s += "    endloop\n  endfacet\n";
        }
        s + "endsolid tetra\n"
    }

    #[test]
    fn binary_and_ascii_give_the_same_triangles() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let (b, a) = (dir.path().join("b.stl"), dir.path().join("a.stl"));
        std::fs::write(&b, binary_stl(&TETRA)).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(&a, ascii_stl(&TETRA)).unwrap_or_else(|e| panic!("{e}"));
        for path in [&b, &a] {
            let mesh = read_stl(path).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(mesh.triangles, TETRA.to_vec());
        }
    }

    #[test]
    fn malformed_files_name_the_file_and_the_problem() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let cases: [(&str, Vec<u8>, &str); 4] = [
            (
                "truncated.stl",
                binary_stl(&TETRA)[..150].to_vec(),
                "its size does not match",
            ),
            (
                "bad_vertex.stl",
                ascii_stl(&TETRA)
                    .replacen("vertex 1 0 0", "vertex 1 zero 0", 1)
                    .into_bytes(),
                "line 5: a vertex needs three numbers",
            ),
            (
                "empty.stl",
                b"solid nothing\nendsolid nothing\n".to_vec(),
                "no triangles",
            ),
            (
                "two.stl",
                ascii_stl(&TETRA)
                    .replacen("      vertex 0 0 0\n", "", 1)
                    .into_bytes(),
                "has 2 vertices",
            ),
        ];
        for (name, bytes, expected) in cases {
            let path = dir.path().join(name);
            std::fs::write(&path, bytes).unwrap_or_else(|e| panic!("{e}"));
            let err = read_stl(&path).map(|_| ()).unwrap_err().to_string();
            assert!(
                err.contains(name) && err.contains(expected),
                "{name}: {err}"
            );
        }
    }
}
