//! HTTP adapter: the signed JSON API, hosted payment pages, health and metrics on actix-web.
