public import Foundation

extension Fixtures {
    /// A receiver of Shared Signals in the fixture tenant: client credentials with `SSF.Receiver` on api://portcullis-ssf.
    public static let signalReceiver = (appId: "60000000-0000-4000-8000-0000000000c1", secret: "receiver-secret")
    /// The same in the other tenant.
    public static let otherSignalReceiver = (appId: "60000000-0000-4000-8000-0000000000c2", secret: "other-receiver-secret")

    public struct FixtureError: Error, CustomStringConvertible {
        public let description: String
    }

    /// The fixtures with a Shared Signals receiver in each tenant.
    public static func directoryJSONWithSignalReceivers() throws -> Data {
        guard var root = try JSONSerialization.jsonObject(with: directoryJSON()) as? [String: Any], var tenants = root["tenants"] as? [[String: Any]],
            tenants.count >= 2
        else { throw FixtureError(description: "the fixture directory has two tenants") }
        for (index, receiver) in [signalReceiver, otherSignalReceiver].enumerated() {
            var tenant = tenants[index]
            tenant["applications"] =
                (tenant["applications"] as? [[String: Any]] ?? []) + [
                    [
                        "appId": receiver.appId, "displayName": "SSF receiver", "secrets": [["secret": receiver.secret]],
                        "allowedGrantTypes": ["client_credentials"],
                        "requiredResourceAccess": [["resourceAppId": "api://portcullis-ssf", "appRoles": ["SSF.Receiver"]]],
                    ]
                ]
            tenant["appRoleAssignments"] =
                (tenant["appRoleAssignments"] as? [[String: Any]] ?? []) + [
                    ["principalId": receiver.appId, "resource": "api://portcullis-ssf", "role": "SSF.Receiver"]
                ]
            tenants[index] = tenant
        }
        root["tenants"] = tenants
        return try JSONSerialization.data(withJSONObject: root)
    }
}
