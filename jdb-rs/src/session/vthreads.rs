//! The virtual threads this session has met, as JDK 25's jdb keeps them: no JDWP command lists
//! virtual threads (`AllThreads` includes them only with the agent's `includevirtualthreads=y`,
//! and thread groups never do), so jdb remembers the ones it has seen (event threads,
//! `AllThreads`, thread starts) and lists them after the platform threads, under their group
//! (`VirtualThreads`). A thread that has ended is dropped when next listed.

use jdi::{ThreadReference, ThreadStatus};

/// Virtual threads in the order met.
#[derive(Default)]
pub struct VirtualThreads {
    met: Vec<ThreadReference>,
    /// Whether `AllThreads`' virtual threads have been taken in (once, on first use).
    listed: bool,
}

impl VirtualThreads {
    /// Whether the first listing is still to be taken in.
    pub fn wants_listing(&self) -> bool {
        !self.listed
    }

    /// Takes in the virtual threads of the first `AllThreads`, ahead of any met before.
    pub fn take_listing(&mut self, virtual_threads: Vec<ThreadReference>) {
        self.listed = true;
        let met = std::mem::replace(&mut self.met, virtual_threads);
        for t in met {
            self.note(t);
        }
    }

    /// Remembers `thread` (a virtual thread), once.
    pub fn note(&mut self, thread: ThreadReference) {
        if !self.met.contains(&thread) {
            self.met.push(thread);
        }
    }

    /// Forgets a thread that died.
    pub fn forget(&mut self, thread: &ThreadReference) {
        self.met.retain(|t| t != thread);
    }

    /// The threads met that are still alive, in the order met; forgets the others (ended, or
    /// collected: the VM no longer knows the ID).
    pub async fn alive(&mut self) -> Vec<ThreadReference> {
        let mut alive = Vec::with_capacity(self.met.len());
        for t in std::mem::take(&mut self.met) {
            match t.status().await {
                Ok((ThreadStatus::Zombie, _)) => {}
                Ok(_) => alive.push(t),
                // The VM is gone: keep what we know, listing will fail on its own.
                Err(e) if e.code().is_none() => alive.push(t),
                Err(_) => {}
            }
        }
        self.met = alive.clone();
        alive
    }
}
