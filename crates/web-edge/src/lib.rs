//! The HTTP edge shared by the web adapters (`adapters-http`, the merchant API and hosted
//! pages; `adapters-console`, the operator console), so that neither depends on the other:
//!
//! * [`edge`]: the middleware around every route of both listeners (request ids, tracing
//!   spans, request metrics, and the contract's JSON body on every framework error answer);
//! * [`metrics`]: the request metrics it records, and the API's operation counters;
//! * [`errors`]: the API contract's errors and their JSON body (docs/api.md), which the edge
//!   gives every framework error answer;
//! * [`lang`]: the languages of the pages and the console, chosen from `Accept-Language`;
//! * [`html`]: the headers every HTML answer carries.
//!
//! It depends on `domain` and actix-web only, never on an adapter.

pub mod edge;
pub mod errors;
pub mod html;
pub mod lang;
pub mod metrics;

pub use lang::{negotiate, Lang};
pub use metrics::Metrics;
