import BridgeBase
import DBusKit

/// A device's request/answer rules (scenario `exchanges`, ``DeviceExchanges``): which rule a write
/// triggers, its effects, and the reset at a new connection.
extension Simulator {
    /// The first exchange rule a write of `value` to `c` matches in the device's current state.
    func exchangeRule(_ d: SimulatedDevice, _ c: SimCharacteristic, value: [UInt8]) -> ExchangeRule? {
        d.spec.exchanges?.rule(characteristic: c.uuid, value: value, state: d.exchangeState)
    }

    /// Runs `rule`'s effects in order (its `error`, if any, the caller answers): notifications go
    /// out only to subscribed clients, as the existing `echo_to` does, and are logged like every
    /// notification; `set` changes what reads return; `state` moves the device's exchange state.
    func runExchange(_ d: SimulatedDevice, _ rule: ExchangeRule) {
        for effect in rule.effects {
            switch effect {
            case .notify(let uuid, let value):
                guard let target = d.gatt.scenarioCharacteristic(uuid: uuid) else { continue }
                target.store(value, offset: 0)
                if target.isActive {
                    Self.emitNotification(server: server, log: notifyLog, characteristic: target, value: value,
                                          socket: target.notifySocket)
                } else {
                    logger.debug("exchange notification dropped: nobody subscribed", metadata: [
                        "address": "\(d.spec.address)", "uuid": "\(uuid)", "value": "\(Hex.encode(value))",
                    ])
                }
            case .set(let uuid, let value):
                guard let target = d.gatt.scenarioCharacteristic(uuid: uuid) else { continue }
                target.store(value, offset: 0)
                if target.isBatteryLevel { Self.updateBatteryPercentage(server: server, characteristic: target, value: value) }
            case .state(let name):
                d.exchangeState = name
            case .error:
                break
            }
        }
        logger.debug("exchange", metadata: [
            "address": "\(d.spec.address)", "uuid": "\(rule.characteristic)", "state": "\(d.exchangeState)",
        ])
    }

    /// A new link: with `reset_on_connect`, the exchange state and the values of the characteristics
    /// the rules write, notify or set go back to the scenario's.
    func resetExchanges(_ d: SimulatedDevice) {
        guard let exchanges = d.spec.exchanges, exchanges.resetOnConnect else { return }
        d.exchangeState = exchanges.initialState
        for uuid in exchanges.touchedCharacteristics {
            guard let c = d.gatt.scenarioCharacteristic(uuid: uuid) else { continue }
            c.store(c.initialValue, offset: 0)
        }
    }
}

extension GattDatabase {
    /// The characteristic with `uuid` in the scenario's services. They follow the generated Generic
    /// Attribute service, so the last match is the scenario's; the loader makes the UUIDs exchanges
    /// name unique among the scenario's characteristics.
    func scenarioCharacteristic(uuid: String) -> SimCharacteristic? {
        characteristics.last { $0.uuid == uuid }
    }
}
