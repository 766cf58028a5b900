import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import PortcullisCore
import PortcullisServer
import PortcullisTesting
import Testing

/// Country named locations over the operator's IP-to-country table (PROTOCOL §13), through a live server behind a
/// trusted proxy (the address comes from `X-Forwarded-For`).
@Suite("Country named locations (PROTOCOL §13)")
struct CountryLocationTests {
    static let locationId = "e1000000-0000-4000-8000-00000000c0c0"
    static let policyId = "a1000000-0000-4000-8000-00000000c0c1"

    static func from(_ address: String) -> HTTPFields { [HTTPField.Name("X-Forwarded-For")!: address] }

    @Test(
        "a blocked country is refused (53003), another allowed, unknown addresses as includeUnknownCountriesAndRegions says; the log and what-if name the country; a bad table is refused with its line and the old one keeps serving; a good one is taken without a restart"
    )
    func countries() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("portcullis-countries-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("countries.csv")
        try "cidr,country\n198.51.100.0/24,NZ\n2001:db8::/32,NZ\n203.0.113.0/24,DE\n".write(to: file, atomically: true, encoding: .utf8)
        let countries = try CountryTableSource(path: file.path, logger: Logger(label: "test"))
        #expect(countries.rangeCount == 3)

        try await withTestEnvironment(countries: countries, configure: { $0.trustedProxies = [IPRange("127.0.0.0/8")!, IPRange("::1/128")!] }) { env in
            try await env.application().test(.live) { client in
                let admin = try await client.adminToken()
                let location: [String: Any] = [
                    "@odata.type": "#microsoft.graph.countryNamedLocation", "id": Self.locationId, "displayName": "Blocked countries",
                    "countriesAndRegions": ["nz"], "includeUnknownCountriesAndRegions": true, "countryLookupMethod": "clientIpAddress",
                ]
                let created = try await client.admin(.post, "/named-locations", token: admin, json: location)
                #expect(created.status == .created, "\(created.text)")
                #expect((created.json["countriesAndRegions"] as? [String]) == ["NZ"])
                let policy = Policies.document(
                    id: Self.policyId, name: "Block countries for Alice", users: [Fixtures.alice.id], apps: ["All"], locations: [Self.locationId],
                    controls: ["block"])
                #expect(try await client.admin(.post, "/conditional-access/policies", token: admin, json: policy).status == .created)

                #expect(try await client.token(Grants.password(), headers: Self.from("198.51.100.7")).errorCode == 53003, "NZ")
                #expect(try await client.token(Grants.password(), headers: Self.from("2001:db8::7")).errorCode == 53003, "NZ over IPv6")
                #expect(try await client.token(Grants.password(), headers: Self.from("203.0.113.7")).status == .ok, "DE")
                #expect(try await client.token(Grants.password(), headers: Self.from("192.0.2.1")).errorCode == 53003, "unknown, included")

                var unknownOut = location
                unknownOut["includeUnknownCountriesAndRegions"] = false
                let replaced = try await client.admin(.put, "/named-locations/\(Self.locationId)", token: admin, json: unknownOut, headers: [.ifMatch: "*"])
                #expect(replaced.status == .ok, "\(replaced.text)")
                #expect(try await client.token(Grants.password(), headers: Self.from("192.0.2.1")).status == .ok, "unknown, not included")

                // The sign-in log says which country; what-if looks the address up too.
                try await Task.sleep(for: .milliseconds(300))
                let log = try await client.admin(.get, "/sign-ins?user=\(Fixtures.alice.id)", token: admin)
                let recorded = (log.json["value"] as? [[String: Any]] ?? []).compactMap { $0["countryOrRegion"] as? String }
                #expect(recorded.contains("NZ") && recorded.contains("DE"), "\(recorded)")
                let whatIf = try await client.admin(
                    .post, "/conditional-access/evaluate", token: admin,
                    json: [
                        "signIn": [
                            "userId": Fixtures.alice.id, "clientAppId": Fixtures.mobileClientId, "resourceAppId": Fixtures.mailApiId,
                            "ipAddress": "198.51.100.9",
                        ]
                    ])
                #expect(
                    whatIf.string("error") == "access_denied" || (whatIf.json["signIn"] as? [String: Any])?["countryOrRegion"] as? String == "NZ",
                    "\(whatIf.text)")

                // A malformed table: refused (its line in the log), the old one keeps serving.
                try "cidr,country\n198.51.100.0/24,AU\nnot-an-address,AU\n".write(to: file, atomically: true, encoding: .utf8)
                #expect(!countries.reloadIfChanged())
                #expect(try await client.token(Grants.password(), headers: Self.from("198.51.100.7")).errorCode == 53003, "still NZ")
                let refusal = try #require(throws: CountryTableError.self) { try CountryTable.load(path: file.path) }
                #expect(refusal.description.contains("countries.csv:3"), "\(refusal.description)")
                // A good one is taken at the next look, without a restart.
                try "cidr,country\n198.51.100.0/24,AU\n203.0.113.0/24,DE\n2001:db8::/32,NZ\n10.0.0.0/8,AU\n".write(to: file, atomically: true, encoding: .utf8)
                #expect(countries.reloadIfChanged())
                #expect(try await client.token(Grants.password(), headers: Self.from("198.51.100.7")).status == .ok, "now AU")

                // Bad documents get pointers.
                let bad = try await client.admin(
                    .post, "/named-locations", token: admin,
                    json: [
                        "@odata.type": "#microsoft.graph.countryNamedLocation", "displayName": "x", "countriesAndRegions": ["NZL", "1A"],
                        "countryLookupMethod": "authenticatorAppGps", "isTrusted": true,
                    ])
                #expect(bad.status == .badRequest)
                let pointers = Set(((bad.json["error"] as? [String: Any])?["details"] as? [[String: String]] ?? []).compactMap { $0["pointer"] })
                #expect(pointers == ["/countriesAndRegions/0", "/countriesAndRegions/1", "/countryLookupMethod", "/isTrusted"], "\(pointers)")
            }
        }
    }

    @Test("the running service reads a changed table by itself")
    func reloadService() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("portcullis-countries-\(UUID().uuidString).csv")
        defer { try? FileManager.default.removeItem(at: file) }
        try "198.51.100.0/24,NZ\n".write(to: file, atomically: true, encoding: .utf8)
        let source = try CountryTableSource(path: file.path, interval: .milliseconds(50), logger: Logger(label: "test"))
        let address = IPAddress("198.51.100.7")
        #expect(source.country(of: address) == "NZ")
        let running = Task { try await source.run() }
        defer { running.cancel() }
        try "198.51.100.0/24,AU\n203.0.113.0/24,DE\n".write(to: file, atomically: true, encoding: .utf8)
        var seen: String?
        for _ in 0..<200 {
            seen = source.country(of: address)
            if seen == "AU" { break }
            try await Task.sleep(for: .milliseconds(25))
        }
        #expect(seen == "AU" && source.rangeCount == 2)
    }

    @Test("without a table every address's country is unknown; a table that does not read stops the start")
    func noTable() throws {
        let none = CountryTableSource.none(logger: Logger(label: "test"))
        #expect(none.country(of: IPAddress("198.51.100.7")) == nil && none.rangeCount == 0)
        #expect(throws: CountryTableError.self) { try CountryTableSource(path: "/nonexistent/countries.csv", logger: Logger(label: "test")) }
    }
}
