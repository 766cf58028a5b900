public import Foundation
public import PortcullisVocabulary

/// How a client application talks to Portcullis.
public struct ClientConfiguration: Sendable {
    /// The authority: base URL plus tenant (ID or domain), e.g. `https://login.contoso.example/contoso.example`.
    public var authority: URL
    public var clientId: String
    /// Client capabilities declared on every token request, e.g. `["protapp"]` (case-insensitive on the server).
    public var capabilities: [String]
    /// What this client tells the server about itself (`x-client-SKU`, `x-client-OS`, `x-client-Ver`).
    public var sku: String
    public var osDescription: String
    public var version: String
    /// Per-request timeout.
    public var timeout: TimeInterval
    /// When set, every token request carries a DPoP proof by its key, and the tokens are bound to it (PROTOCOL §15).
    public var dpop: DPoPProofMaker?
    /// When set, token requests say they can prove the device (`x-ms-PKeyAuth: 1.0`) and answer the server's PKeyAuth
    /// challenge with the device's registration (PROTOCOL §18); `registerDevice` registers it.
    public var device: (any DeviceKey)?
    /// The user's languages, best first (BCP 47): sent as `Accept-Language`, and the language of the titles and messages
    /// of the compliance statuses the SDK reports (English, Spanish, Portuguese, Italian or Chinese; PROTOCOL §16).
    public var languages: [String]

    public init(
        authority: URL, clientId: String, capabilities: [String] = [], sku: String = ClientConfiguration.defaultSKU,
        osDescription: String = ProcessInfo.processInfo.operatingSystemVersionString, version: String = PortcullisClientVersion.string,
        timeout: TimeInterval = 30, languages: [String] = Locale.preferredLanguages
    ) {
        self.languages = languages
        self.authority = authority
        self.clientId = clientId
        self.capabilities = capabilities
        self.sku = sku
        self.osDescription = osDescription
        self.version = version
        self.timeout = timeout
    }

    /// `PortcullisClient.<platform>`, so that the server's conditional access can tell the platform.
    public static var defaultSKU: String {
        #if os(iOS)
        "PortcullisClient.iOS"
        #elseif os(macOS)
        "PortcullisClient.macOS"
        #elseif os(Linux)
        "PortcullisClient.Linux"
        #elseif os(Windows)
        "PortcullisClient.Windows"
        #else
        "PortcullisClient"
        #endif
    }

    /// The language the SDK's messages are shown in.
    public var messageLanguage: MessageLanguage { MessageLanguage(preferred: languages) }

    /// `languages` as an `Accept-Language` value (`es-ES, en;q=0.9`), at most ten, `nil` for none.
    var acceptLanguage: String? {
        // POSIX-style identifiers (`zh_CN`) become BCP 47 tags (`zh-CN`); anything else that is not a tag is left out.
        let tags = languages.prefix(10).map { $0.replacingOccurrences(of: "_", with: "-") }
            .filter { !$0.isEmpty && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") } }
        guard !tags.isEmpty else { return nil }
        return tags.enumerated().map { index, tag in index == 0 ? tag : "\(tag);q=\(String(format: "%.1f", max(0.1, 1.0 - Double(index) * 0.1)))" }
            .joined(separator: ", ")
    }

    var tokenEndpoint: URL { authority.appendingPathComponent("oauth2/v2.0/token") }

    /// The server's base URL (the authority without its tenant segment).
    var baseURL: URL { authority.deletingLastPathComponent() }
}

public enum PortcullisClientVersion {
    public static let string = "0.1.0"
}
