//! Presentation: tables, JSON, JSON Lines, hex views. Decoders never print.

pub mod term;
