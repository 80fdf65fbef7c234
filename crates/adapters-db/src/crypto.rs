//! Secrets at rest: AES-256-GCM under the master key (`GATEWAY_MASTER_KEY`).
//!
//! A sealed value is stored as `enc:v1:` and the lowercase hex of a fresh 12-byte nonce
//! followed by the ciphertext and its tag. The associated data names the value's place (its
//! table, row and column), so a sealed value copied to another row does not open there. A
//! stored value without the `enc:` prefix is clear text: a database not yet converted by
//! `gateway secrets encrypt`.

use std::fmt;

use aes_gcm::aead::{Aead, AeadCore, KeyInit, OsRng, Payload};
use aes_gcm::{Aes256Gcm, Key, Nonce};
use anyhow::{anyhow, bail};

/// What every sealed value starts with; a clear value never does.
pub(crate) const SEALED: &str = "enc:";

/// The one format written: [`SEALED`] and its version.
const SEALED_V1: &str = "enc:v1:";

/// Bytes of an AES-GCM nonce.
const NONCE_LEN: usize = 12;

/// Why reading a sealed value without the master key fails.
pub(crate) const NO_KEY: &str =
    "this database's secrets are encrypted: set GATEWAY_MASTER_KEY to its key";

/// The key that seals merchant secrets and provider credentials: 32 bytes given as 64 hex
/// characters. `Debug` never prints it.
#[derive(Clone)]
pub struct MasterKey(Aes256Gcm);

/// Why a `GATEWAY_MASTER_KEY` value is refused. The message never repeats the value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MasterKeyError {
    #[error("GATEWAY_MASTER_KEY must be 64 hexadecimal characters (32 bytes), not {0} characters")]
    Length(usize),
    #[error("GATEWAY_MASTER_KEY must be 64 hexadecimal characters (0-9, a-f, A-F) and holds another character")]
    NotHex,
}

impl MasterKey {
    /// The key from exactly 64 hex characters, either case (nothing trimmed).
    pub fn parse(text: &str) -> Result<MasterKey, MasterKeyError> {
        let length = text.chars().count();
        if length != 64 {
            return Err(MasterKeyError::Length(length));
        }
        let mut bytes = [0u8; 32];
        hex::decode_to_slice(text, &mut bytes).map_err(|_| MasterKeyError::NotHex)?;
        Ok(MasterKey(Aes256Gcm::new(Key::<Aes256Gcm>::from_slice(
            &bytes,
        ))))
    }

    /// `clear` sealed for `place` under a fresh random nonce.
    pub(crate) fn seal(&self, place: &Place<'_>, clear: &str) -> anyhow::Result<String> {
        let nonce = Aes256Gcm::generate_nonce(&mut OsRng);
        let aad = place.to_string();
        let sealed = self
            .0
            .encrypt(
                &nonce,
                Payload {
                    msg: clear.as_bytes(),
                    aad: aad.as_bytes(),
                },
            )
            .map_err(|_| anyhow!("cannot encrypt the secret of {place}"))?;
        let mut out = String::with_capacity(SEALED_V1.len() + 2 * (NONCE_LEN + sealed.len()));
        out.push_str(SEALED_V1);
        out.push_str(&hex::encode(nonce));
        out.push_str(&hex::encode(sealed));
        Ok(out)
    }

    /// The clear text of `stored`, a value [`MasterKey::seal`] made for `place`.
    pub(crate) fn open(&self, place: &Place<'_>, stored: &str) -> anyhow::Result<String> {
        let Some(body) = stored.strip_prefix(SEALED_V1) else {
            bail!("the secret of {place} is sealed in an unknown format");
        };
        let refused = || {
            anyhow!(
                "GATEWAY_MASTER_KEY does not decrypt the secret of {place} \
                 (a different key, or a value copied from another row?)"
            )
        };
        let bytes = hex::decode(body).map_err(|_| refused())?;
        if bytes.len() < NONCE_LEN {
            return Err(refused());
        }
        let (nonce, sealed) = bytes.split_at(NONCE_LEN);
        let aad = place.to_string();
        let clear = self
            .0
            .decrypt(
                Nonce::from_slice(nonce),
                Payload {
                    msg: sealed,
                    aad: aad.as_bytes(),
                },
            )
            .map_err(|_| refused())?;
        String::from_utf8(clear).map_err(|_| refused())
    }
}

impl fmt::Debug for MasterKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("MasterKey(**redacted**)")
    }
}

/// Where a secret is stored: its associated data, so that it opens nowhere else.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Place<'a> {
    /// `merchant_keys.secret` of one merchant, direction and version.
    MerchantKey {
        merchant: &'a str,
        direction: &'a str,
        version: i32,
    },
    /// A credential column (`api_key`, `webhook_secret`) of one provider.
    Provider { name: &'a str, column: &'static str },
    /// The `master_key_check` row of `gateway_settings`.
    KeyCheck,
}

impl fmt::Display for Place<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Place::MerchantKey {
                merchant,
                direction,
                version,
            } => write!(f, "merchant_keys:{merchant}:{direction}:{version}"),
            Place::Provider { name, column } => write!(f, "providers:{name}:{column}"),
            Place::KeyCheck => f.write_str("gateway_settings:master_key_check"),
        }
    }
}

/// Whether a stored value is sealed (else it is clear text).
pub(crate) fn is_sealed(stored: &str) -> bool {
    stored.starts_with(SEALED)
}

/// Secrets on their way in and out of the database: sealed with the master key when there is
/// one, written as given when there is none; sealed values opened, clear ones read as they are.
#[derive(Debug, Clone, Default)]
pub(crate) struct Vault {
    key: Option<MasterKey>,
}

impl Vault {
    pub(crate) fn new(key: Option<MasterKey>) -> Self {
        Self { key }
    }

    pub(crate) fn key(&self) -> Option<&MasterKey> {
        self.key.as_ref()
    }

    /// The stored form of `clear` at `place`. Without a key, a value that would read back as
    /// sealed is refused.
    pub(crate) fn store(&self, place: &Place<'_>, clear: &str) -> anyhow::Result<String> {
        match &self.key {
            Some(key) => key.seal(place, clear),
            None if is_sealed(clear) => bail!(
                "the secret of {place} starts with {SEALED:?} and is stored only encrypted: \
                 set GATEWAY_MASTER_KEY"
            ),
            None => Ok(clear.to_string()),
        }
    }

    /// The clear text of `stored` at `place`.
    pub(crate) fn read(&self, place: &Place<'_>, stored: &str) -> anyhow::Result<String> {
        match &self.key {
            _ if !is_sealed(stored) => Ok(stored.to_string()),
            Some(key) => key.open(place, stored),
            None => bail!(NO_KEY),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

    fn key() -> MasterKey {
        MasterKey::parse(KEY).expect("a valid key")
    }

    fn deposit(version: i32) -> Place<'static> {
        Place::MerchantKey {
            merchant: "m-1",
            direction: "deposit",
            version,
        }
    }

    #[test]
    fn a_sealed_value_opens_at_its_place_only() {
        let key = key();
        let sealed = key.seal(&deposit(1), "s3cret").expect("seal");
        assert!(sealed.starts_with("enc:v1:"), "{sealed}");
        assert!(!sealed.contains("s3cret"));
        assert_eq!(key.open(&deposit(1), &sealed).expect("open"), "s3cret");
        for elsewhere in [
            deposit(2),
            Place::MerchantKey {
                merchant: "m-2",
                direction: "deposit",
                version: 1,
            },
            Place::Provider {
                name: "m-1",
                column: "api_key",
            },
            Place::KeyCheck,
        ] {
            let refused = key.open(&elsewhere, &sealed).expect_err("moved");
            assert!(
                refused.to_string().contains("GATEWAY_MASTER_KEY"),
                "{refused}"
            );
        }
    }

    #[test]
    fn every_seal_takes_a_fresh_nonce() {
        let key = key();
        let (a, b) = (
            key.seal(&deposit(1), "same").expect("seal"),
            key.seal(&deposit(1), "same").expect("seal"),
        );
        assert_ne!(a, b);
        assert_ne!(a[7..31], b[7..31], "the nonces differ");
        assert_eq!(key.open(&deposit(1), &b).expect("open"), "same");
    }

    #[test]
    fn another_key_or_a_changed_byte_does_not_open() {
        let sealed = key().seal(&deposit(1), "s3cret").expect("seal");
        let other = MasterKey::parse(&"ab".repeat(32)).expect("key");
        assert!(other.open(&deposit(1), &sealed).is_err());
        let mut changed = sealed.clone().into_bytes();
        let last = changed.len() - 1;
        changed[last] = if changed[last] == b'0' { b'1' } else { b'0' };
        let changed = String::from_utf8(changed).expect("hex");
        assert!(key().open(&deposit(1), &changed).is_err());
        assert!(key().open(&deposit(1), "enc:v1:zz").is_err());
        assert!(key().open(&deposit(1), "enc:v9:00").is_err());
    }

    #[test]
    fn the_vault_seals_with_a_key_and_passes_clear_values_without() {
        let keyed = Vault::new(Some(key()));
        let sealed = keyed.store(&deposit(1), "s3cret").expect("store");
        assert!(is_sealed(&sealed));
        assert_eq!(keyed.read(&deposit(1), &sealed).expect("read"), "s3cret");
        assert_eq!(keyed.read(&deposit(1), "clear").expect("read"), "clear");

        let clear = Vault::default();
        assert_eq!(clear.store(&deposit(1), "s3cret").expect("store"), "s3cret");
        let refused = clear.read(&deposit(1), &sealed).expect_err("no key");
        assert_eq!(refused.to_string(), NO_KEY);
        assert!(clear.store(&deposit(1), "enc:looks-sealed").is_err());
    }

    #[test]
    fn the_key_never_prints() {
        assert_eq!(format!("{:?}", key()), "MasterKey(**redacted**)");
    }
}
