/// A failure of the test harness (something did not start, or did not happen in time).
struct HarnessError: Error, CustomStringConvertible {
    /// What went wrong, with the relevant log excerpts.
    var description: String

    init(_ description: String) {
        self.description = description
    }
}
