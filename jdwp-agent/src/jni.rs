//! The JNI calls the agent makes, over `jni-sys`'s function table.
//!
//! [`Jni`] wraps a thread's `JNIEnv`; it is `Copy` but not `Send`, because a `JNIEnv` belongs to
//! one thread. [`JavaVm`] wraps the process-wide `JavaVM` and is shared freely.
//!
//! Calls that can throw return `Err(JniError::Exception(throwable))` with the exception cleared
//! (the throwable is a local reference), so no exception is ever left pending behind the caller's
//! back.
//!
//! References follow the contract of the [`jvmti`](crate::jvmti) module: live, and local ones only
//! on their own thread. Calls the VM does not check beyond that are `unsafe fn`: typed field
//! access, typed array regions and method invocation, where a wrong type or a short argument
//! array makes the VM read or write memory out of bounds.
//!
//! Passing references and IDs to safe functions is what clippy's `not_unsafe_ptr_arg_deref` flags;
//! see the [`jvmti`](crate::jvmti) module for why that lint is allowed here.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

use std::ffi::{CStr, CString, c_void};
use std::marker::PhantomData;
use std::ptr::{self, NonNull};

use jni_sys::{JNI_EDETACHED, JNI_ENOMEM, JNI_EVERSION, JNI_OK, JNINativeInterface__1_2, JavaVMAttachArgs};
pub use jni_sys::{
    JNI_VERSION_1_2, JNI_VERSION_1_8, JNI_VERSION_9, JNIEnv, JavaVM, jarray, jboolean, jbyte, jchar, jclass, jdouble,
    jfieldID, jfloat, jint, jlong, jmethodID, jobject, jobjectArray, jshort, jsize, jstring, jthrowable, jvalue, jweak,
};

use crate::jvmti::{Jvmti, sys::JVMTI_VERSION_11};

/// Why a JNI call failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum JniError {
    /// A Java exception was thrown; it has been cleared, and this is a local reference to it.
    #[error("a Java exception was thrown")]
    Exception(jthrowable),
    /// The function returned null (or failed) without throwing.
    #[error("JNI {0} failed")]
    Failed(&'static str),
    /// The function returned a JNI error code (`JNI_EDETACHED`, `JNI_EVERSION`, ...).
    #[error("JNI {function} returned error {code}")]
    Code { function: &'static str, code: jint },
}

impl JniError {
    /// The JDWP error to report when the failure is the command's, not the debuggee's.
    pub fn to_jdwp(self) -> jdwp_protocol::ErrorCode {
        use jdwp_protocol::ErrorCode;
        match self {
            JniError::Code { code: JNI_ENOMEM, .. } => ErrorCode::OUT_OF_MEMORY,
            JniError::Code { code: JNI_EDETACHED, .. } => ErrorCode::UNATTACHED_THREAD,
            JniError::Code { code: JNI_EVERSION, .. } => ErrorCode::NOT_IMPLEMENTED,
            _ => ErrorCode::INTERNAL,
        }
    }
}

type Result<T> = std::result::Result<T, JniError>;

/// Calls JNI function `$name` (JNI 1.2 table) with the environment prepended.
macro_rules! jni_call {
    ($jni:expr, $name:ident($($arg:expr),* $(,)?)) => {{
        let jni: Jni = $jni;
        // SAFETY: `jni` wraps the current thread's live `JNIEnv` (`Jni::from_raw`'s contract) of a
        // VM with JNI 1.2 or later, so the 1.2 view of the table is the one filled in; the
        // arguments are plain values, pointers to data that outlives the call, and references
        // whose validity the caller ensures (module docs).
        unsafe { (jni.table().$name)(jni.as_raw() $(, $arg)*) }
    }};
}

/// Dispatches to the typed JNI call for `$ret`, with the arguments in the last parenthesis, and
/// returns the result as a `jvalue`.
macro_rules! call_typed {
    (@ty $arg:expr) => { _ };
    ($jni:expr, $ret:expr, $z:ident, $b:ident, $c:ident, $s:ident, $i:ident, $j:ident, $f:ident, $d:ident, $l:ident,
     $v:ident, ($($arg:expr),*)) => {{
        let jni: Jni = $jni;
        match $ret {
            JavaType::Boolean => {
                let f = jni.table().$z;
                // SAFETY: JNI's `Call*BooleanMethod*` return `jboolean`, an unsigned char; calling
                // through a `u8` return type matches the C definition (jni-sys says `bool`), and
                // the byte is compared, never taken as a `bool`. Same parameters otherwise.
                let f: unsafe extern "system" fn(*mut JNIEnv, $(call_typed!(@ty $arg)),*) -> u8 =
                    unsafe { std::mem::transmute(f) };
                // SAFETY: as for `jni_call!`; the method and arguments are the caller's promise.
                jvalue { z: unsafe { f(jni.as_raw() $(, $arg)*) } != 0 }
            }
            JavaType::Byte => jvalue { b: jni_call!(jni, $b($($arg),*)) },
            JavaType::Char => jvalue { c: jni_call!(jni, $c($($arg),*)) },
            JavaType::Short => jvalue { s: jni_call!(jni, $s($($arg),*)) },
            JavaType::Int => jvalue { i: jni_call!(jni, $i($($arg),*)) },
            JavaType::Long => jvalue { j: jni_call!(jni, $j($($arg),*)) },
            JavaType::Float => jvalue { f: jni_call!(jni, $f($($arg),*)) },
            JavaType::Double => jvalue { d: jni_call!(jni, $d($($arg),*)) },
            JavaType::Object => jvalue { l: jni_call!(jni, $l($($arg),*)) },
            JavaType::Void => {
                jni_call!(jni, $v($($arg),*));
                jvalue { j: 0 }
            }
        }
    }};
}

/// A thread's JNI environment.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Jni {
    env: NonNull<JNIEnv>,
}

impl std::fmt::Debug for Jni {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Jni({:p})", self.env)
    }
}

/// A Java type as far as JNI's typed calls care: which `Call<Type>Method`/`Get<Type>Field` to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum JavaType {
    Void,
    Boolean,
    Byte,
    Char,
    Short,
    Int,
    Long,
    Float,
    Double,
    /// Any reference type (class, interface, array).
    Object,
}

impl JavaType {
    /// From a field descriptor or return descriptor (`I`, `Ljava/lang/String;`, `[J`, `V`).
    pub fn from_descriptor(descriptor: &str) -> Option<JavaType> {
        JavaType::from_descriptor_byte(*descriptor.as_bytes().first()?)
    }

    /// From a descriptor's first byte (what JVMTI gives for a field's type).
    pub fn from_descriptor_byte(byte: u8) -> Option<JavaType> {
        Some(match byte {
            b'V' => JavaType::Void,
            b'Z' => JavaType::Boolean,
            b'B' => JavaType::Byte,
            b'C' => JavaType::Char,
            b'S' => JavaType::Short,
            b'I' => JavaType::Int,
            b'J' => JavaType::Long,
            b'F' => JavaType::Float,
            b'D' => JavaType::Double,
            b'L' | b'[' => JavaType::Object,
            _ => return None,
        })
    }

    /// The return type of a method descriptor (`(ILjava/lang/String;)V` → `Void`).
    pub fn from_method_descriptor(descriptor: &str) -> Option<JavaType> {
        JavaType::from_descriptor(descriptor.rsplit_once(')')?.1)
    }
}

impl Jni {
    /// Wraps the current thread's `JNIEnv`; `None` if null.
    ///
    /// # Safety
    ///
    /// `env` is the `JNIEnv` of the calling thread (given to a callback or obtained by attaching),
    /// of a VM supporting JNI 1.2 or later, and the thread stays attached while the handle is used.
    /// The handle is not `Send`, so it cannot leave the thread.
    pub unsafe fn from_raw(env: *mut JNIEnv) -> Option<Jni> {
        NonNull::new(env).map(|env| Jni { env })
    }

    pub fn as_raw(self) -> *mut JNIEnv {
        self.env.as_ptr()
    }

    /// The JNI 1.2 view of the function table.
    fn table(self) -> &'static JNINativeInterface__1_2 {
        // SAFETY: `from_raw`'s contract: a live `JNIEnv` points to the VM's function table, which
        // lives as long as the VM and, on a JNI 1.2+ VM, has every 1.2 slot filled in. Reading the
        // union through its `v1_2` view reads exactly those slots.
        unsafe { &(**self.env.as_ptr()).v1_2 }
    }

    /// Turns a pending exception into `Err`, clearing it.
    pub fn check_exception(self) -> Result<()> {
        if !jni_call!(self, ExceptionCheck()) {
            return Ok(());
        }
        let throwable = jni_call!(self, ExceptionOccurred());
        jni_call!(self, ExceptionClear());
        Err(JniError::Exception(throwable))
    }

    /// `Ok(value)` unless an exception is pending (then cleared and returned).
    fn checked<T>(self, value: T) -> Result<T> {
        self.check_exception().map(|()| value)
    }

    /// Like [`checked`](Self::checked), and a null result without an exception is an error too.
    fn non_null<T>(self, value: *mut T, function: &'static str) -> Result<*mut T> {
        self.check_exception()?;
        if value.is_null() { Err(JniError::Failed(function)) } else { Ok(value) }
    }

    /// The JNI version the VM implements (`GetVersion`, e.g. `0x000a0000` on JDK 17).
    pub fn get_version(self) -> jint {
        jni_call!(self, GetVersion())
    }

    /// Whether `thread` is a virtual thread (`IsVirtualThread`). False on a VM whose JNI has no
    /// final `IsVirtualThread` (below JNI 21, see [`crate::runtime`]): it has no virtual threads
    /// a debugger could see without preview features.
    pub fn is_virtual_thread(self, thread: jobject) -> bool {
        if !crate::runtime::jni_has_is_virtual_thread(self.get_version()) {
            return false;
        }
        // SAFETY: as `table`, and a VM reporting JNI 21 or later fills in the JNI 19 view of its
        // function table, where `IsVirtualThread` lives; `thread` is a live reference.
        unsafe { ((**self.env.as_ptr()).v19.IsVirtualThread)(self.env.as_ptr(), thread) }
    }

    // -----------------------------------------------------------------------------------------
    // Exceptions
    // -----------------------------------------------------------------------------------------

    /// The pending exception (a local reference), if any, left pending.
    pub fn exception_occurred(self) -> Option<jthrowable> {
        let throwable = jni_call!(self, ExceptionOccurred());
        (!throwable.is_null()).then_some(throwable)
    }

    pub fn exception_check(self) -> bool {
        jni_call!(self, ExceptionCheck())
    }

    pub fn exception_clear(self) {
        jni_call!(self, ExceptionClear())
    }

    /// Makes `throwable` the pending exception (as when one set aside around a call is put back).
    pub fn throw(self, throwable: jthrowable) -> Result<()> {
        let code = jni_call!(self, Throw(throwable));
        if code == JNI_OK { Ok(()) } else { Err(JniError::Code { function: "Throw", code }) }
    }

    // -----------------------------------------------------------------------------------------
    // References
    // -----------------------------------------------------------------------------------------

    /// A global reference to `obj` (null for null).
    pub fn new_global_ref(self, obj: jobject) -> Result<jobject> {
        let global = jni_call!(self, NewGlobalRef(obj));
        if global.is_null() && !obj.is_null() { Err(JniError::Failed("NewGlobalRef")) } else { Ok(global) }
    }

    pub fn delete_global_ref(self, global: jobject) {
        jni_call!(self, DeleteGlobalRef(global))
    }

    /// A weak global reference to `obj`; it does not keep the object alive.
    pub fn new_weak_global_ref(self, obj: jobject) -> Result<jweak> {
        let weak = jni_call!(self, NewWeakGlobalRef(obj));
        if weak.is_null() && !obj.is_null() {
            self.check_exception()?;
            return Err(JniError::Failed("NewWeakGlobalRef"));
        }
        Ok(weak)
    }

    pub fn delete_weak_global_ref(self, weak: jweak) {
        jni_call!(self, DeleteWeakGlobalRef(weak))
    }

    /// A new local reference (null if `obj` is null or a cleared weak reference).
    pub fn new_local_ref(self, obj: jobject) -> jobject {
        jni_call!(self, NewLocalRef(obj))
    }

    pub fn delete_local_ref(self, local: jobject) {
        jni_call!(self, DeleteLocalRef(local))
    }

    /// Whether two references refer to the same object (a cleared weak reference is "the same" as
    /// null).
    pub fn is_same_object(self, a: jobject, b: jobject) -> bool {
        jni_call!(self, IsSameObject(a, b))
    }

    /// Whether a weak global reference no longer names an object (its object was collected).
    pub fn is_cleared(self, weak: jweak) -> bool {
        self.is_same_object(weak, std::ptr::null_mut())
    }

    /// Opens a local reference frame with room for `capacity` references; local references made
    /// until the guard is dropped are freed with it.
    pub fn push_local_frame(self, capacity: jint) -> Result<LocalFrame> {
        let code = jni_call!(self, PushLocalFrame(capacity));
        if code != JNI_OK {
            self.check_exception()?;
            return Err(JniError::Code { function: "PushLocalFrame", code });
        }
        Ok(LocalFrame { jni: self, _not_send: PhantomData })
    }

    // -----------------------------------------------------------------------------------------
    // Classes and members
    // -----------------------------------------------------------------------------------------

    /// Finds a class by internal name (`java/lang/String`, `[I`) with the caller's class loader
    /// (the system loader on agent threads).
    pub fn find_class(self, name: &str) -> Result<jclass> {
        let name = mutf8_c_string(name);
        let class = jni_call!(self, FindClass(name.as_ptr()));
        self.non_null(class, "FindClass")
    }

    pub fn get_object_class(self, obj: jobject) -> Result<jclass> {
        let class = jni_call!(self, GetObjectClass(obj));
        self.non_null(class, "GetObjectClass")
    }

    /// The superclass; `None` for `java.lang.Object`, interfaces and primitive types.
    pub fn get_superclass(self, class: jclass) -> Option<jclass> {
        let superclass = jni_call!(self, GetSuperclass(class));
        (!superclass.is_null()).then_some(superclass)
    }

    /// Whether a `sub` can be assigned to a `sup` variable.
    pub fn is_assignable_from(self, sub: jclass, sup: jclass) -> bool {
        jni_call!(self, IsAssignableFrom(sub, sup))
    }

    /// Whether `obj` is an instance of `class` (null is an instance of everything, as in JNI).
    pub fn is_instance_of(self, obj: jobject, class: jclass) -> bool {
        jni_call!(self, IsInstanceOf(obj, class))
    }

    pub fn get_method_id(self, class: jclass, name: &str, signature: &str) -> Result<jmethodID> {
        let (name, signature) = (mutf8_c_string(name), mutf8_c_string(signature));
        let id = jni_call!(self, GetMethodID(class, name.as_ptr(), signature.as_ptr()));
        self.non_null(id, "GetMethodID")
    }

    pub fn get_static_method_id(self, class: jclass, name: &str, signature: &str) -> Result<jmethodID> {
        let (name, signature) = (mutf8_c_string(name), mutf8_c_string(signature));
        let id = jni_call!(self, GetStaticMethodID(class, name.as_ptr(), signature.as_ptr()));
        self.non_null(id, "GetStaticMethodID")
    }

    pub fn get_field_id(self, class: jclass, name: &str, signature: &str) -> Result<jfieldID> {
        let (name, signature) = (mutf8_c_string(name), mutf8_c_string(signature));
        let id = jni_call!(self, GetFieldID(class, name.as_ptr(), signature.as_ptr()));
        self.non_null(id, "GetFieldID")
    }

    pub fn get_static_field_id(self, class: jclass, name: &str, signature: &str) -> Result<jfieldID> {
        let (name, signature) = (mutf8_c_string(name), mutf8_c_string(signature));
        let id = jni_call!(self, GetStaticFieldID(class, name.as_ptr(), signature.as_ptr()));
        self.non_null(id, "GetStaticFieldID")
    }

    // -----------------------------------------------------------------------------------------
    // Strings
    // -----------------------------------------------------------------------------------------

    /// A new `java.lang.String` (any Rust string can be represented).
    pub fn new_string_utf(self, s: &str) -> Result<jstring> {
        let s = mutf8_c_string(s);
        let string = jni_call!(self, NewStringUTF(s.as_ptr()));
        self.non_null(string, "NewStringUTF")
    }

    /// The string's value, decoded from modified UTF-8 (unpaired surrogates become U+FFFD; use
    /// [`get_string_utf16`](Self::get_string_utf16) for the exact UTF-16).
    pub fn get_string_utf(self, string: jstring) -> Result<String> {
        let chars = jni_call!(self, GetStringUTFChars(string, ptr::null_mut()));
        let chars = self.non_null(chars.cast_mut(), "GetStringUTFChars")?;
        // SAFETY: GetStringUTFChars returned a NUL-terminated buffer, valid until released below.
        let value = jdwp_protocol::mutf8::decode(unsafe { CStr::from_ptr(chars) }.to_bytes());
        jni_call!(self, ReleaseStringUTFChars(string, chars));
        Ok(value)
    }

    /// The string's UTF-16 code units, exactly.
    pub fn get_string_utf16(self, string: jstring) -> Result<Vec<u16>> {
        let len = self.get_string_length(string)?;
        let mut units = vec![0u16; usize::try_from(len).unwrap_or(0)];
        jni_call!(self, GetStringRegion(string, 0, len, units.as_mut_ptr()));
        self.checked(units)
    }

    /// Length in UTF-16 code units.
    pub fn get_string_length(self, string: jstring) -> Result<jsize> {
        let len = jni_call!(self, GetStringLength(string));
        self.checked(len)
    }

    // -----------------------------------------------------------------------------------------
    // Arrays
    // -----------------------------------------------------------------------------------------

    pub fn get_array_length(self, array: jarray) -> Result<jsize> {
        let len = jni_call!(self, GetArrayLength(array));
        self.checked(len)
    }

    /// Element `index` of an object array (`ArrayIndexOutOfBoundsException` as `Err`).
    pub fn get_object_array_element(self, array: jobjectArray, index: jsize) -> Result<jobject> {
        let element = jni_call!(self, GetObjectArrayElement(array, index));
        self.checked(element)
    }

    /// Stores into an object array; the VM checks the index and the element type
    /// (`ArrayStoreException`).
    pub fn set_object_array_element(self, array: jobjectArray, index: jsize, value: jobject) -> Result<()> {
        jni_call!(self, SetObjectArrayElement(array, index, value));
        self.check_exception()
    }

    /// A new array of `len` elements of `class`, each `init` (may be null).
    pub fn new_object_array(self, len: jsize, class: jclass, init: jobject) -> Result<jobjectArray> {
        let array = jni_call!(self, NewObjectArray(len, class, init));
        self.non_null(array, "NewObjectArray")
    }

    /// A new primitive array of `len` zeroes; `T` picks the type (see [`Primitive`]).
    pub fn new_primitive_array<T: Primitive>(self, len: jsize) -> Result<jarray> {
        let array = T::new_array(self, len);
        self.non_null(array, "New<Primitive>Array")
    }

    /// Copies elements `start..start + buf.len()` of a primitive array into `buf`
    /// (`ArrayIndexOutOfBoundsException` as `Err`).
    ///
    /// # Safety
    ///
    /// `array` is an array of exactly `T`'s Java type (see [`Primitive`]): the VM sizes the copy by
    /// `T` and checks bounds against the array's own length, so another element type reads out of
    /// bounds.
    pub unsafe fn get_array_region<T: Primitive>(self, array: jarray, start: jsize, buf: &mut [T]) -> Result<()> {
        let len = jsize::try_from(buf.len()).map_err(|_| JniError::Failed("Get<Primitive>ArrayRegion"))?;
        // SAFETY: the caller promises the element type; `buf` has room for `len` elements.
        unsafe { T::get_region(self, array, start, len, buf.as_mut_ptr()) };
        self.check_exception()
    }

    /// Copies `buf` into elements `start..start + buf.len()` of a primitive array.
    ///
    /// # Safety
    ///
    /// As for [`get_array_region`](Self::get_array_region); here a wrong type writes out of bounds.
    pub unsafe fn set_array_region<T: Primitive>(self, array: jarray, start: jsize, buf: &[T]) -> Result<()> {
        let len = jsize::try_from(buf.len()).map_err(|_| JniError::Failed("Set<Primitive>ArrayRegion"))?;
        // SAFETY: the caller promises the element type; `buf` holds `len` elements.
        unsafe { T::set_region(self, array, start, len, buf.as_ptr()) };
        self.check_exception()
    }

    // -----------------------------------------------------------------------------------------
    // Fields
    // -----------------------------------------------------------------------------------------

    /// Reads an instance field (`Get<Type>Field`), as a `jvalue` of the member `ty` selects.
    ///
    /// # Safety
    ///
    /// `field` is an instance field of `obj`'s class (or a superclass) whose type is `ty` (not
    /// `Void`). The VM reads at the field's offset with `ty`'s width without checking either.
    pub unsafe fn get_field(self, obj: jobject, field: jfieldID, ty: JavaType) -> jvalue {
        macro_rules! get {
            ($f:ident, $member:ident) => {
                jvalue { $member: jni_call!(self, $f(obj, field)) }
            };
        }
        match ty {
            JavaType::Boolean => {
                let f = self.table().GetBooleanField;
                // SAFETY: JNI declares this function as returning `jboolean`, an unsigned char;
                // reading it as `u8` (jni-sys says `bool`) matches the C definition and never
                // builds a `bool` from a byte that might be neither 0 nor 1.
                let f: unsafe extern "system" fn(*mut JNIEnv, jobject, jfieldID) -> u8 =
                    unsafe { std::mem::transmute(f) };
                // SAFETY: as for `jni_call!`; the field's type is the caller's promise.
                jvalue { z: unsafe { f(self.as_raw(), obj, field) } != 0 }
            }
            JavaType::Byte => get!(GetByteField, b),
            JavaType::Char => get!(GetCharField, c),
            JavaType::Short => get!(GetShortField, s),
            JavaType::Int => get!(GetIntField, i),
            JavaType::Long => get!(GetLongField, j),
            JavaType::Float => get!(GetFloatField, f),
            JavaType::Double => get!(GetDoubleField, d),
            JavaType::Object => get!(GetObjectField, l),
            JavaType::Void => jvalue { j: 0 },
        }
    }

    /// Writes an instance field (`Set<Type>Field`) from the member of `value` that `ty` selects.
    ///
    /// # Safety
    ///
    /// As for [`get_field`](Self::get_field), and for an object field `value.l` is null or an
    /// instance of the field's type: the VM checks neither, and a wrong width or type corrupts
    /// the heap.
    pub unsafe fn set_field(self, obj: jobject, field: jfieldID, ty: JavaType, value: jvalue) {
        macro_rules! set {
            ($f:ident, $member:ident) => {{
                // SAFETY: the caller filled the member that `ty` names (reading `b` for a
                // boolean, so that any byte is fine).
                let v = unsafe { value.$member };
                jni_call!(self, $f(obj, field, v))
            }};
        }
        match ty {
            JavaType::Boolean => {
                // SAFETY: as in `set!`.
                let v = unsafe { value.b } != 0;
                jni_call!(self, SetBooleanField(obj, field, v))
            }
            JavaType::Byte => set!(SetByteField, b),
            JavaType::Char => set!(SetCharField, c),
            JavaType::Short => set!(SetShortField, s),
            JavaType::Int => set!(SetIntField, i),
            JavaType::Long => set!(SetLongField, j),
            JavaType::Float => set!(SetFloatField, f),
            JavaType::Double => set!(SetDoubleField, d),
            JavaType::Object => set!(SetObjectField, l),
            JavaType::Void => {}
        }
    }

    /// Reads a static field (`GetStatic<Type>Field`).
    ///
    /// # Safety
    ///
    /// `field` is a static field of `class` (or of a superclass or superinterface) whose type is
    /// `ty`.
    pub unsafe fn get_static_field(self, class: jclass, field: jfieldID, ty: JavaType) -> jvalue {
        macro_rules! get {
            ($f:ident, $member:ident) => {
                jvalue { $member: jni_call!(self, $f(class, field)) }
            };
        }
        match ty {
            JavaType::Boolean => {
                let f = self.table().GetStaticBooleanField;
                // SAFETY: as in `get_field`: the C function returns an unsigned char.
                let f: unsafe extern "system" fn(*mut JNIEnv, jclass, jfieldID) -> u8 =
                    unsafe { std::mem::transmute(f) };
                // SAFETY: as for `jni_call!`; the field's type is the caller's promise.
                jvalue { z: unsafe { f(self.as_raw(), class, field) } != 0 }
            }
            JavaType::Byte => get!(GetStaticByteField, b),
            JavaType::Char => get!(GetStaticCharField, c),
            JavaType::Short => get!(GetStaticShortField, s),
            JavaType::Int => get!(GetStaticIntField, i),
            JavaType::Long => get!(GetStaticLongField, j),
            JavaType::Float => get!(GetStaticFloatField, f),
            JavaType::Double => get!(GetStaticDoubleField, d),
            JavaType::Object => get!(GetStaticObjectField, l),
            JavaType::Void => jvalue { j: 0 },
        }
    }

    /// Writes a static field (`SetStatic<Type>Field`).
    ///
    /// # Safety
    ///
    /// As for [`get_static_field`](Self::get_static_field) and [`set_field`](Self::set_field).
    pub unsafe fn set_static_field(self, class: jclass, field: jfieldID, ty: JavaType, value: jvalue) {
        macro_rules! set {
            ($f:ident, $member:ident) => {{
                // SAFETY: the caller filled the member that `ty` names (reading `b` for a
                // boolean, so that any byte is fine).
                let v = unsafe { value.$member };
                jni_call!(self, $f(class, field, v))
            }};
        }
        match ty {
            JavaType::Boolean => {
                // SAFETY: as in `set!`.
                let v = unsafe { value.b } != 0;
                jni_call!(self, SetStaticBooleanField(class, field, v))
            }
            JavaType::Byte => set!(SetStaticByteField, b),
            JavaType::Char => set!(SetStaticCharField, c),
            JavaType::Short => set!(SetStaticShortField, s),
            JavaType::Int => set!(SetStaticIntField, i),
            JavaType::Long => set!(SetStaticLongField, j),
            JavaType::Float => set!(SetStaticFloatField, f),
            JavaType::Double => set!(SetStaticDoubleField, d),
            JavaType::Object => set!(SetStaticObjectField, l),
            JavaType::Void => {}
        }
    }

    // -----------------------------------------------------------------------------------------
    // Methods
    // -----------------------------------------------------------------------------------------

    /// Invokes `method` on `obj` with virtual dispatch (`Call<Type>MethodA`); `ret` is the method's
    /// return type. An exception thrown by the method comes back as `Err(Exception)`.
    ///
    /// # Safety
    ///
    /// `method` is an instance method of `obj`'s class returning `ret`, and `args` holds one value
    /// per parameter, each in the member for the parameter's type (references of the right
    /// class). The VM reads as many arguments as the descriptor says, from `args` unchecked.
    pub unsafe fn call_method(self, obj: jobject, method: jmethodID, ret: JavaType, args: &[jvalue]) -> Result<jvalue> {
        let args = args.as_ptr();
        let value = call_typed!(
            self,
            ret,
            CallBooleanMethodA,
            CallByteMethodA,
            CallCharMethodA,
            CallShortMethodA,
            CallIntMethodA,
            CallLongMethodA,
            CallFloatMethodA,
            CallDoubleMethodA,
            CallObjectMethodA,
            CallVoidMethodA,
            (obj, method, args)
        );
        self.checked(value)
    }

    /// Invokes `method` as declared in `class`, without virtual dispatch
    /// (`CallNonvirtual<Type>MethodA`).
    ///
    /// # Safety
    ///
    /// As for [`call_method`](Self::call_method), with `method` declared in `class` or a superclass
    /// of it, and `obj` an instance of `class`.
    pub unsafe fn call_nonvirtual_method(
        self,
        obj: jobject,
        class: jclass,
        method: jmethodID,
        ret: JavaType,
        args: &[jvalue],
    ) -> Result<jvalue> {
        let args = args.as_ptr();
        let value = call_typed!(
            self,
            ret,
            CallNonvirtualBooleanMethodA,
            CallNonvirtualByteMethodA,
            CallNonvirtualCharMethodA,
            CallNonvirtualShortMethodA,
            CallNonvirtualIntMethodA,
            CallNonvirtualLongMethodA,
            CallNonvirtualFloatMethodA,
            CallNonvirtualDoubleMethodA,
            CallNonvirtualObjectMethodA,
            CallNonvirtualVoidMethodA,
            (obj, class, method, args)
        );
        self.checked(value)
    }

    /// Invokes a static method (`CallStatic<Type>MethodA`).
    ///
    /// # Safety
    ///
    /// As for [`call_method`](Self::call_method), with `method` a static method of `class`.
    pub unsafe fn call_static_method(
        self,
        class: jclass,
        method: jmethodID,
        ret: JavaType,
        args: &[jvalue],
    ) -> Result<jvalue> {
        let args = args.as_ptr();
        let value = call_typed!(
            self,
            ret,
            CallStaticBooleanMethodA,
            CallStaticByteMethodA,
            CallStaticCharMethodA,
            CallStaticShortMethodA,
            CallStaticIntMethodA,
            CallStaticLongMethodA,
            CallStaticFloatMethodA,
            CallStaticDoubleMethodA,
            CallStaticObjectMethodA,
            CallStaticVoidMethodA,
            (class, method, args)
        );
        self.checked(value)
    }

    /// Constructs a `class` instance with constructor `method` (`NewObjectA`).
    ///
    /// # Safety
    ///
    /// As for [`call_method`](Self::call_method), with `method` a constructor (`<init>`) of `class`.
    pub unsafe fn new_object(self, class: jclass, method: jmethodID, args: &[jvalue]) -> Result<jobject> {
        let obj = jni_call!(self, NewObjectA(class, method, args.as_ptr()));
        self.non_null(obj, "NewObjectA")
    }

    // -----------------------------------------------------------------------------------------
    // The VM
    // -----------------------------------------------------------------------------------------

    pub fn get_java_vm(self) -> Result<JavaVm> {
        let mut vm: *mut JavaVM = ptr::null_mut();
        let code = jni_call!(self, GetJavaVM(&mut vm));
        if code != JNI_OK {
            return Err(JniError::Code { function: "GetJavaVM", code });
        }
        // SAFETY: the VM returned its own invocation interface.
        unsafe { JavaVm::from_raw(vm) }.ok_or(JniError::Failed("GetJavaVM"))
    }
}

/// A local reference frame, popped (freeing its local references) when dropped or by
/// [`pop`](Self::pop). Frames must be popped in the reverse order of pushing, which scoping gives.
#[must_use = "the frame is popped as soon as the guard is dropped"]
#[derive(Debug)]
pub struct LocalFrame {
    jni: Jni,
    _not_send: PhantomData<*const ()>,
}

impl LocalFrame {
    /// Pops the frame, keeping `result` alive: the returned reference is valid in the enclosing
    /// frame (null if `result` is null).
    pub fn pop(self, result: jobject) -> jobject {
        let this = std::mem::ManuallyDrop::new(self);
        jni_call!(this.jni, PopLocalFrame(result))
    }
}

impl Drop for LocalFrame {
    fn drop(&mut self) {
        jni_call!(self.jni, PopLocalFrame(ptr::null_mut()));
    }
}

/// The process's Java VM.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct JavaVm {
    vm: NonNull<JavaVM>,
}

// SAFETY: the `JavaVM` interface is process-wide: JNI specifies that it may be used from any
// thread (that is how threads attach), and the VM never frees it while the process runs.
unsafe impl Send for JavaVm {}
// SAFETY: as for `Send`.
unsafe impl Sync for JavaVm {}

impl std::fmt::Debug for JavaVm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "JavaVm({:p})", self.vm)
    }
}

impl JavaVm {
    /// Wraps the `JavaVM` given to `Agent_OnLoad`; `None` if null.
    ///
    /// # Safety
    ///
    /// `vm` is the VM's invocation interface (JNI 1.4 or later, for `AttachCurrentThreadAsDaemon`).
    pub unsafe fn from_raw(vm: *mut JavaVM) -> Option<JavaVm> {
        NonNull::new(vm).map(|vm| JavaVm { vm })
    }

    pub fn as_raw(self) -> *mut JavaVM {
        self.vm.as_ptr()
    }

    fn table(self) -> &'static jni_sys::JNIInvokeInterface__1_4 {
        // SAFETY: `from_raw`'s contract: the invocation table of a JNI 1.4+ VM, alive as long as
        // the process.
        unsafe { &(**self.vm.as_ptr()).v1_4 }
    }

    /// `GetEnv`: an environment of interface `version` for the current thread.
    fn get_env(self, version: jint) -> Result<*mut c_void> {
        let mut env = ptr::null_mut();
        // SAFETY: a live invocation table (see `table`), an out-pointer to a local.
        let code = unsafe { (self.table().GetEnv)(self.as_raw(), &mut env, version) };
        if code != JNI_OK {
            return Err(JniError::Code { function: "GetEnv", code });
        }
        if env.is_null() { Err(JniError::Failed("GetEnv")) } else { Ok(env) }
    }

    /// A new JVMTI environment of `version` (at least [`JVMTI_VERSION_11`], which the wrappers
    /// need; `Err(Code { JNI_EVERSION })` below that or if the VM lacks it).
    pub fn get_jvmti(self, version: jint) -> Result<Jvmti> {
        if version < JVMTI_VERSION_11 {
            return Err(JniError::Code { function: "GetEnv", code: JNI_EVERSION });
        }
        let env = self.get_env(version)?;
        // SAFETY: GetEnv returned a JVMTI environment of at least version 11; the agent never
        // disposes of it while running.
        unsafe { Jvmti::from_raw(env.cast()) }.ok_or(JniError::Failed("GetEnv"))
    }

    /// The current thread's JNI environment; `Err(Code { JNI_EDETACHED })` if it is not attached.
    pub fn get_jni(self, version: jint) -> Result<Jni> {
        let env = self.get_env(version)?;
        // SAFETY: GetEnv returned the calling thread's JNIEnv, which stays valid while it is
        // attached; `Jni` cannot leave the thread.
        unsafe { Jni::from_raw(env.cast()) }.ok_or(JniError::Failed("GetEnv"))
    }

    /// Attaches the current thread as a daemon (the VM does not wait for it to exit), named
    /// `name` in thread dumps; a thread already attached gets its existing environment.
    pub fn attach_current_thread_as_daemon(self, name: &str) -> Result<Jni> {
        let name = mutf8_c_string(name);
        let mut args =
            JavaVMAttachArgs { version: JNI_VERSION_1_8, name: name.as_ptr().cast_mut(), group: ptr::null_mut() };
        let mut env = ptr::null_mut();
        // SAFETY: a live invocation table; `args` and `name` outlive the call (the VM copies the
        // name); the out-pointer is a local.
        let code = unsafe {
            (self.table().AttachCurrentThreadAsDaemon)(self.as_raw(), &mut env, ptr::from_mut(&mut args).cast())
        };
        if code != JNI_OK {
            return Err(JniError::Code { function: "AttachCurrentThreadAsDaemon", code });
        }
        // SAFETY: the VM attached this thread and returned its JNIEnv.
        unsafe { Jni::from_raw(env.cast()) }.ok_or(JniError::Failed("AttachCurrentThreadAsDaemon"))
    }

    /// Detaches the current thread.
    ///
    /// # Safety
    ///
    /// No `Jni` of this thread, nor any local reference made on it, is used afterwards, and the
    /// thread has no Java frames on its stack.
    pub unsafe fn detach_current_thread(self) -> Result<()> {
        // SAFETY: a live invocation table; the rest is the caller's promise.
        let code = unsafe { (self.table().DetachCurrentThread)(self.as_raw()) };
        if code == JNI_OK { Ok(()) } else { Err(JniError::Code { function: "DetachCurrentThread", code }) }
    }
}

/// A C string in modified UTF-8, as JNI takes names and string contents. Modified UTF-8 has no
/// zero byte (U+0000 is `C0 80`), so this cannot fail.
fn mutf8_c_string(s: &str) -> CString {
    CString::new(jdwp_protocol::mutf8::encode(s)).unwrap_or_default()
}

/// A primitive Java type, by the Rust type that JNI passes it as: `u8` for `boolean` (JNI's
/// `jboolean` is an unsigned char; a `u8` buffer never holds an invalid `bool`), `i8` for `byte`,
/// `u16` for `char`, `i16` for `short`, `i32` for `int`, `i64` for `long`, `f32` for `float` and
/// `f64` for `double`.
pub trait Primitive: Copy + sealed::Sealed {
    /// The type's descriptor character (`Z`, `B`, ...).
    const DESCRIPTOR: u8;

    #[doc(hidden)]
    fn new_array(jni: Jni, len: jsize) -> jarray;

    #[doc(hidden)]
    /// # Safety
    ///
    /// `array` is an array of this type; `buf` has room for `len` elements.
    unsafe fn get_region(jni: Jni, array: jarray, start: jsize, len: jsize, buf: *mut Self);

    #[doc(hidden)]
    /// # Safety
    ///
    /// `array` is an array of this type; `buf` holds `len` elements.
    unsafe fn set_region(jni: Jni, array: jarray, start: jsize, len: jsize, buf: *const Self);
}

mod sealed {
    pub trait Sealed {}
}

macro_rules! primitive {
    ($($t:ty, $jni_t:ty, $desc:literal, $new:ident, $get:ident, $set:ident;)*) => {$(
        impl sealed::Sealed for $t {}

        impl Primitive for $t {
            const DESCRIPTOR: u8 = $desc;

            fn new_array(jni: Jni, len: jsize) -> jarray {
                jni_call!(jni, $new(len))
            }

            unsafe fn get_region(jni: Jni, array: jarray, start: jsize, len: jsize, buf: *mut Self) {
                // The cast only renames the element type for `boolean` (`u8` as jni-sys's
                // `jboolean`); the VM writes bytes, which we read as `u8`.
                jni_call!(jni, $get(array, start, len, buf.cast::<$jni_t>()))
            }

            unsafe fn set_region(jni: Jni, array: jarray, start: jsize, len: jsize, buf: *const Self) {
                jni_call!(jni, $set(array, start, len, buf.cast::<$jni_t>()))
            }
        }
    )*};
}

primitive! {
    u8, jboolean, b'Z', NewBooleanArray, GetBooleanArrayRegion, SetBooleanArrayRegion;
    i8, jbyte, b'B', NewByteArray, GetByteArrayRegion, SetByteArrayRegion;
    u16, jchar, b'C', NewCharArray, GetCharArrayRegion, SetCharArrayRegion;
    i16, jshort, b'S', NewShortArray, GetShortArrayRegion, SetShortArrayRegion;
    i32, jint, b'I', NewIntArray, GetIntArrayRegion, SetIntArrayRegion;
    i64, jlong, b'J', NewLongArray, GetLongArrayRegion, SetLongArrayRegion;
    f32, jfloat, b'F', NewFloatArray, GetFloatArrayRegion, SetFloatArrayRegion;
    f64, jdouble, b'D', NewDoubleArray, GetDoubleArrayRegion, SetDoubleArrayRegion;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_types_from_descriptors() {
        assert_eq!(JavaType::from_descriptor("I"), Some(JavaType::Int));
        assert_eq!(JavaType::from_descriptor("Ljava/lang/String;"), Some(JavaType::Object));
        assert_eq!(JavaType::from_descriptor("[[J"), Some(JavaType::Object));
        assert_eq!(JavaType::from_descriptor("Z"), Some(JavaType::Boolean));
        assert_eq!(JavaType::from_descriptor(""), None);
        assert_eq!(JavaType::from_descriptor("Q"), None);
        assert_eq!(JavaType::from_method_descriptor("(ILjava/lang/String;)V"), Some(JavaType::Void));
        assert_eq!(JavaType::from_method_descriptor("()[Ljava/lang/Object;"), Some(JavaType::Object));
        assert_eq!(JavaType::from_method_descriptor("(D)D"), Some(JavaType::Double));
        assert_eq!(JavaType::from_method_descriptor("I"), None);
    }

    #[test]
    fn strings_for_jni_are_modified_utf8() {
        assert_eq!(mutf8_c_string("java/lang/String").as_bytes(), b"java/lang/String");
        // NUL cannot end the C string early: it is C0 80.
        assert_eq!(mutf8_c_string("a\0b").as_bytes(), b"a\xc0\x80b");
        assert_eq!(mutf8_c_string("\u{1F600}").as_bytes(), b"\xed\xa0\xbd\xed\xb8\x80");
    }

    #[test]
    fn jni_errors_map_to_jdwp() {
        use jdwp_protocol::ErrorCode;
        assert_eq!(JniError::Code { function: "GetEnv", code: JNI_EDETACHED }.to_jdwp(), ErrorCode::UNATTACHED_THREAD);
        assert_eq!(JniError::Code { function: "x", code: JNI_ENOMEM }.to_jdwp(), ErrorCode::OUT_OF_MEMORY);
        assert_eq!(JniError::Failed("FindClass").to_jdwp(), ErrorCode::INTERNAL);
        assert_eq!(JniError::Exception(ptr::null_mut()).to_jdwp(), ErrorCode::INTERNAL);
    }

    #[test]
    fn primitive_descriptors() {
        let descriptors = [
            u8::DESCRIPTOR,
            i8::DESCRIPTOR,
            u16::DESCRIPTOR,
            i16::DESCRIPTOR,
            i32::DESCRIPTOR,
            i64::DESCRIPTOR,
            f32::DESCRIPTOR,
            f64::DESCRIPTOR,
        ];
        assert_eq!(&descriptors, b"ZBCSIJFD");
    }

    #[test]
    fn handles_are_thread_bound_or_shared_as_jni_says() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<JavaVm>();
        // `Jni` and `LocalFrame` hold a `NonNull`/`PhantomData<*const ()>`, so they are neither;
        // nothing to assert at run time.
    }
}
