//! Objects, strings, arrays, locals, invocation, early return, frame popping and deep stacks,
//! against the `Values` fixture (and `Demo` for stale frames), under the agent `JDI_TEST_AGENT`
//! picks.

mod common;

use common::{Session, TIMEOUT};
use jdi::protocol::ErrorCode;
use jdi::protocol::invoke_options::{INVOKE_NONVIRTUAL, INVOKE_SINGLE_THREADED};
use jdi::{
    ArrayReference, Event, InvokeResult, JdiError, Method, ObjectReference, Tag, ThreadReference, Value, ValueMirror,
};

/// The line containing `needle` in the debuggee's output (waits for it).
fn output_line(s: &Session, needle: &str) -> String {
    tokio::task::block_in_place(|| s.jvm.wait_for_line(needle, TIMEOUT)).unwrap()
}

/// The object in local `name` of the top frame.
async fn local_object(thread: &ThreadReference, name: &str) -> ObjectReference {
    let frame = thread.frame(0).await.unwrap();
    let value = frame.get_value_by_name(name).await.unwrap().unwrap_or_else(|| panic!("no local {name}"));
    thread.vm().value_mirror(value).as_object().unwrap_or_else(|| panic!("{name} is not an object: {value:?}"))
}

/// The array in local `name` of the top frame.
async fn local_array(thread: &ThreadReference, name: &str) -> ArrayReference {
    ArrayReference(local_object(thread, name).await)
}

/// The visible method `name` of the object's class.
async fn method(object: &ObjectReference, name: &str) -> Method {
    let ty = object.reference_type().await.unwrap();
    let mut methods = ty.methods_by_name(name).await.unwrap();
    assert_eq!(methods.len(), 1, "{name} in {}: {methods:?}", ty.name());
    methods.remove(0)
}

async fn string_value(s: &Session, value: Value) -> String {
    assert_eq!(value.tag(), Tag::String, "{value:?}");
    s.vm.value_mirror(value).as_string().unwrap().value().await.unwrap()
}

async fn invoke(object: &ObjectReference, thread: &ThreadReference, name: &str, args: Vec<Value>) -> Value {
    let m = method(object, name).await;
    match object.invoke_method(thread, &m, args, 0).await.unwrap() {
        InvokeResult::Returned(v) => v,
        InvokeResult::Threw(e) => panic!("{name} threw {e:?}"),
    }
}

fn invalid_argument(result: jdi::Result<impl std::fmt::Debug>) -> String {
    match result {
        Err(JdiError::InvalidArgument(message)) => message,
        other => panic!("expected a type error, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn breakpoint_shows_locals_of_every_kind() {
    let mut s = common::start("Values", &["locals"]).await;
    let (_, thread) = s.run_to_marker("Values", "@locals").await;
    let frame = thread.frame(0).await.unwrap();
    let loc = frame.source_location().await.unwrap();
    assert_eq!(loc.method.name(), "locals");
    assert_eq!(loc.line_number().await.unwrap(), test_rig::fixture_line("Values.java", "@locals").unwrap() as i32);

    let names: Vec<String> = frame.visible_variables().await.unwrap().into_iter().map(|v| v.name).collect();
    let expected = [
        "arg", "z", "b", "c", "s", "i", "j", "f", "d", "text", "ints", "box", "nothing", "thread", "group", "loader",
        "clazz",
    ];
    assert_eq!(names, expected);
    let get = |name: &'static str| {
        let frame = frame.clone();
        async move { frame.get_value_by_name(name).await.unwrap().unwrap() }
    };
    assert_eq!(get("arg").await, Value::Int(7));
    assert_eq!(get("z").await, Value::Boolean(true));
    assert_eq!(get("b").await, Value::Byte(-8));
    assert_eq!(get("c").await, Value::Char('x' as u16));
    assert_eq!(get("s").await, Value::Short(300));
    assert_eq!(get("i").await, Value::Int(123456));
    assert_eq!(get("j").await, Value::Long(1 << 40));
    assert_eq!(get("f").await, Value::Float(1.5));
    assert_eq!(get("d").await, Value::Double(-2.75));
    assert_eq!(get("nothing").await, Value::NULL);
    assert!(frame.get_value_by_name("no_such_local").await.unwrap().is_none());

    // Every object kind comes back with its own tag and mirror.
    let text = s.vm.value_mirror(get("text").await);
    assert_eq!(text.as_string().unwrap().value().await.unwrap(), "hello");
    assert_eq!(text.display().await.unwrap(), "\"hello\"");
    let ints = s.vm.value_mirror(get("ints").await);
    let ints_array = ints.as_array().unwrap();
    assert_eq!(ints_array.get_values().await.unwrap(), [Value::Int(10), Value::Int(20), Value::Int(30)]);
    assert_eq!(ints.display().await.unwrap(), format!("instance of int[3] (id={})", ints_array.0.unique_id()));
    let boxed = s.vm.value_mirror(get("box").await);
    let ValueMirror::Object(box_object) = &boxed else { panic!("{boxed:?}") };
    assert_eq!(box_object.reference_type().await.unwrap().name(), "Values$Box");
    assert_eq!(boxed.display().await.unwrap(), format!("instance of Values$Box(id={})", box_object.unique_id()));
    let thread_value = s.vm.value_mirror(get("thread").await);
    assert_eq!(thread_value.as_thread(), Some(&thread));
    assert_eq!(
        thread_value.display().await.unwrap(),
        format!("instance of {}(name='main', id={})", common::main_thread_class(), thread.as_object().unique_id())
    );
    let group = s.vm.value_mirror(get("group").await);
    assert_eq!(group.as_thread_group().unwrap().name().await.unwrap(), common::main_group_name());
    assert_eq!(group.as_thread_group(), thread.thread_group().await.unwrap().as_ref());
    let loader = s.vm.value_mirror(get("loader").await);
    let loader = loader.as_class_loader().expect("a class loader");
    assert!(loader.0.reference_type().await.unwrap().name().contains("AppClassLoader"));
    let clazz = s.vm.value_mirror(get("clazz").await);
    assert_eq!(clazz.as_class_object().unwrap().reflected_type().await.unwrap().name(), "Values$Box");
    assert!(clazz.display().await.unwrap().starts_with("instance of java.lang.Class(reflected class=Values$Box, id="));
    assert_eq!(s.vm.value_mirror(Value::Float(1.5)).display().await.unwrap(), "1.5");
    assert_eq!(s.vm.value_mirror(Value::Char('x' as u16)).display().await.unwrap(), "x");
    assert_eq!(s.vm.value_mirror(Value::NULL).display().await.unwrap(), "null");

    // Mirrors convert back to the same values, and primitives to Rust numbers.
    for var in frame.visible_variables().await.unwrap() {
        let value = frame.get_value(&var).await.unwrap();
        assert_eq!(s.vm.value_mirror(value).value(), value, "{}", var.name);
    }
    let mirror = |name: &'static str| {
        let frame = frame.clone();
        let vm = s.vm.clone();
        async move { vm.value_mirror(frame.get_value_by_name(name).await.unwrap().unwrap()) }
    };
    assert_eq!(mirror("b").await.as_i64(), Some(-8));
    assert_eq!(mirror("j").await.as_i64(), Some(1 << 40));
    assert_eq!(mirror("c").await.as_char(), Some('x'));
    assert_eq!(mirror("f").await.as_f64(), Some(1.5));
    assert_eq!(mirror("s").await.as_f64(), Some(300.0));
    assert_eq!(mirror("z").await.as_bool(), Some(true));
    assert!(mirror("z").await.is_primitive() && !mirror("text").await.is_primitive());
    assert!(mirror("nothing").await.is_null() && mirror("nothing").await.as_object().is_none());
    assert_eq!(mirror("text").await.as_i64(), None);
    assert_eq!(mirror("thread").await.as_object(), Some(thread.as_object()));

    // Several variables in one round trip, and the arguments alone.
    let vars = frame.visible_variables().await.unwrap();
    let all = frame.get_values(&vars).await.unwrap();
    assert_eq!(all.len(), expected.len());
    assert_eq!(frame.argument_values().await.unwrap(), [Value::Int(7)]);
    assert_eq!(frame.this_object().await.unwrap(), None, "locals is static");
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn setting_locals_changes_what_the_program_prints() {
    let mut s = common::start("Values", &["locals"]).await;
    let (_, thread) = s.run_to_marker("Values", "@locals").await;
    let frame = thread.frame(0).await.unwrap();
    let changed = s.vm.create_string("changed").await.unwrap();
    frame.set_value_by_name("i", Value::Int(7)).await.unwrap();
    frame.set_value_by_name("text", Value::Object(Tag::String, changed.0.id())).await.unwrap();
    frame.set_value_by_name("z", Value::Boolean(false)).await.unwrap();
    // An int for a double local converts, as JDI converts.
    frame.set_value_by_name("d", Value::Int(3)).await.unwrap();
    assert_eq!(frame.get_value_by_name("d").await.unwrap(), Some(Value::Double(3.0)));

    // Values that do not fit are refused before reaching the VM, and nothing changes.
    let message = invalid_argument(frame.set_value_by_name("i", Value::Boolean(true)).await);
    assert!(message.contains("local variable i") && message.contains("int"), "{message}");
    invalid_argument(frame.set_value_by_name("i", Value::Long(1 << 40)).await);
    let thread_value = frame.get_value_by_name("thread").await.unwrap().unwrap();
    let message = invalid_argument(frame.set_value_by_name("text", thread_value).await);
    assert!(message.contains("java.lang.String"), "{message}");
    invalid_argument(frame.set_value_by_name("no_such_local", Value::Int(1)).await);
    assert_eq!(frame.get_value_by_name("i").await.unwrap(), Some(Value::Int(7)));

    s.run_to_marker("Values", "@end").await;
    assert_eq!(output_line(&s, "locals i="), "locals i=7 text=changed z=false d=3.0 arg=7");
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fields_of_every_kind_are_read_and_written_with_type_checks() {
    let mut s = common::start("Values", &["fields"]).await;
    let (_, thread) = s.run_to_marker("Values", "@fields").await;
    let boxed = local_object(&thread, "box").await;
    let field = |name: &'static str| {
        let boxed = boxed.clone();
        async move { boxed.get_value_by_name(name).await.unwrap().unwrap() }
    };
    assert_eq!(field("z").await, Value::Boolean(true));
    assert_eq!(field("b").await, Value::Byte(-8));
    assert_eq!(field("c").await, Value::Char('c' as u16));
    assert_eq!(field("s").await, Value::Short(300));
    assert_eq!(field("i").await, Value::Int(42));
    assert_eq!(field("j").await, Value::Long(1 << 40));
    assert_eq!(field("f").await, Value::Float(1.5));
    assert_eq!(field("d").await, Value::Double(-2.75));
    assert_eq!(string_value(&s, field("str").await).await, "box");
    assert_eq!(field("nothing").await, Value::NULL);
    assert_eq!(field("ints").await.tag(), Tag::Array);
    // Inherited from Base, and static.
    assert_eq!(field("baseField").await, Value::Int(11));
    assert_eq!(field("instances").await, Value::Int(1));
    assert_eq!(string_value(&s, field("KIND").await).await, "box");
    // Several fields at once, in the order asked.
    let ty = boxed.reference_type().await.unwrap();
    let fields = ty.fields().await.unwrap();
    let values = boxed.get_values(&fields).await.unwrap();
    assert_eq!(values.len(), fields.len());
    assert_eq!(values[4], Value::Int(42), "{fields:?}");

    let by_name = |name: &'static str| {
        let boxed = boxed.clone();
        async move { boxed.field_by_name(name).await.unwrap().unwrap() }
    };
    let created = s.vm.create_string("set by debugger").await.unwrap();
    boxed.set_value(&by_name("i").await, Value::Int(99)).await.unwrap();
    // An int widens to a long field.
    boxed.set_value(&by_name("j").await, Value::Int(5)).await.unwrap();
    boxed.set_value(&by_name("str").await, Value::Object(Tag::String, created.0.id())).await.unwrap();
    // A Box is a Base.
    boxed.set_value(&by_name("other").await, Value::Object(Tag::Object, boxed.id())).await.unwrap();
    assert_eq!(field("j").await, Value::Long(5));
    // Static fields through an instance, as JDI allows; not final ones.
    boxed.set_value(&by_name("instances").await, Value::Byte(5)).await.unwrap();
    let message = invalid_argument(boxed.set_value(&by_name("KIND").await, Value::NULL).await);
    assert!(message.contains("final"), "{message}");

    let message = invalid_argument(boxed.set_value(&by_name("i").await, Value::Boolean(true)).await);
    assert!(message.contains("field Values$Box.i") && message.contains("int"), "{message}");
    let message =
        invalid_argument(boxed.set_value(&by_name("str").await, Value::Object(Tag::Object, boxed.id())).await);
    assert!(message.contains("Values$Box") && message.contains("java.lang.String"), "{message}");
    let thread_value = Value::Object(Tag::Thread, thread.id().into());
    invalid_argument(boxed.set_value(&by_name("other").await, thread_value).await);
    invalid_argument(boxed.set_value(&by_name("b").await, Value::Int(300)).await);
    invalid_argument(boxed.set_value(&by_name("ints").await, Value::Int(1)).await);
    assert_eq!(field("i").await, Value::Int(99));

    s.run_to_marker("Values", "@end").await;
    assert_eq!(output_line(&s, "fields Box"), "fields Box(i=99, j=5, str=set by debugger, other=box, instances=5)");
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arrays_of_every_element_type_are_read_and_written() {
    let mut s = common::start("Values", &["arrays"]).await;
    let (_, thread) = s.run_to_marker("Values", "@arrays").await;

    // 100000 ints come in chunks, complete and in order.
    let big = local_array(&thread, "big").await;
    assert_eq!(big.length().await.unwrap(), 100_000);
    assert_eq!(big.component_type_name().await.unwrap(), "int");
    let all = big.get_values().await.unwrap();
    assert_eq!(all.len(), 100_000);
    assert!(all.iter().enumerate().all(|(k, v)| *v == Value::Int(3 * k as i32)));
    let tail: Vec<Value> = (99_990..100_000).map(|k| Value::Int(3 * k)).collect();
    assert_eq!(big.get_values_range(99_990, 10).await.unwrap(), tail);
    assert_eq!(big.get_values_range(99_990, -1).await.unwrap(), tail);
    assert_eq!(big.get_value(99_999).await.unwrap(), Value::Int(299_997));
    assert!(big.get_values_range(99_990, 11).await.is_err());

    let values = |name: &'static str| {
        let thread = thread.clone();
        async move { local_array(&thread, name).await.get_values().await.unwrap() }
    };
    assert_eq!(values("booleans").await, [Value::Boolean(true), Value::Boolean(false), Value::Boolean(true)]);
    assert_eq!(values("bytes").await, [Value::Byte(-1), Value::Byte(0), Value::Byte(127)]);
    assert_eq!(values("chars").await, [Value::Char('a' as u16), Value::Char('b' as u16)]);
    assert_eq!(values("shorts").await, [Value::Short(-300), Value::Short(300)]);
    assert_eq!(values("longs").await, [Value::Long(i64::MIN), Value::Long(i64::MAX)]);
    assert_eq!(values("floats").await, [Value::Float(0.5), Value::Float(-1.25)]);
    assert_eq!(values("doubles").await, [Value::Double(std::f64::consts::PI)]);
    assert_eq!(values("empty").await, []);
    let strings = values("strings").await;
    assert_eq!(strings[1], Value::NULL);
    assert_eq!(string_value(&s, strings[0]).await, "a");
    assert_eq!(string_value(&s, strings[2]).await, "c");
    let mixed: Vec<Tag> = values("mixed").await.iter().map(Value::tag).collect();
    assert_eq!(mixed, [Tag::String, Tag::Object, Tag::Array, Tag::Object]);
    assert_eq!(values("mixed").await[3], Value::NULL);

    // A 2-D array is an array of arrays.
    let grid = local_array(&thread, "grid").await;
    assert_eq!(grid.component_type_name().await.unwrap(), "int[]");
    assert_eq!(grid.component_signature().await.unwrap(), "[I");
    let row = s.vm.value_mirror(grid.get_value(1).await.unwrap());
    assert_eq!(row.as_array().unwrap().get_values().await.unwrap(), [Value::Int(3), Value::Int(4), Value::Int(5)]);
    let grid_mirror = s.vm.value_mirror(Value::Object(Tag::Array, grid.0.id()));
    assert_eq!(grid_mirror.display().await.unwrap(), format!("instance of int[2][] (id={})", grid.0.unique_id()));
    let strings_array = local_array(&thread, "strings").await;
    assert_eq!(strings_array.component_type().await.unwrap().name(), "java.lang.String");

    // Writes: the whole big array in chunks, then single elements with conversions.
    let doubled: Vec<Value> = (0..100_000).map(|k| Value::Int(2 * k)).collect();
    big.set_values(0, doubled).await.unwrap();
    assert_eq!(big.get_values_range(50_000, 2).await.unwrap(), [Value::Int(100_000), Value::Int(100_002)]);
    big.set_value(99_999, Value::Int(7)).await.unwrap();
    let b = s.vm.create_string("B").await.unwrap();
    strings_array.set_value(1, Value::Object(Tag::String, b.0.id())).await.unwrap();
    ArrayReference(row.as_object().unwrap()).set_value(2, Value::Short(9)).await.unwrap();
    let bytes = local_array(&thread, "bytes").await;
    bytes.set_value(0, Value::Int(5)).await.unwrap();
    assert_eq!(bytes.get_value(0).await.unwrap(), Value::Byte(5));

    let message = invalid_argument(bytes.set_value(0, Value::Int(300)).await);
    assert!(message.contains("byte"), "{message}");
    invalid_argument(strings_array.set_value(0, Value::Int(1)).await);
    let strings_value = Value::Object(Tag::Array, strings_array.0.id());
    invalid_argument(grid.set_value(0, strings_value).await);
    invalid_argument(big.set_values(0, vec![Value::Int(1), Value::Double(0.5)]).await);
    assert_eq!(big.get_value(0).await.unwrap(), Value::Int(0), "a refused write writes nothing");

    s.run_to_marker("Values", "@end").await;
    assert_eq!(output_line(&s, "arrays big"), "arrays big[99999]=7 strings[1]=B grid[1][2]=9 bytes[0]=5");
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invoke_returns_values_of_every_type() {
    let mut s = common::start("Values", &["invoke"]).await;
    let (_, thread) = s.run_to_marker("Values", "@invoke").await;
    let boxed = local_object(&thread, "box").await;
    assert_eq!(invoke(&boxed, &thread, "getZ", vec![]).await, Value::Boolean(true));
    assert_eq!(invoke(&boxed, &thread, "getB", vec![]).await, Value::Byte(-8));
    assert_eq!(invoke(&boxed, &thread, "getC", vec![]).await, Value::Char('c' as u16));
    assert_eq!(invoke(&boxed, &thread, "getS", vec![]).await, Value::Short(300));
    assert_eq!(invoke(&boxed, &thread, "getI", vec![]).await, Value::Int(42));
    assert_eq!(invoke(&boxed, &thread, "getJ", vec![]).await, Value::Long(1 << 40));
    assert_eq!(invoke(&boxed, &thread, "getF", vec![]).await, Value::Float(1.5));
    assert_eq!(invoke(&boxed, &thread, "getD", vec![]).await, Value::Double(-2.75));
    assert_eq!(invoke(&boxed, &thread, "add", vec![Value::Int(2), Value::Int(3)]).await, Value::Int(5));
    // An int argument widens to the long parameter.
    assert_eq!(invoke(&boxed, &thread, "twice", vec![Value::Int(21)]).await, Value::Long(42));
    let p = s.vm.create_string("p").await.unwrap();
    let q = s.vm.create_string("q").await.unwrap();
    let args = vec![Value::Object(Tag::String, p.0.id()), Value::Object(Tag::String, q.0.id())];
    let described = invoke(&boxed, &thread, "describe", args).await;
    assert_eq!(string_value(&s, described).await, "p:q");
    // A void method returns Void, and its side effect shows in the output.
    assert_eq!(invoke(&boxed, &thread, "touch", vec![]).await, Value::Void);
    assert_eq!(boxed.get_value_by_name("i").await.unwrap(), Some(Value::Int(43)));

    // The event thread stays suspended once the call is done, however the call ran.
    assert_eq!(thread.suspend_count().await.unwrap(), 1);
    let get_i = method(&boxed, "getI").await;
    let single = boxed.invoke_method(&thread, &get_i, vec![], INVOKE_SINGLE_THREADED).await.unwrap();
    assert_eq!(single, InvokeResult::Returned(Value::Int(43)));
    assert_eq!(thread.suspend_count().await.unwrap(), 1);
    assert!(thread.is_suspended().await.unwrap());

    s.run_to_marker("Values", "@end").await;
    assert_eq!(output_line(&s, "invoke i="), "invoke i=43");
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invoke_nonvirtual_runs_the_overridden_method() {
    let mut s = common::start("Values", &["invoke"]).await;
    let (_, thread) = s.run_to_marker("Values", "@invoke").await;
    let boxed = local_object(&thread, "box").await;
    let base = boxed.reference_type().await.unwrap().superclass().await.unwrap().unwrap();
    assert_eq!(base.name(), "Values$Base");
    let base_who = base.methods_by_name("who").await.unwrap().remove(0);
    assert_eq!(base_who.declaring_type_id(), base.id());

    let virtual_call = boxed.invoke_method(&thread, &base_who, vec![], 0).await.unwrap();
    assert_eq!(string_value(&s, virtual_call.returned().unwrap()).await, "box");
    let nonvirtual = boxed.invoke_method(&thread, &base_who, vec![], INVOKE_NONVIRTUAL).await.unwrap();
    assert_eq!(string_value(&s, nonvirtual.returned().unwrap()).await, "base");
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invoke_reports_the_thrown_exception_and_refuses_bad_calls() {
    let mut s = common::start("Values", &["invoke"]).await;
    let (_, thread) = s.run_to_marker("Values", "@invoke").await;
    let boxed = local_object(&thread, "box").await;
    let boom = method(&boxed, "boom").await;
    let message = s.vm.create_string("bad things").await.unwrap();
    let result = boxed.invoke_method(&thread, &boom, vec![Value::Object(Tag::String, message.0.id())], 0).await;
    let exception = result.unwrap().exception().cloned().expect("boom throws");
    assert_eq!(exception.reference_type().await.unwrap().name(), "java.lang.IllegalStateException");
    assert_eq!(string_value(&s, invoke(&exception, &thread, "getMessage", vec![]).await).await, "bad things");

    // Calls that cannot be right never reach the VM.
    let add = method(&boxed, "add").await;
    let message = invalid_argument(boxed.invoke_method(&thread, &add, vec![Value::Int(1)], 0).await);
    assert!(message.contains("2"), "{message}");
    invalid_argument(boxed.invoke_method(&thread, &add, vec![Value::Int(1), Value::Boolean(true)], 0).await);
    let string_type = s.vm.classes_by_name("java.lang.String").await.unwrap().remove(0);
    let length = string_type.methods_by_name("length").await.unwrap().remove(0);
    let message = invalid_argument(boxed.invoke_method(&thread, &length, vec![], 0).await);
    assert!(message.contains("java.lang.String"), "{message}");
    let values_type = s.vm.classes_by_name("Values").await.unwrap().remove(0);
    let static_method = values_type.methods_by_name("answer").await.unwrap().remove(0);
    invalid_argument(boxed.invoke_method(&thread, &static_method, vec![], 0).await);
    s.finish().await;
}

/// While the whole VM is suspended, every object the debugger has an ID for is held, as the JDK's
/// agent does (ours makes those holds before the debugger's next command, not when the event
/// suspends the VM; this checks that a collection in between cannot take them).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn objects_with_ids_are_held_while_the_vm_is_suspended() {
    let mut s = common::start("Values", &["held"]).await;
    let (_, thread) = s.run_to_marker("Values", "@held-ref").await;
    let gone = local_array(&thread, "gone").await;
    // The VM runs (its hold ends), the program drops its last reference to the array, and a
    // suspend-all breakpoint stops the VM again.
    let (_, thread) = s.run_to_marker("Values", "@held-dropped").await;
    let boxed = local_object(&thread, "box").await;
    let gc = method(&boxed, "collectGarbage").await;
    // Single-threaded: the rest of the VM stays suspended, and so does the hold.
    boxed.invoke_method(&thread, &gc, vec![], INVOKE_SINGLE_THREADED).await.unwrap();
    assert!(!gone.0.is_collected().await.unwrap(), "the array was collected while the VM was suspended");
    assert_eq!(gone.get_values().await.unwrap(), [Value::Int(7), Value::Int(8)]);
    // An invoke that lets every thread run ends the hold: the next collection takes it.
    invoke(&boxed, &thread, "collectGarbage", vec![]).await;
    assert!(gone.0.is_collected().await.unwrap(), "System.gc() collects the unreferenced array");
    s.finish().await;
}

/// The same for classes the debugger has IDs for, listed as a debugger lists them: while the whole
/// VM is suspended, one that could be unloaded stays (a class of a throwaway loader, and a hidden
/// class of the application loader: hidden classes can be unloaded whatever their loader), and
/// once the VM runs again, a collection unloads them. Ours holds no other class while suspended
/// (the others can never be unloaded); this checks that it still holds these two.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unloadable_classes_with_ids_are_held_while_the_vm_is_suspended() {
    let mut s = common::start("Values", &["heldclasses"]).await;
    s.run_to_marker("Values", "@held-classes").await;
    let all = s.vm.all_classes().await.unwrap();
    // The one listed class whose signature is `wanted`.
    let listed = |wanted: &dyn Fn(&str) -> bool| {
        let found = all.iter().filter(|t| wanted(t.signature())).collect::<Vec<_>>();
        assert_eq!(found.len(), 1, "{:?}", found.iter().map(|t| t.signature()).collect::<Vec<_>>());
        found[0].clone()
    };
    let loaded = listed(&|sig| sig == "LValuesUnloadable;").class_object().await.unwrap();
    // JVMTI names a hidden class with a '.' before its suffix; the class of that name itself is
    // never loaded (the fixture only reads its bytes).
    let hidden = listed(&|sig| sig.starts_with("LValuesHidden.") && sig.ends_with(';')).class_object().await.unwrap();
    let values = listed(&|sig| sig == "LValues;").class_object().await.unwrap();
    let string = listed(&|sig| sig == "Ljava/lang/String;").class_object().await.unwrap();

    // Both locals are null now, and a suspend-all breakpoint stops the VM again.
    let (_, thread) = s.run_to_marker("Values", "@held-classes-dropped").await;
    let boxed = local_object(&thread, "box").await;
    let gc = method(&boxed, "collectGarbage").await;
    // Single-threaded: the rest of the VM stays suspended, and so does the hold.
    boxed.invoke_method(&thread, &gc, vec![], INVOKE_SINGLE_THREADED).await.unwrap();
    for (name, class) in [("ValuesUnloadable", &loaded), ("the hidden class", &hidden)] {
        assert!(!class.0.is_collected().await.unwrap(), "{name} was unloaded while the VM was suspended");
    }
    assert_eq!(loaded.reflected_type().await.unwrap().signature(), "LValuesUnloadable;");
    // An invoke that lets every thread run ends the hold: the next collection unloads both.
    invoke(&boxed, &thread, "collectGarbage", vec![]).await;
    for (name, class) in [("ValuesUnloadable", &loaded), ("the hidden class", &hidden)] {
        assert!(class.0.is_collected().await.unwrap(), "System.gc() unloads {name}, which nothing references");
    }
    for class in [&values, &string] {
        assert!(!class.0.is_collected().await.unwrap());
    }
    assert_eq!(string.reflected_type().await.unwrap().signature(), "Ljava/lang/String;");
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disabled_collection_keeps_an_object_alive_across_gc() {
    let mut s = common::start("Values", &["invoke"]).await;
    let (_, thread) = s.run_to_marker("Values", "@invoke").await;
    let boxed = local_object(&thread, "box").await;
    // Strings made by the debugger are referenced by nothing in the target.
    let kept = s.vm.create_string("kept").await.unwrap();
    kept.0.disable_collection().await.unwrap();
    let dropped = s.vm.create_string("dropped").await.unwrap();
    invoke(&boxed, &thread, "collectGarbage", vec![]).await;
    assert!(!kept.0.is_collected().await.unwrap());
    assert_eq!(kept.value().await.unwrap(), "kept");
    assert!(dropped.0.is_collected().await.unwrap(), "System.gc() collects an unreferenced string");
    assert_eq!(dropped.value().await.unwrap_err().code(), Some(ErrorCode::INVALID_OBJECT));

    kept.0.enable_collection().await.unwrap();
    invoke(&boxed, &thread, "collectGarbage", vec![]).await;
    assert!(kept.0.is_collected().await.unwrap());
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn objects_know_their_referrers_monitor_and_identity() {
    let mut s = common::start("Values", &["invoke"]).await;
    let (_, thread) = s.run_to_marker("Values", "@invoke").await;
    let boxed = local_object(&thread, "box").await;
    let other = s.vm.value_mirror(boxed.get_value_by_name("other").await.unwrap().unwrap()).as_object().unwrap();
    assert_eq!(other.reference_type().await.unwrap().name(), "Values$Base");
    assert!(other.referring_objects(0).await.unwrap().contains(&boxed));
    assert_ne!(other.unique_id(), boxed.unique_id());
    assert_eq!(local_object(&thread, "box").await.unique_id(), boxed.unique_id(), "IDs are stable");

    let info = boxed.monitor_info().await.unwrap();
    assert_eq!((info.owner, info.entry_count, info.waiters.len()), (None, 0, 0));
    assert_eq!(boxed.owning_thread().await.unwrap(), None);
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn force_early_return_changes_an_int_result() {
    let mut s = common::start("Values", &["early"]).await;
    let (_, thread) = s.run_to_marker("Values", "@early-answer").await;
    // Checked against int answer() before the VM is asked.
    let message = invalid_argument(thread.force_early_return(Value::Boolean(true)).await);
    assert!(message.contains("Values.answer()I") && message.contains("int"), "{message}");
    invalid_argument(thread.force_early_return(Value::NULL).await);
    invalid_argument(thread.force_early_return(Value::Void).await);
    invalid_argument(thread.force_early_return(Value::Long(1 << 40)).await);
    thread.force_early_return(Value::Int(99)).await.unwrap();
    s.run_to_marker("Values", "@end").await;
    assert_eq!(output_line(&s, "answer="), "answer=99");
    assert_eq!(output_line(&s, "greet="), "greet=hi");
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn force_early_return_of_an_object_and_from_a_void_method() {
    let mut s = common::start("Values", &["early"]).await;
    let (_, thread) = s.run_to_marker("Values", "@early-greet").await;
    let thread_value = Value::Object(Tag::Thread, thread.id().into());
    let message = invalid_argument(thread.force_early_return(thread_value).await);
    // The thread's own class: java.lang.VirtualThread for a virtual main.
    let thread_class = common::main_thread_class();
    assert!(message.contains(&format!("an instance of {thread_class} ")), "{message}");
    assert!(message.contains("java.lang.String"), "{message}");
    let forced = s.vm.create_string("forced").await.unwrap();
    thread.force_early_return(Value::Object(Tag::String, forced.0.id())).await.unwrap();

    let (_, thread) = s.run_to_marker("Values", "@early-void").await;
    invalid_argument(thread.force_early_return(Value::Int(1)).await);
    thread.force_early_return(Value::Void).await.unwrap();
    s.run_to_marker("Values", "@end").await;
    assert_eq!(output_line(&s, "greet="), "greet=forced");
    output_line(&s, "early done");
    assert!(!s.jvm.stdout_text().contains("side effect ran"), "{}", s.jvm.output_text());
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn popping_a_frame_makes_the_caller_call_again() {
    let mut s = common::start("Values", &["pop"]).await;
    let (set, thread) = s.run_to_marker("Values", "@pop-inside").await;
    let Some(Event::Breakpoint { request_id, .. }) = set.events.first().cloned() else { panic!("{set:?}") };
    let values_type = s.vm.classes_by_name("Values").await.unwrap().remove(0);
    let calls = values_type.field_by_name("calls").await.unwrap().unwrap();
    assert_eq!(values_type.get_value(&calls).await.unwrap(), Value::Int(1));

    let frames = thread.frames().await.unwrap();
    assert_eq!(frames[0].method().await.unwrap().name(), "counted");
    thread.pop_frames(&frames[0]).await.unwrap();
    let top = thread.frame(0).await.unwrap();
    assert_eq!(top.method().await.unwrap().name(), "pop", "back in the caller, before the call");

    // Resumed, the caller calls counted() again and the breakpoint hits a second time.
    s.vm.resume().await.unwrap();
    s.events
        .wait_for(TIMEOUT, |e| matches!(e, Event::Breakpoint { request_id: r, .. } if *r == request_id))
        .await
        .unwrap();
    assert_eq!(values_type.get_value(&calls).await.unwrap(), Value::Int(2));
    s.run_to_marker("Values", "@end").await;
    assert_eq!(output_line(&s, "pop got="), "pop got=2 calls=2");
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_thousand_frames_come_back_in_one_piece() {
    let mut s = common::start("Values", &["recurse"]).await;
    let (_, thread) = s.run_to_marker("Values", "@bottom").await;
    // bottom, 2001 recurse, main, and what is below main (a virtual main's wrapper and start).
    let below_main = common::frames_below_main();
    let count = 2003 + below_main.len();
    assert_eq!(thread.frame_count().await.unwrap(), count as i32);
    let frames = thread.frames().await.unwrap();
    assert_eq!(frames.len(), count);
    let mut names = Vec::with_capacity(frames.len());
    for f in &frames {
        names.push(f.method().await.unwrap().name().to_string());
    }
    assert_eq!(names[0], "bottom");
    assert!(names[1..=2001].iter().all(|n| n == "recurse"), "{names:?}");
    assert_eq!(names[2002], "main");
    assert_eq!(names[2003..], *below_main);
    assert!(frames.iter().enumerate().all(|(i, f)| f.depth() == i as i32));
    // recurse(n) sits at depth n + 1.
    for depth in [1, 2, 1000, 2001] {
        assert_eq!(frames[depth].argument_values().await.unwrap(), [Value::Int(depth as i32 - 1)]);
        assert_eq!(frames[depth].get_value_by_name("n").await.unwrap(), Some(Value::Int(depth as i32 - 1)));
    }
    // A slice from the middle matches the whole.
    let slice = thread.frames_range(1000, 5).await.unwrap();
    assert_eq!(slice.len(), 5);
    for (f, g) in slice.iter().zip(&frames[1000..1005]) {
        assert_eq!((f.depth(), f.location()), (g.depth(), g.location()));
    }
    let single = thread.frame(2002).await.unwrap();
    assert_eq!(single.location(), frames[2002].location());
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frame_used_after_resume_is_an_invalid_frame_id() {
    let mut s = common::start("Demo", &[]).await;
    let (set, thread) = s.run_to_marker("Demo", "@tick-first").await;
    let Some(Event::Breakpoint { request_id, .. }) = set.events.first().cloned() else { panic!("{set:?}") };
    let stale = thread.frame(0).await.unwrap();
    assert_eq!(stale.get_value_by_name("n").await.unwrap(), Some(Value::Int(0)));

    s.vm.resume().await.unwrap();
    s.events
        .wait_for(TIMEOUT, |e| matches!(e, Event::Breakpoint { request_id: r, .. } if *r == request_id))
        .await
        .unwrap();
    // Same thread, suspended again at the same line: the old frame is gone all the same.
    let err = stale.get_value_by_name("n").await.unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::INVALID_FRAMEID), "{err}");
    assert_eq!(stale.this_object().await.unwrap_err().code(), Some(ErrorCode::INVALID_FRAMEID));
    let fresh = thread.frame(0).await.unwrap();
    assert_eq!(fresh.get_value_by_name("n").await.unwrap(), Some(Value::Int(1)));
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn frames_without_debug_info_are_read_and_written_by_slot() {
    let mut s = common::start("Values", &["nodebug"]).await;
    let (_, thread) = s.run_to_marker("Values", "@lambda").await;
    // Frame 1 is the JDK-generated proxy's applyAsLong(long, long): no variable table.
    let proxy = thread.frame(1).await.unwrap();
    assert_eq!(proxy.method().await.unwrap().name(), "applyAsLong");
    let err = proxy.visible_variables().await.unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::ABSENT_INFORMATION), "{err}");
    assert_eq!(proxy.argument_values().await.unwrap(), [Value::Long(40), Value::Long(2)]);
    // Slot 0 is `this`; the longs take slots 1-2 and 3-4.
    assert_eq!(
        proxy.get_slot_values(&[(1, Tag::Long), (3, Tag::Long)]).await.unwrap(),
        [Value::Long(40), Value::Long(2)]
    );
    assert!(proxy.this_object().await.unwrap().is_some());

    // The lambda's body (static, x in 0-1, y in 2-3, sum in 4-5): write `sum` by slot.
    let body = thread.frame(0).await.unwrap();
    assert_eq!(body.get_slot_values(&[(4, Tag::Long)]).await.unwrap(), [Value::Long(42)]);
    body.set_slot_values(&[(4, Value::Long(100))]).await.unwrap();
    s.run_to_marker("Values", "@end").await;
    assert_eq!(output_line(&s, "nodebug="), "nodebug=100");
    s.finish().await;
}
