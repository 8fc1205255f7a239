import BlueZ
import BridgeCore

/// The seams a session's executor acts on: BlueZ calls, publishing, routes, slots, the clock
/// it waits on, the supervisor's inbox and the command responder.
struct SessionIO: Sendable {
    var central: any BluetoothCentral
    var broker: any MessageBroker
    var router: ValueRouter
    var slots: SlotPool
    var clock: any BridgeClock
    var supervisor: Mailbox<SupervisorInput>
    var responder: CommandResponder
    /// Where a session records its device's pairing retry schedule.
    var pairingHolds: PairingHolds
}
