//! Commands JDI clients still send but jdi-rs prefers newer forms of (`AllClasses` before
//! `AllClassesWithGeneric`, `Fields`, `Methods`, `VariableTable`, `Capabilities`), and whole-VM
//! commands the other suites do not reach (`ClassPaths`, `DisposeObjects`, `Hold/ReleaseEvents`,
//! `SetDefaultStratum`, `Exit`). Each test runs against the JDK's agent and against ours, and checks
//! the answers agree with the newer forms and with what the debuggee is.

use std::time::{Duration, Instant};

use jdwp_protocol::commands::event::Event;
use jdwp_protocol::commands::event_request::{self as er, Modifier};
use jdwp_protocol::commands::{method, reference_type as rt, thread_reference as tr, virtual_machine as vm};
use jdwp_protocol::{EventKind, Location, ReferenceTypeId, SuspendPolicy, ThreadId, TypeTag};
use test_rig::wire::RawSession;
use test_rig::{Agent, Debuggee};

const TIMEOUT: Duration = Duration::from_secs(60);

/// Starts Demo suspended, runs it until `Demo` is prepared, and returns the session and Demo's ID.
fn demo_prepared(agent: Agent) -> (Debuggee, RawSession, ReferenceTypeId) {
    let (jvm, s, class, _) = prepared(agent, "Demo");
    (jvm, s, class)
}

/// Starts `main_class` suspended and runs it until that class is prepared (see the rig).
fn prepared(agent: Agent, main_class: &str) -> (Debuggee, RawSession, ReferenceTypeId, ThreadId) {
    test_rig::wire::run_to_class_prepare(agent, main_class, TIMEOUT)
}

fn finish(jvm: Debuggee, mut s: RawSession) {
    s.send(&vm::Resume {}).unwrap();
    s.send(&vm::Dispose {}).unwrap();
    s.close();
    let status = jvm.wait_for_exit(TIMEOUT).expect("Demo exits");
    assert!(status.success(), "{status:?}\n{}", jvm.output_text());
}

#[test]
fn older_listing_commands_agree_with_their_generic_forms() {
    for (name, agent) in test_rig::wire::both_agents() {
        let (jvm, mut s, demo) = demo_prepared(agent);

        let plain = s.send(&vm::AllClasses {}).unwrap().classes;
        let generic = s.send(&vm::AllClassesWithGeneric {}).unwrap().classes;
        let demo_plain = plain.iter().find(|c| c.type_id == demo).expect("Demo in AllClasses");
        let demo_generic = generic.iter().find(|c| c.type_id == demo).expect("Demo in AllClassesWithGeneric");
        assert_eq!(demo_plain.signature, "LDemo;", "{name}");
        assert_eq!((demo_plain.ref_type_tag, demo_plain.status), (demo_generic.ref_type_tag, demo_generic.status));

        let fields = s.send(&rt::Fields { ref_type: demo }).unwrap().declared;
        let generic_fields = s.send(&rt::FieldsWithGeneric { ref_type: demo }).unwrap().declared;
        assert_eq!(fields.len(), generic_fields.len(), "{name}");
        assert!(fields.iter().any(|f| f.name == "sInts" && f.signature == "[I"), "{name}: {fields:?}");

        let methods = s.send(&rt::Methods { ref_type: demo }).unwrap().declared;
        let tick = methods.iter().find(|m| m.name == "tick").expect("Demo.tick");
        assert_eq!(tick.signature, "(I)I", "{name}");

        let vars = s.send(&method::VariableTable { ref_type: demo, method_id: tick.method_id }).unwrap();
        let names: Vec<&str> = vars.slots.iter().map(|v| v.name.as_str()).collect();
        assert!(names.contains(&"this") && names.contains(&"n") && names.contains(&"doubled"), "{name}: {names:?}");
        assert_eq!(vars.arg_cnt, 2, "{name}: `this` and `n`");

        let old = s.send(&vm::Capabilities {}).unwrap();
        let new = s.send(&vm::CapabilitiesNew {}).unwrap();
        assert_eq!(
            (old.can_get_bytecodes, old.can_watch_field_access, old.can_get_monitor_info),
            (new.can_get_bytecodes, new.can_watch_field_access, new.can_get_monitor_info),
            "{name}"
        );
        finish(jvm, s);
    }
}

#[test]
fn whole_vm_commands_answer() {
    for (name, agent) in test_rig::wire::both_agents() {
        let (jvm, mut s, demo) = demo_prepared(agent);

        let paths = s.send(&vm::ClassPaths {}).unwrap();
        let fixtures = test_rig::fixtures().unwrap().to_string_lossy().into_owned();
        assert!(paths.classpaths.contains(&fixtures), "{name}: {paths:?}");
        assert!(!paths.base_dir.is_empty(), "{name}");

        s.send(&vm::SetDefaultStratum { stratum_id: "Java".into() }).unwrap();
        s.send(&vm::DisposeObjects {
            requests: vec![vm::DisposeRequest { object: jdwp_protocol::ObjectId(demo.0), ref_cnt: 1 }],
        })
        .unwrap();

        finish(jvm, s);
    }
}

#[test]
fn held_events_wait_for_release() {
    for (name, agent) in test_rig::wire::both_agents() {
        // Deadlock starts three threads, prints "deadlocked" once they are stuck, and runs forever.
        let jvm = Debuggee::builder("Deadlock").agent(agent).spawn().expect("Deadlock starts");
        let mut s = RawSession::attach(&jvm.address().to_string(), TIMEOUT).expect("attach");
        assert!(matches!(s.next_composite().events.as_slice(), [Event::VmStart { .. }]));
        let req = s
            .send(&er::Set {
                event_kind: EventKind::ThreadStart,
                suspend_policy: SuspendPolicy::None,
                modifiers: vec![],
            })
            .unwrap();
        s.send(&vm::HoldEvents {}).unwrap();
        s.send(&vm::Resume {}).unwrap();
        // The three threads have started once this line is out, so their events exist by now.
        jvm.wait_for_line("deadlocked", TIMEOUT).expect("Deadlock reaches its deadlock");
        // A command's reply comes after everything the agent sent before it: no event was sent.
        s.send(&vm::Version {}).unwrap();
        assert!(s.events.is_empty(), "{name}: events arrived while held: {:?}", s.events);
        s.send(&vm::ReleaseEvents {}).unwrap();
        // The held starts arrive now (the VM's own threads' too); reading stops at the third of ours,
        // and each read fails on its own if an event never comes.
        let mut names = Vec::new();
        while !["deadlock-A", "deadlock-B", "deadlock-C"].iter().all(|t| names.iter().any(|n| n == t)) {
            for event in s.next_composite().events {
                if let Event::ThreadStart { request_id, thread } = event {
                    assert_eq!(request_id, req.request_id, "{name}");
                    let thread_name =
                        s.send(&jdwp_protocol::commands::thread_reference::Name { thread }).unwrap().thread_name;
                    names.push(thread_name);
                }
            }
        }
    }
}

/// OpenJDK's holdevents002 in a loop: a suspend-all breakpoint is hit while events are held, and
/// the debugger disposes of the connection without releasing them. The held event goes nowhere,
/// and the program must run on and exit (with the JDK's agent and ours). Every other round waits
/// until the thread is stopped in the held event (its top frame at the breakpoint, seen with the VM
/// suspended for a moment); the others dispose of the connection as soon as the program is on its
/// way to the breakpoint, so that the detach meets the event at different points of its delivery.
#[test]
fn held_suspend_all_event_lets_the_program_go_when_the_debugger_disposes() {
    let line = test_rig::fixture_line("HeldBreakpoint.java", "@held-bp").unwrap() as i32;
    for (name, agent) in test_rig::wire::both_agents() {
        for round in 0..6 {
            let (jvm, mut s, class, main) = prepared(agent.clone(), "HeldBreakpoint");
            let methods = s.send(&rt::Methods { ref_type: class }).unwrap().declared;
            let hit = methods.iter().find(|m| m.name == "hit").expect("HeldBreakpoint.hit").method_id;
            let table = s.send(&method::LineTable { ref_type: class, method_id: hit }).unwrap();
            let index = table.lines.iter().find(|l| l.line_number == line).expect("@held-bp").line_code_index;
            let loc =
                Location { type_tag: TypeTag::Class, class_id: class.into(), method_id: hit, index: index as u64 };
            s.send(&er::Set {
                event_kind: EventKind::Breakpoint,
                suspend_policy: SuspendPolicy::All,
                modifiers: vec![Modifier::LocationOnly { loc }],
            })
            .unwrap();
            s.send(&vm::HoldEvents {}).unwrap();
            s.send(&vm::Resume {}).unwrap();
            jvm.wait_for_line("before", TIMEOUT).expect("the program runs to the breakpoint");
            if round % 2 == 1 {
                let deadline = Instant::now() + TIMEOUT;
                loop {
                    s.send(&vm::Suspend {}).unwrap();
                    let top = s.send(&tr::Frames { thread: main, start_frame: 0, length: 1 }).unwrap().frames;
                    s.send(&vm::Resume {}).unwrap();
                    if top.first().is_some_and(|f| f.location == loc) {
                        break;
                    }
                    assert!(Instant::now() < deadline, "{name}: main never reached the breakpoint");
                }
            }
            s.send(&vm::Dispose {}).unwrap();
            s.close();
            let status = jvm.wait_for_exit(TIMEOUT).unwrap_or_else(|| {
                panic!("{name}, round {round}: the program did not exit after Dispose\n{}", jvm.output_text())
            });
            assert!(status.success(), "{name}, round {round}: {status:?}\n{}", jvm.output_text());
            assert!(jvm.output_text().contains("after 1"), "{name}, round {round}:\n{}", jvm.output_text());
        }
    }
}

#[test]
fn exit_ends_the_vm_with_the_code_asked_for() {
    // Any i32 is an exit code: i32::MIN once meant "no exit pending" in our agent, which answered
    // the command and left the VM running (fuzz/corpus/exit-code-i32-min-ignored.txt). The process
    // status is the code's low byte, as for exit(3).
    for code in [42, -1, i32::MIN] {
        for (name, agent) in test_rig::wire::both_agents() {
            let (jvm, mut s, _) = demo_prepared(agent);
            // The VM may exit before or after the reply is written; either is what the spec allows.
            let _ = s.send(&vm::Exit { exit_code: code });
            let status = jvm
                .wait_for_exit(TIMEOUT)
                .unwrap_or_else(|| panic!("{name}: Exit({code}) left the VM running\n{}", jvm.output_text()));
            assert_eq!(status.code(), Some(code & 0xff), "{name}, Exit({code}): {status:?}\n{}", jvm.output_text());
        }
    }
}
