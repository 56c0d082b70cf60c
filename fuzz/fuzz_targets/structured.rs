//! Fuzz target `structured`: see `bcwire_fuzz::structured` in fuzz/src/lib.rs.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| bcwire_fuzz::structured(data));
