//! Per-feature statistics as LeRobot stores them (`meta/stats.json` and per episode in the
//! episodes table): min, max, mean, std (population), count and quantiles, per dimension.
//! Images are summarised per channel with values scaled to [0, 1] (shape `[c, 1, 1]`).

use serde_json::{json, Value};

/// Quantile levels and their names, as `lerobot` 0.6 computes them.
pub const QUANTILES: [(f64, &str); 5] = [
    (0.01, "q01"),
    (0.10, "q10"),
    (0.50, "q50"),
    (0.90, "q90"),
    (0.99, "q99"),
];

/// The statistics of one feature: one entry per dimension (per channel for images).
#[derive(Clone, Debug, PartialEq)]
pub struct FeatureStats {
    pub min: Vec<f64>,
    pub max: Vec<f64>,
    pub mean: Vec<f64>,
    pub std: Vec<f64>,
    pub count: u64,
    /// One vector per entry of [`QUANTILES`].
    pub quantiles: Vec<Vec<f64>>,
    /// Image statistics are nested `[c, 1, 1]` in JSON.
    pub per_channel: bool,
}

/// `q`-quantile of sorted values by linear interpolation (numpy's default).
fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let pos = q * (sorted.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

impl FeatureStats {
    /// Statistics of `columns[d]` = every value of dimension `d`.
    pub fn of_columns(mut columns: Vec<Vec<f64>>, per_channel: bool) -> Self {
        let count = columns.first().map_or(0, Vec::len) as u64;
        let mut s = FeatureStats {
            min: Vec::new(),
            max: Vec::new(),
            mean: Vec::new(),
            std: Vec::new(),
            count,
            quantiles: vec![Vec::new(); QUANTILES.len()],
            per_channel,
        };
        for column in &mut columns {
            column.sort_by(f64::total_cmp);
            let n = column.len().max(1) as f64;
            let mean = column.iter().sum::<f64>() / n;
            let var = column.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
            s.min.push(column.first().copied().unwrap_or(0.0));
            s.max.push(column.last().copied().unwrap_or(0.0));
            s.mean.push(mean);
            s.std.push(var.sqrt());
            for (out, (q, _)) in s.quantiles.iter_mut().zip(QUANTILES) {
                out.push(quantile(column, q));
            }
        }
        s
    }

    /// Statistics of rows of equal length (frames × dimensions).
    pub fn of_rows<R: AsRef<[f32]>>(rows: &[R]) -> Self {
        let dims = rows.first().map_or(0, |r| r.as_ref().len());
        let columns = (0..dims)
            .map(|d| rows.iter().map(|r| f64::from(r.as_ref()[d])).collect())
            .collect();
        Self::of_columns(columns, false)
    }

    /// Statistics of a scalar column.
    pub fn of_scalars(values: impl IntoIterator<Item = f64>) -> Self {
        Self::of_columns(vec![values.into_iter().collect()], false)
    }

    /// Named statistics in LeRobot's order, each a vector (nested `[c][1][1]` per channel).
    pub fn named(&self) -> Vec<(&'static str, Vec<f64>)> {
        let mut out = vec![
            ("min", self.min.clone()),
            ("max", self.max.clone()),
            ("mean", self.mean.clone()),
            ("std", self.std.clone()),
            ("count", vec![self.count as f64]),
        ];
        for ((_, name), q) in QUANTILES.iter().zip(&self.quantiles) {
            out.push((name, q.clone()));
        }
        out
    }

    /// The JSON object of `meta/stats.json` for this feature.
    pub fn to_json(&self) -> Value {
        let mut map = serde_json::Map::new();
        for (name, values) in self.named() {
            let value = if name == "count" {
                json!([self.count])
            } else if self.per_channel {
                Value::Array(values.iter().map(|v| json!([[v]])).collect())
            } else {
                json!(values)
            };
            map.insert(name.to_owned(), value);
        }
        Value::Object(map)
    }
}

/// Statistics of all of `parts` together, as if computed on their concatenation (exact for
/// min, max, mean, std and count; quantiles are count-weighted means of the parts', as
/// `lerobot` aggregates them).
pub fn aggregate(parts: &[&FeatureStats]) -> Option<FeatureStats> {
    let first = *parts.first()?;
    let dims = first.mean.len();
    let total: f64 = parts.iter().map(|p| p.count as f64).sum();
    let w = |p: &FeatureStats| p.count as f64 / total.max(1.0);
    let mut s = FeatureStats {
        min: vec![f64::INFINITY; dims],
        max: vec![f64::NEG_INFINITY; dims],
        mean: vec![0.0; dims],
        std: vec![0.0; dims],
        count: total as u64,
        quantiles: vec![vec![0.0; dims]; QUANTILES.len()],
        per_channel: first.per_channel,
    };
    for p in parts {
        for d in 0..dims {
            s.min[d] = s.min[d].min(p.min[d]);
            s.max[d] = s.max[d].max(p.max[d]);
            s.mean[d] += w(p) * p.mean[d];
            for (q, pq) in s.quantiles.iter_mut().zip(&p.quantiles) {
                q[d] += w(p) * pq[d];
            }
        }
    }
    for p in parts {
        for d in 0..dims {
            s.std[d] += w(p) * (p.std[d].powi(2) + (p.mean[d] - s.mean[d]).powi(2));
        }
    }
    for v in &mut s.std {
        *v = v.sqrt();
    }
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aggregate_matches_the_concatenation() {
        let a: Vec<[f32; 2]> = vec![[1.0, 10.0], [2.0, 20.0], [3.0, 30.0]];
        let b: Vec<[f32; 2]> = vec![[7.0, -1.0], [9.0, -3.0]];
        let all: Vec<[f32; 2]> = a.iter().chain(&b).copied().collect();
        let (sa, sb, sall) = (
            FeatureStats::of_rows(&a),
            FeatureStats::of_rows(&b),
            FeatureStats::of_rows(&all),
        );
        let agg = aggregate(&[&sa, &sb]).unwrap_or_else(|| FeatureStats::of_rows::<[f32; 2]>(&[]));
        assert_eq!(agg.count, 5);
        for d in 0..2 {
            assert_eq!(agg.min[d], sall.min[d]);
            assert_eq!(agg.max[d], sall.max[d]);
            assert!((agg.mean[d] - sall.mean[d]).abs() < 1e-12);
            assert!((agg.std[d] - sall.std[d]).abs() < 1e-9);
        }
    }

    #[test]
    fn quantiles_interpolate_like_numpy() {
        let s = FeatureStats::of_scalars([0.0, 10.0, 20.0, 30.0, 40.0]);
        assert_eq!(s.quantiles[2], vec![20.0]);
        assert!((s.quantiles[0][0] - 0.4).abs() < 1e-12);
        assert!((s.quantiles[4][0] - 39.6).abs() < 1e-12);
        assert_eq!(s.to_json()["count"], json!([5]));
    }
}
