//! JSON forms of pipeline records (the contract in `docs/json.md`).

use crate::diag::Warning;
use crate::game::field::{fields_to_json, hex_string};
use crate::game::GameMessage;
use crate::pipeline::record::{MessageRecord, PacketBody, PacketRecord, TransportInfo};
use serde_json::{json, Map, Value as Json};

/// Version of the JSON contract; bumped only when a name or shape changes incompatibly.
pub const SCHEMA_VERSION: u32 = 1;

pub fn time_seconds(ts_ns: i64) -> f64 {
    ts_ns as f64 / 1e9
}

pub fn warnings_json(w: &[Warning]) -> Json {
    Json::Array(w.iter().map(Warning::to_json).collect())
}

/// `opcode`, `opcode_hex`, `name`, `length`, `fields`, `warnings` of a game message.
pub fn game_json(g: &GameMessage) -> Map<String, Json> {
    let mut m = Map::new();
    m.insert("opcode".into(), json!(g.opcode));
    m.insert("opcode_hex".into(), json!(format!("0x{:02X}", g.opcode)));
    m.insert("name".into(), json!(g.name));
    m.insert("length".into(), json!(g.length));
    m.insert("fields".into(), fields_to_json(&g.fields));
    m.insert("warnings".into(), warnings_json(&g.warnings));
    m
}

pub fn message_json(msg: &MessageRecord, names: &dyn Fn(u32) -> Option<String>) -> Json {
    let mut m = Map::new();
    m.insert("offset".into(), json!(msg.offset));
    m.insert("length".into(), json!(msg.length));
    m.insert("transport_type".into(), json!(msg.transport_type));
    m.insert("reliable".into(), json!(msg.reliable()));
    m.insert("seq".into(), json!(msg.seq()));
    m.insert(
        "fragment".into(),
        match msg.fragment() {
            Some(f) => json!({ "index": f.index, "total": f.total }),
            None => Json::Null,
        },
    );
    m.insert("retransmission".into(), json!(msg.retransmission));
    if msg.keepalive {
        m.insert("keepalive".into(), json!(true));
    }
    if let Some(f) = msg.original_frame {
        m.insert("original_frame".into(), json!(f));
    }
    match &msg.transport {
        TransportInfo::Data {
            flags_len, ordered, ..
        } => {
            m.insert("transport_name".into(), json!("data"));
            m.insert("flags_len".into(), json!(flags_len));
            m.insert("ordered".into(), json!(ordered));
        }
        TransportInfo::Ack {
            flags,
            fragment_index,
            acked_frame,
            delay_ns,
            duplicate,
            ..
        } => {
            m.insert("transport_name".into(), json!("ack"));
            m.insert(
                "ack".into(),
                json!({
                    "flags": flags,
                    "fragment_index": fragment_index,
                    "acked_frame": acked_frame,
                    "delay": delay_ns.map(|d| d as f64 / 1e9),
                    "duplicate": duplicate,
                }),
            );
        }
        TransportInfo::Low { name, fields, .. } => {
            m.insert("transport_name".into(), json!(name));
            m.insert("fields".into(), fields_to_json(fields));
        }
        TransportInfo::Unknown => {
            m.insert("transport_name".into(), json!("unknown"));
        }
    }
    if let Some(g) = &msg.game {
        for (k, v) in game_json(g) {
            match k.as_str() {
                "warnings" => {}
                // `length` is the transport message's; the game message's has its own name.
                "length" => {
                    m.insert("game_length".into(), v);
                }
                _ => {
                    m.insert(k, v);
                }
            }
        }
        if let Some(obj) = object_of(g) {
            if let Some(n) = names(obj) {
                m.insert("object".into(), json!(n));
            }
        }
    }
    if let Some(a) = &msg.assembled {
        let mut am = game_json(&a.game);
        am.insert("frames".into(), json!(a.frames));
        m.insert("assembled".into(), Json::Object(am));
    }
    if let Some(r) = msg.relay_of {
        m.insert("relay_of".into(), json!(r));
    }
    let mut warnings: Vec<Json> = msg.warnings.iter().map(Warning::to_json).collect();
    if let Some(g) = &msg.game {
        warnings.extend(g.warnings.iter().map(Warning::to_json));
    }
    m.insert("warnings".into(), Json::Array(warnings));
    Json::Object(m)
}

/// The object a game message is about, for names ("Galaxy (Bot1, slot 1)").
pub fn object_of(g: &GameMessage) -> Option<u32> {
    g.object_id()
}

/// A `"type":"packet"` record.
pub fn packet_json(
    p: &PacketRecord,
    with_hex: bool,
    client_name: Option<&str>,
    names: &dyn Fn(u32) -> Option<String>,
) -> Json {
    let mut m = Map::new();
    m.insert("type".into(), json!("packet"));
    m.insert("frame".into(), json!(p.frame));
    m.insert("time".into(), json!(time_seconds(p.ts_ns)));
    m.insert("src".into(), json!(p.src.to_string()));
    m.insert("dst".into(), json!(p.dst.to_string()));
    m.insert("direction".into(), json!(p.direction.as_str()));
    m.insert("session".into(), json!(p.session));
    m.insert("client".into(), json!(p.client));
    if let Some(n) = client_name {
        m.insert("client_name".into(), json!(n));
    }
    if let Some(c) = &p.comment {
        m.insert("comment".into(), json!(c));
    }
    m.insert("udp_length".into(), json!(p.udp_len));
    match &p.body {
        PacketBody::GameSpy { text } => {
            m.insert("kind".into(), json!("gamespy"));
            m.insert("text".into(), json!(text));
        }
        PacketBody::Game(g) => {
            m.insert("kind".into(), json!("game"));
            m.insert("peer_id".into(), json!(g.peer_id));
            m.insert("msg_count".into(), json!(g.msg_count));
            if with_hex {
                m.insert("plain_hex".into(), json!(hex_string(&g.plain)));
            }
            m.insert(
                "messages".into(),
                Json::Array(g.messages.iter().map(|x| message_json(x, names)).collect()),
            );
            m.insert("warnings".into(), warnings_json(&g.warnings));
        }
    }
    Json::Object(m)
}
