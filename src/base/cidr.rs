//! An IPv4 or IPv6 prefix: the one reading of `10.0.0.0/8` for the box's address space
//! (`boundary::policy::netpool`) and the egress proxy's `no_proxy` (`wire::egress`). A bare
//! address is a host prefix (/32, /128).

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr {
    v6: bool,
    addr: u128,
    len: u8,
}

impl Cidr {
    /// `addr/len` or a bare address; `None` for anything else (a length past the family's).
    pub fn parse(s: &str) -> Option<Cidr> {
        let s = s.trim();
        let (a, len) = match s.split_once('/') {
            Some((a, l)) => (a, Some(l.parse::<u8>().ok()?)),
            None => (s, None),
        };
        let ip: IpAddr = a.parse().ok()?;
        let c = Cidr::host(ip);
        let len = len.unwrap_or(c.len);
        // host bits stay as written: a refusal quotes the prefix the operator wrote
        (len <= c.len).then_some(Cidr { len, ..c })
    }

    pub fn host(ip: IpAddr) -> Cidr {
        match ip {
            IpAddr::V4(a) => Cidr {
                v6: false,
                addr: u32::from(a) as u128,
                len: 32,
            },
            IpAddr::V6(a) => Cidr {
                v6: true,
                addr: u128::from(a),
                len: 128,
            },
        }
    }

    /// The prefix of `len` bits of `addr` (host bits cleared), as the kernel's route tables
    /// give them; `len` is capped at the family's width.
    pub fn from_bits(v6: bool, addr: u128, len: u8) -> Cidr {
        let len = len.min(if v6 { 128 } else { 32 });
        Cidr {
            v6,
            addr: addr & Cidr::mask(len, v6),
            len,
        }
    }

    pub fn is_v6(&self) -> bool {
        self.v6
    }

    pub fn prefix_len(&self) -> u8 {
        self.len
    }

    fn mask(len: u8, v6: bool) -> u128 {
        let bits = if v6 { 128 } else { 32 };
        if len == 0 {
            0
        } else {
            (u128::MAX << (bits - len as u32)) & if v6 { u128::MAX } else { u32::MAX as u128 }
        }
    }

    /// Every address of `o` is inside `self`.
    pub fn contains(&self, o: &Cidr) -> bool {
        let m = Cidr::mask(self.len, self.v6);
        self.v6 == o.v6 && o.len >= self.len && (o.addr & m) == (self.addr & m)
    }

    /// `ip` is inside `self`; an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) counts as its
    /// IPv4 address, as a dual-stack socket reports it.
    pub fn contains_ip(&self, ip: IpAddr) -> bool {
        let ip = match ip {
            IpAddr::V6(a) if !self.v6 => match a.to_ipv4_mapped() {
                Some(v4) => IpAddr::V4(v4),
                None => return false,
            },
            other => other,
        };
        self.contains(&Cidr::host(ip))
    }

    /// The two share at least one address.
    pub fn overlaps(&self, o: &Cidr) -> bool {
        self.contains(o) || o.contains(self)
    }
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let a: IpAddr = if self.v6 {
            Ipv6Addr::from(self.addr).into()
        } else {
            Ipv4Addr::from(self.addr as u32).into()
        };
        write!(f, "{a}/{}", self.len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(s: &str) -> Cidr {
        Cidr::parse(s).unwrap()
    }

    #[test]
    fn prefixes_parse_contain_and_overlap_in_both_families() {
        assert_eq!(c("10.1.2.3/8").to_string(), "10.1.2.3/8");
        assert!(c("10.0.0.0/8").contains(&c("10.200.1.0/24")));
        assert!(!c("10.200.1.0/24").contains(&c("10.0.0.0/8")));
        assert!(c("10.200.1.0/24").overlaps(&c("10.0.0.0/8")));
        assert!(!c("10.1.0.0/16").overlaps(&c("10.2.0.0/16")));
        assert!(c("169.254.169.0/24").contains(&c("169.254.169.254")));
        assert!(c("0.0.0.0/0").contains(&c("1.2.3.4")));
        assert!(c("fd00::/8").contains(&c("fd12:3456::/64")));
        assert!(!c("fd00::/8").overlaps(&c("fe80::/10")));
        assert!(c("::/0").contains(&c("2001:db8::1")));
        // families never mix
        assert!(!c("0.0.0.0/0").overlaps(&c("::/0")));
        for bad in ["10.0.0.0/33", "fd00::/129", "x/8", "10.0.0/8", ""] {
            assert!(Cidr::parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn host_bits_are_cleared_and_mapped_addresses_count_as_ipv4() {
        let c = Cidr::from_bits(false, 0x0a01_0203, 8);
        assert_eq!(c.to_string(), "10.0.0.0/8");
        assert!(c.contains_ip("10.200.0.1".parse().unwrap()));
        assert!(c.contains_ip("::ffff:10.9.9.9".parse().unwrap()));
        assert!(!c.contains_ip("11.0.0.1".parse().unwrap()));
        assert!(!c.contains_ip("fd00::1".parse().unwrap()));
        let v6 = Cidr::parse("fd00::/8").unwrap();
        assert!(v6.contains_ip("fd12::1".parse().unwrap()));
        assert!(!v6.contains_ip("10.0.0.1".parse().unwrap()));
        assert!(Cidr::parse("0.0.0.0/0")
            .unwrap()
            .contains_ip("1.2.3.4".parse().unwrap()));
        assert_eq!(Cidr::from_bits(false, 0x0a01_0203, 40).prefix_len(), 32);
    }
}
