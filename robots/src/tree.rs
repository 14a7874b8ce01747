//! Structural checks of a parsed URDF: unique names, existing links, one root, no loops; and
//! the topological joint order.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};

use crate::error::{Result, RobotError};
use crate::model::LinkId;

/// The tree structure of a URDF, in terms of the document's link and joint indices.
#[derive(Debug)]
pub(crate) struct Topology {
    pub root: LinkId,
    /// Indices into the URDF's joints, parents before children; among joints that are ready
    /// at the same time, document order is kept.
    pub joint_order: Vec<usize>,
    /// `(parent, child)` link indices, per URDF joint index.
    pub parent_child: Vec<(LinkId, LinkId)>,
}

pub(crate) fn topology(robot: &urdf_rs::Robot, file: &str) -> Result<Topology> {
    if robot.links.is_empty() {
        return Err(RobotError::NoLinks { file: file.into() });
    }
    let link_index = unique_index(robot.links.iter().map(|l| l.name.as_str()), file, "link")?;
    unique_index(robot.joints.iter().map(|j| j.name.as_str()), file, "joint")?;

    let lookup = |joint: &urdf_rs::Joint, field: &'static str, name: &str| {
        link_index
            .get(name)
            .copied()
            .ok_or_else(|| RobotError::UnknownLink {
                file: file.into(),
                joint: joint.name.clone(),
                field,
                link: name.into(),
            })
    };
    let mut parent_child = Vec::with_capacity(robot.joints.len());
    let mut parent_joint: Vec<Option<usize>> = vec![None; robot.links.len()];
    for (index, joint) in robot.joints.iter().enumerate() {
        let parent = lookup(joint, "parent", &joint.parent.link)?;
        let child = lookup(joint, "child", &joint.child.link)?;
        let cycle = |problem: String| RobotError::KinematicCycle {
            file: file.into(),
            link: robot.links[child].name.clone(),
            problem,
        };
        if parent == child {
            return Err(cycle(format!(
                "joint {:?} connects the link to itself",
                joint.name
            )));
        }
        if let Some(other) = parent_joint[child] {
            return Err(cycle(format!(
                "child of both joint {:?} and joint {:?} (closed kinematic loop)",
                robot.joints[other].name, joint.name
            )));
        }
        parent_joint[child] = Some(index);
        parent_child.push((parent, child));
    }

    let roots: Vec<LinkId> = (0..robot.links.len())
        .filter(|&l| parent_joint[l].is_none())
        .collect();
    let joint_order = order_from(&roots, &parent_child, robot.joints.len());
    if joint_order.len() < robot.joints.len() {
        return Err(cycle_error(robot, file, &parent_joint, &parent_child));
    }
    match roots.as_slice() {
        [root] => Ok(Topology {
            root: *root,
            joint_order,
            parent_child,
        }),
        _ => Err(RobotError::MultipleRoots {
            file: file.into(),
            roots: roots.iter().map(|&l| robot.links[l].name.clone()).collect(),
        }),
    }
}

/// Maps names to indices; errors on the first duplicate.
fn unique_index<'a>(
    names: impl Iterator<Item = &'a str>,
    file: &str,
    element: &'static str,
) -> Result<HashMap<&'a str, usize>> {
    let mut index = HashMap::new();
    for (i, name) in names.enumerate() {
        if index.insert(name, i).is_some() {
            return Err(RobotError::DuplicateName {
                file: file.into(),
                element,
                name: name.into(),
            });
        }
    }
    Ok(index)
}

/// Kahn's algorithm from the roots, picking the lowest document index among ready joints.
fn order_from(roots: &[LinkId], parent_child: &[(LinkId, LinkId)], n_joints: usize) -> Vec<usize> {
    let mut children_of: HashMap<LinkId, Vec<usize>> = HashMap::new();
    for (j, &(parent, _)) in parent_child.iter().enumerate() {
        children_of.entry(parent).or_default().push(j);
    }
    let mut ready: BinaryHeap<Reverse<usize>> = roots
        .iter()
        .flat_map(|r| children_of.get(r).into_iter().flatten())
        .map(|&j| Reverse(j))
        .collect();
    let mut order = Vec::with_capacity(n_joints);
    while let Some(Reverse(j)) = ready.pop() {
        order.push(j);
        let child = parent_child[j].1;
        for &next in children_of.get(&child).into_iter().flatten() {
            ready.push(Reverse(next));
        }
    }
    order
}

/// Builds the error for links unreachable from any root: they lie on a directed cycle (or
/// hang below one). Follows parent joints from such a link until a link repeats.
fn cycle_error(
    robot: &urdf_rs::Robot,
    file: &str,
    parent_joint: &[Option<usize>],
    parent_child: &[(LinkId, LinkId)],
) -> RobotError {
    let reached: HashSet<LinkId> = {
        let mut reached = HashSet::new();
        for (l, p) in parent_joint.iter().enumerate() {
            if p.is_none() {
                reached.insert(l);
            }
        }
        let mut changed = true;
        while changed {
            changed = false;
            for &(parent, child) in parent_child {
                if reached.contains(&parent) && reached.insert(child) {
                    changed = true;
                }
            }
        }
        reached
    };
    let start = (0..robot.links.len())
        .find(|l| !reached.contains(l))
        .unwrap_or(0);
    let mut seen = Vec::new();
    let mut link = start;
    while !seen.contains(&link) {
        seen.push(link);
        match parent_joint[link] {
            Some(j) => link = parent_child[j].0,
            None => break,
        }
    }
    let first = seen.iter().position(|&l| l == link).unwrap_or(0);
    let cycle: Vec<&str> = seen[first..]
        .iter()
        .rev()
        .map(|&l| robot.links[l].name.as_str())
        .collect();
    RobotError::KinematicCycle {
        file: file.into(),
        link: robot.links[link].name.clone(),
        problem: format!("joints form a loop through links {}", cycle.join(" -> ")),
    }
}
