//! `jdwp-fuzz`: a structure-aware JDWP fuzzer, built from `jdwp-protocol`'s layout tables.
//!
//! Every packet's body is sampled from the layout of a command of the protocol crate's table
//! (vendor sets too) by the crate's own samplers, with IDs of every kind harvested from a live
//! session, wrong-kind IDs on purpose, hostile numbers, and mutations that know where the IDs and
//! counts are; a few packets get header mutations. Packets go one at a time to a JVM running the
//! `FuzzTarget` fixture under our agent (or the JDK's), and oracles judge every answer: the JVM
//! lives, every command is answered (or the connection closed where the spec allows), replies
//! decode, memory stays bounded. Findings are written with the seed, index and exact bytes, and
//! replay against a fresh JVM. See `spec-notes/fuzzing.md`.

pub mod conn;
pub mod finding;
pub mod generate;
pub mod harvest;
pub mod pool;
pub mod run;
pub mod target;
