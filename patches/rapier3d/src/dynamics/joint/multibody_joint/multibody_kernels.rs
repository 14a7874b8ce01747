//! Small dense kernels for the multibody mass matrix, on column-major slices.
//!
//! They compute exactly what the nalgebra BLAS calls they replace compute (`quadform`,
//! `gemm_tr`), in the same order of floating-point operations, so results are bitwise equal
//! (up to the sign of exact zeros); they only skip the products with the structural zeros of
//! a rigid body's spatial mass matrix and the dynamic-size bookkeeping. Sizes are a link's
//! `w` nonzero Jacobian columns (see `Multibody::update_mass_matrix`).

use crate::math::{ANG_DIM, DIM, Real, SPATIAL_DIM};
use na::SMatrix;

/// `mid · j` for a rigid body's spatial mass matrix `mid = diag(mass) ⊕ inertia`, with
/// nalgebra `gemv`'s summation order over the nonzero entries.
#[inline(always)]
fn mass_times(mid: &SMatrix<Real, SPATIAL_DIM, SPATIAL_DIM>, j: &[Real]) -> [Real; SPATIAL_DIM] {
    let mut work = [0.0; SPATIAL_DIM];
    for r in 0..DIM {
        work[r] = mid[(r, r)] * j[r];
    }
    for r in DIM..SPATIAL_DIM {
        let mut acc = mid[(r, DIM)] * j[DIM];
        for k in DIM + 1..DIM + ANG_DIM {
            acc = mid[(r, k)] * j[k] + acc;
        }
        work[r] = acc;
    }
    work
}

/// `a[..w, ..w] += jᵀ·mid_a·j` and `b[..w, ..w] += jᵀ·mid_b·j`, where `a`, `b` are `n × n`
/// column-major and `j` is `SPATIAL_DIM × w` column-major. `mid_a`, `mid_b` are spatial mass
/// matrices with the same mass part (they differ in the angular block only).
pub(super) fn add_quadforms(
    a: &mut [Real],
    b: &mut [Real],
    n: usize,
    mid_a: &SMatrix<Real, SPATIAL_DIM, SPATIAL_DIM>,
    mid_b: &SMatrix<Real, SPATIAL_DIM, SPATIAL_DIM>,
    j: &[Real],
    w: usize,
) {
    let j = &j[..w * SPATIAL_DIM];
    for c in 0..w {
        let jc = &j[c * SPATIAL_DIM..(c + 1) * SPATIAL_DIM];
        let work_a = mass_times(mid_a, jc);
        let work_b = mass_times(mid_b, jc);
        let col_a = &mut a[c * n..c * n + w];
        let col_b = &mut b[c * n..c * n + w];
        for (r, jr) in j.chunks_exact(SPATIAL_DIM).enumerate() {
            // nalgebra's `dot`: a running sum from zero, the linear part shared.
            let mut lin = 0.0;
            for k in 0..DIM {
                lin += jr[k] * work_a[k];
            }
            let (mut dot_a, mut dot_b) = (lin, lin);
            for k in DIM..SPATIAL_DIM {
                dot_a += jr[k] * work_a[k];
                dot_b += jr[k] * work_b[k];
            }
            col_a[r] = dot_a + col_a[r];
            col_b[r] = dot_b + col_b[r];
        }
    }
}

/// `out[..w, ..w] += jᵀ·x`, where `out` is `n × n` column-major and `j`, `x` are
/// `SPATIAL_DIM × w` column-major (nalgebra `gemm_tr` with `alpha = beta = 1`).
pub(super) fn add_gemm_tr(out: &mut [Real], n: usize, j: &[Real], x: &[Real], w: usize) {
    let j = &j[..w * SPATIAL_DIM];
    for (c, xc) in x[..w * SPATIAL_DIM].chunks_exact(SPATIAL_DIM).enumerate() {
        let col = &mut out[c * n..c * n + w];
        for (r, jr) in j.chunks_exact(SPATIAL_DIM).enumerate() {
            let mut dot = 0.0;
            for k in 0..SPATIAL_DIM {
                dot += jr[k] * xc[k];
            }
            col[r] = dot + col[r];
        }
    }
}
