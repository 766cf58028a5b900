import Foundation
import Testing

@testable import PortcullisCore

@Suite("IP-to-country table (PROTOCOL §13, countryNamedLocation)")
struct CountryTableTests {
    // MARK: Fixtures

    static let plain = """
        # Our own ranges, by hand.
        cidr,country

        203.0.113.0/24,NZ
        198.51.100.0/25,au
        2001:db8::/32,DE
        ::ffff:192.0.2.0/120,FR
        10.0.0.0/8,ZZ
        """

    static let dbIP = [
        "1.0.0.0,1.0.0.255,AU",
        "1.0.1.0,1.0.3.255,CN",
        "1.0.4.0,1.0.7.255,ZZ",
        "2001:200::,2001:200:ffff:ffff:ffff:ffff:ffff:ffff,JP",
        "::ffff:8.8.8.0,::ffff:8.8.8.255,US",
        "",
    ].joined(separator: "\r\n")

    static let locations = """
        geoname_id,locale_code,continent_code,continent_name,country_iso_code,country_name,is_in_european_union
        2077456,en,OC,Oceania,AU,Australia,0
        6255151,en,OC,Oceania,,,0
        2186224,en,OC,Oceania,NZ,"New Zealand, Aotearoa",0
        1835841,en,AS,Asia,KR,"Korea, Republic of",0
        6252001,en,NA,"North America",US,"United States",0
        2921044,en,EU,Europe,DE,"Germany ""Deutschland""\",1

        """

    static let blocksHeader =
        "network,geoname_id,registered_country_geoname_id,represented_country_geoname_id,is_anonymous_proxy,is_satellite_provider,is_anycast"

    static let blocksIPv4 = """
        \(blocksHeader)
        1.0.0.0/24,2077456,2077456,,0,0,
        1.0.1.0/24,,1835841,,0,0,
        1.0.2.0/23,6255151,2186224,,0,0,
        1.0.4.0/22,6255151,,,0,0,
        1.0.8.0/21,,,,1,0,
        5.0.0.0/24,2921044,2921044,,0,0,1

        """

    static let blocksIPv6 = """
        \(blocksHeader)
        2600::/12,6252001,6252001,,0,0,

        """

    // MARK: Helpers

    /// A fresh directory for the test's files, removed afterwards.
    func withDirectory<T>(_ body: (URL) throws -> T) throws -> T {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("country-table-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        return try body(directory)
    }

    func write(_ text: String, _ name: String, in directory: URL) throws -> String {
        try write(Data(text.utf8), name, in: directory)
    }

    func write(_ data: Data, _ name: String, in directory: URL) throws -> String {
        let url = directory.appendingPathComponent(name)
        try data.write(to: url)
        return url.path
    }

    /// Each problem as `line code`, `-` for a problem with the whole file.
    func summary(_ error: CountryTableError) -> [String] {
        error.problems.map { "\($0.line.map(String.init) ?? "-") \($0.code)" }
    }

    func refusal(_ text: String, fileName: String = "countries.csv") throws -> CountryTableError {
        try #require(throws: CountryTableError.self) { try CountryTable.parse(csv: text, fileName: fileName) }
    }

    func lookUp(_ table: CountryTable, _ address: String) throws -> String? {
        table.country(of: try #require(IPAddress(address)))
    }

    // MARK: Layouts

    @Test(
        "plain cidr,country: lookups at the edges of each range",
        arguments: [
            ("203.0.113.0", "NZ"), ("203.0.113.255", "NZ"), ("203.0.112.255", nil), ("203.0.114.0", nil),
            ("198.51.100.0", "AU"), ("198.51.100.127", "AU"), ("198.51.100.128", nil), ("198.51.99.255", nil),
            ("2001:db8::", "DE"), ("2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", "DE"),
            ("2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", nil), ("2001:db9::", nil),
            ("::ffff:203.0.113.7", "NZ"), ("192.0.2.0", "FR"), ("192.0.2.255", "FR"), ("192.0.3.0", nil),
            ("10.1.2.3", nil), ("0.0.0.0", nil), ("255.255.255.255", nil), ("::", nil), ("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", nil),
        ] as [(String, String?)])
    func plainLookups(_ address: String, _ expected: String?) throws {
        try withDirectory { directory in
            let table = try CountryTable.load(path: try write(Self.plain, "countries.csv", in: directory))
            #expect(try lookUp(table, address) == expected)
        }
    }

    @Test("plain: what the table holds; lower case normalised, ZZ left out")
    func plainContents() throws {
        let table = try CountryTable.parse(csv: Self.plain)
        #expect(table.layout == .plain)
        #expect(table.rangeCount == 4)
        #expect(table.ipv4RangeCount == 3)
        #expect(table.ipv6RangeCount == 1)
        #expect(table.countries == ["NZ", "AU", "DE", "FR"])
        #expect(table.approximateByteCount >= 3 * 10 + 34)
    }

    @Test(
        "DB-IP lite: adjacent ranges, ZZ unknown, IPv6, IPv4-mapped bounds, CRLF",
        arguments: [
            ("0.255.255.255", nil), ("1.0.0.0", "AU"), ("1.0.0.255", "AU"), ("1.0.1.0", "CN"), ("1.0.3.255", "CN"), ("1.0.4.0", nil),
            ("1.0.7.255", nil), ("2001:200::", "JP"), ("2001:200::1", "JP"), ("2001:200:ffff:ffff:ffff:ffff:ffff:ffff", "JP"),
            ("2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff", nil), ("2001:201::", nil), ("8.8.8.8", "US"), ("::ffff:8.8.8.255", "US"),
            ("8.8.9.0", nil),
        ] as [(String, String?)])
    func dbIPLookups(_ address: String, _ expected: String?) throws {
        try withDirectory { directory in
            let table = try CountryTable.load(path: try write(Self.dbIP, "dbip-country-lite-2025-01.csv", in: directory))
            #expect(table.layout == .dbIP)
            #expect(table.rangeCount == 4)
            #expect(try lookUp(table, address) == expected)
        }
    }

    @Test("ranges in any order are sorted")
    func unsorted() throws {
        let table = try CountryTable.parse(csv: "9.0.0.0/8,US\n2001:db8::/32,DE\n1.0.0.0/8,AU\n::1/128,NZ\n5.0.0.0/8,FR\n")
        #expect(try lookUp(table, "1.2.3.4") == "AU")
        #expect(try lookUp(table, "5.2.3.4") == "FR")
        #expect(try lookUp(table, "9.2.3.4") == "US")
        #expect(try lookUp(table, "::1") == "NZ")
        #expect(try lookUp(table, "2001:db8::1") == "DE")
        #expect(try lookUp(table, "4.0.0.0") == nil)
    }

    @Test(
        "MaxMind GeoLite2-Country: geoname, registered-country fallback, continent-only and empty blocks unknown",
        arguments: [
            ("1.0.0.1", "AU"), ("1.0.1.1", "KR"), ("1.0.2.0", "NZ"), ("1.0.3.255", "NZ"), ("1.0.4.1", nil), ("1.0.9.1", nil),
            ("5.0.0.9", "DE"), ("2600::1", "US"), ("260f:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "US"), ("2610::", nil),
            ("::ffff:1.0.0.1", "AU"),
        ] as [(String, String?)])
    func maxMindLookups(_ address: String, _ expected: String?) throws {
        try withDirectory { directory in
            _ = try write(Self.locations, "GeoLite2-Country-Locations-en.csv", in: directory)
            _ = try write(Self.blocksIPv4, "GeoLite2-Country-Blocks-IPv4.csv", in: directory)
            _ = try write(Self.blocksIPv6, "GeoLite2-Country-Blocks-IPv6.csv", in: directory)
            let table = try CountryTable.load(path: directory.path)
            #expect(table.layout == .maxMind)
            #expect(table.rangeCount == 5)
            #expect(table.countries == ["AU", "KR", "NZ", "DE", "US"])
            #expect(try lookUp(table, address) == expected)
        }
    }

    @Test("MaxMind: naming the blocks file reads its directory (both families)")
    func maxMindNamedFile() throws {
        try withDirectory { directory in
            _ = try write(Self.locations, "GeoLite2-Country-Locations-en.csv", in: directory)
            let blocks = try write(Self.blocksIPv4, "GeoLite2-Country-Blocks-IPv4.csv", in: directory)
            _ = try write(Self.blocksIPv6, "GeoLite2-Country-Blocks-IPv6.csv", in: directory)
            let table = try CountryTable.load(path: blocks)
            #expect(table.layout == .maxMind)
            #expect(table.rangeCount == 5)
            #expect(try lookUp(table, "2600::1") == "US")
        }
    }

    @Test("MaxMind: an IPv6 blocks file alone, and the commercial GeoIP2 names")
    func maxMindIPv6Only() throws {
        try withDirectory { directory in
            _ = try write(Self.locations, "GeoIP2-Country-Locations-en.csv", in: directory)
            _ = try write(Self.blocksIPv6, "GeoIP2-Country-Blocks-IPv6.csv", in: directory)
            let table = try CountryTable.load(path: directory.path + "/")
            #expect(table.rangeCount == 1)
            #expect(try lookUp(table, "1.0.0.1") == nil)
        }
    }

    @Test("MaxMind from memory; quoted names with commas and doubled quotes")
    func maxMindInMemory() throws {
        let table = try CountryTable.parseMaxMind(locations: Data(Self.locations.utf8), blocksIPv4: Data(Self.blocksIPv4.utf8), blocksIPv6: nil)
        #expect(table.rangeCount == 4)
        #expect(try lookUp(table, "5.0.0.1") == "DE")
        #expect(try lookUp(table, "1.0.2.1") == "NZ")
    }

    @Test("a file over 1 MiB is read across chunks: every line counted, the last range found")
    func largeFile() throws {
        let lines = (0..<100_000).map { "10.\($0 >> 16).\(($0 >> 8) & 0xFF).\($0 & 0xFF)/32,\($0 % 2 == 0 ? "NZ" : "AU")" }
        let text = "cidr,country\n" + lines.joined(separator: "\n") + "\n"
        #expect(text.utf8.count > 1 << 20)
        try withDirectory { directory in
            let table = try CountryTable.load(path: try write(text, "countries.csv", in: directory))
            #expect(table.rangeCount == 100_000)
            #expect(try lookUp(table, "10.1.134.159") == "AU")  // 99,999
            #expect(try lookUp(table, "10.1.134.160") == nil)
            // A problem far into the file has its exact line.
            let broken = text.replacingOccurrences(of: "\n10.1.134.158/32,NZ\n", with: "\n10.1.134.158/32,N\n")
            let error = try #require(throws: CountryTableError.self) { try CountryTable.load(path: try write(broken, "broken.csv", in: directory)) }
            #expect(summary(error) == ["100000 badCountryCode"])
        }
    }

    @Test("a line of exactly 1,024 bytes is read")
    func longestLine() throws {
        let comment = "#" + String(repeating: "x", count: CountryTable.maximumLineLength - 1)
        let table = try CountryTable.parse(csv: comment + "\r\n203.0.113.0/24,NZ\n")
        #expect(table.rangeCount == 1)
    }

    @Test("addresses and ranges read from bytes are read as IPAddress and IPRange read them")
    func sameAsIPAddress() {
        let pieces = [
            "0", "1", "9", "25", "255", "256", "007", "1234", "12345", "ffff", "FfFf", "db8", "g", ".", ":", "::", ":::", "/", "%", "[", "]", " ", "+1", "-",
        ]
        var state: UInt64 = 7
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(state >> 33) % bound
        }
        var texts = ["::", "::1", "1::", "::ffff:1.2.3.4", "1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7::", "::2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8:9", "1.2.3.4", "01.2.3.4"]
        for _ in 0..<20_000 {
            // Mostly well-formed shapes, with a random piece now and then.
            var text = ""
            switch next(3) {
            case 0: text = (0..<4).map { _ in String(next(300)) }.joined(separator: ".")
            case 1: text = (0..<(1 + next(8))).map { _ in String(next(0x1_0000), radix: 16) }.joined(separator: next(4) == 0 ? "::" : ":")
            default: text = (0..<(1 + next(9))).map { _ in pieces[next(pieces.count)] }.joined()
            }
            if next(4) == 0 { text += pieces[next(pieces.count)] }
            texts.append(text)
            texts.append(text + "/" + String(next(140)))
        }
        var mismatches: [String] = []
        for text in texts {
            let bytes = Array(text.utf8)[...]
            let expected = IPAddress(text).map { TableAddress(value: UInt128($0.high) << 64 | UInt128($0.low), isIPv4: $0.isIPv4) }
            if CountryTable.address(bytes) != expected { mismatches.append("address \(text)") }
            let range = IPRange(text).map {
                (TableAddress(value: UInt128($0.network.high) << 64 | UInt128($0.network.low), isIPv4: $0.network.isIPv4), $0.prefixLength)
            }
            let read = CountryTable.cidr(bytes)
            if read?.network != range?.0 || read?.prefixLength != range?.1 { mismatches.append("range \(text)") }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(10))")
        #expect(texts.filter { IPAddress($0) != nil }.count > 3_000)
        #expect(texts.filter { IPRange($0) != nil }.count > 1_000)
    }

    // MARK: Problems

    @Test("plain: each problem on its line; the description names file and line")
    func plainProblems() throws {
        let error = try refusal(
            """
            cidr,country
            203.0.113.0/24,NZ
            x.y/24,NZ
            198.51.100.0/24,N1
            198.51.100.0/24
            192.0.2.1/24,NZ
            203.0.113.128/25,AU
            2001:db8::/32,DE,extra
            2001:db8::/32,D\u{e9}
            """)
        #expect(
            summary(error) == [
                "3 badAddress", "4 badCountryCode", "5 wrongColumnCount", "6 badAddress", "8 wrongColumnCount", "9 badCountryCode", "7 overlap",
            ])
        #expect(error.problems.allSatisfy { $0.file == "countries.csv" })
        #expect(error.problems[0].description == "countries.csv:3: 'x.y/24' is not an IP address range (address/prefix length)")
        #expect(error.problems[3].message.contains("past its prefix"))
        #expect(error.problems[5].message == "'D??' is not a country code (two letters, ISO 3166-1 alpha-2)")
        #expect(error.problems[6].message.contains("on line 2"))
        #expect(!error.stoppedEarly)
        #expect(error.description.hasPrefix("countries.csv:3: 'x.y/24' is not"))
        #expect(error.description.split(separator: "\n").count == 7)
    }

    @Test("DB-IP: bad address, start after end, mixed families, column count, overlap")
    func dbIPProblems() throws {
        let error = try refusal(
            """
            1.0.0.0,1.0.0.255,AU
            1.0.2.0,1.0.1.255,AU
            1.0.3.0,2001:db8::,AU
            x.y,1.0.4.255,AU
            1.0.5.0,1.0.5.255,AU,extra
            1.0.0.128,1.0.0.128,NZ
            1.0.6.0,1.0.6.255,A
            2001:db8::2,2001:db8::1,DE
            """, fileName: "dbip.csv")
        #expect(
            summary(error) == [
                "2 startAfterEnd", "3 mixedFamilies", "4 badAddress", "5 wrongColumnCount", "7 badCountryCode", "8 startAfterEnd", "6 overlap",
            ])
        #expect(error.problems[2].description == "dbip.csv:4: 'x.y' is not an IP address")
        #expect(error.problems[1].message == "the range mixes address families: 1.0.3.0 is IPv4, 2001:db8:: is IPv6")
        #expect(error.problems[6].message == "the range 1.0.0.128 to 1.0.0.128 (NZ) overlaps 1.0.0.0 to 1.0.0.255 (AU) on line 1")
    }

    @Test("an overlap is reported on the later line, whatever the order of the ranges")
    func overlapOnLaterLine() throws {
        let error = try refusal("1.0.0.128/25,NZ\n2001:db8::/48,DE\n1.0.0.0/24,AU\n2001:db8::/32,DE\n3.0.0.0/8,US\n")
        #expect(summary(error) == ["3 overlap", "4 overlap"])
        #expect(
            error.problems[1].message
                == "the range 2001:db8:: to 2001:db8:ffff:ffff:ffff:ffff:ffff:ffff (DE) overlaps "
                + "2001:db8:: to 2001:db8:0:ffff:ffff:ffff:ffff:ffff (DE) on line 2")
        // A range inside a wide one, past a range that ends before it: still caught.
        #expect(summary(try refusal("10.0.0.0/8,US\n10.1.0.0/16,NZ\n10.200.0.0/16,AU\n")) == ["2 overlap", "3 overlap"])
        // The same line twice.
        #expect(summary(try refusal("10.0.0.0/8,US\n10.0.0.0/8,US\n")) == ["2 overlap"])
    }

    @Test("MaxMind: an unknown geoname id, a registered id that is not a number, a bad header; problems name the files")
    func maxMindProblems() throws {
        let blocks = "\(Self.blocksHeader)\n1.0.0.0/24,2077456,2077456,,0,0,\n1.0.1.0/24,999,2077456,,0,0,\n1.0.2.0/24,,x1,,0,0,\n1.0.3.0/24,2077456,,,0,0\n"
        let error = try #require(throws: CountryTableError.self) {
            try CountryTable.parseMaxMind(locations: Data(Self.locations.utf8), blocksIPv4: Data(blocks.utf8), blocksIPv6: Data("network,x\n".utf8))
        }
        #expect(summary(error) == ["3 badGeonameID", "4 badGeonameID", "5 wrongColumnCount", "1 unrecognisedLayout"])
        #expect(error.problems[0].description == "GeoLite2-Country-Blocks-IPv4.csv:3: geoname id 999 is not in GeoLite2-Country-Locations-en.csv")
        #expect(error.problems[3].file == "GeoLite2-Country-Blocks-IPv6.csv")

        let locations = Self.locations + "2077456,en,OC,Oceania,AU,Australia,0\nabc,en,OC,Oceania,AU,Australia,0\n1,en,OC,Oceania,AUS,Australia,0\n"
        let broken = try #require(throws: CountryTableError.self) {
            try CountryTable.parseMaxMind(locations: Data(locations.utf8), blocksIPv4: Data(Self.blocksIPv4.utf8), blocksIPv6: nil)
        }
        #expect(summary(broken) == ["8 badGeonameID", "9 badGeonameID", "10 badCountryCode"])
        #expect(broken.problems[0].message == "geoname id 2077456 is defined twice (first on line 2)")
    }

    @Test("MaxMind directory problems: missing files, overlaps between lines of one file")
    func maxMindDirectoryProblems() throws {
        try withDirectory { directory in
            let empty = try #require(throws: CountryTableError.self) { try CountryTable.load(path: directory.path) }
            #expect(summary(empty) == ["- unreadable"])
            #expect(empty.problems[0].file == directory.path)

            _ = try write(Self.blocksIPv4, "GeoLite2-Country-Blocks-IPv4.csv", in: directory)
            let noLocations = try #require(throws: CountryTableError.self) { try CountryTable.load(path: directory.path) }
            #expect(summary(noLocations) == ["- unreadable"])
            #expect(noLocations.problems[0].message.contains("GeoLite2-Country-Locations-en.csv"))

            _ = try write(Self.locations, "GeoLite2-Country-Locations-en.csv", in: directory)
            let overlapping = try write(Self.blocksIPv4 + "1.0.0.0/16,2077456,,,0,0,\n", "GeoLite2-Country-Blocks-IPv4.csv", in: directory)
            let error = try #require(throws: CountryTableError.self) { try CountryTable.load(path: directory.path) }
            // The new /16 overlaps three blocks, each reported on its line.
            #expect(summary(error) == ["8 overlap", "8 overlap", "8 overlap"])
            #expect(error.problems.allSatisfy { $0.file == overlapping })
            #expect(error.problems[1].message.hasSuffix("on line 3"))
        }
    }

    @Test("a MaxMind file given to parse(csv:) is refused with a reason")
    func maxMindThroughParse() throws {
        #expect(summary(try refusal(Self.blocksIPv4)) == ["- unrecognisedLayout"])
        #expect(summary(try refusal(Self.locations)) == ["- unrecognisedLayout"])
    }

    @Test("reading stops at 20 problems")
    func problemCap() throws {
        let text = "cidr,country\n" + (1...30).map { "10.0.0.\($0)/32,X\($0)" }.joined(separator: "\n")
        let error = try refusal(text)
        #expect(error.problems.count == CountryTableError.maximumProblems)
        #expect(error.problems.last?.line == 21)
        #expect(error.stoppedEarly)
        #expect(error.description.hasSuffix("(stopped after 20 problems)"))
    }

    @Test("a line over 1,024 bytes is an error on its line; a file of one huge line, read from disk")
    func lineTooLong() throws {
        let long = "203.0.113.0/24," + String(repeating: "N", count: CountryTable.maximumLineLength)
        let error = try refusal("198.51.100.0/24,AU\n\(long)\n192.0.2.0/24,NZ\n")
        #expect(summary(error) == ["2 lineTooLong"])
        #expect(error.problems[0].description == "countries.csv:2: the line is longer than 1024 bytes")
        try withDirectory { directory in
            let huge = try write(Data(repeating: UInt8(ascii: "a"), count: 3 << 20), "huge.csv", in: directory)
            let error = try #require(throws: CountryTableError.self) { try CountryTable.load(path: huge) }
            #expect(summary(error) == ["1 lineTooLong"])
        }
    }

    @Test("binary junk, non-UTF-8 bytes: refused, never a crash", arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func junk(_ seed: UInt64) throws {
        var state = seed
        var bytes: [UInt8] = []
        for _ in 0..<20_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            bytes.append(UInt8(truncatingIfNeeded: state >> 56))
            // Now and then a comma or a newline, so that lines and fields happen.
            if state & 0x3F == 0 { bytes.append(UInt8(ascii: ",")) }
            if state & 0x7F == 1 { bytes.append(UInt8(ascii: "\n")) }
        }
        let error = try #require(throws: CountryTableError.self) { try CountryTable.parse(csv: Data(bytes)) }
        #expect(!error.problems.isEmpty)
        #expect(error.problems.count <= CountryTableError.maximumProblems)
        #expect(error.description.unicodeScalars.allSatisfy { $0.isASCII })
        // Once the layout is known, junk after good lines is reported line by line.
        let tail = try #require(throws: CountryTableError.self) { try CountryTable.parse(csv: Data("203.0.113.0/24,NZ\n".utf8) + Data(bytes)) }
        #expect(!tail.problems.isEmpty)
    }

    @Test("invalid UTF-8 in an address is quoted as printable text")
    func invalidUTF8() throws {
        let error = try #require(throws: CountryTableError.self) { try CountryTable.parse(csv: Data([0x31, 0xFF, 0x2F, 0x38, 0x2C, 0x4E, 0x5A, 0x0A, 0x00])) }
        #expect(summary(error) == ["1 badAddress", "2 wrongColumnCount"])
        #expect(error.problems[0].message == "'1?/8' is not an IP address range (address/prefix length)")
    }

    @Test("a layout none of the three: one problem, reading stops")
    func unrecognised() throws {
        let error = try refusal("# a comment\nhello world\nmore\n")
        #expect(summary(error) == ["2 unrecognisedLayout"])
    }

    @Test("a path that does not exist")
    func missingPath() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("no-such-\(UUID().uuidString).csv").path
        let error = try #require(throws: CountryTableError.self) { try CountryTable.load(path: path) }
        #expect(summary(error) == ["- unreadable"])
        #expect(error.description == "\(path): no such file or directory")
    }

    @Test("no ranges at all is an error", arguments: ["", "\n\n", "cidr,country\n", "# nothing\n", "10.0.0.0/8,ZZ\n", "1.0.0.0,1.0.0.255,ZZ\n"])
    func empty(_ text: String) throws {
        try withDirectory { directory in
            let path = try write(text, "countries.csv", in: directory)
            let error = try #require(throws: CountryTableError.self) { try CountryTable.load(path: path) }
            #expect(summary(error) == ["- empty"])
            #expect(error.problems[0].file == path)
        }
    }

    @Test("the bounds: ranges and file size (the public limits, made small)")
    func limits() throws {
        var limits = CountryTable.Limits()
        limits.ranges = 3
        let text = (0..<10).map { "10.0.0.\($0)/32,NZ" }.joined(separator: "\n")
        let error = try #require(throws: CountryTableError.self) { try CountryTable.parse(csv: Data(text.utf8), fileName: "x.csv", limits: limits) }
        #expect(summary(error) == ["4 tooLarge"])
        #expect(error.stoppedEarly)
        #expect(try CountryTable.parse(csv: Data(text.utf8), fileName: "x.csv", limits: CountryTable.Limits()).rangeCount == 10)

        try withDirectory { directory in
            let path = try write(text, "countries.csv", in: directory)
            var small = CountryTable.Limits()
            small.fileSize = 100
            let error = try #require(throws: CountryTableError.self) { try CountryTable.load(path: path, limits: small) }
            #expect(summary(error) == ["- tooLarge"])
        }
    }
}
