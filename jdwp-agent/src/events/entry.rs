//! Method entry events without the global JVMTI `MethodEntry` event where possible.
//!
//! JVMTI's `MethodEntry` event puts every thread in interpreter-only mode and calls back on every
//! method call in the VM. When every method entry request is narrowed to some classes (a
//! `ClassOnly` or `ClassMatch` before any `Count`), the agent instead sets a breakpoint at the first
//! bytecode of each method of the matching classes (classes prepared later included): only those
//! methods run interpreted, only their entries call back, and a user breakpoint at a method's
//! first bytecode then naturally comes in the same composite as its entry.
//!
//! A breakpoint at a method's first bytecode also fires when a loop jumps back to it, and cannot be
//! set in a native method, which still reports entries. So a matching class with a native method
//! or a method branching to its first bytecode sends the agent back to the global event, as does
//! any request without a class scope ([`Mode::Global`]).
//!
//! Changed under [`super::setup`] by agent threads; callbacks only read [`is_entry`] and
//! [`wants_class`].

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use jdwp_protocol::{EventKind, class_status, modifiers};
use jni_sys::{jclass, jmethodID};

use super::breakpoints;
use super::filter::Request;
use crate::agent::{Agent, lock};
use crate::events::subject::Subject;
use crate::jni::Jni;

pub use crate::agent::engine::EntryMode as Mode;
use crate::agent::engine::EntryState;

/// How method entries are caught now: [`EntryState::mode`], read without the lock by every method
/// entry callback.
pub fn mode(agent: &Agent) -> Mode {
    match agent.engine.entry_mode.load(Ordering::Acquire) {
        1 => Mode::Global,
        2 => Mode::Breakpoints,
        _ => Mode::Off,
    }
}

fn set_mode(agent: &Agent, state: &mut EntryState, mode: Mode) {
    state.mode = mode;
    agent.engine.entry_mode.store(mode as u8, Ordering::Release);
}

/// Whether (`method`, `index`) is an entry breakpoint: a breakpoint there is a method entry.
pub fn is_entry(agent: &Agent, method: usize, index: i64) -> bool {
    if mode(agent) != Mode::Breakpoints {
        return false;
    }
    let state = lock(&agent.engine.entry);
    state.mode == Mode::Breakpoints && state.methods.get(&method) == Some(&index)
}

/// Whether a class just prepared may need entry breakpoints (callbacks; cheap when not).
pub fn wants_class(agent: &Agent, jni: Jni, class: jclass) -> bool {
    if mode(agent) != Mode::Breakpoints {
        return false;
    }
    let requests = {
        let state = lock(&agent.engine.entry);
        if state.mode != Mode::Breakpoints {
            return false;
        }
        state.requests.clone()
    };
    let subject = Subject::of_class(agent, jni, class);
    requests.iter().any(|r| !r.class_rejects(&subject))
}

/// Why a class cannot be served by entry breakpoints.
struct Unfit;

/// The entry breakpoints `class` needs: its methods with code, by first code index. `Ok(None)` if
/// the class is not prepared yet (its prepare event will bring it back).
fn methods_of(agent: &Agent, class: jclass) -> Result<Option<Vec<(usize, i64)>>, Unfit> {
    let methods = match agent.jvmti.get_class_methods(class) {
        Ok(m) => m,
        Err(e) if e == crate::jvmti::JvmtiError::CLASS_NOT_PREPARED => return Ok(None),
        Err(_) => return Err(Unfit),
    };
    let mut out = Vec::with_capacity(methods.len());
    for &method in methods.iter() {
        let flags = agent.jvmti.get_method_modifiers(method).map_err(|_| Unfit)?;
        if flags & modifiers::ABSTRACT != 0 {
            continue;
        }
        if flags & modifiers::NATIVE != 0 {
            return Err(Unfit);
        }
        let (start, _) = agent.jvmti.get_method_location(method).map_err(|_| Unfit)?;
        let code = agent.jvmti.get_bytecodes(method).map_err(|_| Unfit)?;
        if start != 0 || branches_to_start(&code) {
            return Err(Unfit);
        }
        out.push((method as usize, start));
    }
    Ok(Some(out))
}

/// Re-plans after the method entry requests changed. Holds [`super::setup`].
pub fn recompute(agent: &Agent, jni: Jni) {
    let requests = lock(&agent.requests).of_kind(EventKind::MethodEntry);
    if requests.is_empty() {
        switch(agent, Mode::Off);
    } else if requests.iter().all(|r| r.has_class_scope()) {
        try_breakpoints(agent, jni, requests);
    } else {
        switch(agent, Mode::Global);
    }
}

/// Releases every entry breakpoint and switches to `mode` (`Off` or `Global`).
fn switch(agent: &Agent, mode: Mode) {
    let methods = {
        let mut state = lock(&agent.engine.entry);
        set_mode(agent, &mut state, mode);
        state.requests.clear();
        std::mem::take(&mut state.methods)
    };
    for (method, index) in methods {
        breakpoints::release(agent, method as jmethodID, index);
    }
    if mode == Mode::Global {
        tracing::debug!("method entry requests use the global JVMTI event");
    }
}

fn try_breakpoints(agent: &Agent, jni: Jni, requests: Vec<Arc<Request>>) {
    // Switch first, with class prepare events on, so that a class prepared during the scan below is
    // caught either by the scan or by its prepare event.
    {
        let mut state = lock(&agent.engine.entry);
        set_mode(agent, &mut state, Mode::Breakpoints);
        state.requests = requests.clone();
    }
    super::modes::sync(agent);
    let Ok(classes) = agent.jvmti.get_loaded_classes() else {
        switch(agent, Mode::Global);
        return;
    };
    let mut wanted: HashMap<usize, i64> = HashMap::new();
    let mut unfit = false;
    for &class in classes.iter() {
        if !unfit && class_matches(agent, jni, &requests, class) {
            match methods_of(agent, class) {
                Ok(methods) => wanted.extend(methods.into_iter().flatten()),
                Err(Unfit) => unfit = true,
            }
        }
        jni.delete_local_ref(class);
    }
    if unfit {
        switch(agent, Mode::Global);
        return;
    }
    let (old, new): (HashMap<usize, i64>, Vec<(usize, i64)>) = {
        let state = lock(&agent.engine.entry);
        let methods = &state.methods;
        let old = methods.iter().filter(|(m, _)| !wanted.contains_key(m)).map(|(m, i)| (*m, *i)).collect();
        let new = wanted.iter().filter(|(m, _)| !methods.contains_key(m)).map(|(m, i)| (*m, *i)).collect();
        (old, new)
    };
    for (method, index) in old {
        lock(&agent.engine.entry).methods.remove(&method);
        breakpoints::release(agent, method as jmethodID, index);
    }
    install(agent, new);
}

/// Sets entry breakpoints; on failure gives up on breakpoints for the global event.
fn install(agent: &Agent, methods: Vec<(usize, i64)>) {
    for (method, index) in methods {
        if lock(&agent.engine.entry).methods.contains_key(&method) {
            continue;
        }
        if let Err(e) = breakpoints::acquire(agent, method as jmethodID, index) {
            tracing::debug!(?e, "entry breakpoint refused");
            switch(agent, Mode::Global);
            return;
        }
        lock(&agent.engine.entry).methods.insert(method, index);
    }
}

fn class_matches(agent: &Agent, jni: Jni, requests: &[Arc<Request>], class: jclass) -> bool {
    let prepared = agent.jvmti.get_class_status(class).is_ok_and(|s| s & class_status::PREPARED != 0);
    if !prepared {
        return false;
    }
    let subject = Subject::of_class(agent, jni, class);
    requests.iter().any(|r| !r.class_rejects(&subject))
}

/// A class matching some request was prepared: set its entry breakpoints. Holds
/// [`super::setup`] (run by the event helper for the preparing thread).
pub fn add_class(agent: &Agent, jni: Jni, class: jclass) {
    let requests = {
        let state = lock(&agent.engine.entry);
        if state.mode != Mode::Breakpoints {
            return;
        }
        state.requests.clone()
    };
    if !class_matches(agent, jni, &requests, class) {
        return;
    }
    match methods_of(agent, class) {
        Ok(Some(methods)) => install(agent, methods),
        Ok(None) => {}
        Err(Unfit) => switch(agent, Mode::Global),
    }
    super::modes::sync(agent);
}

/// Classes were redefined (JVMTI cleared their breakpoints): set their entry breakpoints again,
/// in their new methods. Holds [`super::setup`].
pub fn classes_redefined(agent: &Agent, jni: Jni, classes: &[jclass]) {
    if mode(agent) != Mode::Breakpoints {
        return;
    }
    let methods: Vec<(usize, i64)> = lock(&agent.engine.entry).methods.iter().map(|(m, i)| (*m, *i)).collect();
    for (method, index) in methods {
        let Ok(declaring) = agent.jvmti.get_method_declaring_class(method as jmethodID) else { continue };
        let redefined = classes.iter().any(|&c| jni.is_same_object(c, declaring));
        jni.delete_local_ref(declaring);
        if redefined {
            lock(&agent.engine.entry).methods.remove(&method);
            breakpoints::release(agent, method as jmethodID, index);
        }
    }
    for &class in classes {
        add_class(agent, jni, class);
    }
}

/// Whether bytecode `code` can jump to its first instruction (a loop at the start of a method):
/// a breakpoint there would then fire without an entry. Unknown opcodes count as a yes.
pub fn branches_to_start(code: &[u8]) -> bool {
    let s2 = |at: usize| code.get(at..at + 2).map(|b| i64::from(i16::from_be_bytes([b[0], b[1]])));
    let s4 = |at: usize| code.get(at..at + 4).map(|b| i64::from(i32::from_be_bytes([b[0], b[1], b[2], b[3]])));
    let mut pc = 0usize;
    while pc < code.len() {
        let op = code[pc];
        let here = pc as i64;
        let len = match op {
            0x00..=0x0f | 0x1a..=0x35 | 0x3b..=0x83 | 0x85..=0x98 | 0xac..=0xb1 | 0xbe | 0xbf | 0xc2 | 0xc3 => 1,
            0x10 | 0x12 | 0x15..=0x19 | 0x36..=0x3a | 0xa9 | 0xbc => 2,
            0x11 | 0x13 | 0x14 | 0x84 | 0xb2..=0xb8 | 0xbb | 0xbd | 0xc0 | 0xc1 => 3,
            0xc5 => 4,
            0xb9 | 0xba => 5,
            // Branches: if*, goto, jsr, ifnull, ifnonnull.
            0x99..=0xa8 | 0xc6 | 0xc7 => {
                match s2(pc + 1) {
                    Some(offset) if here + offset == 0 => return true,
                    Some(_) => {}
                    None => return true,
                }
                3
            }
            // goto_w, jsr_w.
            0xc8 | 0xc9 => {
                match s4(pc + 1) {
                    Some(offset) if here + offset == 0 => return true,
                    Some(_) => {}
                    None => return true,
                }
                5
            }
            // wide: iinc takes 6 bytes, the loads, stores and ret 4.
            0xc4 => match code.get(pc + 1) {
                Some(0x84) => 6,
                Some(_) => 4,
                None => return true,
            },
            // tableswitch, lookupswitch: operands aligned to 4 bytes from the method start.
            0xaa | 0xab => {
                let base = (pc + 4) & !3;
                let targets: Vec<i64> = if op == 0xaa {
                    let (Some(default), Some(low), Some(high)) = (s4(base), s4(base + 4), s4(base + 8)) else {
                        return true;
                    };
                    let Ok(n) = usize::try_from(high - low + 1) else { return true };
                    if n > code.len() {
                        return true;
                    }
                    let mut t: Vec<i64> = (0..n).filter_map(|i| s4(base + 12 + 4 * i)).collect();
                    if t.len() != n {
                        return true;
                    }
                    t.push(default);
                    pc = base + 12 + 4 * n;
                    t
                } else {
                    let (Some(default), Some(pairs)) = (s4(base), s4(base + 4)) else { return true };
                    let Ok(n) = usize::try_from(pairs) else { return true };
                    if n > code.len() {
                        return true;
                    }
                    let mut t: Vec<i64> = (0..n).filter_map(|i| s4(base + 8 + 8 * i + 4)).collect();
                    if t.len() != n {
                        return true;
                    }
                    t.push(default);
                    pc = base + 8 + 8 * n;
                    t
                };
                if targets.iter().any(|offset| here + offset == 0) {
                    return true;
                }
                continue;
            }
            _ => return true,
        };
        pc += len;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::branches_to_start;

    #[test]
    fn straight_code_and_forward_branches_do_not_reach_the_start() {
        // iconst_1; istore_0; iload_0; ifeq +5; iinc 0 1; return
        assert!(!branches_to_start(&[0x04, 0x3b, 0x1a, 0x99, 0x00, 0x05, 0x84, 0x00, 0x01, 0xb1]));
        // A loop whose head is not the first instruction: iconst_0; istore_0; iinc; goto -3
        assert!(!branches_to_start(&[0x03, 0x3b, 0x84, 0x00, 0x01, 0xa7, 0xff, 0xfd]));
    }

    #[test]
    fn a_loop_back_to_the_first_instruction_is_found() {
        // invokestatic #2; goto -3 (a `while (true) f();` body)
        assert!(branches_to_start(&[0xb8, 0x00, 0x02, 0xa7, 0xff, 0xfd]));
        // nop; goto_w -1 (back to the nop)
        assert!(branches_to_start(&[0x00, 0xc8, 0xff, 0xff, 0xff, 0xff]));
    }

    #[test]
    fn switch_tables_are_walked_and_checked() {
        // iload_0 (pc 0); tableswitch at pc 1, padded to 4: default +12 (to pc 13), low 0, high 0,
        // one offset -1 (to pc 0); then at 20 return.
        let mut code = vec![0x1a, 0xaa, 0, 0];
        code.extend(12i32.to_be_bytes());
        code.extend(0i32.to_be_bytes());
        code.extend(0i32.to_be_bytes());
        code.extend((-1i32).to_be_bytes());
        code.push(0xb1);
        assert!(branches_to_start(&code));
        // The same with the offset going forward, and a lookupswitch with one pair.
        let n = code.len();
        code[n - 5..n - 1].copy_from_slice(&19i32.to_be_bytes());
        assert!(!branches_to_start(&code));
        let mut lookup = vec![0x1a, 0xab, 0, 0];
        lookup.extend(15i32.to_be_bytes());
        lookup.extend(1i32.to_be_bytes());
        lookup.extend(7i32.to_be_bytes());
        lookup.extend(15i32.to_be_bytes());
        lookup.push(0xb1);
        assert!(!branches_to_start(&lookup));
    }

    #[test]
    fn wide_forms_and_unknown_opcodes() {
        // wide iinc (6 bytes); wide iload (4 bytes); return
        assert!(!branches_to_start(&[0xc4, 0x84, 0x01, 0x00, 0x00, 0x01, 0xc4, 0x15, 0x01, 0x00, 0xb1]));
        assert!(branches_to_start(&[0xcb]), "an unknown opcode is taken as unsafe");
        assert!(branches_to_start(&[0xa7, 0x00]), "a truncated branch is unsafe");
    }
}
