//! The skill tree: the default tree loads in prerequisite order and unlocks its frontier;
//! malformed trees give errors naming the source, skill and field.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;

use rand::SeedableRng;
use skills::{SkillKind, SkillTree};

#[test]
fn default_tree_is_ordered_and_unlocks_its_frontier() {
    let tree = SkillTree::default_tree().unwrap();
    let names: Vec<&str> = tree.skills.iter().map(|s| s.name()).collect();
    assert_eq!(names.len(), 8);
    for s in &tree.skills {
        let at = names.iter().position(|n| *n == s.name()).unwrap();
        for p in &s.def.prerequisites {
            let before = names.iter().position(|n| n == p).unwrap();
            assert!(before < at, "{p} must come before {}", s.name());
        }
    }
    let none = BTreeSet::new();
    let frontier: Vec<&str> = tree.unlocked(&none).iter().map(|s| s.name()).collect();
    assert_eq!(frontier, ["reach", "scoop"]);
    let mastered: BTreeSet<String> = ["reach", "grasp"].map(String::from).into();
    let frontier: BTreeSet<&str> = tree.unlocked(&mastered).iter().map(|s| s.name()).collect();
    assert_eq!(frontier, BTreeSet::from(["push", "lift", "scoop"]));
    assert_eq!(tree.get("flip").unwrap().kind, SkillKind::Flip);
}

#[test]
fn a_group_as_target_names_its_skills_in_tree_order() {
    let tree = SkillTree::default_tree().unwrap();
    let targets =
        |t: &[&str]| tree.expand_groups(&t.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    assert_eq!(
        targets(&["tabletop"]),
        ["reach", "push", "grasp", "lift", "place", "stack"]
    );
    assert_eq!(targets(&["lift", "kitchen"]), ["lift", "scoop", "flip"]);
    assert_eq!(
        targets(&["nosuch"]),
        ["nosuch"],
        "left for closure() to name"
    );
}

#[test]
fn tasks_use_the_skills_instructions_and_ranges() {
    let tree = SkillTree::default_tree().unwrap();
    let lift = tree.get("lift").unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    let mut seen = BTreeSet::new();
    for _ in 0..32 {
        let task = lift.sample_task(&mut rng);
        task.validate().unwrap();
        assert!(lift.def.instructions.contains(&task.instruction));
        assert!((0.08..=0.12).contains(&task.goal.lift_height_m));
        assert!(task.name.starts_with("lift/"));
        seen.insert(task.instruction);
    }
    assert_eq!(seen.len(), 2, "both phrasings are used");
}

const ONE: &str = r#"
name = "t"
[[skills]]
name = "a"
group = "g"
predicate = "reach"
instructions = ["do a"]
prerequisites = PREREQ_A
mastery = 0.8
heldout = { episodes = 8, seed = 1 }
budget = { episodes_per_generation = 8, train_steps = 10 }
EXTRA_A
[[skills]]
name = "b"
group = "g"
predicate = "PRED_B"
instructions = ["do b"]
prerequisites = ["a"]
mastery = MASTERY_B
heldout = { episodes = 8, seed = 1 }
budget = { episodes_per_generation = 8, train_steps = 10 }
"#;

fn tree(prereq_a: &str, extra_a: &str, pred_b: &str, mastery_b: &str) -> Result<SkillTree, String> {
    let text = ONE
        .replace("PREREQ_A", prereq_a)
        .replace("EXTRA_A", extra_a)
        .replace("PRED_B", pred_b)
        .replace("MASTERY_B", mastery_b);
    SkillTree::parse(&text, "my_tree.toml").map_err(|e| e.to_string())
}

#[test]
fn malformed_trees_are_named() {
    assert!(tree("[]", "", "lift", "0.8").is_ok());
    let cases = [
        (
            tree("[]", "", "teleport", "0.8"),
            vec!["my_tree.toml", "`b`", "predicate", "teleport"],
        ),
        (
            tree("[\"zz\"]", "", "lift", "0.8"),
            vec!["`a`", "prerequisites", "`zz`"],
        ),
        (
            tree("[\"b\"]", "", "lift", "0.8"),
            vec!["prerequisite cycle", "a → b → a"],
        ),
        (
            tree("[\"a\"]", "", "lift", "0.8"),
            vec!["`a`", "cannot require itself"],
        ),
        (
            tree("[]", "", "lift", "1.5"),
            vec!["`b`", "mastery", "(0, 1]"],
        ),
        (
            tree("[]", "ranges = { object_x_m = [0.6, 0.4] }", "lift", "0.8"),
            vec!["`a`", "ranges.object_x_m", "inverted"],
        ),
        (
            tree(
                "[]",
                "ranges = { cube_size_m = [0.0, 0.05] }",
                "lift",
                "0.8",
            ),
            vec!["ranges.cube_size_m", "> 0"],
        ),
        (
            tree("[]", "ranges = { object_z_m = [0.1, 0.2] }", "lift", "0.8"),
            vec!["my_tree.toml", "object_z_m"],
        ),
        (
            tree("[]", "colour = \"red\"", "lift", "0.8"),
            vec!["my_tree.toml", "colour"],
        ),
    ];
    for (result, needles) in cases {
        let err = result.expect_err("must be rejected");
        for n in needles {
            assert!(err.contains(n), "`{err}` should mention `{n}`");
        }
    }
    let dup = ONE
        .replace("PREREQ_A", "[]")
        .replace("EXTRA_A", "")
        .replace("PRED_B", "lift")
        .replace("MASTERY_B", "0.8")
        .replace("name = \"b\"", "name = \"a\"");
    let err = SkillTree::parse(&dup, "my_tree.toml")
        .unwrap_err()
        .to_string();
    assert!(err.contains("defined twice"), "{err}");
    let err = SkillTree::named("/no/such/tree.toml")
        .unwrap_err()
        .to_string();
    assert!(err.contains("/no/such/tree.toml"), "{err}");
}
