//! `coevolve robots show <name|path.urdf>`.

use anyhow::Context;
use clap::Subcommand;

#[derive(Debug, Subcommand)]
pub enum RobotsCommand {
    /// Summarise a robot: joints, limits, masses, reach. Built-in names or a URDF path.
    Show {
        /// `ur5e`, `panda`, or a path to a URDF file.
        robot: String,
        /// End-effector link for a URDF (default: tcp, tool0, ee_link, … or the deepest link).
        #[arg(long)]
        ee_link: Option<String>,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// List the built-in robots.
    List,
}

pub fn run(command: &RobotsCommand) -> anyhow::Result<()> {
    match command {
        RobotsCommand::Show {
            robot,
            ee_link,
            json,
        } => {
            let m = robots::load_manipulator(robot, ee_link.as_deref())
                .with_context(|| format!("loading robot `{robot}`"))?;
            let summary = robots::RobotSummary::from_manipulator(&m);
            if *json {
                println!("{}", serde_json::to_string(&summary)?);
            } else {
                print!("{summary}");
            }
            Ok(())
        }
        RobotsCommand::List => {
            for name in robots::builtin_names() {
                println!("{name}");
            }
            Ok(())
        }
    }
}
