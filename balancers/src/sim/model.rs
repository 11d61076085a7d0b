//! Seconds from work: a task's time as a linear function of its work counts, fitted by least
//! squares against times measured on one thread.

use std::fmt;

/// `time = per_task + Σ per_unit[f] · work[f]`, in seconds.
///
/// ```
/// use balancers::sim::CostModel;
///
/// // 1 µs a task, and 0.5 µs for each unit of its one feature.
/// let model = CostModel { per_task: 1e-6, per_unit: vec![0.5e-6], fit: None };
/// assert!((model.cost(&[4]) - 3e-6).abs() < 1e-12);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct CostModel {
    /// What any task costs besides its work (taking it, starting it, finishing it).
    pub per_task: f64,
    /// What one unit of each feature costs.
    pub per_unit: Vec<f64>,
    /// How well the coefficients fitted the times they came from; `None` for coefficients
    /// given by hand.
    pub fit: Option<Fit>,
}

/// How well a fitted model explains the times it was fitted to.
///
/// ```
/// use balancers::sim::CostModel;
///
/// // Two tasks in each of two subtrees, each taking 1 µs plus 2 µs per unit.
/// let work = [1, 2, 3, 4];
/// let seconds = [3e-6, 5e-6, 7e-6, 9e-6];
/// let model = CostModel::fit(1, &work, &seconds, &[0, 0, 1, 1])?;
/// let fit = model.fit.expect("a fitted model says how well it fits");
/// assert_eq!(fit.rows, 4);
/// assert!(fit.r_squared > 0.999 && fit.subtree_p90_error < 1e-6);
/// # Ok::<(), balancers::sim::FitError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Fit {
    /// Tasks fitted.
    pub rows: u64,
    /// The share of the variance of the tasks' times the model explains.
    pub r_squared: f64,
    /// The relative error of the model's time for a whole subtree (an initial task and all it
    /// spawned, the unit a balancer first hands out): the median over subtrees, and the 90th
    /// percentile.
    pub subtree_median_error: f64,
    /// The 90th percentile of that error.
    pub subtree_p90_error: f64,
}

/// Why no model could be fitted.
///
/// ```
/// use balancers::sim::{CostModel, FitError};
///
/// // One feature and a constant need at least two tasks.
/// let error = CostModel::fit(1, &[3], &[1e-6], &[0]).unwrap_err();
/// assert_eq!(error, FitError::TooFewRows { rows: 1, coefficients: 2 });
/// assert!(matches!(CostModel::fit(2, &[3], &[1e-6], &[0]), Err(FitError::Shape(_))));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FitError {
    /// Fewer tasks than coefficients.
    TooFewRows {
        /// Tasks given.
        rows: usize,
        /// Coefficients of the model.
        coefficients: usize,
    },
    /// The inputs' lengths disagree.
    Shape(String),
}

impl fmt::Display for FitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FitError::TooFewRows { rows, coefficients } => {
                let tasks = if *rows == 1 { "task" } else { "tasks" };
                write!(
                    f,
                    "{rows} timed {tasks} cannot fit {coefficients} coefficients"
                )
            }
            FitError::Shape(what) => write!(f, "{what}"),
        }
    }
}

impl std::error::Error for FitError {}

impl CostModel {
    /// Seconds a task with these work counts takes.
    ///
    /// ```
    /// # use balancers::sim::CostModel;
    /// let model = CostModel { per_task: 1.0, per_unit: vec![2.0, 10.0], fit: None };
    /// assert_eq!(model.cost(&[3, 1]), 1.0 + 6.0 + 10.0);
    /// assert_eq!(model.cost(&[0, 0]), 1.0);
    /// ```
    #[inline]
    pub fn cost(&self, work: &[u32]) -> f64 {
        self.per_task
            + self
                .per_unit
                .iter()
                .zip(work)
                .map(|(c, &n)| c * f64::from(n))
                .sum::<f64>()
    }

    /// Checks that every coefficient is a finite number of seconds, not negative.
    ///
    /// ```
    /// # use balancers::sim::CostModel;
    /// let model = CostModel { per_task: 1e-6, per_unit: vec![2e-9], fit: None };
    /// assert!(model.check().is_ok());
    /// let negative = CostModel { per_unit: vec![-2e-9], ..model };
    /// assert!(negative.check().is_err());
    /// ```
    pub fn check(&self) -> Result<(), String> {
        let all = std::iter::once(&self.per_task).chain(&self.per_unit);
        match all.into_iter().find(|c| !c.is_finite() || **c < 0.0) {
            Some(c) => Err(format!(
                "cost coefficient {c}: must be a finite number of seconds, not negative"
            )),
            None => Ok(()),
        }
    }

    /// The model that explains `seconds` (one per task) by `work` (`features` counts per
    /// task): least squares with no coefficient below zero, by elimination (a coefficient the
    /// fit makes negative is set to 0 and the rest fitted again, the most negative first; one
    /// set to 0 is not tried again, so this approximates the best non-negative fit rather
    /// than guaranteeing it).
    /// `subtree` names each task's initial task, for the subtree errors of the [`Fit`].
    ///
    /// ```
    /// # use balancers::sim::CostModel;
    /// // Three tasks of two features each: 1 µs each, plus 1 µs per unit of the second feature.
    /// let work = [5, 0, 7, 1, 2, 3];
    /// let seconds = [1e-6, 2e-6, 4e-6];
    /// let model = CostModel::fit(2, &work, &seconds, &[0, 1, 2])?;
    /// assert!((model.per_task - 1e-6).abs() < 1e-12);
    /// assert!(model.per_unit[0].abs() < 1e-12 && (model.per_unit[1] - 1e-6).abs() < 1e-12);
    /// # Ok::<(), balancers::sim::FitError>(())
    /// ```
    pub fn fit(
        features: usize,
        work: &[u32],
        seconds: &[f64],
        subtree: &[u32],
    ) -> Result<Self, FitError> {
        let n = seconds.len();
        if work.len() != n * features || subtree.len() != n {
            return Err(FitError::Shape(format!(
                "{} work counts and {} subtrees for {n} tasks of {features} features",
                work.len(),
                subtree.len()
            )));
        }
        let k = features + 1;
        if n < k {
            return Err(FitError::TooFewRows {
                rows: n,
                coefficients: k,
            });
        }
        // The normal equations, column 0 the constant.
        let mut xtx = vec![0.0f64; k * k];
        let mut xty = vec![0.0f64; k];
        let mut row = vec![0.0f64; k];
        for (t, &y) in seconds.iter().enumerate() {
            row[0] = 1.0;
            for (r, &w) in row[1..]
                .iter_mut()
                .zip(&work[t * features..(t + 1) * features])
            {
                *r = f64::from(w);
            }
            for a in 0..k {
                xty[a] += row[a] * y;
                for b in a..k {
                    xtx[a * k + b] += row[a] * row[b];
                }
            }
        }
        for a in 0..k {
            for b in 0..a {
                xtx[a * k + b] = xtx[b * k + a];
            }
        }
        let mut active = vec![true; k];
        let beta = loop {
            let beta = solve(&xtx, &xty, &active);
            match (0..k)
                .filter(|&c| active[c] && beta[c] < 0.0)
                .min_by(|&a, &b| beta[a].total_cmp(&beta[b]))
            {
                Some(c) => active[c] = false,
                None => break beta,
            }
        };
        // `+ 0.0` turns a −0 (a zero divided by a negative pivot) into 0: one way to write 0.
        let mut model = Self {
            per_task: beta[0] + 0.0,
            per_unit: beta[1..].iter().map(|c| c + 0.0).collect(),
            fit: None,
        };
        // R² and the subtrees' errors, from a second pass.
        let mean = seconds.iter().sum::<f64>() / n as f64;
        let (mut residual, mut total) = (0.0, 0.0);
        let groups = subtree.iter().max().map_or(0, |&g| g as usize + 1);
        let mut measured = vec![0.0f64; groups];
        let mut predicted = vec![0.0f64; groups];
        for (t, &y) in seconds.iter().enumerate() {
            let p = model.cost(&work[t * features..(t + 1) * features]);
            residual += (y - p) * (y - p);
            total += (y - mean) * (y - mean);
            measured[subtree[t] as usize] += y;
            predicted[subtree[t] as usize] += p;
        }
        let mut errors: Vec<f64> = measured
            .iter()
            .zip(&predicted)
            .filter(|(m, _)| **m > 0.0)
            .map(|(m, p)| (p - m).abs() / m)
            .collect();
        errors.sort_by(f64::total_cmp);
        let quantile = |q: f64| {
            errors
                .get(((errors.len() as f64 - 1.0) * q).round() as usize)
                .copied()
                .unwrap_or(0.0)
        };
        model.fit = Some(Fit {
            rows: n as u64,
            r_squared: if total > 0.0 {
                1.0 - residual / total
            } else {
                1.0
            },
            subtree_median_error: quantile(0.5),
            subtree_p90_error: quantile(0.9),
        });
        Ok(model)
    }
}

/// Solves the normal equations `xtx · β = xty` over the `active` coefficients (the others are
/// 0), by Gaussian elimination with partial pivoting; a column with no independent
/// information (a feature that never varies apart from the others) gets 0.
fn solve(xtx: &[f64], xty: &[f64], active: &[bool]) -> Vec<f64> {
    let k = xty.len();
    // Columns of no weight at all (a feature that is always 0) stay out; the others are
    // scaled to unit norm, so that counts in the millions and a constant 1 are solved alike.
    let cols: Vec<usize> = (0..k)
        .filter(|&c| active[c] && xtx[c * k + c] > 0.0)
        .collect();
    let norm: Vec<f64> = cols.iter().map(|&c| xtx[c * k + c].sqrt()).collect();
    let m = cols.len();
    let mut a: Vec<Vec<f64>> = cols
        .iter()
        .enumerate()
        .map(|(i, &r)| {
            let mut row: Vec<f64> = cols
                .iter()
                .enumerate()
                .map(|(j, &c)| xtx[r * k + c] / (norm[i] * norm[j]))
                .collect();
            row.push(xty[r] / norm[i]);
            row
        })
        .collect();
    // The scaled diagonal is 1: a pivot this small is a column the others explain.
    let scale = 1.0;
    let mut pivot_of = vec![None; m];
    let mut row = 0;
    for col in 0..m {
        let Some(best) = (row..m).max_by(|&x, &y| a[x][col].abs().total_cmp(&a[y][col].abs()))
        else {
            break;
        };
        if a[best][col].abs() <= scale * 1e-10 {
            continue;
        }
        a.swap(row, best);
        let pivot = a[row].clone();
        for (r, other) in a.iter_mut().enumerate() {
            if r != row {
                let factor = other[col] / pivot[col];
                if factor != 0.0 {
                    for (x, p) in other[col..].iter_mut().zip(&pivot[col..]) {
                        *x -= factor * p;
                    }
                }
            }
        }
        pivot_of[col] = Some(row);
        row += 1;
    }
    let mut beta = vec![0.0; k];
    for (j, &c) in cols.iter().enumerate() {
        if let Some(r) = pivot_of[j] {
            beta[c] = a[r][m] / a[r][j] / norm[j];
        }
    }
    beta
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovers_an_exact_linear_law() {
        // time = 2 + 3·a + 0.5·b, exactly, over varied rows.
        let rows: Vec<[u32; 2]> = (0..50).map(|i| [i % 7, (i * i) % 11]).collect();
        let work: Vec<u32> = rows.iter().flatten().copied().collect();
        let seconds: Vec<f64> = rows
            .iter()
            .map(|r| 2.0 + 3.0 * f64::from(r[0]) + 0.5 * f64::from(r[1]))
            .collect();
        let subtree: Vec<u32> = (0..50).map(|i| i / 10).collect();
        let m = CostModel::fit(2, &work, &seconds, &subtree).unwrap();
        assert!((m.per_task - 2.0).abs() < 1e-9, "{m:?}");
        assert!((m.per_unit[0] - 3.0).abs() < 1e-9);
        assert!((m.per_unit[1] - 0.5).abs() < 1e-9);
        let fit = m.fit.unwrap();
        assert!(fit.r_squared > 1.0 - 1e-12);
        assert!(fit.subtree_p90_error < 1e-9);
    }

    #[test]
    fn no_coefficient_goes_below_zero() {
        // The second feature only hurts the fit's sums when it is allowed a negative cost.
        let work: Vec<u32> = (0..40).flat_map(|i| [i, (i * 3) % 5]).collect();
        let seconds: Vec<f64> = (0..40)
            .map(|i| 1.0 + f64::from(i) - 0.2 * f64::from((i * 3) % 5))
            .collect();
        let m = CostModel::fit(2, &work, &seconds, &[0; 40]).unwrap();
        assert_eq!(m.per_unit[1], 0.0);
        assert!(m.per_unit[1].is_sign_positive(), "never −0");
        assert!(m.per_unit[0] > 0.0 && m.per_task >= 0.0);
        assert!(m.check().is_ok());
    }

    #[test]
    fn a_feature_that_never_varies_costs_nothing() {
        let work: Vec<u32> = (0..20).flat_map(|i| [i, 0]).collect();
        let seconds: Vec<f64> = (0..20).map(|i| 1.0 + 2.0 * f64::from(i)).collect();
        let m = CostModel::fit(2, &work, &seconds, &[0; 20]).unwrap();
        assert_eq!(m.per_unit[1], 0.0);
        assert!((m.per_unit[0] - 2.0).abs() < 1e-9);
    }

    #[test]
    fn too_few_rows_is_an_error() {
        assert_eq!(
            CostModel::fit(2, &[1, 2], &[1.0], &[0]),
            Err(FitError::TooFewRows {
                rows: 1,
                coefficients: 3
            })
        );
    }
}
