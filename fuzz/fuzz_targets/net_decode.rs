//! Fuzz target `net_decode`: see `bcwire_fuzz::net_decode` in fuzz/src/lib.rs.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| bcwire_fuzz::net_decode(data));
