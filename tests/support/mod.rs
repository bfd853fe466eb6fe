//! Helpers shared by the integration tests.
#![allow(dead_code)]
pub mod agent;
pub mod process;
pub mod tail;
pub mod tls;
pub mod writer;
