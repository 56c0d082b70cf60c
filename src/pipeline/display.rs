//! The display filter of `-Y`: an expression over record facts and decoded field paths,
//! compiled once and evaluated for each message (a datagram is kept with the messages
//! that match, as the other message filters do).
//!
//! ```text
//! opcode == StateUpdate and flags & 0x20 and subsystems[hull].condition_pct < 50
//! retransmission or warnings.code == "non_stock"
//! client == Worf and direction == s2c
//! ```
//!
//! The grammar is `display.pest`. Semantics follow Wireshark's: a name that holds
//! several values (a repeated field, a list, the warnings of a message) matches a test
//! when any of its values does; `a != b` is `not (a == b)`; a name alone tests that it
//! exists (or, for a yes/no fact such as `retransmission`, that it is true). A bare
//! word on the right of a test is a name: `StateUpdate` for `opcode`, a ship class for
//! `ship`, a player for `client`, `c2s`, `true`.
//!
//! Why this file is long: about 850 lines; the compiler from the grammar's parse tree,
//! the evaluator and the fast forms of the short options' tests share the node types,
//! which stay private so that the language's meaning lives in one file.

pub use super::display_text::DisplayFilterError;
use super::display_text::{located, parse_number, precheck, unescape};
pub use super::facts::ClientNames;
use super::facts::{self, Fact, FactType, FactValue, RecordCx};
use super::field_names::{top_entries, FieldRef};
use super::names::Names;
use super::record::{MessageRecord, PacketRecord};
use super::values::{parse_opcode, parse_ship, ship_key};
use crate::game::opcodes::FieldTrees;
use crate::game::ships::ShipCatalog;
use crate::game::Value;
use pest::iterators::Pair;
use pest::Parser as _;
use std::borrow::Cow;

#[derive(pest_derive::Parser)]
#[grammar = "pipeline/display.pest"]
struct Grammar;

/// A compiled `-Y` expression.
#[derive(Debug, Clone)]
pub struct DisplayFilter {
    root: Node,
    text: String,
    /// Where each field path starts in the text, and its first name.
    field_names: Vec<(usize, String)>,
}

#[derive(Debug, Clone)]
enum Node {
    Or(Vec<Node>),
    And(Vec<Node>),
    Not(Box<Node>),
    Test(Test),
}

#[derive(Debug, Clone)]
struct Test {
    lhs: Lhs,
    cmp: Option<(Op, Operand)>,
    /// `all`: every value of the name must pass (and there must be one); `any`: one
    /// value. Unset: `!=` asks all, the other tests any (Wireshark 4).
    quantifier: Option<Quantifier>,
    /// The same test in a form that reads the record directly, for the tests the
    /// short options compile to (`opcode in {…}`, `frame >= N`, `direction == c2s`):
    /// the selection of `stats --opcode` then costs what a hand-written test would.
    fast: Option<Fast>,
}

/// A test answered from the record without gathering values.
#[derive(Debug, Clone)]
enum Fast {
    /// `opcode in {…}` or `opcode == N`: the opcodes that pass.
    Opcode(Box<[bool; 256]>),
    /// `frame OP N`.
    Frame(Op, f64),
    /// `direction == c2s` or `s2c`.
    Direction(crate::diag::Direction),
}

impl Fast {
    /// The fast form of `t`, where it has one: a fact with one value (or none, which
    /// fails every one of these tests, as the general test does), no quantifier.
    fn of(t: &Test) -> Option<Fast> {
        if t.quantifier.is_some() {
            return None;
        }
        let (op, rhs) = t.cmp.as_ref()?;
        match (&t.lhs, op, rhs) {
            (Lhs::Fact(Fact::Opcode), Op::Eq | Op::In, _) => {
                let members: &[Operand] = match rhs {
                    Operand::Set(m) => m,
                    one => std::slice::from_ref(one),
                };
                let mut pass = Box::new([false; 256]);
                for m in members {
                    let (lo, hi) = match m {
                        Operand::Num(n) => (*n, *n),
                        Operand::Range(lo, hi) => (*lo, *hi),
                        _ => return None,
                    };
                    for (op, p) in pass.iter_mut().enumerate() {
                        *p |= lo <= op as f64 && op as f64 <= hi;
                    }
                }
                Some(Fast::Opcode(pass))
            }
            (
                Lhs::Fact(Fact::Frame),
                Op::Eq | Op::Lt | Op::Le | Op::Gt | Op::Ge,
                Operand::Num(n),
            ) => Some(Fast::Frame(*op, *n)),
            (Lhs::Fact(Fact::Direction), Op::Eq, Operand::Text(d)) => {
                use crate::diag::Direction;
                [Direction::C2S, Direction::S2C]
                    .into_iter()
                    .find(|dir| dir.as_str() == d)
                    .map(Fast::Direction)
            }
            _ => None,
        }
    }

    fn eval(&self, cx: &RecordCx<'_>) -> bool {
        match self {
            Fast::Opcode(pass) => cx.game().is_some_and(|g| pass[usize::from(g.opcode)]),
            Fast::Frame(op, n) => {
                let f = cx.packet.frame as f64;
                match op {
                    Op::Eq => f == *n,
                    Op::Lt => f < *n,
                    Op::Le => f <= *n,
                    Op::Gt => f > *n,
                    _ => f >= *n,
                }
            }
            Fast::Direction(d) => cx.packet.direction == *d,
        }
    }
}

/// Give every test its fast form where it has one.
fn add_fast_forms(n: &mut Node) {
    match n {
        Node::Or(v) | Node::And(v) => v.iter_mut().for_each(add_fast_forms),
        Node::Not(n) => add_fast_forms(n),
        Node::Test(t) => t.fast = Fast::of(t),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Quantifier {
    Any,
    All,
}

#[derive(Debug, Clone)]
enum Lhs {
    Fact(Fact),
    /// A slice of a fact's text (`name[0:5]`, as Wireshark slices a string).
    FactSlice {
        fact: Fact,
        start: isize,
        len: Option<usize>,
    },
    /// A decoded field of the game message (`fields.` may prefix it), with the byte
    /// where it starts in the expression and its first name (for "no such field").
    Path {
        field: FieldRef,
        at: usize,
        first: String,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Eq,
    /// Wireshark 4's `!=`: the field is there and none of its values is equal.
    Ne,
    /// Wireshark 4's `~=`: some value of the field is not equal.
    AnyNe,
    Lt,
    Le,
    Gt,
    Ge,
    BitAnd,
    Contains,
    /// `in {…}`: equal to one of the set's values or inside one of its ranges.
    In,
    /// `matches` / `~`: a text value matches the regular expression.
    Matches,
}

#[derive(Debug, Clone)]
enum Operand {
    Num(f64),
    Text(String),
    /// Another field or fact (`udp_length > length`).
    Field(Box<Lhs>),
    /// The members of `in {…}`: values and inclusive ranges.
    Set(Vec<Operand>),
    Range(f64, f64),
    Regex(regex::Regex),
}

/// The values a name holds for a message: inline for the usual one or two, so that a
/// test allocates nothing.
type Vals<'a> = smallvec::SmallVec<[Val<'a>; 4]>;

/// One value a name holds for a message.
#[derive(Debug, Clone, PartialEq)]
enum Val<'a> {
    Num(f64),
    Text(Cow<'a, str>),
    Bool(bool),
    /// A group of fields: it exists, but compares with nothing.
    Group,
}

fn rule_name(r: &Rule) -> &'static str {
    match r {
        Rule::or_expr | Rule::and_expr | Rule::unary | Rule::test | Rule::path => {
            "a field or a fact"
        }
        Rule::cmp_op | Rule::in_op | Rule::matches_op => {
            "a comparison (==, !=, ~=, <, <=, >, >=, &, contains, matches, in)"
        }
        Rule::set => "a set {…}",
        Rule::and_op | Rule::or_op => "and, or",
        Rule::not_op => "not",
        Rule::string => "a \"string\"",
        Rule::number => "a number",
        Rule::name => "a name",
        Rule::EOI => "the end of the expression",
        _ => "more of the expression",
    }
}

impl DisplayFilter {
    /// Compile `text`; opcode and ship names are checked against the opcode table and
    /// `ships`.
    pub fn parse(text: &str, ships: &ShipCatalog) -> Result<DisplayFilter, DisplayFilterError> {
        precheck(text)?;
        let mut pairs = Grammar::parse(Rule::filter, text).map_err(|e| {
            let e = e.renamed_rules(|r| rule_name(r).to_string());
            DisplayFilterError(format!("-Y {text:?}:\n{e}"))
        })?;
        let filter = pairs.next().expect("the grammar's filter rule matched");
        let or = filter
            .into_inner()
            .next()
            .expect("a filter holds an expression");
        let mut root = compile(or, text, ships)?;
        add_fast_forms(&mut root);
        let mut field_names = Vec::new();
        fn walk(n: &Node, out: &mut Vec<(usize, String)>) {
            match n {
                Node::Or(v) | Node::And(v) => v.iter().for_each(|n| walk(n, out)),
                Node::Not(n) => walk(n, out),
                Node::Test(t) => {
                    if let Lhs::Path { at, first, .. } = &t.lhs {
                        out.push((*at, first.clone()));
                    }
                }
            }
        }
        walk(&root, &mut field_names);
        Ok(DisplayFilter {
            root,
            text: text.to_string(),
            field_names,
        })
    }

    /// The first name of every field path in the expression, with the byte where the
    /// path starts (for a "no such field" note pointing at it).
    pub fn field_names(&self) -> &[(usize, String)] {
        &self.field_names
    }

    /// The expression as given.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The field trees the expression reads: none, the top-level fields its paths
    /// start from, resolved against the registry once (the decoders then build only
    /// those, [`FieldTrees::Only`]), or whole trees where a path starts from any name.
    /// A fact that reads the trees adds what it reads ([`facts::trees`]).
    pub fn field_trees(&self) -> FieldTrees {
        let (refs, facts) = self.names_read();
        let paths = if refs.is_empty() {
            FieldTrees::None
        } else {
            top_entries(refs).map_or(FieldTrees::All, FieldTrees::Only)
        };
        facts
            .into_iter()
            .fold(paths, |t, f| t.union(facts::trees(f)))
    }

    /// Every decoded-field name and every fact the expression reads, on either side
    /// of a test.
    fn names_read(&self) -> (Vec<&FieldRef>, Vec<Fact>) {
        type Read<'a> = (Vec<&'a FieldRef>, Vec<Fact>);
        fn lhs<'a>(l: &'a Lhs, out: &mut Read<'a>) {
            match l {
                Lhs::Path { field, .. } => out.0.push(field),
                Lhs::Fact(f) | Lhs::FactSlice { fact: f, .. } => out.1.push(*f),
            }
        }
        fn walk<'a>(n: &'a Node, out: &mut Read<'a>) {
            match n {
                Node::Or(v) | Node::And(v) => v.iter().for_each(|n| walk(n, out)),
                Node::Not(n) => walk(n, out),
                Node::Test(t) => {
                    lhs(&t.lhs, out);
                    // The right side is read when it is another field (`a > b`).
                    if let Some((_, Operand::Field(o))) = &t.cmp {
                        lhs(o, out);
                    }
                }
            }
        }
        let mut out = (Vec::new(), Vec::new());
        walk(&self.root, &mut out);
        out
    }

    /// Whether the expression names clients (`client == Worf`): a capture file is then
    /// read once first, so that a client's frames from before it sent its name match
    /// too, as with `--client`.
    pub fn mentions_client(&self) -> bool {
        fn walk(n: &Node) -> bool {
            match n {
                Node::Or(v) | Node::And(v) => v.iter().any(walk),
                Node::Not(n) => walk(n),
                Node::Test(t) => matches!(t.lhs, Lhs::Fact(Fact::Client)),
            }
        }
        walk(&self.root)
    }

    /// The player names the expression tests `client` or `client_name` against (text
    /// compared for equality or membership), to check them against a capture's clients.
    pub fn client_words(&self) -> Vec<String> {
        fn walk(n: &Node, out: &mut Vec<String>) {
            match n {
                Node::Or(v) | Node::And(v) => v.iter().for_each(|n| walk(n, out)),
                Node::Not(n) => walk(n, out),
                Node::Test(t) => {
                    if !matches!(t.lhs, Lhs::Fact(Fact::Client | Fact::ClientName)) {
                        return;
                    }
                    let words: Vec<&Operand> = match &t.cmp {
                        Some((Op::Eq | Op::Ne | Op::AnyNe, o)) => vec![o],
                        Some((Op::In, Operand::Set(m))) => m.iter().collect(),
                        _ => Vec::new(),
                    };
                    for w in words {
                        if let Operand::Text(t) = w {
                            if parse_number(t).is_none() {
                                out.push(t.clone());
                            }
                        }
                    }
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.root, &mut out);
        out
    }

    /// Whether message `m` of packet `p` matches. A GameSpy datagram is one message
    /// with no transport facts. `client_names` are the names the whole capture gave
    /// its clients, when it was read once already; `first_ts_ns` is the capture time
    /// of the file's first frame (for `time_relative`).
    pub fn matches(
        &self,
        p: &PacketRecord,
        m: Option<&MessageRecord>,
        names: &dyn Names,
        client_names: Option<&ClientNames>,
        first_ts_ns: i64,
    ) -> bool {
        eval(
            &self.root,
            &RecordCx {
                packet: p,
                message: m,
                names,
                client_names,
                first_ts_ns,
            },
        )
    }
}

fn compile(
    pair: Pair<'_, Rule>,
    text: &str,
    ships: &ShipCatalog,
) -> Result<Node, DisplayFilterError> {
    match pair.as_rule() {
        Rule::or_expr | Rule::and_expr => {
            let or = pair.as_rule() == Rule::or_expr;
            let mut parts = pair
                .into_inner()
                .filter(|p| !matches!(p.as_rule(), Rule::and_op | Rule::or_op))
                .map(|p| compile(p, text, ships))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(if parts.len() == 1 {
                parts.pop().expect("one part")
            } else if or {
                Node::Or(parts)
            } else {
                Node::And(parts)
            })
        }
        Rule::unary => {
            let mut nots = 0;
            let mut inner = None;
            for p in pair.into_inner() {
                if p.as_rule() == Rule::not_op {
                    nots += 1;
                } else {
                    inner = Some(compile(p, text, ships)?);
                }
            }
            let mut node = inner.expect("a unary expression ends in a primary");
            for _ in 0..nots {
                node = Node::Not(Box::new(node));
            }
            Ok(node)
        }
        Rule::test => compile_test(pair, text, ships).map(Node::Test),
        _ => unreachable!("the grammar gives no other expression rule"),
    }
}

/// A name on either side of a test: a record fact (or its tshark alias), else a
/// decoded field path, which must name a registered field.
fn name_lhs(name: &str, text: &str, span: pest::Span<'_>) -> Result<Lhs, DisplayFilterError> {
    if let Some(f) = facts::lookup(name) {
        return Ok(Lhs::Fact(f.fact));
    }
    if let Some((base, start, len)) = crate::game::path::split_slice(name) {
        if let Some(f) = facts::lookup(base) {
            return Ok(Lhs::FactSlice {
                fact: f.fact,
                start,
                len,
            });
        }
    }
    let field = FieldRef::parse(name).map_err(|e| located(text, span, e.to_string()))?;
    let bare = name.strip_prefix("fields.").unwrap_or(name);
    Ok(Lhs::Path {
        field,
        at: span.start(),
        first: bare.split(['.', '[']).next().unwrap_or(bare).to_string(),
    })
}

fn compile_test(
    pair: Pair<'_, Rule>,
    text: &str,
    ships: &ShipCatalog,
) -> Result<Test, DisplayFilterError> {
    let mut inner = pair.into_inner().peekable();
    let quantifier = match inner.peek() {
        Some(q) if q.as_rule() == Rule::quantifier => {
            let q = inner.next().expect("peeked");
            Some(if q.as_str().eq_ignore_ascii_case("all") {
                Quantifier::All
            } else {
                Quantifier::Any
            })
        }
        _ => None,
    };
    let path = inner.next().expect("a test starts with a path");
    let name = path.as_str();
    let lhs = name_lhs(name, text, path.as_span())?;
    let Some(op) = inner.next() else {
        return Ok(Test {
            lhs,
            cmp: None,
            quantifier,
            fast: None,
        });
    };
    match op.as_rule() {
        Rule::in_op => {
            let set = inner.next().expect("`in` is followed by a set");
            let mut members = Vec::new();
            for item in set.into_inner() {
                members.push(match item.as_rule() {
                    Rule::range => {
                        let mut ends = item.clone().into_inner();
                        let lo = ends.next().map(|e| parse_number(e.as_str()));
                        let hi = ends.next().map(|e| parse_number(e.as_str()));
                        match (lo.flatten(), hi.flatten()) {
                            (Some(lo), Some(hi)) => Operand::Range(lo, hi),
                            _ => {
                                return Err(located(
                                    text,
                                    item.as_span(),
                                    "a range is two numbers: {10..20}".to_string(),
                                ))
                            }
                        }
                    }
                    _ => operand(&lhs, item, text, ships)?,
                });
            }
            return Ok(Test {
                lhs,
                cmp: Some((Op::In, Operand::Set(members))),
                quantifier,
                fast: None,
            });
        }
        Rule::matches_op => {
            let rhs = inner.next().expect("`matches` is followed by a string");
            let chars = rhs.clone().into_inner().next().map_or("", |c| c.as_str());
            let pattern = unescape(chars);
            // Case-insensitive as in Wireshark 4; `(?-i)` in the pattern turns it off.
            let re = regex::RegexBuilder::new(&pattern)
                .case_insensitive(true)
                .size_limit(1 << 20)
                .build()
                .map_err(|e| {
                    located(
                        text,
                        rhs.as_span(),
                        format!("not a regular expression: {e}"),
                    )
                })?;
            return Ok(Test {
                lhs,
                cmp: Some((Op::Matches, Operand::Regex(re))),
                quantifier,
                fast: None,
            });
        }
        _ => {}
    }
    let op_kind = match op.as_str().to_ascii_lowercase().as_str() {
        "==" | "eq" => Op::Eq,
        "!=" | "ne" => Op::Ne,
        "~=" | "any_ne" => Op::AnyNe,
        "<" => Op::Lt,
        "<=" => Op::Le,
        ">" => Op::Gt,
        ">=" => Op::Ge,
        "&" => Op::BitAnd,
        _ => Op::Contains,
    };
    let rhs = inner.next().expect("a comparison has a right side");
    let operand = operand(&lhs, rhs, text, ships)?;
    if op_kind == Op::BitAnd && !matches!(operand, Operand::Num(_) | Operand::Field(_)) {
        return Err(located(
            text,
            op.as_span(),
            "a bit test takes a number on its right (flags & 0x20)".to_string(),
        ));
    }
    Ok(Test {
        lhs,
        cmp: Some((op_kind, operand)),
        quantifier,
        fast: None,
    })
}

/// The right side of a test, or a member of a set: a number, a string, or a name.
fn operand(
    lhs: &Lhs,
    rhs: Pair<'_, Rule>,
    text: &str,
    ships: &ShipCatalog,
) -> Result<Operand, DisplayFilterError> {
    Ok(match rhs.as_rule() {
        Rule::number => Operand::Num(
            parse_number(rhs.as_str())
                .ok_or_else(|| located(text, rhs.as_span(), "not a number".to_string()))?,
        ),
        Rule::string => {
            let chars = rhs.clone().into_inner().next().map_or("", |c| c.as_str());
            let text_value = unescape(chars);
            match lhs {
                // A quoted class is checked and keyed like a bare one.
                Lhs::Fact(Fact::Ship) => Operand::Text(
                    parse_ship(&text_value, ships)
                        .map_err(|e| located(text, rhs.as_span(), format!("{e:#}")))?,
                ),
                _ => Operand::Text(text_value),
            }
        }
        _ => name_operand(lhs, &rhs, text, ships)?,
    })
}

/// A bare word on the right of a test: an opcode name for `opcode`, a ship class for
/// `ship` (checked, with "did you mean"), a player for `client`; otherwise another field
/// when a field has that name (`udp_length > length`), else the word as text (`c2s`,
/// `true`).
fn name_operand(
    lhs: &Lhs,
    rhs: &Pair<'_, Rule>,
    text: &str,
    ships: &ShipCatalog,
) -> Result<Operand, DisplayFilterError> {
    let word = rhs.as_str();
    match lhs {
        Lhs::Fact(Fact::Opcode) => parse_opcode(word)
            .map(|op| Operand::Num(op as f64))
            .map_err(|e| located(text, rhs.as_span(), format!("{e:#}"))),
        Lhs::Fact(Fact::Ship) => parse_ship(word, ships)
            .map(Operand::Text)
            .map_err(|e| located(text, rhs.as_span(), format!("{e:#}"))),
        // These compare with words of their own: players, directions, kinds, opcode
        // names, warning codes.
        Lhs::Fact(
            Fact::Client
            | Fact::ClientName
            | Fact::Direction
            | Fact::Kind
            | Fact::Name
            | Fact::WarningCode
            | Fact::WarningKind,
        ) => Ok(Operand::Text(word.to_string())),
        _ if facts::lookup(word).is_some()
            || (word.contains(['.', '_']) && super::field_names::is_known_field(word)) =>
        {
            name_lhs(word, text, rhs.as_span()).map(|l| Operand::Field(Box::new(l)))
        }
        _ => Ok(Operand::Text(word.to_string())),
    }
}

fn eval(n: &Node, cx: &RecordCx<'_>) -> bool {
    match n {
        Node::Or(v) => v.iter().any(|n| eval(n, cx)),
        Node::And(v) => v.iter().all(|n| eval(n, cx)),
        Node::Not(n) => !eval(n, cx),
        Node::Test(t) => test(t, cx),
    }
}

fn test(t: &Test, cx: &RecordCx<'_>) -> bool {
    if let Some(fast) = &t.fast {
        return fast.eval(cx);
    }
    let mut vals = Vals::new();
    if matches!(t.lhs, Lhs::Fact(Fact::Client)) && !names_a_player(t) {
        // A number names the client by its index: its player's name is not looked up.
        vals.push(Val::Num(cx.packet.client as f64));
    } else {
        values(&t.lhs, cx, &mut vals);
    }
    let Some((op, rhs)) = &t.cmp else {
        // A yes/no fact alone asks whether it is true; any other name, whether it is
        // there.
        return match t.lhs {
            Lhs::Fact(f) if facts::info(f).ty == FactType::Bool => vals.contains(&Val::Bool(true)),
            _ => !vals.is_empty(),
        };
    };
    // The right side's values: one literal, or every value of another field.
    let rhs_vals: Vec<Operand>;
    let rhs_list: &[Operand] = match rhs {
        Operand::Field(other) => {
            let mut vs = Vals::new();
            values(other, cx, &mut vs);
            rhs_vals = vs
                .into_iter()
                .filter_map(|v| match v {
                    Val::Num(n) => Some(Operand::Num(n)),
                    Val::Bool(b) => Some(Operand::Num(f64::from(u8::from(b)))),
                    Val::Text(t) => Some(Operand::Text(t.into_owned())),
                    Val::Group => None,
                })
                .collect();
            &rhs_vals
        }
        _ => std::slice::from_ref(rhs),
    };
    // Whether one value passes the test.
    let pass = |v: &Val<'_>| -> bool {
        match op {
            Op::Ne => !rhs_list.is_empty() && rhs_list.iter().all(|r| !equal(&t.lhs, v, r)),
            Op::AnyNe => rhs_list.iter().any(|r| !equal(&t.lhs, v, r)),
            Op::In => {
                let Operand::Set(members) = rhs else {
                    return false;
                };
                members.iter().any(|m| match m {
                    Operand::Range(lo, hi) => num_of(v).is_some_and(|x| *lo <= x && x <= *hi),
                    m => equal(&t.lhs, v, m),
                })
            }
            Op::Matches => match (rhs, v) {
                (Operand::Regex(re), Val::Text(t)) => re.is_match(t),
                _ => false,
            },
            op => rhs_list.iter().any(|r| compare(&t.lhs, *op, v, r)),
        }
    };
    // Absent, a field is equal to nothing and unequal to nothing (Wireshark 4): `all`
    // asks for at least one value.
    let quantifier = t.quantifier.unwrap_or(match op {
        Op::Ne => Quantifier::All,
        _ => Quantifier::Any,
    });
    match quantifier {
        Quantifier::All => !vals.is_empty() && vals.iter().all(pass),
        Quantifier::Any => vals.iter().any(pass),
    }
}

/// Whether a test of `client` compares with words (a player's name) rather than only
/// with numbers (the client's index in its session).
fn names_a_player(t: &Test) -> bool {
    match &t.cmp {
        Some((_, Operand::Num(_))) => false,
        Some((_, Operand::Set(members))) => members
            .iter()
            .any(|m| !matches!(m, Operand::Num(_) | Operand::Range(..))),
        _ => true,
    }
}

fn equal(lhs: &Lhs, v: &Val<'_>, rhs: &Operand) -> bool {
    match (v, rhs) {
        (Val::Num(a), Operand::Num(b)) => a == b,
        (Val::Bool(a), Operand::Num(b)) => (*a as u8 as f64) == *b,
        (Val::Bool(a), Operand::Text(b)) => {
            b.eq_ignore_ascii_case(if *a { "true" } else { "false" })
        }
        (Val::Text(a), Operand::Text(b)) => match lhs {
            // Players and ship classes are named as people type them.
            Lhs::Fact(Fact::Client | Fact::ClientName) => a.eq_ignore_ascii_case(b),
            Lhs::Fact(Fact::Ship) => ship_key(a) == *b,
            _ => a == b,
        },
        (Val::Text(a), Operand::Num(b)) => parse_number(a).is_some_and(|a| a == *b),
        (Val::Num(a), Operand::Text(b)) => parse_number(b).is_some_and(|b| *a == b),
        _ => false,
    }
}

/// A value as a number, where it reads as one.
fn num_of(v: &Val<'_>) -> Option<f64> {
    match v {
        Val::Num(n) => Some(*n),
        Val::Bool(b) => Some(f64::from(u8::from(*b))),
        Val::Text(t) => parse_number(t),
        Val::Group => None,
    }
}

fn compare(lhs: &Lhs, op: Op, v: &Val<'_>, rhs: &Operand) -> bool {
    let num = |v: &Val<'_>| match v {
        Val::Num(n) => Some(*n),
        Val::Bool(b) => Some(*b as u8 as f64),
        Val::Text(t) => parse_number(t),
        Val::Group => None,
    };
    let rhs_num = match rhs {
        Operand::Num(n) => Some(*n),
        Operand::Text(t) => parse_number(t),
        _ => None,
    };
    match op {
        Op::Eq => equal(lhs, v, rhs),
        Op::Ne | Op::AnyNe => !equal(lhs, v, rhs),
        Op::In | Op::Matches => false,
        Op::Lt | Op::Le | Op::Gt | Op::Ge => match (num(v), rhs_num) {
            (Some(a), Some(b)) => match op {
                Op::Lt => a < b,
                Op::Le => a <= b,
                Op::Gt => a > b,
                _ => a >= b,
            },
            _ => false,
        },
        Op::BitAnd => match (num(v), rhs_num) {
            (Some(a), Some(b)) if a >= 0.0 && b >= 0.0 => (a as u64) & (b as u64) != 0,
            _ => false,
        },
        Op::Contains => match (v, rhs) {
            (Val::Text(a), Operand::Text(b)) => a.contains(b.as_str()),
            _ => equal(lhs, v, rhs),
        },
    }
}

fn values<'a>(lhs: &Lhs, cx: &RecordCx<'a>, out: &mut Vals<'a>) {
    match lhs {
        Lhs::FactSlice { fact, start, len } => {
            let mut whole = Vals::new();
            values(&Lhs::Fact(*fact), cx, &mut whole);
            out.extend(whole.into_iter().filter_map(|v| {
                match v {
                    Val::Text(t) => crate::game::path::slice_chars(&t, *start, *len)
                        .map(|s| Val::Text(Cow::Owned(s))),
                    _ => None,
                }
            }));
        }
        Lhs::Fact(f) => {
            let mut found = facts::FactValues::new();
            facts::values(*f, cx, &mut found);
            out.extend(found.into_iter().map(|v| match v {
                FactValue::Uint(n) | FactValue::Hex(n) => Val::Num(n as f64),
                FactValue::Float(x) => Val::Num(x),
                FactValue::Bool(b) => Val::Bool(b),
                FactValue::Text(t) => Val::Text(t),
            }));
            // A client is also matched by its player's name, as Wireshark matches an
            // address by its host name.
            if *f == Fact::Client {
                out.extend(cx.client_name().map(Val::Text));
            }
        }
        Lhs::Path { field, .. } => {
            let Some(m) = cx.message else { return };
            for v in field.resolve(m) {
                if field.hex {
                    out.extend(crate::game::field::hex_twin_text(&v).map(|t| Val::Text(t.into())));
                } else {
                    flatten(v.as_ref(), out);
                }
            }
        }
    }
}

fn flatten<'a>(v: &Value, out: &mut Vals<'a>) {
    match v {
        Value::Bool(b) => out.push(Val::Bool(*b)),
        Value::Uint(n) | Value::Hex(n) => out.push(Val::Num(*n as f64)),
        Value::Int(n) => out.push(Val::Num(*n as f64)),
        Value::Float(f) => out.push(Val::Num(*f)),
        Value::ObjectId(id) => out.push(Val::Num(f64::from(*id))),
        Value::Text(t) => out.push(Val::Text(Cow::Owned(t.clone()))),
        Value::Vec3(v) => out.extend(v.iter().map(|x| Val::Num(f64::from(*x)))),
        Value::Bytes(b) => out.push(Val::Text(Cow::Owned(crate::game::field::hex_string(b)))),
        Value::List(items) => items.iter().for_each(|i| flatten(i, out)),
        Value::Group(_) => out.push(Val::Group),
    }
}
