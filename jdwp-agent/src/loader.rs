//! Loading: `Agent_OnLoad` (options, capabilities, callbacks) and `VMInit` (the agent's threads,
//! the transport, the startup suspension).

use std::ffi::{CStr, CString, c_char, c_void};
use std::io::Write;
use std::sync::atomic::Ordering;

use crate::jvmti::sys::{jlocation, jthread};
use jdwp_protocol::{ErrorCode, SuspendPolicy};
use jni_sys::{JNI_ERR, JNI_OK, JNIEnv, JavaVM, jboolean, jint, jmethodID, jobject};

use crate::agent::helper::EventHelper;
use crate::agent::{Agent, GlobalRef, KnownClasses, agent, install};
use crate::agent_thread::start_agent_thread;
use crate::jni::{JavaVm, Jni};
use crate::jvmti::Jvmti;
use crate::jvmti::sys::{self, jvmtiCapabilities, jvmtiEnv, jvmtiEventCallbacks};
use crate::options::{Options, Transport, help_text};
use crate::raw::RawEvent;
use crate::runtime::JvmtiVersion;
use crate::transport::{Connection, Listener, library};

/// Called by the VM when it loads the library (`-agentpath`, `-agentlib`, `-Xrun`).
///
/// # Safety
///
/// Called by the VM with a valid `JavaVM` and a NUL-terminated option string (or null).
#[unsafe(no_mangle)]
pub unsafe extern "system" fn Agent_OnLoad(vm: *mut JavaVM, options: *mut c_char, _reserved: *mut c_void) -> jint {
    let text = if options.is_null() {
        String::new()
    } else {
        // SAFETY: the VM passes a NUL-terminated string that lives for this call.
        unsafe { CStr::from_ptr(options) }.to_string_lossy().into_owned()
    };
    crate::guard(JNI_ERR, || match load(vm, &text) {
        Ok(()) => JNI_OK,
        Err(message) => {
            eprintln!("{message}");
            JNI_ERR
        }
    })
}

/// Called by the VM when it unloads the library.
///
/// # Safety
///
/// Called by the VM; the argument is not used.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn Agent_OnUnload(_vm: *mut JavaVM) {}

fn load(vm: *mut JavaVM, text: &str) -> Result<(), String> {
    if agent().is_some() {
        // The JDK's agent's words (DoubleAgentTest looks for them).
        return Err(
            "ERROR: Cannot load this JVM TI agent twice, check your java command line for duplicate jdwp options."
                .into(),
        );
    }
    // SAFETY: the VM passed us its JavaVM.
    let vm = unsafe { JavaVm::from_raw(vm) }.ok_or("ERROR: JDWP: no JavaVM")?;
    let jvmti = vm.get_jvmti(sys::JVMTI_VERSION_11).map_err(|e| format!("ERROR: JDWP unable to access JVMTI: {e}"))?;
    // Which options there are depends on the VM (`onjcmd`: JDK 23 and older).
    let runtime = jvmti.get_version_number().map_or(JvmtiVersion::FALLBACK, JvmtiVersion::from_number);
    let full = crate::options::with_env_options(text, std::env::var(crate::options::ENV_VAR).ok().as_deref());
    let options = Options::parse_on(&full, runtime).map_err(|e| e.startup_message())?;
    if options.help {
        println!("{}", help_text());
        let _ = std::io::stdout().flush();
        // Like the JDK's agent: print the help and stop the VM from starting.
        return Err(String::new());
    }
    for warning in &options.warnings {
        eprintln!("WARNING: JDWP: {warning}");
    }
    if !matches!(options.transport, Transport::Library(_)) {
        // A library reads `allow` itself (the JDK's agent passes it through unread).
        crate::allow::AllowList::parse(options.allow.as_deref()).map_err(|e| format!("ERROR: JDWP {e}"))?;
    }
    crate::logging::init(&options);

    add_capabilities(jvmti).map_err(|e| format!("ERROR: JDWP unable to get necessary JVMTI capabilities: {e}"))?;
    let agent = install(Agent::new(jvmti, vm, options)).map_err(|e| format!("ERROR: JDWP: {e:?}"))?;
    // The profiler's own JVMTI environment, while every capability can still be had.
    crate::profiling::on_load(agent);

    let mut callbacks: jvmtiEventCallbacks = unsafe_zeroed_callbacks();
    callbacks.VMInit = Some(on_vm_init);
    callbacks.VMDeath = Some(crate::callbacks::on_vm_death);
    callbacks.ThreadStart = Some(crate::callbacks::on_thread_start);
    callbacks.ThreadEnd = Some(crate::callbacks::on_thread_end);
    // Posted only once enabled, which needs JVMTI 21 (see `events::modes`).
    callbacks.VirtualThreadStart = Some(crate::callbacks::on_virtual_thread_start);
    callbacks.VirtualThreadEnd = Some(crate::callbacks::on_virtual_thread_end);
    callbacks.ClassPrepare = Some(crate::callbacks::on_class_prepare);
    callbacks.Breakpoint = Some(crate::callbacks::on_breakpoint);
    callbacks.SingleStep = Some(crate::callbacks::on_single_step);
    callbacks.FramePop = Some(crate::callbacks::on_frame_pop);
    callbacks.ExceptionCatch = Some(crate::callbacks::on_exception_catch);
    callbacks.MethodEntry = Some(crate::callbacks::on_method_entry);
    callbacks.MethodExit = Some(crate::callbacks::on_method_exit);
    callbacks.Exception = Some(on_exception);
    callbacks.FieldAccess = Some(crate::callbacks::on_field_access);
    callbacks.FieldModification = Some(crate::callbacks::on_field_modification);
    callbacks.MonitorContendedEnter = Some(crate::callbacks::on_monitor_contended_enter);
    callbacks.MonitorContendedEntered = Some(crate::callbacks::on_monitor_contended_entered);
    callbacks.MonitorWait = Some(crate::callbacks::on_monitor_wait);
    callbacks.MonitorWaited = Some(crate::callbacks::on_monitor_waited);
    agent.jvmti.set_event_callbacks(&callbacks).map_err(|e| format!("ERROR: JDWP: {e}"))?;
    for event in [sys::JVMTI_EVENT_VM_INIT, sys::JVMTI_EVENT_VM_DEATH] {
        agent
            .jvmti
            .set_event_notification_mode(true, event, std::ptr::null_mut())
            .map_err(|e| format!("ERROR: JDWP: {e}"))?;
    }
    Ok(())
}

fn unsafe_zeroed_callbacks() -> jvmtiEventCallbacks {
    // SAFETY: the struct is a plain table of `Option<fn>`; all-zero bytes are all `None`.
    unsafe { std::mem::zeroed() }
}

/// Asks for what a debugger needs, as far as this VM offers it.
fn add_capabilities(jvmti: Jvmti) -> Result<(), crate::jvmti::JvmtiError> {
    let mut wanted = jvmtiCapabilities::default();
    wanted
        .set_can_tag_objects(true)
        .set_can_generate_field_modification_events(true)
        .set_can_generate_field_access_events(true)
        .set_can_get_bytecodes(true)
        .set_can_get_synthetic_attribute(true)
        .set_can_get_owned_monitor_info(true)
        .set_can_get_current_contended_monitor(true)
        .set_can_get_monitor_info(true)
        .set_can_pop_frame(true)
        .set_can_redefine_classes(true)
        .set_can_signal_thread(true)
        .set_can_get_source_file_name(true)
        .set_can_get_line_numbers(true)
        .set_can_get_source_debug_extension(true)
        .set_can_access_local_variables(true)
        .set_can_maintain_original_method_order(true)
        .set_can_generate_single_step_events(true)
        .set_can_generate_exception_events(true)
        .set_can_generate_frame_pop_events(true)
        .set_can_generate_breakpoint_events(true)
        .set_can_suspend(true)
        .set_can_generate_method_entry_events(true)
        .set_can_generate_method_exit_events(true)
        .set_can_generate_monitor_events(true)
        .set_can_generate_garbage_collection_events(true)
        .set_can_force_early_return(true)
        .set_can_get_owned_monitor_stack_depth_info(true)
        .set_can_get_constant_pool(true)
        .set_can_get_thread_cpu_time(true)
        // JVMTI 21+: virtual threads as threads (suspend, frames, locals, VirtualThreadStart/End).
        // It costs nothing by itself (those events are posted only while enabled); an older VM
        // never offers it, and the intersection below drops it there.
        .set_can_support_virtual_threads(true);
    let potential = jvmti.get_potential_capabilities()?;
    jvmti.add_capabilities(&wanted.intersection(&potential))
}

/// `VMInit`: the VM is live. Start the agent's threads and the transport; with `suspend=y`, wait
/// for a debugger and stop everything with a VM start event.
unsafe extern "system" fn on_vm_init(_: *mut jvmtiEnv, jni_env: *mut JNIEnv, thread: jthread) {
    crate::guard((), || {
        let Some(agent) = agent() else { return };
        // SAFETY: the VM passes the calling thread's JNI environment.
        let Some(jni) = (unsafe { Jni::from_raw(jni_env) }) else { return };
        if agent.options.onjcmd {
            // Debugging starts when jcmd asks (see `debugInit_startDebuggingViaCommand`).
            let _ = agent.startup.jcmd.compare_exchange(
                JcmdStart::NotReady as u8,
                JcmdStart::Ready as u8,
                Ordering::AcqRel,
                Ordering::Acquire,
            );
            return;
        }
        if agent.options.onthrow.is_some() || agent.options.onuncaught {
            // Debugging starts at the first matching exception (see `deferred_exception`).
            agent.startup.deferred.store(true, Ordering::Release);
            if let Err(e) =
                agent.jvmti.set_event_notification_mode(true, sys::JVMTI_EVENT_EXCEPTION, std::ptr::null_mut())
            {
                eprintln!("ERROR: JDWP: cannot watch for the onthrow/onuncaught exception: {e}");
                std::process::exit(2);
            }
            return;
        }
        if let Err(StartFailure(message)) = start(agent, jni, thread, Trigger::VmInit) {
            eprintln!("{message}");
            // Like the JDK's agent, an agent that cannot start its transport takes the VM down
            // rather than run undebuggable.
            std::process::exit(2);
        }
    });
}

/// Whether debugging still waits for its `onthrow`/`onuncaught` exception.
pub(crate) fn deferred_start_pending() -> bool {
    agent().is_some_and(|agent| agent.startup.deferred.load(Ordering::Acquire))
}

/// The Exception event: with `onthrow`/`onuncaught` and no debugger yet, maybe the exception that
/// starts one ([`deferred_exception`]); otherwise the debugger's ([`crate::callbacks::on_exception`]).
#[allow(clippy::too_many_arguments)]
unsafe extern "system" fn on_exception(
    env: *mut jvmtiEnv,
    jni_env: *mut JNIEnv,
    thread: jthread,
    method: jmethodID,
    location: jlocation,
    exception: jobject,
    catch_method: jmethodID,
    catch_location: jlocation,
) {
    if deferred_start_pending() {
        crate::guard((), || {
            let thrown = ThrownException {
                method: method as usize,
                location,
                exception,
                catch: (!catch_method.is_null()).then_some((catch_method as usize, catch_location)),
            };
            deferred_exception(jni_env, thread, thrown);
        });
        return;
    }
    // SAFETY: the VM's arguments, passed on unchanged.
    unsafe {
        crate::callbacks::on_exception(env, jni_env, thread, method, location, exception, catch_method, catch_location)
    }
}

/// The Exception callback while the start is deferred: if this exception is the one the options
/// name (`onthrow`: its class, exactly, as the JDK's agent compares it; `onuncaught`: no catch
/// location), start debugging now, from this thread, as the JDK's agent does: the transport, the
/// `launch=` command, and with `suspend=y` an Exception event (request ID 0) for it once a debugger is on.
pub(crate) fn deferred_exception(jni_env: *mut JNIEnv, thread: jthread, thrown: ThrownException) {
    let Some(agent) = agent() else { return };
    let (exception, caught) = (thrown.exception, thrown.catch.is_some());
    // SAFETY: the VM passes the calling thread's JNI environment.
    let Some(jni) = (unsafe { Jni::from_raw(jni_env) }) else { return };
    let uncaught_match = agent.options.onuncaught && !caught;
    let thrown_match = agent.options.onthrow.as_deref().is_some_and(|name| {
        let Ok(class) = jni.get_object_class(exception) else { return false };
        let signature = agent.jvmti.get_class_signature(class).map(|(sig, _)| sig);
        jni.delete_local_ref(class);
        signature.is_ok_and(|sig| sig == format!("L{};", name.replace('.', "/")))
    });
    if !(uncaught_match || thrown_match) {
        return;
    }
    // Only the first matching exception starts debugging, whichever thread throws it.
    if agent.startup.deferred.compare_exchange(true, false, Ordering::AcqRel, Ordering::Acquire).is_err() {
        return;
    }
    // No request needs exception events yet; the debugger's requests enable them again.
    let _ = agent.jvmti.set_event_notification_mode(false, sys::JVMTI_EVENT_EXCEPTION, std::ptr::null_mut());
    if let Err(StartFailure(message)) = start(agent, jni, thread, Trigger::Exception(thrown)) {
        eprintln!("{message}");
        std::process::exit(2);
    }
}

/// An exception as JVMTI's Exception event describes it.
pub(crate) struct ThrownException {
    pub method: usize,
    pub location: i64,
    pub exception: jobject,
    /// Where it will be caught; `None` if uncaught.
    pub catch: Option<(usize, i64)>,
}

/// What started debugging, and so what the first debugger hears first (with `suspend=y`): a VM
/// start event, or the exception that `onthrow`/`onuncaught` waited for (request ID 0), as the
/// JDK's agent reports it.
enum Trigger {
    VmInit,
    Exception(ThrownException),
}

/// Where `onjcmd=y` stands (`agent.startup.jcmd`): jcmd can start debugging once the VM is
/// initialized, and only once.
#[repr(u8)]
enum JcmdStart {
    /// 0: where `Startup::jcmd` (zeroed) starts.
    NotReady = 0,
    Ready = 1,
    Started = 2,
}

/// `jcmd <pid> VM.start_java_debugging`: HotSpot looks this symbol up in the library loaded as
/// `-agentlib:jdwp` (only under that name: an `-agentpath` agent is not found) and calls it on
/// its attach listener thread. Returns null when debugging runs (started now, or before:
/// `first_start` tells which) with the transport and address filled in; otherwise the reason, a
/// static string that jcmd prints. The words are the JDK agent's, as its users know them.
///
/// # Safety
///
/// Called by the VM with the calling thread's JNI environment; the out-pointers are null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn debugInit_startDebuggingViaCommand(
    jni_env: *mut JNIEnv,
    thread: jthread,
    transport_name: *mut *const c_char,
    address: *mut *const c_char,
    first_start: *mut jboolean,
) -> *const c_char {
    const NOT_READY: &CStr = c"Not yet initialized. Try again later.";
    const NOT_ENABLED: &CStr = c"Starting debugging via jcmd was not enabled via the onjcmd option of the jdwp agent.";
    const FAILED: &CStr = c"The debugging back end could not start (see the VM's error output).";
    crate::guard(FAILED.as_ptr(), || {
        let Some(agent) = agent() else { return NOT_READY.as_ptr() };
        if !agent.options.onjcmd {
            return NOT_ENABLED.as_ptr();
        }
        let first = match agent.startup.jcmd.compare_exchange(
            JcmdStart::Ready as u8,
            JcmdStart::Started as u8,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => true,
            Err(state) if state == JcmdStart::Started as u8 => false,
            Err(_) => return NOT_READY.as_ptr(),
        };
        if first {
            // SAFETY: the VM passes the calling thread's JNI environment.
            let Some(jni) = (unsafe { Jni::from_raw(jni_env) }) else { return FAILED.as_ptr() };
            // `onjcmd` implies `suspend=n`: nothing waits here for a debugger.
            if let Err(StartFailure(message)) = start(agent, jni, thread, Trigger::VmInit) {
                eprintln!("{message}");
                return FAILED.as_ptr();
            }
        }
        if !first_start.is_null() {
            // SAFETY: checked non-null; the VM passes a valid out-pointer.
            unsafe { *first_start = first };
        }
        if let Some((name, printed)) = agent.startup.started_at.get()
            && !transport_name.is_null()
            && !address.is_null()
        {
            // SAFETY: checked non-null; the strings live as long as the agent, which is never dropped.
            unsafe {
                *transport_name = name.as_ptr();
                *address = printed.as_ptr();
            }
        }
        std::ptr::null()
    })
}

/// Why debugging could not start: all the lines to print before the VM exits.
struct StartFailure(String);

impl From<String> for StartFailure {
    fn from(message: String) -> StartFailure {
        StartFailure(format!("ERROR: JDWP: {message}"))
    }
}

fn start(agent: &'static Agent, jni: Jni, init_thread: jthread, trigger: Trigger) -> Result<(), StartFailure> {
    let known = load_known_classes(jni).map_err(|e| format!("cannot find core classes: {e:?}"))?;
    let _ = agent.known.set(known);
    if agent.options.include_virtual_threads {
        // Virtual threads are kept for `AllThreads` from now on (VirtualThreadStart on).
        let _setup = crate::events::setup(agent);
        crate::events::modes::sync(agent);
    }

    let transport = &agent.options.transport;
    let address = agent.options.address.clone().unwrap_or_else(|| "127.0.0.1:0".into());
    // A library's failures read as the JDK's agent's, which names the transport and the stage.
    let library_failure = |e: library::InitError| StartFailure(e.startup_message(transport.name()));
    let init_failure = |e: jdwp_transports::TransportError| library_failure(library::InitError::from(e));
    if let Transport::Library(name) = transport {
        let boot_path = agent.jvmti.get_system_property("sun.boot.library.path").ok();
        let allow = agent.options.server.then_some(agent.options.allow.as_deref());
        // SAFETY: the VM's own JavaVM, on the VMInit (or exception) thread, which the VM attached.
        unsafe { library::open(name, boot_path.as_deref(), agent.vm.as_raw().cast(), allow) }
            .map_err(library_failure)?;
    }
    let listener = if agent.options.server {
        let mut listener = match Listener::bind(transport, agent.options.address.as_deref()) {
            Ok(listener) => listener,
            Err(e) if matches!(transport, Transport::Library(_)) => return Err(init_failure(e)),
            Err(e) => return Err(format!("transport error: {e}").into()),
        };
        // A peer that connects and never completes the handshake must not lock real debuggers out.
        listener.set_handshake_timeout(Some(HANDSHAKE_TIMEOUT));
        let printed = listener.printed_address();
        // Like the JDK's agent: with `launch=` the address goes to the launched debugger instead.
        if !agent.options.quiet && agent.options.launch.is_none() {
            // Byte-identical to the JDK's line: IDEs and scripts parse it.
            println!("Listening for transport {} at address: {printed}", transport.name());
            let _ = std::io::stdout().flush();
        }
        let _ = agent.startup.started_at.set((
            CString::new(transport.name()).unwrap_or_default(),
            CString::new(printed.as_str()).unwrap_or_default(),
        ));
        // For attaching by process id (JDI's ProcessAttachingConnector), as the JDK's agent does.
        let published = format!("{}:{printed}", transport.name());
        if let Err(e) = crate::agent_properties::set(jni, crate::agent_properties::LISTENER_ADDRESS, &published) {
            tracing::debug!(?e, "listener address not published");
        }
        Some(listener)
    } else {
        None
    };
    // The JDK's agent attaches through a library before it goes on, and a failure there stops
    // the VM; built-in transports attach on the session thread.
    let attached = match (transport, &listener) {
        (Transport::Library(_), None) => {
            Some(crate::transport::attach(transport, &address, agent.options.timeout).map_err(init_failure)?)
        }
        _ => None,
    };

    if let Some(command) = &agent.options.launch {
        // `launch=cmd`: start the debugger with the transport's name and address appended, as the
        // JDK's agent does (its address is the one we listen on, or the one we attach to).
        let address = match &listener {
            Some(l) => l.printed_address(),
            None => address.clone(),
        };
        launch_debugger(command, transport.name(), &address)?;
    }

    let jobs = Box::new(agent.gate.take_inbox().ok_or_else(|| "the event helper started twice".to_string())?);
    let _ = agent.helper.set(EventHelper::new(&agent.gate));
    start_agent_thread(agent, jni, "JDWP Event Helper Thread", helper_main, Box::into_raw(jobs).cast())?;
    // A library was given `allow` when it was loaded.
    let allow = match transport {
        Transport::Library(_) => crate::allow::AllowList::parse(None)?,
        _ => crate::allow::AllowList::parse(agent.options.allow.as_deref())?,
    };
    let session_args = Box::new(SessionArgs { listener, attached, address, allow });
    start_agent_thread(
        agent,
        jni,
        &format!("JDWP Transport Listener: {}", transport.name()),
        session_main,
        Box::into_raw(session_args).cast(),
    )?;

    if agent.options.suspend {
        agent.wait_for_first_debugger();
        let global = |obj| jni.new_global_ref(obj).map(GlobalRef).map_err(|e| format!("{e}"));
        let thread = global(init_thread)?;
        let events = smallvec::smallvec![match trigger {
            Trigger::VmInit => RawEvent::VmStart { request_id: 0, thread },
            Trigger::Exception(e) => RawEvent::Exception {
                request_id: 0,
                thread,
                method: e.method,
                index: e.location,
                exception: global(e.exception)?,
                catch: e.catch,
            },
        }];
        crate::callbacks::report(agent, jni, init_thread, SuspendPolicy::All, events);
    }
    Ok(())
}

fn launch_debugger(command: &str, transport: &str, address: &str) -> Result<(), String> {
    let mut words = command.split_whitespace();
    let program = words.next().ok_or("launch= names no command")?;
    std::process::Command::new(program)
        .args(words)
        .args([transport, address])
        .spawn()
        .map(drop)
        .map_err(|e| format!("cannot launch {program}: {e}"))
}

fn load_known_classes(jni: Jni) -> Result<KnownClasses, ErrorCode> {
    let class = |name: &str| -> Result<GlobalRef, ErrorCode> {
        let local = jni.find_class(name)?;
        let global = jni.new_global_ref(local)?;
        jni.delete_local_ref(local);
        Ok(GlobalRef(global))
    };
    Ok(KnownClasses {
        object: class("java/lang/Object")?,
        class: class("java/lang/Class")?,
        string: class("java/lang/String")?,
        thread: class("java/lang/Thread")?,
        thread_group: class("java/lang/ThreadGroup")?,
        class_loader: class("java/lang/ClassLoader")?,
        throwable: class("java/lang/Throwable")?,
        module: class("java/lang/Module")?,
    })
}

/// How long a connecting peer has to send `JDWP-Handshake` before the next one is served.
const HANDSHAKE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

unsafe extern "system" fn helper_main(_: *mut jvmtiEnv, jni_env: *mut JNIEnv, arg: *mut c_void) {
    // SAFETY: `arg` is the inbox boxed by `start`, handed to exactly this thread.
    let jobs = unsafe { Box::from_raw(arg.cast::<crate::gate::Inbox<crate::agent::helper::Job>>()) };
    crate::guard((), move || {
        let (Some(agent), Some(jni)) = (agent(), unsafe { Jni::from_raw(jni_env) }) else { return };
        crate::event_helper::run(agent, jni, *jobs);
    });
}

struct SessionArgs {
    listener: Option<Listener>,
    /// A connection made before the session thread started (see `start`).
    attached: Option<Connection>,
    address: String,
    allow: crate::allow::AllowList,
}

/// Accepts the next debugger whose address the `allow` option admits; others are turned away.
fn accept_allowed(
    listener: &Listener,
    timeout: Option<std::time::Duration>,
    allow: &crate::allow::AllowList,
) -> Result<Connection, jdwp_transports::TransportError> {
    // Checked before the handshake: a refused peer gets nothing back, as from the JDK's agent.
    listener.accept_admitting(timeout, &|peer| {
        let peer = peer.ip();
        let allowed = allow.allows(peer);
        if !allowed {
            tracing::warn!(%peer, "debugger refused by the allow option");
            eprintln!("ERROR: JDWP: peer {peer} not allowed to connect");
        }
        allowed
    })
}

unsafe extern "system" fn session_main(_: *mut jvmtiEnv, _jni_env: *mut JNIEnv, arg: *mut c_void) {
    // SAFETY: `arg` is the box made by `start`, handed to exactly this thread.
    let mut args = unsafe { Box::from_raw(arg.cast::<SessionArgs>()) };
    crate::guard((), move || {
        let Some(agent) = agent() else { return };
        let backend = crate::backend::AgentBackend { agent };
        let result = match &args.listener {
            Some(listener) => (|| {
                // Only the first debugger is waited for with `timeout`; later ones come when they come.
                let mut timeout = agent.options.timeout;
                while !agent.is_vm_dead() {
                    let conn = accept_allowed(listener, timeout, &args.allow)?;
                    timeout = None;
                    crate::session::serve(conn, &backend)?;
                }
                Ok(())
            })(),
            None => match args.attached.take() {
                Some(conn) => Ok(conn),
                None => crate::transport::attach(&agent.options.transport, &args.address, agent.options.timeout),
            }
            .and_then(|conn| crate::session::serve(conn, &backend).map(drop)),
        };
        if let Err(e) = result {
            tracing::warn!(error = %e, "transport ended");
            if agent.options.suspend && agent.session().is_none() {
                // The VM is waiting for a debugger that will never come: fail like the JDK's agent.
                eprintln!("ERROR: JDWP: transport error: {e}");
                std::process::exit(2);
            }
        }
    });
}
