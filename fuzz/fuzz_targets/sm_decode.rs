//! Feed arbitrary bytes to the Scrap Mechanic decoder at every layer, statefully, and
//! render the result: nothing may panic, whatever the input.
#![no_main]

use bcwire::sm::render::{located_warnings, packet_json, write_text, Origin};
use bcwire::sm::{Decoder, Layer, Options};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for layer in [Layer::Wire, Layer::Packet, Layer::Payload] {
        let mut decoder = Decoder::new(Options {
            layer,
            max_output: 1 << 16,
            stateful: true,
        });
        // Decode twice so the controller table learned from the first pass is used.
        for _ in 0..2 {
            let report = decoder.decode(data);
            let origin = Origin { index: 0, line: None };
            let mut sink = Vec::new();
            let _ = write_text(&mut sink, &report, origin);
            let _ = packet_json(&report, origin);
            let _ = located_warnings(&report, origin);
        }
    }
});
