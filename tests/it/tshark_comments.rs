//! `-w` keeps the packet comments the input frames had, and `--annotate` adds its
//! line after them; tshark reads the written file's comments back.

use crate::common;
use std::process::Command;

/// Frame number → the `frame.comment` values tshark shows (several joined by `,`).
fn comments(file: &str) -> Vec<(u64, String)> {
    common::tshark_by_frame(
        Command::new("tshark")
            .args(["-r", file, "-T", "fields", "-e", "frame.number"])
            .args(["-e", "frame.comment"]),
    )
}

/// Comments put on frames 4 and 5 by editcap survive `decode -w`, alone and with
/// `--annotate` (the input's comment first, then bcwire's line). Catches `-w`
/// dropping the input's comments, and `--annotate` replacing them.
#[test]
fn written_frames_keep_their_comments() {
    if !common::tshark_usable() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("commented.pcapng");
    let input_s = input.to_str().unwrap();
    let src = common::shipped_capture("mtu400-null.pcapng");
    let ok = Command::new("editcap")
        .args(["-a", "4:first note", "-a", "5:second note"])
        .arg(&src)
        .arg(&input)
        .status()
        .expect("run editcap");
    assert!(ok.success());
    let had = comments(input_s);
    assert!(had.contains(&(4, "first note".to_string())), "{had:?}");

    let plain = dir.path().join("plain.pcapng");
    let plain_s = plain.to_str().unwrap();
    let out = common::bcwire(&["decode", input_s, "--frames", "1-6", "-w", plain_s]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let kept = comments(plain_s);
    let want: Vec<(u64, String)> = had.iter().filter(|(n, _)| *n <= 6).cloned().collect();
    assert_eq!(kept, want);

    let annotated = dir.path().join("annotated.pcapng");
    let annotated_s = annotated.to_str().unwrap();
    let out = common::bcwire(&[
        "decode",
        input_s,
        "--frames",
        "1-6",
        "-w",
        annotated_s,
        "--annotate",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let both = comments(annotated_s);
    assert_eq!(both.len(), 6);
    for (n, c) in &both {
        match n {
            4 => assert!(c.starts_with("first note,bcwire: "), "{c}"),
            5 => assert!(c.starts_with("second note,bcwire: "), "{c}"),
            _ => assert!(c.starts_with("bcwire: ") && !c.contains("note"), "{c}"),
        }
    }
}
