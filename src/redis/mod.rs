//! Reading Redis: the INFO parser and the poller.

pub mod budget;
pub mod certificate;
pub mod certificate_watch;
pub mod clients;
pub mod connection;
pub mod info;
pub mod keys;
pub mod observation;
pub mod peer;
pub mod poller;
pub mod readings;
pub mod replies;
