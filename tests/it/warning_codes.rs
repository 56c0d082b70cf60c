//! The table of warning codes in docs/json.md is the registry in `diag::Code`, row for
//! row. Run with `BCWIRE_REGENERATE_DOCS=1` to rewrite the table after changing a code.

use bcwire::diag::Code;

const BEGIN: &str = "<!-- warning-codes:begin (generated from diag::Code) -->";
const END: &str = "<!-- warning-codes:end -->";

fn table() -> String {
    let mut t = String::from("| code | layer | kind | meaning |\n|---|---|---|---|\n");
    for &c in Code::ALL {
        t.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            c.as_str(),
            c.layer().as_str(),
            c.kind().as_str(),
            c.description()
        ));
    }
    t
}

#[test]
fn docs_table_equals_the_registry() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/json.md");
    let doc = std::fs::read_to_string(path).expect("docs/json.md");
    let (head, rest) = doc.split_once(BEGIN).expect("begin marker in docs/json.md");
    let (_, tail) = rest.split_once(END).expect("end marker in docs/json.md");
    let want = format!("{head}{BEGIN}\n{}{END}{tail}", table());
    if std::env::var_os("BCWIRE_REGENERATE_DOCS").is_some() {
        std::fs::write(path, &want).expect("write docs/json.md");
        return;
    }
    assert!(
        doc == want,
        "docs/json.md's warning table differs from diag::Code; rerun with BCWIRE_REGENERATE_DOCS=1"
    );
}

// A capture's own problems carry registered codes: a file cut inside its last record
// reports `truncated_capture` (an error) in `info --format json`'s `problem_codes`, with
// the same line as `problems`, and every code there is one `bcwire list warnings`
// lists.
// Catches: capture problems kept as free text, or a code outside the registry.
#[test]
fn capture_problems_carry_their_codes() {
    let sample = concat!(env!("CARGO_MANIFEST_DIR"), "/captures/sample.pcapng");
    let bytes = std::fs::read(sample).expect("sample");
    let dir = tempfile::tempdir().expect("tempdir");
    let cut = dir.path().join("cut.pcapng");
    // Seven bytes short of the end: inside the last block, past its header.
    std::fs::write(&cut, &bytes[..bytes.len() - 7]).expect("write");
    let cut = cut.to_str().expect("a UTF-8 path");
    let out = crate::common::bcwire(&["info", "--format", "json", cut]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let doc = &doc["files"][0];
    let problems = doc["problems"].as_array().expect("problems");
    let coded = doc["problem_codes"].as_array().expect("problem_codes");
    assert_eq!(problems.len(), coded.len());
    for (p, c) in problems.iter().zip(coded) {
        assert_eq!(p, &c["message"]);
    }
    let truncation = coded
        .iter()
        .find(|c| c["code"] == "truncated_capture")
        .unwrap_or_else(|| panic!("no truncated_capture in {coded:?}"));
    assert_eq!(truncation["severity"], "error");

    let listed = crate::common::bcwire(&["list", "warnings"]);
    let listed = String::from_utf8_lossy(&listed.stdout).into_owned();
    let codes: Vec<&str> = listed
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    for c in coded {
        let code = c["code"].as_str().expect("code");
        assert!(codes.contains(&code), "{code} not in {codes:?}");
    }
}
