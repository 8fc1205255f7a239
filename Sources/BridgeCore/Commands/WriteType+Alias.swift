/// The old name of ``GattWriteType``, kept while parallel work still uses it (issue 16: to be
/// removed once every user says `GattWriteType`).
public typealias WriteType = GattWriteType
