//! Reading Redis: the client (connection, reply budget, refusals), the
//! parsers of its replies, and the poller that decides what is due.

pub mod budget;
pub mod certificate_watch;
pub mod client;
pub mod clients;
pub mod connection;
pub mod info;
pub mod keys;
pub mod observation;
pub mod peer;
pub mod poller;
pub mod readings;
pub mod replies;
pub mod rows;
