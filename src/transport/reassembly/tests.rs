//! Tests of fragment reassembly: in and out of order, duplicates, conflicts and every limit.
use super::super::cipher::{decrypt, encrypt};
use super::super::packet::{emit_packet, parse, DataMessage, FragmentHeader, MessageBody};
use super::super::reliability::{Delivery, SeqKey, Tracker};
use super::*;

const S: i64 = 1_000_000_000;

fn frag(seq: u16, index: u8, total: Option<u8>, chunk: &[u8], frame: u64) -> Fragment<'_> {
    Fragment {
        seq,
        index,
        total,
        chunk,
        offset: 2,
        frame,
        time_ns: frame as i64 * S / 10,
    }
}

fn codes(r: &PushResult) -> Vec<&'static str> {
    r.warnings.iter().map(|w| w.code.as_str()).collect()
}

/// A client's round-2 checksum reply as observed (README §4.4): 0x32 messages of
/// 412, 412 and 27 bytes carrying 832 payload bytes, sent as real datagrams
/// (emit → encrypt → decrypt → parse), arriving out of order with a duplicated
/// fragment and a later retransmitted copy, through the tracker and reassembler.
#[test]
fn checksum_reply_out_of_order_with_duplicate_and_resend() {
    let reply: Vec<u8> = std::iter::once(0x21u8)
        .chain((1..832u32).map(|i| (i * 7 + i / 5) as u8))
        .collect();
    let seq = 0x0004;
    let chunks = [&reply[..405], &reply[405..811], &reply[811..]];
    let datagrams: Vec<Vec<u8>> = chunks
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let index = i as u8;
            let total = (i == 0).then_some(3);
            let m = DataMessage::new(
                Some(seq),
                false,
                Some(FragmentHeader { index, total }),
                c.len(),
            )
            .unwrap();
            let expect_len = [412, 412, 27][i];
            assert_eq!(m.declared_len(), expect_len);
            let mut d = emit_packet(2, &[(&MessageBody::Data(m), c)]).unwrap();
            encrypt(&mut d);
            d
        })
        .collect();
    // Arrival: fragment 2, fragment 0, fragment 0 again, fragment 1, then 2 s
    // later a resend of fragment 1 and, after the tracker forgot nothing, fragment 0.
    let arrivals = [
        (2usize, 10u64, 0),
        (0, 11, S / 100),
        (0, 12, S / 50),
        (1, 13, S / 20),
        (1, 14, 2 * S),
        (0, 15, 4 * S),
    ];
    let mut tracker = Tracker::new();
    let mut reasm = Reassembler::default();
    let mut delivered = Vec::new();
    let mut retransmissions = 0;
    for (i, frame, t) in arrivals {
        let mut plain = datagrams[i].clone();
        decrypt(&mut plain);
        let p = parse(&plain);
        assert!(p.all_warnings().next().is_none());
        let m = &p.messages[0];
        let MessageBody::Data(d) = &m.body else {
            panic!()
        };
        let fh = d.fragment.unwrap();
        let key = SeqKey::of_message(m).unwrap();
        assert_eq!(key.fragment, Some(i as u8));
        match tracker.on_message(&"c2s", key, m.bytes(&plain), t, frame) {
            Delivery::New { .. } => {}
            Delivery::Retransmission { .. } => {
                retransmissions += 1;
                // Even if a caller pushes it anyway, it is not delivered twice.
            }
        }
        let r = reasm.push(
            &"c2s",
            Fragment {
                seq: d.seq.unwrap(),
                index: fh.index,
                total: fh.total,
                chunk: &plain[d.payload.clone()],
                offset: m.offset,
                frame,
                time_ns: t,
            },
        );
        assert!(r.warnings.is_empty());
        match r.outcome {
            PushOutcome::Complete(done) => delivered.push(done),
            PushOutcome::Stored { .. } => assert!(frame == 10 || frame == 11),
            PushOutcome::Duplicate => assert_eq!(frame, 12),
            PushOutcome::AlreadyDelivered => assert!(frame >= 14),
            PushOutcome::Rejected => panic!("rejected"),
        }
    }
    assert_eq!(retransmissions, 3);
    assert_eq!(delivered.len(), 1);
    let done = &delivered[0];
    assert_eq!(done.payload, reply);
    assert_eq!(done.payload[0], 0x21);
    assert_eq!(done.frames, [11, 13, 10]);
    assert_eq!((done.first.frame, done.last.frame), (10, 13));
    assert_eq!(reasm.open_sets(), 0);
    assert_eq!(reasm.open_bytes(), 0);
    assert!(reasm.finish().0.is_empty());
}

#[test]
fn bad_fragment_input_is_located() {
    let mut r = Reassembler::default();
    assert_eq!(
        codes(&r.push(&0, frag(1, 0, Some(0), b"a", 1))),
        ["fragment_total_zero"]
    );
    assert_eq!(
        codes(&r.push(&0, frag(1, 3, Some(3), b"a", 1))),
        ["fragment_index_out_of_range"]
    );
    // Stored before fragment 0 told the count, then found out of range.
    assert!(matches!(
        r.push(&0, frag(2, 5, None, b"x", 2)).outcome,
        PushOutcome::Stored {
            have: 1,
            total: None
        }
    ));
    let res = r.push(&0, frag(2, 0, Some(2), b"y", 3));
    assert_eq!(codes(&res), ["fragment_index_out_of_range"]);
    assert!(matches!(
        res.outcome,
        PushOutcome::Stored {
            have: 1,
            total: Some(2)
        }
    ));
    // Known count: later index beyond it.
    let res = r.push(&0, frag(2, 2, None, b"z", 4));
    assert_eq!(
        (codes(&res), res.outcome),
        (vec!["fragment_index_out_of_range"], PushOutcome::Rejected)
    );
    // Conflicting totals for one key.
    let res = r.push(&0, frag(2, 0, Some(4), b"y", 5));
    assert_eq!(codes(&res), ["fragment_total_conflict"]);
    // Conflicting bytes for one index.
    let res = r.push(&0, frag(2, 0, Some(2), b"Q", 6));
    assert_eq!(
        (codes(&res), res.outcome),
        (vec!["fragment_conflict"], PushOutcome::Duplicate)
    );
    for w in [r.push(&0, frag(9, 0, Some(0), b"", 7))]
        .iter()
        .flat_map(|r| &r.warnings)
    {
        assert_eq!(w.offset, Some(2));
    }
    let res = r.push(&0, frag(2, 1, None, b"w", 8));
    match res.outcome {
        PushOutcome::Complete(d) => {
            assert_eq!((d.payload, d.frames), (b"yw".to_vec(), vec![3, 8]))
        }
        o => panic!("{o:?}"),
    }
    assert_eq!(r.open_bytes(), 0);
}

#[test]
fn reused_seq_with_other_bytes_is_a_new_set_and_streams_are_separate() {
    let mut r = Reassembler::default();
    let _ = r.push(&0, frag(7, 1, None, b"B", 1));
    assert!(matches!(
        r.push(&0, frag(7, 0, Some(2), b"A", 2)).outcome,
        PushOutcome::Complete(_)
    ));
    assert_eq!(
        r.push(&0, frag(7, 0, Some(2), b"A", 3)).outcome,
        PushOutcome::AlreadyDelivered
    );
    // Same seq on another stream: independent.
    assert!(matches!(
        r.push(&1, frag(7, 0, Some(2), b"A", 4)).outcome,
        PushOutcome::Stored { .. }
    ));
    // Same seq, new bytes (wrapped counter): a new set.
    assert!(matches!(
        r.push(&0, frag(7, 0, Some(2), b"C", 5)).outcome,
        PushOutcome::Stored { .. }
    ));
    match r.push(&0, frag(7, 1, None, b"D", 6)).outcome {
        PushOutcome::Complete(d) => assert_eq!(d.payload, b"CD"),
        o => panic!("{o:?}"),
    }
    // Same bytes long after the horizon: a new set as well.
    let mut late = frag(7, 0, Some(2), b"C", 7);
    late.time_ns += 100 * S;
    assert!(matches!(
        r.push(&0, late).outcome,
        PushOutcome::Stored { .. }
    ));
}

#[test]
fn limits_bound_state_and_incomplete_sets_are_reported() {
    let limits = Limits {
        max_open_sets: 3,
        max_set_bytes: 10,
        max_total_bytes: 20,
        max_age_ns: 5 * S,
        ..Limits::default()
    };
    let mut r = Reassembler::new(limits);
    for seq in 0..5u16 {
        let _ = r.push(&0, frag(seq, 0, Some(2), b"abc", u64::from(seq)));
        assert!(r.open_sets() <= 3);
    }
    // Per-set byte limit.
    let res = r.push(&0, frag(20, 1, None, b"0123456789X", 6));
    assert_eq!(codes(&res), ["fragment_set_too_large"]);
    // Total bytes: three sets of 9 bytes do not fit 20.
    for seq in 30..33u16 {
        let _ = r.push(&0, frag(seq, 0, Some(2), b"123456789", 7));
    }
    assert!(r.open_bytes() <= 20);
    // Age: a fragment 10 s later expires everything else.
    let mut late = frag(40, 0, Some(2), b"z", 8);
    late.time_ns += 10 * S;
    let _ = r.push(&0, late);
    assert_eq!(r.open_sets(), 1);
    let (inc, unlisted) = r.finish();
    assert_eq!(unlisted, 0);
    let reasons: Vec<IncompleteReason> = inc.iter().map(|i| i.reason).collect();
    assert!(reasons.contains(&IncompleteReason::TooManySets));
    assert!(reasons.contains(&IncompleteReason::SetTooLarge));
    assert!(reasons.contains(&IncompleteReason::TotalBytes));
    assert!(reasons.contains(&IncompleteReason::Expired));
    assert_eq!(
        inc.last()
            .map(|i| (i.seq, i.reason, i.have.clone(), i.total)),
        Some((40, IncompleteReason::EndOfCapture, vec![0], Some(2)))
    );
}
