//! Physics throughput and fidelity of an anchor scene, side by side with MuJoCo in the same
//! run: `cargo bench --bench physics [-- --threads N] [--anchor arm-cube|panda-cube]
//! [--articulation impulse|multibody]
//! [--solver-iterations N] [--pgs-iterations N] [--stabilization-iterations N] [--no-mujoco]`. Prints one JSON object (`sim::anchor::PhysicsReport`). MuJoCo runs through
//! `.venv/bin/python` (created by `scripts/python-env.sh` when missing); if it cannot run, its
//! fields are null and `note` says why.

use std::process::ExitCode;

use sim::anchor::{physics_report_with, Anchor, ArticulationKind, PhysicsReportConfig};

fn value(args: &mut impl Iterator<Item = String>, flag: &str) -> Result<usize, String> {
    let v = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
    v.parse().map_err(|e| format!("{flag} {v}: {e}"))
}

fn parse_args() -> Result<PhysicsReportConfig, String> {
    let threads = std::thread::available_parallelism()
        .map(usize::from)
        .unwrap_or(1);
    let mut cfg = PhysicsReportConfig::new(threads, true);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--threads" => cfg.threads = value(&mut args, &arg)?,
            "--anchor" => {
                let v = args.next().ok_or("--anchor needs a value")?;
                cfg.anchor = v.parse::<Anchor>().map_err(|e| e.to_string())?;
            }
            "--articulation" => {
                let v = args.next().ok_or("--articulation needs a value")?;
                cfg.articulation = v.parse::<ArticulationKind>().map_err(|e| e.to_string())?;
            }
            "--solver-iterations" => cfg.scene.solver_iterations = value(&mut args, &arg)?,
            "--pgs-iterations" => cfg.scene.pgs_iterations = value(&mut args, &arg)?,
            "--stabilization-iterations" => {
                cfg.scene.stabilization_iterations = value(&mut args, &arg)?
            }
            "--no-mujoco" => cfg.with_mujoco = false,
            // `cargo bench` passes `--bench`; JSON is the only output format.
            "--bench" | "--json" => {}
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok(cfg)
}

fn main() -> ExitCode {
    let result = parse_args().and_then(|cfg| physics_report_with(&cfg).map_err(|e| e.to_string()));
    match result.and_then(|r| serde_json::to_string(&r).map_err(|e| e.to_string())) {
        Ok(json) => {
            println!("{json}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("physics bench: {e}");
            ExitCode::FAILURE
        }
    }
}
