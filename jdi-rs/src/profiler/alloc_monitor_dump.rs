//! The profiler's allocation sites, monitor contention and heap dump commands (the rest of the
//! typed API is in the parent module).

use jdwp_protocol::commands::profiler as p;

use super::{AllocReportReply, MonitorReportReply, Profiler, feature};
use crate::error::{JdiError, Result};

fn require(profiler: &Profiler, feature: &'static str, message: &'static str) -> Result<()> {
    if profiler.has(feature) { Ok(()) } else { Err(JdiError::Unsupported(message)) }
}

const NO_ALLOC: &str = "sample allocations (the agent has no 'alloc' profiler feature)";
const NO_MONITOR: &str = "record monitor contention (the agent has no 'monitor' profiler feature)";
const NO_HEAP_DUMP: &str = "write a heap dump (the agent has no 'heap-dump' feature)";

impl Profiler {
    /// Starts sampling allocations, about one every `interval_bytes` allocated bytes (0: every
    /// allocation), with stacks of at most `max_depth` frames (0: the agent's default). Earlier
    /// sites are discarded.
    pub async fn alloc_start(&self, interval_bytes: i32, max_depth: i32) -> Result<()> {
        require(self, feature::ALLOC, NO_ALLOC)?;
        self.vm.send(&p::AllocStart { sampling_interval_bytes: interval_bytes, max_depth, flags: 0 }).await?;
        Ok(())
    }

    /// Stops sampling allocations (the sites stay; their live counts keep falling).
    pub async fn alloc_stop(&self) -> Result<()> {
        require(self, feature::ALLOC, NO_ALLOC)?;
        self.vm.send(&p::AllocStop {}).await?;
        Ok(())
    }

    /// The allocation sites by decreasing allocated bytes; `reset` discards them afterwards.
    pub async fn alloc_report(&self, reset: bool) -> Result<AllocReportReply> {
        require(self, feature::ALLOC, NO_ALLOC)?;
        self.vm.send(&p::AllocReport { reset }).await
    }

    /// Starts recording monitor contention (earlier records are discarded), with stacks of at
    /// most `max_depth` frames (0: the agent's default).
    pub async fn monitor_start(&self, max_depth: i32) -> Result<()> {
        require(self, feature::MONITOR, NO_MONITOR)?;
        self.vm.send(&p::MonitorStart { max_depth, flags: 0 }).await?;
        Ok(())
    }

    /// Stops recording monitor contention (what was recorded stays for the report).
    pub async fn monitor_stop(&self) -> Result<()> {
        require(self, feature::MONITOR, NO_MONITOR)?;
        self.vm.send(&p::MonitorStop {}).await?;
        Ok(())
    }

    /// Contention per monitor class and waiting site, by decreasing blocked time; `reset`
    /// discards it afterwards.
    pub async fn monitor_report(&self, reset: bool) -> Result<MonitorReportReply> {
        require(self, feature::MONITOR, NO_MONITOR)?;
        self.vm.send(&p::MonitorReport { reset }).await
    }

    /// Writes an HPROF heap dump to `path` on the target's machine (a file that must not exist
    /// yet); `live_only` collects garbage first. Returns the bytes written.
    pub async fn heap_dump(&self, path: &str, live_only: bool) -> Result<i64> {
        require(self, feature::HEAP_DUMP, NO_HEAP_DUMP)?;
        Ok(self.vm.send(&p::HeapDump { path: path.to_owned(), live_only }).await?.bytes_written)
    }
}
