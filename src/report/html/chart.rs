//! Chart primitives the sections share: a chart's frame and axes, stacked areas and
//! lines over time columns, horizontal bars. Each records its hover data in the page.

use super::drawing::Page;
use super::series::{axis_end, column_spans};
use super::svg::{colour, esc, num, round, Plot, OTHER};
use super::table::player_attr;
use serde_json::json;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The opening `<svg>` of a chart and its axes. `attrs` are its `data-` attributes; the
/// series count is what the browser test reads back.
pub(super) fn open_chart(
    class: &str,
    attrs: &str,
    series: usize,
    plot: &Plot,
    x: &str,
    y: &str,
) -> String {
    // A time axis tells the script where its seconds are, for the page's time window:
    // pixels of the first and last second, those seconds, and the plot's top and bottom.
    let time = if x == "seconds" {
        format!(
            " data-time=\"{} {} {} {} {} {}\"",
            num(plot.px(plot.x0)),
            num(plot.px(plot.x1)),
            num(plot.x0),
            num(plot.x1),
            num(plot.top),
            num(plot.height - plot.bottom)
        )
    } else {
        String::new()
    };
    let mut svg = format!(
        "<svg class=\"{class}\" {attrs}{time} data-series-count=\"{series}\" viewBox=\"0 0 {} {}\">",
        num(plot.width),
        num(plot.height)
    );
    svg.push_str(&plot.axes(x, y));
    svg
}

/// Stacked step areas, one path per series, over time columns.
pub(super) fn stacked_chart(
    pg: &mut Page,
    id: &str,
    series: &[(String, BTreeMap<i64, u64>)],
    colours: &[&str],
    cols: &[Vec<u64>],
    (width, n, end): (f64, usize, f64),
) -> String {
    let spans = column_spans(width, n, end);
    let t1 = axis_end(pg.t_max);
    // A column's pixels: from its start to its end or the axis's, whichever is first.
    let edges = |i: usize| (i as f64 * width, ((i + 1) as f64 * width).min(t1));
    let mut stack = vec![0u64; n];
    for s in cols {
        for (i, v) in s.iter().enumerate() {
            stack[i] += v;
        }
    }
    let ymax = stack
        .iter()
        .zip(&spans)
        .map(|(v, s)| *v as f64 / s)
        .fold(0.0, f64::max);
    let ymax = pg.y_top(id, ymax);
    let plot = Plot::new(pg.width, 220.0, (0.0, t1), (0.0, ymax.max(1.0) * 1.05));
    let mut svg = open_chart(
        "chart",
        &format!("data-chart=\"{id}\""),
        series.len(),
        &plot,
        "seconds",
        "messages/s",
    );
    let mut base = vec![0u64; n];
    let mut legend = String::from("<div class=\"legend\">");
    let mut hover = Vec::new();
    for (k, ((name, _), vals)) in series.iter().zip(cols).enumerate() {
        let top: Vec<u64> = base.iter().zip(vals).map(|(b, v)| b + v).collect();
        let mut d = String::new();
        for (i, v) in top.iter().enumerate() {
            let (x0, x1) = (plot.px(edges(i).0), plot.px(edges(i).1));
            let y = plot.py(*v as f64 / spans[i]);
            let _ = write!(
                d,
                "{}{},{}H{}",
                if i == 0 { "M" } else { "L" },
                num(x0),
                num(y),
                num(x1)
            );
        }
        for i in (0..n).rev() {
            let (x0, x1) = (plot.px(edges(i).0), plot.px(edges(i).1));
            let y = plot.py(base[i] as f64 / spans[i]);
            let _ = write!(d, "L{},{}H{}", num(x1), num(y), num(x0));
        }
        d.push('Z');
        let _ = write!(
            svg,
            "<path data-series=\"{}\" d=\"{d}\" fill=\"{}\" fill-opacity=\"0.85\"/>",
            esc(name),
            colours.get(k).copied().unwrap_or(OTHER)
        );
        let total: u64 = vals.iter().sum();
        let _ = write!(
            legend,
            "<span><span class=\"sw\" style=\"background:{}\"></span>{} ({total})</span>",
            colours.get(k).copied().unwrap_or(OTHER),
            esc(name)
        );
        hover.push(json!({"n": name, "v": vals}));
        base = top;
    }
    svg.push_str("</svg>");
    legend.push_str("</div>");
    pg.data.insert(
        id.to_string(),
        json!({"k": "cols", "x0": round(plot.px(0.0), 1), "x1": round(plot.px(t1), 1),
               "t1": t1, "e": end, "w": width, "n": n, "unit": "msg/s", "s": hover}),
    );
    svg + &legend
}

/// Horizontal bars with names, counts and shares of `total`.
/// Bars are scaled by share of `total`, the longest share the same for both captures
/// of a comparison. `id` is "a-bits-c2s"; the `data-bars` kind drops the capture.
pub(super) fn bar_chart(pg: &mut Page, id: &str, bars: &[(String, u64)], total: u64) -> String {
    let kind = id.split_once('-').map_or(id, |(_, k)| k);
    let row_h = 18.0;
    // Room for the longest label at 11 px: capitals in common sans fonts run up to
    // about 7.6 px a character, so none is cut.
    let longest = bars.iter().map(|b| b.0.chars().count()).max().unwrap_or(0);
    let label_w = (longest as f64 * 7.6 + 12.0).max(120.0);
    let (bar_w, value_w) = (240.0, 100.0);
    let w = label_w + bar_w + value_w;
    let height = row_h * bars.len() as f64 + 4.0;
    let share = |n: u64| n as f64 / total.max(1) as f64;
    let local = bars.iter().map(|b| share(b.1)).fold(0.0, f64::max);
    let max = pg.y_top(id, local).max(1e-12);
    let mut s = format!(
        "<svg class=\"chart bars\" data-bars=\"{kind}\" data-series-count=\"{}\" viewBox=\"0 0 {w} {}\" style=\"max-width:{w}px\">",
        bars.len(),
        num(height)
    );
    for (i, (name, n)) in bars.iter().enumerate() {
        let y = 2.0 + i as f64 * row_h;
        let bw = (share(*n) / max * bar_w).max(if *n > 0 { 1.0 } else { 0.0 });
        let pct = if total > 0 {
            *n as f64 * 100.0 / total as f64
        } else {
            0.0
        };
        let _ = write!(
            s,
            "<text class=\"lbl\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\
             <rect data-series=\"{}\" data-tip=\"{}\" x=\"{label_w}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>\
             <text class=\"lbl\" x=\"{}\" y=\"{}\">{n} ({pct:.1}%)</text>",
            num(label_w - 6.0),
            num(y + 12.0),
            esc(name),
            esc(name),
            esc(&format!(
                "{name}\n{n} update{}, {pct:.1}%",
                if *n == 1 { "" } else { "s" }
            )),
            num(y + 2.0),
            num(bw),
            num(row_h - 4.0),
            colour(0),
            num(label_w + bw + 6.0),
            num(y + 12.0)
        );
    }
    s.push_str("</svg>");
    s
}

/// Line chart over time columns: one polyline per series.
pub(super) fn line_chart(
    pg: &mut Page,
    id: &str,
    series: &[(String, Vec<f64>)],
    (width, end): (f64, f64),
    y_title: &str,
    unit: &str,
    rate: bool,
) -> String {
    let style = |k: usize| (colour(k), None);
    line_chart_styled(pg, id, series, (width, end), (y_title, unit, rate), &style)
}

/// How a series is drawn: its colour and, for a player's series, the player (the
/// script shows only the chosen player's).
pub(super) type SeriesStyle<'a> = dyn Fn(usize) -> (&'static str, Option<String>) + 'a;

/// Lines over time columns of `width` seconds in a capture that ends at `end`; `y` is
/// the axis title, the unit of the read-out and whether values are rates (given per
/// `width`, read out per column as counts).
pub(super) fn line_chart_styled(
    pg: &mut Page,
    id: &str,
    series: &[(String, Vec<f64>)],
    (width, end): (f64, f64),
    y: (&str, &str, bool),
    style: &SeriesStyle,
) -> String {
    let (y_title, unit, rate) = y;
    let n = series.first().map(|s| s.1.len()).unwrap_or(0).max(1);
    let spans = column_spans(width, n, end);
    let t1 = axis_end(pg.t_max);
    // A rate of the column the capture ends in is over the time it measured.
    let rated: Vec<(String, Vec<f64>)>;
    let series = if rate {
        rated = series
            .iter()
            .map(|(name, v)| {
                let v = v.iter().zip(&spans).map(|(v, s)| v * width / s).collect();
                (name.clone(), v)
            })
            .collect();
        &rated[..]
    } else {
        series
    };
    let ymax = series
        .iter()
        .flat_map(|s| s.1.iter().copied())
        .fold(0.0f64, f64::max);
    let ymax = pg.y_top(id, ymax);
    let plot = Plot::new(pg.width, 180.0, (0.0, t1), (0.0, ymax.max(1.0) * 1.1));
    let mut svg = open_chart(
        "chart",
        &format!("data-chart=\"{id}\""),
        series.len(),
        &plot,
        "seconds",
        y_title,
    );
    let mut legend = String::from("<div class=\"legend\">");
    let mut hover = Vec::new();
    for (k, (name, vals)) in series.iter().enumerate() {
        let (col, player) = style(k);
        let pl = player_attr(player.as_deref());
        // A column without a value (NaN: nothing measured there, such as an ACK delay
        // in a second without ACKs) breaks the line rather than drawing it at zero.
        let runs = vals
            .iter()
            .enumerate()
            .collect::<Vec<_>>()
            .split(|(_, v)| !v.is_finite())
            .filter(|run| !run.is_empty())
            .map(|run| {
                run.iter()
                    .map(|(i, v)| {
                        let (a, b) = (*i as f64 * width, ((*i + 1) as f64 * width).min(t1));
                        (plot.px((a + b) / 2.0), plot.py(**v))
                    })
                    .collect::<Vec<_>>()
            })
            .collect::<Vec<_>>();
        for pts in runs {
            svg.push_str(&super::svg::series_element(
                &format!(" data-series=\"{}\"{pl}", esc(name)),
                col,
                &pts,
            ));
        }
        let _ = write!(
            legend,
            "<span{pl}><span class=\"sw\" style=\"background:{col}\"></span>{}</span>",
            esc(name)
        );
        // Rates are read out per column as counts (the script divides by the span).
        let v: Vec<f64> = vals
            .iter()
            .zip(&spans)
            .map(|(v, s)| round(if rate { *v * s } else { *v }, 3))
            .collect();
        let mut series = json!({"n": name, "v": v});
        if let Some(p) = player {
            series["pl"] = json!(p);
        }
        hover.push(series);
    }
    svg.push_str("</svg>");
    legend.push_str("</div>");
    pg.data.insert(
        id.to_string(),
        json!({"k": "cols", "x0": round(plot.px(0.0), 1), "x1": round(plot.px(t1), 1),
               "t1": t1, "e": end, "w": width, "n": n, "unit": unit, "rate": rate, "s": hover}),
    );
    svg + &legend
}
