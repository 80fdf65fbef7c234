//! Use-case tests against mockall mocks of the ports.
