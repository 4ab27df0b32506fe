//! A first end-to-end check of jdi-rs against the agent under test (the JDK's unless
//! `JDI_TEST_AGENT` says otherwise).

mod common;

use jdi::Value;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn breakpoint_in_tick_shows_its_argument_and_this() {
    let mut s = common::start("Demo", &[]).await;
    let version = s.vm.version().await.unwrap();
    // The JDWP version is the running VM's (17 on JDK 17, 25 on JDK 25), with either agent.
    assert_eq!(version.jdwp_major, test_rig::jdk_feature_version().unwrap() as i32);

    let (_, thread) = s.run_to_marker("Demo", "@tick-first").await;
    let frame = thread.frame(0).await.unwrap();
    let loc = s.vm.resolve_location(frame.location()).await.unwrap();
    assert_eq!(loc.declaring_type.name(), "Demo");
    assert_eq!(loc.method.name(), "tick");
    assert_eq!(loc.line_number().await.unwrap(), test_rig::fixture_line("Demo.java", "@tick-first").unwrap() as i32);
    // First call: tick(0).
    assert_eq!(frame.get_value_by_name("n").await.unwrap(), Some(Value::Int(0)));
    let this = frame.this_object().await.unwrap().expect("tick is an instance method");
    assert_eq!(this.reference_type().await.unwrap().name(), "Demo");
    assert_eq!(thread.name().await.unwrap(), "main");
    s.finish().await;
}
