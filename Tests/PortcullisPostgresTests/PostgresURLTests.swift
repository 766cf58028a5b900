import NIOSSL
import Testing

@testable import PortcullisPostgres

@Suite("PostgreSQL URL and TLS")
struct PostgresURLTests {
    @Test("without sslmode the connection requires TLS and verifies the certificate and host name; every TLS mode verifies")
    func verifiedByDefault() throws {
        let plain = try PostgresURL("postgres://u:p@db.example/portcullis")
        #expect(plain.sslMode == .verifyFull)
        #expect(plain.tlsConfiguration().certificateVerification == .fullVerification)
        #expect(plain.tlsConfiguration().minimumTLSVersion == .tlsv12)
        for mode in ["prefer", "require", "verify-full", "allow"] {
            #expect(try PostgresURL("postgres://u@h/d?sslmode=\(mode)").tlsConfiguration().certificateVerification == .fullVerification, "\(mode)")
        }
        #expect(try PostgresURL("postgres://u@h/d?sslmode=verify-ca").tlsConfiguration().certificateVerification == .noHostnameVerification)
        let withCA = try PostgresURL("postgres://u@h/d?sslrootcert=/etc/portcullis/pg-ca.pem")
        #expect(withCA.tlsConfiguration().trustRoots == .file("/etc/portcullis/pg-ca.pem"))
        #expect(try PostgresURL("postgres://u@h/d?sslmode=disable").sslMode == .disable)
    }
}
