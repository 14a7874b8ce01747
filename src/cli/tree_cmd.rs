//! `coevolve tree [--tree default|FILE] [--json]`: load, validate and print a skill tree.

use clap::Args;
use skills::SkillTree;

#[derive(Debug, Args)]
pub struct TreeArgs {
    /// `default` (the shipped tree) or a path to a skill-tree TOML file.
    #[arg(long, default_value = "default")]
    pub tree: String,
    /// Print the validated tree as one JSON object.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &TreeArgs) -> anyhow::Result<()> {
    let tree = SkillTree::named(&args.tree)?;
    if args.json {
        println!("{}", serde_json::to_string(&tree)?);
        return Ok(());
    }
    println!(
        "skill tree `{}` ({} skills, prerequisite order)",
        tree.name,
        tree.skills.len()
    );
    for s in &tree.skills {
        let needs = if s.def.prerequisites.is_empty() {
            "-".to_owned()
        } else {
            s.def.prerequisites.join(", ")
        };
        println!(
            "  {:<8} {:<9} predicate {:<6} mastery {:.0}% on {} held-out variants; needs {}",
            s.name(),
            s.def.group,
            s.kind.name(),
            100.0 * s.def.mastery,
            s.def.heldout.episodes,
            needs
        );
    }
    Ok(())
}
