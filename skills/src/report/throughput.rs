//! The report's throughput table: where each generation's time went, phase by phase (wall
//! time, how busy the run's threads were, control steps simulated per second), and the
//! exploration's rate against the plain scripted batch measured beside it
//! (`evolve::reference`).

use std::fmt::Write as _;

use sim::throughput::PhaseFigures;

use crate::evolve::GenerationRecord;

/// Phases in pipeline order, as the table's columns.
const PHASES: [&str; 7] = [
    "reference",
    "explore",
    "train",
    "grpo",
    "evaluate",
    "synthesis",
    "fresh",
];

fn phase<'a>(g: &'a GenerationRecord, name: &str) -> Option<&'a PhaseFigures> {
    g.phases.iter().find(|p| p.phase == name)
}

/// `wall s, busy %, steps/s` of one phase.
fn cell(p: Option<&PhaseFigures>, threads: usize) -> String {
    let Some(p) = p else {
        return "–".to_owned();
    };
    let busy = p
        .busy_fraction(threads)
        .map_or_else(String::new, |b| format!(", {:.0} %", 100.0 * b));
    let rate = if p.control_steps > 0 {
        format!(", {:.0}/s", p.control_steps_per_s())
    } else {
        String::new()
    };
    format!("{:.1}{busy}{rate}", p.wall_s)
}

/// Exploration's control steps/s ÷ the reference batch's.
pub fn explore_vs_reference(g: &GenerationRecord) -> Option<f64> {
    let reference = phase(g, "reference")?.control_steps_per_s();
    let explore = phase(g, "explore")?.control_steps_per_s();
    (reference > 0.0).then(|| explore / reference)
}

/// Appends the throughput section (nothing for runs that predate phase figures).
pub fn throughput_md(md: &mut String, history: &[GenerationRecord], threads: usize) {
    if history.iter().all(|g| g.phases.is_empty()) {
        return;
    }
    let _ = writeln!(
        md,
        "\n## Throughput\n\nPer phase: wall s, CPU busy (process CPU time ÷ wall × {threads} \
         threads), simulated control steps/s. `reference`: a plain scripted batch on the \
         frontier's family at the run's threads, measured before exploring; `other`: the \
         generation's remaining time (data pool, acceptance, bookkeeping).\n"
    );
    let _ = writeln!(
        md,
        "| gen | {} | other s | explore ÷ reference |\n|---|{}---|---|",
        PHASES.join(" | "),
        "---|".repeat(PHASES.len())
    );
    for g in history.iter().filter(|g| !g.phases.is_empty()) {
        let cells: Vec<String> = PHASES
            .iter()
            .map(|name| cell(phase(g, name), threads))
            .collect();
        let measured: f64 = g.phases.iter().map(|p| p.wall_s).sum();
        let ratio = explore_vs_reference(g).map_or_else(|| "–".to_owned(), |r| format!("{r:.2}"));
        let _ = writeln!(
            md,
            "| {} | {} | {:.1} | {} |",
            g.generation,
            cells.join(" | "),
            (g.wall_s - measured).max(0.0),
            ratio
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figures(phase: &str, wall_s: f64, cpu_s: f64, control_steps: u64) -> PhaseFigures {
        PhaseFigures {
            phase: phase.into(),
            wall_s,
            cpu_s: Some(cpu_s),
            control_steps,
        }
    }

    #[test]
    fn the_table_sets_exploration_against_the_reference() {
        let g = GenerationRecord {
            generation: 3,
            wall_s: 20.0,
            phases: vec![
                figures("reference", 1.0, 2.0, 3000),
                figures("explore", 10.0, 15.0, 24000),
                figures("train", 6.0, 12.0, 0),
            ],
            ..GenerationRecord::default()
        };
        assert!((explore_vs_reference(&g).unwrap() - 0.8).abs() < 1e-12);
        let mut md = String::new();
        throughput_md(&mut md, &[GenerationRecord::default(), g], 2);
        let row = md.lines().find(|l| l.starts_with("| 3 |")).unwrap();
        assert_eq!(
            row,
            "| 3 | 1.0, 100 %, 3000/s | 10.0, 75 %, 2400/s | 6.0, 100 % | – | – | – | – | 3.0 | 0.80 |"
        );
        let mut none = String::new();
        throughput_md(&mut none, &[GenerationRecord::default()], 2);
        assert!(none.is_empty());
    }
}
