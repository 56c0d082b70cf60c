//! Presentation: tables, JSON, JSON Lines, hex views. Decoders never print.

pub mod align;
pub mod decode;
pub mod diff;
pub mod diff_model;
pub mod fingerprint;
pub mod fold_hash;
pub mod held;
pub mod hexdump;
pub mod html;
pub mod info;
pub mod json;
pub mod json_float;
pub mod json_prims;
mod json_state_update;
pub mod json_stream;
pub mod names;
#[cfg(feature = "parquet")]
pub mod parquet;
pub mod schema;
pub mod select;
pub mod show;
pub mod stats;
pub mod table;
pub mod term;
#[cfg(test)]
mod test_rng;
pub mod text;
pub mod timefmt;
pub mod twin_counts;
