//! The AgentX protocol (RFC 2741), subagent side.

pub mod address;
pub mod answer;
pub mod pdu;
pub mod session;
pub mod transport;
