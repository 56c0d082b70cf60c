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
