import ArgumentParser
import Foundation
import PortcullisClient

/// `portcullis device`: this instance as a device (PROTOCOL §18) — registered with a key kept under `--state`, checking
/// in; `portcullis token` then proves it when the server asks (PKeyAuth).
struct DeviceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device", abstract: "Register this instance as a device and check it in (PROTOCOL §18).",
        subcommands: [Register.self, CheckIn.self])

    struct Register: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "register",
            abstract: "Register this instance as a device of the user: a P-256 key under --state, the certificate the tenant's CA gives it.")

        @OptionGroup var client: ClientOptions

        @Option(help: "The user who registers the device (with --password: signs in first; otherwise the cached account).")
        var username: String

        @Option(help: "Password (password grant), when the account is not cached yet.")
        var password: String?

        @Option(name: .customLong("name"), help: "The device's display name.")
        var displayName: String = ProcessInfo.processInfo.hostName

        @Option(name: .customLong("os"), help: "The device's operating system (Windows, macOS, iOS, Android, Linux).")
        var operatingSystem: String = "Linux"

        @Option(name: .customLong("os-version"), help: "The operating system's version.")
        var operatingSystemVersion: String?

        func run() async throws {
            let application = try client.application()
            do {
                let account: Account
                if let password {
                    let signedIn = try await application.acquireToken(
                        username: username, password: password, scopes: [PublicClientApplication.deviceRegistrationScope])
                    guard let found = signedIn.account else { throw ValidationError("the sign-in named no account") }
                    account = found
                } else {
                    guard let cached = try await application.accounts().first(where: { $0.username.caseInsensitiveCompare(username) == .orderedSame }) else {
                        throw ValidationError("no cached account for \(username): pass --password")
                    }
                    account = cached
                }
                let registration = try await application.registerDevice(
                    account: account, displayName: displayName, operatingSystem: operatingSystem, operatingSystemVersion: operatingSystemVersion)
                printJSON(["deviceId": registration.deviceId, "objectId": registration.objectId, "certificateBytes": registration.certificate.count])
            } catch let error as PortcullisClientError {
                printJSON(describe(error))
                throw ExitCode(1)
            }
        }
    }

    struct CheckIn: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "checkin", abstract: "Check the registered device in: a report signed with its key; print what the compliance policies decided.")

        @OptionGroup var client: ClientOptions

        @Option(name: .customLong("os"), help: "The device's operating system.") var operatingSystem: String = "Linux"
        @Option(name: .customLong("os-version"), help: "The operating system's version.") var operatingSystemVersion: String
        @Flag(name: .customLong("no-passcode"), help: "Report that no passcode is set.") var noPasscode = false
        @Flag(help: "Report that storage is not encrypted.") var unencrypted = false
        @Flag(help: "Report a jailbroken or rooted device.") var jailbroken = false

        func run() async throws {
            let application = try client.application()
            do {
                let result = try await application.checkInDevice(
                    DeviceCheckInReport(
                        operatingSystem: operatingSystem, operatingSystemVersion: operatingSystemVersion, passcodeSet: !noPasscode,
                        storageEncrypted: !unencrypted, jailbroken: jailbroken))
                printJSON(["isCompliant": result.isCompliant, "isManaged": result.isManaged, "complianceFailures": result.complianceFailures ?? []])
                if !result.isCompliant { throw ExitCode(1) }
            } catch let error as PortcullisClientError {
                printJSON(describe(error))
                throw ExitCode(1)
            }
        }
    }
}
