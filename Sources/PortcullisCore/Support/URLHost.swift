public import Foundation

extension URLComponents {
    /// The host in its ASCII form: an internationalised host as punycode, an IPv6 literal with its brackets.
    /// `host` and `percentEncodedHost` run even a plain ASCII host through ICU's UTS #46 (IDNA) mapping, whose first
    /// use maps ICU's normalisation data into the process for good (docs/quirks.md); `encodedHost` does not.
    public var asciiHost: String? { encodedHost }
}
