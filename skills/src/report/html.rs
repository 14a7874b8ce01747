//! The self-contained HTML page: inline SVG only, no scripts, no external resources.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::{markdown, pool_and_synthesis, Report};
use crate::tree::SkillTree;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const PALETTE: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

/// The skill tree: columns by prerequisite depth, nodes coloured by mastery, edges from
/// prerequisites.
fn tree_svg(r: &Report, tree: &SkillTree) -> String {
    let mut depth: BTreeMap<&str, usize> = BTreeMap::new();
    for s in &tree.skills {
        let d = s
            .def
            .prerequisites
            .iter()
            .filter_map(|p| depth.get(p.as_str()))
            .map(|d| d + 1)
            .max()
            .unwrap_or(0);
        depth.insert(s.name(), d);
    }
    let mut rows_in_column: BTreeMap<usize, usize> = BTreeMap::new();
    let mut pos: BTreeMap<&str, (f64, f64)> = BTreeMap::new();
    let mut row_of_parent: BTreeMap<&str, usize> = BTreeMap::new();
    let mut next_row = 0usize;
    for s in &tree.skills {
        let d = depth[s.name()];
        // A node sits on its first prerequisite's row when that row is still free here.
        let wanted = s
            .def
            .prerequisites
            .first()
            .and_then(|p| row_of_parent.get(p.as_str()).copied());
        let used = rows_in_column.entry(d).or_default();
        let row = match wanted {
            Some(w) if w >= *used => w,
            _ => next_row.max(*used),
        };
        *used = row + 1;
        next_row = next_row.max(row + 1);
        row_of_parent.insert(s.name(), row);
        pos.insert(
            s.name(),
            (30.0 + d as f64 * 170.0, 30.0 + row as f64 * 70.0),
        );
    }
    let width = 60.0 + (depth.values().max().copied().unwrap_or(0) + 1) as f64 * 170.0;
    let height = 40.0 + next_row as f64 * 70.0;
    let mut svg = format!(
        r#"<svg id="skill-tree" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}">"#
    );
    for s in &tree.skills {
        let (x, y) = pos[s.name()];
        for p in &s.def.prerequisites {
            if let Some((px, py)) = pos.get(p.as_str()) {
                let _ = write!(
                    svg,
                    r##"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#555" stroke-width="2" marker-end="url(#arrow)"/>"##,
                    px + 130.0,
                    py + 22.0,
                    x,
                    y + 22.0
                );
            }
        }
    }
    svg.push_str(r##"<defs><marker id="arrow" markerWidth="8" markerHeight="8" refX="8" refY="4" orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="#555"/></marker></defs>"##);
    for s in &r.skills {
        let Some((x, y)) = pos.get(s.name.as_str()) else {
            continue;
        };
        let fill = match (s.in_run, s.mastered, s.heldout_success) {
            (false, _, _) => "#d9d9d9",
            (_, true, _) => "#4caf50",
            (_, false, Some(h)) if h > 0.0 => "#ffb74d",
            _ => "#ef9a9a",
        };
        let _ = write!(
            svg,
            r##"<g><rect x="{x}" y="{y}" width="130" height="44" rx="8" fill="{fill}" stroke="#333"/><text x="{}" y="{}" font-size="14" text-anchor="middle" font-family="sans-serif">{}</text><text x="{}" y="{}" font-size="12" text-anchor="middle" font-family="sans-serif">{}</text></g>"##,
            x + 65.0,
            y + 18.0,
            esc(&s.name),
            x + 65.0,
            y + 36.0,
            match (s.heldout_success, s.fresh_success) {
                (Some(h), Some(f)) => format!("{:.0} % (fresh {:.0} %)", 100.0 * h, 100.0 * f),
                (Some(h), None) => format!("held-out {:.0} %", 100.0 * h),
                (None, _) if s.in_run => "not learned yet".to_owned(),
                (None, _) => "not in this run".to_owned(),
            }
        );
    }
    svg.push_str("</svg>");
    svg
}

/// A line chart of named series over generations.
fn line_chart(
    id: &str,
    series: &[(String, Vec<(usize, f64)>)],
    y_max: f64,
    y_label: &str,
) -> String {
    let (w, h, left, bottom) = (640.0, 260.0, 50.0, 30.0);
    let max_x = series
        .iter()
        .flat_map(|(_, p)| p.iter().map(|(x, _)| *x))
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    let sx = |x: usize| left + (x as f64 / max_x) * (w - left - 120.0);
    let sy = |y: f64| (h - bottom) - (y / y_max.max(1e-9)) * (h - bottom - 10.0);
    let mut svg = format!(
        r##"<svg id="{id}" xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}"><rect width="{w}" height="{h}" fill="#fff"/><line x1="{left}" y1="{}" x2="{}" y2="{}" stroke="#000"/><line x1="{left}" y1="10" x2="{left}" y2="{}" stroke="#000"/><text x="5" y="20" font-size="11" font-family="sans-serif">{}</text><text x="{}" y="{}" font-size="11" font-family="sans-serif">generation</text>"##,
        h - bottom,
        w - 120.0,
        h - bottom,
        h - bottom,
        esc(y_label),
        w - 190.0,
        h - 5.0
    );
    for frac in [0.0, 0.5, 1.0] {
        let _ = write!(
            svg,
            r##"<line x1="{left}" y1="{0:.1}" x2="{1}" y2="{0:.1}" stroke="#eee"/><text x="{2}" y="{3:.1}" font-size="10" text-anchor="end" font-family="sans-serif">{4}</text>"##,
            sy(frac * y_max),
            w - 120.0,
            left - 4.0,
            sy(frac * y_max) + 4.0,
            if y_max <= 1.0 {
                format!("{frac}")
            } else {
                format!("{:.0}", frac * y_max)
            }
        );
    }
    for g in 0..=(max_x as usize) {
        let _ = write!(
            svg,
            r##"<text x="{:.1}" y="{:.1}" font-size="10" text-anchor="middle" font-family="sans-serif">{g}</text>"##,
            sx(g),
            h - bottom + 14.0
        );
    }
    for (i, (name, points)) in series.iter().enumerate() {
        let colour = PALETTE[i % PALETTE.len()];
        let path: Vec<String> = points
            .iter()
            .map(|(x, y)| format!("{:.1},{:.1}", sx(*x), sy(*y)))
            .collect();
        let _ = write!(
            svg,
            r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="2"/>"#,
            path.join(" ")
        );
        for (x, y) in points {
            let _ = write!(
                svg,
                r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{colour}"/>"#,
                sx(*x),
                sy(*y)
            );
        }
        let _ = write!(
            svg,
            r#"<text x="{}" y="{}" font-size="12" fill="{colour}" font-family="sans-serif">{}</text>"#,
            w - 110.0,
            20.0 + 16.0 * i as f64,
            esc(name)
        );
    }
    svg.push_str("</svg>");
    svg
}

/// The whole page.
pub fn page(r: &Report, tree: &SkillTree) -> String {
    let heldout: Vec<(String, Vec<(usize, f64)>)> = r
        .skills
        .iter()
        .filter(|s| s.in_run)
        .map(|s| {
            let points = r
                .history
                .iter()
                .filter_map(|g| {
                    g.skills
                        .get(&s.name)
                        .and_then(|k| k.heldout_success)
                        .map(|h| (g.generation, h))
                })
                .collect();
            (s.name.clone(), points)
        })
        .filter(|(_, p): &(String, Vec<_>)| !p.is_empty())
        .collect();
    let pools = pool_and_synthesis(r);
    let max_pool = pools.iter().map(|(_, p, _)| *p).max().unwrap_or(1).max(1) as f64;
    let mut data_series = vec![(
        "golden pool".to_owned(),
        pools
            .iter()
            .map(|(g, p, _)| (*g, *p as f64))
            .collect::<Vec<_>>(),
    )];
    let signals: std::collections::BTreeSet<String> = pools
        .iter()
        .flat_map(|(_, _, s)| s.keys().cloned())
        .collect();
    for signal in signals {
        data_series.push((
            format!("synth: {signal}"),
            pools
                .iter()
                .map(|(g, _, s)| (*g, s.get(&signal).copied().unwrap_or(0) as f64))
                .collect(),
        ));
    }
    let md = markdown(r);
    format!(
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>coevolve run {run}</title>
<style>body{{font-family:sans-serif;margin:24px;background:#fafafa;color:#222}}h1,h2{{font-weight:600}}pre{{background:#fff;border:1px solid #ddd;padding:12px;overflow:auto;font-size:12px}}.legend span{{display:inline-block;padding:2px 8px;margin-right:8px;border-radius:4px}}</style></head>
<body><h1>coevolve run <code>{run}</code> — skill tree <code>{tree}</code></h1>
<p>{gens} generations · {episodes} simulated episodes · {rollbacks} rollbacks · {wall:.0} s · curriculum {curriculum} · refinement {refine}</p>
<h2>Skill tree</h2>
<p class="legend"><span style="background:#4caf50">mastered</span><span style="background:#ffb74d">learning</span><span style="background:#ef9a9a">no success yet</span><span style="background:#d9d9d9">not in this run</span></p>
{tree_svg}
<h2>Held-out success per skill</h2>
{heldout_svg}
<h2>Data pool and synthesised variants</h2>
{data_svg}
<h2>Tables</h2>
<pre>{md}</pre>
</body></html>
"#,
        run = esc(&r.run),
        tree = esc(&r.tree),
        gens = r.generations_completed,
        episodes = r.episodes_simulated,
        rollbacks = r.rollbacks,
        wall = r.wall_s,
        curriculum = esc(&r.curriculum),
        refine = if r.refine { "on" } else { "off" },
        tree_svg = tree_svg(r, tree),
        heldout_svg = line_chart("heldout", &heldout, 1.0, "held-out success"),
        data_svg = line_chart("data", &data_series, max_pool, "episodes / variants"),
        md = esc(&md),
    )
}
