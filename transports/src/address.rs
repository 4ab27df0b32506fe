//! `dt_socket` addresses: the `address=` forms the JDK's socket transport accepts.
//!
//! | form              | listening on                              | attaching to            |
//! |-------------------|-------------------------------------------|-------------------------|
//! | `8000`, `:8000`   | loopback only (127.0.0.1)                 | 127.0.0.1, then ::1     |
//! | `*:8000`          | all interfaces (`[::]` dual-stack, else 0.0.0.0) | this host (as above) |
//! | `host:8000`       | the host's first address (IPv4 preferred) | each address in turn, IPv4 first |
//! | `1.2.3.4:8000`    | that address                              | that address            |
//! | `[::1]:8000`      | that IPv6 address (brackets optional, as `::1:8000`, since the port is after the last colon) | that address |
//!
//! The port is the text after the last colon: decimal digits only, at most 65535. Port 0 asks the
//! system for a free port when listening (the listener reports the one it got) and is an error
//! when attaching.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV6};
use std::str::FromStr;

/// Why an address string is invalid, or its host did not resolve.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AddressError {
    /// The address is the empty string.
    #[error("the address is empty; expected `port`, `host:port` or `*:port`")]
    Empty,
    /// The port part is missing, not decimal digits, or out of range.
    #[error("invalid port {port:?} in address {address:?}: expected a decimal number from 0 to 65535")]
    InvalidPort {
        /// The whole address as given.
        address: String,
        /// The text taken as the port.
        port: String,
    },
    /// A host in brackets is not an IP address.
    #[error("invalid host {host:?} in address {address:?}: brackets must hold an IP address, as in [::1]:8000")]
    InvalidHost {
        /// The whole address as given.
        address: String,
        /// The host text, brackets included.
        host: String,
    },
    /// Port 0 means "any free port", which only makes sense when listening.
    #[error("cannot attach to port 0 (address {address:?}); port 0 is only meaningful when listening")]
    AttachToPortZero {
        /// The address as given or formatted.
        address: String,
    },
    /// Name resolution failed or gave no address.
    #[error("cannot resolve host {host:?}: {reason}")]
    Resolve {
        /// The host name.
        host: String,
        /// The resolver's message, or "no addresses".
        reason: String,
    },
}

/// The host part of a `dt_socket` address.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Host {
    /// No host given (`8000` or `:8000`): the loopback interface.
    Loopback,
    /// `*`: every interface when listening.
    AllInterfaces,
    /// A literal IPv4 or IPv6 address.
    Ip(IpAddr),
    /// A host name, resolved when listening or attaching (`localhost` among them).
    Name(String),
}

/// A parsed `dt_socket` address.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SocketAddress {
    /// Where to listen or what to attach to.
    pub host: Host,
    /// The TCP port; 0 means "any free port" when listening.
    pub port: u16,
    /// The IPv6 scope (zone) of a link-local address, `fe80::1%eth0` or `fe80::1%2` (the
    /// interface index); 0 for none.
    pub scope_id: u32,
}

impl SocketAddress {
    /// Parses an address in any of the forms in the [module docs](self).
    pub fn parse(address: &str) -> Result<SocketAddress, AddressError> {
        if address.is_empty() {
            return Err(AddressError::Empty);
        }
        let (host, port) = match address.rsplit_once(':') {
            Some((host, port)) => (host, port),
            None => ("", address),
        };
        let invalid_port = || AddressError::InvalidPort { address: address.to_owned(), port: port.to_owned() };
        // Digits only (no sign, no spaces), checked before the value so huge inputs cannot overflow.
        if port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()) {
            return Err(invalid_port());
        }
        let port = port.trim_start_matches('0');
        let port: u16 = if port.is_empty() { 0 } else { port.parse().map_err(|_| invalid_port())? };

        let host = if host.is_empty() {
            Host::Loopback
        } else if host == "*" {
            Host::AllInterfaces
        } else if let Some(inner) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
            let (ip, scope) = parse_scoped_ip(inner)
                .ok_or_else(|| AddressError::InvalidHost { address: address.to_owned(), host: host.to_owned() })?;
            return Ok(SocketAddress { host: Host::Ip(ip), port, scope_id: scope });
        } else if let Some((ip, scope)) = parse_scoped_ip(host) {
            return Ok(SocketAddress { host: Host::Ip(ip), port, scope_id: scope });
        } else {
            Host::Name(host.to_owned())
        };
        Ok(SocketAddress { host, port, scope_id: 0 })
    }

    /// The same host with another port (e.g. the port a listener actually got).
    pub fn with_port(&self, port: u16) -> SocketAddress {
        SocketAddress { host: self.host.clone(), port, scope_id: self.scope_id }
    }

    /// The socket address of `ip` (this address's host) at `port`, with this address's scope.
    pub fn ip_socket_addr(&self, ip: IpAddr, port: u16) -> SocketAddr {
        match ip {
            IpAddr::V6(v6) if self.scope_id != 0 => SocketAddr::V6(SocketAddrV6::new(v6, port, 0, self.scope_id)),
            ip => SocketAddr::new(ip, port),
        }
    }

    /// Candidate addresses to connect to, in the order to try them, for hosts that need no
    /// resolver; `None` for a name.
    pub(crate) fn attach_candidates_without_lookup(&self) -> Option<Vec<SocketAddr>> {
        match &self.host {
            Host::Loopback | Host::AllInterfaces => Some(vec![
                SocketAddr::new(Ipv4Addr::LOCALHOST.into(), self.port),
                SocketAddr::new(Ipv6Addr::LOCALHOST.into(), self.port),
            ]),
            Host::Ip(ip) => Some(vec![self.ip_socket_addr(*ip, self.port)]),
            Host::Name(_) => None,
        }
    }

    /// Checks that this address can be attached to.
    pub(crate) fn check_attachable(&self) -> Result<(), AddressError> {
        if self.port == 0 {
            return Err(AddressError::AttachToPortZero { address: self.to_string() });
        }
        Ok(())
    }
}

/// An IP address, IPv6 ones optionally with a scope (`fe80::1%eth0`, `fe80::1%2`), as the JDK's
/// socket transport takes them; the scope as an interface index (0: none). `None` if not an IP
/// address, or if the interface does not exist.
fn parse_scoped_ip(text: &str) -> Option<(IpAddr, u32)> {
    let Some((ip, scope)) = text.split_once('%') else {
        return text.parse::<IpAddr>().ok().map(|ip| (ip, 0));
    };
    let ip = ip.parse::<Ipv6Addr>().ok()?;
    let index = if !scope.is_empty() && scope.bytes().all(|b| b.is_ascii_digit()) {
        scope.parse::<u32>().ok()?
    } else {
        let name = std::ffi::CString::new(scope).ok()?;
        // SAFETY: a NUL-terminated string that outlives the call.
        unsafe { libc::if_nametoindex(name.as_ptr()) }
    };
    (index != 0).then_some((IpAddr::V6(ip), index))
}

/// Orders resolved addresses IPv4 first (the JDK's default preference), keeping resolver order
/// otherwise and dropping duplicates; an empty result is an error.
pub(crate) fn prefer_ipv4(
    host: &str,
    addrs: impl IntoIterator<Item = SocketAddr>,
) -> Result<Vec<SocketAddr>, AddressError> {
    let mut all: Vec<SocketAddr> = Vec::new();
    for a in addrs {
        if !all.contains(&a) {
            all.push(a);
        }
    }
    all.sort_by_key(|a| a.is_ipv6()); // stable: resolver order within each family
    if all.is_empty() {
        return Err(AddressError::Resolve { host: host.to_owned(), reason: "no addresses".to_owned() });
    }
    Ok(all)
}

impl FromStr for SocketAddress {
    type Err = AddressError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        SocketAddress::parse(s)
    }
}

/// Formats back into the `address=` syntax: `8000`, `*:8000`, `host:8000`, `1.2.3.4:8000`,
/// `[::1]:8000`.
impl fmt::Display for SocketAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.host {
            Host::Loopback => write!(f, "{}", self.port),
            Host::AllInterfaces => write!(f, "*:{}", self.port),
            Host::Ip(IpAddr::V4(ip)) => write!(f, "{ip}:{}", self.port),
            Host::Ip(IpAddr::V6(ip)) if self.scope_id != 0 => write!(f, "[{ip}%{}]:{}", self.scope_id, self.port),
            Host::Ip(IpAddr::V6(ip)) => write!(f, "[{ip}]:{}", self.port),
            Host::Name(name) => write!(f, "{name}:{}", self.port),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(s: &str) -> (Host, u16) {
        let a = SocketAddress::parse(s).unwrap_or_else(|e| panic!("{s:?}: {e}"));
        (a.host, a.port)
    }

    /// JdwpAttachTest and JdwpListenTest use every local address, link-local IPv6 ones with
    /// their scope, by index and by interface name, bracketed or not.
    #[test]
    fn ipv6_scopes_by_index_or_interface_name() {
        let a = SocketAddress::parse("fe80:0:0:0:fc:ff:fe00:1%4:8000").unwrap();
        assert_eq!((a.host.clone(), a.port, a.scope_id), (Host::Ip("fe80::fc:ff:fe00:1".parse().unwrap()), 8000, 4));
        assert_eq!(a.to_string(), "[fe80::fc:ff:fe00:1%4]:8000");
        let SocketAddr::V6(v6) = a.ip_socket_addr("fe80::fc:ff:fe00:1".parse().unwrap(), 8000) else { panic!() };
        assert_eq!(v6.scope_id(), 4);
        let b = SocketAddress::parse("[fe80::1%4]:0").unwrap();
        assert_eq!((b.port, b.scope_id), (0, 4));
        // The loopback interface exists everywhere this runs; its index comes from the system.
        let lo = SocketAddress::parse("[::1%lo]:8000").unwrap();
        assert_ne!(lo.scope_id, 0);
        assert_eq!(SocketAddress::parse("::1%lo:8000").unwrap().scope_id, lo.scope_id);
        // No such interface, or a scope on IPv4: not an IP address.
        assert!(matches!(SocketAddress::parse("[fe80::1%nosuchif0]:1"), Err(AddressError::InvalidHost { .. })));
        assert!(matches!(SocketAddress::parse("[127.0.0.1%1]:1"), Err(AddressError::InvalidHost { .. })));
        assert_eq!(SocketAddress::parse("127.0.0.1:1").unwrap().scope_id, 0);
    }

    #[test]
    fn accepted_forms() {
        let v4 = |a, b, c, d| Host::Ip(IpAddr::V4(Ipv4Addr::new(a, b, c, d)));
        let table: &[(&str, Host, u16)] = &[
            ("8000", Host::Loopback, 8000),
            (":8000", Host::Loopback, 8000),
            ("0", Host::Loopback, 0),
            ("65535", Host::Loopback, 65535),
            ("008000", Host::Loopback, 8000),
            ("00000000000000000000000001", Host::Loopback, 1),
            ("localhost:8000", Host::Name("localhost".into()), 8000),
            ("debughost.example:5005", Host::Name("debughost.example".into()), 5005),
            ("*:8000", Host::AllInterfaces, 8000),
            ("*:0", Host::AllInterfaces, 0),
            ("127.0.0.1:8000", v4(127, 0, 0, 1), 8000),
            ("0.0.0.0:1", v4(0, 0, 0, 0), 1),
            ("[::1]:8000", Host::Ip(Ipv6Addr::LOCALHOST.into()), 8000),
            ("[::]:0", Host::Ip(Ipv6Addr::UNSPECIFIED.into()), 0),
            ("::1:8000", Host::Ip(Ipv6Addr::LOCALHOST.into()), 8000),
            ("[fe80::1]:9", Host::Ip("fe80::1".parse().unwrap()), 9),
            ("[127.0.0.1]:9", v4(127, 0, 0, 1), 9),
        ];
        for (input, host, port) in table {
            assert_eq!(ok(input), (host.clone(), *port), "{input:?}");
        }
    }

    #[test]
    fn rejected_forms() {
        let table: &[(&str, &str)] = &[
            ("", "the address is empty"),
            ("65536", "invalid port \"65536\""),
            ("99999999999999999999999", "invalid port"),
            ("host:", "invalid port \"\""),
            (":", "invalid port \"\""),
            ("*", "invalid port \"*\""),
            ("localhost", "invalid port \"localhost\""),
            ("host:port", "invalid port \"port\""),
            ("host:80a", "invalid port \"80a\""),
            ("host:+80", "invalid port \"+80\""),
            ("host:-1", "invalid port \"-1\""),
            (" 8000", "invalid port \" 8000\""),
            ("8000 ", "invalid port \"8000 \""),
            ("[::1]", "invalid port \"1]\""),
            ("[::1]:", "invalid port \"\""),
            ("[nothost]:80", "invalid host \"[nothost]\""),
            ("[]:80", "invalid host \"[]\""),
        ];
        for (input, message) in table {
            let err = SocketAddress::parse(input).expect_err(input);
            assert!(err.to_string().contains(message), "{input:?}: {err}");
        }
    }

    #[test]
    fn display_round_trips() {
        for s in ["8000", "*:0", "localhost:1", "10.0.0.1:22", "[::1]:8000", "[fe80::1]:9"] {
            let a = SocketAddress::parse(s).unwrap();
            assert_eq!(a.to_string(), s);
            assert_eq!(a.to_string().parse::<SocketAddress>().unwrap(), a);
        }
        assert_eq!(SocketAddress::parse(":8000").unwrap().to_string(), "8000");
        assert_eq!(SocketAddress::parse("::1:8000").unwrap().to_string(), "[::1]:8000");
        assert_eq!(SocketAddress::parse("*:0").unwrap().with_port(41000).to_string(), "*:41000");
    }

    #[test]
    fn attach_rejects_port_zero() {
        let err = SocketAddress::parse("localhost:0").unwrap().check_attachable().unwrap_err();
        assert!(err.to_string().contains("cannot attach to port 0"), "{err}");
    }

    #[test]
    fn ipv4_preferred_in_resolution_order() {
        let a: SocketAddr = "[::1]:5".parse().unwrap();
        let b: SocketAddr = "127.0.0.1:5".parse().unwrap();
        let c: SocketAddr = "10.0.0.1:5".parse().unwrap();
        assert_eq!(prefer_ipv4("h", [a, b, a, c]).unwrap(), vec![b, c, a]);
        assert!(prefer_ipv4("h", []).is_err());
    }
}
