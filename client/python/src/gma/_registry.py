"""A client of the registry's HTTP API (protocol.md section 7), on http.client and json alone."""

import http.client
import json
import urllib.parse

from ._errors import ErrorCode, GmaError

API_PATH = "/registry/v1"
MAX_ANSWER_BYTES = 64 << 20


class RegistryError(GmaError):
    """A registry call that failed: ``status`` is the HTTP status (0: no answer came), ``registry_code`` the
    registry's own code (NOT_FOUND, CONFLICT, ...), ``code`` the protocol's as Java's Failures maps it."""

    _BY_STATUS = {401: ErrorCode.UNAUTHORIZED, 403: ErrorCode.FORBIDDEN, 404: ErrorCode.NO_ROUTE,
                  409: ErrorCode.FORBIDDEN, 0: ErrorCode.TIMEOUT}

    def __init__(self, status, registry_code, sentence):
        super().__init__(self._BY_STATUS.get(status, ErrorCode.INTERNAL), sentence)
        self.status = status
        self.registry_code = registry_code


class QueryResult:
    """What ``query`` answers: ``columns`` (names) and ``rows`` (lists of values); iterable as dicts."""

    def __init__(self, columns, rows, truncated=False):
        self.columns = columns
        self.rows = rows
        self.truncated = truncated

    def __iter__(self):
        return (dict(zip(self.columns, r)) for r in self.rows)

    def __len__(self):
        return len(self.rows)

    def __repr__(self):
        return "QueryResult(columns=%r, %d rows)" % (self.columns, len(self.rows))


class RegistryClient:
    """Calls one registry (or several sharing a database, given separated by commas: each call goes on to
    the next when one gives no answer). Thread-safe: each call opens its own connection."""

    def __init__(self, base_urls, ssl_context=None, authorization=None, timeout=10.0):
        self._apis = []
        for url in base_urls.split(","):
            url = url.strip()
            u = urllib.parse.urlsplit(url)
            if u.scheme not in ("http", "https") or not u.hostname:
                raise ValueError('registry URL "%s" is not an http or https URL' % url)
            path = u.path.rstrip("/")
            if not path.endswith(API_PATH):
                path += API_PATH
            self._apis.append((u.scheme, u.hostname, u.port, path))
        if authorization is not None:
            for scheme, host, port, _ in self._apis:
                if scheme != "https":
                    raise ValueError("registry URL %s://%s: expected scheme 'https' but was '%s' (security is"
                                     " on: credentials must not cross the network in plaintext)"
                                     % (scheme, host, scheme))
        self._ssl = ssl_context
        self._authorization = authorization  # a callable answering "Bearer ..." or None
        self._timeout = timeout

    # ------------------------------------------------------------------ calls

    def register(self, label, kind, domain, host, port, exact=False, lease_seconds=None, attributes=None,
                 nonce=None):
        """Registers an endpoint: its name. 409 (CONFLICT): an exact name (or the nonce asked) is taken."""
        body = {"label": label, "kind": kind, "domain": domain, "host": host, "port": port, "exact": exact}
        if nonce is not None:
            body["nonce"] = nonce
        if lease_seconds is not None:
            body["leaseSeconds"] = lease_seconds
        body["attributes"] = dict(attributes or {})
        return self._call("POST", ["endpoints"], _json(body), "application/json")["name"]

    def renew(self, name):
        """Renews a lease; 404 (NOT_FOUND): it had expired, register again."""
        return self._call("PUT", ["endpoints", name, "lease"], b"", None)

    def lookup(self, name):
        """A live endpoint as a dict (name, host, port, ...); 404 when there is none."""
        return self._call("GET", ["endpoints", name])

    def unregister(self, name):
        self._call("DELETE", ["endpoints", name], b"", None)

    def health(self):
        return self._call("GET", ["health"])

    def query(self, sql):
        """Runs one SELECT over the registry's views."""
        a = self._call("POST", ["query"], sql.encode("utf-8"), "text/plain; charset=utf-8")
        return QueryResult(list(a["columns"]), [list(r) for r in a["rows"]], bool(a.get("truncated", False)))

    def declare_table(self, name, columns, primary_key):
        """Declares a monitoring table: True when the registry stored it now."""
        body = {"name": name, "columns": [{"name": c, "type": t} for c, t in columns],
                "primaryKey": list(primary_key)}
        return bool(self._call("POST", ["tables"], _json(body), "application/json").get("created"))

    def table(self, name):
        return self._call("GET", ["tables", name])

    def publish_table(self, producer, table, predicate, latest_seconds, history_seconds):
        body = {"latestRetentionSeconds": latest_seconds, "historyRetentionSeconds": history_seconds}
        if predicate is not None:
            body["predicate"] = predicate
        self._call("PUT", ["endpoints", producer, "tables", table], _json(body), "application/json")

    # ------------------------------------------------------------------ HTTP

    def _call(self, method, segments, body=None, content_type=None):
        last = None
        for api in self._apis:
            try:
                return self._exchange(api, method, segments, body, content_type)
            except RegistryError as e:
                if e.status not in (0, 502, 503, 504):
                    raise
                last = e
        raise last

    def _exchange(self, api, method, segments, body, content_type):
        scheme, host, port, base = api
        path = base + "".join("/" + urllib.parse.quote(s, safe="") for s in segments)
        what = "%s %s" % (method, path)
        if scheme == "https":
            conn = http.client.HTTPSConnection(host, port, timeout=self._timeout, context=self._ssl)
        else:
            conn = http.client.HTTPConnection(host, port, timeout=self._timeout)
        headers = {"Accept": "application/json"}
        if content_type:
            headers["Content-Type"] = content_type
        if self._authorization is not None:
            credentials = self._authorization()
            if credentials:
                headers["Authorization"] = credentials
        try:
            try:
                conn.request(method, path, body=body, headers=headers)
                response = conn.getresponse()
                data = response.read(MAX_ANSWER_BYTES + 1)
            except (OSError, http.client.HTTPException) as e:
                raise RegistryError(0, "UNREACHABLE", "registry at %s://%s:%s did not answer %s: %s"
                                    % (scheme, host, port, what, e)) from None
        finally:
            conn.close()
        status = response.status
        if 200 <= status < 300:
            if not data:
                return {}
            try:
                answer = json.loads(data.decode("utf-8"))
            except ValueError as e:
                raise RegistryError(status, "MALFORMED_ANSWER", "%s answered %d with something that is not JSON"
                                    " (%s): is this URL a GMA registry's?" % (what, status, e)) from None
            if not isinstance(answer, dict):
                raise RegistryError(status, "MALFORMED_ANSWER", what + " answered something that is not a JSON"
                                    " object")
            return answer
        code, message = "HTTP_%d" % status, "%s answered %d" % (what, status)
        try:
            error = json.loads(data.decode("utf-8"))
            if isinstance(error, dict) and "error" in error:
                code = str(error["error"])
                message = str(error.get("message", message))
        except ValueError:
            pass
        raise RegistryError(status, code, message)


def _json(body):
    return json.dumps(body).encode("utf-8")
