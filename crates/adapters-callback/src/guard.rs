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

/// A block of addresses: its first address and prefix length (a CIDR block), and what it is.
struct Block<A> {
    net: A,
    prefix: u32,
    what: &'static str,
}

/// IPv4 blocks no callback goes to: every block of the IANA IPv4 Special-Purpose Address
/// Registry (globally reachable or not: none is a merchant's server), multicast and the
/// reserved 240/4 (which holds the limited broadcast address).
const REFUSED_V4: &[Block<Ipv4Addr>] = &[
    v4(0, 0, 0, 0, 8, "this network"),
    v4(10, 0, 0, 0, 8, "private use"),
    v4(100, 64, 0, 0, 10, "shared address space (CGNAT)"),
    v4(127, 0, 0, 0, 8, "loopback"),
    v4(169, 254, 0, 0, 16, "link-local"),
    v4(172, 16, 0, 0, 12, "private use"),
    v4(192, 0, 0, 0, 24, "IETF protocol assignments"),
    v4(192, 0, 2, 0, 24, "documentation (TEST-NET-1)"),
    v4(192, 31, 196, 0, 24, "AS112"),
    v4(192, 52, 193, 0, 24, "AMT"),
    v4(192, 88, 99, 0, 24, "6to4 relay anycast (deprecated)"),
    v4(192, 168, 0, 0, 16, "private use"),
    v4(192, 175, 48, 0, 24, "AS112 direct delegation"),
    v4(198, 18, 0, 0, 15, "benchmarking"),
    v4(198, 51, 100, 0, 24, "documentation (TEST-NET-2)"),
    v4(203, 0, 113, 0, 24, "documentation (TEST-NET-3)"),
    v4(224, 0, 0, 0, 4, "multicast"),
    v4(240, 0, 0, 0, 4, "reserved, limited broadcast"),
];

const fn v4(a: u8, b: u8, c: u8, d: u8, prefix: u32, what: &'static str) -> Block<Ipv4Addr> {
    Block {
        net: Ipv4Addr::new(a, b, c, d),
        prefix,
        what,
    }
}

/// Global unicast, `2000::/3`: the only IPv6 space IANA hands out for public addresses.
/// Everything outside it is refused, which covers the unspecified and loopback addresses,
/// IPv4-compatible `::/96`, `64:ff9b:1::/48` (local-use translation), `100::/64` (discard
/// only), `5f00::/16` (segment routing), `fc00::/7` (unique local), `fe80::/10` (link-local),
/// `fec0::/10` (site-local), `ff00::/8` (multicast) and every block still reserved by the
/// IETF. IPv4-mapped and NAT64 addresses are judged by the IPv4 address they carry first.
const GLOBAL_UNICAST: Block<Ipv6Addr> = v6([0x2000, 0, 0, 0], 3, "global unicast");

/// IPv6 blocks inside [`GLOBAL_UNICAST`] that no callback goes to: the special-purpose ones
/// of the IANA IPv6 Special-Purpose Address Registry that lie there.
const REFUSED_V6: &[Block<Ipv6Addr>] = &[
    // Teredo (2001::/32), PCP and TURN anycast, benchmarking (2001:2::/48), AMT, AS112,
    // ORCHID and the rest of the IETF's own assignments.
    v6([0x2001, 0, 0, 0], 23, "IETF protocol assignments, Teredo"),
    v6([0x2001, 0x0db8, 0, 0], 32, "documentation"),
    v6([0x2002, 0, 0, 0], 16, "6to4"),
    v6([0x2620, 0x004f, 0x8000, 0], 48, "AS112 direct delegation"),
    v6([0x3fff, 0, 0, 0], 20, "documentation"),
];

const fn v6(head: [u16; 4], prefix: u32, what: &'static str) -> Block<Ipv6Addr> {
    Block {
        net: Ipv6Addr::new(head[0], head[1], head[2], head[3], 0, 0, 0, 0),
        prefix,
        what,
    }
}

impl Block<Ipv4Addr> {
    fn contains(&self, ip: Ipv4Addr) -> bool {
        let mask = u32::MAX.checked_shl(32 - self.prefix).unwrap_or(0);
        u32::from(ip) & mask == u32::from(self.net)
    }
}

impl Block<Ipv6Addr> {
    fn contains(&self, ip: Ipv6Addr) -> bool {
        let mask = u128::MAX.checked_shl(128 - self.prefix).unwrap_or(0);
        u128::from(ip) & mask == u128::from(self.net)
    }
}

/// Whether `ip` is not an address a callback may go to: loopback, private, link-local, CGNAT,
/// documentation, benchmarking, 6to4 and Teredo, multicast, reserved, any other
/// special-purpose block, or an IPv6 form embedding such an IPv4 address.
pub fn is_forbidden(ip: IpAddr) -> bool {
    refusal(ip).is_some()
}

/// What a forbidden address is (the block it falls in); `None` for an allowed one.
fn refusal(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => refusal_v4(v4),
        IpAddr::V6(v6) => refusal_v6(v6),
    }
}

fn refusal_v4(ip: Ipv4Addr) -> Option<&'static str> {
    REFUSED_V4
        .iter()
        .find(|block| block.contains(ip))
        .map(|block| block.what)
}

fn refusal_v6(ip: Ipv6Addr) -> Option<&'static str> {
    if let Some(v4) = embedded_v4(ip) {
        return refusal_v4(v4);
    }
    if !GLOBAL_UNICAST.contains(ip) {
        return Some("not global unicast (reserved or special-purpose)");
    }
    REFUSED_V6
        .iter()
        .find(|block| block.contains(ip))
        .map(|block| block.what)
}

/// The IPv4 address carried by an IPv4-mapped (`::ffff:a.b.c.d`) or NAT64 (`64:ff9b::/96`,
/// the well-known prefix) address. Other forms that embed one (6to4, Teredo,
/// IPv4-compatible) are refused whatever they carry.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return Some(v4);
    }
    let s = ip.segments();
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        let [.., a, b, c, d] = ip.octets();
        return Some(Ipv4Addr::new(a, b, c, d));
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

    /// A refused block by its first and last address, and its neighbours just outside:
    /// `Some` where that neighbour is allowed, `None` where there is none or it falls in
    /// another refused block.
    struct Edges {
        block: &'static str,
        first: &'static str,
        last: &'static str,
        below: Option<&'static str>,
        above: Option<&'static str>,
    }

    const fn edges(
        block: &'static str,
        first: &'static str,
        last: &'static str,
        below: Option<&'static str>,
        above: Option<&'static str>,
    ) -> Edges {
        Edges {
            block,
            first,
            last,
            below,
            above,
        }
    }

    #[track_caller]
    fn check_edges(table: &[Edges]) {
        for e in table {
            assert!(forbidden(e.first), "{}: first {} refused", e.block, e.first);
            assert!(forbidden(e.last), "{}: last {} refused", e.block, e.last);
            for outside in [e.below, e.above].into_iter().flatten() {
                assert!(!forbidden(outside), "{}: {outside} allowed", e.block);
            }
        }
    }

    #[test]
    fn every_refused_ipv4_block_is_refused_from_its_first_to_its_last_address() {
        check_edges(&[
            edges(
                "0.0.0.0/8",
                "0.0.0.0",
                "0.255.255.255",
                None,
                Some("1.0.0.0"),
            ),
            edges(
                "10.0.0.0/8",
                "10.0.0.0",
                "10.255.255.255",
                Some("9.255.255.255"),
                Some("11.0.0.0"),
            ),
            edges(
                "100.64.0.0/10",
                "100.64.0.0",
                "100.127.255.255",
                Some("100.63.255.255"),
                Some("100.128.0.0"),
            ),
            edges(
                "127.0.0.0/8",
                "127.0.0.0",
                "127.255.255.255",
                Some("126.255.255.255"),
                Some("128.0.0.0"),
            ),
            edges(
                "169.254.0.0/16",
                "169.254.0.0",
                "169.254.255.255",
                Some("169.253.255.255"),
                Some("169.255.0.0"),
            ),
            edges(
                "172.16.0.0/12",
                "172.16.0.0",
                "172.31.255.255",
                Some("172.15.255.255"),
                Some("172.32.0.0"),
            ),
            edges(
                "192.0.0.0/24",
                "192.0.0.0",
                "192.0.0.255",
                Some("191.255.255.255"),
                Some("192.0.1.0"),
            ),
            edges(
                "192.0.2.0/24",
                "192.0.2.0",
                "192.0.2.255",
                Some("192.0.1.255"),
                Some("192.0.3.0"),
            ),
            edges(
                "192.31.196.0/24",
                "192.31.196.0",
                "192.31.196.255",
                Some("192.31.195.255"),
                Some("192.31.197.0"),
            ),
            edges(
                "192.52.193.0/24",
                "192.52.193.0",
                "192.52.193.255",
                Some("192.52.192.255"),
                Some("192.52.194.0"),
            ),
            edges(
                "192.88.99.0/24",
                "192.88.99.0",
                "192.88.99.255",
                Some("192.88.98.255"),
                Some("192.88.100.0"),
            ),
            edges(
                "192.168.0.0/16",
                "192.168.0.0",
                "192.168.255.255",
                Some("192.167.255.255"),
                Some("192.169.0.0"),
            ),
            edges(
                "192.175.48.0/24",
                "192.175.48.0",
                "192.175.48.255",
                Some("192.175.47.255"),
                Some("192.175.49.0"),
            ),
            edges(
                "198.18.0.0/15",
                "198.18.0.0",
                "198.19.255.255",
                Some("198.17.255.255"),
                Some("198.20.0.0"),
            ),
            edges(
                "198.51.100.0/24",
                "198.51.100.0",
                "198.51.100.255",
                Some("198.51.99.255"),
                Some("198.51.101.0"),
            ),
            edges(
                "203.0.113.0/24",
                "203.0.113.0",
                "203.0.113.255",
                Some("203.0.112.255"),
                Some("203.0.114.0"),
            ),
            // Just above multicast is 240/4, refused in its own right.
            edges(
                "224.0.0.0/4",
                "224.0.0.0",
                "239.255.255.255",
                Some("223.255.255.255"),
                None,
            ),
            edges("240.0.0.0/4", "240.0.0.0", "255.255.255.255", None, None),
        ]);
        assert!(forbidden("240.0.0.0") && forbidden("239.255.255.255"));
    }

    #[test]
    fn every_refused_ipv6_block_in_global_unicast_is_refused_from_its_first_to_its_last_address() {
        check_edges(&[
            edges(
                "2001::/23",
                "2001::",
                "2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff",
                Some("2000:ffff:ffff:ffff:ffff:ffff:ffff:ffff"),
                Some("2001:200::"),
            ),
            // Teredo lies inside 2001::/23: just above it is still refused (below).
            edges(
                "2001::/32",
                "2001::",
                "2001:0:ffff:ffff:ffff:ffff:ffff:ffff",
                Some("2000:ffff:ffff:ffff:ffff:ffff:ffff:ffff"),
                None,
            ),
            edges(
                "2001:db8::/32",
                "2001:db8::",
                "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff",
                Some("2001:db7:ffff:ffff:ffff:ffff:ffff:ffff"),
                Some("2001:db9::"),
            ),
            edges(
                "2002::/16",
                "2002::",
                "2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
                Some("2001:ffff:ffff:ffff:ffff:ffff:ffff:ffff"),
                Some("2003::"),
            ),
            edges(
                "2620:4f:8000::/48",
                "2620:4f:8000::",
                "2620:4f:8000:ffff:ffff:ffff:ffff:ffff",
                Some("2620:4f:7fff:ffff:ffff:ffff:ffff:ffff"),
                Some("2620:4f:8001::"),
            ),
            edges(
                "3fff::/20",
                "3fff::",
                "3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff",
                Some("3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff"),
                Some("3fff:1000::"),
            ),
        ]);
        assert!(
            forbidden("2001:1::"),
            "just above Teredo: an IETF assignment"
        );
    }

    #[test]
    fn ipv6_outside_global_unicast_is_refused_named_blocks_and_their_neighbours_alike() {
        // 2000::/3 itself: its first and last addresses are allowed, its neighbours not.
        for ip in ["2000::", "3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"] {
            assert!(!forbidden(ip), "{ip} must be allowed");
        }
        for ip in ["1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "4000::"] {
            assert!(forbidden(ip), "{ip} must be refused");
        }
        // Each named block outside it: first, last, and the addresses just outside (reserved
        // space, refused too).
        for (block, first, last, below, above) in [
            ("::/128", "::", "::", None, Some("::1")),
            ("::1/128", "::1", "::1", Some("::"), Some("::2")),
            (
                "64:ff9b:1::/48",
                "64:ff9b:1::",
                "64:ff9b:1:ffff:ffff:ffff:ffff:ffff",
                Some("64:ff9b:0:ffff:ffff:ffff:ffff:ffff"),
                Some("64:ff9b:2::"),
            ),
            (
                "100::/64",
                "100::",
                "100::ffff:ffff:ffff:ffff",
                Some("ff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"),
                Some("100:0:0:1::"),
            ),
            (
                "5f00::/16",
                "5f00::",
                "5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
                Some("5eff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"),
                Some("5f01::"),
            ),
            (
                "fc00::/7",
                "fc00::",
                "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
                Some("fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"),
                Some("fe00::"),
            ),
            (
                "fe80::/10",
                "fe80::",
                "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
                Some("fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff"),
                Some("fec0::"),
            ),
            (
                "fec0::/10",
                "fec0::",
                "feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
                Some("febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff"),
                Some("ff00::"),
            ),
            (
                "ff00::/8",
                "ff00::",
                "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
                Some("feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"),
                None,
            ),
        ] {
            for ip in [Some(first), Some(last), below, above]
                .into_iter()
                .flatten()
            {
                assert!(forbidden(ip), "{block}: {ip} must be refused");
            }
        }
    }

    #[test]
    fn allows_public_addresses() {
        for ip in [
            "8.8.8.8",
            "1.1.1.1",
            "93.184.216.34",
            "2001:4860:4860::8888",
            "2606:4700::1111",
            "2a00:1450:4001::200e",
        ] {
            assert!(!forbidden(ip), "{ip} must be allowed");
        }
    }

    #[test]
    fn ipv4_mapped_and_nat64_addresses_are_judged_by_the_ipv4_address_they_carry() {
        for ip in [
            "::ffff:127.0.0.1",
            "::ffff:10.1.2.3",
            "::ffff:169.254.169.254",
            "::ffff:192.168.0.1",
            "::ffff:100.64.0.1",
            "::ffff:203.0.113.7",
            "64:ff9b::10.0.0.1",
            "64:ff9b::192.0.2.1",
            "64:ff9b::240.0.0.1",
        ] {
            assert!(forbidden(ip), "{ip} must be refused");
        }
        for ip in ["::ffff:8.8.8.8", "64:ff9b::808:808", "64:ff9b::1.1.1.1"] {
            assert!(!forbidden(ip), "{ip} must be allowed");
        }
        // Just outside the NAT64 /96 and the mapped /96: reserved space.
        assert!(forbidden("64:ff9b::1:0:0:0"));
        assert!(forbidden("::fffe:808:808"));
        // Other forms that carry an IPv4 address are refused whatever they carry.
        for ip in [
            "::127.0.0.1",
            "::8.8.8.8",
            "2002:c0a8:0101::1",
            "2002:0808:0808::1",
            "2001:0:4136:e378:8000:63bf:3fff:fdd2",
        ] {
            assert!(forbidden(ip), "{ip} must be refused");
        }
    }

    #[test]
    fn a_refused_address_is_named_by_its_block() {
        let of = |text: &str| refusal(text.parse().expect("an IP address"));
        assert_eq!(of("100.64.0.1"), Some("shared address space (CGNAT)"));
        assert_eq!(of("2001::1"), Some("IETF protocol assignments, Teredo"));
        assert_eq!(
            of("fe80::1"),
            Some("not global unicast (reserved or special-purpose)")
        );
        assert_eq!(of("8.8.8.8"), None);
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
