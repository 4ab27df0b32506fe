//! Our option parser accepts and refuses what the JDK's own agent does, checked by running
//! `java -agentlib:jdwp=<options> -version` for each case.
//!
//! Left out on purpose: `pause=y` (the JDK's waits for a native debugger), `dt_shmem` (reserved
//! here, absent from Linux JDKs), `includevirtualthreads` (JDK 19+, accepted here), and options
//! that make the JDK attach somewhere.
//!
//! A transport name that is not built in is not refused by the parser: like the JDK's agent, ours
//! looks for its library when debugging starts. For those, our verdict is that of our agent
//! starting a real JVM.

use std::process::Command;

use jdwp_agent::options::{Options, Transport};

/// Whether the JDK's agent starts with these options (it refuses with a non-zero exit).
fn jdk_accepts(options: &str) -> bool {
    starts(&format!("-agentlib:jdwp={options}"))
}

/// Whether our agent accepts these options: the parser's verdict, and for a transport library or
/// `onjcmd` (an option of JDK 23 and older only, so the parser's verdict depends on the VM),
/// whether a JVM with our agent starts.
fn ours_accepts(options: &str) -> bool {
    let parsed = Options::parse(options);
    if matches!(parsed, Ok(Options { transport: Transport::Library(_), .. })) || options.contains("onjcmd=") {
        let agent = test_rig::our_agent_library().expect("our agent");
        return starts(&format!("-agentpath:{}={options}", agent.display()));
    }
    parsed.is_ok()
}

/// Whether `java <agent option> -version` exits with 0.
fn starts(agent_option: &str) -> bool {
    let java = test_rig::java_tool("java").expect("a JDK");
    let out = Command::new(java)
        .arg(agent_option)
        .arg("-version")
        .env_remove("_JAVA_JDWP_OPTIONS")
        .env_remove("JAVA_TOOL_OPTIONS")
        .output()
        .expect("run java");
    out.status.success()
}

#[test]
fn accept_and_refuse_like_the_jdk() {
    const B: &str = "transport=dt_socket,server=y,suspend=n";
    let cases: Vec<String> = [
        "",
        "help",
        "transport=dt_socket,server=y,suspend=n",
        "transport=dt_socket,server=y,suspend=n,",
        "transport=dt_socket,server=y,suspend=n,,",
        ",transport=dt_socket,server=y,suspend=n",
        "server=y,suspend=n",
        "transport=dt_socket,transport=dt_socket,server=y,suspend=n",
        "transport=dt_foo,server=y,suspend=n",
        "transport=dt_socket,server=n,suspend=n",
        "transport=dt_socket,server=Y,suspend=n",
        "transport=dt_socket,server=y,suspend=yes",
        "transport=dt_socket,server=y,onjcmd=y",
        "help,transport=dt_socket",
    ]
    .into_iter()
    .map(String::from)
    .chain(
        [
            "bogus=1",
            "help",
            "quiet",
            "quiet=",
            "=y",
            "quiet=y",
            "quiet=n",
            "mutf8=y",
            "mutf8=x",
            "strict=y",
            "strict=x",
            "stdalloc=n",
            "exitpause=y",
            "precrash=n",
            "errorexit=y",
            "assert=y",
            "coredump=n",
            "timeout=1000",
            "timeout=-5",
            "timeout=12abc",
            "timeout=",
            "logflags=0x10",
            "logflags=junk",
            "debugflags=1",
            "onthrow=java.lang.Foo",
            "onuncaught=y",
            "onuncaught=q",
            "onuncaught=n",
            "onthrow=x,launch=echo",
            "onjcmd=n",
            "onjcmd=y,launch=echo",
            "allow=*",
            "allow=127.0.0.1",
            "address=0",
            "address=*:0",
            "address=",
            "suspend=y,suspend=n",
            "Suspend=n",
            "fatal=y",
            "explain=y",
        ]
        .into_iter()
        .map(|extra| format!("{B},{extra}")),
    )
    .collect();
    // A JVM per case, a few at a time.
    let verdicts: Vec<bool> = std::thread::scope(|scope| {
        let chunks: Vec<_> = cases
            .chunks(cases.len().div_ceil(8))
            .map(|chunk| scope.spawn(move || chunk.iter().map(|o| jdk_accepts(o)).collect::<Vec<_>>()))
            .collect();
        chunks.into_iter().flat_map(|c| c.join().unwrap()).collect()
    });
    let mut disagreements = Vec::new();
    for (options, jdk) in cases.iter().zip(verdicts) {
        let ours = ours_accepts(options);
        if ours != jdk {
            disagreements.push(format!("{options:?}: JDK {}, ours {}", verdict(jdk), verdict(ours)));
        }
    }
    assert!(disagreements.is_empty(), "disagreements:\n{}", disagreements.join("\n"));
}

fn verdict(accepted: bool) -> &'static str {
    if accepted { "accepts" } else { "refuses" }
}
