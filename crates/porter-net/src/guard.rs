//! The private-address guard: which addresses a fetch on the model's behalf
//! must never reach, because they lead into the operator's own network, the
//! machine itself or a cloud's metadata service.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// `is_private` says whether `ip` is an address porter refuses to connect to
/// unless the operator lists the host: anything that is not an ordinary
/// public unicast address.
///
/// It covers, for IPv4: `0.0.0.0/8`, loopback `127/8`, RFC 1918 (`10/8`,
/// `172.16/12`, `192.168/16`), CGNAT `100.64/10`, link-local `169.254/16`
/// (which holds the cloud metadata address `169.254.169.254`), the IETF
/// protocol block `192.0.0/24`, the documentation and benchmark ranges
/// (`192.0.2/24`, `198.51.100/24`, `203.0.113/24`, `198.18/15`), the old
/// 6to4 relay `192.88.99/24`, multicast `224/4` and the reserved `240/4`
/// with broadcast. For IPv6: `::` and `::1`, unique local `fc00::/7`,
/// link-local `fe80::/10`, the old site-local `fec0::/10`, multicast
/// `ff00::/8`, discard `100::/64`, documentation `2001:db8::/32`, local-use
/// NAT64 `64:ff9b:1::/48`; and every form that carries an IPv4 address
/// inside (mapped `::ffff:a.b.c.d`, compatible `::a.b.c.d`, NAT64
/// `64:ff9b::a.b.c.d`, 6to4 `2002:aabb:ccdd::`) is judged by that IPv4
/// address, because the connection may end up there.
#[must_use]
pub fn is_private(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_private_v4(v4),
        IpAddr::V6(v6) => is_private_v6(v6),
    }
}

fn is_private_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    a == 0
        || a == 10
        || a == 127
        || (a == 100 && (64..128).contains(&b))
        || (a == 169 && b == 254)
        || (a == 172 && (16..32).contains(&b))
        || (a == 192 && b == 168)
        || (a == 192 && b == 0 && c == 0)
        || (a == 192 && b == 0 && c == 2)
        || (a == 192 && b == 88 && c == 99)
        || (a == 198 && (b == 18 || b == 19))
        || (a == 198 && b == 51 && c == 100)
        || (a == 203 && b == 0 && c == 113)
        || a >= 224
}

fn is_private_v6(ip: Ipv6Addr) -> bool {
    let s = ip.segments();
    if let Some(v4) = ip.to_ipv4_mapped() {
        return is_private_v4(v4);
    }
    // `::a.b.c.d` (deprecated "compatible" form) holds `::` and `::1` too:
    // they embed 0.0.0.0 and 0.0.0.1, both in 0.0.0.0/8.
    if s[..6] == [0; 6] {
        return is_private_v4(embedded_v4(s[6], s[7]));
    }
    // NAT64 well-known prefix 64:ff9b::/96.
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return is_private_v4(embedded_v4(s[6], s[7]));
    }
    // 6to4 2002::/16 carries the IPv4 address in the next 32 bits.
    if s[0] == 0x2002 {
        return is_private_v4(embedded_v4(s[1], s[2]));
    }
    (s[0] & 0xfe00) == 0xfc00
        || (s[0] & 0xffc0) == 0xfe80
        || (s[0] & 0xffc0) == 0xfec0
        || (s[0] & 0xff00) == 0xff00
        || s[..4] == [0x100, 0, 0, 0]
        || (s[0] == 0x2001 && s[1] == 0x0db8)
        || (s[0] == 0x64 && s[1] == 0xff9b && s[2] == 1)
}

fn embedded_v4(high: u16, low: u16) -> Ipv4Addr {
    let [a, b] = high.to_be_bytes();
    let [c, d] = low.to_be_bytes();
    Ipv4Addr::new(a, b, c, d)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        /// Every address the standard library itself calls special is
        /// refused: the guard's list is a superset of std's.
        #[test]
        fn what_std_calls_special_is_private(v4 in any::<u32>(), v6 in any::<u128>()) {
            let v4 = Ipv4Addr::from(v4);
            let special_v4 = v4.is_private()
                || v4.is_loopback()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_documentation()
                || v4.is_multicast();
            prop_assert!(!special_v4 || is_private(IpAddr::V4(v4)), "{v4}");
            let v6 = Ipv6Addr::from(v6);
            let special_v6 = v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || v6.is_unique_local()
                || v6.is_unicast_link_local();
            prop_assert!(!special_v6 || is_private(IpAddr::V6(v6)), "{v6}");
        }

        /// An IPv4 address is judged the same in every IPv6 form that
        /// carries it (mapped, compatible, NAT64, 6to4).
        #[test]
        fn an_ipv4_address_is_judged_alike_in_every_ipv6_form(
            v4 in any::<u32>(),
            host in any::<u64>(),
        ) {
            let inside = Ipv4Addr::from(v4);
            let verdict = is_private(IpAddr::V4(inside));
            let [high, low] = [(v4 >> 16) as u16, v4 as u16];
            let [h0, h1, h2, h3] = [(host >> 48) as u16, (host >> 32) as u16, (host >> 16) as u16, host as u16];
            let forms = [
                inside.to_ipv6_mapped(),
                Ipv6Addr::new(0, 0, 0, 0, 0, 0, high, low),
                Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, high, low),
                Ipv6Addr::new(0x2002, high, low, 0, h0, h1, h2, h3),
            ];
            for form in forms {
                prop_assert_eq!(is_private(IpAddr::V6(form)), verdict, "{} in {}", inside, form);
            }
        }
    }

    const PRIVATE: &[&str] = &[
        "0.0.0.0",
        "0.1.2.3",
        "10.0.0.1",
        "10.255.255.255",
        "100.64.0.1",
        "100.127.255.254",
        "127.0.0.1",
        "127.0.0.2",
        "127.255.255.255",
        "169.254.0.1",
        "169.254.169.254",
        "172.16.0.1",
        "172.31.255.255",
        "192.0.0.8",
        "192.0.2.10",
        "192.88.99.1",
        "192.168.0.1",
        "192.168.255.255",
        "198.18.0.1",
        "198.19.255.255",
        "198.51.100.7",
        "203.0.113.9",
        "224.0.0.1",
        "239.255.255.250",
        "240.0.0.1",
        "255.255.255.255",
        "::",
        "::1",
        "::ffff:127.0.0.1",
        "::ffff:10.0.0.1",
        "::ffff:169.254.169.254",
        "::127.0.0.1",
        "::10.0.0.1",
        "64:ff9b::a00:1",
        "64:ff9b::7f00:1",
        "64:ff9b::a9fe:a9fe",
        "64:ff9b:1::1",
        "2002:7f00:1::1",
        "2002:c0a8:101::1",
        "fc00::1",
        "fd12:3456:789a::1",
        "fe80::1",
        "febf::1",
        "fec0::1",
        "ff02::1",
        "ff0e::1",
        "100::1",
        "2001:db8::1",
    ];

    const PUBLIC: &[&str] = &[
        "8.8.8.8",
        "1.1.1.1",
        "9.255.255.255",
        "11.0.0.1",
        "100.63.255.255",
        "100.128.0.1",
        "126.255.255.255",
        "128.0.0.1",
        "169.253.255.255",
        "169.255.0.1",
        "172.15.255.255",
        "172.32.0.1",
        "192.167.255.255",
        "192.169.0.1",
        "198.17.255.255",
        "198.20.0.1",
        "223.255.255.255",
        "::ffff:8.8.8.8",
        "64:ff9b::808:808",
        "2002:808:808::1",
        "2001:4860:4860::8888",
        "2606:4700:4700::1111",
        "2a00:1450:4001::1",
    ];

    #[test]
    fn every_private_range_is_refused_including_embedded_ipv4_forms() {
        for text in PRIVATE {
            let ip: IpAddr = text.parse().expect("the table holds addresses");
            assert!(is_private(ip), "{text} should be private");
        }
    }

    #[test]
    fn ordinary_public_addresses_pass_the_guard() {
        for text in PUBLIC {
            let ip: IpAddr = text.parse().expect("the table holds addresses");
            assert!(!is_private(ip), "{text} should be public");
        }
    }
}
