//! Tests of the shared-memory transport within one process (threads as the two peers). Tests with
//! separate processes and real JVMs are in the workspace's integration tests.

use super::*;
use jdwp_protocol::ErrorCode;
use std::path::Path;

const T: Option<Duration> = Some(Duration::from_secs(20));

/// A name no other test (or test run) uses.
fn unique(tag: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    format!("unit-{tag}-{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed))
}

/// The `/dev/shm` entries of a transport name (rendezvous and connection segments).
fn leftovers(name: &str) -> Vec<String> {
    let prefix = format!("{SEGMENT_PREFIX}{name}");
    std::fs::read_dir("/dev/shm")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_owned))
        .filter(|f| f == &prefix || f.starts_with(&format!("{prefix}~")))
        .collect()
}

#[test]
fn listen_attach_exchange_and_clean_up() {
    let name = unique("basic");
    let listener = listen(&name).unwrap();
    assert!(Path::new(&format!("/dev/shm/{SEGMENT_PREFIX}{name}")).exists());
    let vm = std::thread::spawn(move || {
        let conn = listener.accept_with_timeout(T).unwrap();
        assert_eq!(conn.peer_pid(), std::process::id());
        let (mut reader, writer) = conn.into_split();
        let cmd = reader.read_packet().unwrap().unwrap();
        assert_eq!(cmd, Packet::command(1, 1, 1, vec![]));
        writer.write_packet(&Packet::reply(cmd.id, ErrorCode::NONE, b"version".to_vec())).unwrap();
        // The debugger disconnects: a clean end of stream.
        assert_eq!(reader.read_packet().unwrap(), None);
        listener
    });
    let conn = attach(&name, T).unwrap();
    let (mut reader, writer) = conn.into_split();
    writer.write_packet(&Packet::command(1, 1, 1, vec![])).unwrap();
    assert_eq!(reader.read_packet().unwrap().unwrap(), Packet::reply(1, ErrorCode::NONE, b"version".to_vec()));
    drop((reader, writer));
    let listener = vm.join().unwrap();
    // The connection segment was unlinked as soon as both had mapped it.
    assert_eq!(leftovers(&name), vec![format!("{SEGMENT_PREFIX}{name}")]);
    drop(listener);
    assert!(leftovers(&name).is_empty(), "{:?}", leftovers(&name));
}

#[test]
fn packets_larger_than_the_ring_stream_through_both_ways() {
    let name = unique("big");
    let mut listener = listen(&name).unwrap();
    listener.set_ring_size(4096);
    let body: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
    let expected = body.clone();
    let vm = std::thread::spawn(move || {
        let (mut reader, writer) = listener.accept_with_timeout(T).unwrap().into_split();
        let cmd = reader.read_packet().unwrap().unwrap();
        assert_eq!(cmd.body.len(), 3_000_000);
        // Echo it back as the reply body.
        writer.write_packet(&Packet::reply(cmd.id, ErrorCode::NONE, cmd.body)).unwrap();
    });
    let (mut reader, writer) = attach(&name, T).unwrap().into_split();
    writer.write_packet(&Packet::command(9, 1, 1, body)).unwrap();
    let reply = reader.read_packet().unwrap().unwrap();
    assert_eq!(reply.id, 9);
    assert!(reply.body == expected, "body corrupted");
    vm.join().unwrap();
}

#[test]
fn many_writer_threads_never_interleave_packets() {
    let name = unique("writers");
    let mut listener = listen(&name).unwrap();
    listener.set_ring_size(1000);
    let vm = std::thread::spawn(move || {
        let (_reader, writer) = listener.accept_with_timeout(T).unwrap().into_split();
        let threads: Vec<_> = (0..4u8)
            .map(|t| {
                let w = writer.clone();
                std::thread::spawn(move || {
                    for i in 0..100u32 {
                        w.write_packet(&Packet::command(i, t, t, vec![t; 500 + i as usize * 7])).unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        writer.shutdown().unwrap();
    });
    let (mut reader, _writer) = attach(&name, T).unwrap().into_split();
    let mut count = 0;
    while let Some(p) = reader.read_packet().unwrap() {
        let crate::PacketKind::Command { set, cmd } = p.kind else { panic!("not a command") };
        assert_eq!(set, cmd);
        assert_eq!(p.body.len(), 500 + p.id as usize * 7);
        assert!(p.body.iter().all(|&b| b == set));
        count += 1;
    }
    assert_eq!(count, 400);
    vm.join().unwrap();
}

#[test]
fn sequential_reconnects() {
    let name = unique("again");
    let listener = listen(&name).unwrap();
    let vm = std::thread::spawn(move || {
        for round in 0..5u32 {
            let (mut reader, writer) = listener.accept_with_timeout(T).unwrap().into_split();
            let cmd = reader.read_packet().unwrap().unwrap();
            writer.write_packet(&Packet::reply(cmd.id, ErrorCode::NONE, round.to_be_bytes().to_vec())).unwrap();
            assert_eq!(reader.read_packet().unwrap(), None);
        }
    });
    for round in 0..5u32 {
        let (mut reader, writer) = attach(&name, T).unwrap().into_split();
        writer.write_packet(&Packet::command(round, 1, 1, vec![])).unwrap();
        let reply = reader.read_packet().unwrap().unwrap();
        assert_eq!(reply.body, round.to_be_bytes());
        writer.shutdown().unwrap();
    }
    vm.join().unwrap();
}

#[test]
fn one_peer_at_a_time() {
    let name = unique("busy");
    let listener = listen(&name).unwrap();
    let vm = std::thread::spawn(move || {
        let conn = listener.accept_with_timeout(T).unwrap();
        let (mut reader, _writer) = conn.into_split();
        assert_eq!(reader.read_packet().unwrap(), None);
    });
    let first = attach(&name, T).unwrap();
    let err = attach(&name, Some(Duration::from_millis(300))).unwrap_err();
    assert!(matches!(&err, TransportError::Io { source, .. } if source.kind() == io::ErrorKind::AddrInUse), "{err}");
    assert!(err.to_string().contains("busy with another peer"), "{err}");
    drop(first);
    vm.join().unwrap();
}

#[test]
fn a_name_in_use_is_a_clear_error() {
    let name = unique("inuse");
    let _first = listen(&name).unwrap();
    let err = listen(&name).unwrap_err();
    assert!(matches!(&err, TransportError::Io { source, .. } if source.kind() == io::ErrorKind::AddrInUse), "{err}");
    assert!(err.to_string().contains(&format!("in use by process {}", std::process::id())), "{err}");
}

#[test]
fn a_stale_segment_of_a_dead_process_is_replaced() {
    let name = unique("stale");
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead_pid = child.id();
    child.wait().unwrap();
    let listener = listen(&name).unwrap();
    listener.rv.header().listener_pid.store(dead_pid, Ordering::Relaxed);
    // Leave it behind as a crashed process would.
    disown_segment(&listener.segment);
    std::mem::forget(listener);
    assert_eq!(leftovers(&name).len(), 1);
    // An attacher finds the listener dead, says so, and removes the segment.
    let err = attach(&name, T).unwrap_err();
    assert!(err.to_string().contains(&format!("listener (pid {dead_pid}) is dead")), "{err}");
    assert!(leftovers(&name).is_empty());

    // A new listener replaces a stale one.
    let listener = listen(&name).unwrap();
    listener.rv.header().listener_pid.store(dead_pid, Ordering::Relaxed);
    disown_segment(&listener.segment);
    std::mem::forget(listener);
    let again = listen(&name).unwrap();
    assert_eq!(again.rv.header().listener_pid.load(Ordering::Relaxed), std::process::id());
}

#[test]
fn attach_errors() {
    let err = attach(&unique("nobody"), T).unwrap_err();
    assert!(matches!(&err, TransportError::Io { source, .. } if source.kind() == io::ErrorKind::NotFound), "{err}");
    assert!(err.to_string().contains("nothing listens there"), "{err}");
    for bad in ["", "a/b", "x y", &"n".repeat(101)] {
        assert!(matches!(attach(bad, T), Err(TransportError::InvalidName { .. })), "{bad:?}");
        assert!(matches!(listen(bad), Err(TransportError::InvalidName { .. })), "{bad:?}");
    }
}

#[test]
fn accept_times_out_and_closed_listener_refuses() {
    let name = unique("timeout");
    let listener = listen(&name).unwrap();
    let start = Instant::now();
    let err = listener.accept_with_timeout(Some(Duration::from_millis(100))).unwrap_err();
    assert!(err.is_timeout(), "{err}");
    assert!(start.elapsed() >= Duration::from_millis(100));
    drop(listener);
    assert!(leftovers(&name).is_empty());
    assert!(attach(&name, T).is_err());
}

#[test]
fn a_peer_with_the_wrong_handshake_is_dropped() {
    let name = unique("handshake");
    let listener = listen(&name).unwrap();
    let vm = std::thread::spawn(move || {
        let err = listener.accept_with_timeout(Some(Duration::from_secs(2))).unwrap_err();
        assert!(err.is_timeout(), "{err}");
    });
    let conn = attach_raw(&name, None).unwrap();
    let (_read, mut write) = conn.into_halves();
    write.write_all(b"GET / HTTP/1.1\r\n").unwrap();
    vm.join().unwrap();
}

#[test]
fn handshake_leaves_a_following_packet_for_the_reader() {
    let name = unique("follow");
    let listener = listen(&name).unwrap();
    let vm = std::thread::spawn(move || {
        let (mut reader, _w) = listener.accept_with_timeout(T).unwrap().into_split();
        reader.read_packet().unwrap().unwrap()
    });
    let conn = attach_raw(&name, None).unwrap();
    let (mut read, mut write) = conn.into_halves();
    let mut bytes = HANDSHAKE.to_vec();
    Packet::command(77, 1, 2, vec![3]).encode_into(&mut bytes).unwrap();
    write.write_all(&bytes).unwrap();
    let mut echo = [0u8; 14];
    read.read_exact(&mut echo).unwrap();
    assert_eq!(&echo, HANDSHAKE);
    assert_eq!(vm.join().unwrap(), Packet::command(77, 1, 2, vec![3]));
}

#[test]
fn a_new_listener_sweeps_stale_segments_of_other_names() {
    let stale = unique("swept");
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead_pid = child.id();
    child.wait().unwrap();
    let listener = listen(&stale).unwrap();
    listener.rv.header().listener_pid.store(dead_pid, Ordering::Relaxed);
    disown_segment(&listener.segment);
    std::mem::forget(listener);
    assert_eq!(leftovers(&stale).len(), 1);
    let live = listen(&unique("sweeper")).unwrap();
    assert!(leftovers(&stale).is_empty(), "{:?}", leftovers(&stale));
    drop(live);
}

#[cfg(feature = "tokio")]
#[test]
fn a_blocking_reader_with_an_async_writer_ends_when_closed() {
    use tokio::io::AsyncWriteExt;
    let name = unique("closer");
    let listener = listen(&name).unwrap();
    let vm = std::thread::spawn(move || {
        let (mut reader, writer) = listener.accept_with_timeout(T).unwrap().into_split();
        let cmd = reader.read_packet().unwrap().unwrap();
        writer.write_packet(&Packet::reply(cmd.id, ErrorCode::NONE, b"pong".to_vec())).unwrap();
        // The debugger's closer ends its writing too: a clean end here.
        assert_eq!(reader.read_packet().unwrap(), None);
        // Kept (in the join handle) until joined, so the VM's side does not end the debugger's read.
        (listener, reader, writer)
    });
    let conn = attach(&name, T).unwrap();
    let closer = conn.closer();
    let (mut reader, mut writer) = conn.into_blocking_reader_split();
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    rt.block_on(writer.write_all(&Packet::command(5, 1, 1, vec![]).encode().unwrap())).unwrap();
    assert_eq!(reader.read_packet().unwrap().unwrap(), Packet::reply(5, ErrorCode::NONE, b"pong".to_vec()));
    // A read blocked on an idle connection (the VM sends nothing more) returns once closed.
    let blocked = std::thread::spawn(move || reader.read_packet().unwrap());
    closer.shutdown();
    assert_eq!(blocked.join().unwrap(), None);
    let (listener, ..) = vm.join().unwrap();
    drop((writer, closer, listener));
    assert!(leftovers(&name).is_empty(), "{:?}", leftovers(&name));
}
