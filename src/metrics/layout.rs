//! Where a module's objects sit: the roots the configuration gives, kept
//! within RFC 2578's limits.

use super::*;

use crate::oid::Oid;

/// The longest root the configuration may give a module (`oid`, `-o`,
/// `[puppet] oid`). With it, every object's OID and the longest row suffix
/// (an instance and a name index: 2 + [`MAX_NAME_INDEX_LEN`] arcs) stay
/// within RFC 2578's 128 sub-identifiers; a unit test checks the sum over
/// the whole catalogue.
pub const MAX_ROOT_SUBIDS: usize = 48;

/// A root the configuration gave that cannot hold the module.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    #[error("{0} is too short to hold a MIB")]
    TooShort(Oid),
    #[error("{0} has more than {MAX_ROOT_SUBIDS} sub-identifiers, too long to hold a MIB's rows")]
    TooLong(Oid),
}

/// Where the MIB's objects sit. The legacy scalars hang under `legacy` (the
/// old `-o` option, `root.1` by default); everything else under `root`.
/// Built only through the constructors, which keep every root within
/// [`MAX_ROOT_SUBIDS`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    root: Oid,
    legacy: Oid,
    /// The root of PUPPET-AGENT-MIB.
    puppet: Oid,
}

fn checked_root(oid: Oid) -> Result<Oid, LayoutError> {
    if oid.len() < 2 {
        Err(LayoutError::TooShort(oid))
    } else if oid.len() > MAX_ROOT_SUBIDS {
        Err(LayoutError::TooLong(oid))
    } else {
        Ok(oid)
    }
}

impl Layout {
    /// Layout from the legacy branch OID, as the old `-o` gave it: the rest
    /// of the module lives beside it, under its parent.
    pub fn from_legacy_oid(legacy: Oid) -> Result<Layout, LayoutError> {
        let legacy = checked_root(legacy)?;
        let root = legacy.parent().unwrap_or_else(Oid::null);
        Ok(Layout {
            root,
            legacy,
            puppet: default_puppet_root(),
        })
    }

    /// This layout with PUPPET-AGENT-MIB under `puppet`.
    pub fn with_puppet_root(self, puppet: Oid) -> Result<Layout, LayoutError> {
        Ok(Layout {
            puppet: checked_root(puppet)?,
            ..self
        })
    }

    pub fn default_layout() -> Layout {
        let legacy = DEFAULT_REDIS_ROOT
            .parse::<Oid>()
            .and_then(|root| root.child(&[LEGACY_BRANCH]))
            .expect("the default root is a valid OID");
        Layout::from_legacy_oid(legacy).expect("the default root is short enough")
    }

    /// The root of REDIS-SERVER-MIB (the legacy branch's parent).
    pub fn root(&self) -> &Oid {
        &self.root
    }

    /// The branch of the 17 legacy scalars.
    pub fn legacy(&self) -> &Oid {
        &self.legacy
    }

    /// The root of PUPPET-AGENT-MIB.
    pub fn puppet(&self) -> &Oid {
        &self.puppet
    }

    /// The OID of an object (without instance suffix).
    pub fn object_oid(&self, def: &ObjectDef) -> Oid {
        self.row_oid(def, &[])
            .expect("roots are at most MAX_ROOT_SUBIDS long, which leaves room for every object")
    }

    /// The root an object hangs from, and its arcs below it.
    fn base_of(&self, def: &ObjectDef) -> (&Oid, &'static [u32]) {
        if let Source::Puppet(_) = def.source {
            (&self.puppet, def.arcs)
        } else {
            match def.arcs.split_first() {
                Some((&LEGACY_BRANCH, rest)) => (&self.legacy, rest),
                _ => (&self.root, def.arcs),
            }
        }
    }

    /// The OID of a row of an object: its OID and `suffix`, or `None` when
    /// that would be longer than an OID may be (a suffix the catalogue's
    /// index cannot hold). Built in one piece: every cell of every reading
    /// comes through here.
    pub fn row_oid(&self, def: &ObjectDef, suffix: &[u32]) -> Option<Oid> {
        let (base, arcs) = self.base_of(def);
        let mut subids = Vec::with_capacity(base.len() + arcs.len() + suffix.len());
        subids.extend_from_slice(base.as_slice());
        subids.extend_from_slice(arcs);
        subids.extend_from_slice(suffix);
        Oid::new(subids).ok()
    }

    /// The OID a notification about `about` carries `carried` at: the
    /// object's OID and the instance `about` gives it ([`Carried::instance`]).
    pub fn carried_oid(&self, carried: &Carried, about: About) -> Option<Oid> {
        self.row_oid(carried.object, &carried.instance(about)?)
    }

    /// The OID a notification is sent as (`snmpTrapOID.0`'s value): its
    /// number under its module's notifications branch.
    pub fn notification_oid(&self, def: &NotificationDef) -> Oid {
        let root = match def.mib {
            Mib::Redis => &self.root,
            Mib::Puppet => &self.puppet,
        };
        root.child(&[NOTIFICATIONS_BRANCH, def.number])
            .expect("roots are at most MAX_ROOT_SUBIDS long")
    }

    /// OIDs of every served object, for the snapshot's noSuchObject test.
    pub fn object_oids(&self) -> Vec<Oid> {
        redis_objects()
            .chain(puppet_objects())
            .map(|d| self.object_oid(d))
            .collect()
    }

    /// The subtrees to register with the master (the Puppet one only when
    /// Puppet is watched).
    pub fn subtrees(&self, with_puppet: bool) -> Vec<Oid> {
        let mut subtrees = vec![self.root.clone()];
        if !self.legacy.starts_with(&self.root) {
            subtrees.push(self.legacy.clone());
        }
        if with_puppet {
            subtrees.push(self.puppet.clone());
        }
        subtrees
    }
}

fn default_puppet_root() -> Oid {
    DEFAULT_PUPPET_ROOT
        .parse()
        .expect("the default Puppet root is a valid OID")
}
