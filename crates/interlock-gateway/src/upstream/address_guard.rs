//! Where an HTTP upstream's name may lead (issue 38 item 7): a name that
//! resolves to this machine (loopback), to link-local addresses or to a cloud
//! metadata service is refused, unless the server's own URL is there (a URL
//! naming `127.0.0.1` or `localhost` was written to reach this machine). So a
//! DNS answer that changes after approval (rebinding) cannot turn an
//! approved remote server into a way to the gateway's own ports or the
//! cloud's credentials endpoint. Redirects are not followed at all
//! (`upstream::http`).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// A resolver that drops the addresses an upstream's name may not reach.
#[derive(Clone, Copy, Debug)]
pub(super) struct AddressGuard {
    /// The server's own URL names this machine or a link-local address.
    allow_local: bool,
}

impl AddressGuard {
    /// The guard for an upstream at `url`.
    pub(super) fn for_url(url: &reqwest::Url) -> AddressGuard {
        let allow_local = match url.host() {
            Some(url::Host::Ipv4(ip)) => local(IpAddr::V4(ip)),
            Some(url::Host::Ipv6(ip)) => local(IpAddr::V6(ip)),
            Some(url::Host::Domain(d)) => {
                let d = d.trim_end_matches('.').to_ascii_lowercase();
                d == "localhost" || d.ends_with(".localhost")
            }
            None => false,
        };
        AddressGuard { allow_local }
    }

    /// `addrs` without the ones this upstream may not reach; an error naming
    /// them when none is left.
    pub(super) fn keep(
        &self,
        name: &str,
        addrs: Vec<SocketAddr>,
    ) -> Result<Vec<SocketAddr>, String> {
        if self.allow_local {
            return Ok(addrs);
        }
        let (kept, refused): (Vec<SocketAddr>, Vec<SocketAddr>) =
            addrs.into_iter().partition(|a| !local(a.ip()));
        if kept.is_empty() && !refused.is_empty() {
            let list: Vec<String> = refused.iter().map(|a| a.ip().to_string()).collect();
            return Err(format!(
                "`{name}` resolves to {} (loopback, link-local or a cloud metadata address), which an upstream named by a host name may not reach; name the address in its URL to mean this machine",
                list.join(", ")
            ));
        }
        Ok(kept)
    }
}

/// Loopback, unspecified, link-local (which holds the cloud metadata
/// address 169.254.169.254), and the metadata addresses outside it.
fn local(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            v4.is_loopback()
                || v4.is_unspecified()
                || v4.is_link_local()
                // Alibaba Cloud's metadata service.
                || v4 == Ipv4Addr::new(100, 100, 100, 200)
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return local(IpAddr::V4(v4));
            }
            v6.is_loopback()
                || v6.is_unspecified()
                || (v6.segments()[0] & 0xffc0) == 0xfe80
                // AWS's IPv6 metadata service.
                || v6 == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254)
        }
    }
}

impl Resolve for AddressGuard {
    fn resolve(&self, name: Name) -> Resolving {
        let guard = *self;
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let kept = guard.keep(&host, addrs)?;
            Ok(Box::new(kept.into_iter()) as Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard(url: &str) -> AddressGuard {
        AddressGuard::for_url(&reqwest::Url::parse(url).unwrap())
    }

    fn addr(ip: &str) -> SocketAddr {
        SocketAddr::new(ip.parse().unwrap(), 0)
    }

    #[test]
    fn regression_issue_38_a_name_that_resolves_to_this_machine_or_the_metadata_service_is_refused()
    {
        let remote = guard("https://mcp.example.com/mcp");
        for ip in [
            "127.0.0.1",
            "127.8.9.1",
            "::1",
            "0.0.0.0",
            "169.254.169.254",
            "fe80::1",
            "fd00:ec2::254",
            "::ffff:127.0.0.1",
            "100.100.100.200",
        ] {
            let err = remote.keep("mcp.example.com", vec![addr(ip)]).unwrap_err();
            assert!(err.contains(ip.trim_start_matches("::ffff:")), "{err}");
        }
        // Public addresses pass, and a mixed answer keeps only those.
        assert_eq!(
            remote
                .keep(
                    "mcp.example.com",
                    vec![addr("127.0.0.1"), addr("93.184.216.34")]
                )
                .unwrap(),
            vec![addr("93.184.216.34")]
        );
        assert_eq!(
            remote
                .keep("mcp.example.com", vec![addr("10.1.2.3")])
                .unwrap(),
            vec![addr("10.1.2.3")]
        );
    }

    #[test]
    fn a_url_that_names_this_machine_may_reach_it() {
        for url in [
            "http://127.0.0.1:3001/mcp",
            "http://localhost:3001/mcp",
            "http://[::1]:3001/mcp",
            "http://169.254.169.254/latest",
        ] {
            assert!(
                guard(url).keep("x", vec![addr("127.0.0.1")]).is_ok(),
                "{url}"
            );
        }
    }

    #[tokio::test]
    async fn the_resolver_refuses_localhost_for_a_remote_upstream() {
        // A real lookup: `localhost.` resolves to loopback on every machine,
        // and is refused for an upstream whose URL names another host.
        let err = match guard("https://mcp.example.com/mcp")
            .resolve("localhost".parse::<Name>().unwrap())
            .await
        {
            Ok(_) => panic!("resolved"),
            Err(e) => e.to_string(),
        };
        assert!(err.contains("loopback"), "{err}");
    }
}
