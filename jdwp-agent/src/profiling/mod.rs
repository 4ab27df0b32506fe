//! Profiling: the agent side of the `Profiler` vendor command set (128).

pub mod heap_dump;
pub mod hprof;
