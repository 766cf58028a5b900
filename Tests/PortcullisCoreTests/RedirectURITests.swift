import Foundation
import PortcullisCore
import Testing

@Suite("redirect URIs")
struct RedirectURITests {
    @Test("what a directory may register: https with a host, http on loopback only, custom schemes; no fragments, user info or script schemes")
    func registrable() {
        for uri in [
            "https://contoso.example/cb", "https://bücher.example/cb", "http://localhost", "http://127.0.0.1:8400/", "http://[::1]/cb",
            "msauth.com.contoso.mail://auth", "HTTP://LOCALHOST/",
        ] {
            #expect(RedirectURI.isRegistrable(uri), "\(uri)")
        }
        for uri in [
            "http://contoso.example/cb", "https:///cb", "https://contoso.example/cb#x", "https://u:p@contoso.example/",
            "javascript://alert(1)", "data://x", "file:///etc/passwd", "not a uri", "https://" + String(repeating: "a", count: 2050),
        ] {
            #expect(!RedirectURI.isRegistrable(uri), "\(uri)")
        }
    }

    @Test("a loopback registration matches any port (RFC 8252 §7.3), the same path and query; nothing else is loose")
    func loopbackPorts() {
        #expect(RedirectURI.matches("http://localhost:53123/", registered: "http://localhost"))
        #expect(RedirectURI.matches("http://[::1]:9000/cb", registered: "http://[::1]/cb"))
        #expect(!RedirectURI.matches("http://localhost:53123/other", registered: "http://localhost/cb"))
        #expect(!RedirectURI.matches("https://contoso.example:444/cb", registered: "https://contoso.example/cb"))
        #expect(!RedirectURI.matches("http://127.0.0.1:80/", registered: "http://localhost/"))
    }

    @Test("asciiHost: the host as written for ASCII, punycode for an internationalised host, IPv6 with brackets")
    func asciiHost() {
        #expect(URLComponents(string: "https://Contoso.Example/x")?.asciiHost == "Contoso.Example")
        #expect(URLComponents(string: "https://bücher.example/")?.asciiHost == "xn--bcher-kva.example")
        #expect(URLComponents(string: "http://[::1]:8080/")?.asciiHost == "[::1]")
        #expect(URLComponents(string: "msauth.com.contoso.mail://auth")?.asciiHost == "auth")
        #expect(URLComponents(string: "/relative")?.asciiHost == nil)
    }
}
