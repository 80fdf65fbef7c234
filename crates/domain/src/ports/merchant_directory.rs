//! The [`MerchantDirectory`] port: merchants and their credentials.

use async_trait::async_trait;

use crate::merchant::Merchant;
use crate::MerchantId;

use super::StoreError;

/// Merchants and their credentials.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait MerchantDirectory: Send + Sync {
    /// The merchant with this id, enabled or not; `Ok(None)` if unknown. Its secrets MUST be
    /// current (a rotation made by any process applies from the next call), revoked ones
    /// included; the rest may be up to 5 seconds old.
    async fn merchant(&self, id: &MerchantId) -> Result<Option<Merchant>, StoreError>;

    /// The merchants among `ids` that exist, enabled or not, each once and in any order;
    /// unknown ids are left out. Their secrets MUST be current as of the call, as for
    /// [`MerchantDirectory::merchant`]. One read for them all: the callback worker reads the
    /// merchants of a claimed batch with it instead of one read per callback.
    async fn merchants(&self, ids: &[MerchantId]) -> Result<Vec<Merchant>, StoreError>;
}
