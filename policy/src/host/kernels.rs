//! The arithmetic of the host forward pass on row-major `f32` slices: a register-tiled
//! matrix product (compiled twice, for AVX2 + FMA where the CPU has them and for any x86-64 or
//! other target), layer norm, the tanh-approximated GELU and masked-free attention. Every
//! output element is accumulated in a fixed order, so a result does not depend on the tile a
//! token fell in.

/// Tokens per register tile.
const TILE_ROWS: usize = 4;
/// Outputs per register tile.
const TILE_COLS: usize = 16;

/// `y[t × n] = x[t × k] · w_t[k × n] + b` (`w_t` is the layer's weight transposed).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Gemm {
    /// The CPU has AVX2 and FMA (checked once, when the network was built).
    pub fast: bool,
}

impl Gemm {
    pub fn detect() -> Gemm {
        #[cfg(target_arch = "x86_64")]
        let fast = is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma");
        #[cfg(not(target_arch = "x86_64"))]
        let fast = false;
        Gemm { fast }
    }

    #[allow(clippy::too_many_arguments)]
    pub fn run(
        self,
        x: &[f32],
        t: usize,
        k: usize,
        w_t: &[f32],
        n: usize,
        b: &[f32],
        y: &mut [f32],
    ) {
        #[cfg(target_arch = "x86_64")]
        if self.fast {
            #[allow(unsafe_code)]
            // SAFETY: `fast` is true only where `is_x86_feature_detected!` found AVX2 and FMA,
            // the features `gemm_avx2_fma` is compiled for; it is otherwise safe Rust.
            unsafe {
                gemm_avx2_fma(x, t, k, w_t, n, b, y);
            }
            return;
        }
        gemm::<false>(x, t, k, w_t, n, b, y);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn gemm_avx2_fma(x: &[f32], t: usize, k: usize, w_t: &[f32], n: usize, b: &[f32], y: &mut [f32]) {
    gemm::<true>(x, t, k, w_t, n, b, y);
}

#[inline(always)]
fn gemm<const FMA: bool>(
    x: &[f32],
    t: usize,
    k: usize,
    w_t: &[f32],
    n: usize,
    b: &[f32],
    y: &mut [f32],
) {
    let mut row = 0;
    while row + TILE_ROWS <= t {
        rows::<TILE_ROWS, FMA>(x, row, k, w_t, n, b, y);
        row += TILE_ROWS;
    }
    while row < t {
        rows::<1, FMA>(x, row, k, w_t, n, b, y);
        row += 1;
    }
}

/// Rows `row..row + R` of the product.
#[inline(always)]
fn rows<const R: usize, const FMA: bool>(
    x: &[f32],
    row: usize,
    k: usize,
    w_t: &[f32],
    n: usize,
    b: &[f32],
    y: &mut [f32],
) {
    let xs: [&[f32]; R] = std::array::from_fn(|r| &x[(row + r) * k..(row + r + 1) * k]);
    let mut col = 0;
    while col + TILE_COLS <= n {
        let mut acc = [[0.0f32; TILE_COLS]; R];
        for a in &mut acc {
            a.copy_from_slice(&b[col..col + TILE_COLS]);
        }
        for kk in 0..k {
            let w = &w_t[kk * n + col..kk * n + col + TILE_COLS];
            for (a, xr) in acc.iter_mut().zip(&xs) {
                let xv = xr[kk];
                for (acc_j, w_j) in a.iter_mut().zip(w) {
                    *acc_j = madd::<FMA>(xv, *w_j, *acc_j);
                }
            }
        }
        for (r, a) in acc.iter().enumerate() {
            y[(row + r) * n + col..(row + r) * n + col + TILE_COLS].copy_from_slice(a);
        }
        col += TILE_COLS;
    }
    for c in col..n {
        for (r, xr) in xs.iter().enumerate() {
            let mut acc = b[c];
            for kk in 0..k {
                acc = madd::<FMA>(xr[kk], w_t[kk * n + c], acc);
            }
            y[(row + r) * n + c] = acc;
        }
    }
}

#[inline(always)]
fn madd<const FMA: bool>(a: f32, b: f32, c: f32) -> f32 {
    if FMA {
        a.mul_add(b, c)
    } else {
        a * b + c
    }
}

/// Layer norm of each `d`-wide row of `x` into `y` (biased variance, eps 1e-5, as torch).
pub(crate) fn layer_norm(x: &[f32], d: usize, gain: &[f32], bias: &[f32], y: &mut [f32]) {
    for (xr, yr) in x.chunks_exact(d).zip(y.chunks_exact_mut(d)) {
        let mean = xr.iter().sum::<f32>() / d as f32;
        let var = xr.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / d as f32;
        let inv = 1.0 / (var + 1e-5).sqrt();
        for (((o, v), g), b) in yr.iter_mut().zip(xr).zip(gain).zip(bias) {
            *o = (v - mean) * inv * g + b;
        }
    }
}

/// GELU with the tanh approximation (torch's `gelu(approximate="tanh")`), in place.
pub(crate) fn gelu_tanh(x: &mut [f32]) {
    const SQRT_2_OVER_PI: f32 = 0.797_884_6;
    for v in x {
        let u = SQRT_2_OVER_PI * (*v + 0.044_715 * *v * *v * *v);
        *v = 0.5 * *v * (1.0 + tanh(u));
    }
}

/// tanh as a clamped rational function (Eigen's float tanh: a few ulp), branch-free so that
/// it vectorises.
fn tanh(a: f32) -> f32 {
    let x = a.clamp(-7.998_811_7, 7.998_811_7);
    let x2 = x * x;
    let mut p = x2 * -2.760_768_5e-16 + 2.000_188e-13;
    p = x2 * p + -8.604_672e-11;
    p = x2 * p + 5.122_297e-8;
    p = x2 * p + 1.485_722_4e-5;
    p = x2 * p + 6.372_619_3e-4;
    p = x2 * p + 4.893_524_6e-3;
    p *= x;
    let mut q = x2 * 1.198_258_4e-6 + 1.185_347_1e-4;
    q = x2 * q + 2.268_434_6e-3;
    q = x2 * q + 4.893_525e-3;
    if a.abs() < 4e-4 {
        a
    } else {
        p / q
    }
}

/// Scaled dot-product attention of `heads` heads for the query tokens `queries` over all `t`
/// tokens of `qkv` (`t × 3d`: q, k, v per token), into `out` (`queries.len() × d`); `scores`
/// holds `t` values.
pub(crate) fn attention(
    qkv: &[f32],
    t: usize,
    d: usize,
    heads: usize,
    queries: std::ops::Range<usize>,
    scores: &mut [f32],
    out: &mut [f32],
) {
    let dh = d / heads;
    let scale = 1.0 / (dh as f32).sqrt();
    for (qi, o) in queries.zip(out.chunks_exact_mut(d)) {
        for h in 0..heads {
            let q = &qkv[qi * 3 * d + h * dh..qi * 3 * d + (h + 1) * dh];
            let mut max = f32::NEG_INFINITY;
            for (kj, s) in scores[..t].iter_mut().enumerate() {
                let k = &qkv[kj * 3 * d + d + h * dh..kj * 3 * d + d + (h + 1) * dh];
                *s = q.iter().zip(k).map(|(a, b)| a * b).sum::<f32>() * scale;
                max = max.max(*s);
            }
            let mut total = 0.0;
            for s in &mut scores[..t] {
                *s = (*s - max).exp();
                total += *s;
            }
            let oh = &mut o[h * dh..(h + 1) * dh];
            oh.fill(0.0);
            for (kj, s) in scores[..t].iter().enumerate() {
                let v = &qkv[kj * 3 * d + 2 * d + h * dh..kj * 3 * d + 2 * d + (h + 1) * dh];
                let w = s / total;
                for (a, b) in oh.iter_mut().zip(v) {
                    *a += w * b;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tanh_is_within_a_few_ulp() {
        for i in -2000..=2000 {
            let x = i as f32 * 0.005;
            let err = (tanh(x) - x.tanh()).abs();
            assert!(
                err <= 4.0 * f32::EPSILON,
                "tanh({x}): {} vs {}",
                tanh(x),
                x.tanh()
            );
        }
    }

    #[test]
    fn gemm_paths_agree_with_the_naive_product() {
        let (t, k, n) = (7, 13, 37);
        let x: Vec<f32> = (0..t * k)
            .map(|i| ((i * 7919) % 17) as f32 * 0.1 - 0.8)
            .collect();
        let w: Vec<f32> = (0..k * n)
            .map(|i| ((i * 104_729) % 23) as f32 * 0.05 - 0.5)
            .collect();
        let b: Vec<f32> = (0..n).map(|i| i as f32 * 0.01).collect();
        let mut want = vec![0.0f32; t * n];
        for r in 0..t {
            for c in 0..n {
                want[r * n + c] =
                    b[c] + (0..k).map(|kk| x[r * k + kk] * w[kk * n + c]).sum::<f32>();
            }
        }
        for fast in [false, Gemm::detect().fast] {
            let mut y = vec![0.0f32; t * n];
            Gemm { fast }.run(&x, t, k, &w, n, &b, &mut y);
            for (a, b) in y.iter().zip(&want) {
                assert!((a - b).abs() < 1e-4, "fast {fast}: {a} vs {b}");
            }
        }
    }
}
