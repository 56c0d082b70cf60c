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
