use super::*;

const SEC: i64 = 1_000_000_000;

struct Feed {
    table: SessionTable,
    frame: u64,
}

impl Feed {
    fn new() -> Feed {
        Feed {
            table: SessionTable::new(DEFAULT_GAME_PORT),
            frame: 0,
        }
    }
    fn send(
        &mut self,
        ts: i64,
        src: &str,
        dst: &str,
        payload: &[u8],
    ) -> Result<Classified, Unrelated> {
        self.frame += 1;
        let d = Datagram {
            frame: self.frame,
            ts_ns: ts,
            src: src.parse().unwrap(),
            dst: dst.parse().unwrap(),
            payload: payload.to_vec(),
            fragment_frames: vec![],
        };
        self.table.classify(&d)
    }
}

const SRV: &str = "10.0.0.1:22101";

#[test]
fn payload_kinds() {
    use Direction::*;
    assert_eq!(payload_kind(b"\\status\\", C2S), PayloadKind::GameSpy);
    assert_eq!(
        payload_kind(&[0xFF, 0x01], C2S),
        PayloadKind::Bc { peer_id: 0xFF }
    );
    assert_eq!(
        payload_kind(&[0x01, 0x00], S2C),
        PayloadKind::Bc { peer_id: 1 }
    );
    assert_eq!(
        payload_kind(&[], C2S),
        PayloadKind::NotBc(NotBcReason::Empty)
    );
    assert_eq!(
        payload_kind(&[2], C2S),
        PayloadKind::NotBc(NotBcReason::TooShort { len: 1 })
    );
    let wrong = payload_kind(&[0x02, 0x01], S2C);
    assert_eq!(
        wrong,
        PayloadKind::NotBc(NotBcReason::PeerId {
            peer_id: 2,
            direction: S2C
        })
    );
    if let PayloadKind::NotBc(r) = wrong {
        assert_eq!(r.to_string(), "peer id 0x02 cannot start a s2c packet");
    }
}

#[test]
fn directions_counters_and_unrelated_traffic() {
    let mut f = Feed::new();
    let a = f.send(0, "10.0.0.9:5000", SRV, b"\\status\\").unwrap();
    assert_eq!(
        (a.direction, a.kind, a.new_session, a.new_client),
        (Direction::C2S, PayloadKind::GameSpy, true, true)
    );
    let b = f
        .send(1, SRV, "10.0.0.9:5000", b"\\gamename\\bc\\final\\")
        .unwrap();
    assert_eq!((b.session, b.client, b.direction), (0, 0, Direction::S2C));
    let c = f.send(2, "10.0.0.2:6000", SRV, &[0xFF, 1, 2]).unwrap();
    assert_eq!((c.session, c.client, c.new_client), (0, 1, true));
    f.send(3, SRV, "10.0.0.2:6000", &[1, 1, 2, 3]).unwrap();
    f.send(4, "10.0.0.2:6000", SRV, &[2, 1]).unwrap();
    let e = f
        .send(5, "10.0.0.2:6000", "10.0.0.3:7000", &[2, 1])
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "not BC: neither port 6000 nor 7000 is the game port"
    );
    let s = &f.table.sessions()[0];
    assert_eq!(s.counters.gamespy, [1, 1]);
    assert_eq!(s.counters.bc, [2, 1]);
    assert_eq!(s.counters.bytes, [8 + 3 + 2, 19 + 4]);
    let client = s.client("10.0.0.2:6000".parse().unwrap()).unwrap();
    assert_eq!(client.peer_id, Some(2));
    assert_eq!(client.connect_frame, Some(3));
    assert_eq!(
        (client.activity.first_frame, client.activity.last_frame),
        (3, 5)
    );
    assert_eq!(s.game_clients().count(), 1);
    assert_eq!(f.table.unrelated_count(), 1);
}

/// Three server runs one after another on the same endpoint, as in the real replay
/// capture: clients connect, disconnect, a GameSpy query comes, the next run starts.
#[test]
fn sessions_split_when_every_client_has_left() {
    let mut f = Feed::new();
    let mut t = 0;
    for run in 0..3u16 {
        let q = format!("10.0.0.9:{}", 5000 + run);
        let gs = f.send(t, &q, SRV, b"\\status\\").unwrap();
        assert_eq!(gs.session, run as usize, "query opens run {run}");
        let mut ids = vec![];
        for k in 0..2u16 {
            let cl = format!("10.0.0.2:{}", 6000 + run * 10 + k);
            t += SEC / 10;
            let c = f.send(t, &cl, SRV, &[0xFF, 1]).unwrap();
            f.send(t, SRV, &cl, &[1, 1]).unwrap();
            f.send(t, &cl, SRV, &[2 + k as u8, 1]).unwrap();
            ids.push((c.session, c.client, cl));
        }
        for (s, c, cl) in &ids {
            assert_eq!(*s, run as usize);
            f.table.client_left(*s, *c, f.frame);
            // A late ACK resend to a departed client stays in its session.
            let late = f.send(t, SRV, cl, &[1, 1]).unwrap();
            assert_eq!(late.session, run as usize);
        }
        t += SEC / 10;
    }
    assert_eq!(f.table.sessions().len(), 3);
    for s in f.table.sessions() {
        assert_eq!(s.game_clients().count(), 2);
        assert_eq!(s.counters.gamespy, [1, 0]);
    }
}

#[test]
fn concurrent_servers_and_timeouts() {
    let mut f = Feed::new();
    let other = "10.0.0.7:22101";
    let a = f.send(0, "10.0.0.2:6000", SRV, &[0xFF, 1]).unwrap();
    let b = f.send(0, "10.0.0.2:6001", other, &[0xFF, 1]).unwrap();
    assert_ne!(a.session, b.session);
    let a2 = f.send(SEC, "10.0.0.3:6000", SRV, &[0xFF, 1]).unwrap();
    assert_eq!((a2.session, a2.client), (a.session, 1));
    // 50 s of silence: the server's clients timed out; a newcomer starts a new session.
    let c = f.send(51 * SEC, "10.0.0.4:6000", SRV, &[0xFF, 1]).unwrap();
    assert!(c.new_session);
    // A client of the ended session that speaks again is attributed to its session.
    let old = f.send(52 * SEC, "10.0.0.3:6000", SRV, &[3, 1]).unwrap();
    assert_eq!(old.session, a.session);
    assert_eq!(f.table.sessions().len(), 3);
}

#[test]
fn reconnect_from_the_same_endpoint_is_a_new_client() {
    let mut f = Feed::new();
    let cl = "10.0.0.2:6000";
    f.send(0, cl, SRV, &[0xFF, 1]).unwrap();
    f.send(0, cl, SRV, &[0xFF, 1]).unwrap(); // connect resent: same client
    f.send(1, cl, SRV, &[2, 1]).unwrap();
    let second = f.send(2, "10.0.0.3:6000", SRV, &[0xFF, 1]).unwrap();
    let again = f.send(3, cl, SRV, &[0xFF, 1]).unwrap();
    assert_eq!((again.session, again.new_session), (0, false));
    assert!(again.new_client);
    assert_eq!(again.client, 2);
    assert_eq!(second.client, 1);
    let s = &f.table.sessions()[0];
    assert_eq!(s.clients.len(), 3);
    assert_eq!(
        s.client(cl.parse().unwrap()).unwrap().activity.first_frame,
        5
    );
}

#[test]
fn both_ports_on_the_game_port() {
    let mut f = Feed::new();
    let cl = "10.0.0.2:22101";
    let a = f.send(0, cl, SRV, &[0xFF, 1]).unwrap();
    assert_eq!(a.direction, Direction::C2S);
    let b = f.send(0, SRV, cl, &[0x01, 1]).unwrap();
    assert_eq!((b.direction, b.session, b.client), (Direction::S2C, 0, 0));
    let c = f.send(0, SRV, cl, b"\\final\\").unwrap();
    assert_eq!(c.direction, Direction::S2C);
}

#[test]
fn tables_are_bounded() {
    let mut f = Feed::new();
    f.table = SessionTable::with_config(FlowConfig {
        max_sessions: 2,
        max_clients_per_session: 2,
        ..FlowConfig::default()
    });
    f.send(0, "10.0.0.2:1", SRV, &[0xFF, 1]).unwrap();
    f.send(0, "10.0.0.2:2", SRV, &[0xFF, 1]).unwrap();
    assert_eq!(
        f.send(0, "10.0.0.2:3", SRV, &[0xFF, 1]),
        Err(Unrelated::TableFull)
    );
    f.send(0, "10.0.0.2:1", "10.0.0.8:22101", &[0xFF, 1])
        .unwrap();
    assert_eq!(
        f.send(0, "10.0.0.2:1", "10.0.0.9:22101", &[0xFF, 1]),
        Err(Unrelated::TableFull)
    );
    assert_eq!(f.table.dropped_count(), 2);
}

#[test]
fn sessions_out_of_reach_are_retired() {
    let mut f = Feed::new();
    // Four sessions in turn on one server, each a client that connects and leaves.
    for (k, cl) in ["10.0.0.2:1", "10.0.0.2:2", "10.0.0.2:3", "10.0.0.2:4"]
        .iter()
        .enumerate()
    {
        let c = f.send(k as i64 * 100, cl, SRV, &[0xFF, 1]).unwrap();
        assert_eq!(c.session, k);
        f.table.client_left(c.session, c.client, 1);
        if k == 2 {
            // Session 0 fell out of reach when session 2 began; nobody took it yet.
            assert_eq!(f.table.sessions().len(), 3);
            let retired = f.table.take_retired();
            assert_eq!(retired.len(), 1);
            assert_eq!(retired[0].0, 0);
            assert_eq!(retired[0].1.clients[0].addr.to_string(), "10.0.0.2:1");
        }
    }
    let retired: Vec<usize> = f.table.take_retired().into_iter().map(|r| r.0).collect();
    assert_eq!(retired, [1]);
    let live: Vec<usize> = f.table.live_sessions().map(|(i, _)| i).collect();
    assert_eq!(live, [2, 3]);
    assert!(f.table.session(0).is_none());
    // A late datagram of session 1's client goes to a new session, not back to 1.
    let late = f.send(500, "10.0.0.2:2", SRV, &[0x02, 1]).unwrap();
    assert_eq!(late.session, 4);
}

#[test]
fn clients_over_all_sessions_are_bounded() {
    let mut f = Feed::new();
    f.table = SessionTable::with_config(FlowConfig {
        max_clients_total: 3,
        ..FlowConfig::default()
    });
    f.send(0, "10.0.0.2:1", SRV, &[0xFF, 1]).unwrap();
    f.send(0, "10.0.0.2:2", SRV, &[0xFF, 1]).unwrap();
    f.send(0, "10.0.0.2:1", "10.0.0.8:22101", &[0xFF, 1])
        .unwrap();
    assert_eq!(
        f.send(0, "10.0.0.2:2", "10.0.0.8:22101", &[0xFF, 1]),
        Err(Unrelated::TableFull)
    );
    // Known clients go on.
    f.send(0, "10.0.0.2:1", SRV, &[0x02, 1]).unwrap();
    assert_eq!(f.table.dropped_count(), 1);
}

#[test]
fn retired_sessions_release_their_clients_from_the_total() {
    let mut f = Feed::new();
    f.table = SessionTable::with_config(FlowConfig {
        max_clients_total: 2,
        ..FlowConfig::default()
    });
    // One client per session, each leaving: session k retires when k + 2 begins, so
    // at most two sessions' clients are live and a hundred sessions fit a total of 2.
    for k in 0..100u16 {
        let cl = format!("10.0.0.2:{}", 1000 + k);
        let c = f.send(k as i64 * 100, &cl, SRV, &[0xFF, 1]).unwrap();
        f.table.client_left(c.session, c.client, 1);
        f.table.take_retired();
    }
    assert_eq!(f.table.dropped_count(), 0);
}

/// Classifies every datagram twice: as [`SessionTable::classify`] does, and with every
/// remembered answer forgotten first, so that each datagram goes through the session
/// table's lookups. Both must give the same answer and leave the same sessions; the
/// count of datagrams that could take the remembered answer is returned, so that a
/// comparison that never exercised it is caught.
fn compare_with_and_without_recent(datagrams: &[(Datagram, Option<usize>)]) -> usize {
    let mut remembered = SessionTable::new(DEFAULT_GAME_PORT);
    let mut searched = SessionTable::new(DEFAULT_GAME_PORT);
    let mut known = 0;
    for (d, leaves) in datagrams {
        if remembered.recent.get(d.src, d.dst).is_some() {
            known += 1;
        }
        searched.recent.forget_all();
        let a = remembered.classify(d);
        let b = searched.classify(d);
        assert_eq!(a, b, "frame {}", d.frame);
        assert_eq!(remembered.take_retired(), searched.take_retired());
        // A disconnect the transport layer would have found in this datagram.
        if let (Some(client), Ok(c)) = (leaves, a) {
            remembered.client_left(c.session, *client, d.frame);
            searched.client_left(c.session, *client, d.frame);
        }
    }
    assert_eq!(remembered.sessions(), searched.sessions());
    known
}

#[test]
fn remembered_answers_match_the_table_lookups_on_a_synthetic_mix() {
    // Two servers; clients that connect, talk, leave, time out and come back (a new
    // session on the same endpoint); damaged byte 0s; GameSpy; other UDP traffic.
    let mut ds = Vec::new();
    let mut frame = 0;
    let mut push = |ts: i64, src: &str, dst: &str, payload: &[u8], leaves: Option<usize>| {
        frame += 1;
        let d = Datagram {
            frame,
            ts_ns: ts,
            src: src.parse().unwrap(),
            dst: dst.parse().unwrap(),
            payload: payload.to_vec(),
            fragment_frames: vec![],
        };
        ds.push((d, leaves));
    };
    let other = "10.0.0.7:22101";
    for run in 0..3i64 {
        let t0 = run * 100 * SEC;
        for step in 0..40i64 {
            let t = t0 + step * SEC / 4;
            for k in 0..3 {
                let cl = format!("10.0.1.{k}:{}", 6000 + run);
                let server = if k == 2 { other } else { SRV };
                let first = if step == 0 { 0xFF } else { 2 + k as u8 };
                push(t, &cl, server, &[first, 1, 2], None);
                push(t, server, &cl, &[1, 1, 2], None);
                if step % 7 == 3 {
                    // Damaged byte 0 both ways, a resent connect, a 1-byte payload.
                    push(t, server, &cl, &[0x41, 1], None);
                    push(t, &cl, server, &[0, 1], None);
                    push(t, &cl, server, &[0xFF, 1], None);
                    push(t, &cl, server, &[7], None);
                }
            }
            if step % 10 == 0 {
                push(t, "10.0.2.9:7000", SRV, b"\\status\\", None);
                push(t, SRV, "10.0.2.9:7000", b"\\gamename\\bc\\final\\", None);
                push(t, "10.0.3.1:53", "10.0.3.2:4000", b"dns", None);
            }
        }
        // The first client leaves; the others fall silent until the next run.
        let t = t0 + 10 * SEC;
        let cl = format!("10.0.1.0:{}", 6000 + run);
        push(t, &cl, SRV, &[2, 1, 4], Some(0));
        push(t, SRV, &cl, &[1, 1, 4], None);
    }
    let known = compare_with_and_without_recent(&ds);
    assert!(known > ds.len() / 2, "{known} of {} remembered", ds.len());
}

#[test]
fn remembered_answers_match_the_table_lookups_on_the_shared_captures() {
    use crate::capture::{CaptureReader, Frame};
    use crate::net::{NetDecoder, NetOutcome};
    let shared = crate::capture::shared_captures::shared_pcaps();
    if shared.is_empty() {
        eprintln!("note: shared captures not found; compared on the synthetic mix only");
    }
    for path in shared {
        let name = path.display();
        let mut reader = CaptureReader::open(path.to_str().unwrap()).unwrap();
        let mut net = NetDecoder::default();
        let mut frame = Frame::default();
        let mut ds = Vec::new();
        while reader.read_into(&mut frame).unwrap() {
            if let NetOutcome::Datagram(d) = net.decode(&frame) {
                ds.push((d, None));
            }
        }
        assert!(ds.len() > 40, "{name}: {} datagrams", ds.len());
        let known = compare_with_and_without_recent(&ds);
        assert!(
            known > ds.len() / 2,
            "{name}: {known} of {} remembered",
            ds.len()
        );
    }
}
