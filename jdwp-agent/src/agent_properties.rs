//! The VM's agent properties (`jdk.internal.vm.VMSupport.getAgentProperties()`), which tools read
//! through the attach API: the JDK's agent publishes its listening address there as
//! `sun.jdwp.listenerAddress` (`<transport>:<address>`), and JDI's `ProcessAttachingConnector`
//! attaches to a process by its pid by reading it. We publish it the same way.

use jni_sys::jvalue;

use crate::jni::{JavaType, Jni, JniError};

/// The property JDI's `ProcessAttachingConnector` reads.
pub const LISTENER_ADDRESS: &str = "sun.jdwp.listenerAddress";

/// Sets one agent property. Uses JNI (module access checks do not apply to JNI), so the calling
/// thread must be attached: the VM-init thread.
pub fn set(jni: Jni, key: &str, value: &str) -> Result<(), JniError> {
    let frame = jni.push_local_frame(8)?;
    let support = jni.find_class("jdk/internal/vm/VMSupport")?;
    let get = jni.get_static_method_id(support, "getAgentProperties", "()Ljava/util/Properties;")?;
    // SAFETY: a static method of `support` taking no arguments and returning an object.
    let props = unsafe { jni.call_static_method(support, get, JavaType::Object, &[])?.l };
    if props.is_null() {
        drop(frame);
        return Ok(());
    }
    let class = jni.find_class("java/util/Properties")?;
    let set_property =
        jni.get_method_id(class, "setProperty", "(Ljava/lang/String;Ljava/lang/String;)Ljava/lang/Object;")?;
    let (key, value) = (jni.new_string_utf(key)?, jni.new_string_utf(value)?);
    // SAFETY: `props` is a `Properties`; both arguments are strings, as the descriptor says.
    unsafe { jni.call_method(props, set_property, JavaType::Object, &[jvalue { l: key }, jvalue { l: value }])? };
    drop(frame);
    Ok(())
}
