//! The frame of one ship life's chart: a time axis that spans the life (not the whole
//! capture), labelled at both ends with the life's first and last second, and a
//! condition grid only when there is a condition to draw.
//!
//! A life of two minutes in an hour-long capture would otherwise be a sliver of a
//! wide chart. The page's script refits the same axis to the page's time window (the
//! part of the life inside it); the end labels and ticks it writes follow the rules
//! written here.

use super::svg::{num, tick_labels, ticks, Plot};
use std::fmt::Write as _;

/// Height of the fire and damage lanes above the condition plot.
pub(super) const LANES: f64 = 50.0;
/// A tick label this close to an end label (pixels) is left out: the two would touch.
const END_GAP: f64 = 56.0;

/// The plot of one life: its seconds across, condition (0–100 %) up. Without a
/// condition series the plot is only the two event lanes and the time axis.
pub(super) fn life_plot(width: f64, born: f64, end: f64, conditions: bool) -> Plot {
    let height = if conditions { 230.0 } else { LANES + 36.0 };
    let mut plot = Plot::new(width, height, (born, end.max(born + 0.1)), (0.0, 100.0));
    plot.top = LANES;
    plot
}

/// A second on an end of the axis: one decimal, as the chart's heading writes it.
pub(super) fn end_label(t: f64) -> String {
    format!("{t:.1}")
}

/// Grid, tick labels and titles of a life's chart. The x ticks sit in their own group
/// (`g.xt`), which the script rewrites when the chart follows a time window; the end
/// labels carry `data-end="0"` and `data-end="1"`.
pub(super) fn life_axes(plot: &Plot, conditions: bool) -> String {
    let mut s = String::from("<g class=\"axes\">");
    let (l, r) = (plot.left, plot.plot_right());
    let (t, b) = (plot.top, plot.height - plot.bottom);
    if conditions {
        let ys = ticks(plot.y0, plot.y1, 5);
        for (v, label) in ys.iter().zip(tick_labels(&ys)) {
            let y = plot.py(*v);
            let _ = write!(
                s,
                "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{label}</text>",
                num(l), num(y), num(r), num(y), num(l - 4.0), num(y + 4.0)
            );
        }
        let _ = write!(
            s,
            "<text class=\"title\" x=\"4\" y=\"{}\" transform=\"rotate(-90 4 {})\" text-anchor=\"end\" dy=\"8\">condition %</text>",
            num(t),
            num(t)
        );
    } else {
        let _ = write!(
            s,
            "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>",
            num(l),
            num(b),
            num(r),
            num(b)
        );
    }
    s.push_str(&x_ticks(plot, plot.x0, plot.x1));
    let _ = write!(
        s,
        "<text class=\"title\" x=\"{}\" y=\"{}\" text-anchor=\"end\">seconds</text></g>",
        num(r),
        num(plot.height - 2.0)
    );
    s
}

/// The time ticks between `from` and `to` seconds drawn across the plot's width: the
/// two ends labelled with their exact second, nice ticks between them where they do
/// not touch an end label.
fn x_ticks(plot: &Plot, from: f64, to: f64) -> String {
    let (t, b) = (plot.top, plot.height - plot.bottom);
    let (l, r) = (plot.left, plot.plot_right());
    let x = |v: f64| l + (v - from) / (to - from) * (r - l);
    let mut s = format!("<g class=\"xt\" data-from=\"{from}\" data-to=\"{to}\">");
    let xs = ticks(from, to, 10);
    for (v, label) in xs.iter().zip(tick_labels(&xs)) {
        let px = x(*v);
        let _ = write!(
            s,
            "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>",
            num(px),
            num(t),
            num(px),
            num(b)
        );
        if px - l >= END_GAP && r - px >= END_GAP {
            let _ = write!(
                s,
                "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{label}</text>",
                num(px),
                num(b + 14.0)
            );
        }
    }
    for (end, v, px, anchor) in [(0, from, l, "start"), (1, to, r, "end")] {
        let _ = write!(
            s,
            "<text class=\"end\" data-end=\"{end}\" x=\"{}\" y=\"{}\" text-anchor=\"{anchor}\">{}</text>",
            num(px),
            num(b + 14.0),
            end_label(v)
        );
    }
    s.push_str("</g>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_axis_spans_the_life_and_names_its_ends() {
        let p = life_plot(1000.0, 1234.56, 1361.0, true);
        assert_eq!((p.x0, p.x1), (1234.56, 1361.0));
        let a = life_axes(&p, true);
        assert!(a.contains("data-end=\"0\" x=\"56\" y=\"214\" text-anchor=\"start\">1234.6<"));
        assert!(a.contains("data-end=\"1\" x=\"988\" y=\"214\" text-anchor=\"end\">1361.0<"));
        // Nice ticks inside, none on top of an end label.
        assert!(a.contains(">1300<"), "{a}");
        assert!(!a.contains(">1240<"), "{a}");
    }

    #[test]
    fn a_life_without_conditions_has_no_grid() {
        let p = life_plot(1000.0, 5.0, 6.0, false);
        let a = life_axes(&p, false);
        assert!(p.height < 100.0);
        assert!(!a.contains("condition %"));
        assert_eq!(
            a.matches("<line").count(),
            1 + a.matches("class=\"xt\"").count() * ticks(5.0, 6.0, 10).len()
        );
    }
}
