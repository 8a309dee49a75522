package io.gma.registry;

/**
 * A refused request: the HTTP status, a code and one sentence naming what was wrong. The servlet turns
 * it into {@code {"error": CODE, "message": sentence}}.
 */
final class ApiException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final int status;
    private final String code;

    ApiException(int status, String code, String message) {
        super(message, null, false, false);
        this.status = status;
        this.code = code;
    }

    static ApiException badRequest(String message) {
        return new ApiException(400, "BAD_REQUEST", message);
    }

    static ApiException notFound(String message) {
        return new ApiException(404, "NOT_FOUND", message);
    }

    static ApiException conflict(String message) {
        return new ApiException(409, "CONFLICT", message);
    }

    static ApiException forbidden(String message) {
        return new ApiException(403, "FORBIDDEN", message);
    }

    int status() {
        return status;
    }

    String code() {
        return code;
    }
}
