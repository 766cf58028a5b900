// swift-tools-version:6.2
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    // As Hummingbird builds: a member is visible only where its module is imported, and imports are internal
    // unless a public declaration needs them (`public import`).
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "portcullis",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .executable(name: "portcullis", targets: ["portcullis"]),
        .library(name: "PortcullisClient", targets: ["PortcullisClient"]),
        .library(name: "PortcullisClientKeys", targets: ["PortcullisClientKeys"]),
        .library(name: "PortcullisResourceServer", targets: ["PortcullisResourceServer"]),
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
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
    ],
    targets: [
        // The domain at the bottom of the house: depends on no other module.
        .target(name: "PortcullisCore", swiftSettings: swiftSettings),
        // WebAuthn's binary formats (CBOR, authenticator data, COSE keys, attestation objects, client data), read
        // strictly and within limits; no dependency, so that the fuzzer builds it alone (Fuzz/README.md).
        .target(name: "PortcullisWebAuthnFormat", swiftSettings: swiftSettings),
        // libFuzzer over the WebAuthn formats when built with -sanitize=fuzzer -D FUZZING (scripts/fuzz); otherwise a
        // replayer that runs files (a corpus, a crash) through the same entry point.
        .executableTarget(name: "portcullis-fuzz", dependencies: ["PortcullisWebAuthnFormat"], path: "Fuzz/Sources", swiftSettings: swiftSettings),
        .target(
            name: "PortcullisTokens",
            dependencies: [
                "PortcullisCore", "PortcullisAPI", "PortcullisWebAuthnFormat",
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "PortcullisStorage",
            dependencies: [
                "PortcullisCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "PortcullisSQLite",
            dependencies: [
                "PortcullisCore", "PortcullisStorage",
                .product(name: "SQLiteNIO", package: "sqlite-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "PortcullisPostgres",
            dependencies: [
                "PortcullisCore", "PortcullisStorage",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(name: "PortcullisAPI", dependencies: ["PortcullisCore"], swiftSettings: swiftSettings),
        .target(
            name: "PortcullisServer",
            dependencies: [
                "PortcullisCore", "PortcullisTokens", "PortcullisStorage", "PortcullisAPI",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            // The OpenAPI description: a JSON file compiled in as a string literal by the EmbedText plugin (no bundle
            // to ship beside the binary; SwiftPM's embedInCode makes a byte array that takes a minute to compile).
            exclude: ["Operations/openapi.json"],
            swiftSettings: swiftSettings,
            plugins: ["EmbedText"]
        ),
        // The resource side (PROTOCOL §14.3, §15): token validation from the authority's JWKS, DPoP-bound tokens, and the
        // gateway that puts it in front of any HTTP service.
        .target(
            name: "PortcullisResourceServer",
            dependencies: [
                "PortcullisTokens", "PortcullisCore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(name: "portcullis-embed", path: "Sources/portcullis-embed", swiftSettings: swiftSettings),
        .plugin(name: "EmbedText", capability: .buildTool(), dependencies: ["portcullis-embed"]),
        // The client SDK: the wire types and the domain vocabulary they are made of (Foundation only, both).
        .target(name: "PortcullisClient", dependencies: ["PortcullisAPI", "PortcullisCore"], swiftSettings: swiftSettings),
        // The SDK's instance key store for Linux and development (a 0600 file): swift-crypto's HPKE and
        // swift-certificates' CSRs, kept out of the Foundation-only SDK so that apps on Apple platforms can
        // bring their own over CryptoKit and the Secure Enclave.
        .target(
            name: "PortcullisClientKeys",
            dependencies: [
                "PortcullisClient", "PortcullisAPI", "PortcullisCore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "PortcullisTesting",
            dependencies: [
                "PortcullisAPI", "PortcullisCore", "PortcullisStorage", "PortcullisServer", "PortcullisTokens", "PortcullisSQLite", "PortcullisPostgres",
                "PortcullisWebAuthnFormat", .product(name: "Crypto", package: "swift-crypto"), .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"), .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "portcullis",
            dependencies: [
                "PortcullisCore", "PortcullisTokens", "PortcullisStorage", "PortcullisSQLite", "PortcullisPostgres",
                "PortcullisServer", "PortcullisClient", "PortcullisClientKeys", "PortcullisAPI", "PortcullisResourceServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "portcullis-bench",
            dependencies: [
                "PortcullisCore", "PortcullisClient", "PortcullisAPI", "PortcullisSQLite", "PortcullisStorage", "PortcullisServer", "PortcullisTokens",
                "PortcullisTesting", "PortcullisWebAuthnFormat", "PortcullisResourceServer",
                .product(name: "SQLiteNIO", package: "sqlite-nio"), .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "bench/Sources/PortcullisBench",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "portcullis-baseline",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "bench/Sources/Baseline",
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "PortcullisCoreTests", dependencies: ["PortcullisCore", "PortcullisAPI"], swiftSettings: swiftSettings),
        .testTarget(
            name: "PortcullisTokensTests",
            dependencies: [
                "PortcullisTokens", "PortcullisCore", "PortcullisAPI", "PortcullisTesting", .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"), .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PortcullisSQLiteTests",
            dependencies: [
                "PortcullisSQLite", "PortcullisStorage", "PortcullisTesting",
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PortcullisPostgresTests",
            dependencies: ["PortcullisPostgres", "PortcullisStorage", "PortcullisTesting", .product(name: "PostgresNIO", package: "postgres-nio")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PortcullisWebAuthnTests",
            dependencies: [
                "PortcullisWebAuthnFormat", "PortcullisTokens", "PortcullisTesting", "PortcullisCore", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"), .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: swiftSettings),
        .testTarget(name: "PortcullisClientTests", dependencies: ["PortcullisClient", "PortcullisAPI", "PortcullisCore"], swiftSettings: swiftSettings),
        .testTarget(
            name: "PortcullisIntegrationTests",
            dependencies: [
                "PortcullisClient", "PortcullisClientKeys", "PortcullisServer", "PortcullisTesting", "PortcullisCore", "PortcullisAPI", "PortcullisTokens",
                "PortcullisStorage", "PortcullisResourceServer",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PortcullisServerTests",
            dependencies: [
                "PortcullisServer", "PortcullisTesting", "PortcullisCore", "PortcullisTokens", "PortcullisAPI", "PortcullisStorage", "PortcullisPostgres",
                "PortcullisResourceServer",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
