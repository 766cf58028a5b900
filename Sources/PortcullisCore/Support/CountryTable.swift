public import Foundation

/// An IP-to-country table for conditional access's country named locations (PROTOCOL §13: Graph
/// `countryNamedLocation` with `countryLookupMethod: "clientIpAddress"`): sorted, non-overlapping address ranges,
/// each with an ISO 3166-1 alpha-2 code. An address in no range is unknown.
///
/// The table is read from a file the operator provides, in the CSV layouts of the common free databases, told apart
/// by their first line (``load(path:)``):
/// - MaxMind GeoLite2-Country CSV: a directory holding `GeoLite2-Country-Blocks-IPv4.csv` and/or
///   `GeoLite2-Country-Blocks-IPv6.csv` with `GeoLite2-Country-Locations-en.csv` (the `GeoIP2-Country-` names of
///   the commercial edition too). A block's country is its `geoname_id`'s, else its
///   `registered_country_geoname_id`'s; a block with neither is unknown.
/// - DB-IP lite CSV: `start_ip,end_ip,country_code`, no header; `ZZ` is unknown.
/// - plain `cidr,country` (`203.0.113.0/24,NZ`), with an optional `cidr,country` header.
///
/// In every layout blank lines are skipped, and so are `#` comment lines in the DB-IP and plain layouts; a range
/// whose country is `ZZ` is left out (unknown). Ranges may come in any order; they must not overlap.
///
/// IPv4 and IPv6 ranges are held apart (an IPv4-mapped IPv6 address is looked up among the IPv4 ranges), inclusive
/// bounds in parallel arrays, each range's country a 16-bit index into the few distinct codes: 10 bytes per IPv4
/// range and 34 per IPv6 range.
public struct CountryTable: Sendable {
    /// The layout a table was read from.
    public enum Layout: String, Sendable {
        /// MaxMind GeoLite2-Country (or GeoIP2-Country) CSV.
        case maxMind
        /// DB-IP lite CSV (`start_ip,end_ip,country_code`).
        case dbIP
        /// `cidr,country`.
        case plain
    }

    /// At most this many ranges are read; more is an error (an operator's wrong file must not exhaust memory).
    public static let maximumRanges = 5_000_000
    /// A line longer than this many bytes (its end of line aside) is an error.
    public static let maximumLineLength = 1_024
    /// A file larger than this many bytes is refused, read no further (a country table is tens of megabytes).
    public static let maximumFileSize = 1 << 30

    /// The bounds a reading runs under: the public constants, smaller in tests.
    struct Limits: Sendable {
        var ranges = CountryTable.maximumRanges
        var fileSize = CountryTable.maximumFileSize
    }

    /// The layout the table was read from.
    public let layout: Layout
    private let v4Starts: [UInt32]
    private let v4Ends: [UInt32]
    private let v4Countries: [UInt16]
    private let v6Starts: [UInt128]
    private let v6Ends: [UInt128]
    private let v6Countries: [UInt16]
    /// The distinct country codes, upper-case; ranges hold indexes into it.
    private let codes: [String]

    /// The country of `address`, ISO 3166-1 alpha-2 in upper case; `nil` when it is in no range (unknown).
    public func country(of address: IPAddress) -> String? {
        if address.isIPv4 {
            let value = UInt32(truncatingIfNeeded: address.low)
            guard let index = Self.find(value, starts: v4Starts, ends: v4Ends) else { return nil }
            return codes[Int(v4Countries[index])]
        }
        let value = UInt128(address.high) << 64 | UInt128(address.low)
        guard let index = Self.find(value, starts: v6Starts, ends: v6Ends) else { return nil }
        return codes[Int(v6Countries[index])]
    }

    /// The number of ranges, IPv4 and IPv6.
    public var rangeCount: Int { v4Starts.count + v6Starts.count }

    /// The number of IPv4 ranges.
    public var ipv4RangeCount: Int { v4Starts.count }

    /// The number of IPv6 ranges.
    public var ipv6RangeCount: Int { v6Starts.count }

    /// The countries some range belongs to.
    public var countries: Set<String> { Set(codes) }

    /// The bytes the ranges take in memory, approximately (bounds and country indexes; the arrays' headers aside).
    public var approximateByteCount: Int {
        v4Starts.count * (2 * MemoryLayout<UInt32>.size + MemoryLayout<UInt16>.size)
            + v6Starts.count * (2 * MemoryLayout<UInt128>.size + MemoryLayout<UInt16>.size) + codes.count * MemoryLayout<String>.size
    }

    /// The index of the range holding `value`: the last range starting at or before it, if it ends at or after it.
    private static func find<Bound: FixedWidthInteger>(_ value: Bound, starts: [Bound], ends: [Bound]) -> Int? {
        var low = 0
        var high = starts.count
        while low < high {
            let middle = low + (high - low) / 2
            if starts[middle] <= value { low = middle + 1 } else { high = middle }
        }
        guard low > 0, value <= ends[low - 1] else { return nil }
        return low - 1
    }

    fileprivate init(layout: Layout, v4: [V4Entry], v6: [V6Entry], codes: [String]) {
        self.layout = layout
        self.v4Starts = v4.map(\.start)
        self.v4Ends = v4.map(\.end)
        self.v4Countries = v4.map(\.country)
        self.v6Starts = v6.map(\.start)
        self.v6Ends = v6.map(\.end)
        self.v6Countries = v6.map(\.country)
        self.codes = codes
    }
}

// MARK: - Loading

extension CountryTable {
    /// The MaxMind file names, per edition: the locations (geoname id → country) and the two blocks files.
    private static let maxMindEditions = ["GeoLite2-Country", "GeoIP2-Country"]

    /// Reads the table from `path`: a MaxMind GeoLite2-Country CSV directory, or one file in any of the three
    /// layouts. Naming one of a MaxMind directory's files reads the whole directory around it.
    ///
    /// The file is read in chunks, never whole; problems name the file as `path` and the 1-based line.
    public static func load(path: String) throws(CountryTableError) -> CountryTable {
        try load(path: path, limits: Limits())
    }

    static func load(path: String, limits: Limits) throws(CountryTableError) -> CountryTable {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw CountryTableError(file: path, .unreadable, "no such file or directory")
        }
        if isDirectory.boolValue { return try loadMaxMind(directory: path, limits: limits) }
        var reader = try LineReader(path: path, maximumSize: limits.fileSize)
        defer { reader.close() }
        var builder = Builder(limits: limits)
        let layout = try readSingle(&reader, file: path, builder: &builder)
        switch layout {
        case .maxMind:
            reader.close()
            return try loadMaxMind(directory: URL(fileURLWithPath: path).deletingLastPathComponent().path, limits: limits)
        case .dbIP, .plain:
            return try builder.finish(layout: layout)
        }
    }

    /// Reads a DB-IP lite or plain `cidr,country` table held in memory; problems name the file `fileName`.
    /// (A MaxMind table is several files: ``parseMaxMind(locations:blocksIPv4:blocksIPv6:)``.)
    public static func parse(csv: Data, fileName: String = "countries.csv") throws(CountryTableError) -> CountryTable {
        try parse(csv: csv, fileName: fileName, limits: Limits())
    }

    static func parse(csv: Data, fileName: String, limits: Limits) throws(CountryTableError) -> CountryTable {
        var reader = LineReader(bytes: [UInt8](csv))
        var builder = Builder(limits: limits)
        let layout = try readSingle(&reader, file: fileName, builder: &builder)
        guard layout != .maxMind else {
            throw CountryTableError(
                file: fileName, .unrecognisedLayout,
                "is a MaxMind GeoLite2-Country file: the table needs the blocks and the locations files together")
        }
        return try builder.finish(layout: layout)
    }

    /// Reads a DB-IP lite or plain `cidr,country` table held in a string; problems name the file `fileName`.
    public static func parse(csv: String, fileName: String = "countries.csv") throws(CountryTableError) -> CountryTable {
        try parse(csv: Data(csv.utf8), fileName: fileName)
    }

    /// Reads a MaxMind GeoLite2-Country CSV table held in memory: the locations file and at least one blocks file.
    /// Problems name the files by their GeoLite2 names.
    public static func parseMaxMind(locations: Data, blocksIPv4: Data?, blocksIPv6: Data?) throws(CountryTableError) -> CountryTable {
        let edition = maxMindEditions[0]
        var blocks: [(String, LineReader)] = []
        if let blocksIPv4 { blocks.append(("\(edition)-Blocks-IPv4.csv", LineReader(bytes: [UInt8](blocksIPv4)))) }
        if let blocksIPv6 { blocks.append(("\(edition)-Blocks-IPv6.csv", LineReader(bytes: [UInt8](blocksIPv6)))) }
        guard !blocks.isEmpty else {
            throw CountryTableError(file: "\(edition)-Blocks-IPv4.csv", .unreadable, "a MaxMind table needs at least one blocks file")
        }
        var locationsReader = LineReader(bytes: [UInt8](locations))
        return try readMaxMind(locationsName: "\(edition)-Locations-en.csv", locations: &locationsReader, blocks: &blocks, limits: Limits())
    }

    private static func loadMaxMind(directory: String, limits: Limits) throws(CountryTableError) -> CountryTable {
        func join(_ name: String) -> String { directory.hasSuffix("/") ? directory + name : directory + "/" + name }
        let files = FileManager.default
        guard
            let edition = maxMindEditions.first(where: {
                files.fileExists(atPath: join("\($0)-Blocks-IPv4.csv")) || files.fileExists(atPath: join("\($0)-Blocks-IPv6.csv"))
            })
        else {
            throw CountryTableError(
                file: directory, .unreadable,
                "holds neither GeoLite2-Country-Blocks-IPv4.csv nor GeoLite2-Country-Blocks-IPv6.csv (a MaxMind GeoLite2-Country CSV directory)")
        }
        let locationsPath = join("\(edition)-Locations-en.csv")
        guard files.fileExists(atPath: locationsPath) else {
            throw CountryTableError(file: directory, .unreadable, "holds no \(edition)-Locations-en.csv, which maps geoname ids to countries")
        }
        var locations = try LineReader(path: locationsPath, maximumSize: limits.fileSize)
        defer { locations.close() }
        var blocks: [(String, LineReader)] = []
        defer {
            for index in blocks.indices { blocks[index].1.close() }
        }
        for family in ["IPv4", "IPv6"] {
            let path = join("\(edition)-Blocks-\(family).csv")
            if files.fileExists(atPath: path) { blocks.append((path, try LineReader(path: path, maximumSize: limits.fileSize))) }
        }
        return try readMaxMind(locationsName: locationsPath, locations: &locations, blocks: &blocks, limits: limits)
    }
}

// MARK: - Layouts

extension CountryTable {
    /// Reads one file: finds its layout from the first line that is neither blank nor a comment, then, for DB-IP and
    /// plain, every range into `builder`. Returns `.maxMind` as soon as it sees a MaxMind header, reading no further.
    private static func readSingle(_ reader: inout LineReader, file: String, builder: inout Builder) throws(CountryTableError) -> Layout {
        let fileIndex = builder.addFile(file)
        var layout: Layout?
        lines: while !builder.isStopped, let line = reader.next() {
            guard case .text(let number, let bytes) = line else {
                builder.report(fileIndex, line.number, .lineTooLong, "the line is longer than \(maximumLineLength) bytes")
                if layout == nil { break }
                continue
            }
            if isBlank(bytes) || bytes.first == UInt8(ascii: "#") { continue }
            guard let fields = fields(bytes) else {
                builder.report(fileIndex, number, .wrongColumnCount, "the quotes do not balance")
                if layout == nil { break }
                continue
            }
            guard let known = layout else {
                let header = fields.map { text($0).lowercased() }
                if header.count >= 2 && (header[0] == "network" && header[1] == "geoname_id" || header[0] == "geoname_id" && header[1] == "locale_code") {
                    return .maxMind
                }
                if header == ["cidr", "country"] {
                    layout = .plain
                    continue
                }
                switch fields.count {
                case 2: layout = .plain
                case 3: layout = .dbIP
                default:
                    builder.report(
                        fileIndex, number, .unrecognisedLayout,
                        "\(quoted(bytes)) is none of the layouts read here: MaxMind GeoLite2-Country CSV, "
                            + "DB-IP lite CSV (start_ip,end_ip,country_code) or cidr,country")
                    break lines
                }
                readRange(fields, layout: layout ?? .plain, file: fileIndex, line: number, builder: &builder)
                continue
            }
            readRange(fields, layout: known, file: fileIndex, line: number, builder: &builder)
        }
        if let failure = reader.failure { builder.report(fileIndex, nil, failure.code, failure.message) }
        return layout ?? .plain
    }

    /// One DB-IP or plain line, split into fields.
    private static func readRange(_ fields: [ArraySlice<UInt8>], layout: Layout, file: Int, line: Int, builder: inout Builder) {
        switch layout {
        case .plain:
            guard fields.count == 2 else {
                builder.report(file, line, .wrongColumnCount, "expected 2 columns (cidr,country), found \(fields.count)")
                return
            }
            guard let bounds = cidrBounds(fields[0], file: file, line: line, builder: &builder),
                let country = countryCode(fields[1], file: file, line: line, builder: &builder)
            else { return }
            builder.add(bounds, country: country, file: file, line: line)
        case .dbIP:
            guard fields.count == 3 else {
                builder.report(file, line, .wrongColumnCount, "expected 3 columns (start_ip,end_ip,country_code), found \(fields.count)")
                return
            }
            let start = address(fields[0])
            let end = address(fields[1])
            if start == nil { builder.report(file, line, .badAddress, "\(quoted(fields[0])) is not an IP address") }
            if end == nil { builder.report(file, line, .badAddress, "\(quoted(fields[1])) is not an IP address") }
            let country = countryCode(fields[2], file: file, line: line, builder: &builder)
            guard let start, let end, let country else { return }
            guard start.isIPv4 == end.isIPv4 else {
                builder.report(
                    file, line, .mixedFamilies,
                    "the range mixes address families: \(start) is \(start.isIPv4 ? "IPv4" : "IPv6"), \(end) is \(end.isIPv4 ? "IPv4" : "IPv6")")
                return
            }
            let bounds: Bounds =
                start.isIPv4
                ? .v4(UInt32(truncatingIfNeeded: start.value), UInt32(truncatingIfNeeded: end.value)) : .v6(start.value, end.value)
            guard bounds.isOrdered else {
                builder.report(file, line, .startAfterEnd, "the range starts at \(start), after its end \(end)")
                return
            }
            builder.add(bounds, country: country, file: file, line: line)
        case .maxMind:
            break
        }
    }

    /// Reads MaxMind's locations file (geoname id → country), then the blocks files.
    private static func readMaxMind(
        locationsName: String, locations: inout LineReader, blocks: inout [(String, LineReader)], limits: Limits
    ) throws(CountryTableError) -> CountryTable {
        var builder = Builder(limits: limits)
        let locationsFile = builder.addFile(locationsName)
        // Geoname id → packed country code (`Builder.noCountry` for a continent-only row) and the line defining it.
        var geonames: [Int: (country: UInt16, line: Int)] = [:]
        var idColumn = 0
        var isoColumn = 0
        var columns = 0
        while !builder.isStopped, let line = locations.next() {
            guard case .text(let number, let bytes) = line else {
                builder.report(locationsFile, line.number, .lineTooLong, "the line is longer than \(maximumLineLength) bytes")
                continue
            }
            if isBlank(bytes) { continue }
            guard let fields = fields(bytes) else {
                builder.report(locationsFile, number, .wrongColumnCount, "the quotes do not balance")
                continue
            }
            if columns == 0 {
                let header = fields.map(text)
                guard let id = header.firstIndex(of: "geoname_id"), let iso = header.firstIndex(of: "country_iso_code") else {
                    builder.report(
                        locationsFile, number, .unrecognisedLayout,
                        "expected the MaxMind header geoname_id,locale_code,continent_code,continent_name,country_iso_code,…")
                    break
                }
                (idColumn, isoColumn, columns) = (id, iso, fields.count)
                continue
            }
            guard fields.count == columns else {
                builder.report(locationsFile, number, .wrongColumnCount, "expected \(columns) columns as in the header, found \(fields.count)")
                continue
            }
            guard let id = geonameID(fields[idColumn]) else {
                builder.report(locationsFile, number, .badGeonameID, "\(quoted(fields[idColumn])) is not a geoname id")
                continue
            }
            if let first = geonames[id] {
                builder.report(locationsFile, number, .badGeonameID, "geoname id \(id) is defined twice (first on line \(first.line))")
                continue
            }
            var country = Builder.noCountry
            if !fields[isoColumn].isEmpty {
                guard let code = countryCode(fields[isoColumn], file: locationsFile, line: number, builder: &builder) else { continue }
                country = code
            }
            guard geonames.count < limits.ranges else {
                builder.report(locationsFile, number, .tooLarge, "more than \(limits.ranges) locations")
                break
            }
            geonames[id] = (country, number)
        }
        if let failure = locations.failure { builder.report(locationsFile, nil, failure.code, failure.message) }
        if columns == 0 && builder.problems.isEmpty { builder.report(locationsFile, nil, .empty, "is empty") }
        // Blocks read against a broken locations file would only repeat its problems.
        guard builder.problems.isEmpty else { throw builder.error }

        let locationsFileName = URL(fileURLWithPath: locationsName).lastPathComponent
        for index in blocks.indices where !builder.isStopped {
            let file = builder.addFile(blocks[index].0)
            var columns = 0
            while !builder.isStopped, let line = blocks[index].1.next() {
                guard case .text(let number, let bytes) = line else {
                    builder.report(file, line.number, .lineTooLong, "the line is longer than \(maximumLineLength) bytes")
                    continue
                }
                if isBlank(bytes) { continue }
                guard let fields = fields(bytes) else {
                    builder.report(file, number, .wrongColumnCount, "the quotes do not balance")
                    continue
                }
                if columns == 0 {
                    guard fields.count >= 3, fields[0...2].map(text) == ["network", "geoname_id", "registered_country_geoname_id"] else {
                        builder.report(
                            file, number, .unrecognisedLayout, "expected the MaxMind header network,geoname_id,registered_country_geoname_id,…")
                        break
                    }
                    columns = fields.count
                    continue
                }
                guard fields.count == columns else {
                    builder.report(file, number, .wrongColumnCount, "expected \(columns) columns as in the header, found \(fields.count)")
                    continue
                }
                let bounds = cidrBounds(fields[0], file: file, line: number, builder: &builder)
                // The location's country, else the registered country's.
                var country: UInt16?
                var known = true
                for field in fields[1...2] where !field.isEmpty {
                    guard let id = geonameID(field) else {
                        builder.report(file, number, .badGeonameID, "\(quoted(field)) is not a geoname id")
                        known = false
                        continue
                    }
                    guard let location = geonames[id] else {
                        builder.report(file, number, .badGeonameID, "geoname id \(id) is not in \(locationsFileName)")
                        known = false
                        continue
                    }
                    if country == nil && location.country != Builder.noCountry { country = location.country }
                }
                // Neither names a country: unknown, left out.
                guard let bounds, known, let country else { continue }
                builder.add(bounds, country: country, file: file, line: number)
            }
            if let failure = blocks[index].1.failure { builder.report(file, nil, failure.code, failure.message) }
            if columns == 0 && builder.problems.isEmpty { builder.report(file, nil, .empty, "is empty") }
        }
        return try builder.finish(layout: .maxMind)
    }
}

// MARK: - Fields

extension CountryTable {
    /// The fields of one CSV line (RFC 4180 quotes; blanks around a field dropped); `nil` when the quotes do not
    /// balance.
    private static func fields(_ line: ArraySlice<UInt8>) -> [ArraySlice<UInt8>]? {
        let comma = UInt8(ascii: ",")
        let quote = UInt8(ascii: "\"")
        func blank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        var fields: [ArraySlice<UInt8>] = []
        var index = line.startIndex
        while true {
            while index < line.endIndex && blank(line[index]) { index += 1 }
            if index < line.endIndex && line[index] == quote {
                var value: [UInt8] = []
                var closed = false
                index += 1
                while index < line.endIndex {
                    if line[index] == quote {
                        if index + 1 < line.endIndex && line[index + 1] == quote {
                            value.append(quote)
                            index += 2
                            continue
                        }
                        closed = true
                        index += 1
                        break
                    }
                    value.append(line[index])
                    index += 1
                }
                while index < line.endIndex && blank(line[index]) { index += 1 }
                guard closed, index == line.endIndex || line[index] == comma else { return nil }
                fields.append(value[...])
            } else {
                let start = index
                while index < line.endIndex && line[index] != comma { index += 1 }
                var end = index
                while end > start && blank(line[end - 1]) { end -= 1 }
                fields.append(line[start..<end])
            }
            if index == line.endIndex { return fields }
            index += 1  // the comma
        }
    }

    private static func isBlank(_ line: ArraySlice<UInt8>) -> Bool {
        line.allSatisfy { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
    }

    private static func text(_ field: ArraySlice<UInt8>) -> String { String(decoding: field, as: UTF8.self) }

    /// A country code as two letters packed into 0..<676 (`AA` is 0); reports a problem when `field` is not two
    /// ASCII letters. Lower case is accepted and normalised.
    private static func countryCode(_ field: ArraySlice<UInt8>, file: Int, line: Int, builder: inout Builder) -> UInt16? {
        func letter(_ byte: UInt8) -> UInt16? {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): UInt16(byte - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): UInt16(byte - UInt8(ascii: "a"))
            default: nil
            }
        }
        guard field.count == 2, let first = letter(field[field.startIndex]), let second = letter(field[field.startIndex + 1]) else {
            builder.report(file, line, .badCountryCode, "\(quoted(field)) is not a country code (two letters, ISO 3166-1 alpha-2)")
            return nil
        }
        return first * 26 + second
    }

    private static func geonameID(_ field: ArraySlice<UInt8>) -> Int? { decimal(field, maximumDigits: 12) }

    /// One to `maximumDigits` ASCII digits.
    fileprivate static func decimal(_ field: ArraySlice<UInt8>, maximumDigits: Int) -> Int? {
        guard (1...maximumDigits).contains(field.count) else { return nil }
        var value = 0
        for byte in field {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }

    /// The first and last address of a CIDR range; reports a problem for text that is not one, or whose address has
    /// bits set past the prefix. An IPv4 range written as IPv4-mapped IPv6 (`::ffff:192.0.2.0/120`) is IPv4.
    private static func cidrBounds(_ field: ArraySlice<UInt8>, file: Int, line: Int, builder: inout Builder) -> Bounds? {
        guard let (network, prefixLength) = cidr(field) else {
            builder.report(file, line, .badAddress, "\(quoted(field)) is not an IP address range (address/prefix length)")
            return nil
        }
        let hostMask: UInt128 = prefixLength == 0 ? .max : (1 << UInt128(128 - prefixLength)) - 1
        guard network.value & hostMask == 0 else {
            builder.report(file, line, .badAddress, "\(quoted(field)) has bits set past its prefix length (not the first address of its range)")
            return nil
        }
        if network.isIPv4 && prefixLength >= 96 {
            return .v4(UInt32(truncatingIfNeeded: network.value), UInt32(truncatingIfNeeded: network.value | hostMask))
        }
        return .v6(network.value, network.value | hostMask)
    }

    /// Text from the file for a message: printable ASCII only, at most 64 characters, in quotes.
    fileprivate static func quoted(_ field: ArraySlice<UInt8>) -> String {
        let printable = field.prefix(64).map { $0 >= 0x20 && $0 < 0x7F ? $0 : UInt8(ascii: "?") }
        return "'\(String(decoding: printable, as: UTF8.self))\(field.count > 64 ? "..." : "")'"
    }

    fileprivate static func format(_ value: UInt32) -> String {
        "\(value >> 24).\((value >> 16) & 0xFF).\((value >> 8) & 0xFF).\(value & 0xFF)"
    }

    /// IPv6 text with the longest run of two or more zero groups shortened to `::` (RFC 5952).
    fileprivate static func format(_ value: UInt128) -> String {
        let groups = (0..<8).map { UInt16(truncatingIfNeeded: value >> UInt128(112 - 16 * $0)) }
        var best = (start: 0, count: 0)
        var run = (start: 0, count: 0)
        for (index, group) in groups.enumerated() {
            if group == 0 {
                if run.count == 0 { run.start = index }
                run.count += 1
                if run.count > best.count { best = run }
            } else {
                run.count = 0
            }
        }
        let text = groups.map { String($0, radix: 16) }
        guard best.count >= 2 else { return text.joined(separator: ":") }
        return text[..<best.start].joined(separator: ":") + "::" + text[(best.start + best.count)...].joined(separator: ":")
    }
}

// MARK: - Addresses

/// An address as the table reads it: 128 bits, IPv4 as IPv4-mapped IPv6, as in `IPAddress`.
struct TableAddress: Equatable, CustomStringConvertible {
    var value: UInt128
    var isIPv4: Bool

    var description: String { isIPv4 ? CountryTable.format(UInt32(truncatingIfNeeded: value)) : CountryTable.format(value) }
}

extension CountryTable {
    /// An address read from bytes. The plain forms (`192.0.2.1`, hexadecimal groups with at most one `::`) are read
    /// here, without building a string; anything else goes through `IPAddress`, so what is accepted, and as what, is
    /// always `IPAddress`'s.
    static func address(_ field: ArraySlice<UInt8>) -> TableAddress? {
        if let v4 = plainIPv4(field) { return TableAddress(value: 0xFFFF_0000_0000 | UInt128(v4), isIPv4: true) }
        if let v6 = plainIPv6(field) { return TableAddress(value: v6, isIPv4: v6 >> 32 == 0xFFFF) }
        guard let address = IPAddress(text(field)) else { return nil }
        return TableAddress(value: UInt128(address.high) << 64 | UInt128(address.low), isIPv4: address.isIPv4)
    }

    /// A CIDR range's network and prefix length in the 128-bit space (`IPRange`'s rule: an IPv4 /24 is /120), read as
    /// `address(_:)` reads addresses: plain forms here, anything else through `IPRange`.
    static func cidr(_ field: ArraySlice<UInt8>) -> (network: TableAddress, prefixLength: Int)? {
        if let slash = field.firstIndex(of: UInt8(ascii: "/")), let length = decimal(field[(slash + 1)...], maximumDigits: 3) {
            let text = field[..<slash]
            if let v4 = plainIPv4(text) {
                guard length <= 32 else { return nil }
                return (TableAddress(value: 0xFFFF_0000_0000 | UInt128(v4), isIPv4: true), 96 + length)
            }
            if let v6 = plainIPv6(text) {
                guard length <= 128 else { return nil }
                return (TableAddress(value: v6, isIPv4: v6 >> 32 == 0xFFFF), length)
            }
        }
        guard let range = IPRange(text(field)) else { return nil }
        let network = TableAddress(value: UInt128(range.network.high) << 64 | UInt128(range.network.low), isIPv4: range.network.isIPv4)
        return (network, range.prefixLength)
    }

    /// Four decimal octets of one to three digits each, as `IPAddress` reads them; `nil` for anything else.
    private static func plainIPv4(_ field: ArraySlice<UInt8>) -> UInt32? {
        var value: UInt32 = 0
        var octet: UInt32 = 0
        var digits = 0
        var dots = 0
        for byte in field {
            if byte == UInt8(ascii: ".") {
                guard digits > 0, dots < 3 else { return nil }
                value = value << 8 | octet
                (octet, digits, dots) = (0, 0, dots + 1)
            } else {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte), digits < 3 else { return nil }
                octet = octet * 10 + UInt32(byte - UInt8(ascii: "0"))
                guard octet <= 255 else { return nil }
                digits += 1
            }
        }
        guard dots == 3, digits > 0 else { return nil }
        return value << 8 | octet
    }

    /// Groups of one to four hexadecimal digits separated by `:`, eight of them or fewer with one `::`; `nil` for
    /// anything else (an embedded IPv4 address, a zone, brackets: `IPAddress` reads those).
    private static func plainIPv6(_ field: ArraySlice<UInt8>) -> UInt128? {
        func hex(_ byte: UInt8) -> UInt128? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt128(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt128(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt128(byte - UInt8(ascii: "A") + 10)
            default: nil
            }
        }
        let colon = UInt8(ascii: ":")
        var index = field.startIndex
        var head: UInt128 = 0
        var tail: UInt128 = 0
        var headCount = 0
        var tailCount = 0
        var compressed = false
        if field.count >= 2 && field[index] == colon && field[index + 1] == colon {
            compressed = true
            index += 2
        }
        while index < field.endIndex {
            var group: UInt128 = 0
            var digits = 0
            while index < field.endIndex && digits < 4, let digit = hex(field[index]) {
                group = group << 4 | digit
                digits += 1
                index += 1
            }
            guard digits > 0 else { return nil }
            if compressed {
                tail = tail << 16 | group
                tailCount += 1
            } else {
                head = head << 16 | group
                headCount += 1
            }
            guard headCount + tailCount <= 8 else { return nil }
            guard index < field.endIndex else { break }
            guard field[index] == colon else { return nil }
            index += 1
            if index < field.endIndex && field[index] == colon {
                guard !compressed else { return nil }
                compressed = true
                index += 1
            } else if index == field.endIndex {
                return nil  // a single trailing colon
            }
        }
        if compressed {
            guard headCount + tailCount <= 7 else { return nil }
            return headCount == 0 ? tail : head << UInt128(16 * (8 - headCount)) | tail
        }
        guard headCount == 8 else { return nil }
        return head
    }
}

// MARK: - Building

/// The bounds of one range, inclusive.
private enum Bounds {
    case v4(UInt32, UInt32)
    case v6(UInt128, UInt128)

    var isOrdered: Bool {
        switch self {
        case .v4(let start, let end): start <= end
        case .v6(let start, let end): start <= end
        }
    }
}

/// A range while the table is built: its bounds, its country's index, and where it was read.
private protocol Entry {
    associatedtype Bound: FixedWidthInteger
    var start: Bound { get }
    var end: Bound { get }
    var country: UInt16 { get }
    var file: UInt8 { get }
    var line: UInt32 { get }
}

private struct V4Entry: Entry {
    var start: UInt32
    var end: UInt32
    var line: UInt32
    var country: UInt16
    var file: UInt8
}

private struct V6Entry: Entry {
    var start: UInt128
    var end: UInt128
    var line: UInt32
    var country: UInt16
    var file: UInt8
}

/// Collects ranges and problems; ``finish(layout:)`` sorts, checks overlaps and builds the table.
private struct Builder {
    /// The packed code of a MaxMind location without a country (a continent).
    static let noCountry = UInt16.max
    /// `ZZ`, packed: unknown.
    static let unknownCountry: UInt16 = 25 * 26 + 25

    private(set) var problems: [CountryTableError.Problem] = []
    private var files: [String] = []
    private var v4: [V4Entry] = []
    private var v6: [V6Entry] = []
    private var codes: [String] = []
    /// Packed code → index in `codes`, `UInt16.max` when not seen yet.
    private var codeIndexes = [UInt16](repeating: .max, count: 26 * 26)
    private var full = false
    private let limits: CountryTable.Limits

    init(limits: CountryTable.Limits) { self.limits = limits }

    var isStopped: Bool { full || problems.count >= CountryTableError.maximumProblems }

    var error: CountryTableError { CountryTableError(problems: problems, stoppedEarly: isStopped) }

    mutating func addFile(_ name: String) -> Int {
        files.append(name)
        return files.count - 1
    }

    mutating func report(_ file: Int, _ line: Int?, _ code: CountryTableError.Code, _ message: String) {
        guard !isStopped else { return }
        problems.append(CountryTableError.Problem(file: files[file], line: line, code: code, message: message))
    }

    mutating func add(_ bounds: Bounds, country: UInt16, file: Int, line: Int) {
        guard country != Self.unknownCountry else { return }
        guard v4.count + v6.count < limits.ranges else {
            report(file, line, .tooLarge, "more than \(limits.ranges) ranges")
            full = true
            return
        }
        if codeIndexes[Int(country)] == .max {
            codeIndexes[Int(country)] = UInt16(codes.count)
            let letters = [UInt8(ascii: "A") + UInt8(country / 26), UInt8(ascii: "A") + UInt8(country % 26)]
            codes.append(String(decoding: letters, as: UTF8.self))
        }
        let index = codeIndexes[Int(country)]
        let line = UInt32(clamping: line)
        switch bounds {
        case .v4(let start, let end): v4.append(V4Entry(start: start, end: end, line: line, country: index, file: UInt8(clamping: file)))
        case .v6(let start, let end): v6.append(V6Entry(start: start, end: end, line: line, country: index, file: UInt8(clamping: file)))
        }
    }

    mutating func finish(layout: CountryTable.Layout) throws(CountryTableError) -> CountryTable {
        var entries4 = v4
        v4 = []
        sortAndCheck(&entries4, format: CountryTable.format)
        v4 = entries4
        var entries6 = v6
        v6 = []
        sortAndCheck(&entries6, format: CountryTable.format)
        v6 = entries6
        if problems.isEmpty && v4.isEmpty && v6.isEmpty {
            report(files.count - 1, nil, .empty, "holds no address range with a known country")
        }
        guard problems.isEmpty else { throw error }
        return CountryTable(layout: layout, v4: v4, v6: v6, codes: codes)
    }

    /// Sorts `entries` by start and reports every range that overlaps one before it, on the later line of the two.
    private mutating func sortAndCheck<E: Entry>(_ entries: inout [E], format: (E.Bound) -> String) {
        guard !isStopped, !entries.isEmpty else { return }
        if entries.indices.dropFirst().contains(where: { entries[$0 - 1].start > entries[$0].start }) {
            entries.sort { $0.start < $1.start || ($0.start == $1.start && $0.end < $1.end) }
        }
        // The range reaching furthest so far: the only one a later range can overlap without overlapping its neighbour.
        var reach = 0
        for index in entries.indices.dropFirst() where !isStopped {
            let (earlier, current) = (entries[reach], entries[index])
            guard current.start <= earlier.end else {
                reach = index
                continue
            }
            let (first, second) = (earlier.file, earlier.line) < (current.file, current.line) ? (earlier, current) : (current, earlier)
            let place = first.file == second.file ? "line \(first.line)" : "line \(first.line) of \(files[Int(first.file)])"
            report(
                Int(second.file), Int(second.line), .overlap,
                "the range \(format(second.start)) to \(format(second.end)) (\(codes[Int(second.country)])) overlaps "
                    + "\(format(first.start)) to \(format(first.end)) (\(codes[Int(first.country)])) on \(place)")
            if current.end > earlier.end { reach = index }
        }
    }
}

// MARK: - Lines

/// The lines of a file or of bytes in memory, read in chunks of 1 MiB: never more than a chunk and a line held.
private struct LineReader {
    enum Line {
        case text(Int, ArraySlice<UInt8>)
        /// A line longer than ``CountryTable/maximumLineLength``, skipped.
        case tooLong(Int)

        var number: Int {
            switch self {
            case .text(let number, _), .tooLong(let number): number
            }
        }
    }

    private static let chunkSize = 1 << 20
    private var buffer: [UInt8]
    private var position = 0
    private var handle: FileHandle?
    private var lineNumber = 0
    private var bytesRead = 0
    private let maximumSize: Int
    /// Why reading stopped early, for a file that could not be read to its end.
    private(set) var failure: (code: CountryTableError.Code, message: String)?

    /// Bytes in memory, already read: no size limit.
    init(bytes: [UInt8]) {
        buffer = bytes
        handle = nil
        maximumSize = .max
    }

    /// A file, read no further than `maximumSize` bytes.
    init(path: String, maximumSize: Int) throws(CountryTableError) {
        self.maximumSize = maximumSize
        do {
            handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        } catch {
            throw CountryTableError(file: path, .unreadable, "cannot be opened for reading")
        }
        buffer = []
    }

    mutating func close() {
        try? handle?.close()
        handle = nil
    }

    /// The next line without its end of line (`\n` or `\r\n`), a UTF-8 byte order mark dropped from the first;
    /// `nil` at the end.
    mutating func next() -> Line? {
        var scanned = 0  // bytes past `position` known to hold no newline
        while true {
            if let newline = firstNewline(from: position + scanned) {
                let line = take(upTo: newline)
                position = newline + 1
                return line
            }
            if buffer.count - position > CountryTable.maximumLineLength + 1 {
                lineNumber += 1
                let number = lineNumber
                skipLine()
                return .tooLong(number)
            }
            scanned = buffer.count - position
            guard refill() else {
                // The end: what is left is the last line, unless reading failed midway (then it is cut short).
                guard failure == nil, position < buffer.count else { return nil }
                let line = take(upTo: buffer.count)
                position = buffer.count
                return line
            }
        }
    }

    private mutating func take(upTo end: Int) -> Line {
        lineNumber += 1
        var start = position
        var end = end
        if end > start && buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        if lineNumber == 1 && end - start >= 3 && buffer[start] == 0xEF && buffer[start + 1] == 0xBB && buffer[start + 2] == 0xBF { start += 3 }
        guard end - start <= CountryTable.maximumLineLength else { return .tooLong(lineNumber) }
        return .text(lineNumber, buffer[start..<end])
    }

    private func firstNewline(from start: Int) -> Int? {
        buffer.withUnsafeBufferPointer { bytes in
            var index = start
            while index < bytes.count {
                if bytes[index] == UInt8(ascii: "\n") { return index }
                index += 1
            }
            return nil
        }
    }

    /// Drops everything up to and including the next newline.
    private mutating func skipLine() {
        while true {
            if let newline = firstNewline(from: position) {
                position = newline + 1
                return
            }
            position = buffer.count
            guard refill() else { return }
        }
    }

    /// Appends the next chunk of the file, dropping the bytes already consumed; false at the end (or on an error).
    private mutating func refill() -> Bool {
        guard let handle else { return false }
        let chunk: Data?
        do {
            chunk = try handle.read(upToCount: Self.chunkSize)
        } catch {
            failure = (.unreadable, "could not be read to its end")
            close()
            return false
        }
        guard let chunk, !chunk.isEmpty else {
            close()
            return false
        }
        bytesRead += chunk.count
        guard bytesRead <= maximumSize else {
            failure = (.tooLarge, "is larger than \(maximumSize) bytes, too large for a country table")
            close()
            return false
        }
        buffer.removeSubrange(0..<position)
        position = 0
        buffer.append(contentsOf: chunk)
        return true
    }
}

// MARK: - Errors

/// A country table was refused: every problem found, up to ``maximumProblems``, each with its file and 1-based line.
public struct CountryTableError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of problem. A struct over a private enum, so that new kinds don't break callers.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable {
            case unreadable, unrecognisedLayout, lineTooLong, wrongColumnCount, badAddress, startAfterEnd, mixedFamilies
            case badCountryCode, badGeonameID, overlap, tooLarge, empty
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The file or directory does not exist or cannot be read.
        public static let unreadable = Code(.unreadable)
        /// The first line (or a MaxMind header) fits none of the layouts.
        public static let unrecognisedLayout = Code(.unrecognisedLayout)
        /// A line is longer than ``CountryTable/maximumLineLength`` bytes.
        public static let lineTooLong = Code(.lineTooLong)
        /// A line has the wrong number of columns, or quotes that do not balance.
        public static let wrongColumnCount = Code(.wrongColumnCount)
        /// Not an IP address, not a CIDR range, or a CIDR address with bits set past its prefix.
        public static let badAddress = Code(.badAddress)
        /// A range starts after its end.
        public static let startAfterEnd = Code(.startAfterEnd)
        /// A range's start is IPv4 and its end IPv6, or the other way round.
        public static let mixedFamilies = Code(.mixedFamilies)
        /// Not two ASCII letters.
        public static let badCountryCode = Code(.badCountryCode)
        /// A MaxMind geoname id that is not a number, is not in the locations file, or is defined twice there.
        public static let badGeonameID = Code(.badGeonameID)
        /// A range overlaps another (reported on the later line of the two).
        public static let overlap = Code(.overlap)
        /// More than ``CountryTable/maximumRanges`` ranges (or MaxMind locations), or a file larger than
        /// ``CountryTable/maximumFileSize``.
        public static let tooLarge = Code(.tooLarge)
        /// No range with a known country at all.
        public static let empty = Code(.empty)

        /// The kind's name, e.g. `badAddress`.
        public var description: String { base.rawValue }
    }

    /// One problem: where, what kind, and a sentence.
    public struct Problem: Sendable, Equatable, CustomStringConvertible {
        /// The file as named by the operator (or the name given to `parse`).
        public let file: String
        /// The 1-based line; `nil` for a problem with the whole file.
        public let line: Int?
        /// What kind of problem.
        public let code: Code
        /// A sentence for the operator; text quoted from the file is cut to printable ASCII.
        public let message: String

        /// `countries.csv:17: 'x.y' is not an IP address`.
        public var description: String { line.map { "\(file):\($0): \(message)" } ?? "\(file): \(message)" }
    }

    /// Reading stops at this many problems.
    public static let maximumProblems = 20

    /// The problems, in the order found (line problems file by file, then overlaps).
    public let problems: [Problem]
    /// True when reading stopped before the end (``maximumProblems`` reached, or too many ranges): there may be more.
    public let stoppedEarly: Bool

    init(problems: [Problem], stoppedEarly: Bool) {
        self.problems = problems
        self.stoppedEarly = stoppedEarly
    }

    init(file: String, line: Int? = nil, _ code: Code, _ message: String) {
        self.init(problems: [Problem(file: file, line: line, code: code, message: message)], stoppedEarly: false)
    }

    /// One problem a line, then a note when reading stopped early.
    public var description: String {
        (problems.map(\.description) + (stoppedEarly ? ["(stopped after \(problems.count) problems)"] : [])).joined(separator: "\n")
    }
}
