//! What the running VM offers, decided from its version numbers, never from what the agent was
//! built against: one `libjdwp_agent.so` serves JDK 17, 21 and 25.
//!
//! Pure: callers read `GetVersionNumber` (JVMTI) or `GetVersion` (JNI) and ask here. The JDK's
//! agent reports its VM's JVMTI major and minor as the JDWP version (JDWP 17 on JDK 17, 25 on
//! JDK 25), and debuggers key features on it: JDI turns its virtual-thread paths on for a JDWP
//! major of 19 or more. So we report the same numbers and the same description.

/// JNI 21, the first JNI version in which `IsVirtualThread` is not a preview function.
pub const JNI_VERSION_21: i32 = 0x0015_0000;

/// A JVMTI version number taken apart (`JVMTI_VERSION_MASK_*` of `jvmti.h`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JvmtiVersion {
    pub major: i32,
    pub minor: i32,
    pub micro: i32,
}

impl JvmtiVersion {
    /// What the agent assumes when `GetVersionNumber` fails (it never does on a HotSpot the agent
    /// can load in): the oldest JDK it supports.
    pub const FALLBACK: JvmtiVersion = JvmtiVersion { major: 17, minor: 0, micro: 0 };

    /// Takes apart the number `GetVersionNumber` returns (`0x30000000` is the JVMTI interface
    /// type; then 12 bits of major, 8 of minor, 8 of micro).
    pub fn from_number(number: i32) -> JvmtiVersion {
        JvmtiVersion { major: (number >> 16) & 0x0fff, minor: (number >> 8) & 0xff, micro: number & 0xff }
    }

    /// The JDWP version `VirtualMachine.Version` reports: the JVMTI one, as the JDK's agent does.
    pub fn jdwp_version(self) -> (i32, i32) {
        (self.major, self.minor)
    }

    /// Whether the VM has virtual threads as a final feature (JDK 21, JEP 444): JVMTI's
    /// `can_support_virtual_threads`, `VirtualThreadStart`/`End` and JNI's `IsVirtualThread` are
    /// there without `--enable-preview`.
    pub fn has_virtual_threads(self) -> bool {
        self.major >= 21
    }

    /// Whether the JDWP additions of JDK 19 (`ThreadReference.IsVirtual`, the
    /// `PlatformThreadsOnly` modifier) are part of the version we report. They are answered on
    /// every VM (a VM without virtual threads has none to report), but a debugger only sends them
    /// when the version says so.
    pub fn reports_jdwp_19(self) -> bool {
        self.major >= 19
    }

    /// Whether the VM can start debugging on `jcmd <pid> VM.start_java_debugging`, so that the
    /// agent's `onjcmd` option means something. JDK 24 removed that diagnostic command and, with
    /// it, the option from its agent (JDK-8336401), which since refuses `onjcmd` as an unknown
    /// option: an agent that took it would wait for a command that can never come.
    pub fn has_jcmd_start(self) -> bool {
        self.major < 24
    }

    /// `VirtualMachine.Version`'s description, laid out line for line as the JDK's agent lays it
    /// out; `implementation` names the agent where the JDK's says "Reference Implementation".
    pub fn description(self, implementation: &str, vm_version: &str, vm_name: &str, vm_info: &str) -> String {
        let (major, minor) = self.jdwp_version();
        format!(
            "Java Debug Wire Protocol ({implementation}) version {major}.{minor}\n\
             JVM Debug Interface version {}.{}\n\
             JVM version {vm_version} ({vm_name}, {vm_info})",
            self.major, self.minor
        )
    }
}

/// Whether the VM's JNI function table has `IsVirtualThread` as a final function, from the JNI
/// version `GetVersion` returns. Below 21 the slot is missing (JDK 17) or a preview (19, 20):
/// every thread counts as a platform thread there.
pub fn jni_has_is_virtual_thread(jni_version: i32) -> bool {
    jni_version >= JNI_VERSION_21
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_numbers_are_taken_apart_like_jvmti_h_says() {
        // As `GetVersionNumber` answers on JDK 17 and JDK 25.
        assert_eq!(JvmtiVersion::from_number(0x3011_0000), JvmtiVersion { major: 17, minor: 0, micro: 0 });
        assert_eq!(JvmtiVersion::from_number(0x3019_0000), JvmtiVersion { major: 25, minor: 0, micro: 0 });
        assert_eq!(JvmtiVersion::from_number(0x300b_0203), JvmtiVersion { major: 11, minor: 2, micro: 3 });
    }

    #[test]
    fn jcmd_can_start_debugging_up_to_jdk_23() {
        assert!(JvmtiVersion::from_number(0x3011_0000).has_jcmd_start());
        assert!(JvmtiVersion::from_number(0x3017_0000).has_jcmd_start());
        assert!(!JvmtiVersion::from_number(0x3018_0000).has_jcmd_start());
        assert!(!JvmtiVersion::from_number(0x3019_0000).has_jcmd_start());
    }

    #[test]
    fn jdwp_version_is_the_jvmti_version() {
        assert_eq!(JvmtiVersion::from_number(0x3011_0000).jdwp_version(), (17, 0));
        assert_eq!(JvmtiVersion::from_number(0x3015_0000).jdwp_version(), (21, 0));
        assert_eq!(JvmtiVersion::from_number(0x3019_0000).jdwp_version(), (25, 0));
        assert_eq!(JvmtiVersion::FALLBACK.jdwp_version(), (17, 0));
    }

    #[test]
    fn virtual_threads_from_21_and_their_jdwp_commands_from_19() {
        let v = |major| JvmtiVersion { major, minor: 0, micro: 0 };
        assert!(!v(17).has_virtual_threads() && !v(17).reports_jdwp_19());
        assert!(!v(19).has_virtual_threads() && v(19).reports_jdwp_19());
        assert!(v(21).has_virtual_threads() && v(25).has_virtual_threads());
    }

    #[test]
    fn is_virtual_thread_needs_jni_21() {
        assert!(!jni_has_is_virtual_thread(0x0001_0008)); // JNI 1.8
        assert!(!jni_has_is_virtual_thread(0x000a_0000)); // JNI 10 (JDK 17 reports it)
        assert!(!jni_has_is_virtual_thread(0x0014_0000)); // JNI 20, preview
        assert!(jni_has_is_virtual_thread(0x0015_0000));
        assert!(jni_has_is_virtual_thread(0x0018_0000)); // JNI 24 (JDK 25 reports it)
    }

    #[test]
    fn description_has_the_jdk_agents_three_lines() {
        let d = JvmtiVersion::from_number(0x3019_0000).description(
            "Reference Implementation",
            "25.0.1",
            "OpenJDK 64-Bit Server VM",
            "mixed mode, sharing",
        );
        assert_eq!(
            d,
            "Java Debug Wire Protocol (Reference Implementation) version 25.0\n\
             JVM Debug Interface version 25.0\n\
             JVM version 25.0.1 (OpenJDK 64-Bit Server VM, mixed mode, sharing)"
        );
    }
}
