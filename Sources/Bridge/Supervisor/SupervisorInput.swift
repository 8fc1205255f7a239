import BlueZ
import BridgeCore
import RuntimeCore
import MQTT

/// What the supervisor reacts to, in arrival order.
enum SupervisorInput: Sendable {
    /// A change of BlueZ's object tree.
    case bluez(BlueZEvent)
    /// The broker (re)accepted the connection.
    case brokerConnected
    /// The broker connection was lost.
    case brokerDisconnected
    /// A message on a cluster topic (SPEC §10): a bridge's state or sightings, a device's owner.
    case cluster(ClusterTopic, payload: [UInt8])
    /// Home Assistant announced `online` on `{prefix}/status`.
    case homeAssistantOnline
    /// A retained per-entity discovery config of an earlier version (to be cleared).
    case legacyDiscovery(topic: String)
    /// `{base}/bridge/request/{command}`.
    case request(command: String, message: MQTTMessage)
    /// `{base}/config/devices/{segment}`: a device added at run time (SPEC §14).
    case configDevice(String, payload: [UInt8])
    /// A session's report.
    case session(path: String, SessionReport)
    /// A session's loop ended.
    case sessionEnded(path: String)
    /// `ConnectDevice` of a stored peripheral returned.
    case storedConnectReturned(path: String)
    /// An adapter's power-on call returned (the adapter's name).
    case powerFinished(adapter: String, error: BlueZError?)
    /// `SetDiscoveryFilter` + `StartDiscovery` on an adapter returned.
    case discoveryFinished(adapter: String, error: BlueZError?)
    /// `RegisterMonitor` on an adapter returned (passive scanning).
    case monitorRegistered(adapter: String, error: BlueZError?)
    /// A tracker was heard (cluster: at most once a second each, and at each new address).
    case trackerHeard(String, address: BluetoothAddress, path: String, rssi: Int)
    /// A tracker's presence timer moved earlier (``PresenceRouter/deadline``): wait for it.
    case presence
    /// Shut down: publish `offline`, stop every session (bounded), stop the scan.
    case stop
}
