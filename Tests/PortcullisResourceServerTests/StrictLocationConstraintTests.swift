import PortcullisResourceServer
import PortcullisTokenVerification
import Testing

/// `xms_sle` at the resource (PROTOCOL §17): an address inside an entry's `in` and outside its `ex` is refused.
@Suite("strict location constraints at the resource")
struct StrictLocationConstraintTests {
    @Test("IPv4, IPv6 and IPv4-mapped addresses; an unreadable included range refuses, an unreadable excluded one spares nothing")
    func admits() throws {
        let office = StrictLocationConstraint(include: ["::/0"], exclude: ["203.0.113.0/24", "2001:db8::/32"])
        for (address, admitted) in [
            ("203.0.113.9", true), ("::ffff:203.0.113.9", true), ("2001:db8::1", true), ("198.51.100.1", false), ("2001:db9::1", false),
        ] {
            #expect(office.admits(try #require(IPAddress(address))) == admitted, "\(address)")
        }
        let blocked = StrictLocationConstraint(include: ["198.51.100.0/24"], exclude: [])
        #expect(blocked.admits(try #require(IPAddress("198.51.100.7"))) == false)
        #expect(blocked.admits(try #require(IPAddress("192.0.2.1"))))
        #expect(StrictLocationConstraint(include: ["nonsense"], exclude: []).admits(try #require(IPAddress("192.0.2.1"))) == false)
        #expect(StrictLocationConstraint(include: ["::/0"], exclude: ["nonsense"]).admits(try #require(IPAddress("192.0.2.1"))) == false)
    }
}
