//! What a host name may be, wherever one comes from (kick.toml, the
//! inventory, PuppetDB's answer): the word the kick command is given, so
//! it must never read as an option.

/// A host name or address as ssh and the resolver take it; never an
/// option (`-oProxyCommand=…`).
pub fn is_host_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && !name.starts_with('-')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.-:".contains(&b))
}
