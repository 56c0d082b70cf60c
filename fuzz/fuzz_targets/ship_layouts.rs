//! Fuzz target `ship_layouts`: see `bcwire_fuzz::ship_layouts` in fuzz/src/lib.rs.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| bcwire_fuzz::ship_layouts(data));
