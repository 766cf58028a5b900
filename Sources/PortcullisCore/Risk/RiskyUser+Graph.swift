public import Foundation

/// Risky users, their history and detections in Microsoft Graph's shape (`riskyUser`, `riskyUserHistoryItem`,
/// `riskDetection`): what `identityProtection` answers in Graph and under `/admin/v1` alike (PROTOCOL §19, §20).
extension RiskyUser {
    public var graph: JSONValue {
        .object([
            "id": .string(id.rawValue), "isDeleted": .bool(false), "isProcessing": .bool(false),
            "riskLastUpdatedDateTime": riskLastUpdatedDateTime.map { .string(ISO8601.string($0)) } ?? .null, "riskLevel": .string(riskLevel.rawValue),
            "riskState": .string(riskState.rawValue), "riskDetail": .string(riskDetail.rawValue), "userDisplayName": .string(userDisplayName),
            "userPrincipalName": .string(userPrincipalName),
            // Not Graph's: the insider level an admin set (Entra takes it from Purview), for the admin API and the console.
            "insiderRiskLevel": insiderRiskLevel.map { .string($0.rawValue) } ?? .null,
        ])
    }

    /// The history, newest first, as Graph lists it.
    public var graphHistory: [JSONValue] {
        history.reversed().map { item in
            .object([
                "id": .string(item.id), "userId": .string(id.rawValue), "initiatedBy": item.initiatedBy.map(JSONValue.string) ?? .null,
                "isDeleted": .bool(false), "isProcessing": .bool(false), "riskLastUpdatedDateTime": .string(ISO8601.string(item.riskLastUpdatedDateTime)),
                "riskLevel": .string(item.riskLevel.rawValue), "riskState": .string(item.riskState.rawValue),
                "riskDetail": .string(item.riskDetail.rawValue), "userDisplayName": .string(userDisplayName),
                "userPrincipalName": .string(userPrincipalName),
                "activity": .object([
                    "eventTypes": .array(item.eventTypes.map { .string($0.rawValue) }),
                    "riskEventTypes": .array(item.eventTypes.map { .string($0.rawValue) }), "detail": .string(item.riskDetail.rawValue),
                ]),
            ])
        }
    }

    /// The detections, newest first.
    public var graphDetections: [JSONValue] {
        detections.reversed().map { detection in
            .object([
                "id": .string(detection.id), "requestId": detection.requestId.map(JSONValue.string) ?? .null,
                "correlationId": detection.correlationId.map(JSONValue.string) ?? .null, "riskType": .string(detection.riskEventType.rawValue),
                "riskEventType": .string(detection.riskEventType.rawValue), "riskState": .string(detection.riskState.rawValue),
                "riskLevel": .string(detection.riskLevel.rawValue), "riskDetail": .string(detection.riskDetail.rawValue),
                "source": .string(detection.reportedBy == nil ? detection.riskEventType.source : "Admin"),
                "detectionTimingType": .string(detection.riskEventType.timing.rawValue), "activity": .string(detection.riskEventType.activity),
                "tokenIssuerType": "AzureAD", "ipAddress": detection.ipAddress.map(JSONValue.string) ?? .null,
                "location": detection.countryOrRegion.map { .object(["countryOrRegion": .string($0), "city": .null, "state": .null, "geoCoordinates": .null]) }
                    ?? .null,
                "activityDateTime": .string(ISO8601.string(detection.activityDateTime)),
                "detectedDateTime": .string(ISO8601.string(detection.detectedDateTime)),
                "lastUpdatedDateTime": .string(ISO8601.string(detection.lastUpdatedDateTime)), "userId": .string(id.rawValue),
                "userDisplayName": .string(userDisplayName), "userPrincipalName": .string(userPrincipalName),
                "additionalInfo": detection.additionalInfo.map(JSONValue.string) ?? .null,
            ])
        }
    }
}

extension TenantSnapshot {
    /// The users whose risk was ever recorded (Graph's `riskyUsers`), by ID.
    public var riskyUsers: [RiskyUser] { contents.riskyUsers.filter(\.hasRisk) }

    /// Every kept detection of the tenant, newest first.
    public var riskDetections: [JSONValue] {
        contents.riskyUsers.flatMap { user in user.detections.map { (user, $0) } }.sorted { $0.1.detectedDateTime > $1.1.detectedDateTime }.map {
            user, detection in
            var one = user
            one.detections = [detection]
            return one.graphDetections[0]
        }
    }
}
