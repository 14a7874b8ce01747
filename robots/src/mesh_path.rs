//! Resolving URDF mesh filenames (`package://`, `file://`, relative, absolute) to paths.

use std::path::{Path, PathBuf};

/// Where a mesh filename points. `exists` is false when no candidate was found on disk;
/// `path` is then the most plausible place we looked.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Resolved {
    pub path: PathBuf,
    pub exists: bool,
}

/// Resolves `filename` as written in a URDF.
///
/// - `package://pkg/rest`: searches upward from `base_dir` for a folder named `pkg` (an
///   ancestor named `pkg`, or an ancestor's child named `pkg`), then `ROS_PACKAGE_PATH`
///   entries (`entry`, `entry/pkg`, `entry/*/pkg`), then `AMENT_PREFIX_PATH` (`prefix/share/pkg`).
/// - `file:///abs` is absolute; `file://rel` and plain relative paths are relative to
///   `base_dir` (the URDF's folder; the current directory when `None`).
pub(crate) fn resolve(filename: &str, base_dir: Option<&Path>) -> Resolved {
    let base = absolute_base(base_dir);
    if let Some(rest) = filename.strip_prefix("package://") {
        let (package, inner) = rest.split_once('/').unwrap_or((rest, ""));
        return resolve_package(package, inner, &base);
    }
    let plain = filename.strip_prefix("file://").unwrap_or(filename);
    let path = Path::new(plain);
    let path = if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    };
    Resolved {
        exists: path.is_file(),
        path,
    }
}

fn absolute_base(base_dir: Option<&Path>) -> PathBuf {
    let base = match base_dir {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::path::absolute(&base).unwrap_or(base)
}

fn resolve_package(package: &str, inner: &str, base: &Path) -> Resolved {
    let candidates = package_dirs(package, base);
    for dir in &candidates {
        let path = dir.join(inner);
        if path.is_file() {
            return Resolved { path, exists: true };
        }
    }
    let guess = candidates
        .first()
        .cloned()
        .unwrap_or_else(|| base.join(package));
    Resolved {
        path: guess.join(inner),
        exists: false,
    }
}

/// Existing directories that may be the root of ROS package `package`, best first.
fn package_dirs(package: &str, base: &Path) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    let mut push = |dir: PathBuf| {
        if dir.is_dir() && !dirs.contains(&dir) {
            dirs.push(dir);
        }
    };
    for ancestor in base.ancestors() {
        if ancestor.file_name().is_some_and(|n| n == package) {
            push(ancestor.to_path_buf());
        }
        push(ancestor.join(package));
    }
    if let Some(paths) = std::env::var_os("ROS_PACKAGE_PATH") {
        for entry in std::env::split_paths(&paths) {
            if entry.file_name().is_some_and(|n| n == package) {
                push(entry.clone());
            }
            push(entry.join(package));
            if let Ok(children) = std::fs::read_dir(&entry) {
                for child in children.flatten() {
                    push(child.path().join(package));
                }
            }
        }
    }
    if let Some(prefixes) = std::env::var_os("AMENT_PREFIX_PATH") {
        for prefix in std::env::split_paths(&prefixes) {
            push(prefix.join("share").join(package));
        }
    }
    dirs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_found_as_ancestor_and_as_sibling() {
        let tmp = tempfile::tempdir().unwrap();
        let pkg = tmp.path().join("ws/src/my_robot");
        std::fs::create_dir_all(pkg.join("urdf")).unwrap();
        std::fs::create_dir_all(pkg.join("meshes")).unwrap();
        std::fs::write(pkg.join("meshes/a.stl"), b"solid a\nendsolid a\n").unwrap();
        let urdf_dir = pkg.join("urdf");

        let r = resolve("package://my_robot/meshes/a.stl", Some(&urdf_dir));
        assert!(r.exists, "{r:?}");
        assert_eq!(r.path, pkg.join("meshes/a.stl"));

        // A sibling package found from a folder above it.
        let other = tmp.path().join("ws/src/other/urdf");
        std::fs::create_dir_all(&other).unwrap();
        let r = resolve(
            "package://my_robot/meshes/a.stl",
            Some(&tmp.path().join("ws/src")),
        );
        assert!(r.exists, "{r:?}");
        let r = resolve("package://my_robot/meshes/b.stl", Some(&other));
        assert!(!r.exists);
        assert!(r.path.ends_with("my_robot/meshes/b.stl"), "{r:?}");
    }

    #[test]
    fn file_and_relative_paths() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("m.obj"), b"v 0 0 0\n").unwrap();
        let abs = tmp.path().join("m.obj");
        let uri = format!("file://{}", abs.display());
        assert!(resolve(&uri, None).exists);
        let r = resolve("m.obj", Some(tmp.path()));
        assert!(r.exists);
        assert_eq!(r.path, abs);
        assert!(!resolve("missing.obj", Some(tmp.path())).exists);
    }
}
