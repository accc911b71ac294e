#!/usr/bin/env python3
"""A smart-HTTP git server on loopback for porter-git's tests.

`git http-backend` (CGI) behind a small TLS server whose certificate comes
from a CA made here with the `cryptography` package. Test fixture only:
porter itself never starts `git`.

Usage: https_server.py ROOT
  ROOT/ca.pem       is written: the CA certificate the test trusts
  ROOT/requests.log gets one line per request: METHOD PATH AUTHORIZATION
  ROOT/repos/       is served (GIT_PROJECT_ROOT)
  ROOT/app.pem      is written: the RSA key of a GitHub App (id 4242) whose
                    installation 77 the fake GitHub API below mints tokens for
  ROOT/other-app.pem is written: an RSA key the fake API does not know

A fake GitHub API answers POST /api/v3/app/installations/77/access_tokens:
it checks the JWT (RS256 over the app's public key, iss 4242, iat in the
past, exp at most ten minutes ahead) and the headers GitHub requires, then
answers {"token": "ghs_…", "expires_at": <in an hour>}. Pushes to a repository
whose name starts with "app-" need Basic auth with a token it minted
(fetches from it need nothing).

Request bodies may come with a Content-Length or chunked (as git sends a
large push); ROOT/bodies.log gets one line per request with a body:
METHOD PATH "length"|"chunked" BYTES.

Redirect routes (every request beneath them, GET or POST, the rest of the
path and the query kept), all leading to the repository real.git:
  /moved.git/...     301 to the same host and port (a repository that moved)
  /elsewhere.git/... 302 to https://localhost on the same port (another host)
  /otherport.git/... 302 to 127.0.0.1 on the next port (another port)
  /plain.git/...     302 to http:// on the same host and port (a downgrade)
  /loop.git/...      302 to itself, for ever
The chosen port is printed on stdout as "port N", then the server runs until
its stdin closes (so it never outlives the test that started it).
"""

import base64
import datetime
import http.server
import ipaddress
import json
import os
import secrets
import ssl
import subprocess
import sys
import threading

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.x509.oid import NameOID


def make_certs(root):
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "porter test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False),
            critical=True,
        )
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    leaf = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [
                    x509.DNSName("localhost"),
                    x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                ]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    with open(os.path.join(root, "ca.pem"), "wb") as f:
        f.write(ca.public_bytes(pem))
    with open(os.path.join(root, "server.pem"), "wb") as f:
        f.write(leaf.public_bytes(pem))
        f.write(ca.public_bytes(pem))
    with open(os.path.join(root, "server.key"), "wb") as f:
        f.write(
            key.private_bytes(
                pem,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )


APP_ID = 4242
INSTALLATION_ID = 77


def make_app_keys(root):
    """The app's RSA key (PKCS#1 PEM, as GitHub hands it out; also as PKCS#8) and a stranger's."""
    keys = {}
    for name in ("app", "other-app"):
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        with open(os.path.join(root, f"{name}.pem"), "wb") as f:
            f.write(
                key.private_bytes(
                    serialization.Encoding.PEM,
                    serialization.PrivateFormat.TraditionalOpenSSL,
                    serialization.NoEncryption(),
                )
            )
        keys[name] = key
    # The same app key as PKCS#8, the form `openssl pkcs8 -topk8` writes.
    with open(os.path.join(root, "app-pkcs8.pem"), "wb") as f:
        f.write(
            keys["app"].private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
    return keys["app"].public_key()


def unb64(part):
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def check_jwt(public_key, auth):
    """Why the bearer JWT is not the app's, or None when it is."""
    if not auth.startswith("Bearer "):
        return "no bearer token"
    parts = auth[len("Bearer "):].split(".")
    if len(parts) != 3:
        return "not a JWT"
    header = json.loads(unb64(parts[0]))
    claims = json.loads(unb64(parts[1]))
    if header.get("alg") != "RS256":
        return f"alg {header.get('alg')}"
    try:
        public_key.verify(
            unb64(parts[2]),
            f"{parts[0]}.{parts[1]}".encode(),
            padding.PKCS1v15(),
            hashes.SHA256(),
        )
    except Exception:
        return "bad signature"
    now = int(datetime.datetime.now(datetime.timezone.utc).timestamp())
    if claims.get("iss") != APP_ID:
        return f"iss {claims.get('iss')!r}"
    if not claims.get("iat", now + 1) <= now:
        return "iat in the future"
    if not now < claims.get("exp", 0) <= now + 600:
        return "exp not within ten minutes"
    return None


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def record(self):
        auth = self.headers.get("Authorization", "-")
        with open(os.path.join(self.server.root, "requests.log"), "a") as f:
            f.write(f"{self.command} {self.path} {auth}\n")

    def answer(self, status, payload, extra=()):
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        for name, value in extra:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def github_api(self, path, body):
        if path != f"/api/v3/app/installations/{INSTALLATION_ID}/access_tokens":
            return self.answer(404, {"message": "Not Found"})
        if self.command != "POST":
            return self.answer(405, {"message": "POST only"})
        why = check_jwt(self.server.app_key, self.headers.get("Authorization", ""))
        if why is None and self.headers.get("Accept") != "application/vnd.github+json":
            why = "Accept"
        if why is None and self.headers.get("X-GitHub-Api-Version") != "2022-11-28":
            why = "X-GitHub-Api-Version"
        if why is None and not self.headers.get("User-Agent"):
            why = "User-Agent"
        if why is None and json.loads(body or b"{}").get("permissions") != {"contents": "write"}:
            why = "permissions"
        if why is not None:
            return self.answer(401, {"message": f"A JSON web token could not be decoded: {why}"})
        token = "ghs_" + secrets.token_hex(16)
        self.server.tokens.add(token)
        expires = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1)
        return self.answer(
            201,
            {
                "token": token,
                "expires_at": expires.strftime("%Y-%m-%dT%H:%M:%SZ"),
                "permissions": {"contents": "write"},
            },
        )

    def app_token_missing(self, path, query):
        """A push to an app- repository without a minted token."""
        pushing = path.endswith("/git-receive-pack") or "service=git-receive-pack" in query
        if not (path.startswith("/app-") and pushing):
            return False
        auth = self.headers.get("Authorization", "")
        if auth.startswith("Basic "):
            _, _, password = base64.b64decode(auth[6:]).decode().partition(":")
            if password in self.server.tokens:
                return False
        return True

    def read_body(self):
        """The request body, from a Content-Length or chunked, logged."""
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            parts = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                parts.append(self.rfile.read(size))
                self.rfile.readline()
            body, how = b"".join(parts), "chunked"
        else:
            length = int(self.headers.get("Content-Length") or 0)
            body, how = (self.rfile.read(length) if length else b""), "length"
        if body or how == "chunked":
            with open(os.path.join(self.server.root, "bodies.log"), "a") as f:
                f.write(f"{self.command} {self.path} {how} {len(body)}\n")
        return body

    REDIRECTS = {
        "/moved.git/": (301, "https://127.0.0.1:{port}/real.git/"),
        "/elsewhere.git/": (302, "https://localhost:{port}/real.git/"),
        "/otherport.git/": (302, "https://127.0.0.1:{next_port}/real.git/"),
        "/plain.git/": (302, "http://127.0.0.1:{port}/real.git/"),
        "/loop.git/": (302, "https://127.0.0.1:{port}/loop.git/"),
    }

    def redirect(self):
        """Answers a request beneath a redirect route; False for any other."""
        for prefix, (status, to) in self.REDIRECTS.items():
            if self.path.startswith(prefix):
                port = self.server.server_address[1]
                location = to.format(port=port, next_port=port + 1) + self.path[len(prefix):]
                self.send_response(status)
                self.send_header("Location", location)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return True
        return False

    def cgi(self):
        self.record()
        path, _, query = self.path.partition("?")
        body = self.read_body()
        if self.redirect():
            return
        if path.startswith("/api/v3/"):
            return self.github_api(path, body)
        if self.app_token_missing(path, query):
            return self.answer(401, {"message": "push needs an app token"},
                               [("WWW-Authenticate", 'Basic realm="test"')])
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": os.path.join(self.server.root, "repos"),
            "GIT_HTTP_EXPORT_ALL": "1",
            "REQUEST_METHOD": self.command,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_USER": "tester",
            "REMOTE_ADDR": "127.0.0.1",
            "GIT_CONFIG_NOSYSTEM": "1",
            "HOME": self.server.root,
        }
        if self.headers.get("Content-Encoding") == "gzip":
            env["HTTP_CONTENT_ENCODING"] = "gzip"
        if path.endswith("/denied.git/info/refs") or "/denied.git/" in path:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="test"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        out = subprocess.run(
            ["git", "http-backend"], input=body, env=env, capture_output=True
        ).stdout
        head, _, payload = out.partition(b"\r\n\r\n")
        status = 200
        headers = []
        for line in head.split(b"\r\n"):
            name, _, value = line.decode("latin-1").partition(":")
            if name.lower() == "status":
                status = int(value.strip().split()[0])
            elif name:
                headers.append((name, value.strip()))
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = cgi
    do_POST = cgi


def main():
    root = os.path.abspath(sys.argv[1])
    os.makedirs(os.path.join(root, "repos"), exist_ok=True)
    make_certs(root)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.root = root
    server.app_key = make_app_keys(root)
    server.tokens = set()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(os.path.join(root, "server.pem"), os.path.join(root, "server.key"))
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"port {server.server_address[1]}", flush=True)
    sys.stdin.read()
    server.shutdown()


if __name__ == "__main__":
    main()
