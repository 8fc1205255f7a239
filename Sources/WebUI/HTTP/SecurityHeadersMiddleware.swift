import HTTPTypes
import Hummingbird

/// Puts the page's security headers on every response, errors included (SPEC §14): a Content-Security-Policy
/// that allows nothing inline and nothing from elsewhere, `nosniff`, no referrer, no framing.
public struct SecurityHeadersMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The Content-Security-Policy of every response.
    public static var contentSecurityPolicy: String {
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
            + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    }

    /// Creates the middleware.
    public init() {}

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError {
            response = try error.response(from: request, context: context)
        }
        Self.apply(to: &response.headers)
        return response
    }

    /// Sets the headers.
    public static func apply(to headers: inout HTTPFields) {
        headers[.contentSecurityPolicy] = contentSecurityPolicy
        headers[HTTPField.Name.xContentTypeOptions] = "nosniff"
        headers[HTTPField.Name.referrerPolicy] = "no-referrer"
        headers[HTTPField.Name.xFrameOptions] = "DENY"
    }
}

extension HTTPField.Name {
    static let xContentTypeOptions = HTTPField.Name("X-Content-Type-Options")!
    static let referrerPolicy = HTTPField.Name("Referrer-Policy")!
    static let xFrameOptions = HTTPField.Name("X-Frame-Options")!
}
