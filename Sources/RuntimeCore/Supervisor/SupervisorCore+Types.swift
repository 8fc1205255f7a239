import BridgeCore
import Logging

extension SupervisorCore {
    /// What the executor read of BlueZ's object tree for one input (its `BluetoothCentral` seam's reads).
    package struct Tree: Sendable, Equatable {
        /// Whether `org.bluez` is on the bus and its tree is loaded.
        package var bluezAvailable: Bool
        /// Every adapter BlueZ has, by name (`hci0`): those in use and the others (for the log when one is
        /// missing, and for `bluetooth.adapters: all`).
        package var adapters: [String: Adapter] = [:]
        /// The device objects the input concerns, by path: the event's device; every device of the adapters in
        /// use for ``Event/bluezAvailable``, ``Event/adapterAdded(_:)`` and a `Powered` change; the devices of
        /// the stored peripherals due for a reconnect for ``Event/tick(lastAdvertisement:)``; with each, the
        /// objects of the same address on the other adapters in use (where the device is heard, SPEC §10).
        package var devices: [String: DeviceSnapshot] = [:]
        /// Free connection slots per adapter (``SlotPool``); an adapter missing here has all of them free.
        package var freeSlots: [String: Int] = [:]

        /// An adapter's `Adapter1` properties that decisions read.
        package struct Adapter: Sendable, Equatable {
            package var powered: Bool
            package var discovering: Bool
            package var address: String?
            /// The adapter offers `AdvertisementMonitorManager1` (BlueZ with `--experimental`).
            package var offersMonitor: Bool

            /// A value with these fields.
            package init(powered: Bool, discovering: Bool, address: String? = nil, offersMonitor: Bool) {
                self.powered = powered
                self.discovering = discovering
                self.address = address
                self.offersMonitor = offersMonitor
            }
        }

        package init(bluezAvailable: Bool, adapters: [String: Adapter] = [:], devices: [DeviceSnapshot] = [], freeSlots: [String: Int] = [:]) {
            self.bluezAvailable = bluezAvailable
            self.adapters = adapters
            self.devices = Dictionary(devices.map { ($0.path, $0) }, uniquingKeysWith: { a, _ in a })
            self.freeSlots = freeSlots
        }
    }

    /// What the supervisor reacts to, with the tree data it needs.
    package enum Event: Sendable {
        /// The loop started; the state file held these peripherals.
        case started(stored: [KnownPeripheral])
        /// `org.bluez` appeared on the bus (its tree is loaded).
        case bluezAvailable
        /// `org.bluez` left the bus.
        case bluezLost
        /// An adapter's object appeared (its name, `hci1`).
        case adapterAdded(String)
        /// An adapter's object was removed.
        case adapterRemoved(String)
        /// Properties of an adapter changed (the adapter, the property names).
        case adapterChanged(String, [String])
        /// A device object appeared (its snapshot is in the tree data, if readable).
        case deviceAdded(path: String)
        /// A device object was removed.
        case deviceRemoved(path: String)
        /// Properties of a device changed (names); the snapshot is in the tree data when
        /// ``SupervisorCore/needsSnapshot(path:changed:)`` said so.
        case deviceChanged(path: String, [String])
        /// A GATT service or characteristic object below a device appeared or vanished.
        case gattObjectsChanged(device: String)
        /// The `AcquireNotify` socket of a characteristic hung up.
        case notificationsReleased(characteristic: String)
        /// The broker (re)accepted the connection.
        case brokerConnected
        /// Home Assistant announced `online`.
        case homeAssistantOnline
        /// Discovery configs went out (``Action/homeAssistantPublish(path:_:hold:)``,
        /// ``Action/homeAssistantReleaseHeld``): these devices' last values (nil: every device's) follow.
        case homeAssistantSent(devices: Set<String>?)
        /// `{base}/bridge/request/{command}` with its payload, and its v5 Response Topic.
        case request(command: String, payload: [UInt8], replyTo: ReplyAddress? = nil)
        /// `{base}/config/devices/{segment}`: a device added at run time (empty: removed), SPEC §14.
        case configDevice(segment: String, payload: [UInt8])
        /// A session paired its device (or saw it paired): `bridge/devices` shows its paired and bonded flags (the
        /// tree holds its object).
        case paired(path: String)
        /// A retained discovery config of an earlier version of the bridge came in (Home Assistant's legacy topics).
        case legacyDiscovery(topic: String)
        /// A session's published availability changed.
        case availability(path: String, Bool)
        /// A session's link came up or went down.
        case linkChanged(path: String, connected: Bool)
        /// A session's `Connect` returned.
        case connectReturned(path: String)
        /// A session mapped its characteristics.
        case mapped(path: String, MappedDevice)
        /// An advertisement session's value names grew (or its maker or model became known);
        /// `name`: the device's name in the tree.
        case advertised(path: String, HomeAssistantDiscovery.Advertised, name: String?)
        /// A read of a session's device was refused for lack of pairing.
        case unreadable(path: String, uuid: String)
        /// A session's loop ended (the device's snapshot, if BlueZ has it, is in the tree data).
        case sessionEnded(path: String)
        /// `ConnectDevice` of a stored peripheral returned.
        case storedConnectReturned(path: String)
        /// The broker connection was lost (the cluster stops serving everything).
        case brokerDisconnected
        /// A message on a cluster topic (SPEC §10): a bridge's state or sightings, a device's owner.
        case clusterMessage(ClusterTopic, payload: [UInt8])
        /// An adapter of this bridge heard a tracker (SPEC §12) at `address`.
        case trackerHeard(segment: String, address: BluetoothAddress, adapter: String, rssi: Int)
        /// Powering an adapter on returned.
        case powerFinished(adapter: String, error: BluetoothError?)
        /// `SetDiscoveryFilter` + `StartDiscovery` (or the watchdog's restart) on an adapter returned.
        case discoveryFinished(adapter: String, error: BluetoothError?)
        /// `RegisterMonitor` on an adapter returned.
        case monitorRegistered(adapter: String, error: BluetoothError?)
        /// Time passed (``SupervisorCore/nextDeadline`` is due); `lastAdvertisement`: the last
        /// advertisement the advertisement router saw.
        /// `advertisers`: with a cluster, the last advertisement of each advertisement device (by path) as the
        /// advertisement router saw it.
        case tick(lastAdvertisement: Instant?, advertisers: [String: Advertiser] = [:])
        /// Shut down: publish `offline`, stop every session (bounded), stop the scan.
        case stop
        /// The inbox was closed: shut down without waiting for the sessions.
        case inboxClosed
    }

    /// What a session is told (mapped to ``SessionInput`` by the executor).
    package enum SessionSignal: Sendable, Equatable {
        case connectedChanged(Bool)
        case servicesResolved(Bool)
        case gattObjectsChanged
        case deviceRemoved
        case notificationsReleased(characteristic: String)
        case reconnectRequested
        case stop
    }

    /// A session to create.
    package struct SessionPlan: Sendable, Equatable {
        package var path: String
        package var address: BluetoothAddress
        package var addressType: String
        package var segment: String
        package var config: BridgeConfig.Device?
        /// Connect at once (a stored peripheral).
        package var connectNow: Bool
        /// Jitter seed of the backoff.
        package var seed: UInt64
        package var policy: ConnectionPolicy

        /// A value with these fields.
        package init(
            path: String, address: BluetoothAddress, addressType: String, segment: String, config: BridgeConfig.Device? = nil, connectNow: Bool, seed: UInt64, policy: ConnectionPolicy
        ) {
            self.path = path
            self.address = address
            self.addressType = addressType
            self.segment = segment
            self.config = config
            self.connectNow = connectNow
            self.seed = seed
            self.policy = policy
        }
    }

    /// What the executor does, in order.
    package enum Action: Sendable, Equatable {
        /// Log a line.
        case log(Logger.Level, String)

        /// Set `Powered` on the adapter (by name); report ``Event/powerFinished(adapter:error:)``.
        case powerOn(adapter: String)
        /// Register the advertisement monitor on the adapter; report ``Event/monitorRegistered(adapter:error:)``.
        case registerMonitor(adapter: String)
        /// `SetDiscoveryFilter` (a failure is only logged), then `StartDiscovery`, on the adapter; report
        /// ``Event/discoveryFinished(adapter:error:)``.
        case startDiscovery(adapter: String, uuids: [String], duplicateData: Bool)
        /// `StopDiscovery` (errors ignored), then `StartDiscovery`; report ``Event/discoveryFinished(adapter:error:)``.
        case restartDiscovery(adapter: String)
        /// `StopDiscovery` on the adapter, nothing reported.
        case stopDiscovery(adapter: String)
        /// `Adapter1.ConnectDevice` on the adapter of `path` (the object it creates); report
        /// ``Event/storedConnectReturned(path:)`` whatever the result.
        case connectDevice(address: String, addressType: String, path: String)
        /// `Disconnect` (errors ignored), nothing reported.
        case disconnectDevice(path: String)
        /// Export the pairing agent and register it as BlueZ's default agent (SPEC §11); the outcome is logged.
        case registerAgent
        /// `Disconnect`, then `RemoveDevice` (errors ignored), nothing reported.
        case removeDevice(path: String)

        /// Publish a retained message (QoS 1) of the cluster; an empty payload deletes the retained topic.
        case publishRetained(topic: String, payload: [UInt8])
        /// Subscribe the cluster topics again (their retained messages follow).
        case subscribeClusterTopics
        /// Hand command intake who handles each device's commands (SPEC §10 rule 1).
        case commandRoles(CommandRoles)
        /// Whether this bridge publishes a tracker's presence (SPEC §12; its Home Assistant config follows).
        case trackerOwnership(tracker: String, owned: Bool)
        /// Another bridge's sightings named these trackers (for the presence's room between bridges).
        case trackerSightings(bridge: String, [String: RemoteSighting])
        /// Tell the trackers' presence (SPEC §12) that the broker connection came up (it publishes every known state
        /// again) or went down.
        case presenceBroker(up: Bool)
        /// Another bridge went offline: its tracker reports no longer count.
        case bridgeGone(bridge: String)
        /// Create the session (and its registry entry); report ``Event/sessionEnded(path:)`` when its loop ends.
        case startSession(SessionPlan)
        /// Tell a session something.
        case send(path: String, SessionSignal)
        /// Write a device's registry entry (the supervisor is the registry's only writer).
        case record(DeviceRecord)
        /// Remove a device's registry entry.
        case unregister(path: String)

        /// `{base}/bridge/state` (retained).
        case publishBridgeState(online: Bool)
        /// `{base}/{device}/availability` (retained).
        case publishAvailability(segment: String, online: Bool)
        /// Publish this `{base}/bridge/devices` payload (retained).
        case sendDevices([UInt8])
        /// Answer a request on `bridge/response/{command}` and to its v5 Response Topic.
        case respond(Response)
        /// The configuration's devices changed (SPEC §14): sessions started from now on use these.
        case devicesChanged([BridgeConfig.Device])
        /// Write `devices_file` with these entries (atomically).
        case writeAddedDevices([JSONValue])
        /// A `scan` request began: note every advertiser heard from now on.
        case scanStarted
        /// Answer a `scan` request with the advertisers heard since `since`.
        case answerScan(Response, since: Instant)
        /// No `scan` request is left: stop noting advertisers.
        case scanFinished
        /// Publish the values held while the broker was away.
        case flushHeldValues
        /// `{base}/bridge/health` (and the metrics file).
        case publishHealth

        /// Publish the bridge's and every device's discovery config again; `startHold`: the legacy
        /// window starts now, the device configs known so far wait for it.
        case homeAssistantRepublish(reason: String, startHold: Bool)
        /// Publish a device's discovery config if it changed (`hold`: keep it for the end of the
        /// legacy window); report ``Event/homeAssistantSent(devices:)`` when it went out.
        case homeAssistantPublish(path: String, HomeAssistantDiscovery.Peripheral, hold: Bool)
        /// The legacy window ended: publish the held device configs; report
        /// ``Event/homeAssistantSent(devices:)`` (every device) when there were any.
        case homeAssistantReleaseHeld
        /// Send the last values again, of these devices (segments; nil: every device).
        case resendLastValues(devices: Set<String>?)
        /// Delete an earlier version's retained discovery config (an empty retained message on `topic`).
        case clearLegacyDiscovery(topic: String)
        /// Forget a device's discovery config without touching the broker (a cluster member whose session of it
        /// ended: another bridge's config may count now; sent afresh if the device comes back here).
        case homeAssistantForget(path: String)
        /// Remove a forgotten device's discovery config.
        case homeAssistantRemove(path: String)

        /// Record a mapped peripheral in the state file.
        case remember(address: String, addressType: String, MappedDevice)
        /// Remember a characteristic whose read needs pairing.
        case markUnreadable(address: String, uuid: String)
        /// Remove a peripheral from the state file.
        case forgetStored(address: String)
        /// Forget the last values of a device (Home Assistant resends).
        case forgetLastValues(segment: String)

        /// Every session ended (or the time is up): stop following BlueZ and end the loop.
        case finishShutdown
    }
}

extension MappedDevice: Equatable {
    package static func == (a: MappedDevice, b: MappedDevice) -> Bool {
        a.characteristics == b.characteristics && a.services == b.services && a.serviceSegments == b.serviceSegments
            && a.discovery == b.discovery && a.name == b.name && a.information == b.information
    }
}
