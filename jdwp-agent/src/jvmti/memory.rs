//! Memory that JVMTI allocated and the agent must give back with `Deallocate`.

use std::ffi::{CStr, c_char};
use std::fmt;
use std::ops::Deref;
use std::ptr::NonNull;

use super::Jvmti;
use super::sys::jint;

/// An array JVMTI returned, freed with `Deallocate` when dropped.
///
/// Not `Send`: JVMTI arrays usually hold JNI local references, which belong to one thread.
pub struct JvmtiBuf<T> {
    jvmti: Jvmti,
    ptr: *mut T,
    len: usize,
}

impl<T> JvmtiBuf<T> {
    /// Takes ownership of an array of `len` elements that `jvmti` allocated.
    ///
    /// # Safety
    ///
    /// `ptr` is null, or was allocated by `jvmti` (through `Allocate` or as a JVMTI out-array), holds
    /// `len` initialized `T`s, and is freed by nobody else.
    pub unsafe fn from_raw(jvmti: Jvmti, ptr: *mut T, len: usize) -> JvmtiBuf<T> {
        JvmtiBuf { jvmti, ptr, len: if ptr.is_null() { 0 } else { len } }
    }

    /// As [`from_raw`](Self::from_raw) with a JVMTI count; a negative count is taken as empty.
    ///
    /// # Safety
    ///
    /// As for [`from_raw`](Self::from_raw).
    pub(crate) unsafe fn from_count(jvmti: Jvmti, ptr: *mut T, count: jint) -> JvmtiBuf<T> {
        // SAFETY: the caller's promise; a count that is not a length is read as 0, which only
        // shortens what we look at (the block is still freed whole).
        unsafe { JvmtiBuf::from_raw(jvmti, ptr, usize::try_from(count).unwrap_or(0)) }
    }

    /// An empty buffer that frees nothing.
    pub fn empty(jvmti: Jvmti) -> JvmtiBuf<T> {
        JvmtiBuf { jvmti, ptr: std::ptr::null_mut(), len: 0 }
    }

    /// Gives up ownership: the caller must now `Deallocate` the pointer (if not null).
    pub fn into_raw(self) -> (*mut T, usize) {
        let this = std::mem::ManuallyDrop::new(self);
        (this.ptr, this.len)
    }
}

impl<T> Deref for JvmtiBuf<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        if self.ptr.is_null() {
            return &[];
        }
        // SAFETY: `from_raw`'s contract: `len` initialized elements at a non-null `ptr`, alive
        // until we deallocate them in `drop`.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl<T> Drop for JvmtiBuf<T> {
    fn drop(&mut self) {
        // SAFETY: `from_raw`'s contract: the block came from this environment and is ours alone.
        unsafe { deallocate_quietly(self.jvmti, self.ptr.cast()) };
    }
}

impl<T: fmt::Debug> fmt::Debug for JvmtiBuf<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// A NUL-terminated modified UTF-8 string JVMTI returned (a name, a signature), freed when dropped.
/// It may be null, which JVMTI uses for "none" (e.g. no generic signature).
pub struct JvmtiString {
    jvmti: Jvmti,
    ptr: *mut c_char,
}

impl JvmtiString {
    /// Takes ownership of a string that `jvmti` allocated.
    ///
    /// # Safety
    ///
    /// `ptr` is null, or is a NUL-terminated string allocated by `jvmti` and freed by nobody else.
    pub unsafe fn from_raw(jvmti: Jvmti, ptr: *mut c_char) -> JvmtiString {
        JvmtiString { jvmti, ptr }
    }

    pub fn is_null(&self) -> bool {
        self.ptr.is_null()
    }

    /// The bytes before the terminating NUL (none for a null string).
    pub fn as_bytes(&self) -> &[u8] {
        if self.ptr.is_null() {
            return &[];
        }
        // SAFETY: `from_raw`'s contract: a NUL-terminated string, alive until `drop`.
        unsafe { CStr::from_ptr(self.ptr) }.to_bytes()
    }

    /// The decoded string; `None` for a null string.
    pub fn to_option(&self) -> Option<String> {
        (!self.is_null()).then(|| self.to_string())
    }
}

/// Decodes the modified UTF-8 (unpaired surrogates and malformed bytes become U+FFFD).
impl fmt::Display for JvmtiString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&jdwp_protocol::mutf8::decode(self.as_bytes()))
    }
}

impl fmt::Debug for JvmtiString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.is_null() {
            true => f.write_str("null"),
            false => write!(f, "{:?}", self.to_string()),
        }
    }
}

impl Drop for JvmtiString {
    fn drop(&mut self) {
        // SAFETY: `from_raw`'s contract: the string came from this environment and is ours alone.
        unsafe { deallocate_quietly(self.jvmti, self.ptr.cast()) };
    }
}

/// Frees `mem` (if not null), logging rather than failing: a drop has nobody to report to, and a
/// leaked block is better than a panic.
///
/// # Safety
///
/// As for [`Jvmti::deallocate`].
unsafe fn deallocate_quietly(jvmti: Jvmti, mem: *mut u8) {
    let Some(mem) = NonNull::new(mem) else { return };
    // SAFETY: forwarded to our caller.
    if let Err(e) = unsafe { jvmti.deallocate(mem.as_ptr()) } {
        tracing::warn!(error = %e, "JVMTI Deallocate failed; leaking the block");
    }
}
