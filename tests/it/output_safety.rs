//! No command writes over its input, whatever name the input is given by, and a written
//! file replaces the old one only when complete. Each case compares the input's bytes
//! before and after the run (they must be identical), and reads written captures back
//! with pcap-file, not with bcwire.

use crate::common;
use std::path::{Path, PathBuf};

/// A private copy of the shipped sample in a fresh directory.
fn copy_of_sample() -> (tempfile::TempDir, PathBuf, Vec<u8>) {
    let dir = tempfile::tempdir().expect("temp dir");
    let bytes = std::fs::read(common::shipped_capture("sample.pcapng")).expect("sample");
    let path = dir.path().join("v2.pcapng");
    std::fs::write(&path, &bytes).expect("copy");
    (dir, path, bytes)
}

fn run_in(dir: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_bcwire"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .expect("run bcwire")
}

/// Packets of a pcapng file as pcap-file reads them.
fn pcapng_frames(path: &Path) -> usize {
    let file = std::fs::File::open(path).expect("written capture");
    let mut reader = pcap_file::pcapng::PcapNgReader::new(file).expect("pcapng header");
    let mut frames = 0;
    while let Some(block) = reader.next_block() {
        if matches!(
            block.expect("pcapng block").0,
            pcap_file::pcapng::Block::EnhancedPacket(_)
                | pcap_file::pcapng::Block::SimplePacket(_)
                | pcap_file::pcapng::Block::Packet(_)
        ) {
            frames += 1;
        }
    }
    frames
}

// Catches: the overwrite check comparing path strings (`./v2.pcapng`, an absolute path,
// a hard link or a symbolic link to the input all got through and truncated it).
#[test]
fn every_command_refuses_to_write_over_its_input() {
    let (dir, input, before) = copy_of_sample();
    let abs = input.to_string_lossy().into_owned();
    let hard = dir.path().join("hard.pcapng");
    std::fs::hard_link(&input, &hard).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink("v2.pcapng", dir.path().join("soft.pcapng")).unwrap();
    let cases: Vec<Vec<&str>> = vec![
        vec!["decode", "v2.pcapng", "-w", "./v2.pcapng"],
        vec!["decode", "v2.pcapng", "-w", &abs],
        vec!["decode", "v2.pcapng", "-w", "hard.pcapng"],
        vec!["decode", "v2.pcapng", "-w", "soft.pcapng"],
        vec!["decode", "soft.pcapng", "-w", "v2.pcapng"],
        vec!["show", "v2.pcapng", "--frame", "1", "-w", "./v2.pcapng"],
        vec!["stats", "v2.pcapng", "-w", "hard.pcapng"],
        vec![
            "decode",
            "v2.pcapng",
            "--format",
            "parquet",
            "-o",
            "v2.pcapng",
        ],
        vec![
            "decode",
            "v2.pcapng",
            "--format",
            "parquet",
            "-o",
            "soft.pcapng",
        ],
        vec!["report", "v2.pcapng", "-o", "v2.pcapng"],
        vec!["report", "v2.pcapng", "-o", "hard.pcapng"],
    ];
    // The ships file is an input too.
    let ships = dir.path().join("ships.json");
    let ships_before =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/example-ships.json"))
            .unwrap();
    std::fs::write(&ships, &ships_before).unwrap();
    let out = run_in(
        dir.path(),
        &[
            "decode",
            "v2.pcapng",
            "--ships",
            "ships.json",
            "-w",
            "ships.json",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(std::fs::read(&ships).unwrap(), ships_before);
    for args in &cases {
        let out = run_in(dir.path(), args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("same file"), "{args:?}: {stderr}");
        assert_eq!(
            std::fs::read(&input).unwrap(),
            before,
            "{args:?} changed the input"
        );
    }
    // A directory of inputs whose Parquet file would land on one of them.
    let out = run_in(
        dir.path(),
        &["decode", ".", "--format", "parquet", "--out-dir", "."],
    );
    assert_eq!(std::fs::read(&input).unwrap(), before);
    // `v2.parquet` is not an input: that run may write it, but never the captures.
    assert!(out.status.code().is_some());
}

// Catches: an output opened with File::create before the run (a failing run left a
// 0-byte file where the older output stood).
#[test]
fn a_failed_run_leaves_the_older_output_whole() {
    let (dir, _input, _) = copy_of_sample();
    let older = dir.path().join("older.pcapng");
    std::fs::write(&older, b"an older output the user still wants").unwrap();
    // The capture cannot be read: the run fails after the output was named.
    std::fs::write(
        dir.path().join("broken.pcapng"),
        b"\x0a\x0d\x0d\x0a garbage",
    )
    .unwrap();
    let out = run_in(
        dir.path(),
        &["decode", "broken.pcapng", "-w", "older.pcapng"],
    );
    assert_ne!(out.status.code(), Some(0));
    assert_eq!(
        std::fs::read(&older).unwrap(),
        b"an older output the user still wants"
    );
    // No temporary file is left beside it.
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.iter().all(|n| !n.ends_with(".part")),
        "left behind: {names:?}"
    );
}

// Catches: writing through a symbolic link replacing the link by a file, and a
// rewritten output losing its mode.
#[cfg(unix)]
#[test]
fn a_link_is_followed_and_the_mode_kept() {
    use std::os::unix::fs::PermissionsExt;
    let (dir, _input, _) = copy_of_sample();
    let real = dir.path().join("real.pcapng");
    std::fs::write(&real, b"old").unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
    std::os::unix::fs::symlink("real.pcapng", dir.path().join("link.pcapng")).unwrap();
    let out = run_in(
        dir.path(),
        &[
            "decode",
            "v2.pcapng",
            "--frames",
            "1-20",
            "-w",
            "link.pcapng",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let link = dir.path().join("link.pcapng");
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(
        std::fs::metadata(&real).unwrap().permissions().mode() & 0o777,
        0o640
    );
    assert!(
        pcapng_frames(&real) > 0,
        "the link's target holds the frames"
    );
}

// Catches: a device or FIFO output renamed over (replacing /dev/null by a file, or a
// pipe's reader seeing nothing).
#[cfg(unix)]
#[test]
fn devices_and_fifos_are_written_in_place() {
    use std::os::unix::fs::FileTypeExt;
    let (dir, _input, _) = copy_of_sample();
    let out = run_in(dir.path(), &["decode", "v2.pcapng", "-w", "/dev/null"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(std::fs::metadata("/dev/null")
        .unwrap()
        .file_type()
        .is_char_device());

    let fifo = dir.path().join("pipe.pcapng");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo (coreutils)");
    assert!(made.success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).expect("read the FIFO"))
    };
    let out = run_in(
        dir.path(),
        &[
            "decode",
            "v2.pcapng",
            "--frames",
            "1-5",
            "-w",
            "pipe.pcapng",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got = reader.join().unwrap();
    assert_eq!(&got[..4], &[0x0a, 0x0d, 0x0d, 0x0a], "a pcapng stream");
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
}
