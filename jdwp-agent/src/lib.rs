//! The JDWP agent: a `cdylib` loaded into a HotSpot JVM (`-agentpath:libjdwp_agent.so=...`, or in
//! place of the JDK's `libjdwp.so`) that serves debuggers over JDWP using JVMTI.
//!
//! Status: not built yet. The layout is planned in `ARCHITECTURE.md`: a JVMTI FFI layer, a small VM
//! interface behind which the agent's decisions (event filters, step state, suspend counts, ID
//! tables) are unit-tested, one module per command set with a dispatch table, event handling,
//! step control and thread control in their own modules. The library exports no `Agent_OnLoad`
//! yet, so a JVM refuses to load it rather than running a half-made agent.
