//! The one table of what the agent serves.
//!
//! Every object of REDIS-SERVER-MIB and PUPPET-AGENT-MIB that the agent
//! answers for is one row here: its MIB name, its OID below the module root,
//! its SMI syntax and where its value comes from. The sources build
//! snapshots from these rows, and the tests check the MIB modules
//! (`tests/mib_modules.rs` for both, `tests/mib_table.rs` and
//! `tests/puppet_mib.rs` for each one's own) and the OpenNMS files
//! (`tests/opennms.rs`) against them, so none can drift apart. Adding a
//! Redis field is adding a row.

//!
//! The catalogue is split by what each part declares: what an object is
//! and where its value comes from (`object`), what a table and its index
//! are (`index`), the tables of each family, each declared once by
//! `table!` with their enumerations (REDIS-SERVER-MIB's instances and
//! their INFO groups in `redis_server`, the rows INFO lists in
//! `redis_info_rows`, those other commands reply in `redis_replies`, keys
//! in `redis_keys`, events in `redis_events`, PUPPET-AGENT-MIB in
//! `puppet_agent`), the list of each module's tables (`tables`), each
//! module as a whole (`module`), the one writer that puts a row's values
//! at their OIDs (`rows`), the notifications (`notifications`), what
//! OpenNMS collects (`opennms`) and Prometheus walks (`prometheus`), and
//! where a module's objects sit (`layout`). This file holds
//! `enumeration!` (`table!` is in `table`) and hands every name on, so a
//! reader names `metrics::X` whatever file declares it.

/// Where the default module root sits: `enterprises.daysofwonder(20267).400`.
pub const DEFAULT_REDIS_ROOT: &str = "1.3.6.1.4.1.20267.400";

/// The default root of PUPPET-AGENT-MIB: `enterprises.daysofwonder(20267).401`,
/// beside REDIS-SERVER-MIB.
pub const DEFAULT_PUPPET_ROOT: &str = "1.3.6.1.4.1.20267.401";

/// Arc of the 17 legacy scalars below the root (the old `-o` pointed here).
pub const LEGACY_BRANCH: u32 = 1;

/// `redisInstanceTable` and its entry, below the root: `redis.3.1.1`.
pub const INSTANCE_ENTRY: &[u32] = &[3, 1, 1];

/// Declares an enumeration of the MIB (`INTEGER { name(n), ... }`) as a
/// Rust enum with its numbers and the labels the sources use for each
/// (Redis's INFO text, Puppet's words), and its `LABELS` table for
/// [`Conversion::Enum`] and the tests. A label not in it has no number:
/// the object is absent, never a made-up value. The sources' parsers
/// produce these enums themselves (one enum per enumeration, no twin to
/// map by hand), so the variants are ordered as the numbers are.
macro_rules! enumeration {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $number:literal => [$($label:literal),+],)+ }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[repr(i32)]
        pub enum $name {
            $($(#[$vmeta])* $variant = $number,)+
        }

        impl $name {
            /// Every label with its number.
            pub const LABELS: &'static [(&'static str, i32)] = &[$($(($label, $number),)+)+];

            /// The value a source's label stands for.
            pub fn from_label(label: &str) -> Option<Self> {
                match label {
                    $($($label)|+ => Some(Self::$variant),)+
                    _ => None,
                }
            }

            /// Its number in the MIB.
            pub const fn number(self) -> i32 {
                self as i32
            }

            /// Its first label: the word the source writes for it, and the
            /// MIB's name where the two agree.
            pub const fn label(self) -> &'static str {
                match self {
                    $(Self::$variant => [$($label),+][0],)+
                }
            }
        }
    };
}

// The parts of the catalogue come after the macros, which they use:
// `enumeration!` above, `table!` in its own file (it names the object
// model, which this face does not).
#[macro_use]
mod table;
mod index;
mod layout;
mod module;
mod notifications;
mod object;
mod opennms;
mod prometheus;
mod puppet_agent;
mod redis_events;
mod redis_info_rows;
mod redis_keys;
mod redis_replies;
mod redis_server;
mod rows;
mod tables;

pub use index::*;
pub use layout::*;
pub use module::*;
pub use notifications::*;
pub use object::*;
pub use opennms::*;
pub use prometheus::*;
pub use puppet_agent::*;
pub use redis_events::*;
pub use redis_info_rows::*;
pub use redis_keys::*;
pub use redis_replies::*;
pub use redis_server::*;
pub use rows::*;
pub use tables::*;

#[cfg(test)]
mod tests;
