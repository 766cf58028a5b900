import Foundation

/// An IPv4 or IPv6 address as 128 bits; IPv4 is held as the IPv4-mapped IPv6 address (`::ffff:a.b.c.d`).
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    public let high: UInt64
    public let low: UInt64
    public let isIPv4: Bool

    public init?(_ text: String) {
        var text = Substring(text)
        if text.hasPrefix("[") && text.hasSuffix("]") { text = text.dropFirst().dropLast() }
        if let zone = text.firstIndex(of: "%") { text = text[..<zone] }
        if let v4 = IPAddress.parseIPv4(text) {
            self.high = 0
            self.low = 0xFFFF_0000_0000 | UInt64(v4)
            self.isIPv4 = true
            return
        }
        guard let (high, low) = IPAddress.parseIPv6(text) else { return nil }
        self.high = high
        self.low = low
        // An IPv4-mapped IPv6 address is the IPv4 address.
        self.isIPv4 = high == 0 && (low >> 32) == 0xFFFF
    }

    /// An IPv4 address from its 32 bits.
    public init(ipv4: UInt32) {
        high = 0
        low = 0xFFFF_0000_0000 | UInt64(ipv4)
        isIPv4 = true
    }

    /// An IPv6 address from its 128 bits (an IPv4-mapped one is the IPv4 address).
    public init(ipv6 high: UInt64, _ low: UInt64) {
        self.high = high
        self.low = low
        isIPv4 = high == 0 && (low >> 32) == 0xFFFF
    }

    public var description: String {
        if isIPv4 {
            let v = UInt32(truncatingIfNeeded: low)
            return "\(v >> 24).\((v >> 16) & 0xFF).\((v >> 8) & 0xFF).\(v & 0xFF)"
        }
        let groups = (0..<8).map { i -> UInt16 in
            let word = i < 4 ? high : low
            return UInt16(truncatingIfNeeded: word >> (UInt64(3 - i % 4) * 16))
        }
        return groups.map { String($0, radix: 16) }.joined(separator: ":")
    }

    static func parseIPv4(_ text: Substring) -> UInt32? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var value: UInt32 = 0
        for part in parts {
            guard !part.isEmpty, part.count <= 3, part.allSatisfy(\.isASCII), part.allSatisfy(\.isNumber),
                let octet = UInt32(part), octet <= 255
            else { return nil }
            value = value << 8 | octet
        }
        return value
    }

    static func parseIPv6(_ text: Substring) -> (UInt64, UInt64)? {
        guard text.contains(":") else { return nil }
        var groups: [UInt16] = []
        var tail: [UInt16] = []
        let halves = text.components(separatedBy: "::")
        guard halves.count <= 2 else { return nil }
        func parseGroups(_ part: String, allowV4: Bool) -> [UInt16]? {
            if part.isEmpty { return [] }
            var result: [UInt16] = []
            let items = part.split(separator: ":", omittingEmptySubsequences: false)
            for (index, item) in items.enumerated() {
                if allowV4 && index == items.count - 1 && item.contains(".") {
                    guard let v4 = parseIPv4(item) else { return nil }
                    result.append(UInt16(v4 >> 16))
                    result.append(UInt16(v4 & 0xFFFF))
                } else {
                    guard !item.isEmpty, item.count <= 4, let g = UInt16(item, radix: 16) else { return nil }
                    result.append(g)
                }
            }
            return result
        }
        if halves.count == 2 {
            guard let head = parseGroups(halves[0], allowV4: false), let rest = parseGroups(halves[1], allowV4: true),
                head.count + rest.count <= 7
            else { return nil }
            groups = head
            tail = rest
            groups += Array(repeating: 0, count: 8 - head.count - rest.count) + tail
        } else {
            guard let all = parseGroups(halves[0], allowV4: true), all.count == 8 else { return nil }
            groups = all
        }
        var high: UInt64 = 0
        var low: UInt64 = 0
        for i in 0..<4 { high = high << 16 | UInt64(groups[i]) }
        for i in 4..<8 { low = low << 16 | UInt64(groups[i]) }
        return (high, low)
    }
}

/// A CIDR range (`203.0.113.0/24`, `2001:db8::/32`).
public struct IPRange: Sendable, Hashable, CustomStringConvertible {
    public let network: IPAddress
    /// Prefix length in the 128-bit space (an IPv4 /24 is /120 here).
    public let prefixLength: Int
    public let text: String

    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let address = IPAddress(String(parts[0])),
            let length = Int(parts[1]), parts[1].allSatisfy(\.isNumber)
        else { return nil }
        if address.isIPv4 && !parts[0].contains(":") {
            guard (0...32).contains(length) else { return nil }
            self.prefixLength = 96 + length
        } else {
            guard (0...128).contains(length) else { return nil }
            self.prefixLength = length
        }
        self.network = address
        self.text = text
    }

    public var description: String { text }

    public func contains(_ address: IPAddress) -> Bool {
        func mask(_ bits: Int) -> UInt64 { bits <= 0 ? 0 : bits >= 64 ? .max : ~(UInt64.max >> UInt64(bits)) }
        let highMask = mask(prefixLength)
        let lowMask = mask(prefixLength - 64)
        return (address.high & highMask) == (network.high & highMask) && (address.low & lowMask) == (network.low & lowMask)
    }
}
