//! jdi-rs: the Java Debug Interface in Rust, on tokio.
//!
//! Connect with [`attach`], [`Listener`] or [`launch`] to any JDWP agent (the JDK's or ours) and get a
//! [`VirtualMachine`]. From it come mirrors ([`ReferenceType`], [`Method`], [`ThreadReference`],
//! [`StackFrame`], [`ObjectReference`]...), event requests ([`EventRequest`]) and the event stream
//! ([`EventQueue`]). Every command's layout comes from `jdwp-protocol`; many commands can be in
//! flight at once over one connection, and data that never changes is cached.
//!
//! ```no_run
//! # async fn demo() -> jdi::Result<()> {
//! let vm = jdi::attach("127.0.0.1:5005", None).await?;
//! for thread in vm.all_threads().await? {
//!     println!("{}", thread.name().await?);
//! }
//! vm.dispose().await
//! # }
//! ```

mod connect;
pub mod connection;
pub mod deadlock;
mod error;
pub mod event;
pub mod mirrors;
pub mod names;
mod process;
pub mod profiler;
mod value;
mod vm;

pub use connect::{DEFAULT_TIMEOUT, LaunchOptions, Launched, Listener, ShmemListener, attach, attach_shmem, launch};
pub use error::{JdiError, Result};
pub use event::{
    EventExt, EventQueue, EventRequest, EventRequestManager, EventSet, RequestHandle, RequestId, RequestState,
};
pub use jdwp_protocol as protocol;
pub use jdwp_protocol::commands::event::Event;
pub use jdwp_protocol::{EventKind, Location, StepDepth, StepSize, SuspendPolicy, Tag, ThreadStatus, Value};
pub use mirrors::*;
pub use process::Process;
pub use value::ValueMirror;
pub use vm::{Version, VirtualMachine};
