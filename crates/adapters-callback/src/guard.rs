//! The SSRF guard: callback targets on loopback, private or link-local addresses are refused
//! unless allowed (the callback rules of docs/api.md).
//!
//! Names are resolved by [`GuardedResolver`], which reqwest uses for every connection, so the
//! address checked is the address connected to. IP literals never reach a resolver, so
//! [`check_literal`] checks them before sending.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use reqwest::Url;

/// A target refused because it is, or resolves only to, a forbidden address.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("refused target: {host} resolves to a private address")]
pub struct RefusedTarget {
    /// The host as written in the URL.
    pub host: String,
}

/// Whether `ip` is not a public unicast address: loopback, private, link-local, CGNAT,
/// unspecified, broadcast, multicast, reserved, or an IPv6 form embedding such an IPv4 address.
pub fn is_forbidden(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_forbidden_v4(v4),
        IpAddr::V6(v6) => is_forbidden_v6(v6),
    }
}

fn is_forbidden_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    ip.is_unspecified()
        || a == 0 // "this network" 0.0.0.0/8
        || ip.is_loopback() // 127.0.0.0/8
        || ip.is_private() // 10/8, 172.16/12, 192.168/16
        || ip.is_link_local() // 169.254/16
        || (a == 100 && (b & 0xc0) == 64) // CGNAT 100.64/10
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments 192.0.0/24
        || (a == 198 && (b & 0xfe) == 18) // benchmarking 198.18/15
        || ip.is_broadcast()
        || ip.is_multicast() // 224/4
        || a >= 240 // reserved 240/4
}

fn is_forbidden_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = embedded_v4(ip) {
        return is_forbidden_v4(v4);
    }
    let first = ip.segments()[0];
    ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_multicast() // ff00::/8
        || (first & 0xfe00) == 0xfc00 // unique local fc00::/7
        || (first & 0xffc0) == 0xfe80 // link-local fe80::/10
        || (first & 0xffc0) == 0xfec0 // deprecated site-local fec0::/10
}

/// The IPv4 address carried by an IPv4-mapped (`::ffff:a.b.c.d`), IPv4-compatible
/// (`::a.b.c.d`), NAT64 (`64:ff9b::/96`) or 6to4 (`2002::/16`) address.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return Some(v4);
    }
    let s = ip.segments();
    let tail = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    if s[..6] == [0, 0, 0, 0, 0, 0] && !ip.is_unspecified() && !ip.is_loopback() {
        return Some(tail);
    }
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return Some(tail);
    }
    if s[0] == 0x2002 {
        return Some(Ipv4Addr::new(
            (s[1] >> 8) as u8,
            s[1] as u8,
            (s[2] >> 8) as u8,
            s[2] as u8,
        ));
    }
    None
}

/// Refuses a URL whose host is a forbidden IP literal (names are left to [`GuardedResolver`]).
pub fn check_literal(url: &Url, allow_private: bool) -> Result<(), RefusedTarget> {
    if allow_private {
        return Ok(());
    }
    let ip = match url.host() {
        Some(url::Host::Ipv4(v4)) => IpAddr::V4(v4),
        Some(url::Host::Ipv6(v6)) => IpAddr::V6(v6),
        // The URL parser normalises numeric hosts, but a name that still reads as an address is
        // one hyper would connect to without resolving it.
        Some(url::Host::Domain(name)) => match name.parse::<IpAddr>() {
            Ok(ip) => ip,
            Err(_) => return Ok(()),
        },
        None => return Ok(()),
    };
    if is_forbidden(ip) {
        Err(RefusedTarget {
            host: url.host_str().unwrap_or_default().to_string(),
        })
    } else {
        Ok(())
    }
}

/// A reqwest resolver that drops forbidden addresses and fails when none is left.
#[derive(Debug, Clone, Copy)]
pub struct GuardedResolver {
    /// Whether forbidden addresses are let through (tests and local demos).
    pub allow_private: bool,
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let allow_private = self.allow_private;
        let host = name.as_str().to_string();
        Box::pin(async move {
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let allowed: Vec<SocketAddr> = found
                .into_iter()
                .filter(|addr| allow_private || !is_forbidden(addr.ip()))
                .collect();
            if allowed.is_empty() {
                return Err(Box::new(RefusedTarget { host }) as _);
            }
            Ok(Box::new(allowed.into_iter()) as Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn forbidden(text: &str) -> bool {
        is_forbidden(text.parse().expect("an IP address"))
    }

    #[test]
    fn refuses_loopback_private_and_link_local_ipv4() {
        for ip in [
            "127.0.0.1",
            "127.255.0.9",
            "10.0.0.1",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "100.127.255.255",
            "0.0.0.0",
            "0.1.2.3",
            "255.255.255.255",
            "224.0.0.1",
            "240.0.0.1",
            "198.18.0.1",
            "192.0.0.8",
        ] {
            assert!(forbidden(ip), "{ip} must be refused");
        }
    }

    #[test]
    fn allows_public_ipv4() {
        for ip in [
            "8.8.8.8",
            "1.1.1.1",
            "172.15.255.255",
            "172.32.0.1",
            "100.63.255.255",
            "100.128.0.1",
            "169.253.0.1",
            "93.184.216.34",
        ] {
            assert!(!forbidden(ip), "{ip} must be allowed");
        }
    }

    #[test]
    fn refuses_loopback_ula_link_local_and_multicast_ipv6() {
        for ip in [
            "::1",
            "::",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "febf::1",
            "fec0::1",
            "ff02::1",
        ] {
            assert!(forbidden(ip), "{ip} must be refused");
        }
        for ip in ["2001:4860:4860::8888", "2606:4700::1111", "fe00::1"] {
            assert!(!forbidden(ip), "{ip} must be allowed");
        }
    }

    #[test]
    fn refuses_ipv6_forms_of_forbidden_ipv4() {
        for ip in [
            "::ffff:127.0.0.1",
            "::ffff:10.1.2.3",
            "::ffff:169.254.169.254",
            "::ffff:192.168.0.1",
            "::127.0.0.1",
            "64:ff9b::10.0.0.1",
            "2002:c0a8:0101::1",
            "2002:7f00:0001::1",
        ] {
            assert!(forbidden(ip), "{ip} must be refused");
        }
        for ip in ["::ffff:8.8.8.8", "64:ff9b::808:808", "2002:0808:0808::1"] {
            assert!(!forbidden(ip), "{ip} must be allowed");
        }
    }

    #[test]
    fn checks_ip_literal_hosts_only_when_private_is_not_allowed() {
        let url = |s: &str| Url::parse(s).expect("a URL");
        for target in [
            "http://127.0.0.1:8080/cb",
            "http://[::1]/cb",
            "http://[::ffff:127.0.0.1]/cb",
            "http://2130706433/cb",
            "http://0x7f.1/cb",
            "https://10.0.0.1/cb",
        ] {
            let refused = check_literal(&url(target), false);
            assert!(refused.is_err(), "{target} must be refused");
            assert!(check_literal(&url(target), true).is_ok());
        }
        assert!(check_literal(&url("https://8.8.8.8/cb"), false).is_ok());
        assert!(check_literal(&url("https://merchant.example/cb"), false).is_ok());
    }

    #[test]
    fn refusal_message_names_the_host() {
        let err = RefusedTarget {
            host: "localhost".into(),
        };
        assert_eq!(
            err.to_string(),
            "refused target: localhost resolves to a private address"
        );
    }

    #[tokio::test]
    async fn resolver_refuses_names_of_loopback_addresses() {
        let name: Name = "localhost".parse().expect("a name");
        let refused = GuardedResolver {
            allow_private: false,
        }
        .resolve(name)
        .await;
        let err = refused.err().expect("localhost must be refused");
        assert!(err.downcast_ref::<RefusedTarget>().is_some());

        let name: Name = "localhost".parse().expect("a name");
        let allowed = GuardedResolver {
            allow_private: true,
        }
        .resolve(name)
        .await
        .expect("allowed when private targets are");
        assert!(allowed.into_iter().all(|a| a.ip().is_loopback()));
    }
}
