import ArgumentParser
import Foundation

/// `portcullis app credential add`: an application's credentials through the admin API (PROTOCOL §21).
struct AppCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "app", abstract: "Applications' credentials (through the admin API).", subcommands: [Credential.self])

    struct Credential: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "An application's credentials.", subcommands: [Add.self])
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Register a certificate, or a federated issuer's subject, an application authenticates with.",
            discussion: """
                --certificate FILE: the certificate (PEM or DER; its private key stays with the application and is refused \
                here) joins the application's keyCredentials; the server reads its thumbprints and validity.
                --federated ISSUER SUBJECT: tokens that ISSUER (https; its OIDC discovery publishes its keys) signs for \
                SUBJECT with the audience api://AzureADTokenExchange (or --audience) authenticate the application \
                (federatedIdentityCredentials; workload identity federation). Prints the credential as stored.
                """)

        @OptionGroup var connection: AdminConnectionOptions
        @Argument(help: "The application's app ID.") var appId: String
        @Option(help: "A certificate file (PEM or DER).") var certificate: String?
        @Option(parsing: .upToNextOption, help: ArgumentHelp("A federated issuer and subject.", valueName: "issuer subject"))
        var federated: [String] = []
        @Option(help: "The federated credential's audience.") var audience: String?
        @Option(help: "The federated credential's name (default: made from its subject).") var name: String?
        @Option(name: .customLong("display-name"), help: "A name for a certificate (default: its subject).") var displayName: String?

        func validate() throws {
            guard (certificate == nil) != federated.isEmpty else { throw ValidationError("give either --certificate FILE or --federated ISSUER SUBJECT.") }
            if !federated.isEmpty && federated.count != 2 { throw ValidationError("--federated takes two values: ISSUER SUBJECT.") }
            if certificate != nil && (audience != nil || name != nil) { throw ValidationError("--audience and --name are for --federated.") }
        }

        func run() async throws {
            let client = try await connection.client()
            let path = "/applications/\(appId)"
            let current = try await client.call("GET", path)
            guard current.status == 200, var document = current.json as? [String: Any] else {
                throw ValidationError("cannot read the application \(appId): HTTP \(current.status) \(String(decoding: current.body, as: UTF8.self))")
            }
            let member: String
            let entry: [String: Any]
            let identity: String
            if let certificate {
                guard let contents = FileManager.default.contents(atPath: certificate) else {
                    throw ValidationError("--certificate: cannot read \(certificate)")
                }
                let text = String(data: contents, encoding: .utf8).flatMap { $0.contains("-----BEGIN") ? $0 : nil } ?? contents.base64EncodedString()
                member = "keyCredentials"
                identity = "keyId"
                entry = ["key": text, "displayName": displayName as Any].compactMapValues { $0 is String ? $0 : nil }
            } else {
                member = "federatedIdentityCredentials"
                identity = "id"
                entry = [
                    "name": name ?? Self.name(forSubject: federated[1]), "issuer": federated[0], "subject": federated[1],
                    "audiences": [audience ?? "api://AzureADTokenExchange"],
                ]
            }
            let before = Set(((document[member] as? [[String: Any]]) ?? []).compactMap { $0[identity] as? String })
            document[member] = ((document[member] as? [[String: Any]]) ?? []) + [entry]
            let reply = try await client.call(
                "PUT", path, body: try JSONSerialization.data(withJSONObject: document), ifMatch: current.etag ?? "*")
            guard reply.status == 200, let stored = reply.json as? [String: Any] else {
                throw ValidationError("the credential was refused: HTTP \(reply.status) \(String(decoding: reply.body, as: UTF8.self))")
            }
            let credentials = (stored[member] as? [[String: Any]]) ?? []
            let added = credentials.first { !before.contains(($0[identity] as? String) ?? "") } ?? credentials.last ?? [:]
            let shown = added.filter { $0.key != "key" }
            let data = try JSONSerialization.data(withJSONObject: shown, options: [.prettyPrinted, .sortedKeys])
            print(String(decoding: data, as: UTF8.self))
        }

        /// A credential name (Graph's rules: 3 to 120 letters, digits, '-' and '_') made from a subject.
        static func name(forSubject subject: String) -> String {
            let kept = subject.unicodeScalars.map { scalar -> Character in
                scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || scalar == "-" || scalar == "_") ? Character(scalar) : "-"
            }
            return String(("federated-" + String(kept)).prefix(120))
        }
    }
}
