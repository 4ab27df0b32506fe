//! What an ID from the debugger must name, and the JDWP error for one that names something else.
//!
//! The spec types every object parameter (a thread, a thread group, a string, an array, a class
//! type, ...). An ID of the wrong kind handed to JVMTI or JNI crashes HotSpot (a `String` taken
//! for a thread group, an array type taken for a class with fields), so each one is checked
//! against what it names before anything else sees it. The decisions live here, pure; the
//! [`Agent`](crate::agent::Agent)'s typed lookups (`thread_group`, `string`, `class_type`, ...)
//! gather the facts from the VM and are the only way commands resolve IDs.

use jdwp_protocol::ErrorCode;

/// What a parameter must name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Any object (`objectID`): only existence is checked.
    Object,
    Thread,
    ThreadGroup,
    /// A `java.lang.ClassLoader`; null stands for the bootstrap loader.
    ClassLoader,
    /// A `java.lang.Class` object, whatever type it reflects (primitive types too).
    ClassObject,
    String,
    Array,
    Module,
    /// A `java.lang.Throwable` (`ThreadReference.Stop`).
    Throwable,
    /// Any reference type: a class, an interface or an array type (`referenceTypeID`). Primitive
    /// types pass too, as with the JDK's agent: JDI reaches them through
    /// `ClassObjectReference.ReflectedType`, and JVMTI answers for them without harm.
    ReferenceType,
    /// A class: not an interface, an array type or a primitive type (`classID`).
    ClassType,
    /// An interface (`interfaceID`).
    InterfaceType,
    /// An array type (`arrayTypeID`).
    ArrayType,
}

/// What a class object reflects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TypeKind {
    Class,
    Interface,
    Array,
    /// `int.class` and the like: class objects, but no reference type.
    Primitive,
}

impl TypeKind {
    /// From JVMTI's class status bits (`ARRAY`, `PRIMITIVE`) and whether the class is an interface.
    pub fn from_status(status: i32, is_interface: bool) -> TypeKind {
        const ARRAY: i32 = 16;
        const PRIMITIVE: i32 = 32;
        if status & PRIMITIVE != 0 {
            TypeKind::Primitive
        } else if status & ARRAY != 0 {
            TypeKind::Array
        } else if is_interface {
            TypeKind::Interface
        } else {
            TypeKind::Class
        }
    }
}

/// What an ID turned out to name, as far as the check for one [`Kind`] needs to know.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Named {
    /// No object: never handed out, or collected since.
    Nothing,
    /// ID 0.
    Null,
    /// An object of the kind's class: for [`Kind::ClassObject`] and [`Kind::ReferenceType`], which
    /// take every class object, any `java.lang.Class`.
    Instance,
    /// An object of another class; for the type kinds, an object that is not a class object.
    Other,
    /// A class object reflecting this (asked for the kinds that take one sort of type only).
    Type(TypeKind),
}

impl Kind {
    /// Whether the kind takes only one sort of type, so that the lookup must tell what a class
    /// object reflects (two JVMTI calls the other kinds do without).
    pub fn is_one_sort_of_type(self) -> bool {
        matches!(self, Kind::ClassType | Kind::InterfaceType | Kind::ArrayType)
    }

    /// The error for an object of another kind (and, but for the class loader, for null).
    pub fn wrong_kind(self) -> ErrorCode {
        match self {
            Kind::Object | Kind::Throwable => ErrorCode::INVALID_OBJECT,
            Kind::Thread => ErrorCode::INVALID_THREAD,
            Kind::ThreadGroup => ErrorCode::INVALID_THREAD_GROUP,
            Kind::ClassLoader => ErrorCode::INVALID_CLASS_LOADER,
            Kind::String => ErrorCode::INVALID_STRING,
            Kind::Array => ErrorCode::INVALID_ARRAY,
            Kind::Module => ErrorCode::INVALID_MODULE,
            Kind::ClassObject | Kind::ReferenceType | Kind::ClassType | Kind::InterfaceType | Kind::ArrayType => {
                ErrorCode::INVALID_CLASS
            }
        }
    }

    /// The error for an ID that names no object: `INVALID_OBJECT`, but for modules, whose
    /// commands list `INVALID_MODULE` only (the JDK's agent answers it too).
    pub fn unknown(self) -> ErrorCode {
        if self == Kind::Module { ErrorCode::INVALID_MODULE } else { ErrorCode::INVALID_OBJECT }
    }

    /// Whether a class object reflecting `t` is of this kind.
    fn accepts_type(self, t: TypeKind) -> bool {
        match self {
            Kind::ClassObject | Kind::ReferenceType => true,
            Kind::ClassType => t == TypeKind::Class,
            Kind::InterfaceType => t == TypeKind::Interface,
            Kind::ArrayType => t == TypeKind::Array,
            _ => false,
        }
    }
}

/// The verdict on an ID that names `named` where the spec wants `kind`.
pub fn check(kind: Kind, named: Named) -> Result<(), ErrorCode> {
    match named {
        Named::Nothing => Err(kind.unknown()),
        Named::Null if kind == Kind::ClassLoader => Ok(()),
        Named::Null => Err(kind.wrong_kind()),
        Named::Instance if !kind.is_one_sort_of_type() => Ok(()),
        Named::Type(t) if kind.accepts_type(t) => Ok(()),
        // A class of the wrong sort where an array type was wanted: the array is what is wrong
        // (as the JDK's agent answers `ArrayType.NewInstance`).
        Named::Type(_) if kind == Kind::ArrayType => Err(ErrorCode::INVALID_ARRAY),
        Named::Instance | Named::Other | Named::Type(_) => Err(kind.wrong_kind()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [Kind; 13] = [
        Kind::Object,
        Kind::Thread,
        Kind::ThreadGroup,
        Kind::ClassLoader,
        Kind::ClassObject,
        Kind::String,
        Kind::Array,
        Kind::Module,
        Kind::Throwable,
        Kind::ReferenceType,
        Kind::ClassType,
        Kind::InterfaceType,
        Kind::ArrayType,
    ];

    #[test]
    fn an_id_naming_nothing_is_an_invalid_object_but_for_modules() {
        for kind in ALL {
            let want = if kind == Kind::Module { ErrorCode::INVALID_MODULE } else { ErrorCode::INVALID_OBJECT };
            assert_eq!(check(kind, Named::Nothing), Err(want), "{kind:?}");
        }
    }

    #[test]
    fn null_is_the_kinds_own_error_but_the_bootstrap_loader() {
        assert_eq!(check(Kind::ClassLoader, Named::Null), Ok(()));
        assert_eq!(check(Kind::Object, Named::Null), Err(ErrorCode::INVALID_OBJECT));
        assert_eq!(check(Kind::Thread, Named::Null), Err(ErrorCode::INVALID_THREAD));
        assert_eq!(check(Kind::ThreadGroup, Named::Null), Err(ErrorCode::INVALID_THREAD_GROUP));
        assert_eq!(check(Kind::String, Named::Null), Err(ErrorCode::INVALID_STRING));
        assert_eq!(check(Kind::Array, Named::Null), Err(ErrorCode::INVALID_ARRAY));
        assert_eq!(check(Kind::Module, Named::Null), Err(ErrorCode::INVALID_MODULE));
        assert_eq!(check(Kind::ReferenceType, Named::Null), Err(ErrorCode::INVALID_CLASS));
        assert_eq!(check(Kind::ArrayType, Named::Null), Err(ErrorCode::INVALID_CLASS));
    }

    #[test]
    fn objects_of_another_class_are_the_kinds_own_error() {
        assert_eq!(check(Kind::Object, Named::Instance), Ok(()));
        assert_eq!(check(Kind::ThreadGroup, Named::Instance), Ok(()));
        assert_eq!(check(Kind::ThreadGroup, Named::Other), Err(ErrorCode::INVALID_THREAD_GROUP));
        assert_eq!(check(Kind::Thread, Named::Other), Err(ErrorCode::INVALID_THREAD));
        assert_eq!(check(Kind::ClassLoader, Named::Other), Err(ErrorCode::INVALID_CLASS_LOADER));
        assert_eq!(check(Kind::String, Named::Other), Err(ErrorCode::INVALID_STRING));
        assert_eq!(check(Kind::Array, Named::Other), Err(ErrorCode::INVALID_ARRAY));
        assert_eq!(check(Kind::Module, Named::Other), Err(ErrorCode::INVALID_MODULE));
        assert_eq!(check(Kind::Throwable, Named::Other), Err(ErrorCode::INVALID_OBJECT));
        for kind in [Kind::ClassObject, Kind::ReferenceType, Kind::ClassType, Kind::InterfaceType, Kind::ArrayType] {
            assert_eq!(check(kind, Named::Other), Err(ErrorCode::INVALID_CLASS), "{kind:?}: not a class object");
        }
        // Any class object is a reference type or a class object; the other type kinds must know
        // which sort of type it is.
        assert_eq!(check(Kind::ClassObject, Named::Instance), Ok(()));
        assert_eq!(check(Kind::ReferenceType, Named::Instance), Ok(()));
        for kind in [Kind::ClassType, Kind::InterfaceType, Kind::ArrayType] {
            assert!(kind.is_one_sort_of_type());
            assert_eq!(check(kind, Named::Instance), Err(ErrorCode::INVALID_CLASS), "{kind:?}");
        }
    }

    #[test]
    fn type_parameters_take_only_their_sort_of_type() {
        use TypeKind::*;
        let ok = |kind, t| check(kind, Named::Type(t));
        for t in [Class, Interface, Array, Primitive] {
            assert_eq!(ok(Kind::ClassObject, t), Ok(()), "{t:?}");
        }
        for t in [Class, Interface, Array, Primitive] {
            assert_eq!(ok(Kind::ReferenceType, t), Ok(()), "{t:?}");
        }
        assert_eq!(ok(Kind::ClassType, Class), Ok(()));
        for t in [Interface, Array, Primitive] {
            assert_eq!(ok(Kind::ClassType, t), Err(ErrorCode::INVALID_CLASS), "{t:?}");
            assert_eq!(ok(Kind::ArrayType, if t == Array { Class } else { t }), Err(ErrorCode::INVALID_ARRAY));
        }
        assert_eq!(ok(Kind::InterfaceType, Interface), Ok(()));
        assert_eq!(ok(Kind::InterfaceType, Class), Err(ErrorCode::INVALID_CLASS));
        assert_eq!(ok(Kind::InterfaceType, Array), Err(ErrorCode::INVALID_CLASS));
        assert_eq!(ok(Kind::ArrayType, Array), Ok(()));
    }

    #[test]
    fn type_kinds_come_from_the_class_status() {
        assert_eq!(TypeKind::from_status(7, false), TypeKind::Class);
        assert_eq!(TypeKind::from_status(7, true), TypeKind::Interface);
        assert_eq!(TypeKind::from_status(16, false), TypeKind::Array);
        assert_eq!(TypeKind::from_status(32, false), TypeKind::Primitive);
    }
}
