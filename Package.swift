// swift-tools-version:6.2
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    // As Hummingbird builds: a member is visible only where its module is imported, and imports are internal
    // unless a public declaration needs them (`public import`).
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

extension Target.Dependency {
    /// A product of one of the server's packages: built only with the `Server` trait (on by default at the root), so that
    /// an app depending on this repository with `traits: []` fetches none of them.
    static func server(_ name: String, _ package: String) -> Target.Dependency {
        .product(name: name, package: package, condition: .when(traits: ["Server"]))
    }

    /// A product the resource-server library needs: built with the `ResourceServer` trait (which `Server` enables), so that
    /// a service adopting the library with `traits: ["ResourceServer"]` fetches only these (scripts/resource-server-resolution).
    static func resource(_ name: String, _ package: String) -> Target.Dependency {
        .product(name: name, package: package, condition: .when(traits: ["ResourceServer"]))
    }
}

let package = Package(
    name: "portcullis",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .executable(name: "portcullis", targets: ["portcullis"]),
        .library(name: "PortcullisClient", targets: ["PortcullisClient"]),
        .library(name: "PortcullisClientKeys", targets: ["PortcullisClientKeys"]),
        .library(name: "PortcullisResourceServer", targets: ["PortcullisResourceServer"]),
        .library(name: "PortcullisResourceServerHummingbird", targets: ["PortcullisResourceServerHummingbird"]),
    ],
    // An app that depends on this repository for the client SDK says `traits: []` and fetches none of the server's
    // packages (PROTOCOL §16; README measures it, scripts/sdk-resolution tests it): every target that needs them is built only with `Server`.
    traits: [
        .trait(name: "Server", description: "The server, the CLI and their tests.", enabledTraits: ["FileKeyStore", "ResourceServerHummingbird"]),
        .trait(
            name: "ResourceServer",
            description:
                "The resource-server library and the gateway (PROTOCOL §14.3): token validation, DPoP, the Shared Signals receiver; "
                + "none of the server's packages."),
        .trait(
            name: "ResourceServerHummingbird", description: "The resource-server library as Hummingbird middleware.", enabledTraits: ["ResourceServer"]),
        .trait(name: "FileKeyStore", description: "PortcullisClientKeys' file instance key store, which needs swift-certificates."),
        .default(enabledTraits: ["Server"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", from: "2.5.0"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.8.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/vapor/sqlite-nio.git", from: "1.13.2"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.34.1"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        // `swift package generate-documentation --target PortcullisClient` (DocC); no target uses it, so an app never fetches it.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin.git", from: "1.5.0"),
    ],
    targets: [
        // The words server and client share on the wire (compliance statuses and their localised messages, app protection
        // settings, JSON values): Foundation only, no evaluator, so the client SDK ships no server code (PROTOCOL §16).
        .target(name: "PortcullisVocabulary", swiftSettings: swiftSettings),
        // The domain at the bottom of the house: the vocabulary (re-exported) and nothing else.
        .target(name: "PortcullisCore", dependencies: ["PortcullisVocabulary"], swiftSettings: swiftSettings),
        // WebAuthn's binary formats (CBOR, authenticator data, COSE keys, attestation objects, client data), read
        // strictly and within limits; no dependency, so that the fuzzer builds it alone (Fuzz/README.md).
        .target(name: "PortcullisWebAuthnFormat", swiftSettings: swiftSettings),
        // libFuzzer over the WebAuthn formats when built with -sanitize=fuzzer -D FUZZING (scripts/fuzz); otherwise a
        // replayer that runs files (a corpus, a crash) through the same entry point.
        // The gateway's HTTP/1.1 framing (RFC 9112) on bytes; no dependency either, fuzzed beside the WebAuthn readers.
        .target(name: "PortcullisGatewayWire", swiftSettings: swiftSettings),
        // What checking a Portcullis token takes — its claims, DPoP proofs, Security Event Tokens, the Authorization field —
        // apart from the issuer's keys and credentials: what a resource server needs, and nothing of the server's domain.
        .target(
            name: "PortcullisTokenVerification",
            dependencies: [
                "PortcullisVocabulary",
                .resource("JWTKit", "jwt-kit"),
                .resource("Crypto", "swift-crypto"),
                .resource("CryptoExtras", "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "portcullis-fuzz", dependencies: ["PortcullisWebAuthnFormat", "PortcullisGatewayWire", "PortcullisCore"], path: "Fuzz/Sources",
            swiftSettings: swiftSettings),
        .target(
            name: "PortcullisTokens",
            dependencies: [
                "PortcullisCore", "PortcullisAPI", "PortcullisWebAuthnFormat", "PortcullisTokenVerification",
                .server("JWTKit", "jwt-kit"),
                .server("Crypto", "swift-crypto"),
                .server("CryptoExtras", "swift-crypto"),
                .server("X509", "swift-certificates"),
                .server("SwiftASN1", "swift-asn1"),
                .server("NIOSSL", "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "PortcullisStorage",
            dependencies: [
                "PortcullisCore",
                .server("NIOCore", "swift-nio"),
                .server("NIOPosix", "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "PortcullisSQLite",
            dependencies: [
                "PortcullisCore", "PortcullisStorage",
                .server("SQLiteNIO", "sqlite-nio"),
                .server("Logging", "swift-log"),
                .server("NIOCore", "swift-nio"),
                .server("NIOPosix", "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "PortcullisPostgres",
            dependencies: [
                "PortcullisCore", "PortcullisStorage",
                .server("PostgresNIO", "postgres-nio"),
                .server("NIOSSL", "swift-nio-ssl"),
                .server("Logging", "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(name: "PortcullisAPI", dependencies: ["PortcullisVocabulary"], swiftSettings: swiftSettings),
        .target(
            name: "PortcullisServer",
            dependencies: [
                "PortcullisCore", "PortcullisTokens", "PortcullisStorage", "PortcullisAPI",
                .server("Hummingbird", "hummingbird"),
                .server("HummingbirdTLS", "hummingbird"),
                .server("HummingbirdCore", "hummingbird"),
                .server("HTTPTypes", "swift-http-types"),
                .server("HummingbirdBcrypt", "hummingbird-auth"),
                .server("AsyncHTTPClient", "async-http-client"),
                .server("ServiceLifecycle", "swift-service-lifecycle"),
                .server("Logging", "swift-log"),
                .server("Metrics", "swift-metrics"),
                .server("Prometheus", "swift-prometheus"),
                .server("Mustache", "swift-mustache"),
                .server("Crypto", "swift-crypto"),
                .server("NIOSSL", "swift-nio-ssl"),
                .server("NIOCore", "swift-nio"),
                .server("NIOPosix", "swift-nio"),
            ],
            // The OpenAPI description and the CA templates: JSON files compiled in as string literals by the EmbedText
            // plugin (no bundle to ship beside the binary; SwiftPM's embedInCode makes a byte array that takes a minute
            // to compile).
            exclude: ["Operations/openapi.json", "ConditionalAccess/templates.json"],
            swiftSettings: swiftSettings,
            plugins: ["EmbedText"]
        ),
        // The resource side (PROTOCOL §14.3, §15): token validation from the authority's JWKS, DPoP-bound tokens, and the
        // gateway that puts it in front of any HTTP service.
        .target(
            name: "PortcullisResourceServer",
            dependencies: [
                "PortcullisTokenVerification", "PortcullisVocabulary", "PortcullisGatewayWire",
                .resource("AsyncHTTPClient", "async-http-client"),
                .resource("JWTKit", "jwt-kit"),
                .resource("Logging", "swift-log"),
                .resource("NIOCore", "swift-nio"),
                .resource("NIOHTTP1", "swift-nio"),
                .resource("NIOPosix", "swift-nio"),
                .resource("NIOSSL", "swift-nio-ssl"),
                .resource("NIOExtras", "swift-nio-extras"),
                .resource("ServiceLifecycle", "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The resource-server library as Hummingbird middleware: a small target of its own, so that a service that does not
        // use Hummingbird fetches none of it.
        .target(
            name: "PortcullisResourceServerHummingbird",
            dependencies: [
                "PortcullisResourceServer", "PortcullisTokenVerification",
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["ResourceServerHummingbird"])),
                .product(name: "HTTPTypes", package: "swift-http-types", condition: .when(traits: ["ResourceServerHummingbird"])),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(name: "portcullis-embed", path: "Sources/portcullis-embed", swiftSettings: swiftSettings),
        .plugin(name: "EmbedText", capability: .buildTool(), dependencies: ["portcullis-embed"]),
        // The client SDK: the wire types and the domain vocabulary they are made of (Foundation only, both).
        // Data protection (AES-GCM) uses CryptoKit on Apple platforms and swift-crypto elsewhere.
        .target(
            name: "PortcullisClient",
            dependencies: [
                "PortcullisAPI", "PortcullisVocabulary",
                .product(name: "Crypto", package: "swift-crypto", condition: .when(platforms: [.linux, .android, .windows])),
            ],
            swiftSettings: swiftSettings
        ),
        // The SDK's instance key store for Linux and development (a 0600 file): swift-crypto's HPKE and
        // swift-certificates' CSRs, kept out of the Foundation-only SDK so that apps on Apple platforms can
        // bring their own over CryptoKit and the Secure Enclave.
        .target(
            name: "PortcullisClientKeys",
            dependencies: [
                "PortcullisClient", "PortcullisAPI", "PortcullisVocabulary",
                .product(name: "Crypto", package: "swift-crypto", condition: .when(traits: ["FileKeyStore"])),
                .product(name: "X509", package: "swift-certificates", condition: .when(traits: ["FileKeyStore"])),
                .product(name: "SwiftASN1", package: "swift-asn1", condition: .when(traits: ["FileKeyStore"])),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "PortcullisTesting",
            dependencies: [
                "PortcullisAPI", "PortcullisCore", "PortcullisStorage", "PortcullisServer", "PortcullisTokens", "PortcullisSQLite", "PortcullisPostgres",
                "PortcullisWebAuthnFormat", .server("Crypto", "swift-crypto"), .server("CryptoExtras", "swift-crypto"),
                .server("X509", "swift-certificates"), .server("SwiftASN1", "swift-asn1"),
                .server("PostgresNIO", "postgres-nio"),
                .server("Hummingbird", "hummingbird"),
                .server("HummingbirdTesting", "hummingbird"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "portcullis",
            dependencies: [
                "PortcullisCore", "PortcullisTokens", "PortcullisStorage", "PortcullisSQLite", "PortcullisPostgres",
                "PortcullisServer", "PortcullisClient", "PortcullisClientKeys", "PortcullisAPI", "PortcullisResourceServer",
                .server("ArgumentParser", "swift-argument-parser"),
                .server("AsyncHTTPClient", "async-http-client"),
                .server("NIOPosix", "swift-nio"),
                .server("Hummingbird", "hummingbird"),
                .server("ServiceLifecycle", "swift-service-lifecycle"),
                .server("Logging", "swift-log"),
                .server("X509", "swift-certificates"),
                .server("SwiftASN1", "swift-asn1"),
                .server("JWTKit", "jwt-kit"),
                .server("NIOConcurrencyHelpers", "swift-nio"),
                .server("NIOCore", "swift-nio"),
                .server("HTTPTypes", "swift-http-types"),
                .server("Crypto", "swift-crypto"),
                .server("CryptoExtras", "swift-crypto"),
                .server("NIOSSL", "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "portcullis-bench",
            dependencies: [
                "PortcullisCore", "PortcullisClient", "PortcullisAPI", "PortcullisSQLite", "PortcullisStorage", "PortcullisServer", "PortcullisTokens",
                "PortcullisTesting", "PortcullisWebAuthnFormat", "PortcullisResourceServer",
                .server("SQLiteNIO", "sqlite-nio"), .server("Crypto", "swift-crypto"),
                .server("CryptoExtras", "swift-crypto"),
                .server("Logging", "swift-log"),
            ],
            path: "bench/Sources/PortcullisBench",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "portcullis-baseline",
            dependencies: [
                .server("Hummingbird", "hummingbird"),
                .server("JWTKit", "jwt-kit"),
                .server("Logging", "swift-log"),
            ],
            path: "bench/Sources/Baseline",
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "PortcullisCoreTests", dependencies: ["PortcullisCore", "PortcullisAPI", "PortcullisTesting"], swiftSettings: swiftSettings),
        .testTarget(
            name: "PortcullisTokensTests",
            dependencies: [
                "PortcullisTokens", "PortcullisTokenVerification", "PortcullisCore", "PortcullisAPI", "PortcullisTesting", .server("JWTKit", "jwt-kit"),
                .server("Crypto", "swift-crypto"), .server("CryptoExtras", "swift-crypto"), .server("X509", "swift-certificates"),
                .server("SwiftASN1", "swift-asn1"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PortcullisSQLiteTests",
            dependencies: [
                "PortcullisSQLite", "PortcullisStorage", "PortcullisTesting",
                .server("NIOCore", "swift-nio"), .server("NIOPosix", "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PortcullisPostgresTests",
            dependencies: ["PortcullisPostgres", "PortcullisStorage", "PortcullisTesting", .server("PostgresNIO", "postgres-nio")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PortcullisWebAuthnTests",
            dependencies: [
                "PortcullisWebAuthnFormat", "PortcullisTokens", "PortcullisTesting", "PortcullisCore", .server("Crypto", "swift-crypto"),
                .server("CryptoExtras", "swift-crypto"), .server("X509", "swift-certificates"),
                .server("SwiftASN1", "swift-asn1"),
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "PortcullisClientTests", dependencies: ["PortcullisClient", "PortcullisClientKeys", "PortcullisAPI", "PortcullisCore"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "PortcullisIntegrationTests",
            dependencies: [
                "PortcullisClient", "PortcullisClientKeys", "PortcullisServer", "PortcullisTesting", "PortcullisCore", "PortcullisAPI", "PortcullisTokens",
                "PortcullisStorage", "PortcullisResourceServer", "PortcullisResourceServerHummingbird",
                .server("AsyncHTTPClient", "async-http-client"),
                .server("NIOCore", "swift-nio"),
                .server("NIOHTTP1", "swift-nio"),
                .server("NIOPosix", "swift-nio"),
                .server("ServiceLifecycle", "swift-service-lifecycle"),
                .server("Hummingbird", "hummingbird"),
                .server("HummingbirdTesting", "hummingbird"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PortcullisResourceServerTests",
            dependencies: [
                "PortcullisResourceServer", "PortcullisGatewayWire", "PortcullisTokens", "PortcullisTesting",
                .server("NIOCore", "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PortcullisServerTests",
            dependencies: [
                "PortcullisServer", "PortcullisTesting", "PortcullisCore", "PortcullisTokens", "PortcullisAPI", "PortcullisStorage", "PortcullisPostgres",
                "PortcullisResourceServer",
                .server("AsyncHTTPClient", "async-http-client"),
                .server("Hummingbird", "hummingbird"),
                .server("HummingbirdTesting", "hummingbird"),
                .server("JWTKit", "jwt-kit"),
                .server("Crypto", "swift-crypto"),
                .server("CryptoExtras", "swift-crypto"),
                .server("X509", "swift-certificates"),
                .server("SwiftASN1", "swift-asn1"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
