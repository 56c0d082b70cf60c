//! Small SVG and HTML helpers: escaping, numbers, scales, axes, colours.
//!
//! Everything from a capture (player names, chat, class names) is attacker-controlled:
//! it reaches the page only through [`esc`] (HTML text and attribute values) or
//! [`json_for_script`] (data blocks read by the page's script, which writes text with
//! `textContent`, never as markup).

use serde_json::Value as Json;
use std::fmt::Write as _;

/// Escape text for HTML element content and quoted attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Control characters have no business in a page (and NUL breaks parsers).
            c if c.is_control() && c != '\n' && c != '\t' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// JSON that is safe inside `<script type="application/json">`: no `<`, `>` or `&`
/// (so no `</script>` or `<!--`), and no U+2028/2029 line separators.
pub fn json_for_script(v: &Json) -> String {
    let mut text = Vec::new();
    super::super::json_stream::write_value(&mut text, v, false);
    let s = String::from_utf8_lossy(&text);
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// World coordinates we draw: finite and inside the game's plausible space.
pub fn drawable(p: [f32; 3]) -> bool {
    p.iter().all(|v| v.is_finite() && v.abs() < 1e7)
}

/// A coordinate with one decimal, `-0` and non-finite values as `0`.
pub fn num(v: f64) -> String {
    if !v.is_finite() {
        return "0".into();
    }
    let r = (v * 10.0).round() / 10.0;
    if r == 0.0 {
        return "0".into();
    }
    if r.fract() == 0.0 {
        format!("{r:.0}")
    } else {
        format!("{r:.1}")
    }
}

/// Round for JSON data (keeps the page small): `digits` decimals.
pub fn round(v: f64, digits: i32) -> f64 {
    if !v.is_finite() {
        return 0.0;
    }
    let k = 10f64.powi(digits);
    (v * k).round() / k
}

/// A 1-2-5 step giving at most `max_ticks` ticks over `range`.
pub fn nice_step(range: f64, max_ticks: usize) -> f64 {
    if !(range.is_finite() && range > 0.0) {
        return 1.0;
    }
    let raw = range / max_ticks.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    for m in [1.0, 2.0, 5.0, 10.0] {
        if m * mag >= raw {
            return m * mag;
        }
    }
    10.0 * mag
}

/// Tick values covering `[lo, hi]` at a nice step.
pub fn ticks(lo: f64, hi: f64, max_ticks: usize) -> Vec<f64> {
    let step = nice_step(hi - lo, max_ticks);
    let first = (lo / step).ceil() * step;
    let mut v = Vec::new();
    let mut x = first;
    while x <= hi + step * 1e-9 && v.len() <= max_ticks * 2 {
        v.push(if x.abs() < step * 1e-9 { 0.0 } else { x });
        x += step;
    }
    v
}

/// Tick label: no needless decimals.
pub fn tick_label(v: f64) -> String {
    if v.fract().abs() < 1e-9 {
        format!("{v:.0}")
    } else if (v * 10.0).fract().abs() < 1e-9 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Labels of one axis's ticks, all with the decimals their step needs: `0.7, 0.8,
/// 0.9`, never `0.7, 0.80`, whatever the floating-point error of each value.
pub fn tick_labels(ticks: &[f64]) -> Vec<String> {
    let step = match ticks {
        [a, b, ..] => (b - a).abs(),
        _ => return ticks.iter().map(|v| tick_label(*v)).collect(),
    };
    let decimals = (0..=6)
        .find(|&d| {
            let k = 10f64.powi(d);
            ((step * k).round() - step * k).abs() < 1e-6 * k.max(1.0)
        })
        .unwrap_or(6) as usize;
    ticks
        .iter()
        .map(|v| {
            let s = format!("{v:.decimals$}");
            // "-0.0" is noise: a zero has no sign.
            if s.trim_start_matches('-')
                .chars()
                .all(|c| c == '0' || c == '.')
            {
                s.trim_start_matches('-').to_string()
            } else {
                s
            }
        })
        .collect()
}

/// Twenty-two colours, any two at least 15 apart in CIEDE2000 ΔE (and from [`OTHER`]),
/// so that no two series of a legend look alike. The first sixteen, one per player
/// slot, begin with Okabe and Ito's colour-blind-safe eight (black left out for the dark
/// map) and Paul Tol's muted scheme; the rest come from Kelly's and Tableau's sets and
/// a few brights, each kept only where it stood far enough from those before it.
pub const PALETTE: [&str; 22] = [
    "#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#f0e442", "#882255",
    "#999933", "#332288", "#117733", "#875692", "#be0032", "#f99379", "#654522", "#e15759",
    "#76b7b2", "#9c755f", "#ccccff", "#9977ff", "#ff00ff", "#00ee44",
];

/// The colour of everything that is not one named thing ("other opcodes").
pub const OTHER: &str = "#888888";

pub fn colour(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// One colour per opcode for the whole page and every capture on it, whatever its
/// rank: the opcodes of a battle and of a game's set-up and scores, one palette colour
/// each. The palette has fewer colours than the catalogue has opcodes, so the others
/// have none and are drawn together as "other" rather than in a near twin's colour.
pub fn opcode_colour(op: u8) -> Option<&'static str> {
    let k = match op {
        0x1C => 0,  // StateUpdate
        0x06 => 1,  // PythonEvent
        0x07 => 2,  // StartFiring
        0x08 => 3,  // StopFiring
        0x1A => 4,  // BeamFire
        0x19 => 5,  // TorpedoFire
        0x29 => 6,  // Explosion
        0x2C => 7,  // ChatMessage
        0x03 => 8,  // ObjCreateTeam
        0x20 => 9,  // ChecksumRequest
        0x17 => 10, // DeletePlayerUI
        0x15 => 11, // CollisionEffect
        0x21 => 12, // ChecksumResponse
        0x14 => 13, // DestroyObject
        0x02 => 14, // ObjCreate
        0x0A => 15, // SubsystemStatus
        0x2A => 16, // NewPlayerInGame
        0x36 => 17, // ScoreChange
        0x37 => 18, // Score
        0x13 => 19, // HostMsg
        0x00 => 20, // Settings
        0x01 => 21, // GameInit
        _ => return None,
    };
    Some(PALETTE[k])
}

/// A plot area inside an SVG, with linear scales.
#[derive(Debug, Clone, Copy)]
pub struct Plot {
    pub width: f64,
    pub height: f64,
    pub left: f64,
    pub right: f64,
    pub top: f64,
    pub bottom: f64,
    pub x0: f64,
    pub x1: f64,
    pub y0: f64,
    pub y1: f64,
}

impl Plot {
    pub fn new(width: f64, height: f64, x: (f64, f64), y: (f64, f64)) -> Plot {
        let fix = |(a, b): (f64, f64)| if b > a { (a, b) } else { (a, a + 1.0) };
        let (x0, x1) = fix(x);
        let (y0, y1) = fix(y);
        Plot {
            width,
            height,
            left: 56.0,
            right: 12.0,
            top: 10.0,
            bottom: 30.0,
            x0,
            x1,
            y0,
            y1,
        }
    }
    pub fn px(&self, x: f64) -> f64 {
        self.left + (x - self.x0) / (self.x1 - self.x0) * (self.width - self.left - self.right)
    }
    pub fn py(&self, y: f64) -> f64 {
        self.height - self.bottom - (y - self.y0) / (self.y1 - self.y0) * (self.plot_height())
    }
    pub fn plot_height(&self) -> f64 {
        self.height - self.top - self.bottom
    }
    pub fn plot_right(&self) -> f64 {
        self.width - self.right
    }

    /// Grid lines, tick labels and axis titles.
    pub fn axes(&self, x_title: &str, y_title: &str) -> String {
        let mut s = String::from("<g class=\"axes\">");
        let (l, r) = (self.left, self.plot_right());
        let (t, b) = (self.top, self.height - self.bottom);
        let ys = ticks(self.y0, self.y1, 5);
        for (v, label) in ys.iter().zip(tick_labels(&ys)) {
            let y = self.py(*v);
            let _ = write!(
                s,
                "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
                num(l), num(y), num(r), num(y), num(l - 4.0), num(y + 4.0), label
            );
        }
        let xs = ticks(self.x0, self.x1, 10);
        for (v, label) in xs.iter().zip(tick_labels(&xs)) {
            let x = self.px(*v);
            let _ = write!(
                s,
                "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/><text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                num(x), num(t), num(x), num(b), num(x), num(b + 14.0), label
            );
        }
        let _ = write!(
            s,
            "<text class=\"title\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            num(r),
            num(self.height - 2.0),
            esc(x_title)
        );
        let _ = write!(
            s,
            "<text class=\"title\" x=\"4\" y=\"{}\" transform=\"rotate(-90 4 {})\" text-anchor=\"end\" dy=\"8\">{}</text></g>",
            num(t),
            num(t),
            esc(y_title)
        );
        s
    }
}

/// `x,y x,y …` for a polyline.
/// A series as SVG: a polyline through its points, or, when they all sit at one place
/// (a series of one value, a life of one moment), a dot there, which a polyline would
/// not show. `attrs` go on the element (`data-series`, a player).
pub fn series_element(attrs: &str, colour: &str, pts: &[(f64, f64)]) -> String {
    let one_place = pts.windows(2).all(|w| w[0] == w[1]);
    match pts.first() {
        Some(&(x, y)) if one_place => format!(
            "<circle{attrs} fill=\"{colour}\" cx=\"{}\" cy=\"{}\" r=\"2.5\"/>",
            num(x),
            num(y)
        ),
        Some(_) => format!(
            "<polyline{attrs} stroke=\"{colour}\" points=\"{}\"/>",
            points_attr(pts.iter().copied())
        ),
        None => String::new(),
    }
}

pub fn points_attr(pts: impl Iterator<Item = (f64, f64)>) -> String {
    let mut s = String::new();
    for (x, y) in pts {
        if !s.is_empty() {
            s.push(' ');
        }
        s.push_str(&num(x));
        s.push(',');
        s.push_str(&num(y));
    }
    s
}

#[cfg(test)]
mod tests {

    // Catches: a series of one value (or a life of one moment) drawn as a polyline of
    // one point, which shows nothing.
    #[test]
    fn a_series_at_one_place_is_a_dot() {
        let one = series_element(" data-series=\"hull\"", "#123456", &[(10.0, 20.0)]);
        assert!(
            one.starts_with("<circle") && one.contains("cx=\"10\""),
            "{one}"
        );
        let still = series_element("", "#123456", &[(10.0, 20.0), (10.0, 20.0)]);
        assert!(still.starts_with("<circle"), "{still}");
        let line = series_element("", "#123456", &[(10.0, 20.0), (30.0, 20.0)]);
        assert!(
            line.starts_with("<polyline") && line.contains("points=\"10,20 30,20\""),
            "{line}"
        );
        assert!(series_element("", "#123456", &[]).is_empty());
    }

    use super::*;
    use serde_json::json;

    #[test]
    fn escaping_covers_markup_and_attributes() {
        assert_eq!(
            esc("<img src=x onerror=\"a('b')\">&"),
            "&lt;img src=x onerror=&quot;a(&#39;b&#39;)&quot;&gt;&amp;"
        );
        assert_eq!(esc("a\u{0}b"), "a\u{FFFD}b");
        assert_eq!(esc("Kirk ✓"), "Kirk ✓");
    }

    #[test]
    fn script_json_cannot_close_the_script() {
        let s = json_for_script(&json!({"name": "</script><script>alert(1)</script>\u{2028}&"}));
        assert!(!s.contains('<') && !s.contains('>') && !s.contains('&'));
        assert!(!s.contains('\u{2028}'));
        let back: serde_json::Value = serde_json::from_str(&s).unwrap();
        assert_eq!(back["name"], "</script><script>alert(1)</script>\u{2028}&");
    }

    #[test]
    fn numbers_and_ticks() {
        assert_eq!(num(-0.04), "0");
        assert_eq!(num(12.25), "12.3");
        assert_eq!(num(3.0), "3");
        assert_eq!(num(f64::NAN), "0");
        assert_eq!(nice_step(2040.0, 10), 500.0);
        assert_eq!(nice_step(5.4, 10), 1.0);
        assert_eq!(ticks(0.0, 5.4, 10), vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
        assert_eq!(
            ticks(-120.0, 130.0, 5),
            vec![-100.0, -50.0, 0.0, 50.0, 100.0]
        );
        assert_eq!(tick_label(0.5), "0.5");
        // One axis, one format, whatever the floating-point error of each tick.
        assert_eq!(
            tick_labels(&ticks(0.7, 1.0, 5)),
            ["0.7", "0.8", "0.9", "1.0"]
        );
        assert_eq!(
            tick_labels(&ticks(0.0, 1.0, 5)),
            ["0.0", "0.2", "0.4", "0.6", "0.8", "1.0"]
        );
        assert_eq!(tick_labels(&[0.0, 0.25, 0.5]), ["0.00", "0.25", "0.50"]);
        assert_eq!(tick_labels(&[-100.0, -50.0, 0.0]), ["-100", "-50", "0"]);
        assert_eq!(tick_label(20.0), "20");
    }

    #[test]
    fn plot_scales_map_ranges_to_the_area() {
        let p = Plot::new(600.0, 200.0, (0.0, 10.0), (0.0, 100.0));
        assert_eq!(p.px(0.0), p.left);
        assert_eq!(p.px(10.0), 600.0 - p.right);
        assert_eq!(p.py(0.0), 200.0 - p.bottom);
        assert_eq!(p.py(100.0), p.top);
        // Degenerate ranges do not divide by zero.
        let q = Plot::new(600.0, 200.0, (5.0, 5.0), (0.0, 0.0));
        assert!(q.px(5.0).is_finite() && q.py(0.0).is_finite());
    }
}
