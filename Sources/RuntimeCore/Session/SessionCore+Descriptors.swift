import BridgeCore

/// Which descriptor a session reads of a characteristic (SPEC §11, "Self-describing characteristics").
package enum DescriptorKind: Sendable, Hashable {
    /// Characteristic Presentation Format (0x2904): decodes the values when no `format` is configured.
    case presentationFormat
    /// Characteristic User Description (0x2901): names the Home Assistant entity when no `name` is configured.
    case userDescription

    package var uuid: BluetoothUUID {
        switch self {
        case .presentationFormat: return PresentationFormat.descriptorUUID
        case .userDescription: return UserDescription.descriptorUUID
        }
    }

    package var label: String {
        switch self {
        case .presentationFormat: return "presentation format"
        case .userDescription: return "user description"
        }
    }
}

extension SessionCore {
    /// Queues the descriptor reads that characteristics of `list` need, once per connection and
    /// before their subscriptions and reads: the Presentation Format of those without a configured
    /// `format` whose values come (read or notify), the User Description of those without a
    /// configured `name` while Home Assistant discovery is on. Nothing for characteristics whose
    /// descriptors the device does not have.
    package mutating func enqueueDescriptorReads(_ list: [MappedCharacteristic], _ s: inout Step) {
        for mc in list {
            let settings = device.config?.characteristic(mc.uuid)
            let descriptors = descriptorPaths(of: mc.path, s)
            if settings?.format == nil, mc.canRead || mc.canNotify, let path = descriptors[.presentationFormat] {
                link?.setup.operations.append(.readDescriptor(mc, .presentationFormat, path: path))
            }
            if settings?.name == nil, configuration.homeAssistantDiscovery, let path = descriptors[.userDescription] {
                link?.setup.operations.append(.readDescriptor(mc, .userDescription, path: path))
            }
        }
    }

    /// The 0x2904 and 0x2901 descriptors of a characteristic in the device view, by kind.
    package func descriptorPaths(of characteristic: String, _ s: Step) -> [DescriptorKind: String] {
        for service in s.view?.services ?? [] {
            guard let ch = service.characteristics.first(where: { $0.path == characteristic }) else { continue }
            var out: [DescriptorKind: String] = [:]
            out[.presentationFormat] = ch.presentationFormat
            out[.userDescription] = ch.userDescription
            return out
        }
        return [:]
    }

    /// A descriptor's value came back (or its read failed). A failure only costs what the
    /// descriptor would have given: the values keep their format, the entity its name.
    package mutating func descriptorRead(
        _ mc: MappedCharacteristic, _ kind: DescriptorKind, _ result: Result<[UInt8], BluetoothError>, attempt: Int, _ s: inout Step
    ) {
        guard attempt == generation else {
            return s.log(.debug, "ReadValue of \(mc.path)'s \(kind.label): completion of an earlier connection dropped")
        }
        let name = "\(mc.key.service)/\(mc.key.characteristic)"
        let bytes: [UInt8]
        switch result {
        case .success(let value): bytes = value
        case .failure(let error):
            return s.log(.notice, "reading the \(kind.label) of \(name) failed (\(error)); going on without it")
        }
        switch kind {
        case .presentationFormat:
            guard let cpf = PresentationFormat(descriptor: bytes), cpf.isUsable else {
                return s.log(.notice, "\(name): presentation format \(Hex.encode(bytes)) is not usable; keeping format \(mc.format.rawValue)")
            }
            characteristics[mc.key]?.presentation = cpf
            s.emit(.present(path: mc.path, cpf))
            let unit = cpf.homeAssistantUnit.map { " \($0.unit)" } ?? ""
            s.log(.info, "\(name): decoded by its presentation format (\(cpf.format), exponent \(cpf.exponent)\(unit))")
        case .userDescription:
            guard let text = UserDescription.name(bytes) else { return }
            characteristics[mc.key]?.userDescription = text
            s.log(.debug, "\(name): named \"\(text)\" by its user description")
        }
    }
}
