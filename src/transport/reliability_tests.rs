//! Tests of `reliability.rs`: sequence tracking against hand-worked sequences.

use super::*;

const S: i64 = 1_000_000_000;

fn data(seq: u16) -> SeqKey {
    SeqKey {
        counter: Counter::Data,
        seq,
        fragment: None,
    }
}

#[test]
fn resend_ack_duplicate_stale_unknown() {
    let mut t = Tracker::new();
    let k = ("s", 1);
    assert_eq!(
        t.on_message(&k, data(5), b"abc", 0, 1),
        Delivery::New {
            reuse: None,
            order: SeqOrder::InOrder
        }
    );
    match t.on_message(&k, data(5), b"abc", S, 2) {
        Delivery::Retransmission {
            copy,
            first,
            since_first_ns,
            after_ack,
            ..
        } => assert_eq!(
            (copy, first.frame, since_first_ns, after_ack),
            (2, 1, S, false)
        ),
        d => panic!("{d:?}"),
    }
    match t.on_ack(&k, data(5), S + S / 5, 3) {
        AckOutcome::Matched {
            message,
            delay_ns,
            since_first_ns,
            copies,
        } => assert_eq!(
            (message.frame, delay_ns, since_first_ns, copies),
            (1, S / 5, S + S / 5, 2)
        ),
        o => panic!("{o:?}"),
    }
    assert!(matches!(
        t.on_ack(&k, data(5), 2 * S, 4),
        AckOutcome::Duplicate {
            first_ack: Seen { frame: 3, .. },
            ..
        }
    ));
    assert!(matches!(
        t.on_ack(&k, data(5), 40 * S, 5),
        AckOutcome::Stale { .. }
    ));
    assert_eq!(t.on_ack(&k, data(6), 40 * S, 6), AckOutcome::Unknown);
    assert_eq!(t.on_ack(&("x", 9), data(5), 40 * S, 6), AckOutcome::Unknown);
    // A quick copy after the ACK is still a resend (the sender missed the ACK).
    assert!(matches!(
        t.on_message(&k, data(5), b"abc", 3 * S, 7),
        Delivery::Retransmission {
            after_ack: true,
            copy: 3,
            ..
        }
    ));
    assert!(t.finish().unacked.is_empty());
}

#[test]
fn counters_streams_and_fragments_are_independent() {
    let mut t = Tracker::new();
    let low = SeqKey {
        counter: Counter::Low,
        seq: 0,
        fragment: None,
    };
    assert!(t.on_message(&1, low, b"x", 0, 1).is_new());
    assert!(t.on_message(&1, data(0), b"x", 0, 2).is_new());
    assert!(t.on_message(&2, data(0), b"x", 0, 3).is_new());
    for i in 0..3 {
        let f = SeqKey {
            fragment: Some(i),
            ..data(7)
        };
        assert!(t.on_message(&1, f, &[i], 0, 4).is_new());
    }
    let f1 = SeqKey {
        fragment: Some(1),
        ..data(7)
    };
    assert!(!t.on_message(&1, f1, &[1], S, 5).is_new());
    assert!(matches!(t.on_ack(&1, f1, S, 6), AckOutcome::Matched { .. }));
    assert!(matches!(
        t.on_ack(&1, low, S, 6),
        AckOutcome::Matched { .. }
    ));
    let r = t.finish();
    // data 0 on stream 1 and 2, fragments 0 and 2 of seq 7.
    assert_eq!(r.unacked.len(), 4);
    assert_eq!(r.unacked[0].first.frame, 2);
}

#[test]
fn wrapped_sequence_numbers_are_new_messages() {
    let mut t = Tracker::new();
    let mut frame = 0;
    let mut time = 0;
    let mut send = |t: &mut Tracker<u8>, seq: u16, body: &[u8], dt: i64| {
        frame += 1;
        time += dt;
        t.on_message(&0, data(seq), body, time, frame)
    };
    assert!(send(&mut t, 0, b"stop firing", 0).is_new());
    // Different content on the same seq right away: new.
    assert_eq!(
        send(&mut t, 0, b"fire", S / 10),
        Delivery::New {
            reuse: Some(SeqReuse::DifferentContent),
            order: SeqOrder::InOrder
        }
    );
    // The 8-bit counter runs round quickly (busy stream: 20 ms per message) …
    for seq in 1..=255u16 {
        assert!(send(&mut t, seq, &seq.to_le_bytes(), S / 50).is_new());
    }
    // … and seq 0 comes back with the same bytes as before, 5 s later: new, by wrap.
    assert!(matches!(
        send(&mut t, 0, b"fire", 0),
        Delivery::New {
            reuse: Some(SeqReuse::AfterWrap { wraps: 1 }),
            order: SeqOrder::Wrap { from: 255 }
        }
    ));
    // A resend of that new message is a resend.
    assert!(!send(&mut t, 0, b"fire", S).is_new());
    // Same bytes on a quiet counter a minute later: new, by horizon.
    assert!(matches!(
        send(&mut t, 0, b"fire", 60 * S),
        Delivery::New {
            reuse: Some(SeqReuse::AfterHorizon { .. }),
            ..
        }
    ));
    // A resend chain longer than the horizon stays a resend chain (2 s apart).
    for _ in 0..20 {
        assert!(!send(&mut t, 0, b"fire", 2 * S).is_new());
    }
    // u16 sequence numbers above 255 are their own values.
    assert!(send(&mut t, 0x0100, b"fire", 0).is_new());
    let r = t.finish();
    // All superseded and current messages were never acked.
    assert_eq!(r.unacked.len(), 256 + 3 + 1);
}

#[test]
fn a_resend_long_after_newer_messages_is_still_a_resend() {
    // A host whose client stopped ACKing: seq 3 stays unacknowledged and is resent
    // every 3 s while the counter goes on 0 … 250 (one new message every 50 ms).
    let mut t = Tracker::new();
    let mut time = 0;
    let mut resends = 0;
    for seq in 0..=250u16 {
        time += S / 20;
        let d = t.on_message(&0u8, data(seq), &seq.to_le_bytes(), time, u64::from(seq));
        assert!(d.is_new(), "seq {seq}: {d:?}");
        if seq > 3 && seq % 60 == 0 {
            let d = t.on_message(&0u8, data(3), &3u16.to_le_bytes(), time, 0);
            assert!(
                matches!(d, Delivery::Retransmission { since_last_ns, .. }
                    if since_last_ns <= 3 * S),
                "resend at position {seq}: {d:?}"
            );
            resends += 1;
        }
    }
    assert_eq!(resends, 4);
    // Only after the counter passed 255 and came round to 3 is seq 3 reused.
    for seq in 251..=255u16 {
        time += S / 20;
        assert!(t.on_message(&0u8, data(seq), b"x", time, 0).is_new());
    }
    assert!(matches!(
        t.on_message(&0u8, data(0), b"y", time, 0),
        Delivery::New {
            order: SeqOrder::Wrap { from: 255 },
            ..
        }
    ));
    // Before the new cycle reaches 3, a copy of the old 3 is still a resend …
    assert!(!t
        .on_message(&0u8, data(3), &3u16.to_le_bytes(), time, 0)
        .is_new());
    assert!(t.on_message(&0u8, data(1), b"y", time, 0).is_new());
    assert!(t.on_message(&0u8, data(2), b"y", time, 0).is_new());
    // … once it has, 3 with the old bytes is a new message.
    assert!(matches!(
        t.on_message(&0u8, data(3), &3u16.to_le_bytes(), time, 0),
        Delivery::New {
            reuse: Some(SeqReuse::AfterWrap { wraps: 1 }),
            order: SeqOrder::InOrder
        }
    ));
}

#[test]
fn a_resend_near_the_top_is_not_taken_for_a_wrap() {
    let mut t = Tracker::new();
    for seq in 0..=200u16 {
        assert!(t.on_message(&0u8, data(seq), &[seq as u8], 0, 0).is_new());
    }
    // At 200 the counter is far from its top: seq 0 with its old bytes is a resend.
    assert!(!t.on_message(&0u8, data(0), &[0], S, 0).is_new());
    // A different message numbered 2 far below the position is a wrap.
    assert!(matches!(
        t.on_message(&0u8, data(2), b"new", S, 0),
        Delivery::New {
            reuse: Some(SeqReuse::DifferentContent),
            order: SeqOrder::Wrap { from: 200 }
        }
    ));
}

#[test]
fn gaps_and_late_arrivals_are_told() {
    let mut t = Tracker::new();
    let mut order = |seq: u16, frag: Option<u8>| match t.on_message(
        &0u8,
        SeqKey {
            fragment: frag,
            ..data(seq)
        },
        &[seq as u8, frag.unwrap_or(9)],
        0,
        0,
    ) {
        Delivery::New { order, .. } => order,
        d => panic!("{d:?}"),
    };
    assert_eq!(order(10, None), SeqOrder::InOrder);
    assert_eq!(order(11, None), SeqOrder::InOrder);
    assert_eq!(
        order(14, None),
        SeqOrder::Gap {
            after: 11,
            missing: 2
        }
    );
    assert_eq!(order(12, None), SeqOrder::Late { position: 14 });
    // A late one does not move the position back.
    assert_eq!(order(15, Some(0)), SeqOrder::InOrder);
    assert_eq!(order(15, Some(1)), SeqOrder::InOrder);
    assert_eq!(order(16, None), SeqOrder::InOrder);
}

// A gap of exactly one number: 10 then 12 skips 11 alone. Catches: the in-order
// test accepting `top + 2` (a one-number gap passed off as in order).
#[test]
fn a_gap_of_exactly_one_number_is_one_missing() {
    let mut t = Tracker::new();
    let mut order = |seq: u16| match t.on_message(&0u8, data(seq), &[seq as u8], 0, 0) {
        Delivery::New { order, .. } => order,
        d => panic!("{d:?}"),
    };
    assert_eq!(order(10), SeqOrder::InOrder);
    assert_eq!(
        order(12),
        SeqOrder::Gap {
            after: 10,
            missing: 1
        }
    );
    // 11 arriving now is late, and 13 is next in order again.
    assert_eq!(order(11), SeqOrder::Late { position: 12 });
    assert_eq!(order(13), SeqOrder::InOrder);
}

#[test]
fn memory_is_bounded_and_forgotten_messages_still_reported() {
    let mut t = Tracker::new();
    for i in 0..5000u32 {
        let seq = (i % 65536) as u16;
        t.on_message(&0, data(seq), &i.to_le_bytes(), i64::from(i), u64::from(i));
        if i % 2 == 0 {
            t.on_ack(&0, data(seq), i64::from(i), u64::from(i));
        }
    }
    let s = &t.streams[&0];
    assert_eq!(s.entries.len(), MAX_ENTRIES_PER_STREAM);
    assert!(s.order.len() <= 2 * MAX_ENTRIES_PER_STREAM);
    // Acknowledged ones are forgotten without report, unacked ones listed.
    assert_eq!(t.on_ack(&0, data(0), 0, 0), AckOutcome::Unknown);
    let r = t.finish();
    assert_eq!(r.unacked.len(), 2500);
    assert_eq!(r.unacked_not_listed, 0);
}

// A stream that starts on the tables of an ended one (`Tracker::spare`) knows nothing
// of it: no resend, position or unacked message carries over. Catches: an emptied
// stream keeping its counter position (a first message reported as a gap or late) or
// entries (a new message taken for a resend).
#[test]
fn a_stream_reusing_an_ended_ones_tables_starts_afresh() {
    let mut t = Tracker::new();
    for seq in 0..40u16 {
        t.on_message(&1u8, data(seq), &[seq as u8], 0, u64::from(seq));
    }
    let ended = t.finish_stream(&1u8);
    assert_eq!(ended.len(), 40);
    assert_eq!(t.spare.len(), 1);
    // The same numbers and bytes again, on a new stream and on the ended stream's key.
    for key in [2u8, 1u8] {
        assert_eq!(
            t.on_message(&key, data(5), &[5], 0, 100),
            Delivery::New {
                reuse: None,
                order: SeqOrder::InOrder
            }
        );
        assert_eq!(t.on_ack(&key, data(6), 0, 101), AckOutcome::Unknown);
    }
    assert!(t.spare.is_empty());
    let left = t.finish_stream(&1u8);
    assert_eq!(
        left.iter()
            .map(|u| (u.key, u.first.frame))
            .collect::<Vec<_>>(),
        [(data(5), 100)]
    );
}
