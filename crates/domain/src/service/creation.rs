//! The creation service: what creating deposits and withdrawals runs on. Its use cases are
//! in `create` (admission, the sandbox) and `routing` (acquirers, one after another).

use std::sync::Arc;

use super::calls::Calls;
use super::core::Core;
use crate::ports::{IdGenerator, MerchantDirectory, QrEncoder, RouteTable, TariffStore};

/// Creating deposits and withdrawals, and routing them to their providers.
#[derive(Clone)]
pub struct Creation {
    pub(super) core: Arc<Core>,
    pub(super) calls: Arc<Calls>,
    /// The merchants' secrets, read again when a rotation keyed a stored request anew.
    pub(super) merchants: Arc<dyn MerchantDirectory>,
    pub(super) routes: Arc<dyn RouteTable>,
    /// The merchants' tariffs: the fee is fixed at creation.
    pub(super) tariffs: Arc<dyn TariffStore>,
    pub(super) ids: Arc<dyn IdGenerator>,
    /// Draws QR codes (an acquirer `sbp_qr` deposit shows one of its payment page).
    pub(super) qr: Arc<dyn QrEncoder>,
}
