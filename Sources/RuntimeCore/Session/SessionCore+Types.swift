import BridgeCore
import Logging

extension SessionCore {
    /// What the core needs to know of the bridge: pure values, no seams.
    package struct Configuration: Sendable {
        package var device: SessionDevice
        package var topics: TopicMapper
        package var timing: SessionTiming
        /// The connection state machine's timing (connection slots on).
        package var machine: Machine.Configuration
        /// `commands.queue`: commands queued at most (at least one).
        package var commandCapacity: Int
        /// `commands.timeout` (for the messages of expired commands).
        package var commandTimeout: Duration
        /// `bluetooth.acquire_notify`.
        package var acquireNotify: Bool
        /// `homeassistant.discovery`: the mapping report carries discovery entries.
        package var homeAssistantDiscovery: Bool

        /// The session configuration of `device` under the bridge's configuration.
        package init(config: BridgeConfig, topics: TopicMapper, timing: SessionTiming, device: SessionDevice) {
            self.device = device
            self.topics = topics
            self.timing = timing
            var machine = Machine.Configuration(reconnect: config.reconnect, usesSlots: true)
            machine.connectTimeout = timing.connectTimeout
            // A profile's connection steps are part of the setup: long waits and sleeps must fit its deadline.
            if let profile = device.profile {
                machine.subscribeTimeout = max(machine.subscribeTimeout, SessionCore.setupTime(profile.steps))
            }
            self.machine = machine
            commandCapacity = max(1, config.commands.queue)
            commandTimeout = config.commands.timeout
            acquireNotify = config.bluetooth.acquireNotify
            homeAssistantDiscovery = config.homeAssistant.discovery
        }
    }

    /// The time a profile's connection steps may take: their waits and sleeps, and 10 s for every other step.
    package static func setupTime(_ steps: [ProfileStep]) -> Duration {
        steps.reduce(.zero) { total, step in
            switch step.action {
            case .waitNotify(_, let timeout, _): total + timeout
            case .sleep(let d): total + d
            case .write, .read, .subscribe: total + .seconds(10)
            }
        }
    }
}

extension SessionCore {
    /// What the executor feeds the core.
    package enum Input: Sendable {
        /// The session starts.
        case start
        /// The core's ``SessionCore/nextDeadline`` passed.
        case deadline
        /// The mailbox was finished (the supervisor went away): stop.
        case mailboxFinished
        /// An input from the mailbox.
        case received(SessionInput)
    }

    /// The device as BlueZ's object tree shows it when an input is handled: the executor reads
    /// the tree, the core decides on the copy. Nil when the device object does not exist.
    package struct DeviceView: Sendable, Hashable {
        /// An `org.bluez.GattService1` object and its characteristics.
        package struct Service: Sendable, Hashable {
            package var path: String
            package var uuid: BluetoothUUID
            package var characteristics: [Characteristic]

            /// A value with these fields.
            package init(path: String, uuid: BluetoothUUID, characteristics: [Characteristic]) {
                self.path = path
                self.uuid = uuid
                self.characteristics = characteristics
            }
        }

        /// An `org.bluez.GattCharacteristic1` object.
        package struct Characteristic: Sendable, Hashable {
            package var path: String
            package var uuid: BluetoothUUID
            package var properties: CharacteristicProperties
            /// Its Presentation Format descriptor (0x2904), if it has one.
            package var presentationFormat: String? = nil
            /// Its User Description descriptor (0x2901), if it has one.
            package var userDescription: String? = nil

            /// A value with these fields.
            package init(
                path: String, uuid: BluetoothUUID, properties: CharacteristicProperties, presentationFormat: String? = nil, userDescription: String? = nil
            ) {
                self.path = path
                self.uuid = uuid
                self.properties = properties
                self.presentationFormat = presentationFormat
                self.userDescription = userDescription
            }
        }

        package var connected: Bool
        package var servicesResolved: Bool
        /// `Device1.UUIDs`.
        package var uuids: [BluetoothUUID]
        package var name: String?
        package var services: [Service]
        /// `Device1.Paired` (or `Bonded`): BlueZ has keys for it, whoever paired it.
        package var paired = false

        /// A value with these fields.
        package init(
            connected: Bool, servicesResolved: Bool, uuids: [BluetoothUUID], name: String? = nil, services: [Service], paired: Bool = false
        ) {
            self.connected = connected
            self.servicesResolved = servicesResolved
            self.uuids = uuids
            self.name = name
            self.services = services
            self.paired = paired
        }
    }

    /// What the executor must do, in order. BlueZ calls carry the connection attempt they belong
    /// to; their completions come back as inputs with it.
    package enum Action: Sendable {
        /// `Device1.Connect`; completes as ``SessionInput/connectFinished(attempt:error:)``.
        case connect(attempt: Int, timeout: Duration)
        /// `Device1.Disconnect` (errors are only logged).
        case disconnect(attempt: Int)
        /// `AcquireNotify` when `acquire` (falling back to `StartNotify` when refused), else
        /// `StartNotify`; completes as ``GattOutcome/subscribed(_:error:acquired:)``.
        case subscribe(MappedCharacteristic, acquire: Bool, attempt: Int)
        /// `ReadValue` of the setup or a poll; completes as ``GattOutcome/read(_:initial:_:linkDropped:)``.
        case read(MappedCharacteristic, initial: Bool, attempt: Int)
        /// A descriptor's `ReadValue` (SPEC §11); completes as ``GattOutcome/descriptor(_:_:_:)``.
        case readDescriptor(MappedCharacteristic, DescriptorKind, path: String, attempt: Int)
        /// Decode a characteristic's values by its presentation format (from now on).
        case present(path: String, PresentationFormat)
        /// A command's `ReadValue` or `WriteValue`; completes as ``GattOutcome/command(_:_:readValue:)``.
        case command(CommandJob, attempt: Int)
        /// Close an `AcquireNotify` socket (BlueZ's StopNotify), at once.
        case releaseNotify(characteristic: String)
        /// The session ends: `StopNotify` each of these, then `Disconnect` if `disconnect`, in order.
        case shutDown(stopNotify: [String], disconnect: Bool)
        /// Publish `{base}/{device}/availability` (retained).
        case publishAvailability(Bool)
        /// Publish a read value on its value topic.
        case publishRead(path: String, value: [UInt8])
        /// Route a characteristic's notifications to its value topic.
        case route(path: String, topic: String, format: ValueFormat)
        /// Answer a command.
        case respond(PendingCommand, CommandResult)
        /// Tell the supervisor.
        case report(SessionReport)
        /// `Device1.Pair` then `Trusted = true`; completes as ``SessionInput/pairFinished(attempt:error:)``.
        case pair(attempt: Int, timeout: Duration)
        /// `Trusted = true` for a bond BlueZ made without the bridge's `Pair` (no completion).
        case trust
        /// Record the device's pairing retry schedule (a failed pairing, a reset): the agent refuses the device while
        /// its delay runs, and a new session of the device starts from it.
        case pairingRetry(PairingRetry<Instant>)
        /// Ask the slot pool for a connection slot (answered with ``SessionInput/slotGranted``).
        case requestSlot
        /// Give the connection slot back.
        case releaseSlot
        /// A line for the session's log.
        case log(Logger.Level, String)
        /// A profile step's `WriteValue` or `ReadValue`; completes as ``GattOutcome/profileCall(_:linkDropped:)``.
        case profileCall(ProfileCall, attempt: Int)
        /// Publish values a profile decoded on `{base}/{device}/values` (not retained).
        case publishValues(profile: String, JSONObject)
        /// Hand the characteristic's notifications to the session (as ``SessionInput/notified(path:value:attempt:)``)
        /// instead of its decode route, until disarmed; before the call that makes the device notify.
        case armNotify(path: String, attempt: Int)
        /// Notifications of these paths go back to their routes.
        case disarmNotify(paths: [String])
        /// Decode every notification of the characteristic with `decode` to the values topic (after its value topic).
        case routeDecode(path: String, ProfileDecode, profile: String)
    }

    /// What a profile step's BlueZ call needs.
    package struct ProfileCall: Sendable {
        package var path: String
        /// The bytes to write; nil: a read.
        package var bytes: [UInt8]?
        package var type: GattWriteType
        /// The time left before the run's deadline (the command's, or the setup's).
        package var timeout: Duration

        /// A value with these fields.
        package init(path: String, bytes: [UInt8]?, type: GattWriteType, timeout: Duration) {
            self.path = path
            self.bytes = bytes
            self.type = type
            self.timeout = timeout
        }
    }

    /// What a command's BlueZ call needs.
    package struct CommandJob: Sendable {
        package var command: PendingCommand
        package var path: String
        package var format: ValueFormat
        package var bytes: [UInt8]
        package var type: GattWriteType
        /// The time left before the command's deadline.
        package var timeout: Duration
        package var transaction: JSONValue?
        /// A read's presentation format (0x2904), which decodes its value before ``format``.
        package var presentation: PresentationFormat? = nil

        /// A value with these fields.
        package init(
            command: PendingCommand, path: String, format: ValueFormat, bytes: [UInt8], type: GattWriteType, timeout: Duration, transaction: JSONValue? = nil, presentation: PresentationFormat? = nil
        ) {
            self.command = command
            self.path = path
            self.format = format
            self.bytes = bytes
            self.type = type
            self.timeout = timeout
            self.transaction = transaction
            self.presentation = presentation
        }
    }
}
