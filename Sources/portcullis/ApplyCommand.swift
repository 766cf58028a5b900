import ArgumentParser
import Foundation
import PortcullisCore
import PortcullisServer

/// `portcullis apply DIR` (PROTOCOL §11, policy as code): a whole configuration folder — `directory.json`
/// (users, groups, applications, app role assignments, named locations, the tenant's `allowedAccounts`),
/// `authentication-strengths/`, `authentication-contexts/`, `conditional-access/`, `app-protection/`,
/// `app-configuration/`, `device-compliance/` and `devices/` (the devices admins join, PROTOCOL §18) — through the admin
/// API. It checks the folder offline, asks the
/// server what each document would change (`?dryRun=true`: the server's own validation and normal form),
/// prints the plan with a diff per document, and applies it in dependency order. What the folder no longer
/// holds is deleted only with `--prune` — never a device a user registered (`Workplace`): those are the users', as
/// enrollments are. A second run finds nothing to do (a device's `csr` for the key it holds keeps its certificate).
struct ApplyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apply",
        abstract:
            "Apply a whole configuration folder (directory, conditional access, app protection, app configuration, devices) through the admin API: plan, then apply."
    )
    @OptionGroup var connection: AdminConnectionOptions
    @Flag(help: "Print the plan and change nothing.") var plan = false
    @Flag(help: "Also delete what the folder no longer holds.") var prune = false
    @Flag(help: "Pass the lock-out guards (policies that could lock users or admins out, removing the last admin).") var force = false
    @Option(help: "A JSON object mapping another directory's object IDs to this one's, for conditional-access files (PROTOCOL §17).")
    var map: String?
    @Option(help: PolicyImportFiles.unenforceableHelp) var unenforceable = "refuse"
    @Argument(help: "The configuration folder (holds directory.json).") var directory: String

    func run() async throws {
        let folder = URL(fileURLWithPath: directory)
        let client = try await connection.client()
        let tenantReply = try await client.call("GET", "/tenant")
        guard tenantReply.status == 200, let tenant = tenantReply.json as? [String: Any], let tenantId = tenant["id"] as? String else {
            throw ArgumentParser.ValidationError("cannot read the tenant: HTTP \(tenantReply.status) \(String(decoding: tenantReply.body, as: UTF8.self))")
        }
        let desired: [DesiredDocument]
        let unenforceable = try PolicyImportFiles.unenforceable(unenforceable)
        do {
            desired = try DesiredState.load(
                folder: folder, tenantId: tenantId, domain: tenant["domain"] as? String ?? "", force: force, map: try PolicyImportFiles.map(map),
                unenforceable: unenforceable)
        } catch let error as DesiredState.Invalid {
            for line in error.lines { print(line) }
            print("The folder is not valid: nothing was applied.")
            throw ExitCode(1)
        }
        let planner = Planner(client: client, force: force, unenforceable: unenforceable)
        let steps = try await planner.plan(desired)
        print("Plan for \(tenant["domain"] as? String ?? tenantId) (\(tenantId)):")
        for step in steps where step.action != .unchanged { print(step.rendered(prune: prune)) }
        let count = { (action: PlanStep.Action) in steps.filter { $0.action == action }.count }
        let deletions = count(.delete)
        print(
            "Plan: \(count(.create)) to create, \(count(.change)) to change, \(deletions) to delete\(prune || deletions == 0 ? "" : " (with --prune)"), \(count(.unchanged)) unchanged."
        )
        if let invalid = steps.first(where: { $0.problems != nil && !$0.mayResolve }) {
            print("\(invalid.label): the server refuses it (see above); nothing was applied.")
            throw ExitCode(1)
        }
        if plan { return }
        var done = (created: 0, changed: 0, deleted: 0)
        for step in steps where step.action == .create || step.action == .change {
            try await planner.apply(step)
            if step.action == .create { done.created += 1 } else { done.changed += 1 }
        }
        if prune {
            for step in steps.filter({ $0.action == .delete }).sorted(by: { $0.kind.order > $1.kind.order }) {
                try await planner.apply(step)
                done.deleted += 1
            }
        } else if deletions > 0 {
            print("\(deletions) document(s) the folder no longer holds were left in place; --prune deletes them.")
        }
        print("Applied: created \(done.created), changed \(done.changed), deleted \(done.deleted), unchanged \(count(.unchanged)).")
    }
}

/// The kinds of documents `apply` handles, in the order they are created and changed (deleted in reverse):
/// what a document names exists before it.
enum DocumentKindPath: Int, CaseIterable {
    case tenant, user, group, application, appRoleAssignment, directoryRoleAssignment, namedLocation, authenticationStrength, authenticationContext
    case conditionalAccess
    case appProtection, appConfiguration
    case deviceCompliancePolicy, device

    var order: Int { rawValue }

    /// The document kind: its path and noun come from `DocumentKind.registry`, as the server's routes do.
    var kind: DocumentKind {
        switch self {
        case .tenant: .tenant
        case .user: .user
        case .group: .group
        case .application: .application
        case .appRoleAssignment: .appRoleAssignment
        case .directoryRoleAssignment: .directoryRoleAssignment
        case .namedLocation: .namedLocation
        case .authenticationStrength: .authenticationStrength
        case .authenticationContext: .authenticationContextClassReference
        case .conditionalAccess: .conditionalAccessPolicy
        case .appProtection: .appProtectionPolicy
        case .appConfiguration: .appConfigurationPolicy
        case .deviceCompliancePolicy: .deviceCompliancePolicy
        case .device: .device
        }
    }
    var collection: String { "/" + (kind.adminPath ?? kind.rawValue) }
    var idKey: String { self == .application ? "appId" : "id" }
    var noun: String { kind.noun }

    /// How a document is named in the plan.
    func label(_ document: [String: Any]) -> String {
        switch self {
        case .user: document["userPrincipalName"] as? String ?? "?"
        case .appRoleAssignment:
            "\(document["principalId"] as? String ?? "?") has \(document["role"] as? String ?? "?") on \(document["resource"] as? String ?? "?")"
        case .directoryRoleAssignment:
            "\(document["principalId"] as? String ?? "?") holds \(DirectoryRoleDefinition.builtIn(id: RoleID(document["roleDefinitionId"] as? String ?? ""))?.displayName ?? "?")"
        case .tenant: document["domain"] as? String ?? document["displayName"] as? String ?? "tenant"
        default: document["displayName"] as? String ?? "?"
        }
    }
}

/// One document the folder holds: its kind, its ID (nil for a policy without one that matches no stored
/// policy by name: created with POST), and the JSON to send.
struct DesiredDocument {
    let kind: DocumentKindPath
    var id: String?
    let body: [String: Any]
    let source: String
}

/// Reads and checks a configuration folder offline, with the same parsers the server uses.
enum DesiredState {
    struct Invalid: Error { let lines: [String] }

    static func load(
        folder: URL, tenantId: String, domain: String, force: Bool, map: [String: String] = [:],
        unenforceable: ConditionalAccessPolicy.UnenforceableControls = .refuse
    ) throws -> [DesiredDocument] {
        let file = folder.appendingPathComponent("directory.json")
        guard let data = FileManager.default.contents(atPath: file.path) else { throw Invalid(lines: ["\(file.path): cannot be read."]) }
        let parsed: DirectoryDocument
        do {
            parsed = try DirectoryDocument.parse(data)
        } catch {
            throw Invalid(lines: error.problems.map { "\(file.path):\($0.pointer.isEmpty ? "/" : $0.pointer): \($0.message)" })
        }
        let raw = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        let rawTenants = raw?["tenants"] as? [[String: Any]] ?? []
        guard let index = parsed.tenants.firstIndex(where: { $0.tenant.id == TenantID(tenantId) || $0.tenant.domain.equalsIgnoringCase(domain) }),
            index < rawTenants.count
        else {
            throw Invalid(lines: ["\(file.path): holds no tenant \(domain) (\(tenantId)), the tenant of these admin credentials."])
        }
        let snapshot = parsed.snapshots(revision: 0)[index]
        let tenant = rawTenants[index]
        func items(_ key: String) -> [[String: Any]] { tenant[key] as? [[String: Any]] ?? [] }

        var desired: [DesiredDocument] = []
        desired.append(
            DesiredDocument(
                kind: .tenant, id: nil,
                body: [
                    "displayName": tenant["displayName"] ?? parsed.tenants[index].tenant.displayName,
                    "allowedAccounts": tenant["allowedAccounts"] ?? NSNull(),
                    "passwordOnlyRegistration": tenant["passwordOnlyRegistration"] ?? NSNull(),
                ], source: "directory.json"))
        desired += items("users").map { DesiredDocument(kind: .user, id: ($0["id"] as? String)?.lowercased(), body: $0, source: "directory.json") }
        desired += items("groups").map { DesiredDocument(kind: .group, id: ($0["id"] as? String)?.lowercased(), body: $0, source: "directory.json") }
        desired += items("applications").map {
            DesiredDocument(kind: .application, id: ($0["appId"] as? String)?.lowercased(), body: $0, source: "directory.json")
        }
        for (assignment, body) in zip(parsed.tenants[index].appRoleAssignments, items("appRoleAssignments")) {
            desired.append(DesiredDocument(kind: .appRoleAssignment, id: snapshot.documentId(of: assignment), body: body, source: "directory.json"))
        }
        for (assignment, body) in zip(parsed.tenants[index].roleAssignments, items("roleAssignments")) {
            desired.append(DesiredDocument(kind: .directoryRoleAssignment, id: assignment.id, body: body, source: "directory.json"))
        }
        desired += items("namedLocations").map {
            DesiredDocument(kind: .namedLocation, id: ($0["id"] as? String)?.lowercased(), body: $0, source: "directory.json")
        }

        var problems: [String] = []
        var configurationPolicies: [AppConfigurationPolicy] = []
        // What policies name (custom strengths, contexts) is read first, so that the policies are checked against it.
        var strengths: [AuthenticationStrengthPolicy] = []
        var contexts: [AuthenticationContextClassReference] = []
        for (kind, folderName) in [
            (DocumentKindPath.authenticationStrength, "authentication-strengths"), (.authenticationContext, "authentication-contexts"),
            (.conditionalAccess, "conditional-access"), (.appProtection, "app-protection"), (.appConfiguration, "app-configuration"),
            (.deviceCompliancePolicy, "device-compliance"), (.device, "devices"),
        ] {
            for (file, segment) in PolicyFiles.list(directory: folder.appendingPathComponent(folderName)) {
                if let segment, !snapshot.matches(tenantSegment: segment) { continue }
                let name = "\(folderName)/\(segment.map { "\($0)/" } ?? "")\(file.lastPathComponent)"
                guard let data = FileManager.default.contents(atPath: file.path), let value = JSONValue.parse(data),
                    let body = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
                else {
                    problems.append("\(name):/: is not a JSON object.")
                    continue
                }
                if kind == .conditionalAccess {
                    // One policy or Graph's list, each with the map applied (PROTOCOL §17).
                    for (element, pointer) in PolicyImport.policies(in: value) {
                        let mapped = PolicyImport.mapping(element, with: map)
                        let label = name + (pointer.isEmpty ? "" : "#\(pointer)")
                        do {
                            _ = try ConditionalAccessPolicy.parse(
                                mapped, directory: snapshot, strengths: strengths, contexts: contexts, generatedId: PolicyID("(new)"), force: force,
                                unenforceable: unenforceable)
                        } catch {
                            problems += error.problems.map { "\(label):\($0.pointer.isEmpty ? "/" : $0.pointer): \($0.message)" }
                        }
                        guard let object = (try? JSONSerialization.jsonObject(with: JSONEncoder().encode(mapped))) as? [String: Any] else { continue }
                        desired.append(DesiredDocument(kind: kind, id: (object["id"] as? String)?.lowercased(), body: object, source: label))
                    }
                    continue
                }
                do {
                    switch kind {
                    case .authenticationStrength:
                        strengths.append(try AuthenticationStrengthPolicy.parse(value, others: strengths, generatedId: PolicyID("(new \(strengths.count))")))
                    case .authenticationContext:
                        contexts.append(try AuthenticationContextClassReference.parse(value, others: contexts))
                    case .conditionalAccess:
                        _ = try ConditionalAccessPolicy.parse(
                            value, directory: snapshot, strengths: strengths, contexts: contexts, generatedId: "(new)", force: force)
                    case .appProtection: _ = try AppProtectionPolicy.parse(value, directory: snapshot, generatedId: "(new)")
                    case .deviceCompliancePolicy: _ = try DeviceCompliancePolicy.parse(value, generatedId: "(new)")
                    case .device:
                        _ = try Device.parse(value, existing: nil, directory: snapshot, generatedId: ObjectID("(new)"), now: Date())
                    default:
                        configurationPolicies.append(
                            try AppConfigurationPolicy.parse(
                                value, directory: snapshot, others: configurationPolicies, generatedId: PolicyID("(new \(configurationPolicies.count))")))
                    }
                } catch {
                    problems += error.problems.map { "\(name):\($0.pointer.isEmpty ? "/" : $0.pointer): \($0.message)" }
                }
                desired.append(DesiredDocument(kind: kind, id: (body["id"] as? String)?.lowercased(), body: body, source: name))
            }
        }
        if !problems.isEmpty { throw Invalid(lines: problems) }
        return desired
    }
}

/// One line of the plan: what happens to one document, and the diff that shows why.
struct PlanStep {
    enum Action: String { case create, change, delete, unchanged }
    let kind: DocumentKindPath
    let id: String?
    let action: Action
    let label: String
    let body: [String: Any]?
    let etag: String?
    let diff: [String]
    /// The server's validation problems during planning, if it refused the document as things stand now.
    var problems: [String]?
    /// Whether those problems may be resolved by an earlier step of this plan (a document it names is created first).
    var mayResolve = false

    func rendered(prune: Bool) -> String {
        let sign =
            switch action {
            case .create: "+"
            case .change: "~"
            case .delete: "-"
            case .unchanged: "="
            }
        var lines = [
            "  \(sign) \(action.rawValue.padding(toLength: 7, withPad: " ", startingAt: 0)) \(kind.noun) \(label)\(id.map { " (\($0))" } ?? "")"
                + (action == .delete && !prune ? "  [only with --prune]" : "")
        ]
        lines += diff.prefix(40).map { "      \($0)" }
        if diff.count > 40 { lines.append("      … \(diff.count - 40) more") }
        for problem in problems ?? [] {
            lines.append("      ! \(problem)\(mayResolve ? "  (checked again when applied, after the documents this plan creates first)" : "")")
        }
        return lines.joined(separator: "\n")
    }
}

/// Asks the server what each document would do, and then does it.
struct Planner {
    let client: AdminAPIClient
    let force: Bool
    var unenforceable = ConditionalAccessPolicy.UnenforceableControls.refuse

    /// The writes' query: `dryRun`, `force`, `unenforceable`.
    func query(dryRun: Bool = false) -> String {
        let items = [dryRun ? "dryRun=true" : nil, force ? "force=true" : nil, unenforceable == .refuse ? nil : "unenforceable=\(unenforceable.rawValue)"]
        let joined = items.compactMap { $0 }.joined(separator: "&")
        return joined.isEmpty ? "" : "?" + joined
    }

    func plan(_ desired: [DesiredDocument]) async throws -> [PlanStep] {
        var current: [DocumentKindPath: [String: [String: Any]]] = [:]
        for kind in DocumentKindPath.allCases where kind != .tenant {
            // The built-in strengths are every tenant's, never the folder's to create or prune.
            let list = try await client.list(kind.collection).filter { $0["policyType"] as? String != "builtIn" }
            current[kind] = Dictionary(
                list.compactMap { item in (item[kind.idKey] as? String).map { ($0.lowercased(), item) } }, uniquingKeysWith: { a, _ in a })
        }
        var steps: [PlanStep] = []
        var claimed: [DocumentKindPath: Set<String>] = [:]
        for var document in desired {
            // A policy file without an ID is the stored policy of the same name, if there is one.
            if document.id == nil, document.kind != .tenant, let name = document.body["displayName"] as? String,
                let match = current[document.kind]?.first(where: { $0.value["displayName"] as? String == name })?.key
            {
                document.id = match
            }
            if let id = document.id { claimed[document.kind, default: []].insert(id) }
            steps.append(
                try await dryRun(document, current: current[document.kind]?[document.id ?? ""], earlierChanges: steps.contains { $0.action != .unchanged }))
        }
        for kind in DocumentKindPath.allCases where kind != .tenant {
            for (id, document) in (current[kind] ?? [:]).sorted(by: { $0.key < $1.key }) where !(claimed[kind]?.contains(id) ?? false) {
                // A device a user registered is the user's, not the folder's (as an enrollment is): never pruned.
                if kind == .device, document["trustType"] as? String == DeviceFacts.TrustType.workplace.rawValue { continue }
                steps.append(
                    PlanStep(
                        kind: kind, id: id, action: .delete, label: kind.label(document), body: nil, etag: nil,
                        diff: JSONDiff.lines(from: JSONValue(foundation: document), to: nil)))
            }
        }
        return steps
    }

    func path(_ kind: DocumentKindPath, _ id: String?) -> String {
        kind == .tenant ? kind.collection : id.map { "\(kind.collection)/\($0)" } ?? kind.collection
    }

    func dryRun(_ document: DesiredDocument, current: [String: Any]?, earlierChanges: Bool) async throws -> PlanStep {
        let body = try JSONSerialization.data(withJSONObject: document.body)
        let method = document.kind == .tenant || document.id != nil ? "PUT" : "POST"
        let reply = try await client.call(method, path(document.kind, document.id) + query(dryRun: true), body: body)
        let label = document.kind.label(document.body)
        if reply.status == 200, let answer = reply.json as? [String: Any], let action = (answer["action"] as? String).flatMap(PlanStep.Action.init) {
            let before = answer["before"] as? [String: Any]
            let after = answer["after"] as? [String: Any]
            if let note = PolicyImportFiles.reportOnlyNote(asked: document.body, stored: after) { print("\(document.source): \(label): \(note)") }
            var diff = action == .unchanged ? [] : JSONDiff.lines(from: JSONValue(foundation: before), to: JSONValue(foundation: after))
            // Answers never show hashes: a change nothing visible explains is a password or secret.
            if action == .change && diff.isEmpty { diff = ["~ a password or secret changes (values are never shown)"] }
            return PlanStep(
                kind: document.kind, id: document.id,
                action: action, label: document.kind == .tenant ? document.kind.label(after ?? [:]) : label,
                body: document.body, etag: reply.etag, diff: diff)
        }
        let details = ((reply.json as? [String: Any])?["error"] as? [String: Any])?["details"] as? [[String: Any]]
        guard reply.status == 400, let details else {
            throw ArgumentParser.ValidationError("\(document.source): \(label): HTTP \(reply.status) \(String(decoding: reply.body, as: UTF8.self))")
        }
        // Refused as things stand: it may name what an earlier step creates. Shown with a diff of the folder's text.
        return PlanStep(
            kind: document.kind, id: document.id, action: current == nil ? .create : .change, label: label, body: document.body,
            etag: nil, diff: JSONDiff.lines(from: JSONValue(foundation: current), to: JSONValue(foundation: document.body).map(JSONDiff.masked)),
            problems: details.map { "\($0["pointer"] as? String ?? ""): \($0["message"] as? String ?? "")" }, mayResolve: earlierChanges)
    }

    func apply(_ step: PlanStep) async throws {
        let suffix = query()
        let reply: AdminAPIClient.Reply
        switch step.action {
        case .create where step.id == nil || step.kind == .tenant:
            reply = try await client.call("POST", step.kind.collection + suffix, body: try JSONSerialization.data(withJSONObject: step.body ?? [:]))
        case .create:
            reply = try await client.call(
                "PUT", path(step.kind, step.id) + suffix, body: try JSONSerialization.data(withJSONObject: step.body ?? [:]),
                headers: ["If-None-Match": "*"])
        case .change:
            reply = try await client.call(
                "PUT", path(step.kind, step.id) + suffix, body: try JSONSerialization.data(withJSONObject: step.body ?? [:]),
                ifMatch: step.etag ?? "*")
        case .delete:
            reply = try await client.call("DELETE", path(step.kind, step.id) + suffix, ifMatch: "*")
        case .unchanged:
            return
        }
        guard (200...204).contains(reply.status) else {
            print("failed: \(step.action.rawValue) \(step.kind.noun) \(step.label): HTTP \(reply.status)")
            let error = (reply.json as? [String: Any])?["error"] as? [String: Any]
            if let message = error?["message"] as? String { print("  \(message)") }
            for detail in error?["details"] as? [[String: Any]] ?? [] { print("  \(detail["pointer"] ?? ""): \(detail["message"] ?? "")") }
            print("Stopped: the steps before this one were applied; run apply again after fixing it.")
            throw ExitCode(1)
        }
        print("\(step.action == .create ? "created" : step.action == .change ? "changed" : "deleted") \(step.kind.noun) \(step.label)")
    }
}

/// A readable diff of two JSON documents, one line per changed member (JSON Pointer: old → new).

extension JSONValue {
    /// A JSONSerialization value (what the CLI's HTTP client reads) as a JSON value.
    init?(foundation value: Any?) {
        guard let value, let data = try? JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed]),
            let parsed = JSONValue.parse(data)
        else { return nil }
        self = parsed
    }
}
