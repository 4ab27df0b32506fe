//! The JVMTI and JNI wrappers against a real HotSpot VM, created in this test process with the
//! invocation API (`JNI_CreateJavaVM` from the JDK's `libjvm.so`). This checks the function table
//! positions, structure layouts and memory ownership against the VM itself, not only the spec.
//!
//! One VM per process (JNI allows no second one): every test attaches its own thread to it.

use std::ffi::{CString, c_void};
use std::ptr;
use std::sync::OnceLock;
use std::time::Duration;

use jdwp_agent::jni::{JavaType, JavaVm, Jni, JniError, jvalue};
use jdwp_agent::jvmti::sys::*;
use jdwp_agent::jvmti::{Jvmti, JvmtiError};
use jni_sys::{JNI_OK, JNI_VERSION_1_8, JavaVMInitArgs, JavaVMOption};

struct Vm {
    vm: JavaVm,
    jvmti: Jvmti,
}

type CreateJavaVm =
    unsafe extern "system" fn(*mut *mut jni_sys::JavaVM, *mut *mut c_void, *mut c_void) -> jni_sys::jint;

fn vm() -> &'static Vm {
    static VM: OnceLock<Vm> = OnceLock::new();
    VM.get_or_init(|| {
        let libjvm = test_rig::java_home().join("lib/server/libjvm.so");
        let path = CString::new(libjvm.to_str().unwrap()).unwrap();
        // SAFETY: dlopen/dlsym with NUL-terminated strings; the library is never closed, so the
        // symbol stays valid, and it has the invocation API's signature.
        let create: CreateJavaVm = unsafe {
            let lib = libc::dlopen(path.as_ptr(), libc::RTLD_NOW);
            assert!(!lib.is_null(), "cannot load {}", libjvm.display());
            let sym = libc::dlsym(lib, c"JNI_CreateJavaVM".as_ptr());
            assert!(!sym.is_null(), "no JNI_CreateJavaVM in {}", libjvm.display());
            std::mem::transmute::<*mut c_void, CreateJavaVm>(sym)
        };
        // -Xrs: leave SIGINT/SIGTERM/SIGQUIT to the test harness.
        let options: Vec<CString> = ["-Xrs", "-Xmx64m", "-XX:+UseSerialGC", "-Xshare:auto"]
            .into_iter()
            .map(|o| CString::new(o).unwrap())
            .collect();
        let mut raw_options: Vec<JavaVMOption> = options
            .iter()
            .map(|o| JavaVMOption { optionString: o.as_ptr().cast_mut(), extraInfo: ptr::null_mut() })
            .collect();
        let mut args = JavaVMInitArgs {
            version: JNI_VERSION_1_8,
            nOptions: raw_options.len() as i32,
            options: raw_options.as_mut_ptr(),
            ignoreUnrecognized: false,
        };
        let (mut jvm, mut env) = (ptr::null_mut(), ptr::null_mut());
        // SAFETY: the arguments are laid out as JNI specifies and outlive the call; the VM copies
        // what it keeps.
        let code = unsafe { create(&mut jvm, &mut env, ptr::from_mut(&mut args).cast()) };
        assert_eq!(code, JNI_OK, "JNI_CreateJavaVM failed");
        // SAFETY: the VM just returned its invocation interface.
        let vm = unsafe { JavaVm::from_raw(jvm) }.unwrap();
        let jvmti = vm.get_jvmti(JVMTI_VERSION_11).expect("a JVMTI 11 environment");
        // All that the live phase offers; tests needing a capability it may lack check for it.
        let wanted = jvmti.get_potential_capabilities().unwrap();
        jvmti.add_capabilities(&wanted).expect("AddCapabilities with potential capabilities");
        Vm { vm, jvmti }
    })
}

/// The shared JVMTI environment and the current thread attached to the VM (as a daemon).
fn attach(name: &str) -> (Jvmti, Jni) {
    let vm = vm();
    let jni = vm.vm.attach_current_thread_as_daemon(name).expect("attach");
    (vm.jvmti, jni)
}

fn class_signature(jvmti: Jvmti, class: jclass) -> String {
    jvmti.get_class_signature(class).unwrap().0
}

#[test]
fn version_phase_and_capabilities() {
    let (jvmti, _jni) = attach("version");
    let version = jvmti.get_version_number().unwrap();
    assert_eq!(version & JVMTI_VERSION_MASK_INTERFACE_TYPE, JVMTI_VERSION_INTERFACE_JVMTI);
    assert!((version & JVMTI_VERSION_MASK_MAJOR) >> JVMTI_VERSION_SHIFT_MAJOR >= 11);
    assert_eq!(jvmti.get_phase(), Ok(JVMTI_PHASE_LIVE));
    assert_eq!(jvmti.get_jlocation_format(), Ok(JVMTI_JLOCATION_JVMBCI));
    let caps = jvmti.get_capabilities().unwrap();
    // Always available in HotSpot's live phase.
    assert!(caps.can_tag_objects() && caps.can_get_bytecodes() && caps.can_suspend(), "{caps:?}");
    assert!(jvmti.get_available_processors().unwrap() >= 1);
    assert!(jvmti.get_time().unwrap() > 0);
}

#[test]
fn error_names_come_from_the_vm() {
    let (jvmti, _jni) = attach("errors");
    assert_eq!(jvmti.get_error_name(JvmtiError::INVALID_THREAD).unwrap(), "JVMTI_ERROR_INVALID_THREAD");
    // Every code we name, the VM names the same; a VM older than a code does not know it.
    let version = jvmti.get_version_number().unwrap();
    for e in JvmtiError::ALL {
        if *e == JvmtiError::UNSUPPORTED_OPERATION && version < jdwp_agent::jvmti::sys::JVMTI_VERSION_21 {
            assert_eq!(jvmti.get_error_name(*e), Err(JvmtiError::ILLEGAL_ARGUMENT));
            continue;
        }
        assert_eq!(jvmti.get_error_name(*e).unwrap(), format!("JVMTI_ERROR_{}", e.name().unwrap()));
    }
}

#[test]
fn class_queries() {
    let (jvmti, jni) = attach("classes");
    let _frame = jni.push_local_frame(64).unwrap();
    let string = jni.find_class("java/lang/String").unwrap();
    let (signature, generic) = jvmti.get_class_signature(string).unwrap();
    assert_eq!(signature, "Ljava/lang/String;");
    assert!(generic.unwrap().contains("Ljava/lang/Comparable<Ljava/lang/String;>;"));
    let status = jvmti.get_class_status(string).unwrap();
    assert_ne!(status & JVMTI_CLASS_STATUS_INITIALIZED, 0);
    assert_eq!(jvmti.get_class_modifiers(string).unwrap() & 0x0011, 0x0011, "public final");
    assert!(!jvmti.is_interface(string).unwrap());
    assert!(!jvmti.is_array_class(string).unwrap());
    assert!(jvmti.get_class_loader(string).unwrap().is_null(), "bootstrap loader");
    let (_minor, major) = jvmti.get_class_version_numbers(string).unwrap();
    assert!(major >= 61);
    if jvmti.get_capabilities().unwrap().can_get_source_file_name() {
        assert_eq!(jvmti.get_source_file_name(string).unwrap(), "String.java");
    }

    let interfaces = jvmti.get_implemented_interfaces(string).unwrap();
    let names: Vec<_> = interfaces.iter().map(|&i| class_signature(jvmti, i)).collect();
    assert!(names.contains(&"Ljava/lang/CharSequence;".to_string()), "{names:?}");

    let methods = jvmti.get_class_methods(string).unwrap();
    let length = methods
        .iter()
        .copied()
        .find(|&m| {
            let n = jvmti.get_method_name(m).unwrap();
            n.name == "length" && n.signature == "()I"
        })
        .expect("String.length()");
    let declaring = jvmti.get_method_declaring_class(length).unwrap();
    assert!(jni.is_same_object(declaring, string));
    assert_eq!(jvmti.get_method_modifiers(length).unwrap() & 0x0001, 0x0001, "public");
    assert_eq!(jvmti.get_arguments_size(length), Ok(1), "just `this`");
    assert!(jvmti.get_max_locals(length).unwrap() >= 1);
    assert!(!jvmti.is_method_native(length).unwrap());
    assert!(!jvmti.is_method_obsolete(length).unwrap());
    let (start, end) = jvmti.get_method_location(length).unwrap();
    assert!(start == 0 && end > 0);
    let bytecodes = jvmti.get_bytecodes(length).unwrap();
    assert_eq!(bytecodes.len() as i64, end + 1);
    if jvmti.get_capabilities().unwrap().can_get_line_numbers() {
        let lines = jvmti.get_line_number_table(length).unwrap();
        assert!(!lines.is_empty() && lines[0].start_location == 0 && lines[0].line_number > 0);
    }

    let integer = jni.find_class("java/lang/Integer").unwrap();
    let fields = jvmti.get_class_fields(integer).unwrap();
    let value = fields
        .iter()
        .copied()
        .find(|&f| jvmti.get_field_name(integer, f).unwrap().name == "value")
        .expect("Integer.value");
    assert_eq!(jvmti.get_field_name(integer, value).unwrap().signature, "I");
    assert_eq!(jvmti.get_field_modifiers(integer, value).unwrap() & 0x0012, 0x0012, "private final");
    assert!(jni.is_same_object(jvmti.get_field_declaring_class(integer, value).unwrap(), integer));

    // A non-class is refused with the JVMTI error, which maps to the JDWP one.
    let not_a_class = jni.new_string_utf("not a class").unwrap();
    let err = jvmti.get_class_signature(not_a_class).unwrap_err();
    assert_eq!(err, JvmtiError::INVALID_CLASS);
    assert_eq!(err.to_jdwp(), jdwp_protocol::ErrorCode::INVALID_CLASS);
}

#[test]
fn loaded_classes_include_string() {
    let (jvmti, jni) = attach("loaded");
    let frame = jni.push_local_frame(16).unwrap();
    let string = jni.find_class("java/lang/String").unwrap();
    let classes = jvmti.get_loaded_classes().unwrap();
    assert!(classes.len() > 100);
    assert!(classes.iter().any(|&c| jni.is_same_object(c, string)));
    let boot = jvmti.get_class_loader_classes(ptr::null_mut()).unwrap();
    assert!(boot.iter().any(|&c| jni.is_same_object(c, string)));
    drop((classes, boot));
    let kept = frame.pop(string);
    assert_eq!(class_signature(jvmti, kept), "Ljava/lang/String;");
    jni.delete_local_ref(kept);
}

#[test]
fn threads_and_groups() {
    let (jvmti, jni) = attach("threads-test");
    let _frame = jni.push_local_frame(64).unwrap();
    let me = jvmti.get_current_thread().unwrap();
    let info = jvmti.get_thread_info(me).unwrap();
    assert_eq!(info.name, "threads-test");
    assert!(info.is_daemon);
    let state = jvmti.get_thread_state(me).unwrap();
    assert_ne!(state & JVMTI_THREAD_STATE_ALIVE, 0);
    // A native thread with no Java frames.
    assert_eq!(jvmti.get_frame_count(me), Ok(0));
    assert!(jvmti.get_stack_trace(me, 0, 10).unwrap().is_empty());
    assert!(jvmti.get_all_threads().unwrap().iter().any(|&t| jni.is_same_object(t, me)));

    let traces = jvmti.get_all_stack_traces(8).unwrap();
    assert!(!traces.is_empty());
    let reference_handler = traces
        .iter()
        .find(|t| jvmti.get_thread_info(t.thread).unwrap().name == "Reference Handler")
        .expect("the Reference Handler thread");
    assert!(!reference_handler.frames.is_empty() && reference_handler.frames.len() <= 8);
    let top = reference_handler.frames[0];
    let declaring = jvmti.get_method_declaring_class(top.method).unwrap();
    assert!(class_signature(jvmti, declaring).starts_with("Ljava/lang/"));

    let one = jvmti.get_thread_list_stack_traces(&[me], 4).unwrap();
    assert_eq!(one.len(), 1);
    assert!(one.iter().next().unwrap().frames.is_empty());

    let groups = jvmti.get_top_thread_groups().unwrap();
    assert_eq!(groups.len(), 1);
    let system = jvmti.get_thread_group_info(groups[0]).unwrap();
    assert_eq!(system.name, "system");
    assert!(system.parent.is_null());
    let (_threads, children) = jvmti.get_thread_group_children(groups[0]).unwrap();
    let child_names: Vec<_> = children.iter().map(|&g| jvmti.get_thread_group_info(g).unwrap().name).collect();
    assert!(child_names.contains(&"main".to_string()), "{child_names:?}");

    // Not a thread.
    let string = jni.new_string_utf("x").unwrap();
    assert_eq!(jvmti.get_frame_count(string), Err(JvmtiError::INVALID_THREAD));
    assert_eq!(jvmti.get_thread_info(string).unwrap_err().to_jdwp(), jdwp_protocol::ErrorCode::INVALID_THREAD);
}

#[test]
fn strings_arrays_and_calls() {
    let (_jvmti, jni) = attach("jni");
    let _frame = jni.push_local_frame(64).unwrap();
    let text = "héllo \u{1F600} \0 end";
    let s = jni.new_string_utf(text).unwrap();
    assert_eq!(jni.get_string_utf(s).unwrap(), text);
    assert_eq!(jni.get_string_utf16(s).unwrap(), text.encode_utf16().collect::<Vec<_>>());
    assert_eq!(jni.get_string_length(s).unwrap() as usize, text.encode_utf16().count());

    let integer = jni.find_class("java/lang/Integer").unwrap();
    let parse = jni.get_static_method_id(integer, "parseInt", "(Ljava/lang/String;)I").unwrap();
    let arg = jni.new_string_utf("42").unwrap();
    // SAFETY: parseInt(String) returns int; one String argument.
    let value = unsafe { jni.call_static_method(integer, parse, JavaType::Int, &[jvalue { l: arg }]) }.unwrap();
    // SAFETY: an int result fills `i`.
    assert_eq!(unsafe { value.i }, 42);

    let bad = jni.new_string_utf("forty-two").unwrap();
    // SAFETY: as above.
    let err = unsafe { jni.call_static_method(integer, parse, JavaType::Int, &[jvalue { l: bad }]) }.unwrap_err();
    let JniError::Exception(thrown) = err else { panic!("{err:?}") };
    let nfe = jni.find_class("java/lang/NumberFormatException").unwrap();
    assert!(jni.is_instance_of(thrown, nfe));
    assert!(!jni.exception_check(), "the exception was cleared");

    let value_of = jni.get_static_method_id(integer, "valueOf", "(I)Ljava/lang/Integer;").unwrap();
    // SAFETY: valueOf(int) returns an Integer; one int argument.
    let boxed = unsafe { jni.call_static_method(integer, value_of, JavaType::Object, &[jvalue { i: 7 }]) }.unwrap();
    // SAFETY: an object result fills `l`.
    let boxed = unsafe { boxed.l };
    let value_field = jni.get_field_id(integer, "value", "I").unwrap();
    // SAFETY: Integer.value is an int field of the Integer `boxed`.
    assert_eq!(unsafe { jni.get_field(boxed, value_field, JavaType::Int).i }, 7);
    let int_value = jni.get_method_id(integer, "intValue", "()I").unwrap();
    // SAFETY: intValue() returns int, no arguments.
    assert_eq!(unsafe { jni.call_method(boxed, int_value, JavaType::Int, &[]).unwrap().i }, 7);
    let max = jni.get_static_field_id(integer, "MAX_VALUE", "I").unwrap();
    // SAFETY: Integer.MAX_VALUE is a static int field of Integer.
    assert_eq!(unsafe { jni.get_static_field(integer, max, JavaType::Int).i }, i32::MAX);
    assert!(jni.is_same_object(jni.get_object_class(boxed).unwrap(), integer));
    let number = jni.get_superclass(integer).unwrap();
    let object = jni.find_class("java/lang/Object").unwrap();
    assert!(jni.is_assignable_from(integer, number) && jni.is_assignable_from(number, object));
    assert!(jni.get_superclass(object).is_none());

    let boolean = jni.find_class("java/lang/Boolean").unwrap();
    let parse_boolean = jni.get_static_method_id(boolean, "parseBoolean", "(Ljava/lang/String;)Z").unwrap();
    let yes = jni.new_string_utf("TRUE").unwrap();
    // SAFETY: parseBoolean(String) returns boolean.
    let parsed = unsafe { jni.call_static_method(boolean, parse_boolean, JavaType::Boolean, &[jvalue { l: yes }]) };
    // SAFETY: a boolean result fills `z`, with a proper bool.
    assert!(unsafe { parsed.unwrap().z });

    let ints = jni.new_primitive_array::<i32>(4).unwrap();
    assert_eq!(jni.get_array_length(ints), Ok(4));
    // SAFETY: `ints` is an int[].
    unsafe { jni.set_array_region(ints, 1, &[10i32, 20, 30]) }.unwrap();
    let mut back = [0i32; 4];
    // SAFETY: as above.
    unsafe { jni.get_array_region(ints, 0, &mut back) }.unwrap();
    assert_eq!(back, [0, 10, 20, 30]);
    let mut too_many = [0i32; 5];
    // SAFETY: as above; the VM checks the bounds and throws.
    let err = unsafe { jni.get_array_region(ints, 0, &mut too_many) }.unwrap_err();
    assert!(matches!(err, JniError::Exception(_)));

    let booleans = jni.new_primitive_array::<u8>(3).unwrap();
    // SAFETY: `booleans` is a boolean[].
    unsafe { jni.set_array_region(booleans, 0, &[1u8, 0, 1]) }.unwrap();
    let mut flags = [9u8; 3];
    // SAFETY: as above.
    unsafe { jni.get_array_region(booleans, 0, &mut flags) }.unwrap();
    assert_eq!(flags, [1, 0, 1]);

    let strings = jni.new_object_array(2, jni.find_class("java/lang/String").unwrap(), ptr::null_mut()).unwrap();
    jni.set_object_array_element(strings, 1, s).unwrap();
    assert!(jni.get_object_array_element(strings, 0).unwrap().is_null());
    assert!(jni.is_same_object(jni.get_object_array_element(strings, 1).unwrap(), s));
    // ArrayStoreException: an Integer into a String[].
    assert!(matches!(jni.set_object_array_element(strings, 0, boxed), Err(JniError::Exception(_))));
    assert!(matches!(jni.get_object_array_element(strings, 2), Err(JniError::Exception(_))));

    let string_builder = jni.find_class("java/lang/StringBuilder").unwrap();
    let init = jni.get_method_id(string_builder, "<init>", "(Ljava/lang/String;)V").unwrap();
    // SAFETY: StringBuilder(String), one String argument.
    let builder = unsafe { jni.new_object(string_builder, init, &[jvalue { l: arg }]) }.unwrap();
    let to_string = jni.get_method_id(object, "toString", "()Ljava/lang/String;").unwrap();
    // SAFETY: Object.toString() returns a String; invoked non-virtually on StringBuilder's own.
    let text = unsafe {
        let sb_to_string = jni.get_method_id(string_builder, "toString", "()Ljava/lang/String;").unwrap();
        jni.call_nonvirtual_method(builder, string_builder, sb_to_string, JavaType::Object, &[]).unwrap().l
    };
    assert_eq!(jni.get_string_utf(text).unwrap(), "42");
    // SAFETY: virtual dispatch of Object.toString() reaches StringBuilder's.
    let text = unsafe { jni.call_method(builder, to_string, JavaType::Object, &[]).unwrap().l };
    assert_eq!(jni.get_string_utf(text).unwrap(), "42");

    assert!(matches!(jni.find_class("no/such/Class"), Err(JniError::Exception(_))));
    assert!(!jni.exception_check());
}

#[test]
fn references_and_the_vm_handle() {
    let (_jvmti, jni) = attach("refs");
    let frame = jni.push_local_frame(8).unwrap();
    let local = jni.new_string_utf("kept").unwrap();
    let global = jni.new_global_ref(local).unwrap();
    let weak = jni.new_weak_global_ref(local).unwrap();
    drop(frame);
    assert_eq!(jni.get_string_utf(global).unwrap(), "kept");
    assert!(jni.is_same_object(weak, global));
    jni.delete_weak_global_ref(weak);
    jni.delete_global_ref(global);
    assert_eq!(jni.new_global_ref(ptr::null_mut()), Ok(ptr::null_mut()));

    let vm = jni.get_java_vm().unwrap();
    assert_eq!(vm, self::vm().vm);
    assert_eq!(vm.get_jni(JNI_VERSION_1_8).unwrap(), jni);
    assert!(matches!(vm.get_jvmti(JVMTI_VERSION_1_2), Err(JniError::Code { .. })));
    // Attaching again returns the same environment.
    assert_eq!(vm.attach_current_thread_as_daemon("refs").unwrap(), jni);
}

#[test]
fn a_detached_thread_is_refused() {
    let vm = vm().vm;
    let code = std::thread::spawn(move || vm.get_jni(JNI_VERSION_1_8).unwrap_err().to_jdwp()).join().unwrap();
    assert_eq!(code, jdwp_protocol::ErrorCode::UNATTACHED_THREAD);
}

#[test]
fn tags_hash_codes_and_monitor_usage() {
    let (jvmti, jni) = attach("tags");
    let _frame = jni.push_local_frame(16).unwrap();
    let object = jni.new_string_utf("tagged").unwrap();
    assert_eq!(jvmti.get_tag(object), Ok(0));
    jvmti.set_tag(object, 77).unwrap();
    assert_eq!(jvmti.get_tag(object), Ok(77));
    let (objects, tags) = jvmti.get_objects_with_tags(&[77]).unwrap();
    assert_eq!(objects.len(), 1);
    assert_eq!(&*tags, &[77]);
    assert!(jni.is_same_object(objects[0], object));
    jvmti.set_tag(object, 0).unwrap();
    assert!(jvmti.get_object_hash_code(object).is_ok());
    assert!(jvmti.get_object_size(object).unwrap() > 0);
    if jvmti.get_capabilities().unwrap().can_get_monitor_info() {
        let usage = jvmti.get_object_monitor_usage(object).unwrap();
        assert!(usage.owner.is_null());
        assert_eq!(usage.entry_count, 0);
        assert!(usage.waiters.is_empty() && usage.notify_waiters.is_empty());
    }
}

#[test]
fn raw_monitors_and_memory() {
    let (jvmti, _jni) = attach("monitors");
    let monitor = jvmti.create_raw_monitor("test monitor").unwrap();
    {
        let guard = monitor.enter().unwrap();
        guard.notify_all().unwrap();
        guard.notify().unwrap();
        // Times out (nobody notifies); the guard still holds the monitor afterwards.
        guard.wait(Some(Duration::from_millis(1))).unwrap();
    }
    monitor.destroy().unwrap();

    let block = jvmti.allocate(128).unwrap();
    // SAFETY: just allocated by this environment, freed once.
    unsafe { jvmti.deallocate(block.as_ptr()) }.unwrap();
}

#[test]
fn system_properties() {
    let (jvmti, _jni) = attach("properties");
    let names = jvmti.get_system_properties().unwrap();
    assert!(names.iter().any(|n| n == "java.vm.name"), "{names:?}");
    assert!(jvmti.get_system_property("java.vm.name").unwrap().contains("VM"));
    assert_eq!(jvmti.get_system_property("no.such.property"), Err(JvmtiError::NOT_AVAILABLE));
    assert_eq!(jvmti.get_system_property("nul\0inside"), Err(JvmtiError::ILLEGAL_ARGUMENT));
}

/// What the callbacks below saw, by thread name.
static SEEN: OnceLock<std::sync::Mutex<std::sync::mpsc::Sender<String>>> = OnceLock::new();

fn report(what: String) {
    if let Some(sender) = SEEN.get() {
        let _ = sender.lock().unwrap().send(what);
    }
}

/// The name of `thread` (null: the current one) as seen through the callback's environment.
///
/// # Safety
///
/// `env` is the JVMTI environment the VM passed to a callback.
unsafe fn thread_name(env: *mut jvmtiEnv, thread: jthread) -> String {
    // SAFETY: the VM passes its own live environment, the one `vm()` made (version 11).
    let jvmti = unsafe { Jvmti::from_raw(env) }.unwrap();
    jvmti.get_thread_info(thread).map(|i| i.name).unwrap_or_default()
}

unsafe extern "system" fn on_thread_start(env: *mut jvmtiEnv, _jni: *mut jni_sys::JNIEnv, thread: jthread) {
    // No unwinding into the VM: a failed test shows as a missing message instead.
    let _ = std::panic::catch_unwind(|| {
        // SAFETY: called by the VM with its environment.
        report(format!("start {}", unsafe { thread_name(env, thread) }));
    });
}

unsafe extern "system" fn agent_thread_body(env: *mut jvmtiEnv, jni: *mut jni_sys::JNIEnv, arg: *mut c_void) {
    let _ = std::panic::catch_unwind(|| {
        // SAFETY: `arg` is the address of a static string, passed below.
        let greeting = unsafe { &*arg.cast::<&str>() };
        // SAFETY: called by the VM on the new thread, with that thread's JNIEnv.
        let jni = unsafe { Jni::from_raw(jni) }.unwrap();
        let hello = jni.new_string_utf(greeting).unwrap();
        // SAFETY: called by the VM with its environment.
        report(format!(
            "agent {} says {}",
            unsafe { thread_name(env, ptr::null_mut()) },
            jni.get_string_utf(hello).unwrap()
        ));
    });
}

#[test]
fn events_and_agent_threads() {
    let (jvmti, jni) = attach("events");
    let (sender, receiver) = std::sync::mpsc::channel();
    SEEN.set(std::sync::Mutex::new(sender)).unwrap();
    let callbacks = jvmtiEventCallbacks { ThreadStart: Some(on_thread_start), ..Default::default() };
    jvmti.set_event_callbacks(&callbacks).unwrap();
    jvmti.set_event_notification_mode(true, JVMTI_EVENT_THREAD_START, ptr::null_mut()).unwrap();
    assert_eq!(jvmti.set_event_notification_mode(true, 12345, ptr::null_mut()), Err(JvmtiError::INVALID_EVENT_TYPE));

    let _frame = jni.push_local_frame(16).unwrap();
    let thread_class = jni.find_class("java/lang/Thread").unwrap();
    let init = jni.get_method_id(thread_class, "<init>", "(Ljava/lang/String;)V").unwrap();
    let name = jni.new_string_utf("agent-test-thread").unwrap();
    // SAFETY: Thread(String), one String argument.
    let thread = unsafe { jni.new_object(thread_class, init, &[jvalue { l: name }]) }.unwrap();
    static GREETING: &str = "hello";
    // SAFETY: the body only reads `arg` as the `&'static str` it points to, and catches panics.
    unsafe {
        jvmti.run_agent_thread(thread, agent_thread_body, ptr::from_ref(&GREETING).cast(), JVMTI_THREAD_NORM_PRIORITY)
    }
    .unwrap();

    let mut seen = Vec::new();
    while !(seen.contains(&"start agent-test-thread".to_string())
        && seen.contains(&"agent agent-test-thread says hello".to_string()))
    {
        seen.push(receiver.recv_timeout(Duration::from_secs(60)).unwrap_or_else(|_| panic!("only saw {seen:?}")));
    }
    jvmti.set_event_notification_mode(false, JVMTI_EVENT_THREAD_START, ptr::null_mut()).unwrap();
}
