"""A small LTI 1.3 platform for the end-to-end tests: it launches the playground in a frame of
its own course page and receives the scores on its own AGS endpoint.

The launch message and its id_token, the tool's registration, the OIDC login initiation URL,
the access token's issue and the bearer token's check come from lti1p3platform 0.1.8. Beyond
what that package checks (0.1.8 leaves each of these out or gets it wrong), this fixture itself:
- renders the auto-post form with every value HTML-escaped, and reads the tool's authorisation
  request from a GET's query or a POST's form alike;
- checks that request fully: the registered redirect_uri, response_type=id_token, scope
  openid, response_mode=form_post, prompt=none, client_id, login_hint equal to the user the
  course page launched (named by lti_message_hint, single use), a nonce never seen before and
  a state;
- checks the client assertion at the token endpoint: client_assertion_type, RS256 under the
  key named by `kid` in the tool's JWKS (fetched from the tool every time, never cached for
  good), aud equal to this token URL exactly, iss == sub == client_id, exp/iat, and a jti
  used once only; grants only the AGS scopes it offers, and says so in `scope`;
- answers 401 to a missing, bad or expired bearer token and 403 to a token without the score
  scope, checks the score's media type and fields (RFC 3339 timestamp, numbers, the known
  progress values, a user launched on that line item), ignores a score older than the last
  one (409) and counts one with the same timestamp as a duplicate instead of applying it.

Test-only endpoints: GET /health, GET /test/scores?user=U (scores received for U, in order),
GET /test/refusals (every request this platform refused, and why), POST /test/outage?down=1|0
(while down, the token and score endpoints answer 503 and count the attempts).

Run: python lti_platform.py --port 3300 --tool http://127.0.0.1:3100
The course page for a learner: http://localhost:3300/course?user=alice&lang=en
"""

import argparse
import html
import json
import sys
import threading
import time
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit
from uuid import uuid4

import jwt
import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from lti1p3platform.ags import LtiAgs
from lti1p3platform.ltiplatform import LTI1P3PlatformConfAbstract
from lti1p3platform.message_launch import LTIAdvantageMessageLaunchAbstract
from lti1p3platform.oidc_login import OIDCLoginAbstract
from lti1p3platform.registration import Registration
from lti1p3platform.request import Request

ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
SCORE_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
SCORE_TYPE = "application/vnd.ims.lis.v1.score+json"
LEARNER = "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"
ACTIVITY = {"Initialized", "Started", "InProgress", "Submitted", "Completed"}
GRADING = {"FullyGraded", "Pending", "PendingManual", "Failed", "NotReady"}


class Refused(Exception):
    """A request this platform refuses: the status, an OAuth-style error code and why."""

    def __init__(self, status, error, why):
        super().__init__(why)
        self.status, self.error, self.why = status, error, why


class PlatformConfig(LTI1P3PlatformConfAbstract):
    def init_platform_config(self, **kwargs):
        self.registration = kwargs["registration"]

    def get_registration_by_params(self, **kwargs):
        return self.registration


class Login(OIDCLoginAbstract):
    def set_lti_message_hint(self, **kwargs):
        self._lti_message_hint = kwargs["hint"]

    def get_redirect(self, url):
        return url


class AuthRequest(Request):
    def build_metadata(self, request):
        return {"method": "GET", "get_data": request, "form_data": {}}


class Launch(LTIAdvantageMessageLaunchAbstract):
    def render_launch_form(self, launch_data, **kwargs):
        return launch_data  # rendered by auto_post_form, escaped


def auto_post_form(action, fields):
    inputs = "".join(
        f'<input type="hidden" name="{html.escape(k)}" value="{html.escape(v)}">'
        for k, v in fields.items()
    )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Launching</title>'
        '<link rel="icon" href="data:,">'
        f'</head><body><form id="launch" method="post" action="{html.escape(action)}">{inputs}'
        '<noscript><button type="submit">Continue</button></noscript></form>'
        '<script>document.getElementById("launch").submit();</script></body></html>'
    )


def course_page(lang, user, login_url):
    title = "Курс: транзакционный outbox" if lang == "ru" else "Course: the transactional outbox"
    learner = "Учащийся" if lang == "ru" else "Learner"
    return (
        f'<!DOCTYPE html><html lang="{lang}"><head><meta charset="utf-8">'
        f'<title>{html.escape(title)}</title><link rel="icon" href="data:,"></head><body>'
        f'<main aria-label="{html.escape(title)}"><h1>{html.escape(title)}</h1>'
        f'<p>{learner}: <span id="learner">{html.escape(user)}</span></p>'
        f'<iframe id="tool" title="Outbox playground" src="{html.escape(login_url)}" '
        'style="width: 100%; height: 60rem; border: 0"></iframe></main></body></html>'
    )


def rfc3339(value):
    if not isinstance(value, str) or value[10:11] not in ("T", "t"):
        raise ValueError("not an RFC 3339 date-time")
    stamp = datetime.fromisoformat(value)
    if stamp.tzinfo is None:
        raise ValueError("no time zone")
    return stamp


def check_score(body):
    for name in ("userId", "activityProgress", "gradingProgress", "timestamp"):
        if name not in body:
            raise Refused(400, "invalid_score", f"the score has no {name}")
    if not isinstance(body["userId"], str) or not body["userId"]:
        raise Refused(400, "invalid_score", "userId must be a non-empty string")
    if body["activityProgress"] not in ACTIVITY or body["gradingProgress"] not in GRADING:
        raise Refused(400, "invalid_score", "unknown activityProgress or gradingProgress")
    try:
        stamp = rfc3339(body["timestamp"])
    except ValueError as err:
        raise Refused(400, "invalid_score", f"timestamp: {err}") from err
    if "scoreGiven" in body:
        given, maximum = body["scoreGiven"], body.get("scoreMaximum")
        numbers = all(type(v) in (int, float) for v in (given, maximum))
        if not numbers or given < 0 or maximum <= 0:
            raise Refused(400, "invalid_score", "scoreGiven >= 0 needs scoreMaximum > 0")
    return stamp


class Platform:
    def __init__(self, port, tool, client_id, deployment_id):
        self.iss = f"http://localhost:{port}"
        self.tool = tool.rstrip("/")
        self.token_url = f"{self.iss}/token"
        self.redirect_uris = [f"{self.tool}/lti/launch"]
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        private = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ).decode()
        public = key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        ).decode()
        self.registration = (
            Registration()
            .set_iss(self.iss)
            .set_client_id(client_id)
            .set_deployment_id(deployment_id)
            .set_launch_url(f"{self.tool}/lti/launch")
            .set_oidc_login_url(f"{self.tool}/lti/login")
            .set_tool_key_set_url(f"{self.tool}/.well-known/jwks.json")
            .set_platform_private_key(private)
            .set_platform_public_key(public)
        )
        self.config = PlatformConfig(registration=self.registration)
        # The AGS scopes the launches offer (the same defaults as Launch.set_ags).
        self.offered = LtiAgs(f"{self.iss}/lineitems", None, True).get_available_scopes()
        self.lock = threading.Lock()
        self.hints = {}  # lti_message_hint -> the launch the course page began
        self.nonces = set()
        self.jtis = {}  # jti -> exp
        self.learners = {}  # line item id -> users launched on it
        self.scores = []
        self.last = {}  # (line item, user) -> timestamp of the last applied score
        self.duplicates = 0
        self.refusals = []
        self.down = False
        self.outage_attempts = 0

    def begin_launch(self, user, lang, link, quest):
        hint = uuid4().hex
        with self.lock:
            self.hints[hint] = {"user": user, "lang": lang, "link": link, "quest": quest}
        login = Login(None, self.config)
        login.set_lti_message_hint(hint=hint)
        return login.initiate_login(user)

    def authorize(self, params):
        """The tool's authorisation request -> (launch URL, form fields)."""
        expected = {
            "response_type": "id_token",
            "response_mode": "form_post",
            "prompt": "none",
            "client_id": self.registration.get_client_id(),
        }
        for name, value in expected.items():
            if params.get(name) != value:
                why = f"{name} is {params.get(name)!r}, not {value!r}"
                raise Refused(400, "invalid_request", why)
        if "openid" not in params.get("scope", "").split():
            raise Refused(400, "invalid_scope", "scope lacks openid")
        if params.get("redirect_uri") not in self.redirect_uris:
            raise Refused(400, "invalid_request", "redirect_uri is not registered")
        if not params.get("state") or not params.get("nonce"):
            raise Refused(400, "invalid_request", "no state or no nonce")
        with self.lock:
            launch = self.hints.pop(params.get("lti_message_hint", ""), None)
            if launch is None:
                raise Refused(400, "invalid_request", "unknown or used lti_message_hint")
            if params.get("login_hint") != launch["user"]:
                raise Refused(400, "login_required", "login_hint is not the launching user")
            if params["nonce"] in self.nonces:
                raise Refused(400, "invalid_request", "nonce used before")
            self.nonces.add(params["nonce"])
            self.learners.setdefault(launch["link"], set()).add(launch["user"])
        message = Launch(AuthRequest(params), self.config)
        message.set_user_data(launch["user"], [LEARNER], full_name=launch["user"])
        message.set_resource_link_claim(launch["link"], title="Outbox playground")
        message.set_launch_context_claim("course-1", context_title="Transactional outbox")
        message.set_launch_presentation_claim(document_target="iframe")
        presentation = message.lti_claim_launch_presentation
        next(iter(presentation.values()))["locale"] = "ru-RU" if launch["lang"] == "ru" else "en-US"
        if launch["quest"]:
            message.set_custom_parameters_claim({"quest": launch["quest"]})
        # Both URLs: with the line item's alone the package's claim loses scopes.
        message.set_ags(f"{self.iss}/lineitems", f"{self.iss}/lineitems/{launch['link']}")
        data = message.lti_launch()
        return data["launch_url"], {"id_token": data["id_token"], "state": data["state"]}

    def issue_token(self, form):
        if form.get("grant_type") != "client_credentials":
            raise Refused(400, "unsupported_grant_type", "grant_type is not client_credentials")
        if form.get("client_assertion_type") != ASSERTION_TYPE:
            raise Refused(400, "invalid_request", "wrong client_assertion_type")
        assertion = form.get("client_assertion", "")
        try:
            header = jwt.get_unverified_header(assertion)
        except jwt.PyJWTError as err:
            raise Refused(401, "invalid_client", f"client_assertion: {err}") from err
        if header.get("alg") != "RS256" or not header.get("kid"):
            raise Refused(401, "invalid_client", "client_assertion is not RS256 with a kid")
        try:
            key_set = requests.get(self.registration.get_tool_key_set_url(), timeout=5).json()
        except (requests.RequestException, ValueError) as err:
            raise Refused(401, "invalid_client", f"the tool's JWKS: {err}") from err
        keys = [k for k in key_set.get("keys", []) if k.get("kid") == header["kid"]]
        if not keys:
            raise Refused(401, "invalid_client", "no key with that kid in the tool's JWKS")
        client_id = self.registration.get_client_id()
        try:
            claims = jwt.decode(
                assertion,
                jwt.PyJWK(keys[0]).key,
                algorithms=["RS256"],
                audience=self.token_url,
                issuer=client_id,
                leeway=60,
                options={"require": ["iss", "sub", "aud", "exp", "iat", "jti"]},
            )
        except jwt.PyJWTError as err:
            raise Refused(401, "invalid_client", f"client_assertion: {err}") from err
        if claims["sub"] != client_id:
            raise Refused(401, "invalid_client", "sub is not the client_id")
        granted = [s for s in form.get("scope", "").split() if s in self.offered]
        if not granted:
            raise Refused(400, "invalid_scope", "none of the asked scopes is offered")
        with self.lock:
            now = time.time()
            self.jtis = {j: exp for j, exp in self.jtis.items() if exp + 60 > now}
            if claims["jti"] in self.jtis:
                raise Refused(401, "invalid_client", "jti used before")
            self.jtis[claims["jti"]] = claims["exp"]
            # The package's own checks and token; it keeps state on the shared config.
            self.registration.set_tool_key_set(key_set)
            token = self.config.get_access_token({**form, "scope": " ".join(granted)})
        return {**token, "token_type": "Bearer"}

    def receive_score(self, lineitem, headers, raw):
        auth = headers.get("Authorization", "").split()
        if len(auth) != 2 or auth[0].lower() != "bearer":
            raise Refused(401, "invalid_token", "no bearer token")
        try:
            has_scope = self.config.validate_token(auth[1], [SCORE_SCOPE])
        except Exception as err:  # the package raises on a bad or expired token
            raise Refused(401, "invalid_token", f"bearer token: {err}") from err
        if not has_scope:
            raise Refused(403, "insufficient_scope", "the token lacks the score scope")
        if headers.get("Content-Type", "").split(";")[0].strip() != SCORE_TYPE:
            raise Refused(415, "invalid_request", f"Content-Type is not {SCORE_TYPE}")
        try:
            body = json.loads(raw)
        except ValueError as err:
            raise Refused(400, "invalid_score", "the body is not JSON") from err
        if not isinstance(body, dict):
            raise Refused(400, "invalid_score", "the body is not a JSON object")
        stamp = check_score(body)
        with self.lock:
            if lineitem not in self.learners:
                raise Refused(404, "not_found", f"no line item {lineitem}")
            if body["userId"] not in self.learners[lineitem]:
                raise Refused(400, "invalid_score", "userId was never launched on this line item")
            last = self.last.get((lineitem, body["userId"]))
            if last is not None and stamp == last:
                self.duplicates += 1
                print(f"lti-platform: a duplicate score for {body['userId']}", file=sys.stderr)
                return
            if last is not None and stamp < last:
                raise Refused(409, "old_timestamp", "older than the last score received")
            self.last[(lineitem, body["userId"])] = stamp
            self.scores.append({"lineitem": lineitem, **body})


class Handler(BaseHTTPRequestHandler):
    platform: Platform  # set in main

    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass  # refusals are logged instead

    def send(self, status, body, content_type="application/json", headers=()):
        data = (json.dumps(body) if content_type == "application/json" else body).encode()
        self.send_response(status)
        self.send_header("Content-Type", f"{content_type}; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def body(self):
        return self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()

    def do_GET(self):
        self.route("GET", "")

    def do_POST(self):
        self.route("POST", self.body())

    def route(self, method, body):
        p = self.platform
        url = urlsplit(self.path)
        query = dict(parse_qsl(url.query))
        form = dict(parse_qsl(body)) if method == "POST" else {}
        parts = url.path.split("/")
        try:
            if url.path == "/token" or parts[1] == "lineitems":
                with p.lock:
                    if p.down:
                        p.outage_attempts += 1
                        raise Refused(503, "temporarily_unavailable", "down for the test")
            if (method, url.path) == ("GET", "/health"):
                return self.send(200, {"ok": True})
            if (method, url.path) == ("GET", "/jwks"):
                return self.send(200, p.config.get_jwks())
            if (method, url.path) == ("GET", "/course"):
                lang = "en" if query.get("lang") == "en" else "ru"
                user = query.get("user") or "alice"
                link = query.get("link", "lesson-1")
                login = p.begin_launch(user, lang, link, query.get("quest"))
                return self.send(200, course_page(lang, user, login), "text/html")
            if url.path == "/auth":  # GET or POST, as OIDC allows
                action, fields = p.authorize({**query, **form})
                return self.send(200, auto_post_form(action, fields), "text/html")
            if (method, url.path) == ("POST", "/token"):
                return self.send(200, p.issue_token(form))
            if method == "POST" and len(parts) == 4 and parts[1:4:2] == ["lineitems", "scores"]:
                p.receive_score(parts[2], self.headers, body)
                self.send_response(204)
                return self.end_headers()
            if (method, url.path) == ("GET", "/test/scores"):
                with p.lock:
                    mine = [s for s in p.scores if s["userId"] == query.get("user")]
                    return self.send(200, {"scores": mine, "duplicates": p.duplicates,
                                           "outage_attempts": p.outage_attempts})
            if (method, url.path) == ("GET", "/test/refusals"):
                with p.lock:
                    return self.send(200, [r for r in p.refusals if r["status"] != 503])
            if (method, url.path) == ("POST", "/test/outage"):
                with p.lock:
                    p.down = query.get("down") == "1"
                    return self.send(200, {"down": p.down, "attempts": p.outage_attempts})
            raise Refused(404, "not_found", f"no route {method} {url.path}")
        except Refused as refusal:
            with p.lock:
                p.refusals.append({"path": url.path, "status": refusal.status, "why": refusal.why})
            why = f"{refusal.status} {method} {url.path}: {refusal.why}"
            print(f"lti-platform: {why}", file=sys.stderr)
            headers = [("WWW-Authenticate", "Bearer")] if refusal.status == 401 else []
            if refusal.status == 503:
                headers = [("Retry-After", "1")]
            error = {"error": refusal.error, "error_description": refusal.why}
            self.send(refusal.status, error, headers=headers)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--tool", required=True, help="the playground's origin")
    parser.add_argument("--client-id", default="playground-e2e")
    parser.add_argument("--deployment-id", default="1")
    args = parser.parse_args()
    Handler.platform = Platform(args.port, args.tool, args.client_id, args.deployment_id)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    print(f"lti-platform: {Handler.platform.iss} for the tool at {args.tool}", file=sys.stderr)
    server.serve_forever()


if __name__ == "__main__":
    main()
