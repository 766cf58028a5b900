import PortcullisCore
import Testing

@Suite("IP addresses and CIDR ranges")
struct IPRangeTests {
    @Test(
        "membership",
        arguments: [
            ("203.0.113.0/24", "203.0.113.77", true),
            ("203.0.113.0/24", "203.0.114.1", false),
            ("10.0.0.0/8", "10.255.255.255", true),
            ("0.0.0.0/0", "192.0.2.1", true),
            ("192.0.2.1/32", "192.0.2.1", true),
            ("192.0.2.1/32", "192.0.2.2", false),
            ("2001:db8::/32", "2001:db8:1234::1", true),
            ("2001:db8::/32", "2001:db9::1", false),
            ("::1/128", "::1", true),
            ("203.0.113.0/24", "::ffff:203.0.113.9", true),
            ("2001:db8::/32", "203.0.113.9", false),
            ("fe80::/10", "fe80::1%eth0", true),
            ("2001:db8:0:0:0:0:0:0/48", "2001:0db8:0000:0000:0000:0000:0000:0001", true),
        ])
    func contains(_ range: String, _ address: String, _ expected: Bool) throws {
        let range = try #require(IPRange(range))
        let address = try #require(IPAddress(address))
        #expect(range.contains(address) == expected)
    }

    @Test(
        "malformed input is refused",
        arguments: [
            "203.0.113.0", "203.0.113.0/33", "256.0.0.0/8", "1.2.3/8", "2001:db8::/129", "2001:db8:::1/64", "abc/8", "/8", "1.2.3.4/x", "1.2.3.4/-1",
        ])
    func malformed(_ text: String) {
        #expect(IPRange(text) == nil)
    }

    @Test("IPv4-mapped IPv6 is IPv4 and prints as IPv4")
    func mapped() throws {
        let address = try #require(IPAddress("::ffff:192.0.2.7"))
        #expect(address.isIPv4)
        #expect(address.description == "192.0.2.7")
    }
}
