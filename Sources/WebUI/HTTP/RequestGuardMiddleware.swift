import Hummingbird

/// Refuses cross-site and mistyped writes (SPEC §14): a POST must be `application/json` (the login form:
/// `application/x-www-form-urlencoded`), and an `Origin` header, when present, must name this server's host.
/// A form on another site can then neither post JSON nor pass the origin check. (The login form's own post may
/// carry `Origin: null`.)
public struct RequestGuardMiddleware<Context: RequestContext>: RouterMiddleware {
    /// Creates the middleware.
    public init() {}

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard request.method == .post else { return try await next(request, context) }
        // The login form is a navigation: under `Referrer-Policy: no-referrer` the browser sends `Origin: null`.
        // Taking it there is harmless (logging someone in takes the token); the JSON API never accepts it.
        let isLogin = request.uri.path == "/login"
        if let origin = request.headers[.origin], !(isLogin && origin == "null"),
            !Self.originMatches(origin, host: Self.host(of: request))
        {
            throw HTTPError(.forbidden, message: "the Origin does not match this server")
        }
        let expected = isLogin ? "application/x-www-form-urlencoded" : "application/json"
        guard let type = request.headers[.contentType], Self.mediaType(type) == expected else {
            throw HTTPError(.unsupportedMediaType, message: "expected Content-Type: \(expected)")
        }
        return try await next(request, context)
    }

    /// The request's `Host` (HTTP/1.1) or `:authority`.
    static func host(of request: Request) -> String? {
        request.head.authority
    }

    /// Whether `origin` is `http://host` or `https://host` (case-insensitive).
    public static func originMatches(_ origin: String, host: String?) -> Bool {
        guard let host, !host.isEmpty else { return false }
        let lowered = origin.lowercased()
        let wanted = host.lowercased()
        return lowered == "http://" + wanted || lowered == "https://" + wanted
    }

    /// `application/json` of `Application/JSON; charset=utf-8`.
    static func mediaType(_ value: String) -> String {
        let base = value.split(separator: ";", maxSplits: 1).first ?? ""
        return base.trimmingSpaces().lowercased()
    }
}

extension Substring {
    func trimmingSpaces() -> Substring {
        var text = self
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return text
    }
}
