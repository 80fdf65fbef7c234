//! The composition root of the use cases: one construction over the [`Ports`] builds the
//! shared core, the provider calls and this process's state once, and every service on them.

use std::sync::Arc;

use super::answers::Answers;
use super::callback_log::Callbacks;
use super::calls::Calls;
use super::core::Core;
use super::creation::Creation;
use super::dispute::Disputes;
use super::page_reads::PageReads;
use super::read::Reads;
use super::recent::Recent;
use super::refund::Refunds;
use super::statements::Statements;
use super::steps::Steps;
use super::{AcquirerSettings, Ports};
use crate::circuit::{Circuit, Circuits};
use crate::ports::{Clock, MerchantDirectory};

/// This process's memory, one of each per construction, shared by every service built on it.
#[derive(Clone, Default)]
struct Process {
    /// Circuit breakers, one per acquirer.
    circuits: Circuits,
    /// The latest non-final payment status applied to each acquirer operation.
    recent: Recent,
    /// Payment-page reads of acquirers, at most one per operation at a time.
    page_reads: PageReads,
}

/// What the services are built from.
#[derive(Clone)]
struct Parts {
    ports: Ports,
    settings: AcquirerSettings,
    /// Whether the built-in sandbox is in service (`GATEWAY_SANDBOX`).
    sandbox: bool,
    process: Process,
}

/// The gateway's use cases, as services over the ports; each holds only what it uses.
#[derive(Clone)]
pub struct Gateway {
    parts: Parts,
    creation: Creation,
    reads: Reads,
    answers: Answers,
    refunds: Refunds,
    disputes: Disputes,
    steps: Steps,
    statements: Statements,
    callbacks: Callbacks,
}

impl Gateway {
    pub fn new(ports: Ports) -> Self {
        Self::built(Parts {
            ports,
            settings: AcquirerSettings::default(),
            sandbox: true,
            process: Process::default(),
        })
    }

    /// Works with acquirers under these settings.
    pub fn with_acquirer_settings(self, settings: AcquirerSettings) -> Self {
        Self::built(Parts {
            settings,
            ..self.parts
        })
    }

    /// Takes the built-in sandbox out of service: no new operations are routed to it and its
    /// deposits take no user steps. Operations it already has (payouts settling) still finish.
    pub fn without_sandbox(self) -> Self {
        Self::built(Parts {
            sandbox: false,
            ..self.parts
        })
    }

    /// The services over `parts`, all on its one process state.
    fn built(parts: Parts) -> Self {
        let ports = &parts.ports;
        let core = Arc::new(Core {
            store: Arc::clone(&ports.store),
            refunds: Arc::clone(&ports.refunds),
            disputes: Arc::clone(&ports.disputes),
            ids: Arc::clone(&ports.ids),
            clock: Arc::clone(&ports.clock),
            callback_format: Arc::clone(&ports.callback_format),
            recent: parts.process.recent.clone(),
            reconcile_after: parts.settings.reconcile_after,
        });
        let calls = Arc::new(Calls {
            provider: Arc::clone(&ports.provider),
            providers: Arc::clone(&ports.providers),
            acquirer: Arc::clone(&ports.acquirer),
            settings: parts.settings.clone(),
            sandbox: parts.sandbox,
            circuits: parts.process.circuits.clone(),
            clock: Arc::clone(&ports.clock),
        });
        Self {
            creation: Creation {
                core: Arc::clone(&core),
                calls: Arc::clone(&calls),
                merchants: Arc::clone(&ports.merchants),
                routes: Arc::clone(&ports.routes),
                tariffs: Arc::clone(&ports.tariffs),
                ids: Arc::clone(&ports.ids),
                qr: Arc::clone(&ports.qr),
            },
            refunds: Refunds {
                core: Arc::clone(&core),
                calls: Arc::clone(&calls),
                merchants: Arc::clone(&ports.merchants),
                tariffs: Arc::clone(&ports.tariffs),
                ids: Arc::clone(&ports.ids),
            },
            disputes: Disputes {
                core: Arc::clone(&core),
                calls: Arc::clone(&calls),
                store: Arc::clone(&ports.disputes),
                ids: Arc::clone(&ports.ids),
            },
            steps: Steps {
                core: Arc::clone(&core),
                calls: Arc::clone(&calls),
                page_reads: parts.process.page_reads.clone(),
            },
            reads: Reads {
                core: Arc::clone(&core),
            },
            answers: Answers { core, calls },
            statements: Statements::new(Arc::clone(&ports.ledger)),
            callbacks: Callbacks {
                log: Arc::clone(&ports.callbacks),
                clock: Arc::clone(&ports.clock),
            },
            parts,
        }
    }

    /// Creating deposits and withdrawals.
    pub fn creation(&self) -> &Creation {
        &self.creation
    }

    /// Reading operations, balances and refunds.
    pub fn reads(&self) -> &Reads {
        &self.reads
    }

    /// Providers' answers (notifications, the sandbox's completions) and the sweeps and
    /// reconciler that find out what was not answered.
    pub fn answers(&self) -> &Answers {
        &self.answers
    }

    /// Refunds and cancels.
    pub fn refunds(&self) -> &Refunds {
        &self.refunds
    }

    /// Appeals and chargebacks of deposits.
    pub fn disputes(&self) -> &Disputes {
        &self.disputes
    }

    /// The user's steps on a waiting deposit, and the acquirer deposits' payment pages.
    pub fn steps(&self) -> &Steps {
        &self.steps
    }

    /// The merchants' balance transactions and statements.
    pub fn statements(&self) -> &Statements {
        &self.statements
    }

    /// The merchants' callbacks: read, sent again, replayed.
    pub fn callbacks(&self) -> &Callbacks {
        &self.callbacks
    }

    /// The merchant directory, for authentication at the edge.
    pub fn merchants(&self) -> &dyn MerchantDirectory {
        self.parts.ports.merchants.as_ref()
    }

    /// This process's circuits, one per acquirer it has called, as they stand now.
    pub fn circuits(&self) -> Vec<Circuit> {
        self.parts
            .process
            .circuits
            .snapshot(self.parts.ports.clock.now())
    }

    /// The clock the services run on.
    pub fn clock(&self) -> &dyn Clock {
        self.parts.ports.clock.as_ref()
    }
}
