public import Foundation

/// Graph's `agreement` (PROTOCOL §17): terms of use a conditional-access policy may require (`grantControls.termsOfUse`).
/// One file per language, a PDF or plain text, one of them the default; the sign-in page shows the user's language and
/// records the acceptance (`AgreementAcceptance`). An acceptance lasts until `userReacceptRequiredFrequency` has passed,
/// and never across a boundary of `termsExpiration`.
public struct Agreement: Codable, Sendable, Equatable {
    public var id: PolicyID
    public var displayName: String
    /// The user must open the file before accepting (a PDF; a text shown whole on the page is viewed).
    public var isViewingBeforeAcceptanceRequired: Bool
    /// Graph's per-device acceptance: needs device identity (§18); accepted only as `false` until devices land.
    public var isPerDeviceAcceptanceRequired: Bool
    /// An ISO 8601 duration (`P90D`) after which the user accepts again; `nil`: once.
    public var userReacceptRequiredFrequency: String?
    public var termsExpiration: TermsExpiration?
    public var files: [AgreementFile]

    /// Graph's `termsExpiration`: every acceptance ends at `startDateTime` and then every `frequency`.
    public struct TermsExpiration: Codable, Sendable, Equatable {
        public var startDateTime: Date
        public var frequency: String

        public init(startDateTime: Date, frequency: String) {
            self.startDateTime = startDateTime
            self.frequency = frequency
        }

        enum CodingKeys: String, CodingKey { case startDateTime, frequency }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let text = try container.decode(String.self, forKey: .startDateTime)
            guard let date = ISO8601.date(text) else {
                throw DecodingError.dataCorruptedError(forKey: .startDateTime, in: container, debugDescription: "not ISO 8601")
            }
            startDateTime = date
            frequency = try container.decode(String.self, forKey: .frequency)
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(ISO8601.string(startDateTime), forKey: .startDateTime)
            try container.encode(frequency, forKey: .frequency)
        }

        /// The last boundary at or before `now` (`nil` before the first).
        public func lastBoundary(before now: Date) -> Date? {
            guard now >= startDateTime, let period = ISODuration.seconds(frequency), period > 0 else { return now >= startDateTime ? startDateTime : nil }
            let periods = (now.timeIntervalSince(startDateTime) / period).rounded(.down)
            return startDateTime.addingTimeInterval(periods * period)
        }
    }

    public init(
        id: PolicyID, displayName: String, files: [AgreementFile], isViewingBeforeAcceptanceRequired: Bool = false,
        userReacceptRequiredFrequency: String? = nil, termsExpiration: TermsExpiration? = nil
    ) {
        self.id = id
        self.displayName = displayName
        self.files = files
        self.isViewingBeforeAcceptanceRequired = isViewingBeforeAcceptanceRequired
        self.isPerDeviceAcceptanceRequired = false
        self.userReacceptRequiredFrequency = userReacceptRequiredFrequency
        self.termsExpiration = termsExpiration
    }

    /// At most this many files (languages), each at most this many bytes; at most this many agreements in a tenant.
    public static let maximumFiles = 10
    public static let maximumFileBytes = 512 * 1024
    public static let maximumPerTenant = 50

    /// Whether Accept counts only once the user has opened `file`: the agreement asks for viewing and the file is a PDF
    /// (a text is shown whole on the page, so it has been seen).
    public func mustBeOpened(_ file: AgreementFile) -> Bool { isViewingBeforeAcceptanceRequired && file.format == .pdf }

    /// The file for the first of `languages` (BCP 47, the user's preference order) that the agreement has — by the whole
    /// tag, then by its primary subtag — else the default file.
    public func file(for languages: [String]) -> AgreementFile? {
        for wanted in languages.map({ $0.lowercased() }) {
            if let exact = files.first(where: { $0.language.lowercased() == wanted }) { return exact }
            let primary = wanted.split(separator: "-").first.map(String.init) ?? wanted
            if let close = files.first(where: { $0.language.lowercased().split(separator: "-").first.map(String.init) == primary }) { return close }
        }
        return files.first(where: \.isDefault) ?? files.first
    }

    /// Whether `acceptance` (this agreement's, the user's latest) still counts at `now`.
    public func isCurrent(_ acceptance: AgreementAcceptance, at now: Date) -> Bool {
        guard acceptance.state == .accepted, acceptance.agreementId == id else { return false }
        if let expiration = acceptance.expirationDateTime, expiration <= now { return false }
        if let boundary = termsExpiration?.lastBoundary(before: now), acceptance.recordedDateTime < boundary { return false }
        return true
    }

    /// As answers show it (Graph's shape): each file with its size and format, never its bytes.
    public var presented: JSONValue {
        var object: [String: JSONValue] = [
            "id": .string(id.rawValue), "displayName": .string(displayName), "isViewingBeforeAcceptanceRequired": .bool(isViewingBeforeAcceptanceRequired),
            "isPerDeviceAcceptanceRequired": .bool(isPerDeviceAcceptanceRequired),
            "userReacceptRequiredFrequency": userReacceptRequiredFrequency.map(JSONValue.string) ?? .null,
            "termsExpiration": termsExpiration.map {
                .object(["startDateTime": .string(ISO8601.string($0.startDateTime)), "frequency": .string($0.frequency)])
            } ?? .null,
        ]
        object["files"] = .array(
            files.map { file in
                .object([
                    "id": .string(file.id.rawValue), "fileName": .string(file.fileName), "displayName": file.displayName.map(JSONValue.string) ?? .null,
                    "language": .string(file.language), "isDefault": .bool(file.isDefault), "format": .string(file.format.rawValue),
                    "size": .number(Double(file.data.count)),
                ])
            })
        return .object(object)
    }

    /// When an acceptance recorded at `time` ends by the re-acceptance frequency (`nil`: never).
    public func expiration(ofAcceptanceAt time: Date) -> Date? {
        userReacceptRequiredFrequency.flatMap(ISODuration.seconds).map { time.addingTimeInterval($0) }
    }
}

/// Graph's `agreementFileLocalization`: one language's file. The bytes are stored; answers show the size, not the bytes.
public struct AgreementFile: Codable, Sendable, Equatable {
    public enum Format: String, Codable, Sendable {
        case pdf, text
    }

    public var id: RecordID
    public var fileName: String
    public var displayName: String?
    /// BCP 47 (`en`, `en-US`, `fr`).
    public var language: String
    public var isDefault: Bool
    public var format: Format
    public var data: Data

    public init(id: RecordID, fileName: String, language: String, isDefault: Bool, data: Data, displayName: String? = nil) {
        self.id = id
        self.fileName = fileName
        self.language = language
        self.isDefault = isDefault
        self.data = data
        self.displayName = displayName
        self.format = Self.format(of: data) ?? .text
    }

    /// PDF by its signature, text when it is UTF-8 without control characters other than whitespace; `nil`: neither.
    public static func format(of data: Data) -> Format? {
        if data.starts(with: Array("%PDF-".utf8)) { return .pdf }
        guard let text = String(data: data, encoding: .utf8) else { return nil }
        let allowed = text.unicodeScalars.allSatisfy { $0.value >= 0x20 || $0 == "\n" || $0 == "\r" || $0 == "\t" }
        return allowed && !text.contains("\u{7F}") ? .text : nil
    }

    /// The `Content-Type` the page serves it with.
    public var contentType: String { format == .pdf ? "application/pdf" : "text/plain; charset=utf-8" }

    /// The text, for a text file.
    public var text: String? { format == .text ? String(decoding: data, as: UTF8.self) : nil }
}

/// Graph's `agreementAcceptance`: a user's latest answer to an agreement, stored under `{agreementId}_{userId}`.
public struct AgreementAcceptance: Codable, Sendable, Equatable {
    public enum State: String, Codable, Sendable {
        case accepted, declined
    }

    public var id: String
    public var agreementId: PolicyID
    public var agreementFileId: RecordID
    public var userId: ObjectID
    public var userPrincipalName: String
    public var recordedDateTime: Date
    public var state: State
    public var expirationDateTime: Date?

    public init(agreement: Agreement, file: AgreementFile, user: User, state: State, at time: Date) {
        self.id = Self.id(agreementId: agreement.id, userId: user.id)
        self.agreementId = agreement.id
        self.agreementFileId = file.id
        self.userId = user.id
        self.userPrincipalName = user.userPrincipalName
        self.recordedDateTime = time
        self.state = state
        self.expirationDateTime = state == .accepted ? agreement.expiration(ofAcceptanceAt: time) : nil
    }

    public static func id(agreementId: PolicyID, userId: ObjectID) -> String { "\(agreementId)_\(userId)" }

    enum CodingKeys: String, CodingKey {
        case id, agreementId, agreementFileId, userId, userPrincipalName, recordedDateTime, state, expirationDateTime
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        agreementId = try container.decode(PolicyID.self, forKey: .agreementId)
        agreementFileId = try container.decode(RecordID.self, forKey: .agreementFileId)
        userId = try container.decode(ObjectID.self, forKey: .userId)
        userPrincipalName = try container.decode(String.self, forKey: .userPrincipalName)
        state = try container.decode(State.self, forKey: .state)
        func date(_ key: CodingKeys) throws -> Date? {
            guard let text = try container.decodeIfPresent(String.self, forKey: key) else { return nil }
            guard let date = ISO8601.date(text) else { throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "not ISO 8601") }
            return date
        }
        guard let recorded = try date(.recordedDateTime) else {
            throw DecodingError.keyNotFound(CodingKeys.recordedDateTime, .init(codingPath: decoder.codingPath, debugDescription: "missing"))
        }
        recordedDateTime = recorded
        expirationDateTime = try date(.expirationDateTime)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(agreementId, forKey: .agreementId)
        try container.encode(agreementFileId, forKey: .agreementFileId)
        try container.encode(userId, forKey: .userId)
        try container.encode(userPrincipalName, forKey: .userPrincipalName)
        try container.encode(ISO8601.string(recordedDateTime), forKey: .recordedDateTime)
        try container.encode(state, forKey: .state)
        try container.encodeIfPresent(expirationDateTime.map(ISO8601.string), forKey: .expirationDateTime)
    }
}

/// ISO 8601 durations as Graph writes them (`P90D`, `P1Y`, `PT12H`, `P2W`): years as 365 days, months as 30.
public enum ISODuration {
    public static func seconds(_ text: String) -> TimeInterval? {
        var rest = Substring(text.uppercased())
        guard rest.hasPrefix("P"), rest.count > 1 else { return nil }
        rest = rest.dropFirst()
        var total: TimeInterval = 0
        var inTime = false
        var number = ""
        var any = false
        for character in rest {
            if character == "T" {
                guard !inTime, number.isEmpty else { return nil }
                inTime = true
                continue
            }
            if character.isNumber {
                number.append(character)
                continue
            }
            guard let value = Double(number), value >= 0, value <= 100_000 else { return nil }
            number = ""
            any = true
            switch (character, inTime) {
            case ("Y", false): total += value * 365 * 86_400
            case ("M", false): total += value * 30 * 86_400
            case ("W", false): total += value * 7 * 86_400
            case ("D", false): total += value * 86_400
            case ("H", true): total += value * 3_600
            case ("M", true): total += value * 60
            case ("S", true): total += value
            default: return nil
            }
        }
        return any && number.isEmpty ? total : nil
    }
}
