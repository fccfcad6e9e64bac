//! The soak's judgements, pure functions of what the stack recorded and
//! what the driver did, each unit-tested without a stack.

pub mod alerts;
pub mod heartbeats;
pub mod logs;
pub mod phases;
pub mod slots;
