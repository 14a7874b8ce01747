//! The skill tree: skills defined in TOML (predicate, instructions, prerequisites, mastery
//! threshold on fixed held-out seeds, budgets, task-generator ranges), validated with errors
//! that name the file, the skill and the field; prerequisite cycles are reported with their
//! path. `SkillTree::unlocked` gives the skills whose prerequisites are all mastered.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use rand::Rng;
use serde::{Deserialize, Serialize};
use sim::library::{sample_task, Range, TaskRanges};
use sim::task::{SkillKind, TaskSpec};

use crate::error::{Result, SkillsError};

/// The tree shipped with coevolve (`skills/trees/default.toml`).
pub const DEFAULT_TREE_TOML: &str = include_str!("../trees/default.toml");

/// Held-out evaluation: `episodes` task variants drawn with batch seed `seed`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeldOut {
    pub episodes: usize,
    pub seed: u64,
}

/// Per-generation budgets of a skill.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Budget {
    /// Simulated episodes the explorer may spend on this skill per generation.
    pub episodes_per_generation: usize,
    /// Policy training steps per generation while the skill is being learned.
    pub train_steps: usize,
}

/// `[lo, hi]` overrides of the task generator's ranges (absent: the library default).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RangeOverrides {
    pub object_x_m: Option<[f64; 2]>,
    pub object_y_m: Option<[f64; 2]>,
    pub object_yaw_rad: Option<[f64; 2]>,
    pub cube_size_m: Option<[f64; 2]>,
    pub object_mass_kg: Option<[f64; 2]>,
    pub object_friction: Option<[f64; 2]>,
    pub zone_half_extent_m: Option<[f64; 2]>,
    pub lift_height_m: Option<[f64; 2]>,
    pub min_separation_m: Option<f64>,
    pub max_duration_s: Option<f64>,
}

/// A skill as written in the TOML file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SkillDef {
    pub name: String,
    pub group: String,
    /// The `sim` skill whose physics predicate judges success.
    pub predicate: String,
    pub instructions: Vec<String>,
    #[serde(default)]
    pub prerequisites: Vec<String>,
    /// Held-out success rate that counts as mastered, in (0, 1].
    pub mastery: f64,
    pub heldout: HeldOut,
    pub budget: Budget,
    #[serde(default)]
    pub ranges: RangeOverrides,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TreeFile {
    name: String,
    skills: Vec<SkillDef>,
}

/// A validated skill.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Skill {
    pub def: SkillDef,
    pub kind: SkillKind,
    /// The task generator's ranges with the overrides applied.
    pub ranges: TaskRanges,
}

impl Skill {
    pub fn name(&self) -> &str {
        &self.def.name
    }

    /// A task variant of this skill, its instruction drawn from the skill's phrasings.
    pub fn sample_task(&self, rng: &mut impl Rng) -> TaskSpec {
        let mut task = sample_task(self.kind, &self.ranges, rng);
        let i = rng.gen_range(0..self.def.instructions.len());
        task.instruction = self.def.instructions[i].clone();
        task.name = format!("{}/{}", self.def.name, task.name);
        task
    }
}

/// A validated tree, skills in prerequisite order (every skill after its prerequisites).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SkillTree {
    pub name: String,
    pub skills: Vec<Skill>,
}

impl SkillTree {
    /// This tree's skills with the named family preset (`easy`, the default, or `wide`: see
    /// [`TaskRanges::preset`]) under each skill's own range overrides.
    pub fn with_families(mut self, preset: &str) -> Result<SkillTree> {
        let base = TaskRanges::preset(preset).map_err(|problem| SkillsError::Tree {
            source_name: self.name.clone(),
            problem: format!("families: {problem}"),
        })?;
        for skill in &mut self.skills {
            skill.ranges =
                apply_ranges(base.clone(), &skill.def.ranges).map_err(|(field, problem)| {
                    SkillsError::Skill {
                        source_name: self.name.clone(),
                        skill: skill.def.name.clone(),
                        field,
                        problem,
                    }
                })?;
        }
        Ok(self)
    }

    /// This tree's task families laid out for `robot`'s workspace
    /// ([`sim::library::workspace_scale`]: unchanged for full-size arms).
    pub fn for_robot(mut self, robot: &robots::Manipulator) -> SkillTree {
        let s = sim::library::workspace_scale(robot);
        for skill in &mut self.skills {
            skill.ranges = skill.ranges.scaled(s);
        }
        self
    }

    /// The shipped default tree.
    pub fn default_tree() -> Result<SkillTree> {
        SkillTree::parse(DEFAULT_TREE_TOML, "skills/trees/default.toml")
    }

    /// `default` or a path to a TOML file.
    pub fn named(name_or_path: &str) -> Result<SkillTree> {
        match name_or_path {
            "default" => SkillTree::default_tree(),
            path => SkillTree::load(Path::new(path)),
        }
    }

    pub fn load(path: &Path) -> Result<SkillTree> {
        let text = std::fs::read_to_string(path).map_err(|source| SkillsError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        SkillTree::parse(&text, &path.display().to_string())
    }

    /// Parses and validates; `source_name` is used in error messages.
    pub fn parse(text: &str, source_name: &str) -> Result<SkillTree> {
        let tree_err = |problem: String| SkillsError::Tree {
            source_name: source_name.to_owned(),
            problem,
        };
        let file: TreeFile = toml::from_str(text).map_err(|e| tree_err(e.to_string()))?;
        if file.skills.is_empty() {
            return Err(tree_err("the tree has no skills".into()));
        }
        let mut by_name = BTreeMap::new();
        for (i, def) in file.skills.iter().enumerate() {
            if by_name.insert(def.name.as_str(), i).is_some() {
                return Err(tree_err(format!("skill `{}` is defined twice", def.name)));
            }
        }
        let mut skills = Vec::with_capacity(file.skills.len());
        for def in &file.skills {
            skills.push(validate_skill(def, &by_name, source_name)?);
        }
        let order = prerequisite_order(&file.skills, &by_name).map_err(tree_err)?;
        let mut slots: Vec<Option<Skill>> = skills.into_iter().map(Some).collect();
        let skills = order.into_iter().filter_map(|i| slots[i].take()).collect();
        Ok(SkillTree {
            name: file.name,
            skills,
        })
    }

    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.skills.iter().find(|s| s.name() == name)
    }

    /// `targets` with every name that is a group of this tree (and not a skill) replaced by
    /// the group's skills, in tree order: `tabletop` → reach, push, grasp, lift, place, stack.
    pub fn expand_groups(&self, targets: &[String]) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for t in targets {
            let group: Vec<String> = if self.get(t).is_some() {
                vec![t.clone()]
            } else {
                self.skills
                    .iter()
                    .filter(|s| &s.def.group == t)
                    .map(|s| s.name().to_owned())
                    .collect()
            };
            if group.is_empty() {
                out.push(t.clone()); // unknown: `evolve::closure` names it in its error
            }
            for name in group {
                if !out.contains(&name) {
                    out.push(name);
                }
            }
        }
        out
    }

    /// Skills not yet mastered whose prerequisites all are (the learning frontier).
    pub fn unlocked(&self, mastered: &BTreeSet<String>) -> Vec<&Skill> {
        self.skills
            .iter()
            .filter(|s| !mastered.contains(s.name()))
            .filter(|s| s.def.prerequisites.iter().all(|p| mastered.contains(p)))
            .collect()
    }
}

fn validate_skill(
    def: &SkillDef,
    by_name: &BTreeMap<&str, usize>,
    source_name: &str,
) -> Result<Skill> {
    let err = |field: &str, problem: String| SkillsError::Skill {
        source_name: source_name.to_owned(),
        skill: def.name.clone(),
        field: field.to_owned(),
        problem,
    };
    if def.name.trim().is_empty() {
        return Err(err("name", "must not be empty".into()));
    }
    let kind = SkillKind::parse(&def.predicate).map_err(|_| {
        err(
            "predicate",
            format!(
                "unknown predicate `{}` (known: {})",
                def.predicate,
                SkillKind::ALL.map(SkillKind::name).join(", ")
            ),
        )
    })?;
    if def.instructions.is_empty() || def.instructions.iter().any(|i| i.trim().is_empty()) {
        return Err(err(
            "instructions",
            "needs at least one non-empty instruction".into(),
        ));
    }
    for p in &def.prerequisites {
        if p == &def.name {
            return Err(err("prerequisites", "a skill cannot require itself".into()));
        }
        if !by_name.contains_key(p.as_str()) {
            return Err(err(
                "prerequisites",
                format!("`{p}` is not a skill in the tree"),
            ));
        }
    }
    if !(def.mastery.is_finite() && def.mastery > 0.0 && def.mastery <= 1.0) {
        return Err(err(
            "mastery",
            format!("must be in (0, 1], got {}", def.mastery),
        ));
    }
    if def.heldout.episodes == 0 {
        return Err(err("heldout.episodes", "must be at least 1".into()));
    }
    if def.budget.episodes_per_generation == 0 || def.budget.train_steps == 0 {
        return Err(err(
            "budget",
            "episodes_per_generation and train_steps must be > 0".into(),
        ));
    }
    let ranges = apply_ranges(TaskRanges::default(), &def.ranges)
        .map_err(|(field, problem)| err(&field, problem))?;
    Ok(Skill {
        def: def.clone(),
        kind,
        ranges,
    })
}

/// `base` with a skill's range overrides written over it.
fn apply_ranges(
    base: TaskRanges,
    o: &RangeOverrides,
) -> std::result::Result<TaskRanges, (String, String)> {
    let mut r = base;
    let fields: [(&str, Option<[f64; 2]>, &mut Range, bool); 8] = [
        ("object_x_m", o.object_x_m, &mut r.object_x_m, false),
        ("object_y_m", o.object_y_m, &mut r.object_y_m, false),
        (
            "object_yaw_rad",
            o.object_yaw_rad,
            &mut r.object_yaw_rad,
            false,
        ),
        ("cube_size_m", o.cube_size_m, &mut r.cube_size_m, true),
        (
            "object_mass_kg",
            o.object_mass_kg,
            &mut r.object_mass_kg,
            true,
        ),
        (
            "object_friction",
            o.object_friction,
            &mut r.object_friction,
            true,
        ),
        (
            "zone_half_extent_m",
            o.zone_half_extent_m,
            &mut r.zone_half_extent_m,
            true,
        ),
        ("lift_height_m", o.lift_height_m, &mut r.lift_height_m, true),
    ];
    for (name, value, slot, positive) in fields {
        let Some([lo, hi]) = value else { continue };
        let field = format!("ranges.{name}");
        if !(lo.is_finite() && hi.is_finite()) {
            return Err((field, format!("[{lo}, {hi}] is not finite")));
        }
        if lo > hi {
            return Err((field, format!("inverted range [{lo}, {hi}] (lo > hi)")));
        }
        if positive && lo <= 0.0 {
            return Err((field, format!("[{lo}, {hi}] must be > 0")));
        }
        *slot = Range::new(lo, hi);
    }
    if let Some(v) = o.min_separation_m {
        if !(v.is_finite() && v >= 0.0) {
            return Err((
                "ranges.min_separation_m".into(),
                format!("must be >= 0, got {v}"),
            ));
        }
        r.min_separation_m = v;
    }
    if let Some(v) = o.max_duration_s {
        if !(v.is_finite() && v > 0.0) {
            return Err((
                "ranges.max_duration_s".into(),
                format!("must be > 0, got {v}"),
            ));
        }
        r.max_duration_s = v;
    }
    Ok(r)
}

/// Skill indices with every skill after its prerequisites (file order among equals), or the
/// first cycle found as `a → b → … → a`.
fn prerequisite_order(
    defs: &[SkillDef],
    by_name: &BTreeMap<&str, usize>,
) -> std::result::Result<Vec<usize>, String> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Active,
        Done,
    }
    fn visit(
        i: usize,
        defs: &[SkillDef],
        by_name: &BTreeMap<&str, usize>,
        marks: &mut [Mark],
        stack: &mut Vec<usize>,
        order: &mut Vec<usize>,
    ) -> std::result::Result<(), String> {
        match marks[i] {
            Mark::Done => return Ok(()),
            Mark::Active => {
                let start = stack.iter().position(|&s| s == i).unwrap_or(0);
                let mut path: Vec<&str> = stack[start..]
                    .iter()
                    .map(|&s| defs[s].name.as_str())
                    .collect();
                path.push(&defs[i].name);
                return Err(format!("prerequisite cycle: {}", path.join(" → ")));
            }
            Mark::New => {}
        }
        marks[i] = Mark::Active;
        stack.push(i);
        for p in &defs[i].prerequisites {
            if let Some(&j) = by_name.get(p.as_str()) {
                visit(j, defs, by_name, marks, stack, order)?;
            }
        }
        stack.pop();
        marks[i] = Mark::Done;
        order.push(i);
        Ok(())
    }
    let mut marks = vec![Mark::New; defs.len()];
    let mut order = Vec::with_capacity(defs.len());
    for i in 0..defs.len() {
        visit(i, defs, by_name, &mut marks, &mut Vec::new(), &mut order)?;
    }
    Ok(order)
}
