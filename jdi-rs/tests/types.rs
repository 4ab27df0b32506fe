//! Type mirrors against a real VM: reference types, classes, interfaces, arrays, methods,
//! fields, class loaders, class objects, modules and the VM-wide queries about them. Most tests
//! stop `Shapes` (tests/fixtures/Shapes.java) at `@ready`, where every type it declares is loaded.

mod common;

use std::collections::BTreeSet;

use jdi::protocol::{ErrorCode, TypeTag, invoke_options};
use jdi::{
    ArrayType, ClassType, Field, InterfaceType, InvokeResult, JdiError, Method, PrimitiveType, ReferenceType,
    StringReference, Tag, ThreadReference, Type, Value, VirtualMachine,
};

/// Starts Shapes and stops it at `@ready` (all threads suspended by the breakpoint).
async fn shapes_ready() -> (common::Session, ThreadReference) {
    let mut s = common::start("Shapes", &[]).await;
    let (_, thread) = s.run_to_marker("Shapes", "@ready").await;
    (s, thread)
}

fn line(marker: &str) -> i32 {
    test_rig::fixture_line("Shapes.java", marker).unwrap() as i32
}

/// The one loaded type with this name.
async fn class(vm: &VirtualMachine, name: &str) -> ReferenceType {
    let mut found = vm.classes_by_name(name).await.unwrap();
    assert_eq!(found.len(), 1, "{name}: {found:?}");
    found.pop().unwrap()
}

async fn class_type(vm: &VirtualMachine, name: &str) -> ClassType {
    class(vm, name).await.as_class().unwrap_or_else(|| panic!("{name} is not a class"))
}

async fn interface_type(vm: &VirtualMachine, name: &str) -> InterfaceType {
    class(vm, name).await.as_interface().unwrap_or_else(|| panic!("{name} is not an interface"))
}

/// The method `name` with JNI signature `sig` declared by `t`.
async fn method(t: &ReferenceType, name: &str, sig: &str) -> Method {
    let found = t.methods().await.unwrap().into_iter().find(|m| m.name() == name && m.signature() == sig);
    found.unwrap_or_else(|| panic!("{}.{name}{sig} not declared", t.name()))
}

async fn field(t: &ReferenceType, name: &str) -> Field {
    t.fields().await.unwrap().into_iter().find(|f| f.name == name).unwrap_or_else(|| panic!("no field {name}"))
}

fn type_names<T: AsRef<ReferenceType>>(types: &[T]) -> BTreeSet<String> {
    types.iter().map(|t| t.as_ref().name()).collect()
}

/// `Declaring.name` of fields, in order.
async fn qualified_fields(fields: &[Field]) -> Vec<String> {
    let mut out = Vec::new();
    for f in fields {
        out.push(format!("{}.{}", f.declaring_type().await.unwrap().name(), f.name));
    }
    out
}

async fn qualified_methods(methods: &[Method]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for m in methods {
        out.insert(format!("{}.{}{}", m.declaring_type().await.unwrap().name(), m.name(), m.signature()));
    }
    out
}

async fn string_value(vm: &VirtualMachine, value: Value) -> String {
    let Value::Object(Tag::String, id) = value else { panic!("not a string: {value:?}") };
    StringReference::new(vm.clone(), id).value().await.unwrap()
}

fn object_value(o: &jdi::ObjectReference) -> Value {
    Value::Object(Tag::Object, o.id())
}

async fn jdi_string(vm: &VirtualMachine, text: &str) -> Value {
    Value::Object(Tag::String, vm.create_string(text).await.unwrap().as_object().id())
}

fn invalid_argument<T: std::fmt::Debug>(r: jdi::Result<T>) -> String {
    match r {
        Err(JdiError::InvalidArgument(why)) => why,
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn names_signatures_and_kinds() {
    let (s, _) = shapes_ready().await;
    let vm = &s.vm;
    let circle = class(vm, "Shapes$Circle").await;
    assert_eq!(circle.name(), "Shapes$Circle");
    assert_eq!(circle.signature(), "LShapes$Circle;");
    assert_eq!(circle.tag(), TypeTag::Class);
    assert!(circle.as_class().is_some() && circle.as_interface().is_none() && circle.as_array().is_none());
    assert_eq!(
        circle.generic_signature().await.unwrap().as_deref(),
        Some("LShapes$AbstractShape;Ljava/lang/Comparable<LShapes$Circle;>;")
    );
    assert_eq!(class(vm, "Shapes$Square").await.generic_signature().await.unwrap(), None);

    let shape = class(vm, "Shapes$Shape").await;
    assert!(shape.is_interface() && shape.as_interface().is_some());

    let boxed = class(vm, "Shapes$Box").await;
    assert_eq!(boxed.generic_signature().await.unwrap().as_deref(), Some("<T:Ljava/lang/Object;>Ljava/lang/Object;"));

    // Arrays by name and by signature; primitives are not reference types.
    let grid = class(vm, "int[][]").await;
    assert!(grid.is_array());
    assert_eq!(grid.signature(), "[[I");
    assert_eq!(vm.classes_by_signature("[[I").await.unwrap(), vec![grid.clone()]);
    assert!(vm.classes_by_name("int").await.unwrap().is_empty());
    assert_eq!(PrimitiveType::from_name("int"), Some(PrimitiveType::Int));
    assert_eq!(PrimitiveType::from_signature("J").map(PrimitiveType::name), Some("long"));

    // all_classes lists prepared types (arrays included) and knows their kinds.
    let all = vm.all_classes().await.unwrap();
    for (name, tag) in
        [("Shapes$Circle", TypeTag::Class), ("Shapes$Shape", TypeTag::Interface), ("int[][]", TypeTag::Array)]
    {
        assert_eq!(all.iter().find(|t| t.name() == name).map(|t| t.tag()), Some(tag), "{name}");
    }
    assert!(!all.iter().any(|t| t.name() == "Shapes$Unused"), "Unused is never loaded");
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn modifiers_and_class_status() {
    let (s, _) = shapes_ready().await;
    let vm = &s.vm;
    let circle = class(vm, "Shapes$Circle").await;
    assert!(circle.is_static().await.unwrap(), "member classes report their InnerClasses flags");
    assert!(circle.is_package_private().await.unwrap());
    assert!(!circle.is_abstract().await.unwrap() && !circle.is_final().await.unwrap());
    assert!(class(vm, "Shapes$AbstractShape").await.is_abstract().await.unwrap());
    assert!(class(vm, "Shapes$Shape").await.is_abstract().await.unwrap());
    let plugin = class(vm, "Shapes").await;
    assert!(plugin.is_public().await.unwrap() && !plugin.is_static().await.unwrap());
    assert!(class(vm, "Shapes$Color").await.is_final().await.unwrap());
    assert!(!class(vm, "Shapes$Inner").await.is_static().await.unwrap());

    assert!(circle.is_verified().await.unwrap());
    assert!(circle.is_prepared().await.unwrap());
    assert!(circle.is_initialized().await.unwrap());
    assert!(!circle.failed_to_initialize().await.unwrap());
    let broken = class(vm, "Shapes$Broken").await;
    assert!(broken.failed_to_initialize().await.unwrap());
    assert!(!broken.is_initialized().await.unwrap());
    let ints = class(vm, "int[]").await;
    assert!(ints.is_prepared().await.unwrap() && ints.is_initialized().await.unwrap());
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn declared_fields_and_their_properties() {
    let (s, _) = shapes_ready().await;
    let vm = &s.vm;
    let circle = class(vm, "Shapes$Circle").await;
    let names: Vec<String> = circle.fields().await.unwrap().iter().map(|f| f.name.clone()).collect();
    assert_eq!(names, ["label", "radius", "cachedHash", "dirty"]);
    let label = field(&circle, "label").await;
    assert_eq!(label.type_name(), "java.lang.String");
    assert_eq!(label.field_type().await.unwrap().name(), "java.lang.String");
    assert_eq!(label.declaring_type().await.unwrap(), circle);
    let radius = field(&circle, "radius").await;
    assert_eq!(radius.field_type().await.unwrap(), Type::Primitive(PrimitiveType::Double));
    assert!(field(&circle, "cachedHash").await.is_transient());
    assert!(field(&circle, "dirty").await.is_volatile());
    assert!(!radius.is_static() && !radius.is_transient() && !radius.is_volatile() && radius.is_package_private());

    let color = class(vm, "Shapes$Color").await;
    let red = field(&color, "RED").await;
    assert!(red.is_enum_constant() && red.is_static() && red.is_final() && red.is_public());
    assert!(field(&color, "$VALUES").await.is_synthetic());
    assert!(!red.is_synthetic());
    assert!(field(&class(vm, "Shapes$Inner").await, "this$0").await.is_synthetic());

    let shapes = class(vm, "Shapes").await;
    let fin = field(&shapes, "FINAL").await;
    assert!(fin.is_static() && fin.is_final());
    let shape_field = field(&shapes, "sShape").await;
    let shape_type = shape_field.field_type().await.unwrap();
    assert!(shape_type.as_reference().is_some_and(|t| t.is_interface()), "{shape_type:?}");
    assert_eq!(shape_type.name(), "Shapes$Shape");
    let ints = field(&shapes, "sInts").await.field_type().await.unwrap();
    assert_eq!(ints.as_reference().map(|t| t.signature()), Some("[I"));
    // A field whose type was never loaded.
    match field(&shapes, "unused").await.field_type().await {
        Err(JdiError::ClassNotLoaded(name)) => assert_eq!(name, "Shapes$Unused"),
        other => panic!("expected ClassNotLoaded, got {other:?}"),
    }

    let boxed = class(vm, "Shapes$Box").await;
    assert_eq!(field(&boxed, "value").await.generic_signature.as_deref(), Some("TT;"));
    assert_eq!(field(&boxed, "history").await.generic_signature.as_deref(), Some("Ljava/util/List<TT;>;"));
    assert_eq!(field(&boxed, "value").await.signature, "Ljava/lang/Object;");
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn visible_and_all_fields_follow_hiding_and_ambiguity() {
    let (s, _) = shapes_ready().await;
    let vm = &s.vm;
    let circle = class(vm, "Shapes$Circle").await;
    // Circle.label hides AbstractShape.label; interfaces' constants come through AbstractShape.
    assert_eq!(
        qualified_fields(&circle.visible_fields().await.unwrap()).await,
        [
            "Shapes$Circle.label",
            "Shapes$Circle.radius",
            "Shapes$Circle.cachedHash",
            "Shapes$Circle.dirty",
            "Shapes$AbstractShape.sides",
            "Shapes$Shape.ID",
            "Shapes$Shape.KIND",
        ]
    );
    let all = qualified_fields(&circle.all_fields().await.unwrap()).await;
    assert!(all.contains(&"Shapes$AbstractShape.label".to_string()) && all.contains(&"Shapes$Circle.label".into()));
    assert_eq!(all.len(), 4 + 2 + 2);
    let id = circle.field_by_name("ID").await.unwrap().expect("Circle sees Shape.ID");
    assert_eq!(id.declaring_type().await.unwrap().name(), "Shapes$Shape");
    let label = circle.field_by_name("label").await.unwrap().unwrap();
    assert_eq!(label.declaring_type().await.unwrap(), circle);

    // Square gets ID from Shape (via Polygon) and from Tagged: ambiguous, so not visible.
    let square = class(vm, "Shapes$Square").await;
    assert_eq!(
        qualified_fields(&square.visible_fields().await.unwrap()).await,
        [
            "Shapes$Square.side",
            "Shapes$Shape.KIND",
            "Shapes$Tagged.TAG",
            "Shapes$AbstractShape.label",
            "Shapes$AbstractShape.sides",
        ]
    );
    assert!(square.field_by_name("ID").await.unwrap().is_none());
    assert_eq!(
        qualified_fields(&square.all_fields().await.unwrap()).await,
        [
            "Shapes$Square.side",
            "Shapes$Shape.ID",
            "Shapes$Shape.KIND",
            "Shapes$Tagged.ID",
            "Shapes$Tagged.TAG",
            "Shapes$AbstractShape.label",
            "Shapes$AbstractShape.sides",
        ]
    );
    // Arrays have no fields (their length is not one).
    assert!(class(vm, "int[]").await.all_fields().await.unwrap().is_empty());
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn declared_methods_and_method_properties() {
    let (s, _) = shapes_ready().await;
    let vm = &s.vm;
    let circle = class(vm, "Shapes$Circle").await;
    let declared: BTreeSet<String> =
        circle.methods().await.unwrap().iter().map(|m| format!("{}{}", m.name(), m.signature())).collect();
    let expected: BTreeSet<String> = [
        "<init>(D)V",
        "area()D",
        "describe()Ljava/lang/String;",
        "scale(D)D",
        "scale(I)D",
        "scale(DD)D",
        "compareTo(LShapes$Circle;)I",
        "compareTo(Ljava/lang/Object;)I",
        "grow()V",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    assert_eq!(declared, expected);

    let bridge = method(&circle, "compareTo", "(Ljava/lang/Object;)I").await;
    assert!(bridge.is_bridge() && bridge.is_synthetic());
    let compare = method(&circle, "compareTo", "(LShapes$Circle;)I").await;
    assert!(!compare.is_bridge() && !compare.is_synthetic() && compare.is_public());
    assert!(method(&circle, "grow", "()V").await.is_synchronized());
    let ctor = method(&circle, "<init>", "(D)V").await;
    assert!(ctor.is_constructor() && !ctor.is_static());
    assert_eq!(ctor.argument_type_names(), ["double"]);
    assert_eq!(ctor.return_type_name(), "void");
    assert_eq!(ctor.return_type().await.unwrap(), Type::Void);

    let shapes = class(vm, "Shapes").await;
    let sum = method(&shapes, "sum", "([I)I").await;
    assert!(sum.is_varargs() && sum.is_static());
    assert_eq!(sum.argument_type_names(), ["int[]"]);
    let join = method(&shapes, "join", "(Ljava/lang/String;[Ljava/lang/Object;)Ljava/lang/String;").await;
    assert!(join.is_varargs());
    assert_eq!(join.argument_type_names(), ["java.lang.String", "java.lang.Object[]"]);
    assert_eq!(join.return_type_name(), "java.lang.String");
    let arg_types = join.argument_types().await.unwrap();
    assert_eq!(arg_types.iter().map(Type::name).collect::<Vec<_>>(), ["java.lang.String", "java.lang.Object[]"]);
    assert!(method(&shapes, "nativeHook", "()I").await.is_native());
    assert!(method(&shapes, "<clinit>", "()V").await.is_static_initializer());
    let take_unused = method(&shapes, "takeUnused", "(LShapes$Unused;)V").await;
    assert!(matches!(take_unused.argument_types().await, Err(JdiError::ClassNotLoaded(_))));
    // The lambda in main is compiled to a synthetic method.
    assert!(shapes.methods().await.unwrap().iter().any(|m| m.name().starts_with("lambda$") && m.is_synthetic()));

    let shape = class(vm, "Shapes$Shape").await;
    let describe = method(&shape, "describe", "()Ljava/lang/String;").await;
    assert!(describe.is_default() && !describe.is_abstract());
    assert!(method(&shape, "area", "()D").await.is_abstract());
    assert!(!method(&shape, "twice", "(I)I").await.is_default());

    let boxed = class(vm, "Shapes$Box").await;
    let get = method(&boxed, "get", "()Ljava/lang/Object;").await;
    assert_eq!(get.generic_signature(), Some("()TT;"));
    let map = method(&boxed, "map", "(Ljava/util/function/Function;)Ljava/lang/Object;").await;
    assert_eq!(map.generic_signature(), Some("<R:Ljava/lang/Object;>(Ljava/util/function/Function<TT;TR;>;)TR;"));

    assert_eq!(
        circle.method_by_id(jdi::protocol::MethodId(0x7fff_fff0)).await.unwrap_err().code(),
        Some(ErrorCode::INVALID_METHODID)
    );
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn visible_and_all_methods_follow_overriding() {
    let (s, _) = shapes_ready().await;
    let vm = &s.vm;
    let square = class(vm, "Shapes$Square").await;
    let visible = qualified_methods(&square.visible_methods().await.unwrap()).await;
    for present in [
        "Shapes$Square.<init>(D)V",
        "Shapes$Square.area()D",
        "Shapes$Square.corners()I",
        "Shapes$AbstractShape.name()Ljava/lang/String;",
        "Shapes$Shape.describe()Ljava/lang/String;",
        "java.lang.Object.toString()Ljava/lang/String;",
    ] {
        assert!(visible.contains(present), "{present} missing from {visible:?}");
    }
    for absent in [
        "Shapes$AbstractShape.<init>(Ljava/lang/String;I)V",
        "Shapes$AbstractShape.area()D",
        "Shapes$Shape.area()D",
        "Shapes$Shape.name()Ljava/lang/String;",
        "Shapes$Shape.unit()LShapes$Shape;",
        "Shapes$Shape.twice(I)I",
        "Shapes$Polygon.corners()I",
        "java.lang.Object.<init>()V",
    ] {
        assert!(!visible.contains(absent), "{absent} should not be visible: {visible:?}");
    }
    let all = qualified_methods(&square.all_methods().await.unwrap()).await;
    for present in ["Shapes$AbstractShape.area()D", "Shapes$Shape.area()D", "Shapes$Polygon.corners()I"] {
        assert!(all.contains(present), "{present} missing from all_methods");
    }
    assert!(all.is_superset(&visible));
    // Declared methods come first, as JDI orders them.
    let first = square.all_methods().await.unwrap().into_iter().next().unwrap();
    assert_eq!(first.declaring_type_id(), square.id());

    let circle = class_type(vm, "Shapes$Circle").await;
    assert_eq!(circle.methods_by_name("scale").await.unwrap().len(), 3);
    let scale_int = circle.methods_by_name_and_signature("scale", "(I)D").await.unwrap();
    assert_eq!(scale_int.len(), 1);
    assert_eq!(scale_int[0].argument_type_names(), ["int"]);
    let describes = circle.methods_by_name("describe").await.unwrap();
    assert_eq!(
        qualified_methods(&describes).await,
        BTreeSet::from(["Shapes$Circle.describe()Ljava/lang/String;".into()])
    );

    let concrete = square.as_class().unwrap().concrete_method_by_name("describe", "()Ljava/lang/String;").await;
    assert_eq!(concrete.unwrap().unwrap().declaring_type().await.unwrap().name(), "Shapes$Shape");
    let concrete = circle.concrete_method_by_name("name", "()Ljava/lang/String;").await.unwrap().unwrap();
    assert_eq!(concrete.declaring_type().await.unwrap().name(), "Shapes$AbstractShape");
    assert!(circle.concrete_method_by_name("nope", "()V").await.unwrap().is_none());
    // Interfaces inherit their superinterfaces' methods, not Object's.
    let polygon = class(vm, "Shapes$Polygon").await;
    let visible = qualified_methods(&polygon.visible_methods().await.unwrap()).await;
    assert!(visible.contains("Shapes$Shape.describe()Ljava/lang/String;"));
    assert!(!visible.iter().any(|m| m.starts_with("java.lang.Object.")));
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn supertypes_subtypes_and_nested_types() {
    let (s, _) = shapes_ready().await;
    let vm = &s.vm;
    let circle = class_type(vm, "Shapes$Circle").await;
    let abstract_shape = circle.superclass().await.unwrap().unwrap();
    assert_eq!(abstract_shape.name(), "Shapes$AbstractShape");
    let object = abstract_shape.superclass().await.unwrap().unwrap();
    assert_eq!(object.name(), "java.lang.Object");
    assert!(object.superclass().await.unwrap().is_none());
    assert_eq!(type_names(&circle.interfaces().await.unwrap()), BTreeSet::from(["java.lang.Comparable".into()]));

    let square = class_type(vm, "Shapes$Square").await;
    let direct: Vec<String> = square.interfaces().await.unwrap().iter().map(|i| i.name()).collect();
    assert_eq!(direct, ["Shapes$Polygon", "Shapes$Tagged"]);
    let all: Vec<String> = square.all_interfaces().await.unwrap().iter().map(|i| i.name()).collect();
    assert_eq!(all, ["Shapes$Polygon", "Shapes$Shape", "Shapes$Tagged"]);
    assert!(square.is_assignable_to("LShapes$Shape;").await.unwrap());
    assert!(square.is_assignable_to("Ljava/lang/Object;").await.unwrap());
    assert!(!square.is_assignable_to("LShapes$Circle;").await.unwrap());

    let shape = interface_type(vm, "Shapes$Shape").await;
    assert!(shape.superinterfaces().await.unwrap().is_empty());
    let polygon = interface_type(vm, "Shapes$Polygon").await;
    assert_eq!(type_names(&polygon.superinterfaces().await.unwrap()), BTreeSet::from(["Shapes$Shape".into()]));
    assert_eq!(type_names(&shape.subinterfaces().await.unwrap()), BTreeSet::from(["Shapes$Polygon".into()]));
    assert_eq!(type_names(&shape.implementors().await.unwrap()), BTreeSet::from(["Shapes$AbstractShape".into()]));
    assert_eq!(type_names(&polygon.implementors().await.unwrap()), BTreeSet::from(["Shapes$Square".into()]));
    let subclasses = abstract_shape.subclasses().await.unwrap();
    assert_eq!(type_names(&subclasses), BTreeSet::from(["Shapes$Circle".into(), "Shapes$Square".into()]));
    assert!(circle.subclasses().await.unwrap().is_empty());

    assert!(class_type(vm, "Shapes$Color").await.is_enum().await.unwrap());
    assert!(!circle.is_enum().await.unwrap());

    let nested = type_names(&class(vm, "Shapes").await.nested_types().await.unwrap());
    for name in ["Shapes$Circle", "Shapes$Shape", "Shapes$Color", "Shapes$Box", "Shapes$Inner", "Shapes$Registry"] {
        assert!(nested.contains(name), "{name} missing from {nested:?}");
    }
    assert!(!nested.contains("Shapes$Unused"), "only loaded types are listed");
    assert!(class(vm, "Shapes$Square").await.nested_types().await.unwrap().is_empty());
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn source_information_and_line_locations() {
    let (s, _) = shapes_ready().await;
    let vm = &s.vm;
    let circle = class(vm, "Shapes$Circle").await;
    assert_eq!(circle.source_name().await.unwrap(), "Shapes.java");
    assert_eq!(circle.source_paths().await.unwrap(), ["Shapes.java"]);
    let string = class(vm, "java.lang.String").await;
    assert_eq!(string.source_paths().await.unwrap(), ["java/lang/String.java"]);
    let sde = circle.source_debug_extension().await.unwrap_err();
    assert_eq!(sde.code(), Some(ErrorCode::ABSENT_INFORMATION), "{sde}");

    let area_line = line("@circle-area");
    let locations = circle.locations_of_line(area_line).await.unwrap();
    assert_eq!(locations.len(), 1);
    let area = method(&circle, "area", "()D").await;
    assert_eq!(locations[0].method_id, area.id());
    assert!(circle.all_line_locations().await.unwrap().contains(&locations[0]));
    // A comment line has no code.
    assert!(circle.locations_of_line(line("@circle-area") - 99).await.unwrap().is_empty());

    let table = area.all_line_locations().await.unwrap();
    assert_eq!(table.first().map(|l| l.line), Some(area_line));
    assert_eq!(area.line_of(table[0].code_index).await.unwrap(), area_line);
    let (start, end) = area.code_range().await.unwrap().unwrap();
    assert_eq!(area.code_location().await.unwrap(), Some(area.location(start as u64)));
    assert_eq!(area.location_of_code_index(0).await.unwrap(), Some(area.location(0)));
    assert_eq!(area.location_of_code_index(end as u64 + 1).await.unwrap(), None);
    assert_eq!(area.line_locations().await.unwrap()[0], area.location(table[0].code_index));

    let shape = class(vm, "Shapes$Shape").await;
    assert_eq!(shape.locations_of_line(line("@shape-twice")).await.unwrap().len(), 1);
    let abstract_area = method(&shape, "area", "()D").await;
    assert!(abstract_area.all_line_locations().await.unwrap().is_empty());
    assert_eq!(abstract_area.code_location().await.unwrap(), None);
    assert_eq!(abstract_area.location_of_code_index(0).await.unwrap(), None);
    let native = method(&class(vm, "Shapes").await, "nativeHook", "()I").await;
    assert!(native.locations_of_line(1).await.unwrap().is_empty());
    assert_eq!(native.line_of(0).await.unwrap(), -1);
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn variables_and_arguments() {
    let (s, _) = shapes_ready().await;
    let vm = &s.vm;
    let shapes = class(vm, "Shapes").await;
    let add = method(&shapes, "add", "(II)I").await;
    let args = add.arguments().await.unwrap();
    assert_eq!(
        args.iter().map(|a| (a.name.as_str(), a.type_name())).collect::<Vec<_>>(),
        [("a", "int".into()), ("b", "int".into())]
    );
    assert!(args.iter().all(|a| a.is_argument));

    let sum = method(&shapes, "sum", "([I)I").await;
    let locals: Vec<&str> =
        sum.variables().await.unwrap().iter().filter(|v| !v.is_argument).map(|v| v.name.as_str()).collect();
    assert!(locals.contains(&"total"), "{locals:?}");

    let boxed = class(vm, "Shapes$Box").await;
    let map = method(&boxed, "map", "(Ljava/util/function/Function;)Ljava/lang/Object;").await;
    let names = map.variables_by_name("names").await.unwrap();
    assert_eq!(names.len(), 1);
    assert_eq!(names[0].signature, "Ljava/util/List;");
    assert_eq!(names[0].generic_signature.as_deref(), Some("Ljava/util/List<Ljava/lang/String;>;"));
    assert!(!names[0].is_argument);
    let map_line = test_rig::fixture_line("Shapes.java", "@box-map").unwrap() as i32;
    let at_line = map.locations_of_line(map_line).await.unwrap()[0];
    assert!(names[0].is_visible_at(at_line.index));
    let f = &map.arguments().await.unwrap()[0];
    assert_eq!((f.name.as_str(), f.generic_signature.as_deref()), ("f", Some("Ljava/util/function/Function<TT;TR;>;")));
    // `this` is not a variable (JDI leaves it out; frames have this_object).
    assert!(map.variables_by_name("this").await.unwrap().is_empty());

    let circle = class(vm, "Shapes$Circle").await;
    assert!(method(&circle, "area", "()D").await.variables().await.unwrap().is_empty());
    let shape = class(vm, "Shapes$Shape").await;
    let abstract_area = method(&shape, "area", "()D").await;
    assert_eq!(abstract_area.variables().await.unwrap_err().code(), Some(ErrorCode::ABSENT_INFORMATION));
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn class_loaders_define_and_see_classes() {
    let (s, _) = shapes_ready().await;
    let vm = &s.vm;
    let shapes = class(vm, "Shapes").await;
    let app = shapes.class_loader().await.unwrap().expect("Shapes comes from the application loader");
    assert!(class(vm, "java.lang.String").await.class_loader().await.unwrap().is_none(), "bootstrap");

    // Two Plugin types: the application loader's and the URLClassLoader's.
    let plugins = vm.classes_by_name("Shapes$Plugin").await.unwrap();
    assert_eq!(plugins.len(), 2, "{plugins:?}");
    let mut loaders = Vec::new();
    for p in &plugins {
        loaders.push(p.class_loader().await.unwrap().expect("not the bootstrap loader"));
    }
    let custom = loaders.iter().find(|l| **l != app).expect("a second loader").clone();
    assert_eq!(custom.as_object().reference_type().await.unwrap().name(), "java.net.URLClassLoader");

    let custom_defined = type_names(&custom.defined_classes().await.unwrap());
    assert_eq!(custom_defined, BTreeSet::from(["Shapes$Plugin".into()]));
    let app_defined = type_names(&app.defined_classes().await.unwrap());
    for name in ["Shapes", "Shapes$Circle", "Shapes$Plugin", "Shapes$Circle[]"] {
        assert!(app_defined.contains(name), "{name} missing from {app_defined:?}");
    }
    assert!(!app_defined.contains("java.lang.String"));

    let app_visible = app.visible_classes().await.unwrap();
    assert!(app_visible.contains(&shapes));
    assert!(app_visible.iter().any(|t| t.name() == "java.lang.String"), "the app loader initiated String");
    let custom_visible = custom.visible_classes().await.unwrap();
    let custom_plugin = plugins.iter().find(|p| custom_visible.contains(p)).expect("the custom loader sees its Plugin");
    assert!(!custom_visible.contains(&shapes));
    // Defining Plugin made its loader resolve (initiate) Object; types resolve through what the
    // loader sees.
    let object = class(vm, "java.lang.Object").await;
    assert!(custom_visible.contains(&object));
    assert_eq!(custom_plugin.find_type("Ljava/lang/Object;").await.unwrap(), Type::Reference(object));
    assert_eq!(
        custom_plugin.find_type("LShapes;").await.unwrap_err().to_string(),
        "class Shapes is not loaded",
        "the application's Shapes is not visible to the custom loader"
    );
    assert_eq!(
        shapes.find_type("LShapes$Plugin;").await.unwrap().as_reference(),
        plugins.iter().find(|p| **p != *custom_plugin)
    );
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn class_objects_and_modules() {
    let (s, _) = shapes_ready().await;
    let vm = &s.vm;
    let circle = class(vm, "Shapes$Circle").await;
    let class_object = circle.class_object().await.unwrap();
    assert_eq!(class_object.reflected_type().await.unwrap(), circle);
    assert_eq!(class_object.as_object().reference_type().await.unwrap().name(), "java.lang.Class");

    // Integer.TYPE is int.class: a primitive class, mirrored as a class named "int".
    let integer = class(vm, "java.lang.Integer").await;
    let type_field = integer.field_by_name("TYPE").await.unwrap().unwrap();
    let Value::Object(tag, id) = integer.get_value(&type_field).await.unwrap() else { panic!() };
    assert_eq!(tag, Tag::ClassObject);
    let int_class = jdi::ClassObjectReference::new(vm.clone(), id.into()).reflected_type().await.unwrap();
    assert_eq!(int_class.name(), "int");
    assert_eq!(int_class.tag(), TypeTag::Class);

    assert!(vm.can_get_module_info().await.unwrap());
    let string = class(vm, "java.lang.String").await;
    let base = string.module().await.unwrap();
    assert_eq!(base.name().await.unwrap().as_deref(), Some("java.base"));
    assert!(base.class_loader().await.unwrap().is_none());
    let unnamed = circle.module().await.unwrap();
    assert_eq!(unnamed.name().await.unwrap(), None);
    assert_eq!(unnamed.class_loader().await.unwrap(), circle.class_loader().await.unwrap());
    let modules = vm.all_modules().await.unwrap();
    assert!(modules.contains(&base) && modules.contains(&unnamed));
    let mut named = BTreeSet::new();
    for m in &modules {
        named.extend(m.name().await.unwrap());
    }
    assert!(named.contains("java.base") && named.len() > 1, "{named:?}");
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instances_and_instance_counts() {
    let (s, _) = shapes_ready().await;
    let vm = &s.vm;
    if !vm.can_get_instance_info().await.unwrap() {
        eprintln!("the agent cannot report instances; skipping");
        return s.finish().await;
    }
    let circle = class(vm, "Shapes$Circle").await;
    let square = class(vm, "Shapes$Square").await;
    let boxed = class(vm, "Shapes$Box").await;
    let abstract_shape = class(vm, "Shapes$AbstractShape").await;
    let counts = vm.instance_counts(&[circle.clone(), square.clone(), boxed, abstract_shape.clone()]).await.unwrap();
    assert_eq!(counts, [3, 2, 1, 0], "exact types only: no AbstractShape instances");

    let all = circle.instances(0).await.unwrap();
    assert_eq!(all.len(), 3);
    for c in &all {
        assert_eq!(c.reference_type().await.unwrap(), circle);
    }
    assert_eq!(circle.instances(2).await.unwrap().len(), 2);
    assert!(abstract_shape.instances(0).await.unwrap().is_empty());
    assert!(matches!(circle.instances(-1).await, Err(JdiError::InvalidArgument(_))));
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn static_values_are_read_from_types_and_supertypes() {
    let (s, _) = shapes_ready().await;
    let vm = &s.vm;
    let shapes = class(vm, "Shapes").await;
    let mut fields = Vec::new();
    for name in ["sBoolean", "sByte", "sChar", "sShort", "sInt", "sLong", "sFloat", "sDouble", "sObject", "FINAL"] {
        fields.push(field(&shapes, name).await);
    }
    assert_eq!(
        shapes.get_values(&fields).await.unwrap(),
        [
            Value::Boolean(true),
            Value::Byte(1),
            Value::Char(u16::from(b'c')),
            Value::Short(2),
            Value::Int(7),
            Value::Long(1 << 33),
            Value::Float(1.5),
            Value::Double(0.5),
            Value::NULL,
            Value::Int(99),
        ]
    );
    let s_string = shapes.get_value(&field(&shapes, "sString").await).await.unwrap();
    assert_eq!(string_value(vm, s_string).await, "hello");
    assert_eq!(shapes.get_value(&field(&shapes, "sInts").await).await.unwrap().tag(), Tag::Array);

    // Interface constants through an implementing class; statics of a superclass's interface.
    let circle = class(vm, "Shapes$Circle").await;
    let kind = circle.field_by_name("KIND").await.unwrap().unwrap();
    assert_eq!(string_value(vm, circle.get_value(&kind).await.unwrap()).await, "shape");
    let registry = class(vm, "Shapes$Registry").await;
    assert_eq!(registry.get_value(&field(&registry, "registered").await).await.unwrap(), Value::Int(5));

    // Instance fields and other types' statics are refused before anything is sent.
    let radius = field(&circle, "radius").await;
    assert!(invalid_argument(circle.get_value(&radius).await).contains("not static"));
    let s_int = field(&shapes, "sInt").await;
    assert!(invalid_argument(circle.get_value(&s_int).await).contains("not a member"));
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn static_values_are_set_after_type_checks() {
    let (s, _) = shapes_ready().await;
    let vm = &s.vm;
    let shapes = class_type(vm, "Shapes").await;
    let f = |name: &'static str| {
        let shapes = shapes.clone();
        async move { field(&shapes, name).await }
    };
    // Primitives convert when nothing is lost.
    shapes.set_value(&f("sInt").await, Value::Int(42)).await.unwrap();
    shapes.set_value(&f("sLong").await, Value::Int(5)).await.unwrap();
    shapes.set_value(&f("sDouble").await, Value::Int(3)).await.unwrap();
    shapes.set_value(&f("sChar").await, Value::Int(65)).await.unwrap();
    let hello = jdi_string(vm, "changed").await;
    let circle = class(vm, "Shapes$Circle").await;
    let a_circle = object_value(&circle.instances(1).await.unwrap()[0]);
    shapes
        .set_values(&[(f("sString").await, hello), (f("sShape").await, a_circle), (f("sObject").await, hello)])
        .await
        .unwrap();
    let read =
        shapes.get_values(&[f("sInt").await, f("sLong").await, f("sDouble").await, f("sChar").await]).await.unwrap();
    assert_eq!(read, [Value::Int(42), Value::Long(5), Value::Double(3.0), Value::Char(65)]);
    assert_eq!(string_value(vm, shapes.get_value(&f("sString").await).await.unwrap()).await, "changed");
    assert_eq!(shapes.get_value(&f("sShape").await).await.unwrap().object_id(), a_circle.object_id());

    // Mismatches are refused with a clear error, and nothing is written.
    let why = invalid_argument(shapes.set_value(&f("sInt").await, Value::Long(1 << 40)).await);
    assert!(why.contains("sInt") && why.contains("int"), "{why}");
    invalid_argument(shapes.set_value(&f("sInt").await, Value::Boolean(true)).await);
    invalid_argument(shapes.set_value(&f("sByte").await, Value::Int(300)).await);
    invalid_argument(shapes.set_value(&f("sBoolean").await, Value::Int(1)).await);
    invalid_argument(shapes.set_value(&f("sInt").await, hello).await);
    let why = invalid_argument(shapes.set_value(&f("sShape").await, hello).await);
    assert!(why.contains("java.lang.String") && why.contains("Shapes$Shape"), "{why}");
    let grid = shapes.get_value(&f("grid").await).await.unwrap();
    invalid_argument(shapes.set_value(&f("sInts").await, grid).await);
    invalid_argument(shapes.set_value(&f("FINAL").await, Value::Int(1)).await);
    invalid_argument(shapes.set_values(&[(f("sInt").await, Value::Int(1)), (f("sString").await, Value::Int(2))]).await);
    assert_eq!(shapes.get_value(&f("sInt").await).await.unwrap(), Value::Int(42), "a refused batch writes nothing");
    // Arrays may go where Object is expected; null goes anywhere.
    shapes.set_value(&f("sObject").await, grid).await.unwrap();
    shapes.set_value(&f("sShape").await, Value::NULL).await.unwrap();
    let radius = field(&circle, "radius").await;
    invalid_argument(shapes.set_value(&radius, Value::Double(1.0)).await);
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn static_methods_are_invoked_with_checked_arguments() {
    let (s, thread) = shapes_ready().await;
    let vm = &s.vm;
    let shapes = class_type(vm, "Shapes").await;
    let add = method(&shapes, "add", "(II)I").await;
    let r = shapes.invoke_method(&thread, &add, vec![Value::Int(2), Value::Int(3)], 0).await.unwrap();
    assert_eq!(r.returned(), Some(Value::Int(5)));
    let single = invoke_options::INVOKE_SINGLE_THREADED;
    let r = shapes.invoke_method(&thread, &add, vec![Value::Int(40), Value::Short(2)], single).await.unwrap();
    assert_eq!(r.returned(), Some(Value::Int(42)));

    let greet = method(&shapes, "greet", "(Ljava/lang/String;)Ljava/lang/String;").await;
    let r = shapes.invoke_method(&thread, &greet, vec![jdi_string(vm, "jdi").await], 0).await.unwrap();
    assert_eq!(string_value(vm, r.returned().unwrap()).await, "hello jdi");
    let half = method(&shapes, "half", "(D)D").await;
    let r = shapes.invoke_method(&thread, &half, vec![Value::Int(5)], 0).await.unwrap();
    assert_eq!(r.returned(), Some(Value::Double(2.5)));
    let widen = method(&shapes, "widen", "(J)J").await;
    let r = shapes.invoke_method(&thread, &widen, vec![Value::Int(41)], 0).await.unwrap();
    assert_eq!(r.returned(), Some(Value::Long(42)));

    // Varargs: loose arguments are packed into an array; an array passes as is.
    let sum = method(&shapes, "sum", "([I)I").await;
    let r = shapes.invoke_method(&thread, &sum, vec![Value::Int(1), Value::Int(2), Value::Int(3)], 0).await.unwrap();
    assert_eq!(r.returned(), Some(Value::Int(6)));
    let r = shapes.invoke_method(&thread, &sum, vec![], 0).await.unwrap();
    assert_eq!(r.returned(), Some(Value::Int(0)));
    let ints = shapes.get_value(&field(&shapes, "sInts").await).await.unwrap();
    let r = shapes.invoke_method(&thread, &sum, vec![ints], 0).await.unwrap();
    assert_eq!(r.returned(), Some(Value::Int(6)));
    let join = method(&shapes, "join", "(Ljava/lang/String;[Ljava/lang/Object;)Ljava/lang/String;").await;
    let parts = vec![jdi_string(vm, "-").await, jdi_string(vm, "a").await, jdi_string(vm, "b").await];
    let r = shapes.invoke_method(&thread, &join, parts, 0).await.unwrap();
    assert_eq!(string_value(vm, r.returned().unwrap()).await, "a-b");

    // Object arguments must be instances of the parameter type.
    let describe = method(&shapes, "describe", "(LShapes$Shape;)Ljava/lang/String;").await;
    let circle = class(vm, "Shapes$Circle").await;
    let a_circle = object_value(&circle.instances(1).await.unwrap()[0]);
    let r = shapes.invoke_method(&thread, &describe, vec![a_circle], 0).await.unwrap();
    // Circle.describe() calls name(), which reads AbstractShape.label (hidden by Circle.label).
    assert_eq!(string_value(vm, r.returned().unwrap()).await, "round circle");
    let why = invalid_argument(shapes.invoke_method(&thread, &describe, vec![jdi_string(vm, "x").await], 0).await);
    assert!(why.contains("argument 0"), "{why}");

    // The exception a method throws is a result, not an error.
    let boom = method(&shapes, "boom", "(Ljava/lang/String;)V").await;
    let r = shapes.invoke_method(&thread, &boom, vec![jdi_string(vm, "bad").await], 0).await.unwrap();
    let InvokeResult::Threw(exception) = r else { panic!("boom returned: {r:?}") };
    assert_eq!(exception.reference_type().await.unwrap().name(), "java.lang.IllegalArgumentException");

    // What JDI refuses: wrong arity, instance methods, methods of other classes.
    invalid_argument(shapes.invoke_method(&thread, &add, vec![Value::Int(1)], 0).await);
    let area = method(&circle, "area", "()D").await;
    invalid_argument(shapes.invoke_method(&thread, &area, vec![], 0).await);
    let twice = method(&class(vm, "Shapes$Shape").await, "twice", "(I)I").await;
    invalid_argument(circle.as_class().unwrap().invoke_method(&thread, &twice, vec![Value::Int(1)], 0).await);
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interface_statics_and_new_instances() {
    let (s, thread) = shapes_ready().await;
    let vm = &s.vm;
    let shape = interface_type(vm, "Shapes$Shape").await;
    let twice = method(&shape, "twice", "(I)I").await;
    let r = shape.invoke_method(&thread, &twice, vec![Value::Int(21)], 0).await.unwrap();
    assert_eq!(r.returned(), Some(Value::Int(42)));
    let unit = method(&shape, "unit", "()LShapes$Shape;").await;
    let r = shape.invoke_method(&thread, &unit, vec![], invoke_options::INVOKE_SINGLE_THREADED).await.unwrap();
    let Some(Value::Object(_, id)) = r.returned() else { panic!("{r:?}") };
    let unit_square = jdi::ObjectReference::new(vm.clone(), id);
    assert_eq!(unit_square.reference_type().await.unwrap().name(), "Shapes$Square");
    let describe = method(&shape, "describe", "()Ljava/lang/String;").await;
    invalid_argument(shape.invoke_method(&thread, &describe, vec![], 0).await);

    let circle = class_type(vm, "Shapes$Circle").await;
    let ctor = method(&circle, "<init>", "(D)V").await;
    let r = circle.new_instance(&thread, &ctor, vec![Value::Int(5)], 0).await.unwrap();
    let Some(Value::Object(_, id)) = r.returned() else { panic!("{r:?}") };
    let created = jdi::ObjectReference::new(vm.clone(), id);
    assert_eq!(created.reference_type().await.unwrap(), *circle);
    assert_eq!(created.get_value(&field(&circle, "radius").await).await.unwrap(), Value::Double(5.0));
    if vm.can_get_instance_info().await.unwrap() {
        assert_eq!(vm.instance_counts(&[circle.reference_type().clone()]).await.unwrap(), [4]);
    }
    let area = method(&circle, "area", "()D").await;
    invalid_argument(circle.new_instance(&thread, &area, vec![], 0).await);
    let square_ctor = method(&class(vm, "Shapes$Square").await, "<init>", "(D)V").await;
    invalid_argument(circle.new_instance(&thread, &square_ctor, vec![Value::Double(1.0)], 0).await);
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn array_types_create_arrays_and_know_their_components() {
    let (s, _) = shapes_ready().await;
    let vm = &s.vm;
    let ints: ArrayType = class(vm, "int[]").await.as_array().unwrap();
    assert_eq!(ints.component_signature(), "I");
    assert_eq!(ints.component_type_name(), "int");
    assert_eq!(ints.component_type().await.unwrap(), Type::Primitive(PrimitiveType::Int));
    let array = ints.new_instance(4).await.unwrap();
    assert_eq!(array.length().await.unwrap(), 4);
    assert_eq!(array.get_values().await.unwrap(), vec![Value::Int(0); 4]);
    assert!(matches!(ints.new_instance(-1).await, Err(JdiError::InvalidArgument(_))));

    let grid = class(vm, "int[][]").await.as_array().unwrap();
    let component = grid.component_type().await.unwrap();
    assert_eq!(component.as_reference(), Some(ints.reference_type()));

    let circles = class(vm, "Shapes$Circle[]").await.as_array().unwrap();
    assert_eq!(circles.component_type_name(), "Shapes$Circle");
    assert_eq!(circles.component_type().await.unwrap().name(), "Shapes$Circle");
    assert_eq!(
        circles.class_loader().await.unwrap(),
        class(vm, "Shapes$Circle").await.class_loader().await.unwrap(),
        "an array's loader is its component's"
    );
    let made = circles.new_instance(2).await.unwrap();
    assert_eq!(made.get_values().await.unwrap(), [Value::NULL, Value::NULL]);
    assert!(circles.methods().await.unwrap().is_empty() && circles.interfaces().await.unwrap().is_empty());
    assert_eq!(circles.class_file_version().await.unwrap(), jdi::ClassFileVersion { major: 0, minor: 0 });
    assert!(circles.is_assignable_to("[Ljava/lang/Object;").await.unwrap());
    assert!(circles.is_assignable_to("[LShapes$Shape;").await.unwrap());
    assert!(circles.is_assignable_to("Ljava/io/Serializable;").await.unwrap());
    assert!(!circles.is_assignable_to("[LShapes$Square;").await.unwrap());
    assert!(!ints.is_assignable_to("[Ljava/lang/Object;").await.unwrap());
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn class_files_constant_pools_and_bytecodes() {
    let (s, _) = shapes_ready().await;
    let vm = &s.vm;
    let shapes = class(vm, "Shapes").await;
    if vm.can_get_class_file_version().await.unwrap() {
        assert_eq!(shapes.class_file_version().await.unwrap(), jdi::ClassFileVersion { major: 61, minor: 0 });
    }
    if vm.can_get_constant_pool().await.unwrap() {
        let pool = shapes.constant_pool().await.unwrap();
        assert!(pool.count > 10, "{}", pool.count);
        assert!((1..=20).contains(&pool.bytes[0]), "the first entry starts with a valid tag");
        let has = |text: &[u8]| pool.bytes.windows(text.len()).any(|w| w == text);
        assert!(has(b"hello ") && has(b"Shapes ready "), "string constants of Shapes are in its pool");
    }
    if vm.can_get_bytecodes().await.unwrap() {
        let add = method(&shapes, "add", "(II)I").await;
        // iload_0, iload_1, iadd, ireturn
        assert_eq!(add.bytecodes().await.unwrap(), [0x1a, 0x1b, 0x60, 0xac]);
        assert!(!add.is_obsolete().await.unwrap());
    }
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn immutable_data_is_fetched_once() {
    let (s, _) = shapes_ready().await;
    let vm = &s.vm;
    let circle = class(vm, "Shapes$Circle").await;
    let box_type = class(vm, "Shapes$Box").await;

    async fn ask_everything(t: &ReferenceType) -> usize {
        let mut n = t.generic_signature().await.unwrap().map_or(0, |g| g.len());
        n += t.modifiers().await.unwrap() as usize;
        n += t.fields().await.unwrap().len() + t.visible_fields().await.unwrap().len();
        n += t.all_fields().await.unwrap().len();
        n += t.methods().await.unwrap().len() + t.visible_methods().await.unwrap().len();
        n += t.all_methods().await.unwrap().len() + t.methods_by_name("describe").await.unwrap().len();
        n += t.field_by_name("ID").await.unwrap().into_iter().count();
        n += t.superclass().await.unwrap().into_iter().count() + t.interfaces().await.unwrap().len();
        n += t.all_interfaces().await.unwrap().len();
        n += t.source_name().await.unwrap().len() + t.source_paths().await.unwrap().len();
        n += t.class_loader().await.unwrap().into_iter().count();
        n += t.module().await.unwrap().id().0 as usize % 2 + t.class_object().await.unwrap().id().0 as usize % 2;
        n += t.class_file_version().await.unwrap().major as usize;
        n += t.all_line_locations().await.unwrap().len();
        for m in t.methods().await.unwrap() {
            n += m.all_line_locations().await.map_or(0, |l| l.len());
            n += m.variables().await.map_or(0, |v| v.len());
            n += m.arguments().await.map_or(0, |v| v.len());
            n += m.declaring_type().await.unwrap().name().len();
        }
        for f in t.fields().await.unwrap() {
            n += f.field_type().await.map_or(0, |t| t.name().len());
            n += f.declaring_type().await.unwrap().name().len();
        }
        n
    }

    let string = class(vm, "java.lang.String").await;
    async fn ask_about_objects(t: &ReferenceType) -> usize {
        let module = t.module().await.unwrap();
        let mut n = module.name().await.unwrap().map_or(0, |m| m.len());
        n += module.class_loader().await.unwrap().into_iter().count();
        n + t.class_object().await.unwrap().reflected_type().await.unwrap().name().len()
    }

    let first = ask_everything(&circle).await + ask_everything(&box_type).await + ask_about_objects(&string).await;
    vm.capabilities().await.unwrap();
    vm.version().await.unwrap();
    let sent = vm.commands_sent();
    let again = ask_everything(&circle).await + ask_everything(&box_type).await + ask_about_objects(&string).await;
    assert!(vm.can_get_bytecodes().await.is_ok() && vm.can_redefine_classes().await.is_ok());
    vm.version().await.unwrap();
    assert_eq!(first, again);
    assert_eq!(vm.commands_sent(), sent, "every answer above came from the caches");
    // Mirrors obtained anew share the caches.
    let circle_again = vm.reference_type(circle.id()).await.unwrap();
    ask_everything(&circle_again).await;
    assert_eq!(vm.commands_sent(), sent);
    // What changes is asked every time.
    circle.status().await.unwrap();
    assert_eq!(vm.commands_sent(), sent + 1);
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redefined_classes_run_new_code_and_drop_cached_tables() {
    let mut s = common::start("Evolving", &[]).await;
    let (_, thread) = s.run_to_marker("Evolving", "@first").await;
    let vm = s.vm.clone();
    if !vm.can_redefine_classes().await.unwrap() {
        eprintln!("the agent cannot redefine classes; skipping");
        return s.finish().await;
    }
    let evolving = class_type(&vm, "Evolving").await;
    let old_line = test_rig::fixture_line("Evolving.java", "@message-return").unwrap() as i32;
    let new_line = test_rig::fixture_line("variants/Evolving.java.v2", "@message-return").unwrap() as i32;
    assert_ne!(old_line, new_line);
    let message = method(&evolving, "message", "()Ljava/lang/String;").await;
    let lines: Vec<i32> = message.all_line_locations().await.unwrap().iter().map(|l| l.line).collect();
    assert!(lines.contains(&old_line) && !lines.contains(&new_line), "{lines:?}");

    let class_file = tokio::task::spawn_blocking(compile_evolving_v2).await.unwrap();
    vm.redefine_classes(vec![(evolving.reference_type().clone(), class_file)]).await.unwrap();

    // The cached methods and line tables were dropped: the new ones are asked for.
    let message = method(&evolving, "message", "()Ljava/lang/String;").await;
    let lines: Vec<i32> = message.all_line_locations().await.unwrap().iter().map(|l| l.line).collect();
    assert!(lines.contains(&new_line) && !lines.contains(&old_line), "{lines:?}");
    assert_eq!(evolving.locations_of_line(new_line).await.unwrap().len(), 1);
    assert!(message.variables_by_name("answer").await.unwrap().len() == 1, "version two has a local");
    assert!(!message.is_obsolete().await.unwrap());
    let r = evolving.invoke_method(&thread, &message, vec![], 0).await.unwrap();
    assert_eq!(string_value(&vm, r.returned().unwrap()).await, "version two");

    // A class file for another class is refused with the VM's error.
    let bad = vec![0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 61];
    let err = vm.redefine_classes(vec![(evolving.reference_type().clone(), bad)]).await.unwrap_err();
    assert!(err.code().is_some(), "{err}");
    s.finish().await;
}

/// Compiles tests/fixtures/variants/Evolving.java.v2 (cached by content) and returns the bytes.
fn compile_evolving_v2() -> Vec<u8> {
    let source = test_rig::fixture_source_dir().join("variants/Evolving.java.v2");
    let dir = std::env::temp_dir().join(format!("jdi-types-evolving-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(&source, dir.join("Evolving.java")).unwrap();
    let compiled = test_rig::compile_java_sources(&dir, &test_rig::fixtures_cache_root().join("variants"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::read(compiled.unwrap().classes_dir.join("Evolving.class")).unwrap()
}
