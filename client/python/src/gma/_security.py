"""Security as docs/security.md says, with the files of ``gma keys``: TLS on every hop, this side's tokens
(``gma2``, Ed25519-signed; or ``gma1``, HMAC-SHA256 with the domain's keys), and, for links accepted, the
tokens of others checked against the trust file and the ``send`` rules.

Token formats (security/README.md)::

    gma2.<issuer>.<keyId>.<subject>.<audience>.<expiry>.<signature>    Ed25519 over all before the last dot
    gma1.<keyId>.<subject>.<expiry>.<signature>                         HMAC-SHA256, one domain only

issuer, subject and audience in Base64url without padding; expiry in seconds since the epoch.

TLS: ``ca.pem`` is what this side trusts. Python's ssl module reads no PKCS12 key store, so an endpoint that
accepts links under security needs its certificate and key in PEM (``cert_file``, ``key_file``; from
``client-NAME.p12`` with ``openssl pkcs12``): ``from_directory`` takes ``client-NAME.pem`` and
``client-NAME.key.pem`` (or ``server.pem`` and ``server.key.pem``) when they are there. Without them, links
to this endpoint are refused (it still sends, and reaches other domains through its PC servlet).
"""

import base64
import fnmatch
import hashlib
import hmac
import os
import re
import ssl
import threading
import time
from datetime import datetime

from . import _ed25519
from ._errors import ErrorCode, GmaError

BEARER = "Bearer "
_PKCS8_ED25519 = bytes.fromhex("302e020100300506032b657004220420")
_X509_ED25519 = bytes.fromhex("302a300506032b6570032100")
SKEW = 60
MAX_LIFETIME = 24 * 3600


def _b64u(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode("ascii")


def _unb64u(s):
    if not re.fullmatch(r"[A-Za-z0-9_-]*", s):
        raise ValueError("not Base64url")
    b = base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))
    if _b64u(b) != s:
        raise ValueError("not canonical Base64url")
    return b


def _properties(path):
    """A Java properties file of ``key = value`` lines, as gma keys writes them."""
    out = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line or line[0] in "#!":
                continue
            m = re.match(r"([^=:\s]+)\s*[=:\s]\s*(.*)$", line)
            if m:
                out[m.group(1)] = m.group(2).strip()
    return out


def _check_private(path):
    mode = os.stat(path).st_mode & 0o777
    if mode & 0o004:
        raise GmaError(ErrorCode.UNAUTHORIZED, "%s holds a secret and is readable by every user of this machine"
                       " (%s): make it private with chmod 600 %s" % (path, oct(mode), path))


class Pattern:
    """A glob, a comma-separated list of globs, or a regular expression between slashes, over a whole name."""

    def __init__(self, text):
        self.text = text
        if len(text) > 1 and text.startswith("/") and text.endswith("/"):
            self._res = [re.compile(text[1:-1])]
        else:
            self._res = [re.compile(fnmatch.translate(g)) for g in text.split(",")]

    def matches(self, value):
        return any(r.fullmatch(value) for r in self._res)


class SigningKey:
    """An issuer's Ed25519 key, read from ``NAME.key``."""

    def __init__(self, issuer, key_id, seed):
        self.issuer = issuer
        self.key_id = key_id
        self._seed = seed

    @classmethod
    def read(cls, path):
        _check_private(path)
        p = _properties(path)
        issuer, current = p.get("issuer"), p.get("current")
        if not issuer or not current or current + ".private" not in p:
            raise GmaError(ErrorCode.INTERNAL, "%s: not a GMA signing key file (issuer, current, <id>.private)"
                           % path)
        der = base64.b64decode(p[current + ".private"])
        if len(der) != 48 or not der.startswith(_PKCS8_ED25519):
            raise GmaError(ErrorCode.INTERNAL, "%s: the key %s is not a Base64 PKCS#8 Ed25519 key" % (path, current))
        return cls(issuer, current, der[16:])

    def token(self, subject, audience, expiry):
        signed = "gma2.%s.%s.%s.%s.%d" % (_b64u(self.issuer.encode()), self.key_id, _b64u(subject.encode()),
                                          _b64u(audience.encode()), expiry)
        return signed + "." + _b64u(_ed25519.sign(self._seed, signed.encode("ascii")))


class Trust:
    """The trust file: issuer, key id, public key, the subjects it vouches for, and an optional until."""

    def __init__(self, keys):
        self.keys = keys  # (issuer, key id) -> (public key bytes, Pattern, until or None)

    @classmethod
    def read(cls, path):
        keys = {}
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                line = line.split("#", 1)[0].strip()
                if not line:
                    continue
                w = line.split()
                if len(w) not in (4, 5):
                    raise GmaError(ErrorCode.INTERNAL, "%s line %d: expected 'issuer keyId publicKey subjects"
                                   " [until=instant]'" % (path, n))
                der = base64.b64decode(w[2])
                if len(der) != 44 or not der.startswith(_X509_ED25519):
                    raise GmaError(ErrorCode.INTERNAL, "%s line %d: not an Ed25519 public key" % (path, n))
                until = None
                if len(w) == 5:
                    until = datetime.fromisoformat(w[4][len("until="):].replace("Z", "+00:00")).timestamp()
                keys[(w[0], w[1])] = (der[12:], Pattern(w[3]), until)
        return cls(keys)

    def vouches(self, issuer, subject):
        return any(i == issuer and p.matches(subject) for (i, _), (_, p, _) in self.keys.items())


class Rules:
    """``verb identity target`` lines; what no rule allows is refused."""

    def __init__(self, rules):
        self.rules = rules

    @classmethod
    def read(cls, path):
        rules = []
        with open(path, encoding="utf-8") as f:
            for line in f:
                w = line.split("#", 1)[0].split()
                if len(w) == 3:
                    rules.append((w[0].lower(), Pattern(w[1]), Pattern(w[2])))
        return cls(rules)

    def allows(self, identity, verb, target):
        return any(v == verb and i.matches(identity) and t.matches(target) for v, i, t in self.rules)


class Security:
    """TLS and credentials for an endpoint: pass ``security=Security.from_directory(dir, identity=...)``.

    - ``ca_file``: the CA certificates (PEM) that every peer's certificate must chain to; host names are checked;
    - ``identity``: who this side is, the subject of its tokens;
    - ``signing_key``: a :class:`SigningKey` (``IDENTITY.key``), or ``hmac_keys`` (``domain.keys``);
    - ``trust``, ``rules``: to check the tokens of peers that link to this endpoint;
    - ``cert_file``, ``key_file``: this endpoint's certificate and key in PEM, to accept links.
    """

    def __init__(self, ca_file, identity=None, signing_key=None, hmac_keys=None, trust=None, rules=None,
                 cert_file=None, key_file=None, token_lifetime=3600):
        self.ca_file = ca_file
        self.identity = identity
        self.signing_key = signing_key
        self.hmac_keys = hmac_keys  # (current key id, {key id: secret})
        self.trust = trust
        self.rules = rules or Rules([])
        self.cert_file = cert_file
        self.key_file = key_file
        self.token_lifetime = token_lifetime
        self.authenticates = True
        self._tokens = {}
        self._lock = threading.Lock()
        self._client = None
        self._server = None
        self._verified = {}

    @classmethod
    def from_directory(cls, directory, identity=None):
        """The files of ``gma keys --dir DIR``: ca.pem; IDENTITY.key, else the key of the one issuer the trust
        lets vouch for IDENTITY; trust; domain.keys; rules; and PEM certificate and key when present."""
        d = str(directory)
        path = lambda n: os.path.join(d, n)  # noqa: E731
        if not os.path.exists(path("ca.pem")):
            raise GmaError(ErrorCode.INTERNAL, "%s has no ca.pem: is it a directory made by gma keys?" % d)
        trust = Trust.read(path("trust")) if os.path.exists(path("trust")) else None
        key = None
        if identity:
            if os.path.exists(path(identity + ".key")):
                key = SigningKey.read(path(identity + ".key"))
            elif trust is not None:
                issuers = sorted({i for (i, _) in trust.keys if trust.vouches(i, identity)
                                  and os.path.exists(path(i + ".key"))})
                if len(issuers) > 1:
                    raise GmaError(ErrorCode.INTERNAL, "%s holds the keys of %s, which may each vouch for %s:"
                                   " give it a key of its own" % (d, " and ".join(issuers), identity))
                if issuers:
                    key = SigningKey.read(path(issuers[0] + ".key"))
        hmac_keys = None
        if os.path.exists(path("domain.keys")):
            _check_private(path("domain.keys"))
            p = _properties(path("domain.keys"))
            hmac_keys = (p.pop("current"), {k: base64.b64decode(v) for k, v in p.items()})
        rules = Rules.read(path("rules")) if os.path.exists(path("rules")) else None
        cert = key_file = None
        for stem in (("client-" + identity) if identity else None, "server"):
            if stem and os.path.exists(path(stem + ".pem")) and os.path.exists(path(stem + ".key.pem")):
                cert, key_file = path(stem + ".pem"), path(stem + ".key.pem")
                break
        return cls(path("ca.pem"), identity, key, hmac_keys, trust, rules, cert, key_file)

    # ------------------------------------------------------------------ TLS

    def client_context(self):
        with self._lock:
            if self._client is None:
                c = ssl.create_default_context(cafile=self.ca_file)
                c.minimum_version = ssl.TLSVersion.TLSv1_2
                if self.cert_file:
                    c.load_cert_chain(self.cert_file, self.key_file)
                self._client = c
            return self._client

    def server_context(self):
        """The context links are accepted with; None when this side has no certificate (links are refused)."""
        if not self.cert_file:
            return None
        with self._lock:
            if self._server is None:
                c = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH, cafile=self.ca_file)
                c.minimum_version = ssl.TLSVersion.TLSv1_2
                c.verify_mode = ssl.CERT_OPTIONAL
                c.load_cert_chain(self.cert_file, self.key_file)
                self._server = c
            return self._server

    # ------------------------------------------------------------------ this side's tokens

    def bearer(self, audience):
        """``Bearer <token>`` for ``audience`` (the registry, a domain, an endpoint's name), or None: this side
        has no credential. A token lives an hour and is made again when half of it has passed."""
        t = self.token(audience)
        return BEARER + t if t else None

    def token(self, audience):
        if not self.identity:
            return None
        key = "" if self.signing_key is None else audience  # an HMAC token names no audience: one serves all
        now = time.time()
        with self._lock:
            held = self._tokens.get(key)
            if held and now < held[1] - self.token_lifetime / 2:
                return held[0]
            expiry = int(now + self.token_lifetime)
            if self.signing_key is not None:
                t = self.signing_key.token(self.identity, audience, expiry)
            elif self.hmac_keys is not None:
                kid, secrets = self.hmac_keys
                signed = "gma1.%s.%s.%d" % (kid, _b64u(self.identity.encode()), expiry)
                t = signed + "." + _b64u(hmac.new(secrets[kid], signed.encode("ascii"), hashlib.sha256).digest())
            else:
                return None
            if len(self._tokens) >= 256:
                self._tokens.clear()
            self._tokens[key] = (t, expiry)
            return t

    # ------------------------------------------------------------------ others' tokens

    def authenticate(self, credentials, audience):
        """The identity a ``Bearer`` credential proves to ``audience``; GmaError UNAUTHORIZED otherwise."""
        if not credentials:
            raise GmaError(ErrorCode.UNAUTHORIZED, "no credentials: HELLO must carry Bearer <token>")
        if not credentials.startswith(BEARER):
            raise GmaError(ErrorCode.UNAUTHORIZED, "credentials are not Bearer <token>")
        token = credentials[len(BEARER):]
        now = time.time()
        parts = token.split(".")
        bad = GmaError(ErrorCode.UNAUTHORIZED, "token refused: it is not a valid token of a trusted issuer")
        try:
            if parts[0] == "gma2" and len(parts) == 7 and self.trust is not None:
                issuer, kid = _unb64u(parts[1]).decode(), parts[2]
                subject, aud = _unb64u(parts[3]).decode(), _unb64u(parts[4]).decode()
                expiry = int(parts[5]) if re.fullmatch(r"\d{1,12}", parts[5]) else None
                if expiry is None:
                    raise bad
                entry = self.trust.keys.get((issuer, kid))
                if entry is None or (entry[2] is not None and now > entry[2]):
                    raise GmaError(ErrorCode.UNAUTHORIZED, "token refused (UNKNOWN_KEY): key %s of issuer \"%s\""
                                   " is not trusted" % (kid, issuer))
                signed = token[:token.rfind(".")]
                if not self._verified_before(token):
                    if not _ed25519.verify(entry[0], signed.encode("ascii"), _unb64u(parts[6])):
                        raise bad
                    self._remember(token)
                if not entry[1].matches(subject):
                    raise GmaError(ErrorCode.UNAUTHORIZED, "token refused (FOREIGN_SUBJECT): issuer \"%s\" is not"
                                   " trusted to vouch for \"%s\"" % (issuer, subject))
                if aud != audience:
                    raise GmaError(ErrorCode.UNAUTHORIZED, "token refused (WRONG_AUDIENCE): the token is for"
                                   " \"%s\", not for \"%s\"" % (aud, audience))
            elif parts[0] == "gma1" and len(parts) == 5 and self.hmac_keys is not None:
                kid, subject = parts[1], _unb64u(parts[2]).decode()
                expiry = int(parts[3]) if re.fullmatch(r"\d{1,12}", parts[3]) else None
                secret = self.hmac_keys[1].get(kid)
                if secret is None:
                    raise GmaError(ErrorCode.UNAUTHORIZED, "token refused (UNKNOWN_KEY): key %s is unknown" % kid)
                want = hmac.new(secret, token[:token.rfind(".")].encode("ascii"), hashlib.sha256).digest()
                if expiry is None or not hmac.compare_digest(want, _unb64u(parts[4])):
                    raise bad
            else:
                raise bad
        except (ValueError, UnicodeDecodeError):
            raise bad from None
        if now > expiry + SKEW:
            raise GmaError(ErrorCode.UNAUTHORIZED, "token refused (EXPIRED): it expired at %d" % expiry)
        if expiry > now + MAX_LIFETIME + SKEW:
            raise GmaError(ErrorCode.UNAUTHORIZED, "token refused (TOO_LONG_LIVED): it lives past the longest"
                           " lifetime, 24 h")
        return subject

    def _verified_before(self, token):
        with self._lock:
            return token in self._verified

    def _remember(self, token):
        with self._lock:
            if len(self._verified) >= 4096:
                self._verified.clear()
            self._verified[token] = True

    def admit(self, hello, certificate_identity, own_name, registry):
        """The identity of a peer linking to ``own_name``, as Java's handshake checks it: its token (or its
        client certificate's CN), the ``send`` rules to this endpoint, and that it may go by the name its HELLO
        gives (its identity, or a name the registry says it registered). GmaError UNAUTHORIZED or FORBIDDEN."""
        text = hello.data.decode("utf-8", "replace")
        if not text and certificate_identity:
            who = certificate_identity
        else:
            who = self.authenticate(text, own_name)
        if not self.rules.allows(who, "send", own_name):
            raise GmaError(ErrorCode.FORBIDDEN, "\"%s\" may not send to \"%s\": no send rule allows it"
                           % (who, own_name))
        name = hello.sender
        if name and name != who:
            try:
                owner = registry.lookup(name).get("owner")
            except GmaError as e:
                if e.code == ErrorCode.NO_ROUTE:
                    raise GmaError(ErrorCode.FORBIDDEN, "\"%s\" may not go by \"%s\": nobody registered that name"
                                   % (who, name)) from None
                raise GmaError(ErrorCode.INTERNAL, "cannot check the name \"%s\" now: %s" % (name, e.sentence)) \
                    from None
            if owner != who:
                raise GmaError(ErrorCode.FORBIDDEN, "\"%s\" may not go by \"%s\": another identity registered it"
                               % (who, name))
        return who
