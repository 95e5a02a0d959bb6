//! Reading Redis: the client (connection, reply budget, refusals), the
//! parsers of its replies, and the poller that decides what is due.

pub mod acl_log;
pub mod big_keys;
pub mod budget;
pub mod cadence;
pub mod certificate_watch;
pub mod client;
pub mod clients;
pub mod connection;
pub mod failover;
pub mod hot_keys;
pub mod info;
pub mod info_sections;
pub mod keys;
pub mod observation;
pub mod peer;
pub mod poller;
pub mod readings;
pub mod replies;
pub mod rows;
pub mod slowlog;
pub mod watch;
