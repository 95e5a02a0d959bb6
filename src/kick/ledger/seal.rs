//! The seal on every record of a shared ledger: an HMAC-SHA256 of the
//! entry's name and its JSON, by the key every manager holds in
//! `[ledger] key_file`. Whoever can write the ledger's Redis, but not
//! read that file, cannot make a record a manager believes: not a kick
//! (which names what is run), not a move of one entry to another name.
//! A stored value is the tag in hex, then the JSON.

use ring::hmac;

/// Hex digits of the tag before the JSON.
const TAG_HEX: usize = 64;
/// No key file is shorter: a guessable key seals nothing.
pub const MIN_KEY_BYTES: usize = 16;

pub struct Seal(hmac::Key);

/// Why a value read from the ledger was refused (words for the log).
#[derive(Debug, PartialEq, Eq)]
pub enum Broken {
    TooShort,
    NotHex,
    /// The tag does not hold: written without the key, or for another name.
    Forged,
}

impl std::fmt::Display for Broken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Broken::TooShort => "shorter than its seal",
            Broken::NotHex => "its seal is not hexadecimal",
            Broken::Forged => {
                "its seal does not hold (written without this ledger's key_file, or moved)"
            }
        })
    }
}

impl Seal {
    pub fn new(key: &[u8]) -> Result<Seal, String> {
        if key.len() < MIN_KEY_BYTES {
            return Err(format!(
                "the key is {} bytes: at least {MIN_KEY_BYTES} (`head -c 32 /dev/urandom`)",
                key.len()
            ));
        }
        Ok(Seal(hmac::Key::new(hmac::HMAC_SHA256, key)))
    }

    /// What the tag covers: the name's length first, so that "ab"+"c…"
    /// never signs as "a"+"bc…".
    fn message(name: &str, json: &[u8]) -> Vec<u8> {
        let mut message = Vec::with_capacity(8 + name.len() + json.len());
        message.extend_from_slice(&(name.len() as u64).to_be_bytes());
        message.extend_from_slice(name.as_bytes());
        message.extend_from_slice(json);
        message
    }

    /// The value to store for entry `name` holding `json`.
    pub fn seal(&self, name: &str, json: &[u8]) -> Vec<u8> {
        let tag = hmac::sign(&self.0, &Seal::message(name, json));
        let mut out = Vec::with_capacity(TAG_HEX + json.len());
        for b in tag.as_ref() {
            out.extend_from_slice(format!("{b:02x}").as_bytes());
        }
        out.extend_from_slice(json);
        out
    }

    /// The JSON of a value stored for entry `name`, if its seal holds.
    pub fn open<'v>(&self, name: &str, value: &'v [u8]) -> Result<&'v [u8], Broken> {
        if value.len() < TAG_HEX {
            return Err(Broken::TooShort);
        }
        let (hex, json) = value.split_at(TAG_HEX);
        let mut tag = [0u8; TAG_HEX / 2];
        for (n, pair) in hex.chunks(2).enumerate() {
            let digit = |c: u8| (c as char).to_digit(16);
            match (digit(pair[0]), digit(pair[1])) {
                (Some(hi), Some(lo)) => tag[n] = (hi * 16 + lo) as u8,
                _ => return Err(Broken::NotHex),
            }
        }
        // Compared in constant time.
        hmac::verify(&self.0, &Seal::message(name, json), &tag).map_err(|_| Broken::Forged)?;
        Ok(json)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_value_opens_only_under_its_name_and_key() {
        let seal = Seal::new(b"0123456789abcdef0123").unwrap();
        let value = seal.seal("1-2-3.json", b"{\"a\":1}");
        assert_eq!(seal.open("1-2-3.json", &value), Ok(&b"{\"a\":1}"[..]));
        assert_eq!(seal.open("1-2-4.json", &value), Err(Broken::Forged));
        let other = Seal::new(b"another key of 16+ bytes").unwrap();
        assert_eq!(other.open("1-2-3.json", &value), Err(Broken::Forged));
        let mut changed = value.clone();
        *changed.last_mut().unwrap() = b'2';
        assert_eq!(seal.open("1-2-3.json", &changed), Err(Broken::Forged));
        assert_eq!(seal.open("x", b"short"), Err(Broken::TooShort));
        assert_eq!(seal.open("x", &[b'z'; 80]), Err(Broken::NotHex));
        assert!(Seal::new(b"short").is_err());
    }
}
