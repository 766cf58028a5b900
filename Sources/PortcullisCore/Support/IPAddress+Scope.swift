/// Where an address leads: what callback delivery (and anything else that connects out on a client's
/// behalf) needs to know to refuse internal destinations.
public enum AddressScope: String, Sendable {
    /// 127.0.0.0/8, ::1.
    case loopback
    /// RFC 1918, 100.64.0.0/10 (shared address space), fc00::/7 (unique local).
    case privateNetwork
    /// 169.254.0.0/16 (cloud metadata services live here), fe80::/10.
    case linkLocal
    /// Unspecified, multicast, broadcast, reserved and documentation ranges: nothing to deliver to.
    case unroutable
    /// Everything else.
    case global
}

extension IPAddress {
    private static let ranges: [(IPRange, AddressScope)] =
        ([
            ("127.0.0.0/8", .loopback), ("::1/128", .loopback),
            ("10.0.0.0/8", .privateNetwork), ("172.16.0.0/12", .privateNetwork), ("192.168.0.0/16", .privateNetwork),
            ("100.64.0.0/10", .privateNetwork), ("fc00::/7", .privateNetwork),
            ("169.254.0.0/16", .linkLocal), ("fe80::/10", .linkLocal),
            ("0.0.0.0/8", .unroutable), ("::/128", .unroutable), ("224.0.0.0/4", .unroutable), ("240.0.0.0/4", .unroutable),
            ("ff00::/8", .unroutable), ("192.0.0.0/24", .unroutable), ("192.0.2.0/24", .unroutable), ("198.18.0.0/15", .unroutable),
            ("198.51.100.0/24", .unroutable), ("203.0.113.0/24", .unroutable), ("2001:db8::/32", .unroutable),
            // IPv4 embedded in IPv6 by NAT64 or 6to4 could lead anywhere: treat as internal unless allowed.
            ("64:ff9b::/96", .privateNetwork), ("2002::/16", .privateNetwork),
        ] as [(String, AddressScope)]).map { (IPRange($0.0)!, $0.1) }

    public var scope: AddressScope {
        for (range, scope) in Self.ranges where range.contains(self) { return scope }
        return .global
    }
}
