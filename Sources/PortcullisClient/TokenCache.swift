public import Foundation

/// One account's cached tokens.
public struct CachedAccount: Codable, Sendable, Equatable {
    public struct AccessToken: Codable, Sendable, Equatable {
        public var token: String
        public var expiresOn: Date
        public var scopes: [String]
        /// `DPoP` for a bound token; absent (Bearer) in caches written before.
        public var tokenType: String?
    }

    public var account: Account
    public var refreshToken: String?
    public var idToken: String?
    /// Keyed by the normalised scope string.
    public var accessTokens: [String: AccessToken]

    public init(account: Account, refreshToken: String?, idToken: String?, accessTokens: [String: AccessToken] = [:]) {
        self.account = account
        self.refreshToken = refreshToken
        self.idToken = idToken
        self.accessTokens = accessTokens
    }
}

/// Where a client application keeps its tokens, keyed by home account ID (`<oid>.<tid>`). Implement it to
/// persist tokens (the Keychain on Apple platforms); `InMemoryTokenCache` and `FileTokenCache` are provided.
public protocol TokenCache: Sendable {
    func entry(homeAccountId: String) async throws -> CachedAccount?
    func entries() async throws -> [CachedAccount]
    func store(_ entry: CachedAccount) async throws
    func remove(homeAccountId: String) async throws
}

/// The default cache: this process only.
public actor InMemoryTokenCache: TokenCache {
    private var accounts: [String: CachedAccount] = [:]

    public init() {}

    public func entry(homeAccountId: String) -> CachedAccount? { accounts[homeAccountId.lowercased()] }
    public func entries() -> [CachedAccount] { accounts.values.sorted { $0.account.homeAccountId < $1.account.homeAccountId } }
    public func store(_ entry: CachedAccount) { accounts[entry.account.homeAccountId] = entry }
    public func remove(homeAccountId: String) { accounts[homeAccountId.lowercased()] = nil }
}

/// A cache persisted as a JSON file (mode 0600), for command-line tools and tests that restart the app.
public actor FileTokenCache: TokenCache {
    public let url: URL

    public init(url: URL) {
        self.url = url
    }

    private func load() throws -> [String: CachedAccount] {
        guard let data = try? Data(contentsOf: url) else { return [:] }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return try decoder.decode([String: CachedAccount].self, from: data)
    }

    private func save(_ accounts: [String: CachedAccount]) throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try encoder.encode(accounts).write(to: url, options: .atomic)
        try? FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
    }

    public func entry(homeAccountId: String) throws -> CachedAccount? { try load()[homeAccountId.lowercased()] }
    public func entries() throws -> [CachedAccount] { try load().values.sorted { $0.account.homeAccountId < $1.account.homeAccountId } }

    public func store(_ entry: CachedAccount) throws {
        var accounts = try load()
        accounts[entry.account.homeAccountId] = entry
        try save(accounts)
    }

    public func remove(homeAccountId: String) throws {
        var accounts = try load()
        accounts[homeAccountId.lowercased()] = nil
        try save(accounts)
    }
}
