public import Foundation

extension Agreement {
    /// Reads Graph's `agreement` (PROTOCOL §17) with every problem at its JSON Pointer. A file given with the `id` of one
    /// of `existing`'s files and no `fileData` keeps that file's bytes (what answers show has sizes, not bytes, so an
    /// answer sent back unchanged is the same agreement).
    public static func parse(_ value: JSONValue, existing: Agreement? = nil, generatedId: @autoclosure () -> PolicyID) throws(ValidationError) -> Agreement {
        let problems = ProblemCollector()
        guard let root = JSONObjectReader(value, at: "", problems: problems) else {
            throw ValidationError(problems: [ValidationProblem(pointer: "", message: "must be a JSON object.")])
        }
        root.rejectUnknownGraphMembers(
            allowed: [
                "id", "displayName", "isViewingBeforeAcceptanceRequired", "isPerDeviceAcceptanceRequired", "userReacceptRequiredFrequency",
                "termsExpiration", "files",
            ])
        let id = root.has("id") ? root.guid("id") ?? generatedId() : generatedId()
        let displayName = root.string("displayName", required: true)
        if let displayName, displayName.count > 256 { problems.add(root.path("displayName"), "must be at most 256 characters.") }
        let viewing = root.bool("isViewingBeforeAcceptanceRequired") ?? false
        if root.bool("isPerDeviceAcceptanceRequired") == true {
            problems.add(
                root.path("isPerDeviceAcceptanceRequired"),
                "per-device acceptance needs device identity (devices, PROTOCOL §18), which this server does not have yet; set false.")
        }
        let frequency = root.string("userReacceptRequiredFrequency")
        if let frequency, !Self.validPeriod(frequency) {
            problems.add(
                root.path("userReacceptRequiredFrequency"), "must be an ISO 8601 duration of at least an hour and at most ten years (P90D, P1Y, PT12H).")
        }
        var expiration: TermsExpiration?
        if let e = root.object("termsExpiration") {
            e.rejectUnknownGraphMembers(allowed: ["startDateTime", "frequency"])
            let start = e.string("startDateTime", required: true)
            let period = e.string("frequency", required: true)
            let date = start.flatMap(ISO8601.date)
            if start != nil && date == nil { e.problems.add(e.path("startDateTime"), "must be an ISO 8601 date and time.") }
            if let period, !Self.validPeriod(period) { e.problems.add(e.path("frequency"), "must be an ISO 8601 duration of at least an hour (P365D).") }
            if let date, let period { expiration = TermsExpiration(startDateTime: date, frequency: period) }
        }
        var files: [AgreementFile] = []
        if let items = root.array("files", required: true) {
            if items.isEmpty { problems.add(root.path("files"), "must hold at least one file (a PDF or plain text per language).") }
            if items.count > maximumFiles { problems.add(root.path("files"), "holds \(items.count) files; at most \(maximumFiles).") }
            for (item, pointer) in items.prefix(maximumFiles) {
                guard let file = JSONObjectReader(item, at: pointer, problems: problems) else { continue }
                if let read = Self.file(file, existing: existing) { files.append(read) }
            }
            var languages = Set<String>()
            for (index, file) in files.enumerated() where !languages.insert(file.language.lowercased()).inserted {
                problems.add(JSONPointer.appending(root.path("files"), String(index)) + "/language", "'\(file.language)' has a file already.")
            }
            let defaults = files.filter(\.isDefault).count
            if files.count == 1 {
                files[0].isDefault = true
            } else if files.count > 1 && defaults != 1 {
                problems.add(root.path("files"), "exactly one file must be the default (isDefault), the one shown in a language the agreement lacks.")
            }
        }
        try problems.check()
        guard let displayName else { throw ValidationError(problems: [ValidationProblem(pointer: "/displayName", message: "is required.")]) }
        var agreement = Agreement(
            id: id, displayName: displayName, files: files, isViewingBeforeAcceptanceRequired: viewing, userReacceptRequiredFrequency: frequency,
            termsExpiration: expiration)
        agreement.isPerDeviceAcceptanceRequired = false
        return agreement
    }

    /// At least an hour, at most ten years.
    static func validPeriod(_ text: String) -> Bool {
        guard let seconds = ISODuration.seconds(text) else { return false }
        return seconds >= 3_600 && seconds <= 10 * 365 * 86_400
    }

    static func file(_ file: JSONObjectReader, existing: Agreement?) -> AgreementFile? {
        file.rejectUnknownGraphMembers(
            allowed: ["id", "fileName", "displayName", "language", "isDefault", "fileData"],
            readOnly: ["isMajorVersion", "createdDateTime", "versions", "size", "format"])
        let problems = file.problems
        let given = file.string("id")
        let name = file.string("fileName", required: true)
        let language = file.string("language", required: true)
        if let language, language.count > 35 || !language.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }) {
            problems.add(file.path("language"), "must be a language tag (en, en-US, fr).")
        }
        let displayName = file.string("displayName")
        let isDefault = file.bool("isDefault") ?? false
        var data: Data?
        if let fileData = file.object("fileData") {
            fileData.rejectUnknownGraphMembers(allowed: ["data"])
            if let text = fileData.string("data", required: true) {
                if let decoded = Data(base64Encoded: text, options: .ignoreUnknownCharacters) {
                    data = decoded
                } else {
                    problems.add(fileData.path("data"), "must be base64.")
                }
            }
        } else if let given, let kept = existing?.files.first(where: { $0.id == RecordID(given) }) {
            data = kept.data
        } else {
            problems.add(file.path("fileData"), "is required (the file's bytes in base64) for a new file.")
        }
        if let bytes = data {
            if bytes.count > Agreement.maximumFileBytes {
                problems.add(file.path("fileData"), "holds \(bytes.count) bytes; at most \(Agreement.maximumFileBytes).")
                data = nil
            } else if AgreementFile.format(of: bytes) == nil {
                problems.add(file.path("fileData"), "must be a PDF or UTF-8 plain text.")
                data = nil
            }
        }
        if let given, !given.isGUID { problems.add(file.path("id"), "must be a GUID.") }
        guard let name, let language, let data else { return nil }
        return AgreementFile(
            id: given.flatMap { RecordID(guid: $0) } ?? RecordID.generate(), fileName: name, language: language,
            isDefault: isDefault, data: data, displayName: displayName)
    }
}
