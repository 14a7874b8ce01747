//! The damped-least-squares steps of the IK on caller-owned buffers: small dense algebra over
//! row-major slices (at most 6 task rows), so that a solve allocates nothing.

/// Task rows at most (position and orientation).
pub(crate) const MAX_ROWS: usize = 6;

/// Buffers of the prioritised step for an arm of `n` joints.
#[derive(Debug, Default)]
pub(crate) struct PriorityScratch {
    /// Position rows' damped pseudo-inverse, n × 3.
    jp_pinv: Vec<f64>,
    /// Null-space projector of the position rows, n × n.
    null: Vec<f64>,
    /// Orientation rows projected into that null space, 3 × n.
    jo_null: Vec<f64>,
    dq_pos: Vec<f64>,
    dq_rot: Vec<f64>,
}

impl PriorityScratch {
    pub(crate) fn resize(&mut self, n: usize) {
        self.jp_pinv.resize(3 * n, 0.0);
        self.null.resize(n * n, 0.0);
        self.jo_null.resize(3 * n, 0.0);
        self.dq_pos.resize(n, 0.0);
        self.dq_rot.resize(n, 0.0);
    }
}

/// `jᵀ (j jᵀ + λ² I)⁻¹ e` for the `rows × n` matrix `j`, into `out` (n); false when the
/// system is singular (not positive definite).
pub(crate) fn damped_solve(
    j: &[f64],
    rows: usize,
    e: &[f64],
    damping: f64,
    out: &mut [f64],
) -> bool {
    let n = out.len();
    let mut a = [0.0; MAX_ROWS * MAX_ROWS];
    for r in 0..rows {
        for s in 0..rows {
            let dot: f64 = (0..n).map(|c| j[r * n + c] * j[s * n + c]).sum();
            let diagonal = if r == s { damping * damping } else { 0.0 };
            a[r * MAX_ROWS + s] = dot + diagonal;
        }
    }
    if !cholesky(&mut a, rows) {
        return false;
    }
    let mut y = [0.0; MAX_ROWS];
    y[..rows].copy_from_slice(&e[..rows]);
    cholesky_solve(&a, rows, &mut y);
    for (c, o) in out.iter_mut().enumerate() {
        *o = (0..rows).map(|r| j[r * n + c] * y[r]).sum();
    }
    true
}

/// The position-first step of a `6 × n` Jacobian `j`: the damped step for the position error
/// `pos`, plus the damped step for what is left of the rotation error `rot` within the null
/// space of the position rows (so it does not move the end effector's origin, to first
/// order). Into `out` (n); false when singular.
pub(crate) fn prioritised_step(
    j: &[f64],
    pos: &[f64; 3],
    rot: &[f64; 3],
    damping: f64,
    s: &mut PriorityScratch,
    out: &mut [f64],
) -> bool {
    let n = out.len();
    let (jp, jo) = j.split_at(3 * n);
    // (jp jpᵀ + λ² I)⁻¹, column by column.
    let mut a = [0.0; MAX_ROWS * MAX_ROWS];
    for r in 0..3 {
        for t in 0..3 {
            let dot: f64 = (0..n).map(|c| jp[r * n + c] * jp[t * n + c]).sum();
            a[r * MAX_ROWS + t] = dot + if r == t { damping * damping } else { 0.0 };
        }
    }
    if !cholesky(&mut a, 3) {
        return false;
    }
    let mut a_inv = [[0.0; 3]; 3];
    for (k, column) in a_inv.iter_mut().enumerate() {
        let mut unit = [0.0; MAX_ROWS];
        unit[k] = 1.0;
        cholesky_solve(&a, 3, &mut unit);
        column.copy_from_slice(&unit[..3]);
    }
    for c in 0..n {
        for (k, column) in a_inv.iter().enumerate() {
            s.jp_pinv[c * 3 + k] = (0..3).map(|r| jp[r * n + c] * column[r]).sum();
        }
        s.dq_pos[c] = (0..3).map(|k| s.jp_pinv[c * 3 + k] * pos[k]).sum();
    }
    for c in 0..n {
        for d in 0..n {
            let projected: f64 = (0..3).map(|k| s.jp_pinv[c * 3 + k] * jp[k * n + d]).sum();
            s.null[c * n + d] = if c == d { 1.0 } else { 0.0 } - projected;
        }
    }
    let mut rot_left = [0.0; 3];
    for r in 0..3 {
        for d in 0..n {
            s.jo_null[r * n + d] = (0..n).map(|c| jo[r * n + c] * s.null[c * n + d]).sum();
        }
        let moved: f64 = (0..n).map(|c| jo[r * n + c] * s.dq_pos[c]).sum();
        rot_left[r] = rot[r] - moved;
    }
    if !damped_solve(&s.jo_null, 3, &rot_left, damping, &mut s.dq_rot) {
        return false;
    }
    for (c, o) in out.iter_mut().enumerate() {
        let turn: f64 = (0..n).map(|d| s.null[c * n + d] * s.dq_rot[d]).sum();
        *o = s.dq_pos[c] + turn;
    }
    true
}

/// Cholesky factor `L` (a = L Lᵀ) of the symmetric positive definite leading `n × n` block
/// of `a` (row stride [`MAX_ROWS`]), in its lower triangle; false when it is not positive
/// definite.
fn cholesky(a: &mut [f64; MAX_ROWS * MAX_ROWS], n: usize) -> bool {
    let at = |i: usize, k: usize| i * MAX_ROWS + k;
    for j in 0..n {
        let d = a[at(j, j)] - (0..j).map(|k| a[at(j, k)] * a[at(j, k)]).sum::<f64>();
        if !(d > 0.0 && d.is_finite()) {
            return false;
        }
        let d = d.sqrt();
        a[at(j, j)] = d;
        for i in j + 1..n {
            let s = a[at(i, j)] - (0..j).map(|k| a[at(i, k)] * a[at(j, k)]).sum::<f64>();
            a[at(i, j)] = s / d;
        }
    }
    true
}

/// Solves `L Lᵀ x = b` in place (`b` becomes `x`) for a factor from [`cholesky`].
fn cholesky_solve(l: &[f64; MAX_ROWS * MAX_ROWS], n: usize, b: &mut [f64; MAX_ROWS]) {
    let at = |i: usize, k: usize| i * MAX_ROWS + k;
    for i in 0..n {
        let s = b[i] - (0..i).map(|k| l[at(i, k)] * b[k]).sum::<f64>();
        b[i] = s / l[at(i, i)];
    }
    for i in (0..n).rev() {
        let s = b[i] - (i + 1..n).map(|k| l[at(k, i)] * b[k]).sum::<f64>();
        b[i] = s / l[at(i, i)];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn damped_solve_matches_the_normal_equations() {
        // j = [[1, 2, 0], [0, 1, 1]], λ = 0.1: out = jᵀ (j jᵀ + λ² I)⁻¹ e.
        let j = [1.0, 2.0, 0.0, 0.0, 1.0, 1.0];
        let e = [0.5, -0.25];
        let mut out = [0.0; 3];
        assert!(damped_solve(&j, 2, &e, 0.1, &mut out));
        // j jᵀ + 0.01 I = [[5.01, 2], [2, 2.01]]; its inverse times e, then jᵀ.
        let det = 5.01 * 2.01 - 4.0;
        let y = [
            (2.01 * 0.5 - 2.0 * -0.25) / det,
            (-2.0 * 0.5 + 5.01 * -0.25) / det,
        ];
        let want = [y[0], 2.0 * y[0] + y[1], y[1]];
        for (o, w) in out.iter().zip(want) {
            assert!((o - w).abs() < 1e-12, "{out:?} vs {want:?}");
        }
    }

    #[test]
    fn a_singular_system_is_refused() {
        let j = [0.0; 6];
        let mut out = [0.0; 3];
        assert!(!damped_solve(&j, 2, &[1.0, 1.0], 0.0, &mut out));
    }
}
