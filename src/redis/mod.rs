//! Reading Redis: the INFO parser and the poller.

pub mod connection;
pub mod info;
pub mod observation;
pub mod poller;
pub mod readings;
pub mod replies;
