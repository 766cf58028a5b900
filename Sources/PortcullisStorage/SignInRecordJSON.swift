import Foundation
import PortcullisCore

extension StoredJSON {
    /// A sign-in record's text written member by member: the bytes `SortedJSONEncoder` (and `JSONEncoder` with sorted keys
    /// and ISO 8601 dates) writes for it — members in UTF-8 order, absent optionals left out — without `Encodable`'s
    /// generic dispatch (130,000 instructions of a refused grant's 900,000, whose record is stored one by one). A member
    /// added to `SignInRecord` and not here fails `SignInRecordJSONTests` (every member set, compared byte for byte).
    /// `omittingColumns`: without the members a stored row holds as columns (`columnMembers`), as `compactText` keeps it.
    static func signInBytes(_ record: SignInRecord, omittingColumns: Bool = false) throws -> [UInt8] {
        let whole = !omittingColumns
        var writer = SortedJSONEncoder.Writer(capacity: 1024)
        try writer.object { w in
            if let aggregate = record.aggregate {
                w.key("aggregate")
                try w.object { w in
                    w.member("count", aggregate.count)
                    w.member("lastCorrelationId", aggregate.lastCorrelationId)
                    w.key("lastDateTime")
                    try w.date(aggregate.lastDateTime)
                }
            }
            w.member("appProtection", record.appProtection)
            w.key("appliedConditionalAccessPolicies")
            w.array(record.appliedConditionalAccessPolicies) { w, policy in
                w.object { w in
                    w.member("conditionsNotSatisfied", policy.conditionsNotSatisfied)
                    w.member("displayName", policy.displayName)
                    w.member("enforcedGrantControls", policy.enforcedGrantControls)
                    w.member("enforcedSessionControls", policy.enforcedSessionControls)
                    if let results = policy.grantControlResults {
                        w.key("grantControlResults")
                        w.array(results) { w, result in
                            w.object { w in
                                w.member("control", result.control)
                                w.member("reason", result.reason)
                                w.member("satisfied", result.satisfied)
                            }
                        }
                    }
                    w.member("id", policy.id)
                    w.member("result", policy.result)
                }
            }
            if let references = record.authenticationContextClassReferences {
                w.key("authenticationContextClassReferences")
                w.array(references) { w, reference in
                    w.object { w in
                        w.member("detail", reference.detail)
                        w.member("id", reference.id)
                    }
                }
            }
            w.member("authenticationMethods", record.authenticationMethods)
            w.member("capabilities", record.capabilities)
            if whole { w.member("clientAppId", record.clientAppId) }
            w.member("clientAppType", record.clientAppType)
            w.member("clientCredentialType", record.clientCredentialType)
            if whole {
                w.member("conditionalAccessStatus", record.conditionalAccessStatus)
                w.member("correlationId", record.correlationId)
            }
            w.member("countryOrRegion", record.countryOrRegion)
            if whole {
                w.key("createdDateTime")
                try w.date(record.createdDateTime)
            }
            if let device = record.deviceDetail {
                w.key("deviceDetail")
                w.object { w in
                    w.member("deviceId", device.deviceId)
                    w.member("displayName", device.displayName)
                    w.member("isCompliant", device.isCompliant)
                    w.member("isManaged", device.isManaged)
                    w.member("operatingSystem", device.operatingSystem)
                    w.member("trustType", device.trustType)
                }
            }
            w.member("errorCode", record.errorCode)
            w.member("grantType", record.grantType)
            if whole { w.member("id", record.id) }
            w.member("ipAddress", record.ipAddress)
            w.member("isInteractive", record.isInteractive)
            w.member("originalTransferMethod", record.originalTransferMethod)
            w.member("platform", record.platform)
            w.member("resource", record.resource)
            if whole { w.member("resourceAppId", record.resourceAppId) }
            w.member("riskEventTypes_v2", record.riskEventTypes_v2)
            w.member("riskLevelAggregated", record.riskLevelAggregated)
            w.member("riskLevelDuringSignIn", record.riskLevelDuringSignIn)
            if whole { w.member("tenantId", record.tenantId) }
            if let protection = record.tokenProtectionStatusDetails {
                w.key("tokenProtectionStatusDetails")
                w.object { w in w.member("signInSessionStatus", protection.signInSessionStatus) }
            }
            w.member("userId", record.userId)
            w.member("userPrincipalName", record.userPrincipalName)
        }
        return writer.bytes
    }
}
