import BridgeBase
import Synchronization

/// A characteristic of a simulated peripheral: its fixed description (paths, handles, flags)
/// and its running state (peripheral-side value, generator, notification sessions).
///
/// Shared between the ``Simulator`` actor (method calls) and the ``NotificationScheduler``
/// thread (periodic notifications); the mutable part is behind a mutex.
public final class SimCharacteristic: Sendable {
    /// The running state.
    struct State: Sendable {
        /// The peripheral's current value (what a read returns).
        var value: [UInt8]
        /// Produces new values for notifications (and reads once one was produced).
        var generator: ValueGenerator?
        /// D-Bus unique names with a notification session (StartNotify).
        var sessions: Set<String> = []
        /// The `AcquireNotify` session, if any (never together with `sessions`).
        var acquisition: NotifyAcquisition?
        /// True while notifications flow: sessions or an acquired socket exist and the device is
        /// connected with services resolved.
        var active = false
        /// Bumped on each activation; a scheduled entry with an older token is dropped.
        var token: UInt64 = 0
        /// Injected errors and delays (scenario plus run-time overrides).
        var faults: CharacteristicFaults
        /// `StartNotify` calls received (including repeated ones from a client that has a session).
        var startNotifyCalls: UInt64 = 0

        /// Someone wants the values: a `StartNotify` session or a registered, acquired socket.
        var hasSubscribers: Bool { !sessions.isEmpty || acquisition?.flowing == true }
    }

    /// Object path (`.../service000c/char000d`).
    public let path: String
    /// Full 128-bit UUID.
    public let uuid: String
    /// BlueZ flag names as the scenario declares them: the peripheral's permissions (`encrypt-read`, ...).
    public let flags: [String]
    /// `GattCharacteristic1.Flags` as a BlueZ 5.66 client sees them: the ATT properties only, so
    /// `encrypt-read`/`secure-read`/... show as `read` (likewise write, notify, indicate) and
    /// `authorize` not at all.
    public let clientFlags: [String]
    /// True for the Battery Level characteristic (0x2A19) of a Battery service (0x180F): its value
    /// feeds `org.bluez.Battery1.Percentage`.
    public let isBatteryLevel: Bool
    /// The object path of the owning device.
    public let devicePath: String
    /// The characteristic declaration handle (used in the path).
    public let handle: UInt16
    /// The owning service's object path.
    public let servicePath: String
    /// The device address (for logs).
    public let address: String
    /// Notification period, nil for none.
    public let interval: Duration?
    /// Full UUID of the characteristic notified on write (same service), if any.
    public let echoTo: String?
    /// `AcquireNotify` is accepted (scenario `acquire_notify`, default true); false: `NotSupported`.
    public let acquireNotify: Bool
    /// Its descriptors, in handle order.
    public let descriptors: [SimDescriptor]
    /// The value at start, which an exchange reset (`reset_on_connect`) restores.
    public let initialValue: [UInt8]
    /// `"<address> <uuid> "` pre-encoded for the notification log.
    let logPrefix: [UInt8]
    let state: Mutex<State>
    /// Notifications emitted as `PropertiesChanged {Value}` (for statistics; relaxed).
    let notificationCount = Atomic<UInt64>(0)
    /// Notifications written to an acquired socket, one packet each (relaxed).
    let socketNotificationCount = Atomic<UInt64>(0)
    /// Notifications for an acquired socket that could not be written: the client's receive queue
    /// was full (it does not read) or its end was closed (relaxed).
    let socketDropCount = Atomic<UInt64>(0)

    init(spec: CharacteristicSpec, handle: UInt16, servicePath: String, address: String,
         descriptors: [SimDescriptor], seed: UInt64, isBatteryLevel: Bool = false) {
        self.uuid = spec.uuid
        self.flags = spec.flags
        self.clientFlags = Self.clientFlags(spec.flags)
        self.isBatteryLevel = isBatteryLevel
        self.devicePath = String(servicePath[..<(servicePath.lastIndex(of: "/") ?? servicePath.endIndex)])
        self.handle = handle
        self.servicePath = servicePath
        self.path = servicePath + "/" + BlueZNames.handleComponent("char", handle)
        self.address = address
        self.interval = spec.interval
        self.echoTo = spec.echoTo
        self.acquireNotify = spec.acquireNotify
        self.descriptors = descriptors
        self.logPrefix = Array((address + " " + spec.uuid + " ").utf8)
        let generator = spec.generator.map {
            ValueGenerator(spec: $0, seed: SplitMix64(seed: seed, text: address + spec.uuid))
        }
        var initial = spec.value
        // A generated characteristic without an explicit start value starts at the generator's first value.
        var gen = generator
        if initial.isEmpty, gen != nil { initial = gen!.next() }
        self.initialValue = initial
        self.state = Mutex(State(value: initial, generator: gen, faults: spec.faults))
    }

    /// True for `notify` or `indicate` (also their encrypted variants).
    public var canNotify: Bool { clientFlags.contains("notify") || clientFlags.contains("indicate") }

    /// The ATT properties a client sees for the scenario's `flags` (see ``clientFlags``), in order,
    /// without duplicates.
    public static func clientFlags(_ flags: [String]) -> [String] {
        var out: [String] = []
        for f in flags {
            var mapped: String? = f
            for op in ["read", "write", "notify", "indicate"] where f != op && f.hasSuffix("-" + op)
                && (f.hasPrefix("encrypt-") || f.hasPrefix("secure-")) {
                mapped = op
            }
            if f == "authorize" { mapped = nil }
            if let mapped, !out.contains(mapped) { out.append(mapped) }
        }
        return out
    }

    /// True when `operation` (`read`/`write`) needs an encrypted link: the flags give only an
    /// `encrypt-`/`secure-` variant of it, no plain one.
    public func needsBond(for operation: String) -> Bool {
        requiredSecurity(for: operation) > .none
    }

    /// The security `operation` (`read`, `write`, `notify`: the CCC write) needs, from the flags:
    /// the plain flag → none; `encrypt-X` → encrypted; `encrypt-authenticated-X` or `secure-X` →
    /// authenticated (`notify` also looks at the `indicate` variants).
    public func requiredSecurity(for operation: String) -> SecurityLevel {
        Self.requiredSecurity(flags: flags, operation: operation)
    }

    /// See ``requiredSecurity(for:)``.
    static func requiredSecurity(flags: [String], operation: String) -> SecurityLevel {
        let ops = operation == "notify" ? ["notify", "indicate"] : [operation]
        if ops.contains(where: { flags.contains($0) }) { return .none }
        var level = SecurityLevel.none
        for f in flags {
            for op in ops {
                if f == "encrypt-authenticated-" + op || f == "secure-" + op {
                    level = max(level, .authenticated)
                } else if f == "encrypt-" + op {
                    level = max(level, .encrypted)
                }
            }
        }
        return level
    }

    /// The current peripheral-side value.
    public var value: [UInt8] { state.withLock { $0.value } }

    /// The current injected errors and delays.
    public var faults: CharacteristicFaults { state.withLock { $0.faults } }

    /// Changes the injected errors and delays.
    func updateFaults(_ body: (inout CharacteristicFaults) -> Void) {
        state.withLock { body(&$0.faults) }
    }

    /// Notification sessions (D-Bus unique names of the clients).
    var sessions: Set<String> { state.withLock { $0.sessions } }

    /// Stores a value written by the central.
    func store(_ bytes: [UInt8], offset: Int) {
        state.withLock { s in
            if offset == 0 {
                s.value = bytes
            } else {
                s.value = Array(s.value.prefix(offset)) + bytes
            }
        }
    }

    /// The next notified value while `token` is current and notifications are active, with the
    /// acquired socket it goes to (nil: it is signalled); nil otherwise.
    func nextNotification(token: UInt64) -> (value: [UInt8], socket: NotifySocket?)? {
        state.withLock { s in
            guard s.active, s.token == token else { return nil }
            if s.generator != nil { s.value = s.generator!.next() }
            return (s.value, s.acquisition?.flowing == true ? s.acquisition?.socket : nil)
        }
    }

    /// The acquired socket notifications go to now, if any.
    var notifySocket: NotifySocket? {
        state.withLock { s in s.acquisition?.flowing == true ? s.acquisition?.socket : nil }
    }

    /// True when notifications are flowing now.
    var isActive: Bool { state.withLock { $0.active } }
}

/// A descriptor of a simulated characteristic.
public final class SimDescriptor: Sendable {
    /// Object path (`.../char000d/desc000f`).
    public let path: String
    /// Full 128-bit UUID.
    public let uuid: String
    /// The handle.
    public let handle: UInt16
    /// BlueZ flag names (for the simulator's own access checks; BlueZ does not export descriptor flags).
    public let flags: [String]
    let value: Mutex<[UInt8]>

    init(uuid: String, handle: UInt16, characteristicPath: String, value: [UInt8], flags: [String]) {
        self.uuid = uuid
        self.handle = handle
        self.path = characteristicPath + "/" + BlueZNames.handleComponent("desc", handle)
        self.flags = flags
        self.value = Mutex(value)
    }

    /// True for the Client Characteristic Configuration descriptor (0x2902).
    public var isCCC: Bool { uuid == BluetoothUUID.normalize("2902") }
}

/// A primary or secondary service of a simulated peripheral.
public struct SimService: Sendable {
    /// Object path (`.../dev_XX/service000c`).
    public let path: String
    /// Full 128-bit UUID.
    public let uuid: String
    /// `GattService1.Primary`.
    public let primary: Bool
    /// First handle.
    public let handle: UInt16
    /// Its characteristics in handle order.
    public let characteristics: [SimCharacteristic]
}
