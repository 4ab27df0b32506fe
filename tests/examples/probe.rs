//! The live probe: starts the bundled sample program (`tests/fixtures/Demo.java`) under the JDK's
//! JDWP agent, talks to it packet by packet with `jdwp-protocol` over the socket transport, stops
//! at a breakpoint, and prints what the VM says.
//!
//! Run: `cargo run -p jdwp-test-rig --example probe`

use std::process::ExitCode;
use std::time::Duration;

use jdwp_protocol::commands::event::{Composite, Event};
use jdwp_protocol::commands::event_request::{self as er, Modifier};
use jdwp_protocol::commands::{
    method, reference_type as rt, stack_frame as sf, thread_reference as tr, virtual_machine as vm,
};
use jdwp_protocol::{EventKind, SuspendPolicy, Tag, codec};
use test_rig::Debuggee;
use test_rig::wire::{RawSession, WireError};

const TIMEOUT: Duration = Duration::from_secs(60);

fn main() -> ExitCode {
    match probe() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("probe: {e}");
            ExitCode::FAILURE
        }
    }
}

fn next_event(s: &mut RawSession) -> Result<Composite, Box<dyn std::error::Error>> {
    let packet = s.next_event()?;
    Ok(codec::decode_body(&packet.body, s.id_sizes())?)
}

fn probe() -> Result<(), Box<dyn std::error::Error>> {
    println!("starting Demo under -agentlib:jdwp (server=y, suspend=y)...");
    let jvm = Debuggee::builder("Demo").spawn()?;
    println!("agent listening on {}", jvm.address());
    let mut s = RawSession::attach(&jvm.address().to_string(), TIMEOUT)?;
    next_event(&mut s)?; // VMStart

    let v = s.send(&vm::Version {})?;
    println!("VM: {} {} (JDWP {}.{})", v.vm_name, v.vm_version, v.jdwp_major, v.jdwp_minor);
    println!("ID sizes: {:?}", s.id_sizes());
    let classes = s.send(&vm::AllClassesWithGeneric {})?.classes;
    println!("{} classes loaded at VM start", classes.len());
    let threads = s.send(&vm::AllThreads {})?.threads;
    let names: Result<Vec<String>, WireError> =
        threads.iter().map(|&thread| s.send(&tr::Name { thread }).map(|r| r.thread_name)).collect();
    println!("threads: {}", names?.join(", "));

    // Wait for Demo to be prepared, then break at the first line of Demo.tick.
    let prepare = s.send(&er::Set {
        event_kind: EventKind::ClassPrepare,
        suspend_policy: SuspendPolicy::All,
        modifiers: vec![Modifier::ClassMatch { class_pattern: "Demo".into() }],
    })?;
    s.send(&vm::Resume {})?;
    let Some(Event::ClassPrepare { type_id: demo, .. }) = next_event(&mut s)?.events.into_iter().next() else {
        return Err("expected Demo to be prepared".into());
    };
    s.send(&er::Clear { event_kind: EventKind::ClassPrepare, request_id: prepare.request_id })?;
    let methods = s.send(&rt::Methods { ref_type: demo })?.declared;
    println!("Demo declares {} methods:", methods.len());
    for m in &methods {
        println!("  {}{}", m.name, m.signature);
    }
    let tick = methods.iter().find(|m| m.name == "tick").ok_or("Demo.tick not found")?;
    let lines = s.send(&method::LineTable { ref_type: demo, method_id: tick.method_id })?;
    let first = lines.lines.first().ok_or("Demo.tick has no line table")?;
    let location = jdwp_protocol::Location {
        type_tag: jdwp_protocol::TypeTag::Class,
        class_id: demo.into(),
        method_id: tick.method_id,
        index: first.line_code_index as u64,
    };
    let bp = s.send(&er::Set {
        event_kind: EventKind::Breakpoint,
        suspend_policy: SuspendPolicy::All,
        modifiers: vec![Modifier::LocationOnly { loc: location }, Modifier::Count { count: 3 }],
    })?;
    s.send(&vm::Resume {})?;
    let Some(Event::Breakpoint { thread, .. }) = next_event(&mut s)?.events.into_iter().next() else {
        return Err("expected a breakpoint".into());
    };
    println!("breakpoint hit (3rd call) at Demo.tick, line {}", first.line_number);
    let frames = s.send(&tr::Frames { thread, start_frame: 0, length: -1 })?.frames;
    println!("stack of main: {} frames", frames.len());
    let vars = s.send(&method::VariableTable { ref_type: demo, method_id: tick.method_id })?;
    let n = vars.slots.iter().find(|v| v.name == "n").ok_or("no variable n")?;
    let values = s.send(&sf::GetValues {
        thread,
        frame: frames[0].frame_id,
        slots: vec![sf::SlotRequest { slot: n.slot, sig_byte: Tag::Int }],
    })?;
    println!("local n = {:?}", values.values[0]);

    s.send(&er::Clear { event_kind: EventKind::Breakpoint, request_id: bp.request_id })?;
    s.send(&vm::Resume {})?;
    s.send(&vm::Dispose {})?;
    s.close();
    let status = jvm.wait_for_exit(TIMEOUT).ok_or("Demo did not exit")?;
    println!("Demo's output:\n{}", jvm.stdout_text().trim_end());
    println!("Demo exited with {status}");
    Ok(())
}
