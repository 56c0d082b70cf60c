//! Reading ship layout files (the `ships.json` schema, `ships.md` §2) with errors located
//! by line, column and field path (`ships[3].subsystems[2].format`).
//!
//! serde_json reports a line and column but not which field; a small scanner over the
//! JSON text maps a position to the field path and a path back to its position, so both
//! syntax/type errors and the checks made after parsing say where they are.

use super::class_layout::{
    key_among, snake_key, ChildLayout, LayoutOrigin, RecordFormat, ShipClass, SubsystemLayout,
};
use serde::Deserialize;
use std::fmt;

/// Most entries a list may have: start and 0x80 indices are single bytes.
pub const MAX_SUBSYSTEMS: usize = 255;
/// Most children one entry may have (each is a condition byte of every record).
pub const MAX_CHILDREN: usize = 255;

/// A layout file that could not be used, located as precisely as the error allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayoutError {
    /// File path (or `<stock>` / `<text>`).
    pub source: String,
    /// 1-based line and column; 0 when the error is not about a place in the text.
    pub line: usize,
    pub column: usize,
    /// Field path, e.g. `ships[0].subsystems[2].format`; empty for the whole file.
    pub field: String,
    pub message: String,
}

impl LayoutError {
    pub fn io(source: &str, e: &std::io::Error) -> LayoutError {
        LayoutError {
            source: source.to_string(),
            line: 0,
            column: 0,
            field: String::new(),
            message: e.to_string(),
        }
    }
}

impl fmt::Display for LayoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.source)?;
        if self.line > 0 {
            write!(f, ":{}:{}", self.line, self.column)?;
        }
        if !self.field.is_empty() {
            // Escaped: the field may quote file text (a broken key) with line breaks.
            write!(f, ": {}", self.field.escape_debug())?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for LayoutError {}

/// What a layout file defines.
#[derive(Debug, Default)]
pub struct ParsedLayouts {
    pub classes: Vec<ShipClass>,
    pub aliases: Vec<(u16, u16)>,
}

#[derive(Deserialize)]
struct FileJson {
    #[serde(default)]
    schema: Option<String>,
    ships: Vec<ShipJson>,
    #[serde(default)]
    layout_aliases: Vec<AliasJson>,
}

#[derive(Deserialize)]
struct ShipJson {
    species_id: u16,
    name: String,
    #[serde(default)]
    display_name: Option<String>,
    #[serde(default)]
    faction: String,
    #[serde(default)]
    can_cloak: bool,
    #[serde(default)]
    top_level_count: Option<usize>,
    subsystems: Vec<SubsystemJson>,
}

#[derive(Deserialize)]
struct SubsystemJson {
    #[serde(default)]
    index: Option<usize>,
    name: String,
    #[serde(default)]
    kind: String,
    format: RecordFormat,
    #[serde(default)]
    powered_type: Option<bool>,
    #[serde(default)]
    weapon_system: Option<String>,
    #[serde(default)]
    max_condition: Option<f32>,
    #[serde(default)]
    children: Vec<ChildJson>,
}

#[derive(Deserialize)]
struct ChildJson {
    name: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    max_condition: Option<f32>,
}

#[derive(Deserialize)]
struct AliasJson {
    species_id: u16,
    same_layout_as_species: u16,
}

/// Parse and check layout JSON.
pub fn parse(text: &str, origin: &LayoutOrigin) -> Result<ParsedLayouts, LayoutError> {
    let source = match origin {
        LayoutOrigin::Stock => "<stock ships.json>".to_string(),
        LayoutOrigin::File(p) => p.clone(),
    };
    let file: FileJson = serde_json::from_str(text).map_err(|e| {
        let offset = offset_of(text, e.line(), e.column());
        let field = locate::path_at(text, offset);
        LayoutError {
            source: source.clone(),
            line: e.line(),
            column: e.column(),
            field,
            message: strip_position(&e.to_string()),
        }
    })?;
    // Checks after parsing name the path; the scanner finds its line.
    let fail = |path: String, message: String| {
        let (line, column) = locate::position_of(text, &path).unwrap_or((0, 0));
        LayoutError {
            source: source.clone(),
            line,
            column,
            field: path,
            message,
        }
    };
    if let Some(schema) = &file.schema {
        if !schema.starts_with("bc-ship-layouts/1") {
            return Err(fail(
                "schema".into(),
                format!("unsupported schema {schema:?}, expected \"bc-ship-layouts/1\""),
            ));
        }
    }
    let mut out = ParsedLayouts::default();
    for (si, ship) in file.ships.into_iter().enumerate() {
        let at = format!("ships[{si}]");
        if out.classes.iter().any(|c| c.species_id == ship.species_id) {
            return Err(fail(
                format!("{at}.species_id"),
                format!("species {} is defined twice in this file", ship.species_id),
            ));
        }
        if ship.subsystems.is_empty() || ship.subsystems.len() > MAX_SUBSYSTEMS {
            return Err(fail(
                format!("{at}.subsystems"),
                format!(
                    "a class needs 1..={MAX_SUBSYSTEMS} subsystems, found {}",
                    ship.subsystems.len()
                ),
            ));
        }
        if let Some(n) = ship.top_level_count {
            if n != ship.subsystems.len() {
                return Err(fail(
                    format!("{at}.top_level_count"),
                    format!(
                        "top_level_count is {n} but {} subsystems are listed",
                        ship.subsystems.len()
                    ),
                ));
            }
        }
        let mut subsystems = Vec::with_capacity(ship.subsystems.len());
        for (i, s) in ship.subsystems.into_iter().enumerate() {
            let sat = format!("{at}.subsystems[{i}]");
            if let Some(index) = s.index {
                if index != i {
                    return Err(fail(
                        format!("{sat}.index"),
                        format!(
                            "index {index} at list position {i}: entries must be in wire order"
                        ),
                    ));
                }
            }
            if s.children.len() > MAX_CHILDREN {
                return Err(fail(
                    format!("{sat}.children"),
                    format!("more than {MAX_CHILDREN} children"),
                ));
            }
            if s.format == RecordFormat::Shield && !s.children.is_empty() {
                return Err(fail(
                    format!("{sat}.children"),
                    "a shield-format entry has no children on the wire".into(),
                ));
            }
            subsystems.push(SubsystemLayout {
                powered_type: s.powered_type.unwrap_or(s.format.has_power_bit()),
                // Filled in below, once the whole list is known.
                key: String::new(),
                name: s.name,
                kind: s.kind,
                format: s.format,
                weapon_system: s.weapon_system,
                max_condition: s.max_condition,
                children: s
                    .children
                    .into_iter()
                    .map(|c| ChildLayout {
                        key: snake_key(&c.name),
                        name: c.name,
                        kind: c.kind,
                        max_condition: c.max_condition,
                    })
                    .collect(),
            });
        }
        let keys: Vec<String> = (0..subsystems.len())
            .map(|i| key_among(&subsystems, i))
            .collect();
        for (e, k) in subsystems.iter_mut().zip(keys) {
            e.key = k;
        }
        out.classes.push(ShipClass {
            species_id: ship.species_id,
            display_name: ship.display_name.unwrap_or_else(|| ship.name.clone()),
            name: ship.name,
            faction: ship.faction,
            can_cloak: ship.can_cloak,
            subsystems,
            origin: origin.clone(),
        });
    }
    out.aliases = file
        .layout_aliases
        .iter()
        .map(|a| (a.species_id, a.same_layout_as_species))
        .collect();
    Ok(out)
}

/// serde_json appends " at line L column C"; the error carries those separately.
fn strip_position(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

/// Byte offset of a 1-based line / column (serde_json counts columns in bytes).
fn offset_of(text: &str, line: usize, column: usize) -> usize {
    let mut offset = 0;
    for (n, l) in text.split_inclusive('\n').enumerate() {
        if n + 1 == line {
            return (offset + column.saturating_sub(1)).min(text.len());
        }
        offset += l.len();
    }
    text.len()
}

/// Minimal JSON scanner that knows where it is: the field path at a byte offset, and
/// the line/column of a field path. Tolerant of malformed text (it stops there).
mod locate {
    #[derive(Clone, Debug, PartialEq)]
    enum Seg {
        Key(String),
        Index(usize),
    }

    fn render(path: &[Seg]) -> String {
        let mut s = String::new();
        for seg in path {
            match seg {
                Seg::Key(k) => {
                    if !s.is_empty() {
                        s.push('.');
                    }
                    s.push_str(k);
                }
                Seg::Index(i) => s.push_str(&format!("[{i}]")),
            }
        }
        s
    }

    enum Goal<'g> {
        /// Stop at the first value whose text reaches this offset.
        Offset(usize),
        /// Stop at the value with this rendered path.
        Path(&'g str),
    }

    struct Scan<'a, 'g> {
        s: &'a [u8],
        i: usize,
        path: Vec<Seg>,
        goal: Goal<'g>,
        depth: usize,
    }

    /// Found: the path and the value's start offset.
    type Stop = (String, usize);

    impl Scan<'_, '_> {
        fn ws(&mut self) {
            while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
                self.i += 1;
            }
        }
        fn reached(&self) -> bool {
            matches!(self.goal, Goal::Offset(o) if self.i >= o)
        }
        fn here(&self, start: usize) -> Stop {
            (render(&self.path), start)
        }
        fn string(&mut self) -> String {
            // At the opening quote.
            self.i += 1;
            let from = self.i;
            while self.i < self.s.len() && self.s[self.i] != b'"' {
                if self.s[self.i] == b'\\' {
                    self.i += 1;
                }
                self.i += 1;
            }
            let to = self.i.min(self.s.len());
            self.i = (self.i + 1).min(self.s.len());
            String::from_utf8_lossy(&self.s[from..to]).into_owned()
        }
        fn value(&mut self) -> Result<(), Stop> {
            self.ws();
            let start = self.i;
            if let Goal::Path(p) = self.goal {
                if render(&self.path) == p {
                    return Err(self.here(start));
                }
            }
            self.depth += 1;
            if self.depth > 128 || self.i >= self.s.len() {
                return Err(self.here(start));
            }
            match self.s[self.i] {
                b'{' => {
                    self.i += 1;
                    loop {
                        self.ws();
                        if self.reached() {
                            return Err(self.here(start));
                        }
                        match self.s.get(self.i) {
                            Some(b'}') => {
                                self.i += 1;
                                break;
                            }
                            Some(b',') => self.i += 1,
                            Some(b'"') => {
                                let key = self.string();
                                self.ws();
                                if self.s.get(self.i) == Some(&b':') {
                                    self.i += 1;
                                }
                                self.path.push(Seg::Key(key));
                                self.value()?;
                                self.path.pop();
                            }
                            _ => return Err(self.here(start)),
                        }
                    }
                }
                b'[' => {
                    self.i += 1;
                    let mut n = 0;
                    loop {
                        self.ws();
                        if self.reached() {
                            return Err(self.here(start));
                        }
                        match self.s.get(self.i) {
                            Some(b']') => {
                                self.i += 1;
                                break;
                            }
                            Some(b',') => self.i += 1,
                            Some(_) => {
                                self.path.push(Seg::Index(n));
                                self.value()?;
                                self.path.pop();
                                n += 1;
                            }
                            None => return Err(self.here(start)),
                        }
                    }
                }
                b'"' => {
                    self.string();
                }
                _ => {
                    while self.i < self.s.len() && !b",]}".contains(&self.s[self.i]) {
                        if self.s[self.i].is_ascii_whitespace() {
                            break;
                        }
                        self.i += 1;
                    }
                    if self.i == start {
                        return Err(self.here(start));
                    }
                }
            }
            self.depth -= 1;
            // Strictly past: an error reported at the next character belongs to the parent.
            if matches!(self.goal, Goal::Offset(o) if self.i > o) {
                return Err(self.here(start));
            }
            Ok(())
        }
    }

    fn run(text: &str, goal: Goal<'_>) -> Option<Stop> {
        let mut scan = Scan {
            s: text.as_bytes(),
            i: 0,
            path: Vec::new(),
            goal,
            depth: 0,
        };
        scan.value().err()
    }

    /// The field path of the value that contains (or ends at) a byte offset.
    pub fn path_at(text: &str, offset: usize) -> String {
        run(text, Goal::Offset(offset))
            .map(|(p, _)| p)
            .unwrap_or_default()
    }

    /// 1-based line and column where the value at a path starts.
    pub fn position_of(text: &str, path: &str) -> Option<(usize, usize)> {
        let (_, start) = run(text, Goal::Path(path))?;
        let before = text.get(..start)?;
        let line = before.matches('\n').count() + 1;
        let column = start - before.rfind('\n').map_or(0, |i| i + 1) + 1;
        Some((line, column))
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn paths_and_positions() {
            let t = "{\n \"a\": [1, {\"b\": \"x\"}],\n \"c\": 2\n}";
            assert_eq!(position_of(t, "a[1].b"), Some((2, 17)));
            assert_eq!(position_of(t, "c"), Some((3, 7)));
            let at = t.find("\"x\"").unwrap();
            assert_eq!(path_at(t, at + 1), "a[1].b");
            assert_eq!(path_at(t, t.find('2').unwrap()), "c");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_text(t: &str) -> Result<ParsedLayouts, LayoutError> {
        parse(t, &LayoutOrigin::File("mods.json".into()))
    }

    #[test]
    fn unknown_format_names_line_and_field() {
        let t = r#"{
  "ships": [
    {
      "species_id": 40,
      "name": "Defiant",
      "subsystems": [
        { "name": "Hull", "format": "base" },
        { "name": "Pulse Phasers", "format": "pulsed" }
      ]
    }
  ]
}"#;
        let e = parse_text(t).unwrap_err();
        assert_eq!(e.line, 8);
        assert_eq!(e.field, "ships[0].subsystems[1].format");
        assert!(e.message.contains("unknown variant"), "{e}");
        assert!(e.to_string().starts_with("mods.json:8:"), "{e}");
    }

    #[test]
    fn missing_field_names_the_object() {
        let t = "{\"ships\": [{\"species_id\": 40, \"name\": \"X\",\n \"subsystems\": [{\"name\": \"Hull\"}]}]}";
        let e = parse_text(t).unwrap_err();
        assert_eq!(e.field, "ships[0].subsystems[0]");
        assert_eq!(e.line, 2);
        assert!(e.message.contains("missing field `format`"), "{e}");
    }

    #[test]
    fn checks_after_parsing_are_located() {
        let t = "{\"ships\": [\n {\"species_id\": 40, \"name\": \"X\", \"top_level_count\": 3,\n  \"subsystems\": [{\"name\": \"Hull\", \"format\": \"base\"}]}]}";
        let e = parse_text(t).unwrap_err();
        assert_eq!(e.field, "ships[0].top_level_count");
        assert_eq!((e.line, e.column), (2, 53));
        let t = "{\"ships\": [{\"species_id\": 70000, \"name\": \"X\", \"subsystems\": []}]}";
        let e = parse_text(t).unwrap_err();
        assert_eq!(e.field, "ships[0].species_id");
    }

    #[test]
    fn syntax_errors_are_located() {
        let t = "{\"ships\": [\n {\"species_id\": 40,, }]}";
        let e = parse_text(t).unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.field.starts_with("ships[0]"), "{e}");
    }
}
