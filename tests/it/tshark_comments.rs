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

// A frame with several comments keeps every one, each its own `opt_comment`, in its
// order; `--annotate` adds its line after them. The input is written with two comments
// on a frame, tshark confirms it reads both, and reads the output back.
// Catches: only the first comment of a frame read (and so written).
#[test]
fn several_comments_of_a_frame_are_all_kept() {
    if !common::tshark_usable() {
        return;
    }
    use bcwire::capture::{CaptureReader, CaptureWriter, Endian, Frame, TsResolution};
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("two-notes.pcapng");
    let src = common::shipped_capture("sample.pcapng");
    let mut reader = CaptureReader::new(std::fs::File::open(&src).unwrap()).unwrap();
    let mut writer: Option<CaptureWriter<std::fs::File>> = None;
    let mut frame = Frame::default();
    let mut n = 0;
    while n < 8 && reader.read_into(&mut frame).unwrap() {
        n += 1;
        let w = writer.get_or_insert_with(|| {
            let mut w =
                CaptureWriter::pcapng(std::fs::File::create(&input).unwrap(), Endian::Little)
                    .unwrap();
            w.add_interface(frame.link_type as u16, 65_535, TsResolution::NANO, 0)
                .unwrap();
            w
        });
        let notes: &[&str] = if n == 3 {
            &["first note", "second note"]
        } else {
            &[]
        };
        w.write_frame_comments(0, frame.ts_ns, frame.orig_len, &frame.data, notes)
            .unwrap();
    }
    drop(writer);
    let input_s = input.to_str().unwrap();
    let commented = |file: &str| -> Vec<(u64, String)> {
        comments(file)
            .into_iter()
            .filter(|(_, c)| !c.is_empty())
            .collect()
    };
    assert_eq!(
        commented(input_s),
        vec![(3, "first note,second note".to_string())],
        "tshark reads both comments of the input"
    );
    let out = dir.path().join("out.pcapng");
    let out_s = out.to_str().unwrap();
    let run = common::bcwire(&["-q", "decode", input_s, "-w", out_s]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert_eq!(
        commented(out_s),
        vec![(3, "first note,second note".to_string())]
    );
    let run = common::bcwire(&["-q", "decode", input_s, "-w", out_s, "--annotate"]);
    assert!(run.status.success());
    let annotated = comments(out_s);
    let third = annotated.iter().find(|(f, _)| *f == 3).unwrap();
    assert!(
        third.1.starts_with("first note,second note,bcwire: "),
        "{annotated:?}"
    );
}
