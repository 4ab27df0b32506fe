//! The `allow=` option: which peers a listening agent accepts (`*`, or `ip[/bits]` joined by `+`).
//!
//! An open JDWP port is remote code execution, so an agent told to listen on all interfaces can be
//! limited to known addresses. A peer outside the list is disconnected as soon as it has connected,
//! before any command is served; it is logged, and the agent goes on listening.

use std::net::IpAddr;

/// A parsed `allow=` value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AllowList {
    /// `*` or no option: anyone who can reach the port.
    Anyone,
    /// Only peers inside one of these networks.
    Networks(Vec<(IpAddr, u8)>),
}

impl AllowList {
    /// Parses the option's value; the error names the part that is wrong.
    pub fn parse(value: Option<&str>) -> Result<AllowList, String> {
        let Some(value) = value else { return Ok(AllowList::Anyone) };
        if value == "*" {
            return Ok(AllowList::Anyone);
        }
        let mut networks = Vec::new();
        for item in value.split('+') {
            let (addr, bits) = match item.split_once('/') {
                Some((addr, bits)) => (addr, Some(bits)),
                None => (item, None),
            };
            let ip: IpAddr = addr.parse().map_err(|_| format!("invalid IP address in allow option: {item:?}"))?;
            let max = if ip.is_ipv4() { 32 } else { 128 };
            let bits = match bits {
                None => max,
                Some(b) => b
                    .parse::<u8>()
                    .ok()
                    .filter(|b| (1..=max).contains(b))
                    .ok_or_else(|| format!("invalid prefix length in allow option: {item:?}"))?,
            };
            networks.push((ip, bits));
        }
        Ok(AllowList::Networks(networks))
    }

    /// Whether a peer at `peer` may debug this VM. IPv4 peers also match IPv4-mapped IPv6 entries
    /// and the reverse, since a dual-stack listener sees IPv4 peers as mapped addresses.
    pub fn allows(&self, peer: IpAddr) -> bool {
        match self {
            AllowList::Anyone => true,
            AllowList::Networks(networks) => networks.iter().any(|&(net, bits)| in_network(peer, net, bits)),
        }
    }
}

fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(ip),
        v4 => v4,
    }
}

fn in_network(peer: IpAddr, net: IpAddr, bits: u8) -> bool {
    match (canonical(peer), canonical(net)) {
        (IpAddr::V4(p), IpAddr::V4(n)) => {
            let bits = bits.min(32);
            let mask = if bits == 0 { 0 } else { u32::MAX << (32 - u32::from(bits)) };
            u32::from(p) & mask == u32::from(n) & mask
        }
        (IpAddr::V6(p), IpAddr::V6(n)) => {
            let bits = bits.min(128);
            let mask = if bits == 0 { 0 } else { u128::MAX << (128 - u32::from(bits)) };
            u128::from(p) & mask == u128::from(n) & mask
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn star_or_nothing_allows_anyone() {
        assert_eq!(AllowList::parse(None).unwrap(), AllowList::Anyone);
        assert!(AllowList::parse(Some("*")).unwrap().allows(ip("203.0.113.9")));
    }

    #[test]
    fn networks_and_single_addresses_match_as_written() {
        let list = AllowList::parse(Some("10.0.0.0/8+127.0.0.1+::1")).unwrap();
        assert!(list.allows(ip("10.20.30.40")));
        assert!(list.allows(ip("127.0.0.1")));
        assert!(list.allows(ip("::1")));
        assert!(list.allows(ip("::ffff:10.1.2.3")), "an IPv4 peer seen by a dual-stack listener");
        assert!(!list.allows(ip("127.0.0.2")));
        assert!(!list.allows(ip("11.0.0.1")));
        assert!(!list.allows(ip("fe80::1")));
    }

    #[test]
    fn bad_values_are_refused_with_the_offending_part() {
        assert!(AllowList::parse(Some("10.0.0.0/33")).unwrap_err().contains("10.0.0.0/33"));
        assert!(AllowList::parse(Some("host.example")).unwrap_err().contains("host.example"));
        assert!(AllowList::parse(Some("10.0.0.1+")).is_err());
    }
}
