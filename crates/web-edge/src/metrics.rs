//! Prometheus metrics of the HTTP edge, registered in a registry the app may share.

use std::time::Duration;

use domain::operation::Operation;
use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounterVec, Opts, Registry, TextEncoder,
};

/// The route label of a request that matched no route (bounds the label's cardinality).
pub const UNMATCHED_ROUTE: &str = "unmatched";

/// Request counters, the latency histogram and operation counters.
#[derive(Clone)]
pub struct Metrics {
    registry: Registry,
    requests: IntCounterVec,
    duration: HistogramVec,
    created: IntCounterVec,
}

impl Metrics {
    /// Registers the HTTP metrics in `registry`; fails if names are already taken there.
    pub fn new(registry: Registry) -> Result<Self, prometheus::Error> {
        let requests = IntCounterVec::new(
            Opts::new(
                "http_requests_total",
                "HTTP requests by route, method and status",
            ),
            &["route", "method", "status"],
        )?;
        let duration = HistogramVec::new(
            HistogramOpts::new(
                "http_request_duration_seconds",
                "HTTP request latency by route and method",
            )
            .buckets(vec![
                0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
            ]),
            &["route", "method"],
        )?;
        let created = IntCounterVec::new(
            Opts::new(
                "operations_created_total",
                "Operations created by direction, payment method and status at creation",
            ),
            &["direction", "method", "status"],
        )?;
        registry.register(Box::new(requests.clone()))?;
        registry.register(Box::new(duration.clone()))?;
        registry.register(Box::new(created.clone()))?;
        Ok(Self {
            registry,
            requests,
            duration,
            created,
        })
    }

    /// The registry these metrics live in (other components may register theirs there too).
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// Counts one finished request and observes its latency.
    pub fn observe_request(&self, route: &str, method: &str, status: &str, elapsed: Duration) {
        self.requests
            .with_label_values(&[route, method, status])
            .inc();
        self.duration
            .with_label_values(&[route, method])
            .observe(elapsed.as_secs_f64());
    }

    /// Counts a newly created (not replayed) operation.
    pub fn operation_created(&self, operation: &Operation) {
        self.created
            .with_label_values(&[
                operation.direction().as_str(),
                operation.method().as_str(),
                operation.status().name(),
            ])
            .inc();
    }

    /// Everything in the registry, in the Prometheus text format.
    pub fn render(&self) -> Result<String, prometheus::Error> {
        let mut out = Vec::with_capacity(8 * 1024);
        TextEncoder::new().encode(&self.registry.gather(), &mut out)?;
        String::from_utf8(out).map_err(|e| prometheus::Error::Msg(e.to_string()))
    }
}

/// The method label: one of the standard methods, else `other` (bounds cardinality).
pub fn method_label(method: &actix_web::http::Method) -> &'static str {
    use actix_web::http::Method;
    match *method {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        Method::PATCH => "PATCH",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        _ => "other",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_request_metrics_by_route_pattern() {
        let metrics = Metrics::new(Registry::new()).expect("fresh registry");
        metrics.observe_request(
            "/api/v1/deposits/{id}",
            "GET",
            "200",
            Duration::from_millis(3),
        );
        let text = metrics.render().expect("text");
        assert!(text.contains(
            r#"http_requests_total{method="GET",route="/api/v1/deposits/{id}",status="200"} 1"#
        ));
        assert!(text.contains("http_request_duration_seconds_bucket"));
    }

    #[test]
    fn registering_twice_in_one_registry_fails() {
        let registry = Registry::new();
        assert!(Metrics::new(registry.clone()).is_ok());
        assert!(Metrics::new(registry).is_err());
    }
}
