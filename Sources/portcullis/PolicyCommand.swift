import ArgumentParser
import Foundation
import PortcullisCore
import PortcullisServer

struct PolicyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "policy",
        abstract: "Conditional-access policies as code.",
        subcommands: [Validate.self, Apply.self, WhatIf.self, Impact.self, Templates.self, FromTemplate.self]
    )

    struct Validate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Check policy files (conditional access, app protection, app configuration) offline against the configuration's directory; prints file:pointer: message lines."
        )
        @OptionGroup var locations: LocationOptions
        @Option(help: "Tenant (ID or domain) the files are for; default: the directory's only tenant.")
        var tenant: String?
        @Option(help: "A JSON object mapping another directory's object IDs to this one's (PROTOCOL §17).")
        var map: String?
        @Option(help: PolicyImportFiles.unenforceableHelp) var unenforceable = "refuse"
        @Argument(help: "Policy files (JSON): one policy each, or Graph's list ({\"value\": [...]}).")
        var files: [String]

        func run() async throws {
            let keep = try PolicyImportFiles.unenforceable(unenforceable)
            let settings = try locations.settings(environment: ProcessInfo.processInfo.environment)
            let directoryFile = URL(fileURLWithPath: settings.configDirectory).appendingPathComponent("directory.json")
            let document: DirectoryDocument
            do {
                document = try DirectoryDocument.parse(try Data(contentsOf: directoryFile))
            } catch let error as PortcullisCore.ValidationError {
                throw ArgumentParser.ValidationError("\(directoryFile.path) is not valid: \(error.problems.map(\.description).joined(separator: "; "))")
            }
            let snapshots = document.snapshots(revision: 0)
            let directory: DirectorySnapshot?
            if let tenant {
                directory = snapshots.first { $0.matches(tenantSegment: tenant) }
            } else if snapshots.count == 1 {
                directory = snapshots.first
            } else {
                // Files kept as the seeder reads them, in a folder named by their tenant (`conditional-access/contoso.example/`).
                let folders = Set(files.map { URL(fileURLWithPath: $0).deletingLastPathComponent().lastPathComponent })
                directory = folders.count == 1 ? snapshots.first { $0.matches(tenantSegment: folders.first!) } : nil
            }
            guard let directory else {
                throw ArgumentParser.ValidationError(
                    "name the tenant with --tenant (the directory has \(snapshots.count)), or keep the files in a folder named by it.")
            }
            var failures = 0
            var configurations: [AppConfigurationPolicy] = []
            let table = try PolicyImportFiles.map(map)
            for file in files {
                guard let data = FileManager.default.contents(atPath: file), let value = JSONValue.parse(data) else {
                    print("\(file):/: is not valid JSON (or cannot be read).")
                    failures += 1
                    continue
                }
                do {
                    // The kind follows from the document: app protection has `settings`, app configuration `configuration`.
                    if value["settings"] != nil {
                        let policy = try AppProtectionPolicy.parse(value, directory: directory, generatedId: PolicyID("(generated)"))
                        print("\(file): ok (app protection: \(policy.displayName))")
                    } else if value["configuration"] != nil {
                        let policy = try AppConfigurationPolicy.parse(
                            value, directory: directory, others: configurations, generatedId: PolicyID("(generated \(configurations.count))"))
                        configurations.append(policy)
                        print("\(file): ok (app configuration: \(policy.displayName), priority \(policy.priority))")
                    } else {
                        // Conditional access: Graph's list or one policy, each with the map applied.
                        var problems: [ValidationProblem] = []
                        for (element, pointer) in PolicyImport.policies(in: value) {
                            do {
                                let policy = try ConditionalAccessPolicy.parse(
                                    PolicyImport.mapping(element, with: table), directory: directory, generatedId: PolicyID("(generated)"), unenforceable: keep,
                                    pointer: pointer)
                                print("\(file)\(pointer.isEmpty ? "" : "#\(pointer)"): ok (\(policy.displayName), \(policy.state.rawValue))")
                            } catch {
                                problems += error.problems
                            }
                        }
                        if !problems.isEmpty { throw PortcullisCore.ValidationError(problems: problems) }
                    }
                } catch let error as PortcullisCore.ValidationError {
                    for problem in error.problems { print("\(file):\(problem.pointer.isEmpty ? "/" : problem.pointer): \(problem.message)") }
                    failures += 1
                }
            }
            if failures > 0 { throw ExitCode(1) }
        }
    }

    struct Apply: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Push every policy file in a folder through the admin API (idempotent): prints what it created, changed and left alone.")
        @OptionGroup var connection: AdminConnectionOptions
        @Flag(help: "Allow policies that the lock-out guard refuses.")
        var force = false
        @Option(help: "A JSON object mapping another directory's object IDs to this one's (PROTOCOL §17).")
        var map: String?
        @Option(help: PolicyImportFiles.unenforceableHelp) var unenforceable = "refuse"
        @Argument(help: "Folder of policy files (*.json): one policy each, or Graph's list ({\"value\": [...]}).")
        var directory: String

        func run() async throws {
            let keep = try PolicyImportFiles.unenforceable(unenforceable)
            let client = try await connection.client()
            let list = try await client.list("/conditional-access/policies")
            var byId: [String: [String: Any]] = [:]
            var idByName: [String: String] = [:]
            for policy in list {
                if let id = policy["id"] as? String {
                    byId[id] = policy
                    if let name = policy["displayName"] as? String { idByName[name] = id }
                }
            }
            let files = PolicyFiles.list(directory: URL(fileURLWithPath: directory)).map(\.file)
            var counts = (created: 0, changed: 0, unchanged: 0, failed: 0)
            let suffix = Planner(client: client, force: force, unenforceable: keep).query()
            let table = try PolicyImportFiles.map(map)
            var documents: [(name: String, data: Data, object: [String: Any])] = []
            for file in files {
                guard let raw = FileManager.default.contents(atPath: file.path), let value = JSONValue.parse(raw), value.objectValue != nil else {
                    print("failed    \(file.lastPathComponent): not a JSON object")
                    counts.failed += 1
                    continue
                }
                for (element, pointer) in PolicyImport.policies(in: value) {
                    let data = try JSONEncoder().encode(PolicyImport.mapping(element, with: table))
                    let name = file.lastPathComponent + (pointer.isEmpty ? "" : "#\(pointer)")
                    guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                        print("failed    \(name): not a JSON object")
                        counts.failed += 1
                        continue
                    }
                    documents.append((name, data, object))
                }
            }
            for (name, data, object) in documents {
                let id = (object["id"] as? String)?.lowercased() ?? (object["displayName"] as? String).flatMap { idByName[$0] }
                let reply: AdminAPIClient.Reply
                var verb: String
                if let id, byId[id] != nil {
                    let before = try await client.call("GET", "/conditional-access/policies/\(id)")
                    reply = try await client.call("PUT", "/conditional-access/policies/\(id)\(suffix)", body: data, ifMatch: before.etag)
                    verb = reply.etag == before.etag ? "unchanged" : "changed"
                } else {
                    reply = try await client.call("POST", "/conditional-access/policies\(suffix)", body: data)
                    verb = "created"
                }
                if !(200...201).contains(reply.status) {
                    verb = "failed"
                    let details = ((reply.json as? [String: Any])?["error"] as? [String: Any])?["details"] as? [[String: Any]] ?? []
                    for detail in details { print("  \(name):\(detail["pointer"] ?? ""): \(detail["message"] ?? "")") }
                    if details.isEmpty { print("  \(name): HTTP \(reply.status) \(String(decoding: reply.body, as: UTF8.self))") }
                }
                switch verb {
                case "created": counts.created += 1
                case "changed": counts.changed += 1
                case "unchanged": counts.unchanged += 1
                default: counts.failed += 1
                }
                print("\(verb.padding(toLength: 10, withPad: " ", startingAt: 0))\(name)")
                if let note = PolicyImportFiles.reportOnlyNote(asked: object, stored: reply.json as? [String: Any]) { print("  \(name): \(note)") }
            }
            print("created \(counts.created), changed \(counts.changed), left alone \(counts.unchanged), failed \(counts.failed)")
            if counts.failed > 0 { throw ExitCode(1) }
        }
    }

    struct Templates: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List Microsoft's conditional-access templates (ID, name, scenarios).")
        @OptionGroup var connection: AdminConnectionOptions

        func run() async throws {
            let client = try await connection.client()
            for template in try await client.list("/conditional-access/templates") {
                print("\(template["id"] as? String ?? "?")  \(template["name"] as? String ?? "?")  [\(template["scenarios"] as? String ?? "")]")
            }
        }
    }

    struct FromTemplate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "from-template",
            abstract:
                "Create a policy from one of Microsoft's templates as the Entra portal does: report-only unless --state says otherwise, the administrator named excluded."
        )
        @OptionGroup var connection: AdminConnectionOptions
        @Argument(help: "The template's ID (see `portcullis policy templates`).") var template: String
        @Option(help: "The administrator the template excludes (\"Current administrator will be excluded\"): object ID or UPN.")
        var administrator: String?
        @Option(help: "The policy's name (default: the template's).") var name: String?
        @Option(help: "enabled, disabled or enabledForReportingButNotEnforced (the default).") var state: String?
        @Flag(name: .customLong("dry-run"), help: "Validate and show what would be created; store nothing.") var dryRun = false
        @Flag(help: "Allow a policy that the lock-out guard refuses.") var force = false

        func run() async throws {
            let client = try await connection.client()
            var body: [String: Any] = [:]
            if let administrator { body["currentAdministrator"] = administrator }
            if let name { body["displayName"] = name }
            if let state { body["state"] = state }
            let query = [dryRun ? "dryRun=true" : nil, force ? "force=true" : nil].compactMap { $0 }.joined(separator: "&")
            let reply = try await client.call(
                "POST", "/conditional-access/templates/\(template)/instantiate\(query.isEmpty ? "" : "?" + query)",
                body: try JSONSerialization.data(withJSONObject: body))
            let pretty =
                (reply.json).flatMap { try? JSONSerialization.data(withJSONObject: $0, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]) }
                ?? reply.body
            print(String(decoding: pretty, as: UTF8.self))
            if reply.status != 200 && reply.status != 201 { throw ExitCode(1) }
        }
    }

    struct WhatIf: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "whatif", abstract: "Evaluate a described sign-in against the stored policies; issues nothing.")
        @OptionGroup var connection: AdminConnectionOptions
        @Option(help: "User object ID or UPN.") var user: String?
        @Option(help: "Client application ID.") var app: String
        @Option(help: "Resource identifier URI or app ID.") var resource: String
        @Option(help: "iOS, android, windows, macOS or linux.") var platform: String?
        @Option(help: "Client IP address.") var ip: String?
        @Option(help: "Declared capability (repeatable), e.g. protapp.") var capability: [String] = []
        @Option(name: .customLong("app-protection"), help: "compliant, notCompliant or none.") var appProtection: String = "none"

        func run() async throws {
            let client = try await connection.client()
            var signIn: [String: Any] = ["clientAppId": app, "resourceAppId": resource, "capabilities": capability, "appProtection": appProtection]
            if let user { signIn["userId"] = user }
            if let platform { signIn["platform"] = platform }
            if let ip { signIn["ipAddress"] = ip }
            let body = try JSONSerialization.data(withJSONObject: ["signIn": signIn])
            let reply = try await client.call("POST", "/conditional-access/evaluate", body: body)
            let pretty =
                (reply.json).flatMap { try? JSONSerialization.data(withJSONObject: $0, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]) }
                ?? reply.body
            print(String(decoding: pretty, as: UTF8.self))
            if reply.status != 200 { throw ExitCode(1) }
        }
    }

    struct Impact: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "What draft policies would have done to the stored sign-ins of a window (nothing is enforced); prints a table.")
        @OptionGroup var connection: AdminConnectionOptions
        @Option(help: "Start of the window (ISO 8601); default: a week before its end.") var from: String?
        @Option(help: "End of the window (ISO 8601); default: now.") var to: String?
        @Option(help: "At most this many sign-ins, newest first (1–10000).") var top: Int = 1000
        @Argument(help: "Draft policy files (*.json).") var files: [String]

        func run() async throws {
            var drafts: [Any] = []
            for file in files {
                guard let data = FileManager.default.contents(atPath: file), let object = try? JSONSerialization.jsonObject(with: data) else {
                    throw ArgumentParser.ValidationError("\(file): not a JSON document")
                }
                drafts.append(object)
            }
            var request: [String: Any] = ["policies": drafts, "top": top]
            if let from { request["from"] = from }
            if let to { request["to"] = to }
            let reply = try await connection.client().call("POST", "/conditional-access/impact", body: try JSONSerialization.data(withJSONObject: request))
            guard reply.status == 200, let report = reply.json as? [String: Any] else {
                print(String(decoding: reply.body, as: UTF8.self))
                throw ExitCode(1)
            }
            print(Self.table(report))
        }

        static func outcome(_ value: Any?) -> String {
            guard let side = value as? [String: Any] else { return "?" }
            guard let refusal = side["refusal"] as? String else { return "allowed" }
            return "refused (\(refusal))"
        }

        /// The summary line, then one row per changed sign-in.
        static func table(_ report: [String: Any]) -> String {
            let summary = report["summary"] as? [String: Any] ?? [:]
            func count(_ key: String) -> Int { summary[key] as? Int ?? 0 }
            var lines = [
                "evaluated \(report["evaluated"] as? Int ?? 0) sign-ins: \(count("newlyRefused")) newly refused, \(count("newlyAllowed")) newly allowed, "
                    + "\(count("changed")) refused for another reason, \(count("unchanged")) unchanged"
            ]
            let changes = report["changes"] as? [[String: Any]] ?? []
            guard !changes.isEmpty else { return lines.joined(separator: "\n") }
            // An aggregate of the sign-in log (issue 32) stands for several sign-ins: its count.
            let header = ["when", "sign-ins", "user", "client app", "resource", "before", "after"]
            let rows = changes.map { change in
                [
                    String((change["createdDateTime"] as? String ?? "").prefix(19)), String(change["count"] as? Int ?? 1),
                    change["userPrincipalName"] as? String ?? change["userId"] as? String ?? "(app)",
                    change["clientAppId"] as? String ?? "", change["resourceAppId"] as? String ?? "", outcome(change["before"]), outcome(change["after"]),
                ]
            }
            let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
            func line(_ cells: [String]) -> String {
                String(
                    cells.enumerated().map { $0.element.padding(toLength: widths[$0.offset], withPad: " ", startingAt: 0) }.joined(separator: "  ")
                        .reversed().drop(while: { $0 == " " }).reversed())
            }
            lines += ["", line(header), line(widths.map { String(repeating: "-", count: $0) })] + rows.map(line)
            if report["truncated"] as? Bool == true { lines.append("… more changes than listed") }
            return lines.joined(separator: "\n")
        }
    }
}

/// The `--map` file and `--unenforceable` choice of the policy commands (PROTOCOL §17).
enum PolicyImportFiles {
    static let unenforceableHelp: ArgumentHelp =
        "What to do with a conditional-access control this server cannot enforce (cloudAppSecurity): refuse (the default) or report-only (import the policy report-only, and say so)."

    static func unenforceable(_ given: String) throws -> ConditionalAccessPolicy.UnenforceableControls {
        switch given {
        case "refuse": return .refuse
        case "report-only", "reportOnly": return .reportOnly
        default: throw ArgumentParser.ValidationError("--unenforceable must be refuse or report-only, not '\(given)'.")
        }
    }

    /// What to say when a policy asked to be enabled is stored report-only because it keeps what cannot be enforced.
    static func reportOnlyNote(asked: [String: Any]?, stored: [String: Any]?) -> String? {
        guard asked?["state"] as? String == ConditionalAccessPolicy.State.enabled.rawValue,
            stored?["state"] as? String == ConditionalAccessPolicy.State.reportOnly.rawValue,
            (stored?["sessionControls"] as? [String: Any])?["cloudAppSecurity"] != nil
        else { return nil }
        return "imported report-only: its cloudAppSecurity cannot be enforced here (no session proxy), so it only reports."
    }

    static func map(_ path: String?) throws -> [String: String] {
        guard let path else { return [:] }
        guard let data = FileManager.default.contents(atPath: path), let value = JSONValue.parse(data) else {
            throw ArgumentParser.ValidationError("\(path) is not valid JSON (or cannot be read).")
        }
        do { return try PolicyImport.parseMap(value) } catch {
            throw ArgumentParser.ValidationError("\(path) is not a map: \(error.problems.map(\.description).joined(separator: "; "))")
        }
    }
}
