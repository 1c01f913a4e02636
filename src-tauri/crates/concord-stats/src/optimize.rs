//! Small derivative-free numerical routines used by the likelihood-based estimators: Brent's
//! bounded minimiser, Brent's root finder (zeroin) and Nelder–Mead simplexes for two and for any
//! number of parameters.
//! They evaluate a caller-supplied function only; non-finite function values are treated as +∞ so
//! that an estimator can signal an infeasible point without panicking.

/// The golden-section constant (3 − √5)/2 used by Brent's minimiser.
const GOLDEN: f64 = 0.381_966_011_250_105_1;

fn finite_or_inf(v: f64) -> f64 {
    if v.is_nan() {
        f64::INFINITY
    } else {
        v
    }
}

/// Minimise `f` on `[a, b]` by Brent's method (golden section with parabolic steps), to an absolute
/// abscissa tolerance `tol`. Returns `(x, f(x))`. The end points themselves are never evaluated;
/// callers that care about a boundary minimum compare with `f(a)` or `f(b)` afterwards.
pub fn brent_min<F: FnMut(f64) -> f64>(mut f: F, a: f64, b: f64, tol: f64) -> (f64, f64) {
    let (mut a, mut b) = if a <= b { (a, b) } else { (b, a) };
    let mut x = a + GOLDEN * (b - a);
    let (mut w, mut v) = (x, x);
    let mut fx = finite_or_inf(f(x));
    let (mut fw, mut fv) = (fx, fx);
    let (mut d, mut e) = (0.0f64, 0.0f64);
    for _ in 0..200 {
        let m = 0.5 * (a + b);
        let tol1 = 1e-10 * x.abs() + tol / 3.0;
        let tol2 = 2.0 * tol1;
        if (x - m).abs() <= tol2 - 0.5 * (b - a) {
            break;
        }
        let mut golden = true;
        if e.abs() > tol1 {
            let r = (x - w) * (fx - fv);
            let mut q = (x - v) * (fx - fw);
            let mut p = (x - v) * q - (x - w) * r;
            q = 2.0 * (q - r);
            if q > 0.0 {
                p = -p;
            } else {
                q = -q;
            }
            if p.abs() < (0.5 * q * e).abs() && p > q * (a - x) && p < q * (b - x) {
                e = d;
                d = p / q;
                let u = x + d;
                if u - a < tol2 || b - u < tol2 {
                    d = if x < m { tol1 } else { -tol1 };
                }
                golden = false;
            }
        }
        if golden {
            e = if x < m { b - x } else { a - x };
            d = GOLDEN * e;
        }
        let u = if d.abs() >= tol1 {
            x + d
        } else if d > 0.0 {
            x + tol1
        } else {
            x - tol1
        };
        let fu = finite_or_inf(f(u));
        if fu <= fx {
            if u < x {
                b = x;
            } else {
                a = x;
            }
            v = w;
            fv = fw;
            w = x;
            fw = fx;
            x = u;
            fx = fu;
        } else {
            if u < x {
                a = u;
            } else {
                b = u;
            }
            if fu <= fw || w == x {
                v = w;
                fv = fw;
                w = u;
                fw = fu;
            } else if fu <= fv || v == x || v == w {
                v = u;
                fv = fu;
            }
        }
    }
    (x, fx)
}

/// A root of `f` in `[a, b]` by Brent's zeroin, given `f(a)` and `f(b)` of opposite signs (or one
/// of them zero); `None` when they have the same sign. Absolute tolerance `tol`.
pub fn brent_root<F: FnMut(f64) -> f64>(mut f: F, a: f64, b: f64, tol: f64) -> Option<f64> {
    let (mut a, mut b) = (a, b);
    let (mut fa, mut fb) = (f(a), f(b));
    if fa == 0.0 {
        return Some(a);
    }
    if fb == 0.0 {
        return Some(b);
    }
    if !(fa.is_finite() && fb.is_finite()) || (fa > 0.0) == (fb > 0.0) {
        return None;
    }
    let (mut c, mut fc) = (a, fa);
    let mut d = b - a;
    let mut e = d;
    for _ in 0..200 {
        if (fb > 0.0) == (fc > 0.0) {
            c = a;
            fc = fa;
            d = b - a;
            e = d;
        }
        if fc.abs() < fb.abs() {
            a = b;
            b = c;
            c = a;
            fa = fb;
            fb = fc;
            fc = fa;
        }
        let tol1 = 2.0 * f64::EPSILON * b.abs() + 0.5 * tol;
        let xm = 0.5 * (c - b);
        if xm.abs() <= tol1 || fb == 0.0 {
            return Some(b);
        }
        if e.abs() >= tol1 && fa.abs() > fb.abs() {
            let s = fb / fa;
            let (mut p, mut q);
            if a == c {
                p = 2.0 * xm * s;
                q = 1.0 - s;
            } else {
                let qa = fa / fc;
                let r = fb / fc;
                p = s * (2.0 * xm * qa * (qa - r) - (b - a) * (r - 1.0));
                q = (qa - 1.0) * (r - 1.0) * (s - 1.0);
            }
            if p > 0.0 {
                q = -q;
            }
            p = p.abs();
            let min1 = 3.0 * xm * q - (tol1 * q).abs();
            let min2 = (e * q).abs();
            if 2.0 * p < min1.min(min2) {
                e = d;
                d = p / q;
            } else {
                d = xm;
                e = d;
            }
        } else {
            d = xm;
            e = d;
        }
        a = b;
        fa = fb;
        b += if d.abs() > tol1 {
            d
        } else if xm > 0.0 {
            tol1
        } else {
            -tol1
        };
        fb = f(b);
        if !fb.is_finite() {
            return None;
        }
    }
    Some(b)
}

/// Minimise `f` over the plane by the Nelder–Mead simplex from `start` with initial step `step`,
/// stopping when the simplex's function values agree to `ftol` (absolute) and its vertices to
/// `xtol` (absolute), or after `max_evals` evaluations. Returns `(x, f(x))`.
pub fn nelder_mead_2d<F: FnMut([f64; 2]) -> f64>(
    mut f: F,
    start: [f64; 2],
    step: f64,
    ftol: f64,
    xtol: f64,
    max_evals: usize,
) -> ([f64; 2], f64) {
    let mut pts = [
        start,
        [start[0] + step, start[1]],
        [start[0], start[1] + step],
    ];
    let mut vals = pts.map(|p| finite_or_inf(f(p)));
    let mut evals = 3;
    loop {
        // Order best (0) to worst (2).
        let mut idx = [0usize, 1, 2];
        idx.sort_by(|&i, &j| vals[i].total_cmp(&vals[j]));
        pts = idx.map(|i| pts[i]);
        vals = idx.map(|i| vals[i]);
        let spread = (vals[2] - vals[0]).abs();
        let size = (1..3)
            .map(|i| {
                (pts[i][0] - pts[0][0])
                    .abs()
                    .max((pts[i][1] - pts[0][1]).abs())
            })
            .fold(0.0f64, f64::max);
        if (spread <= ftol && size <= xtol) || evals >= max_evals {
            return (pts[0], vals[0]);
        }
        let centroid = [0.5 * (pts[0][0] + pts[1][0]), 0.5 * (pts[0][1] + pts[1][1])];
        let along = |t: f64| {
            [
                centroid[0] + t * (pts[2][0] - centroid[0]),
                centroid[1] + t * (pts[2][1] - centroid[1]),
            ]
        };
        let xr = along(-1.0);
        let fr = finite_or_inf(f(xr));
        evals += 1;
        if fr < vals[0] {
            let xe = along(-2.0);
            let fe = finite_or_inf(f(xe));
            evals += 1;
            if fe < fr {
                pts[2] = xe;
                vals[2] = fe;
            } else {
                pts[2] = xr;
                vals[2] = fr;
            }
        } else if fr < vals[1] {
            pts[2] = xr;
            vals[2] = fr;
        } else {
            let (xc, fc) = if fr < vals[2] {
                let xc = along(-0.5);
                (xc, finite_or_inf(f(xc)))
            } else {
                let xc = along(0.5);
                (xc, finite_or_inf(f(xc)))
            };
            evals += 1;
            if fc < vals[2].min(fr) {
                pts[2] = xc;
                vals[2] = fc;
            } else {
                for i in 1..3 {
                    pts[i] = [
                        pts[0][0] + 0.5 * (pts[i][0] - pts[0][0]),
                        pts[0][1] + 0.5 * (pts[i][1] - pts[0][1]),
                    ];
                    vals[i] = finite_or_inf(f(pts[i]));
                }
                evals += 2;
            }
        }
    }
}

/// Minimise `f` over ℝⁿ by the Nelder–Mead simplex (standard coefficients 1, 2, ½, ½) from
/// `start` with initial step `step` along each axis, stopping when the simplex's function values
/// agree to `ftol` (absolute) and its vertices to `xtol` (absolute, per coordinate), or after
/// `max_evals` evaluations. Returns `(x, f(x))`.
pub fn nelder_mead<F: FnMut(&[f64]) -> f64>(
    mut f: F,
    start: &[f64],
    step: f64,
    ftol: f64,
    xtol: f64,
    max_evals: usize,
) -> (Vec<f64>, f64) {
    let n = start.len();
    let mut pts: Vec<Vec<f64>> = (0..=n)
        .map(|i| {
            let mut p = start.to_vec();
            if i > 0 {
                p[i - 1] += step;
            }
            p
        })
        .collect();
    let mut vals: Vec<f64> = pts.iter().map(|p| finite_or_inf(f(p))).collect();
    let mut evals = n + 1;
    loop {
        let mut idx: Vec<usize> = (0..=n).collect();
        idx.sort_by(|&i, &j| vals[i].total_cmp(&vals[j]));
        pts = idx.iter().map(|&i| pts[i].clone()).collect();
        vals = idx.iter().map(|&i| vals[i]).collect();
        let spread = (vals[n] - vals[0]).abs();
        let size = pts[1..]
            .iter()
            .flat_map(|p| p.iter().zip(&pts[0]).map(|(a, b)| (a - b).abs()))
            .fold(0.0f64, f64::max);
        if (spread <= ftol && size <= xtol) || evals >= max_evals || n == 0 {
            return (pts.swap_remove(0), vals[0]);
        }
        let centroid: Vec<f64> = (0..n)
            .map(|j| pts[..n].iter().map(|p| p[j]).sum::<f64>() / n as f64)
            .collect();
        let along = |t: f64| -> Vec<f64> {
            (0..n)
                .map(|j| centroid[j] + t * (pts[n][j] - centroid[j]))
                .collect()
        };
        let xr = along(-1.0);
        let fr = finite_or_inf(f(&xr));
        evals += 1;
        if fr < vals[0] {
            let xe = along(-2.0);
            let fe = finite_or_inf(f(&xe));
            evals += 1;
            (pts[n], vals[n]) = if fe < fr { (xe, fe) } else { (xr, fr) };
        } else if fr < vals[n - 1] {
            (pts[n], vals[n]) = (xr, fr);
        } else {
            let xc = along(if fr < vals[n] { -0.5 } else { 0.5 });
            let fc = finite_or_inf(f(&xc));
            evals += 1;
            if fc < vals[n].min(fr) {
                (pts[n], vals[n]) = (xc, fc);
            } else {
                for i in 1..=n {
                    let p: Vec<f64> = (0..n)
                        .map(|j| pts[0][j] + 0.5 * (pts[i][j] - pts[0][j]))
                        .collect();
                    vals[i] = finite_or_inf(f(&p));
                    pts[i] = p;
                }
                evals += n;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brent_min_finds_a_parabola_vertex() {
        let (x, fx) = brent_min(|x| (x - 1.25).powi(2) + 3.0, -4.0, 9.0, 1e-10);
        assert!((x - 1.25).abs() < 1e-8, "the vertex is at 1.25, found {x}");
        assert!((fx - 3.0).abs() < 1e-12, "the minimum value is 3");
    }

    #[test]
    fn brent_root_finds_sqrt_two() {
        let r = brent_root(|x| x * x - 2.0, 0.0, 2.0, 1e-14).expect("signs differ at 0 and 2");
        assert!((r - 2f64.sqrt()).abs() < 1e-12, "the root is √2, found {r}");
        assert!(
            brent_root(|x| x * x + 1.0, 0.0, 2.0, 1e-14).is_none(),
            "no sign change, no root"
        );
    }

    #[test]
    fn nelder_mead_finds_a_four_dimensional_bowl() {
        let (x, _) = nelder_mead(
            |p| {
                p.iter()
                    .enumerate()
                    .map(|(i, v)| (i + 1) as f64 * (v - i as f64).powi(2))
                    .sum()
            },
            &[3.0, 3.0, 3.0, 3.0],
            0.5,
            1e-16,
            1e-10,
            20_000,
        );
        for (i, v) in x.iter().enumerate() {
            assert!(
                (v - i as f64).abs() < 1e-6,
                "the bowl's centre is (0, 1, 2, 3), coordinate {i} found at {v}"
            );
        }
    }

    #[test]
    fn nelder_mead_finds_rosenbrock_minimum() {
        let (x, _) = nelder_mead_2d(
            |p| (1.0 - p[0]).powi(2) + 100.0 * (p[1] - p[0] * p[0]).powi(2),
            [-1.2, 1.0],
            0.5,
            1e-16,
            1e-10,
            10_000,
        );
        assert!(
            (x[0] - 1.0).abs() < 1e-6 && (x[1] - 1.0).abs() < 1e-6,
            "Rosenbrock's minimum is (1, 1), found {x:?}"
        );
    }
}
