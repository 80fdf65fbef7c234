//! The audit trail of the command line: every command that changes something writes who
//! (`cli:OSUSER`), what, when, and the changed thing before and after (never a secret).

use std::fmt::Display;
use std::sync::Arc;

use domain::console::{Actor, AuditEntry};
use domain::ports::{Clock, ConsoleStore};
use serde_json::Value;

use crate::system::SystemClock;

/// Writes the audit entries of one command run.
#[derive(Clone)]
pub struct Audit {
    store: Arc<dyn ConsoleStore>,
    actor: Actor,
}

impl Audit {
    /// The audit of the command line, as the operating-system user running it (`USER`, then
    /// `LOGNAME`, else `unknown`).
    pub fn cli(store: Arc<dyn ConsoleStore>) -> Audit {
        let user = std::env::var("USER")
            .or_else(|_| std::env::var("LOGNAME"))
            .unwrap_or_default();
        Audit {
            store,
            actor: Actor::cli(&user),
        }
    }

    pub fn actor(&self) -> &Actor {
        &self.actor
    }

    /// Records `action` on `target`. A change that was made but could not be audited is
    /// reported as an error (exit 1) so it is never silent.
    pub async fn record(
        &self,
        action: &str,
        target: impl Display,
        before: Option<Value>,
        after: Option<Value>,
    ) -> anyhow::Result<()> {
        let entry = AuditEntry {
            actor: self.actor.clone(),
            action: action.to_string(),
            target: target.to_string(),
            before: before.map(|v| v.to_string()),
            after: after.map(|v| v.to_string()),
            at: SystemClock.now(),
        };
        self.store.audit(&entry).await.map_err(|e| {
            anyhow::anyhow!("the change was made but its audit entry was not written: {e}")
        })
    }
}
