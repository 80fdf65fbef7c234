//! Which of a merchant's secrets check a stored request fingerprint: creation and refunds
//! both recognise a replay by it.

use crate::merchant::{KeyRing, Merchant};
use crate::ports::{MerchantDirectory, StoreError};
use crate::signature::Fingerprint;
use crate::Direction;

/// The secrets a stored fingerprint is checked with.
pub(super) struct KeyCheck(KeyRing);

impl KeyCheck {
    /// The merchant's secrets of `direction` that can check `stored`: those the request was
    /// authenticated with, or, when a rotation committed since and keyed `stored` with a newer
    /// version, the merchant's secrets read again from `merchants`.
    pub(super) async fn of(
        merchants: &dyn MerchantDirectory,
        merchant: &Merchant,
        direction: Direction,
        stored: &Fingerprint,
    ) -> Result<Self, StoreError> {
        let keys = merchant.keys(direction);
        if keys.version(stored.key_version()).is_some() {
            return Ok(KeyCheck(keys.clone()));
        }
        let fresh = merchants.merchant(&merchant.id).await?;
        Ok(KeyCheck(match fresh {
            Some(fresh) => fresh.keys(direction).clone(),
            None => keys.clone(),
        }))
    }

    pub(super) fn matches(&self, stored: &Fingerprint, canonical: &[u8]) -> bool {
        stored.matches(&self.0, canonical)
    }
}
