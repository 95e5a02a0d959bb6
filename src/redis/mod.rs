//! Reading Redis: the INFO parser and the poller.

pub mod info;
pub mod readings;
pub mod poller;
