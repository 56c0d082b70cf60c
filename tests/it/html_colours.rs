//! The page's colours, measured: any two colours that can stand in one legend differ by
//! a CIEDE2000 ΔE of at least 15. The colour difference is computed here from the
//! published formula (Sharma, Wu and Dalal, "The CIEDE2000 colour-difference formula:
//! implementation notes, supplementary test data, and mathematical observations",
//! Color Research and Application 30(1), 2005) and checked against that paper's 34
//! test pairs; sRGB is turned into CIELAB (D65) after IEC 61966-2-1 and CIE 15.

use crate::html_browser::{capture, generated_page, tmp};
use bcwire::report::html::svg::{opcode_colour, OTHER, PALETTE};
use std::process::Command;

/// The least difference two colours of one legend may have.
const LEAST: f64 = 15.0;

/// CIEDE2000 ΔE between two CIELAB colours (kL = kC = kH = 1).
fn ciede2000(x: [f64; 3], y: [f64; 3]) -> f64 {
    let (deg, rad) = (f64::to_degrees, f64::to_radians);
    let c_ab = |l: [f64; 3]| l[1].hypot(l[2]);
    let c_mean = (c_ab(x) + c_ab(y)) / 2.0;
    let p7 = |c: f64| (c.powi(7) / (c.powi(7) + 25f64.powi(7))).sqrt();
    let g = 0.5 * (1.0 - p7(c_mean));
    let prime = |l: [f64; 3]| {
        let a = (1.0 + g) * l[1];
        let c = a.hypot(l[2]);
        let h = if a == 0.0 && l[2] == 0.0 {
            0.0
        } else {
            deg(l[2].atan2(a)).rem_euclid(360.0)
        };
        (c, h)
    };
    let ((c1, h1), (c2, h2)) = (prime(x), prime(y));
    let dl = y[0] - x[0];
    let dc = c2 - c1;
    let dh = if c1 * c2 == 0.0 {
        0.0
    } else if (h2 - h1).abs() <= 180.0 {
        h2 - h1
    } else if h2 - h1 > 180.0 {
        h2 - h1 - 360.0
    } else {
        h2 - h1 + 360.0
    };
    let d_big_h = 2.0 * (c1 * c2).sqrt() * rad(dh / 2.0).sin();
    let l_mean = (x[0] + y[0]) / 2.0;
    let c_mean_p = (c1 + c2) / 2.0;
    let h_mean = if c1 * c2 == 0.0 {
        h1 + h2
    } else if (h1 - h2).abs() <= 180.0 {
        (h1 + h2) / 2.0
    } else if h1 + h2 < 360.0 {
        (h1 + h2 + 360.0) / 2.0
    } else {
        (h1 + h2 - 360.0) / 2.0
    };
    let t = 1.0 - 0.17 * rad(h_mean - 30.0).cos()
        + 0.24 * rad(2.0 * h_mean).cos()
        + 0.32 * rad(3.0 * h_mean + 6.0).cos()
        - 0.20 * rad(4.0 * h_mean - 63.0).cos();
    let d_theta = 30.0 * (-((h_mean - 275.0) / 25.0).powi(2)).exp();
    let r_c = 2.0 * p7(c_mean_p);
    let l50 = (l_mean - 50.0).powi(2);
    let s_l = 1.0 + 0.015 * l50 / (20.0 + l50).sqrt();
    let s_c = 1.0 + 0.045 * c_mean_p;
    let s_h = 1.0 + 0.015 * c_mean_p * t;
    let r_t = -rad(2.0 * d_theta).sin() * r_c;
    let (l, c, h) = (dl / s_l, dc / s_c, d_big_h / s_h);
    (l * l + c * c + h * h + r_t * c * h).sqrt()
}

/// CIELAB (D65) of an sRGB colour written `#rrggbb`.
fn lab(hex: &str) -> [f64; 3] {
    let hex = hex.strip_prefix('#').expect("a #rrggbb colour");
    let channel = |i: usize| {
        let v = u8::from_str_radix(&hex[i..i + 2], 16).expect("hex") as f64 / 255.0;
        if v <= 0.04045 {
            v / 12.92
        } else {
            ((v + 0.055) / 1.055).powf(2.4)
        }
    };
    let (r, g, b) = (channel(0), channel(2), channel(4));
    let x = 0.4124564 * r + 0.3575761 * g + 0.1804375 * b;
    let y = 0.2126729 * r + 0.7151522 * g + 0.0721750 * b;
    let z = 0.0193339 * r + 0.1191920 * g + 0.9503041 * b;
    let f = |t: f64| {
        let d: f64 = 6.0 / 29.0;
        if t > d.powi(3) {
            t.cbrt()
        } else {
            t / (3.0 * d * d) + 4.0 / 29.0
        }
    };
    let (fx, fy, fz) = (f(x / 0.95047), f(y), f(z / 1.08883));
    [116.0 * fy - 16.0, 500.0 * (fx - fy), 200.0 * (fy - fz)]
}

fn difference(a: &str, b: &str) -> f64 {
    ciede2000(lab(a), lab(b))
}

/// Every pair of `colours` closer than [`LEAST`], as text.
fn near_twins(colours: &[(String, &str)]) -> Vec<String> {
    let mut out = Vec::new();
    for (i, (n1, c1)) in colours.iter().enumerate() {
        for (n2, c2) in &colours[i + 1..] {
            let d = difference(c1, c2);
            if d < LEAST {
                out.push(format!("{n1} {c1} / {n2} {c2}: ΔE {d:.1}"));
            }
        }
    }
    out
}

#[test]
fn the_colour_difference_matches_the_published_test_pairs() {
    // Table 1 of the paper: L1 a1 b1, L2 a2 b2, ΔE00 (four decimals).
    #[rustfmt::skip]
    const PAIRS: [[f64; 7]; 34] = [
        [50.0000, 2.6772, -79.7751, 50.0000, 0.0000, -82.7485, 2.0425],
        [50.0000, 3.1571, -77.2803, 50.0000, 0.0000, -82.7485, 2.8615],
        [50.0000, 2.8361, -74.0200, 50.0000, 0.0000, -82.7485, 3.4412],
        [50.0000, -1.3802, -84.2814, 50.0000, 0.0000, -82.7485, 1.0000],
        [50.0000, -1.1848, -84.8006, 50.0000, 0.0000, -82.7485, 1.0000],
        [50.0000, -0.9009, -85.5211, 50.0000, 0.0000, -82.7485, 1.0000],
        [50.0000, 0.0000, 0.0000, 50.0000, -1.0000, 2.0000, 2.3669],
        [50.0000, -1.0000, 2.0000, 50.0000, 0.0000, 0.0000, 2.3669],
        [50.0000, 2.4900, -0.0010, 50.0000, -2.4900, 0.0009, 7.1792],
        [50.0000, 2.4900, -0.0010, 50.0000, -2.4900, 0.0010, 7.1792],
        [50.0000, 2.4900, -0.0010, 50.0000, -2.4900, 0.0011, 7.2195],
        [50.0000, 2.4900, -0.0010, 50.0000, -2.4900, 0.0012, 7.2195],
        [50.0000, -0.0010, 2.4900, 50.0000, 0.0009, -2.4900, 4.8045],
        [50.0000, -0.0010, 2.4900, 50.0000, 0.0010, -2.4900, 4.8045],
        [50.0000, -0.0010, 2.4900, 50.0000, 0.0011, -2.4900, 4.7461],
        [50.0000, 2.5000, 0.0000, 50.0000, 0.0000, -2.5000, 4.3065],
        [50.0000, 2.5000, 0.0000, 73.0000, 25.0000, -18.0000, 27.1492],
        [50.0000, 2.5000, 0.0000, 61.0000, -5.0000, 29.0000, 22.8977],
        [50.0000, 2.5000, 0.0000, 56.0000, -27.0000, -3.0000, 31.9030],
        [50.0000, 2.5000, 0.0000, 58.0000, 24.0000, 15.0000, 19.4535],
        [50.0000, 2.5000, 0.0000, 50.0000, 3.1736, 0.5854, 1.0000],
        [50.0000, 2.5000, 0.0000, 50.0000, 3.2972, 0.0000, 1.0000],
        [50.0000, 2.5000, 0.0000, 50.0000, 1.8634, 0.5757, 1.0000],
        [50.0000, 2.5000, 0.0000, 50.0000, 3.2592, 0.3350, 1.0000],
        [60.2574, -34.0099, 36.2677, 60.4626, -34.1751, 39.4387, 1.2644],
        [63.0109, -31.0961, -5.8663, 62.8187, -29.7946, -4.0864, 1.2630],
        [61.2901, 3.7196, -5.3901, 61.4292, 2.2480, -4.9620, 1.8731],
        [35.0831, -44.1164, 3.7933, 35.0232, -40.0716, 1.5901, 1.8645],
        [22.7233, 20.0904, -46.6940, 23.0331, 14.9730, -42.5619, 2.0373],
        [36.4612, 47.8580, 18.3852, 36.2715, 50.5065, 21.2231, 1.4146],
        [90.8027, -2.0831, 1.4410, 91.1528, -1.6435, 0.0447, 1.4441],
        [90.9257, -0.5406, -0.9208, 88.6381, -0.8985, -0.7239, 1.5381],
        [6.7747, -0.2908, -2.4247, 5.8714, -0.0985, -2.2286, 0.6377],
        [2.0776, 0.0795, -1.1350, 0.9033, -0.0636, -0.5514, 0.9082],
    ];
    for p in PAIRS {
        let (x, y) = ([p[0], p[1], p[2]], [p[3], p[4], p[5]]);
        for (d, order) in [(ciede2000(x, y), "1→2"), (ciede2000(y, x), "2→1")] {
            assert!((d - p[6]).abs() < 5e-5, "{p:?} {order}: {d:.4}");
        }
    }
}

#[test]
fn srgb_turns_into_the_known_cielab_values() {
    // Reference values of sRGB white, black and primaries under D65.
    let known = [
        ("#ffffff", [100.0, 0.0, 0.0]),
        ("#000000", [0.0, 0.0, 0.0]),
        ("#ff0000", [53.2408, 80.0925, 67.2032]),
        ("#00ff00", [87.7347, -86.1827, 83.1793]),
        ("#0000ff", [32.2970, 79.1875, -107.8602]),
    ];
    for (hex, want) in known {
        let got = lab(hex);
        for k in 0..3 {
            assert!((got[k] - want[k]).abs() < 0.01, "{hex}: {got:?}");
        }
    }
}

/// Every opcode of the catalogue that has a colour stands apart from every other and
/// from "other": any of them can meet in one rate chart's legend.
// Catches: 0x0A and 0x2A both `#eedd88`, and 0x21's `#ddcc77` ΔE 4 from them.
#[test]
fn opcode_colours_stand_apart_over_the_whole_catalogue() {
    let mut colours: Vec<(String, &str)> = (0..=255u8)
        .filter_map(|op| opcode_colour(op).map(|c| (format!("0x{op:02X}"), c)))
        .collect();
    assert!(colours.len() >= 15, "{} opcodes coloured", colours.len());
    colours.push(("other".into(), OTHER));
    let twins = near_twins(&colours);
    assert!(twins.is_empty(), "{}", twins.join("\n"));
    // The colours of players, of a ship's subsystems and of lines come from the same
    // palette, in order.
    let palette: Vec<(String, &str)> = PALETTE
        .iter()
        .enumerate()
        .map(|(i, c)| (format!("colour {i}"), *c))
        .collect();
    let twins = near_twins(&palette);
    assert!(twins.is_empty(), "{}", twins.join("\n"));
}

/// The swatches of every legend of a page, by legend.
fn legends(page: &str) -> Vec<Vec<String>> {
    // A legend ends at the chart after it; the map's legend nests a block per player.
    page.split("<div class=\"legend")
        .skip(1)
        .map(|part| {
            let end = ["<svg", "</section>", "<h4", "<p "]
                .iter()
                .filter_map(|e| part.find(e))
                .min()
                .unwrap_or(part.len());
            let body = &part[..end];
            body.split("class=\"sw\" style=\"background:")
                .skip(1)
                .map(|s| s[..s.find('"').unwrap()].to_string())
                .collect()
        })
        .collect()
}

/// On written pages (a real capture, a generated battle of eight players and an A/B
/// page), no legend holds two colours closer than ΔE 15.
#[test]
fn no_legend_of_a_page_holds_near_twins() {
    let mut captures = vec![vec![crate::common::shipped_capture("sample.pcapng")]];
    captures.push(vec![generated_page("colours_s8", 8, 2, 5)]);
    if let Some(b2) = capture("b2_valentines_replay") {
        captures.push(vec![b2]);
    }
    captures.push(vec![
        crate::common::shipped_capture("sample.pcapng"),
        crate::common::shipped_capture("duel-sll2.pcap"),
    ]);
    for (k, caps) in captures.iter().enumerate() {
        let out = tmp(&format!("colours_{k}.html"));
        let status = Command::new(env!("CARGO_BIN_EXE_bcwire"))
            .args(["-q", "report"])
            .args(caps)
            .arg("-o")
            .arg(&out)
            .status()
            .unwrap();
        assert!(status.success());
        let page = std::fs::read_to_string(&out).unwrap();
        let found = legends(&page);
        assert!(found.len() >= 4, "{caps:?}: {} legends", found.len());
        for legend in found {
            let named: Vec<(String, &str)> = legend
                .iter()
                .enumerate()
                .map(|(i, c)| (format!("swatch {i}"), c.as_str()))
                .collect();
            let twins = near_twins(&named);
            assert!(twins.is_empty(), "{caps:?}: {}", twins.join("\n"));
        }
    }
}
