//! The sandbox payment provider: a test-mode bank with scripted outcomes and QR codes.
