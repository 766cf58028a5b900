/// How many device codes may be pending at once (PROTOCOL §9.5: anyone may ask for one, so every count is bounded).
public struct DeviceCodeLimits: Sendable, Equatable {
    public var perTenant: Int
    public var perClient: Int
    public var perAddress: Int

    public init(perTenant: Int, perClient: Int, perAddress: Int) {
        self.perTenant = perTenant
        self.perClient = perClient
        self.perAddress = perAddress
    }
}

/// The device-code limit an insert ran into.
public enum DeviceCodeQuota: String, Sendable, Equatable {
    case tenant, client, address
}
