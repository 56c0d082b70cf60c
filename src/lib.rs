//! bcwire: a dissector for the Star Trek: Bridge Commander multiplayer protocol.
//!
//! Data flows one way: `capture` → `net` → `flow` → `transport` → `game` → `report`.
//! Each stage is a value or small state machine fed one item at a time; no stage prints.
#![forbid(unsafe_code)]

pub mod diag;
pub mod game;
pub mod sm;
