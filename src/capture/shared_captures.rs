//! Where unit tests find the shared real-peer captures: the directory `BCWIRE_SHARED`
//! names, or `shared` beside the repository.

use std::path::PathBuf;

/// The classic-pcap file of every shared capture (`captures/openbc/NAME/NAME.pcap`), in
/// name order; empty when the shared captures are not there, unless
/// `BCWIRE_REQUIRE_SHARED` is set (as in CI), where a test must not pass by skipping.
pub fn shared_pcaps() -> Vec<PathBuf> {
    let pcaps = find_shared_pcaps();
    assert!(
        !pcaps.is_empty() || std::env::var_os("BCWIRE_REQUIRE_SHARED").is_none(),
        "the shared real-peer captures are required (BCWIRE_REQUIRE_SHARED is set) but \
         were not found in $BCWIRE_SHARED or <crate>/../shared"
    );
    pcaps
}

fn find_shared_pcaps() -> Vec<PathBuf> {
    let root = [
        std::env::var_os("BCWIRE_SHARED").map(PathBuf::from),
        Some(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared")),
    ]
    .into_iter()
    .flatten()
    .map(|p| p.join("captures/openbc"))
    .find(|p| p.is_dir());
    let Some(root) = root else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(&root) else {
        return Vec::new();
    };
    let mut pcaps: Vec<PathBuf> = entries
        .flatten()
        .map(|e| {
            e.path()
                .join(format!("{}.pcap", e.file_name().to_string_lossy()))
        })
        .filter(|p| p.is_file())
        .collect();
    pcaps.sort();
    pcaps
}
