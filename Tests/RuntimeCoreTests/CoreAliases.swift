import BridgeBase
@testable import RuntimeCore

// The cores at the instant these tests drive them with (``BridgeInstant``, as the runtime does).
typealias SessionCore = RuntimeCore.SessionCore<BridgeInstant>
typealias SupervisorCore = RuntimeCore.SupervisorCore<BridgeInstant>
typealias ClusterCore = RuntimeCore.ClusterCore<BridgeInstant>
typealias PendingCommand = RuntimeCore.PendingCommand<BridgeInstant>
typealias SessionInput = RuntimeCore.SessionInput<BridgeInstant>
typealias SessionDevice = RuntimeCore.SessionDevice<BridgeInstant>
typealias AdapterPlacement = RuntimeCore.AdapterPlacement<BridgeInstant>
