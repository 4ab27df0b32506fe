//! jdi-rs over the shared-memory transport (`dt_shmem`) against real JVMs: our agent, and the
//! JDK's agent with this workspace's `libdt_shmem.so`, and ours loading that library as a
//! transport library under another name (`transport=NAME` for a name not built in). The core of the suite (attach, classes,
//! threads, breakpoint, frames, values, step, invoke) runs over each; then the hygiene rules: a
//! killed debuggee leaves nothing in `/dev/shm`, a name in use is refused, reconnects work.
//!
//! The whole jdi-rs suite can also run over shared memory: `JDI_TEST_TRANSPORT=shmem` (with
//! `JDI_TEST_AGENT=ours` or the JDK's agent + `libdt_shmem.so`).

mod common;

use common::{ShmemAgent, TIMEOUT};
use jdi::{Event, EventRequest, InvokeResult, StepDepth, StepSize, Value};

/// Files in `/dev/shm` belonging to the transport name `name`.
fn shm_leftovers(name: &str) -> Vec<String> {
    let prefix = format!("jdwp-shmem-{name}");
    std::fs::read_dir("/dev/shm")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_owned))
        .filter(|f| f == &prefix || f.starts_with(&format!("{prefix}~")))
        .collect()
}

fn line(marker: &str) -> i32 {
    test_rig::fixture_line("Demo.java", marker).unwrap() as i32
}

async fn core_suite(agent: ShmemAgent) {
    let mut s = common::start_shmem("Demo", &[], agent).await;
    let version = s.vm.version().await.unwrap();
    assert_eq!(version.jdwp_major, test_rig::jdk_feature_version().unwrap() as i32);
    // Classes and threads.
    let strings = s.vm.classes_by_name("java.lang.String").await.unwrap();
    assert_eq!(strings.len(), 1);
    let threads = s.vm.all_threads().await.unwrap();
    let mut names = Vec::new();
    for t in &threads {
        names.push(t.name().await.unwrap());
    }
    assert!(names.iter().any(|n| n == "main"), "{names:?}");

    // Breakpoint, frames, values.
    let (_, thread) = s.run_to_marker("Demo", "@tick-first").await;
    let frame = thread.frame(0).await.unwrap();
    let at = s.vm.resolve_location(frame.location()).await.unwrap();
    assert_eq!((at.method.name(), at.line_number().await.unwrap()), ("tick", line("@tick-first")));
    assert_eq!(frame.get_value_by_name("n").await.unwrap(), Some(Value::Int(0)));
    let this = frame.this_object().await.unwrap().expect("tick is an instance method");
    assert_eq!(this.reference_type().await.unwrap().name(), "Demo");
    s.vm.clear_all_breakpoints().await.unwrap();

    // Step over one line.
    let step = s.vm.create_event_request(EventRequest::step(thread.id(), StepSize::Line, StepDepth::Over));
    step.enable().await.unwrap();
    s.vm.resume().await.unwrap();
    let set = s.events.wait_for(TIMEOUT, |e| step.matches(e)).await.unwrap();
    let at = s.vm.resolve_location(set.location().unwrap()).await.unwrap();
    assert_eq!(at.line_number().await.unwrap(), line("@tick-add"));
    step.delete().await.unwrap();

    // Invoke: the static square(7) in the stopped thread.
    let demo = this.reference_type().await.unwrap().as_class().unwrap();
    let square = demo.methods_by_name("square").await.unwrap().remove(0);
    match demo.invoke_method(&thread, &square, vec![Value::Long(7)], 0).await.unwrap() {
        InvokeResult::Returned(v) => assert_eq!(v, Value::Long(49)),
        InvokeResult::Threw(e) => panic!("square threw {e:?}"),
    }
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn core_suite_with_our_agent() {
    core_suite(ShmemAgent::Ours).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn core_suite_with_the_jdk_agent_and_libdt_shmem() {
    core_suite(ShmemAgent::JdkWithOurTransport).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn core_suite_with_our_agent_and_libdt_shmem_as_a_transport_library() {
    core_suite(ShmemAgent::OursWithLibrary).await;
}

async fn killed_debuggee_leaves_nothing(agent: ShmemAgent) {
    let name = common::unique_shmem_name("killed");
    let mut jvm = common::spawn_shmem("Demo", &[], agent, &name);
    let vm = jdi::attach_shmem(&name, Some(TIMEOUT)).await.unwrap();
    vm.version().await.unwrap();
    // While connected: no connection segment (unlinked once both mapped it); the rendezvous is
    // there for our agent, which keeps listening, and not for the JDK's, which stops listening
    // while a debugger is connected (ours keeps a library listening too).
    let expected = if agent == ShmemAgent::JdkWithOurTransport { 0 } else { 1 };
    assert_eq!(shm_leftovers(&name).len(), expected, "{:?}", shm_leftovers(&name));
    jvm.kill();
    // Commands fail once the death is noticed (the connection ends); they do not hang. (A command
    // sent before that may still be written into the ring; its reply never comes, and the
    // connection's end fails it.)
    let result = tokio::time::timeout(TIMEOUT, vm.all_threads()).await;
    assert!(matches!(result, Ok(Err(_))), "a command to a killed VM must fail, not hang: {result:?}");
    assert!(vm.all_threads().await.is_err());
    // Noticing the dead VM, the debugger removed the segment it left.
    assert!(shm_leftovers(&name).is_empty(), "{:?}", shm_leftovers(&name));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_debuggee_leaves_nothing_in_dev_shm() {
    killed_debuggee_leaves_nothing(ShmemAgent::Ours).await;
    killed_debuggee_leaves_nothing(ShmemAgent::JdkWithOurTransport).await;
    killed_debuggee_leaves_nothing(ShmemAgent::OursWithLibrary).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_in_use_is_refused_and_sequential_reconnects_work() {
    let name = common::unique_shmem_name("inuse");
    // ReattachLoop works until its stop file exists, so the VM outlives every debugger below.
    let stop_dir = std::env::temp_dir().join(format!("jdi-shmem-{name}"));
    std::fs::create_dir_all(&stop_dir).unwrap();
    let stop_file = stop_dir.join("stop");
    let jvm = common::spawn_shmem("ReattachLoop", &[stop_file.to_str().unwrap()], ShmemAgent::Ours, &name);
    // A second listener of the same name: a clear error naming the owner.
    let err = jdi::ShmemListener::bind(&name).err().expect("the name is taken");
    let text = err.to_string();
    assert!(text.contains(&format!("in use by process {}", jvm.pid())), "{text}");

    // Several debuggers one after the other; the first takes the VM start event.
    for round in 0..3 {
        let vm = jdi::attach_shmem(&name, Some(TIMEOUT)).await.unwrap();
        if round == 0 {
            let mut events = vm.event_queue().unwrap();
            let set = events.next_within(TIMEOUT).await.unwrap();
            assert!(matches!(set.events.as_slice(), [Event::VmStart { .. }]), "{set:?}");
        }
        // While one is attached, another is turned away.
        let busy = jdi::attach_shmem(&name, Some(std::time::Duration::from_millis(500))).await;
        assert!(busy.is_err(), "a second debugger got in");
        assert_eq!(vm.version().await.unwrap().jdwp_major, test_rig::jdk_feature_version().unwrap() as i32);
        vm.dispose().await.unwrap();
    }
    // The program ends by itself; the segment goes with the VM.
    std::fs::write(&stop_file, b"").unwrap();
    let status = tokio::task::spawn_blocking(move || jvm.wait_for_exit(TIMEOUT)).await.unwrap();
    assert!(status.is_some_and(|s| s.success()), "{status:?}");
    assert!(shm_leftovers(&name).is_empty(), "{:?}", shm_leftovers(&name));
}

/// `server=n`: the agent attaches to a jdi-rs listener over shared memory (both agents).
async fn agent_attaches_to_our_listener(agent: ShmemAgent) {
    let name = common::unique_shmem_name("listen");
    let listener = jdi::ShmemListener::bind(&name).unwrap();
    let builder = test_rig::Debuggee::builder("Hello").arg("listened").expect_listening(false);
    let builder = agent.configure(builder, &format!("server=n,suspend=y,address={name}"));
    let jvm = builder.spawn().unwrap();
    let vm = listener.accept(Some(TIMEOUT)).await.unwrap();
    let mut events = vm.event_queue().unwrap();
    let set = events.next_within(TIMEOUT).await.unwrap();
    assert!(matches!(set.events.as_slice(), [Event::VmStart { .. }]), "{set:?}");
    vm.resume().await.unwrap();
    let (line, status) = tokio::task::spawn_blocking(move || {
        let line = jvm.wait_for_line("arg: listened", TIMEOUT).unwrap();
        (line, jvm.wait_for_exit(TIMEOUT))
    })
    .await
    .unwrap();
    assert_eq!(line, "arg: listened");
    assert!(status.is_some_and(|s| s.success()), "{status:?}");
    drop(listener);
    assert!(shm_leftovers(&name).is_empty(), "{:?}", shm_leftovers(&name));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_n_agents_attach_to_a_jdi_rs_listener() {
    agent_attaches_to_our_listener(ShmemAgent::Ours).await;
    agent_attaches_to_our_listener(ShmemAgent::JdkWithOurTransport).await;
    agent_attaches_to_our_listener(ShmemAgent::OursWithLibrary).await;
}

/// Without `address=`, the agent makes up a name and prints it; a debugger attaches by that name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listener_without_address_prints_a_generated_name() {
    for agent in [ShmemAgent::Ours, ShmemAgent::JdkWithOurTransport, ShmemAgent::OursWithLibrary] {
        let builder = test_rig::Debuggee::builder("Hello").expect_listening(false);
        let jvm = agent.configure(builder, "server=y,suspend=y").spawn().unwrap();
        let announced = format!("Listening for transport {} at address: ", agent.transport());
        let line = jvm.wait_for_line(&announced, TIMEOUT).unwrap();
        let name = line.rsplit_once("address: ").unwrap().1.trim().to_owned();
        assert!(name.starts_with(&format!("javadebug-{}-", jvm.pid())), "{line}");
        let vm = jdi::attach_shmem(&name, Some(TIMEOUT)).await.unwrap();
        assert_eq!(vm.version().await.unwrap().jdwp_major, test_rig::jdk_feature_version().unwrap() as i32);
        vm.dispose().await.unwrap();
        let status = tokio::task::spawn_blocking(move || jvm.wait_for_exit(TIMEOUT)).await.unwrap();
        assert!(status.is_some_and(|s| s.success()), "{agent:?}: {status:?}");
        assert!(shm_leftovers(&name).is_empty(), "{:?}", shm_leftovers(&name));
    }
}
