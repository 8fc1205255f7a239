import Hummingbird

/// The page's authentication (SPEC §14): with `web.auth_token`, every request but the login page and the static
/// assets needs `Authorization: Bearer <token>` or the session cookie `POST /login` sets. Without a token
/// (loopback only) everything is open.
///
/// Refused: `/api/...` gets 401; a page (`GET /`) is redirected to `/login`.
public struct AuthMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The session cookie's name.
    public static var cookieName: String { "bmb_session" }

    /// The token, nil for no authentication.
    public let token: String?
    /// The session cookie's value: random per process, never the token itself.
    public let session: String

    /// Creates the middleware.
    public init(token: String?, session: String) {
        self.token = token
        self.session = session
    }

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard token != nil else { return try await next(request, context) }
        let path = request.uri.path
        if path == "/login" || path.hasPrefix("/assets/") || isAuthorized(request) {
            return try await next(request, context)
        }
        if request.method == .get, !path.hasPrefix("/api/") {
            return Response(status: .seeOther, headers: [.location: "/login", .cacheControl: "no-store"])
        }
        var headers = HTTPFields()
        headers[.wwwAuthenticate] = "Bearer"
        headers[.contentType] = "application/json"
        let body = "{\"status\":\"error\",\"data\":{},\"error\":{\"code\":\"unauthorized\",\"message\":\"authentication required\"}}"
        return Response(status: .unauthorized, headers: headers, body: .init(byteBuffer: ByteBuffer(string: body)))
    }

    /// Whether the request carries the token or the session cookie.
    public func isAuthorized(_ request: Request) -> Bool {
        guard let token else { return true }
        for value in request.headers[values: .authorization] {
            let parts = value.split(separator: " ", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "bearer",
                Self.constantTimeEqual(String(parts[1].trimmingSpaces()), token)
            {
                return true
            }
        }
        for header in request.headers[values: .cookie] {
            for pair in header.split(separator: ";") {
                let trimmed = pair.trimmingSpaces()
                guard let equals = trimmed.firstIndex(of: "=") else { continue }
                if trimmed[..<equals] == Self.cookieName,
                    Self.constantTimeEqual(String(trimmed[trimmed.index(after: equals)...]), session)
                {
                    return true
                }
            }
        }
        return false
    }

    /// Compares without stopping at the first difference (the time does not tell how much of a guess was right).
    public static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        var difference = UInt8(truncatingIfNeeded: x.count ^ y.count)
        for index in 0..<max(x.count, y.count) {
            let p = index < x.count ? x[index] : 0
            let q = index < y.count ? y[index] : 0
            difference |= p ^ q
        }
        return difference == 0 && x.count == y.count
    }
}
