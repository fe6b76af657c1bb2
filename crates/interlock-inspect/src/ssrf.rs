//! Host parsing for SSRF: `std::net` for the standard notations, plus the legacy
//! `inet_aton` forms (`2130706433`, `0x7f000001`, `0177.0.0.1`, `127.1`).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why a host is internal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostClass {
    Public,
    Loopback,
    Private,
    LinkLocal,
    Unspecified,
    Metadata,
}

impl HostClass {
    pub fn is_internal(self) -> bool {
        self != HostClass::Public
    }

    pub(crate) fn rule(self) -> &'static str {
        match self {
            HostClass::Public => "public",
            HostClass::Loopback => "ssrf-loopback",
            HostClass::Private => "ssrf-private",
            HostClass::LinkLocal => "ssrf-link-local",
            HostClass::Unspecified => "ssrf-unspecified",
            HostClass::Metadata => "ssrf-cloud-metadata",
        }
    }
}

const METADATA_NAMES: &[&str] = &[
    "metadata.google.internal",
    "metadata",
    "instance-data",
    "instance-data.ec2.internal",
    "metadata.azure.internal",
];

/// Classifies a URL host (no port, no userinfo; IPv6 may keep its brackets).
pub fn classify_host(host: &str) -> HostClass {
    let mut h = host.trim().trim_end_matches('.').to_ascii_lowercase();
    if h.contains('%') {
        h = crate::args::percent_decode(&h);
    }
    if let Some(inner) = h.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        let inner = inner.split('%').next().unwrap_or(inner);
        return match inner.parse::<Ipv6Addr>() {
            Ok(ip) => classify_ip(IpAddr::V6(ip)),
            Err(_) => HostClass::Public,
        };
    }
    if let Ok(ip) = h.parse::<Ipv6Addr>() {
        return classify_ip(IpAddr::V6(ip));
    }
    if h == "localhost"
        || h.ends_with(".localhost")
        || h == "localhost.localdomain"
        || h == "ip6-localhost"
        || h == "ip6-loopback"
    {
        return HostClass::Loopback;
    }
    if METADATA_NAMES.contains(&h.as_str()) {
        return HostClass::Metadata;
    }
    if let Some(ip) = parse_legacy_ipv4(&h) {
        return classify_ip(IpAddr::V4(ip));
    }
    // Wildcard DNS services that resolve to the IP embedded in the name.
    for suffix in [".nip.io", ".sslip.io", ".xip.io"] {
        if let Some(prefix) = h.strip_suffix(suffix) {
            let tail: Vec<&str> = prefix.rsplit(['.', '-']).take(4).collect();
            if tail.len() == 4 {
                let dotted = format!("{}.{}.{}.{}", tail[3], tail[2], tail[1], tail[0]);
                if let Ok(ip) = dotted.parse::<Ipv4Addr>() {
                    return classify_ip(IpAddr::V4(ip));
                }
            }
        }
    }
    HostClass::Public
}

fn classify_ip(ip: IpAddr) -> HostClass {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return classify_v4(v4);
            }
            let seg = v6.segments();
            if v6.is_loopback() {
                return HostClass::Loopback;
            }
            if v6.is_unspecified() {
                return HostClass::Unspecified;
            }
            // IPv4-compatible (deprecated) `::a.b.c.d`, and NAT64 `64:ff9b::a.b.c.d`.
            if seg[..6] == [0; 6] || seg[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
                let v4 = Ipv4Addr::new(
                    (seg[6] >> 8) as u8,
                    seg[6] as u8,
                    (seg[7] >> 8) as u8,
                    seg[7] as u8,
                );
                return classify_v4(v4);
            }
            if seg[0] == 0x2002 {
                let v4 = Ipv4Addr::new(
                    (seg[1] >> 8) as u8,
                    seg[1] as u8,
                    (seg[2] >> 8) as u8,
                    seg[2] as u8,
                );
                return classify_v4(v4);
            }
            if seg[0] & 0xfe00 == 0xfc00 {
                return HostClass::Private;
            }
            if seg[0] & 0xffc0 == 0xfe80 {
                return HostClass::LinkLocal;
            }
            if v6 == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254) {
                return HostClass::Metadata;
            }
            HostClass::Public
        }
    }
}

fn classify_v4(ip: Ipv4Addr) -> HostClass {
    let o = ip.octets();
    if o == [169, 254, 169, 254] || o == [100, 100, 100, 200] || o == [168, 63, 129, 16] {
        return HostClass::Metadata;
    }
    if ip.is_loopback() {
        HostClass::Loopback
    } else if o[0] == 0 {
        HostClass::Unspecified
    } else if ip.is_private() || (o[0] == 100 && (o[1] & 0xc0) == 64) {
        HostClass::Private
    } else if ip.is_link_local() {
        HostClass::LinkLocal
    } else {
        HostClass::Public
    }
}

/// `inet_aton`: 1–4 dot-separated parts, each decimal, `0x` hex or `0` octal; the
/// last part fills the remaining bytes.
pub(crate) fn parse_legacy_ipv4(h: &str) -> Option<Ipv4Addr> {
    if h.is_empty() || h.len() > 40 {
        return None;
    }
    let parts: Vec<&str> = h.split('.').collect();
    if parts.len() > 4 {
        return None;
    }
    let mut nums = Vec::with_capacity(4);
    for p in &parts {
        nums.push(parse_part(p)?);
    }
    let (last, init) = nums.split_last()?;
    let mut value: u64 = 0;
    for (i, n) in init.iter().enumerate() {
        if *n > 255 {
            return None;
        }
        value |= n << (8 * (3 - i));
    }
    let rest_bits = 8 * (4 - init.len());
    if rest_bits < 64 && *last >= (1u64 << rest_bits) {
        return None;
    }
    value |= last;
    u32::try_from(value).ok().map(Ipv4Addr::from)
}

fn parse_part(p: &str) -> Option<u64> {
    if p.is_empty() || p.len() > 12 {
        return None;
    }
    if let Some(hex) = p.strip_prefix("0x") {
        if hex.is_empty() {
            return Some(0);
        }
        return u64::from_str_radix(hex, 16).ok();
    }
    if p.len() > 1 && p.starts_with('0') {
        return u64::from_str_radix(&p[1..], 8).ok();
    }
    if p.bytes().all(|b| b.is_ascii_digit()) {
        p.parse().ok()
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notations() {
        for h in [
            "127.0.0.1",
            "localhost",
            "[::1]",
            "0.0.0.0",
            "2130706433",
            "0x7f000001",
            "0177.0.0.1",
            "127.1",
            "169.254.169.254",
            "metadata.google.internal",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "[fc00::1]",
            "[fe80::1%25eth0]",
            "[::ffff:127.0.0.1]",
            "[::ffff:7f00:1]",
            "127.0.0.1.nip.io",
        ] {
            assert!(classify_host(h).is_internal(), "{h}");
        }
        for h in [
            "example.com",
            "8.8.8.8",
            "172.32.0.1",
            "[2001:db8::1]",
            "localhost.example.com",
        ] {
            assert!(!classify_host(h).is_internal(), "{h}");
        }
    }
}
