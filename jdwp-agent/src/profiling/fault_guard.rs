//! Crash protection for the CPU sampler's stack walks.
//!
//! `AsyncGetCallTrace` (HotSpot, JDK 17) walks the interrupted thread's stack without checking what
//! it reads; on a stack caught mid-change it can fault, and a fault in our `SIGPROF` handler would
//! take the JVM down with it. [`call`] runs a walk behind `sigsetjmp` (in `native/fault_guard.c`:
//! Rust cannot call a function that returns twice), and the `SIGSEGV`/`SIGBUS` handler that
//! [`install`] puts in front of the VM's jumps back out of the walk when the faulting thread is in
//! one. Every other fault goes to the handler that was there before, with the same arguments:
//! HotSpot takes faults on purpose all the time (implicit null checks, safepoint polls, stack
//! banging), and must see them exactly as without us.
//!
//! What a jump skips is only the walk's own frames: `AsyncGetCallTrace` takes no lock and
//! allocates nothing, which is what makes it callable from a signal handler in the first place.

use std::ffi::{c_int, c_long, c_void};
use std::sync::OnceLock;

/// A stack walk as the guard calls it (`AsyncGetCallTrace`'s shape, with the trace untyped).
pub type Walk = unsafe extern "C" fn(trace: *mut c_void, depth: c_int, ucontext: *mut c_void);

unsafe extern "C" {
    fn jdwp_agent_fault_guard_install() -> c_int;
    fn jdwp_agent_fault_guard_call(walk: Walk, trace: *mut c_void, depth: c_int, ucontext: *mut c_void) -> c_int;
    fn jdwp_agent_fault_guard_counts(passed_on: *mut c_long, recovered: *mut c_long);
    #[cfg(test)]
    fn jdwp_agent_fault_guard_test_fault(trace: *mut c_void, depth: c_int, ucontext: *mut c_void);
}

/// How a guarded walk ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Guarded {
    /// The walk returned.
    Done,
    /// The walk faulted and was abandoned; whatever it wrote is not to be trusted.
    Faulted,
    /// Too many threads were in guarded walks at once; this one was not made.
    Busy,
}

/// Installs the fault handler in front of the current ones, once; returns whether it is in place.
/// Without it, [`call`] must not be used (a fault would not be caught).
pub fn install() -> bool {
    // Static: the SIGSEGV guard is process-wide, installed once.
    static INSTALLED: OnceLock<bool> = OnceLock::new();
    // SAFETY: sigaction calls on structs the C side owns; called once, as the C side requires.
    *INSTALLED.get_or_init(|| unsafe { jdwp_agent_fault_guard_install() } == 0)
}

/// Runs `walk(trace, depth, ucontext)` so that a fault inside it returns [`Guarded::Faulted`]
/// instead of killing the process. Async-signal-safe. [`install`] must have returned true.
///
/// # Safety
/// `walk` must be safe to call with these arguments, and must take no lock and hold no resource
/// that a jump out of it would leave taken.
pub unsafe fn call(walk: Walk, trace: *mut c_void, depth: c_int, ucontext: *mut c_void) -> Guarded {
    // SAFETY: as the caller promised; the C side only calls `walk` and jumps back into itself.
    match unsafe { jdwp_agent_fault_guard_call(walk, trace, depth, ucontext) } {
        0 => Guarded::Done,
        1 => Guarded::Faulted,
        _ => Guarded::Busy,
    }
}

/// (faults handed to the previous handler, faults recovered from) since [`install`].
pub fn counts() -> (c_long, c_long) {
    let (mut passed_on, mut recovered) = (0, 0);
    // SAFETY: two out-pointers to locals.
    unsafe { jdwp_agent_fault_guard_counts(&mut passed_on, &mut recovered) };
    (passed_on, recovered)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ptr::null_mut;

    unsafe extern "C" fn count_calls(trace: *mut c_void, depth: c_int, _: *mut c_void) {
        // SAFETY: the tests pass a pointer to an i32.
        unsafe { *trace.cast::<i32>() += depth };
    }

    /// What [`install`] does to a fault outside a walk (handing it to the previous handler) is
    /// tested in a child process: this test binary, run again with this variable set. (In this
    /// process the previous handler is Rust's stack overflow handler, which the other tests go
    /// through whenever they fault outside a walk: none does.)
    const CHILD: &str = "JDWP_AGENT_FAULT_GUARD_CHILD";

    #[test]
    fn a_fault_in_a_guarded_walk_comes_back_as_faulted_and_the_next_walks_run() {
        assert!(install());
        assert!(install(), "a second install is a no-op");
        let (_, recovered_before) = counts();
        for _ in 0..3 {
            // SAFETY: the test walk only writes to an unmapped address, which the guard catches.
            let faulted = unsafe { call(jdwp_agent_fault_guard_test_fault, null_mut(), 0, null_mut()) };
            assert_eq!(faulted, Guarded::Faulted);
            let mut total = 0i32;
            // SAFETY: count_calls gets a pointer to `total`.
            let done = unsafe { call(count_calls, (&raw mut total).cast(), 5, null_mut()) };
            assert_eq!((done, total), (Guarded::Done, 5));
        }
        assert!(counts().1 >= recovered_before + 3);
    }

    #[test]
    fn walks_on_many_threads_at_once_each_come_back_to_their_own_thread() {
        assert!(install());
        let threads: Vec<_> = (0..8)
            .map(|i| {
                std::thread::spawn(move || {
                    let mut total = 0i32;
                    for round in 0..500 {
                        if (round + i) % 3 == 0 {
                            // SAFETY: as in the test above.
                            let r = unsafe { call(jdwp_agent_fault_guard_test_fault, null_mut(), 0, null_mut()) };
                            assert_eq!(r, Guarded::Faulted);
                        } else {
                            // SAFETY: count_calls gets a pointer to `total`.
                            let r = unsafe { call(count_calls, (&raw mut total).cast(), 1, null_mut()) };
                            assert_eq!(r, Guarded::Done);
                        }
                    }
                    total
                })
            })
            .collect();
        for (i, t) in threads.into_iter().enumerate() {
            let expected = (0..500).filter(|round| (round + i) % 3 != 0).count() as i32;
            assert_eq!(t.join().unwrap(), expected);
        }
    }

    /// The child's part: a handler of its own first (as the VM's would be), then the guard, then a
    /// fault outside any walk, which must reach that first handler.
    #[test]
    #[ignore = "run in a child process by a_fault_outside_a_walk_reaches_the_handler_that_was_there_before"]
    fn child_process_part() {
        assert!(std::env::var_os(CHILD).is_some(), "only in the child process");
        extern "C" fn first_handler(_: c_int, _: *mut libc::siginfo_t, _: *mut c_void) {
            // SAFETY: _exit is async-signal-safe.
            unsafe { libc::_exit(42) };
        }
        // SAFETY: a plain sigaction with a struct we own.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = first_handler as *const () as usize;
            action.sa_flags = libc::SA_SIGINFO;
            libc::sigemptyset(&mut action.sa_mask);
            assert_eq!(libc::sigaction(libc::SIGSEGV, &action, null_mut()), 0);
        }
        assert!(install());
        // SAFETY: as above: caught by the guard.
        assert_eq!(unsafe { call(jdwp_agent_fault_guard_test_fault, null_mut(), 0, null_mut()) }, Guarded::Faulted);
        // Outside a walk: handed to first_handler, which exits with 42.
        // SAFETY: deliberately faults; the process ends in the handler.
        unsafe { jdwp_agent_fault_guard_test_fault(null_mut(), 0, null_mut()) };
        unreachable!("the first handler exits the process");
    }

    #[test]
    fn a_fault_outside_a_walk_reaches_the_handler_that_was_there_before() {
        let status = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "profiling::fault_guard::tests::child_process_part", "--ignored", "--test-threads", "1"])
            .env(CHILD, "1")
            .output()
            .expect("the test binary runs again");
        assert_eq!(status.status.code(), Some(42), "{status:?}");
    }
}
