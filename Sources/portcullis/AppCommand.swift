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
            abstract: "Register a certificate an application signs client assertions with.",
            discussion: """
                The certificate (PEM or DER; its private key stays with the application and is refused here) joins the \
                application's keyCredentials; the server reads its thumbprints and validity. Prints the credential as stored.
                """)

        @OptionGroup var connection: AdminConnectionOptions
        @Argument(help: "The application's app ID.") var appId: String
        @Option(help: "A certificate file (PEM or DER).") var certificate: String
        @Option(name: .customLong("display-name"), help: "A name for it (default: its subject).") var displayName: String?

        func run() async throws {
            guard let contents = FileManager.default.contents(atPath: certificate) else { throw ValidationError("--certificate: cannot read \(certificate)") }
            let text = String(data: contents, encoding: .utf8).flatMap { $0.contains("-----BEGIN") ? $0 : nil } ?? contents.base64EncodedString()
            let client = try await connection.client()
            let path = "/applications/\(appId)"
            let current = try await client.call("GET", path)
            guard current.status == 200, var document = current.json as? [String: Any] else {
                throw ValidationError("cannot read the application \(appId): HTTP \(current.status) \(String(decoding: current.body, as: UTF8.self))")
            }
            var entry: [String: Any] = ["key": text]
            if let displayName { entry["displayName"] = displayName }
            let before = Set(((document["keyCredentials"] as? [[String: Any]]) ?? []).compactMap { $0["keyId"] as? String })
            document["keyCredentials"] = ((document["keyCredentials"] as? [[String: Any]]) ?? []) + [entry]
            let reply = try await client.call(
                "PUT", path, body: try JSONSerialization.data(withJSONObject: document), ifMatch: current.etag ?? "*")
            guard reply.status == 200, let stored = reply.json as? [String: Any] else {
                throw ValidationError("the certificate was refused: HTTP \(reply.status) \(String(decoding: reply.body, as: UTF8.self))")
            }
            let credentials = (stored["keyCredentials"] as? [[String: Any]]) ?? []
            let added = credentials.first { !before.contains(($0["keyId"] as? String) ?? "") } ?? credentials.last ?? [:]
            let shown = added.filter { $0.key != "key" }
            let data = try JSONSerialization.data(withJSONObject: shown, options: [.prettyPrinted, .sortedKeys])
            print(String(decoding: data, as: UTF8.self))
        }
    }
}
