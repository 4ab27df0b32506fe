//! Event requests and filtering: which debugger requests an event satisfies.

pub mod filter;
pub mod requests;
