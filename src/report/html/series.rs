//! Down-sampling for drawing: time buckets, point budgets, decimation.
//!
//! Numbers shown in tables never come from here; only what is drawn is thinned, so a
//! page stays fast to open however long the capture is.

use std::collections::BTreeMap;

/// Sum sparse per-second counts into at most `columns` equal columns over `[0, duration]`.
/// Returns the column width in seconds and one total per column.
pub fn rebucket(per_second: &BTreeMap<i64, u64>, duration: f64, columns: usize) -> (f64, Vec<u64>) {
    let (width, n) = column_layout(duration, columns);
    let mut out = vec![0u64; n];
    for (&sec, &count) in per_second {
        let i = column_of(sec as f64, width, n);
        out[i] += count;
    }
    (width, out)
}

/// Column width (whole seconds, at least 1) and column count for a duration.
pub fn column_layout(duration: f64, columns: usize) -> (f64, usize) {
    let columns = columns.max(1);
    let secs = if duration.is_finite() && duration > 0.0 {
        duration.ceil()
    } else {
        1.0
    };
    let width = (secs / columns as f64).ceil().max(1.0);
    let n = ((secs / width).ceil() as usize).clamp(1, columns);
    (width, n)
}

/// The column a time falls into, clamped to the valid range.
pub fn column_of(t: f64, width: f64, n: usize) -> usize {
    if !(t.is_finite() && width > 0.0) || t <= 0.0 {
        return 0;
    }
    ((t / width) as usize).min(n.saturating_sub(1))
}

/// The time each column of a capture ending at `end` seconds measured: its width, but
/// the column the capture ends in only up to that end, so its rate is no false drop. A
/// column cut to less than a quarter of its width counts a quarter, so a message in the
/// capture's last milliseconds is no false spike either. Columns after the end (a
/// shorter capture on a shared axis) keep their width.
pub fn column_spans(width: f64, n: usize, end: f64) -> Vec<f64> {
    (0..n)
        .map(|i| {
            let start = i as f64 * width;
            if end.is_finite() && start < end && end < start + width {
                (end - start).max(width / 4.0)
            } else {
                width
            }
        })
        .collect()
}

/// Where time axes end: the longest capture's real end (as the ship charts), not the
/// end of its last whole column.
pub fn axis_end(t_max: f64) -> f64 {
    if t_max.is_finite() && t_max > 0.0 {
        t_max.max(1.0)
    } else {
        1.0
    }
}

/// Columns that start after `duration` (a shorter capture on a shared time axis) hold
/// no measurement: NaN, which the line charts draw as a gap rather than a zero.
pub fn blank_after(cols: &mut [f64], width: f64, duration: f64) {
    for (i, v) in cols.iter_mut().enumerate() {
        if i as f64 * width > duration {
            *v = f64::NAN;
        }
    }
}

/// Share a total point budget between series of the given lengths, in proportion to
/// their length but giving every non-empty series at least `min_each` (or its length).
/// The budget holds over the whole: with more series than `total / min_each`, the
/// minimum shrinks to an equal share instead of the total growing with the number of
/// series (a long session has hundreds of lives).
pub fn split_budget(lengths: &[usize], total: usize, min_each: usize) -> Vec<usize> {
    let sum: usize = lengths.iter().sum();
    if sum <= total {
        return lengths.to_vec();
    }
    let non_empty = lengths.iter().filter(|&&l| l > 0).count().max(1);
    let min_each = min_each.min(total / non_empty);
    let mut out: Vec<usize> = lengths
        .iter()
        .map(|&len| {
            let share = (len as f64 * total as f64 / sum as f64).floor() as usize;
            share.max(min_each.min(len)).min(len)
        })
        .collect();
    // The minimums can push the total over budget: shave the largest shares.
    let mut over = out.iter().sum::<usize>().saturating_sub(total);
    while over > 0 {
        let Some((i, &max)) = out.iter().enumerate().max_by_key(|(_, v)| **v) else {
            break;
        };
        if max <= min_each {
            break;
        }
        let cut = over.min(max - min_each).max(1);
        out[i] -= cut;
        over -= cut;
    }
    out
}

/// Indices of at most `keep` items out of `len`, evenly spread, first and last included.
pub fn decimate_indices(len: usize, keep: usize) -> Vec<usize> {
    if len <= keep {
        return (0..len).collect();
    }
    match keep {
        0 => Vec::new(),
        1 => vec![0],
        _ => {
            let step = (len - 1) as f64 / (keep - 1) as f64;
            let mut v: Vec<usize> = (0..keep)
                .map(|i| (i as f64 * step).round() as usize)
                .collect();
            v.dedup();
            v
        }
    }
}

/// Keep at most `keep` points of a step series (value changes over time) so that every
/// kept column still shows its lowest value: a subsystem that dropped to 0 for a moment
/// must not vanish from the chart. Points are (time, value), time ascending.
pub fn thin_steps(points: &[(f64, f32)], keep: usize) -> Vec<(f64, f32)> {
    if points.len() <= keep || keep < 4 {
        return points.iter().take(keep).copied().collect();
    }
    let (t0, t1) = match (points.first(), points.last()) {
        (Some(a), Some(b)) => (a.0, b.0),
        _ => return Vec::new(),
    };
    // Two points per column (entry value and minimum), first and last point kept.
    let columns = ((keep - 2) / 2).max(1);
    let width = ((t1 - t0) / columns as f64).max(f64::MIN_POSITIVE);
    let mut out: Vec<(f64, f32)> = Vec::with_capacity(keep);
    out.push(points[0]);
    let mut col_first: Option<(f64, f32)> = None;
    let mut col_min: Option<(f64, f32)> = None;
    let mut col = 0usize;
    let flush = |out: &mut Vec<(f64, f32)>, a: Option<(f64, f32)>, m: Option<(f64, f32)>| {
        if let Some(a) = a {
            out.push(a);
            if let Some(m) = m.filter(|m| m.1 < a.1) {
                out.push(m);
            }
        }
    };
    for &p in &points[1..points.len() - 1] {
        let c = (((p.0 - t0) / width) as usize).min(columns - 1);
        if c != col {
            flush(&mut out, col_first.take(), col_min.take());
            col = c;
        }
        if col_first.is_none() {
            col_first = Some(p);
        }
        if col_min.is_none_or(|m| p.1 < m.1) {
            col_min = Some(p);
        }
    }
    flush(&mut out, col_first, col_min);
    if let Some(&last) = points.last() {
        out.push(last);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rebucket_keeps_every_count_and_bounds_columns() {
        let mut m = BTreeMap::new();
        for s in 0..2040 {
            m.insert(s, 3u64);
        }
        m.insert(5000, 7); // outlier beyond the duration lands in the last column
        let (width, cols) = rebucket(&m, 2040.0, 300);
        assert!(cols.len() <= 300, "{}", cols.len());
        assert_eq!(width, 7.0);
        assert_eq!(cols.iter().sum::<u64>(), 2040 * 3 + 7);
        assert_eq!(cols[0], 21);
        // Short captures: one column per second.
        let (w, c) = rebucket(&BTreeMap::from([(0, 1), (2, 2)]), 2.5, 300);
        assert_eq!((w, c), (1.0, vec![1, 0, 2]));
    }

    #[test]
    fn column_layout_survives_odd_durations() {
        assert_eq!(column_layout(0.0, 10), (1.0, 1));
        assert_eq!(column_layout(f64::NAN, 10), (1.0, 1));
        assert_eq!(column_layout(-5.0, 10), (1.0, 1));
        assert_eq!(column_of(-1.0, 1.0, 5), 0);
        assert_eq!(column_of(99.0, 1.0, 5), 4);
    }

    #[test]
    fn budget_is_shared_by_length_with_a_floor() {
        assert_eq!(split_budget(&[10, 20], 100, 5), vec![10, 20]);
        let b = split_budget(&[100_000, 1000, 3], 20_000, 50);
        assert!(b.iter().sum::<usize>() <= 20_000, "{b:?}");
        assert_eq!(b[2], 3);
        assert!(b[1] >= 50 && b[1] < 1000, "{b:?}");
        assert!(b[0] > 19_000, "{b:?}");
        // Many tiny series: the floor would exceed the budget, so it is shaved.
        let b = split_budget(&[1000; 100], 2000, 50);
        assert!(
            b.iter().sum::<usize>() <= 2000,
            "{}",
            b.iter().sum::<usize>()
        );
        assert!(b.iter().all(|&k| k == 20), "{b:?}");
        // An hour of fifteen players: 879 lives, the budget still holds.
        let lengths: Vec<usize> = (0..879).map(|i| 40 + (i * 37) % 900).collect();
        let b = split_budget(&lengths, 12_000, 50);
        assert!(
            b.iter().sum::<usize>() <= 12_000,
            "{}",
            b.iter().sum::<usize>()
        );
        assert!(b.iter().all(|&k| k >= 12_000 / 879), "{b:?}");
    }

    #[test]
    fn columns_after_the_capture_are_gaps() {
        let mut cols = vec![1.0; 6];
        blank_after(&mut cols, 10.0, 25.0);
        assert_eq!(&cols[..3], &[1.0, 1.0, 1.0]);
        assert!(cols[3..].iter().all(|v| v.is_nan()), "{cols:?}");
    }

    #[test]
    fn decimation_keeps_ends_and_bounds() {
        assert_eq!(decimate_indices(5, 10), vec![0, 1, 2, 3, 4]);
        let v = decimate_indices(200_000, 1000);
        assert_eq!(v.len(), 1000);
        assert_eq!((v[0], v[999]), (0, 199_999));
        assert!(v.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(decimate_indices(10, 1), vec![0]);
        assert!(decimate_indices(10, 0).is_empty());
    }

    #[test]
    fn thinned_steps_keep_short_dips() {
        let mut pts: Vec<(f64, f32)> = (0..100_000).map(|i| (i as f64 * 0.01, 100.0)).collect();
        pts[50_000].1 = 0.0; // one update where the subsystem was destroyed
        let t = thin_steps(&pts, 200);
        assert!(t.len() <= 200, "{}", t.len());
        assert!(t.iter().any(|p| p.1 == 0.0));
        assert_eq!(t.first(), pts.first());
        assert_eq!(t.last(), pts.last());
        assert!(t.windows(2).all(|w| w[0].0 <= w[1].0));
        assert_eq!(thin_steps(&pts[..3], 200), pts[..3].to_vec());
    }
}
