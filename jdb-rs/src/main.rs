//! jdb-rs: a jdb-compatible command-line Java debugger (see the library's docs, `jdb_rs`).

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("jdb-rs: cannot start the async runtime: {e}");
            std::process::exit(1);
        }
    };
    let code = runtime.block_on(jdb_rs::run(args));
    // Do not wait for the editor thread or stuck tasks.
    runtime.shutdown_background();
    std::process::exit(code);
}
