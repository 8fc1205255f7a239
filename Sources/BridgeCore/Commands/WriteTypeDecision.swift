/// Decides how a command may use a characteristic, from its properties (BlueZ's `Flags`).
///
/// Writes (`response` is the command's optional `"response"` field):
///
/// - absent: ``GattWriteType/request`` when Flags hold `write`, else ``GattWriteType/command``
///   when they hold `write-without-response`;
/// - `true`: ``GattWriteType/request``, which needs `write`;
/// - `false`: ``GattWriteType/command``, which needs `write-without-response`.
///
/// A type the Flags lack fails with `unsupported_write_type`, or with
/// `not_writable` when the Flags hold neither write flag. A characteristic's
/// configured `write_types` replace what the Flags say about writes.
///
/// Reads need the `read` flag, else `not_readable`.
public enum WriteTypeDecision {
    /// The write type for a command that asked for `response` (`nil`: not given).
    /// - Throws: ``CommandError`` with ``CommandErrorCode/notWritable`` when the
    ///   characteristic has neither write flag, ``CommandErrorCode/unsupportedWriteType``
    ///   when it lacks the one asked for.
    /// - Parameter configured: the characteristic's `write_types`, which take the place of the Flags.
    public static func writeType(
        properties: CharacteristicProperties, response: Bool?, configured: Set<GattWriteType>? = nil
    ) throws(CommandError) -> GattWriteType {
        let request = configured.map { $0.contains(.request) } ?? properties.contains(.write)
        let command = configured.map { $0.contains(.command) } ?? properties.contains(.writeWithoutResponse)
        guard request || command else {
            throw CommandError(.notWritable, "the characteristic is not writable")
        }
        switch response {
        case nil:
            return request ? .request : .command
        case true?:
            guard request else {
                throw CommandError(
                    .unsupportedWriteType,
                    "the characteristic allows only writes without response (\"response\": false)")
            }
            return .request
        case false?:
            guard command else {
                throw CommandError(
                    .unsupportedWriteType,
                    "the characteristic allows only writes with response (\"response\": true)")
            }
            return .command
        }
    }

    /// Checks that the characteristic can be read.
    /// - Throws: ``CommandError`` with ``CommandErrorCode/notReadable`` without the `read` flag.
    public static func checkReadable(properties: CharacteristicProperties) throws(CommandError) {
        guard properties.canRead else {
            throw CommandError(.notReadable, "the characteristic is not readable")
        }
    }
}
