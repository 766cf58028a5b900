import Foundation
import HTTPTypes
import Hummingbird
import Mustache
import NIOCore

/// The pages people see (PROTOCOL §9.2): server-rendered from Mustache templates (values HTML-escaped by
/// the engine), no JavaScript, no external assets (one stylesheet, served by this server), and the same
/// headers on every page: a Content-Security-Policy of `default-src 'self'` with `frame-ancestors 'none'`,
/// no caching, no referrer.
struct Pages: Sendable {
    private let library: MustacheLibrary

    init() {
        var library = MustacheLibrary()
        for (name, text) in PageTemplates.all {
            // The templates are part of the build; a broken one is a programming error caught by every page test.
            try! library.register(text, named: name)
        }
        self.library = library
    }

    /// The values every page shows.
    struct Frame {
        var title: String
        var tenantName: String?
        var correlationId: String
        var basePath: String
    }

    /// Renders a page. A page that offers a passkey ceremony (the registration page, or values holding `passkey` or
    /// `registration`) loads the passkey script; every other page has none.
    func render(_ template: String, frame: Frame, values: [String: Any], status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        let content = library.render(values, withTemplate: template) ?? ""
        let html =
            library.render(
                [
                    "title": frame.title, "tenantName": frame.tenantName ?? "", "correlationId": frame.correlationId,
                    "basePath": frame.basePath, "content": content,
                    "script": template == "passkeyRegistration" || values["passkey"] != nil || values["registration"] != nil,
                ] as [String: Any], withTemplate: "layout") ?? ""
        var fields = headers
        Self.secure(&fields)
        fields[.contentType] = "text/html; charset=utf-8"
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    /// The headers of every page (and of the stylesheet).
    static func secure(_ fields: inout HTTPFields) {
        fields[.contentSecurityPolicy] = "default-src 'self'; script-src 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'"
        fields[.xFrameOptions] = "DENY"
        fields[.xContentTypeOptions] = "nosniff"
        fields[.referrerPolicy] = "no-referrer"
        fields[.cacheControl] = "no-store"
        fields[.pragma] = "no-cache"
    }

    static let stylesheet = styleSheet(PageTemplates.stylesheet)

    /// The passkey script's answer: the pages' headers, cacheable for an hour.
    static func script(_ text: String) -> Response {
        var fields: HTTPFields = [.contentType: "text/javascript; charset=utf-8"]
        secure(&fields)
        fields[.cacheControl] = "public, max-age=3600"
        return Response(status: .ok, headers: fields, body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// A stylesheet answer: the pages' headers, cacheable for an hour.
    static func styleSheet(_ css: String) -> Response {
        var fields: HTTPFields = [.contentType: "text/css; charset=utf-8"]
        secure(&fields)
        fields[.cacheControl] = "public, max-age=3600"
        return Response(status: .ok, headers: fields, body: .init(byteBuffer: ByteBuffer(string: css)))
    }
}

extension HTTPField.Name {
    static let xFrameOptions = Self("X-Frame-Options")!
    static let referrerPolicy = Self("Referrer-Policy")!
}
