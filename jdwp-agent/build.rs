//! Compiles the one piece of C in the agent: the fault guard around the CPU sampler's stack walks
//! (`native/fault_guard.c`, see `src/profiling/fault_guard.rs`), which needs `sigsetjmp`.

fn main() {
    println!("cargo:rerun-if-changed=native/fault_guard.c");
    cc::Build::new().file("native/fault_guard.c").warnings(true).extra_warnings(true).compile("fault_guard");
}
