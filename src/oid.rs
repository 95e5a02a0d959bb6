//! Object identifiers.
//!
//! An [`Oid`] is a plain list of sub-identifiers. The derived ordering of
//! `[u32]` slices is exactly SNMP's lexicographic order, which is what makes a
//! sorted `Vec` of OIDs a valid MIB view to binary-search.

use std::fmt;
use std::str::FromStr;

/// RFC 2578 caps an OID at 128 sub-identifiers; anything longer is refused.
pub const MAX_SUBIDS: usize = 128;

#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Oid(Vec<u32>);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OidError {
    #[error("OID {0:?} is not a dotted list of numbers")]
    Syntax(String),
    #[error("OID has more than {MAX_SUBIDS} sub-identifiers")]
    TooLong,
}

impl Oid {
    pub fn new(subids: Vec<u32>) -> Result<Self, OidError> {
        if subids.len() > MAX_SUBIDS {
            return Err(OidError::TooLong);
        }
        Ok(Oid(subids))
    }

    /// The empty ("null") OID, used by AgentX for an open-ended search range.
    pub fn null() -> Self {
        Oid(Vec::new())
    }

    pub fn as_slice(&self) -> &[u32] {
        &self.0
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn starts_with(&self, prefix: &Oid) -> bool {
        self.0.starts_with(&prefix.0)
    }

    /// This OID with `suffix` appended: `root.child(&[1, 5, 0])`, under
    /// the same limit as [`Oid::new`].
    pub fn child(&self, suffix: &[u32]) -> Result<Oid, OidError> {
        if self.0.len() + suffix.len() > MAX_SUBIDS {
            return Err(OidError::TooLong);
        }
        let mut v = Vec::with_capacity(self.0.len() + suffix.len());
        v.extend_from_slice(&self.0);
        v.extend_from_slice(suffix);
        Ok(Oid(v))
    }

    /// The OID one level up, or `None` for the null OID.
    pub fn parent(&self) -> Option<Oid> {
        let (_, rest) = self.0.split_last()?;
        Some(Oid(rest.to_vec()))
    }
}

impl FromStr for Oid {
    type Err = OidError;

    /// Accepts `1.3.6.1` and net-snmp's leading-dot form `.1.3.6.1`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let trimmed = s.trim();
        let body = trimmed.strip_prefix('.').unwrap_or(trimmed);
        if body.is_empty() {
            return Err(OidError::Syntax(s.to_string()));
        }
        let subids = body
            .split('.')
            .map(|part| part.parse::<u32>())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| OidError::Syntax(s.to_string()))?;
        Oid::new(subids)
    }
}

impl fmt::Display for Oid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for subid in &self.0 {
            write!(f, ".{subid}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Oid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Oid({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_dotted_forms() {
        let a: Oid = ".1.3.6.1.4.1.20267.400".parse().unwrap();
        let b: Oid = "1.3.6.1.4.1.20267.400".parse().unwrap();
        assert_eq!(a, b);
        assert_eq!(a.to_string(), ".1.3.6.1.4.1.20267.400");
    }

    #[test]
    fn rejects_garbage() {
        for bad in ["", ".", "1..2", "1.x", "1.3.-1", "1.99999999999"] {
            assert!(bad.parse::<Oid>().is_err(), "{bad:?} accepted");
        }
        let long = vec!["1"; MAX_SUBIDS + 1].join(".");
        assert_eq!(long.parse::<Oid>(), Err(OidError::TooLong));
    }

    #[test]
    fn a_child_keeps_the_limit() {
        let root: Oid = "1.3.6.1".parse().unwrap();
        assert_eq!(root.child(&[2, 0]).unwrap().to_string(), ".1.3.6.1.2.0");
        let full = root.child(&[7; MAX_SUBIDS - 4]).unwrap();
        assert_eq!(full.len(), MAX_SUBIDS);
        assert_eq!(full.child(&[1]), Err(OidError::TooLong));
        assert_eq!(full.child(&[]).as_ref(), Ok(&full));
    }

    #[test]
    fn orders_like_snmp() {
        let mut oids: Vec<Oid> = ["1.3.6.1.2", "1.3.6.1.10", "1.3.6.1", "1.3.6.1.2.0"]
            .iter()
            .map(|s| s.parse().unwrap())
            .collect();
        oids.sort();
        let shown: Vec<String> = oids.iter().map(|o| o.to_string()).collect();
        assert_eq!(
            shown,
            [".1.3.6.1", ".1.3.6.1.2", ".1.3.6.1.2.0", ".1.3.6.1.10"]
        );
    }
}
