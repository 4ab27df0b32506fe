//! jdb's expression language, shared by jdb-rs and the DAP adapter (`jdbg-dap`): [`lexer`], [`parser`] (Java precedence, casts, calls, indexing,
//! assignment) and [`eval`] (against a frame, in the target VM, for any
//! [`eval::Host`]: the debugger that handles events while the expression invokes methods).

pub mod eval;
pub mod lexer;
pub mod parser;
