//! The arithmetic of the host forward pass on row-major `f32` slices: a register-tiled
//! matrix product over weights packed in column panels (compiled twice, for AVX2 + FMA where
//! the CPU has them and for any target), layer norm, the tanh-approximated GELU and attention.
//! Every output element is accumulated in a fixed order, so a result does not depend on the
//! tile a token fell in.

/// Tokens per register tile (6 × 2 AVX accumulators: enough independent sums to keep both
/// FMA pipes busy).
const TILE_ROWS: usize = 6;
/// Outputs per register tile.
const TILE_COLS: usize = 16;

/// `y[t × n] = x[t × k] · W + b` for a weight `W` (`k × n`) packed into panels of
/// [`TILE_COLS`] columns ([`pack`]), `b` padded like it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Gemm {
    /// The CPU has AVX2 and FMA (checked once, when the network was built).
    pub fast: bool,
}

/// `w` (`k × n`, row-major) as panels of [`TILE_COLS`] columns, each `k × TILE_COLS`
/// contiguous (the last zero-padded): a tile's weights are read in order, once per product.
pub(crate) fn pack(w: &[f32], k: usize, n: usize) -> Vec<f32> {
    let panels = n.div_ceil(TILE_COLS);
    let mut out = vec![0.0; panels * k * TILE_COLS];
    for p in 0..panels {
        for kk in 0..k {
            for j in 0..TILE_COLS.min(n - p * TILE_COLS) {
                out[(p * k + kk) * TILE_COLS + j] = w[kk * n + p * TILE_COLS + j];
            }
        }
    }
    out
}

/// `b` zero-padded to whole panels.
pub(crate) fn pad_bias(b: &[f32]) -> Vec<f32> {
    let mut out = b.to_vec();
    out.resize(b.len().div_ceil(TILE_COLS) * TILE_COLS, 0.0);
    out
}

impl Gemm {
    pub fn detect() -> Gemm {
        #[cfg(target_arch = "x86_64")]
        let fast = is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma");
        #[cfg(not(target_arch = "x86_64"))]
        let fast = false;
        Gemm { fast }
    }

    /// `x`: `t × k`; `w_p`, `b`: from [`pack`] and [`pad_bias`]; `y`: `t × n`.
    pub fn run(self, x: &[f32], t: usize, k: usize, w_p: &[f32], b: &[f32], y: &mut [f32]) {
        #[cfg(target_arch = "x86_64")]
        if self.fast {
            #[allow(unsafe_code)]
            // SAFETY: `fast` is true only where `is_x86_feature_detected!` found AVX2 and FMA,
            // the features `gemm_avx2_fma` is compiled for; it is otherwise safe Rust.
            unsafe {
                gemm_avx2_fma(x, t, k, w_p, b, y);
            }
            return;
        }
        gemm::<false>(x, t, k, w_p, b, y);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn gemm_avx2_fma(x: &[f32], t: usize, k: usize, w_p: &[f32], b: &[f32], y: &mut [f32]) {
    gemm::<true>(x, t, k, w_p, b, y);
}

/// Panel by panel (its weights stay in cache), all rows in tiles of [`TILE_ROWS`].
#[inline(always)]
fn gemm<const FMA: bool>(x: &[f32], t: usize, k: usize, w_p: &[f32], b: &[f32], y: &mut [f32]) {
    if t == 0 || k == 0 {
        return;
    }
    let n = y.len() / t;
    for (p, panel) in w_p.chunks_exact(k * TILE_COLS).enumerate() {
        let col = p * TILE_COLS;
        let Some(bias) = b.get(col..col + TILE_COLS) else {
            return;
        };
        let Ok(bias) = <&[f32; TILE_COLS]>::try_from(bias) else {
            return;
        };
        let width = TILE_COLS.min(n - col);
        let mut row = 0;
        while row + TILE_ROWS <= t {
            let acc = tile::<TILE_ROWS, FMA>(x, row, k, panel, bias);
            store(&acc, y, row, n, col, width);
            row += TILE_ROWS;
        }
        // The rest in one tile of its size.
        macro_rules! rest {
            ($($r:literal)*) => {
                match t - row {
                    $($r => store(&tile::<$r, FMA>(x, row, k, panel, bias), y, row, n, col, width),)*
                    _ => {}
                }
            };
        }
        rest!(1 2 3 4 5);
    }
}

/// Rows `row..row + R` of one panel's product, in registers.
#[inline(always)]
fn tile<const R: usize, const FMA: bool>(
    x: &[f32],
    row: usize,
    k: usize,
    panel: &[f32],
    bias: &[f32; TILE_COLS],
) -> [[f32; TILE_COLS]; R] {
    let xs: [&[f32]; R] = std::array::from_fn(|r| &x[(row + r) * k..(row + r + 1) * k]);
    let mut acc = [*bias; R];
    for (kk, w) in panel.chunks_exact(TILE_COLS).enumerate() {
        let Ok(w) = <&[f32; TILE_COLS]>::try_from(w) else {
            break;
        };
        for (a, xr) in acc.iter_mut().zip(&xs) {
            let xv = xr[kk];
            for j in 0..TILE_COLS {
                a[j] = madd::<FMA>(xv, w[j], a[j]);
            }
        }
    }
    acc
}

#[inline(always)]
fn store<const R: usize>(
    acc: &[[f32; TILE_COLS]; R],
    y: &mut [f32],
    row: usize,
    n: usize,
    col: usize,
    width: usize,
) {
    for (r, a) in acc.iter().enumerate() {
        let at = (row + r) * n + col;
        y[at..at + width].copy_from_slice(&a[..width]);
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
        let (w_p, b_p) = (pack(&w, k, n), pad_bias(&b));
        for fast in [false, Gemm::detect().fast] {
            let mut y = vec![0.0f32; t * n];
            Gemm { fast }.run(&x, t, k, &w_p, &b_p, &mut y);
            for (a, b) in y.iter().zip(&want) {
                assert!((a - b).abs() < 1e-4, "fast {fast}: {a} vs {b}");
            }
        }
    }
}
