//! The comparison's SVG plots: held-out success against simulated episodes per run, and the
//! arms' performance profiles with their bootstrap intervals.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use super::stats::ArmStats;
use super::Report;

const COLOURS: [&str; 6] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
];
const DASHES: [&str; 6] = ["", "6,3", "2,3", "10,3,2,3", "1,2", "4,4"];

/// The white page, the axes, their labels and the horizontal grid at 0.25 … 1 of a plot
/// `(width, height, left margin, bottom margin, legend width)`.
fn frame(
    (w, h, left, bottom, legend): (f64, f64, f64, f64, f64),
    y_label: &str,
    x_label: &str,
    x_label_at: f64,
) -> String {
    let sy = |y: f64| (h - bottom) - y * (h - bottom - 10.0);
    let mut svg = format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}"><rect width="{w}" height="{h}" fill="#fff"/><line x1="{left}" y1="{0}" x2="{1}" y2="{0}" stroke="#000"/><line x1="{left}" y1="10" x2="{left}" y2="{0}" stroke="#000"/><text x="5" y="20" font-size="11" font-family="sans-serif">{y_label}</text><text x="{x_label_at}" y="{2}" font-size="11" font-family="sans-serif">{x_label}</text>"##,
        h - bottom,
        w - legend,
        h - 8.0
    );
    for y in [0.25, 0.5, 0.75, 1.0] {
        let _ = write!(
            svg,
            r##"<line x1="{left}" y1="{0:.1}" x2="{1}" y2="{0:.1}" stroke="#eee"/><text x="20" y="{2:.1}" font-size="10" font-family="sans-serif">{y}</text>"##,
            sy(y),
            w - legend,
            sy(y) + 4.0
        );
    }
    svg
}

/// Held-out success against simulated episodes: colour per run, dash pattern per skill.
pub fn curves(reports: &[Report], skills: &BTreeSet<String>) -> String {
    let (w, h, left, bottom, legend) = (760.0, 340.0, 50.0, 35.0, 190.0);
    let max_x = reports
        .iter()
        .map(|r| r.episodes_simulated)
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let sx = |x: usize| left + x as f64 / max_x * (w - left - legend);
    let sy = |y: f64| (h - bottom) - y * (h - bottom - 10.0);
    let x_label = format!("simulated episodes ({max_x:.0} max)");
    let mut svg = frame(
        (w, h, left, bottom, legend),
        "held-out",
        &x_label,
        left + 150.0,
    );
    for (ri, r) in reports.iter().enumerate() {
        let colour = COLOURS[ri % COLOURS.len()];
        for (si, skill) in skills.iter().enumerate() {
            let points: Vec<String> = r
                .history
                .iter()
                .filter_map(|g| {
                    let h = g.skills.get(skill)?.heldout_success?;
                    Some(format!("{:.1},{:.1}", sx(g.episodes_simulated), sy(h)))
                })
                .collect();
            if points.is_empty() {
                continue;
            }
            let _ = write!(
                svg,
                r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="2" stroke-dasharray="{}"/>"#,
                points.join(" "),
                DASHES[si % DASHES.len()]
            );
        }
        let _ = write!(
            svg,
            r#"<text x="{}" y="{}" font-size="12" fill="{colour}" font-family="sans-serif">{} ({}, refine {})</text>"#,
            w - legend + 10.0,
            20.0 + 16.0 * ri as f64,
            r.run,
            r.curriculum,
            if r.refine { "on" } else { "off" }
        );
    }
    for (si, skill) in skills.iter().enumerate() {
        let y = 30.0 + 16.0 * (reports.len() + si) as f64;
        let _ = write!(
            svg,
            r##"<line x1="{0}" y1="{1}" x2="{2}" y2="{1}" stroke="#333" stroke-width="2" stroke-dasharray="{3}"/><text x="{4}" y="{5}" font-size="12" font-family="sans-serif">{6}</text>"##,
            w - legend + 10.0,
            y,
            w - legend + 40.0,
            DASHES[si % DASHES.len()],
            w - legend + 46.0,
            y + 4.0,
            skill
        );
    }
    svg.push_str("</svg>\n");
    svg
}

/// Share of (run, skill) scores above τ against τ, a line per arm with its 95 % band.
pub fn profiles(stats: &[ArmStats]) -> String {
    let (w, h, left, bottom, legend) = (560.0, 320.0, 50.0, 35.0, 170.0);
    let sx = |x: f64| left + x * (w - left - legend);
    let sy = |y: f64| (h - bottom) - y * (h - bottom - 10.0);
    let mut svg = frame(
        (w, h, left, bottom, legend),
        "share &gt; τ",
        "held-out success τ",
        left + 120.0,
    );
    for x in [0.25, 0.5, 0.75, 1.0] {
        let _ = write!(
            svg,
            r##"<text x="{:.1}" y="{}" font-size="10" font-family="sans-serif">{x}</text>"##,
            sx(x) - 8.0,
            h - bottom + 14.0
        );
    }
    for (ai, arm) in stats.iter().enumerate() {
        let colour = COLOURS[ai % COLOURS.len()];
        let line = |f: &dyn Fn(&super::stats::Interval) -> f64| -> Vec<String> {
            arm.profile
                .iter()
                .map(|(tau, i)| format!("{:.1},{:.1}", sx(*tau), sy(f(i))))
                .collect()
        };
        let mut band = line(&|i| i.hi);
        band.extend(line(&|i| i.lo).into_iter().rev());
        let _ = write!(
            svg,
            r#"<polygon points="{}" fill="{colour}" fill-opacity="0.15" stroke="none"/><polyline points="{}" fill="none" stroke="{colour}" stroke-width="2"/><text x="{}" y="{}" font-size="12" fill="{colour}" font-family="sans-serif">{} ({} runs)</text>"#,
            band.join(" "),
            line(&|i| i.point).join(" "),
            w - legend + 10.0,
            20.0 + 16.0 * ai as f64,
            arm.arm,
            arm.runs
        );
    }
    svg.push_str("</svg>\n");
    svg
}
