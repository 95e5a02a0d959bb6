//! The two MIB modules as wholes: each one's name, root, scalars, tables
//! and notifications, the one place the lists of a module's objects are
//! derived from (the agent's served OIDs, the MIB tests' modules).

use super::*;

/// One MIB module the agent serves, as a whole: what the lists of objects,
/// tables and notifications are derived from.
#[derive(Debug, Clone, Copy)]
pub struct Module {
    /// `REDIS-SERVER-MIB`.
    pub name: &'static str,
    /// The root it sits at unless configured otherwise.
    pub default_root: &'static str,
    /// Its scalars, each served with `.0`.
    pub scalars: &'static [&'static [ObjectDef]],
    /// Its tables.
    pub tables: &'static [TableDef],
    /// Its notifications.
    pub notifications: &'static [NotificationDef],
}

impl Module {
    /// Every object of the module the agent serves: its scalars, then its
    /// tables' columns.
    pub fn objects(&self) -> impl Iterator<Item = &'static ObjectDef> + 'static {
        let scalars: &'static [&'static [ObjectDef]] = self.scalars;
        let tables: &'static [TableDef] = self.tables;
        scalars
            .iter()
            .flat_map(|list| list.iter())
            .chain(tables.iter().flat_map(|t| t.columns.iter()))
    }
}

/// REDIS-SERVER-MIB.
pub const REDIS_MODULE: Module = Module {
    name: "REDIS-SERVER-MIB",
    default_root: DEFAULT_REDIS_ROOT,
    scalars: &[LEGACY_SCALARS],
    tables: TABLES,
    notifications: REDIS_NOTIFICATIONS,
};

/// PUPPET-AGENT-MIB.
pub const PUPPET_MODULE: Module = Module {
    name: "PUPPET-AGENT-MIB",
    default_root: DEFAULT_PUPPET_ROOT,
    scalars: PUPPET_SCALAR_LISTS,
    tables: PUPPET_TABLES,
    notifications: PUPPET_NOTIFICATIONS,
};

/// Every module the agent serves.
pub const MODULES: [Module; 2] = [REDIS_MODULE, PUPPET_MODULE];

/// Every object REDIS-SERVER-MIB defines that the agent serves.
pub fn redis_objects() -> impl Iterator<Item = &'static ObjectDef> {
    REDIS_MODULE.objects()
}

/// Every object PUPPET-AGENT-MIB defines that the agent serves.
pub fn puppet_objects() -> impl Iterator<Item = &'static ObjectDef> {
    PUPPET_MODULE.objects()
}
