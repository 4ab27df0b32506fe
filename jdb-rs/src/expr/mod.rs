//! jdb's expression language: [`lexer`], [`parser`] (Java precedence, casts, calls, indexing,
//! assignment) and [`eval`] (against the current frame, in the target VM).

pub mod eval;
pub mod lexer;
pub mod parser;
