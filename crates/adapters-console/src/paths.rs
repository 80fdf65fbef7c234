//! The console's own paths that more than one page links or redirects to.

use domain::{DisputeId, OperationId};

/// The overview, where a sign-in lands.
pub(crate) const OVERVIEW: &str = "/admin";

/// The sign-in form.
pub(crate) const LOGIN: &str = "/admin/login";

/// The operations list.
pub(crate) const OPERATIONS: &str = "/admin/operations";

/// The tariffs page.
pub(crate) const TARIFFS: &str = "/admin/tariffs";

/// The statements page.
pub(crate) const STATEMENTS: &str = "/admin/statements";

/// The disputes list.
pub(crate) const DISPUTES: &str = "/admin/disputes";

/// One dispute's page.
pub(crate) fn dispute_page(id: DisputeId) -> String {
    format!("{DISPUTES}/{id}")
}

/// One operation's page.
pub(crate) fn operation_page(id: OperationId) -> String {
    format!("{OPERATIONS}/{id}")
}
