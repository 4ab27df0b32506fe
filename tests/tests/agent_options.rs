//! Our agent's startup options in a real JVM: `allow`, `launch`, `onthrow`/`onuncaught`, and a bad
//! option stopping the VM.

use std::time::Duration;

use jdwp_protocol::commands::virtual_machine as vm;
use test_rig::wire::RawSession;
use test_rig::{Agent, Debuggee, Stream};

const TIMEOUT: Duration = Duration::from_secs(60);

fn ours(options: &str) -> Agent {
    Agent::path(test_rig::our_agent_library().expect("our agent"), options)
}

#[test]
fn allow_admits_listed_peers_only() {
    let refused = Debuggee::builder("Demo")
        .agent(ours("transport=dt_socket,server=y,suspend=y,address=127.0.0.1:0,allow=10.0.0.1"))
        .spawn()
        .unwrap();
    // The connection is dropped before any command is served.
    let outcome = RawSession::attach(&refused.address().to_string(), TIMEOUT);
    assert!(outcome.is_err(), "a peer outside allow= got a session");
    refused.wait_for_line_in(Stream::Stderr, "not allowed to connect", TIMEOUT).unwrap();
    // ...before the handshake, as the JDK's agent does: the peer reads no handshake back
    // (JdwpAllowTest's DenyTest counts the bytes).
    {
        use std::io::{Read, Write};
        let mut raw = std::net::TcpStream::connect(refused.address()).unwrap();
        raw.set_read_timeout(Some(TIMEOUT)).unwrap();
        let _ = raw.write_all(b"JDWP-Handshake");
        let mut buf = [0u8; 24];
        let read = raw.read(&mut buf).unwrap_or(0);
        assert_eq!(read, 0, "a refused peer got bytes back: {:?}", &buf[..read]);
    }

    let admitted = Debuggee::builder("Demo")
        .agent(ours("transport=dt_socket,server=y,suspend=y,address=127.0.0.1:0,allow=127.0.0.0/8+::1"))
        .spawn()
        .unwrap();
    let mut s = RawSession::attach(&admitted.address().to_string(), TIMEOUT).unwrap();
    assert_eq!(s.send(&vm::Version {}).unwrap().jdwp_major, test_rig::jdk_feature_version().unwrap() as i32);
    s.send(&vm::Dispose {}).unwrap();
    let status = admitted.wait_for_exit(TIMEOUT).expect("Demo runs to the end once the debugger leaves");
    assert!(status.success(), "{status:?}");
}

#[test]
fn launch_starts_the_debugger_with_transport_and_address() {
    let jvm = Debuggee::builder("Demo")
        .agent(ours("transport=dt_socket,server=y,suspend=n,address=127.0.0.1:0,launch=echo launched"))
        .expect_listening(false)
        .spawn()
        .unwrap();
    let line = jvm.wait_for_line("launched dt_socket", TIMEOUT).unwrap();
    let port: u16 = line.trim().rsplit(' ').next().and_then(|p| p.parse().ok()).expect("a port");
    assert_ne!(port, 0);
    assert!(jvm.wait_for_exit(TIMEOUT).expect("Demo ends").success());
    // As with the JDK's agent, the address goes to the launched command, not to stdout.
    assert!(!jvm.stdout_text().contains("Listening for transport"), "{}", jvm.stdout_text());
}

#[test]
fn a_bad_option_names_itself_and_stops_the_vm() {
    for (options, named) in [
        ("transport=dt_socket,server=y,bogus=1", "bogus"),
        ("transport=dt_socket,server=y,allow=10.0.0.0/40", "10.0.0.0/40"),
        ("transport=dt_socket,server=maybe", "server"),
    ] {
        let jvm = Debuggee::builder("Demo").agent(ours(options)).expect_listening(false).spawn().unwrap();
        let status = jvm.wait_for_exit(TIMEOUT).expect("the VM refuses to start");
        assert!(!status.success(), "{options}: {status:?}");
        let output = jvm.output_text();
        assert!(output.contains(named) && output.contains("ERROR"), "{options}: {output}");
        assert!(!output.contains("Demo done"), "{options}: the program must not run");
    }
}

#[test]
fn loading_the_agent_twice_stops_the_vm_in_the_jdk_agents_words() {
    let lib = test_rig::our_agent_library().expect("our agent");
    let second = format!("-agentpath:{}=transport=dt_socket,server=y,suspend=n,address=127.0.0.1:0", lib.display());
    let jvm = Debuggee::builder("Demo")
        .agent(ours("transport=dt_socket,server=y,suspend=n,address=127.0.0.1:0"))
        .jvm_option(second)
        .expect_listening(false)
        .spawn()
        .unwrap();
    let status = jvm.wait_for_exit(TIMEOUT).expect("the VM refuses to start");
    assert!(!status.success(), "{status:?}");
    // OpenJDK's DoubleAgentTest looks for these words.
    let output = jvm.output_text();
    assert!(output.contains("Cannot load this JVM TI agent twice"), "{output}");
    assert!(!output.contains("Demo done"), "the program must not run: {output}");
}

/// `onthrow=`: nothing starts until the named exception is thrown (a caught one counts, another
/// class does not); then the `launch=` command runs once with the transport and address.
#[test]
fn onthrow_starts_debugging_at_the_named_exception_only() {
    let jvm = Debuggee::builder("OnThrow")
        .agent(ours(
            "transport=dt_socket,server=y,suspend=n,address=127.0.0.1:0,onthrow=OnThrow$Trigger,launch=echo launched",
        ))
        .expect_listening(false)
        .spawn()
        .unwrap();
    assert!(jvm.wait_for_exit(TIMEOUT).expect("OnThrow ends").success(), "{}", jvm.output_text());
    let out = jvm.stdout_text();
    assert_eq!(out.matches("launched dt_socket ").count(), 1, "{out}");
    assert!(out.contains("trigger caught") && out.contains("OnThrow done"), "{out}");

    // An exception class that is never thrown: debugging never starts.
    let jvm = Debuggee::builder("OnThrow")
        .agent(ours("transport=dt_socket,server=y,suspend=n,address=127.0.0.1:0,onthrow=java.io.IOException,launch=echo launched"))
        .expect_listening(false)
        .spawn()
        .unwrap();
    assert!(jvm.wait_for_exit(TIMEOUT).expect("OnThrow ends").success(), "{}", jvm.output_text());
    assert!(!jvm.stdout_text().contains("launched"), "{}", jvm.output_text());
    assert!(jvm.stdout_text().contains("OnThrow done"), "{}", jvm.output_text());
}

/// `onuncaught=y`: caught exceptions do not start debugging, the one escaping main does.
#[test]
fn onuncaught_starts_debugging_at_an_uncaught_exception() {
    let jvm = Debuggee::builder("OnThrow")
        .args(["uncaught"])
        .agent(ours("transport=dt_socket,server=y,suspend=n,address=127.0.0.1:0,onuncaught=y,launch=echo launched"))
        .expect_listening(false)
        .spawn()
        .unwrap();
    let status = jvm.wait_for_exit(TIMEOUT).expect("OnThrow ends");
    assert!(!status.success(), "the trigger escapes main: {status:?}");
    let out = jvm.stdout_text();
    assert_eq!(out.matches("launched dt_socket ").count(), 1, "{out}");
    assert!(out.contains("trigger caught"), "{out}");
}

/// `onthrow=` with `suspend=y`: the throwing thread waits for a debugger, which first hears of
/// the exception that started debugging (an Exception event with request ID 0, suspend all, as the
/// JDK's agent reports it since JDK-8317920): the thrower, the exception, where it is thrown (the
/// thread's top frame) and where it will be caught. After a resume the program runs to its end.
#[test]
fn onthrow_with_suspend_reports_the_exception_on_the_throwing_thread() {
    use jdwp_protocol::commands::event::{Composite, Event};
    use jdwp_protocol::commands::object_reference as or;
    use jdwp_protocol::commands::reference_type as rt;
    use jdwp_protocol::commands::thread_reference as tr;

    let jvm = Debuggee::builder("OnThrow")
        .agent(ours(
            "transport=dt_socket,server=y,suspend=y,address=127.0.0.1:0,onthrow=OnThrow$Trigger,launch=echo launched",
        ))
        .expect_listening(false)
        .spawn()
        .unwrap();
    let line = jvm.wait_for_line("launched dt_socket", TIMEOUT).unwrap();
    let address = line.trim().rsplit(' ').next().expect("an address").to_owned();
    let mut s = RawSession::attach(&address, TIMEOUT).unwrap();
    let packet = s.next_event().unwrap();
    let composite: Composite = jdwp_protocol::codec::decode_body(&packet.body, s.id_sizes()).unwrap();
    assert_eq!(composite.suspend_policy, jdwp_protocol::SuspendPolicy::All, "{composite:?}");
    let (thread, location, exception, catch_location) = match composite.events.as_slice() {
        [Event::Exception { request_id: 0, thread, location, exception, catch_location }] => {
            (*thread, *location, *exception, *catch_location)
        }
        other => panic!("want one Exception event with request ID 0, got {other:?}"),
    };
    assert_eq!(s.send(&tr::Name { thread }).unwrap().thread_name, "thrower");
    let class = s.send(&or::ReferenceType { object: exception.id }).unwrap().type_id;
    assert_eq!(s.send(&rt::Signature { ref_type: class }).unwrap().signature, "LOnThrow$Trigger;");
    let top = s.send(&tr::Frames { thread, start_frame: 0, length: 1 }).unwrap();
    assert_eq!(top.frames.first().map(|f| f.location), Some(location), "thrown where the thread stands");
    assert!(!catch_location.method_id.is_null(), "the trigger is caught: {composite:?}");
    assert!(!jvm.stdout_text().contains("trigger caught"), "the thrower waits for the debugger");
    s.send(&vm::Resume {}).unwrap();
    // The program ends by itself (the debugger stays attached: a Dispose could race with the end).
    assert!(jvm.wait_for_exit(TIMEOUT).expect("OnThrow ends").success(), "{}", jvm.output_text());
    assert!(jvm.stdout_text().contains("trigger caught") && jvm.stdout_text().contains("OnThrow done"));
    drop(s);
}

/// `onjcmd=y` up to JDK 23: nothing starts at startup, not even with `suspend=y` (which `onjcmd`
/// overrides, as with the JDK's agent): the program runs to its end without a listener. (Starting
/// through jcmd needs the library loaded as `-agentlib:jdwp`; OpenJDK's OnJcmdTest covers it in
/// conformance.) From JDK 24 on, which has no `VM.start_java_debugging`, both agents refuse the
/// option as unknown and the VM does not start. Checked with both agents on the same JDK.
#[test]
fn onjcmd_starts_nothing_at_startup_or_is_refused_from_jdk_24() {
    const OPTIONS: &str = "transport=dt_socket,server=y,suspend=y,address=127.0.0.1:0,onjcmd=y";
    let jcmd_can_start = test_rig::jdk_feature_version().expect("the JDK's version") < 24;
    let lib = test_rig::our_agent_library().expect("our agent");
    for agent in [Agent::jdk(OPTIONS), Agent::path(lib, OPTIONS)] {
        let jvm = Debuggee::builder("Hello").agent(agent.clone()).expect_listening(false).spawn().unwrap();
        let status = jvm.wait_for_exit(TIMEOUT).expect("Hello ends or the VM refuses to start");
        let out = jvm.stdout_text();
        assert!(!out.contains("Listening for transport"), "{agent:?}: {out}");
        if jcmd_can_start {
            assert!(status.success(), "{agent:?}: {}", jvm.output_text());
            assert!(out.contains("Hello, world!"), "{agent:?}: {out}");
        } else {
            assert!(!status.success(), "{agent:?}: {}", jvm.output_text());
            let output = jvm.output_text();
            assert!(output.contains("JDWP option syntax error"), "{agent:?}: {output}");
            assert!(!output.contains("Hello, world!"), "{agent:?}: the program must not run: {output}");
        }
    }
}
