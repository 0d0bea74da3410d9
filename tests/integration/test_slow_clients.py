"""Slow and idle clients on every endpoint: a thousand connections that send nothing, that made
one request and stay open (keep-alive), or that trickle their request head (on ARM: their TLS
ClientHello) a byte at a time, do not keep a normal request from being answered at once; a head
that takes longer than the listener allows is dropped; request heads and bodies over the limits
are refused before they are read.

The test prints the normal requests' latencies with and without the crowd; it asserts that each
is answered within a client timeout of 2 s (an ARM request used to wait out the 5 s keep-alive of
eight idle clients, and forever behind slow heads), not how fast it is."""
import http.client
import os
import resource
import socket
import ssl
import statistics
import time
import unittest

import harness
from raw_storage import RawClient

CROWD = int(os.environ.get("BAI_SLOW_CLIENTS", "1000"))
TIMEOUT = 2.0


def host_port(url):
    host, port = url.split("://", 1)[1].rsplit(":", 1)
    return host, int(port)


class SlowClientsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4 * CROWD + 256)), hard))
        cls.emu = harness.Emulator().start()
        cls.ep = cls.emu.endpoints
        blob = RawClient(cls.ep["blob"])
        assert blob.request("PUT", "/devstoreaccount1/slow", [("restype", "container")]).status == 201
        assert blob.request("PUT", "/devstoreaccount1/slow/b", body=b"x" * 4096,
                            headers={"x-ms-blob-type": "BlockBlob"}).status == 201
        files = RawClient(cls.ep["file"])
        assert files.request("PUT", "/devstoreaccount1/slowshare", [("restype", "share")]).status == 201
        r = harness.arm_call(cls.ep, "PUT", f"/subscriptions/{harness.SUBSCRIPTION}/resourcegroups/slow",
                             {"location": "eastus"}, api_version="2021-04-01")
        assert r.status_code == 201, r.text

    @classmethod
    def tearDownClass(cls):
        code, _ = cls.emu.stop()
        cls.emu.close()
        assert code == 0, f"emulator exited with {code}"

    # One normal request on a fresh connection, as a new client makes it; its seconds.
    def normal_request(self, name):
        host, port = host_port(self.ep[name])
        started = time.monotonic()
        if name == "arm":
            context = ssl.create_default_context(cafile=self.ep["ca_cert"])
            c = http.client.HTTPSConnection(host, port, timeout=TIMEOUT, context=context)
            c.request("GET", f"/subscriptions/{harness.SUBSCRIPTION}/resourcegroups/slow?api-version=2021-04-01",
                      headers={"Authorization": "Bearer emulator-token"})
        elif name == "blob":
            c = http.client.HTTPConnection(host, port, timeout=TIMEOUT)
            client = RawClient(self.ep["blob"])
            headers = {"x-ms-version": client.version, "x-ms-date": time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime())}
            headers["Authorization"] = client.sign("GET", "/devstoreaccount1/slow/b", [], headers)
            c.request("GET", "/devstoreaccount1/slow/b", headers=headers)
        else:
            c = http.client.HTTPConnection(host, port, timeout=TIMEOUT)
            c.request("GET", "/health")
        r = c.getresponse()
        body = r.read()
        c.close()
        self.assertEqual(r.status, 200, (name, body[:200]))
        return time.monotonic() - started

    def latencies(self, name, count=20):
        return [self.normal_request(name) for _ in range(count)]

    def open_crowd(self, name):
        """CROWD connections: a third idle from the start, a third after one request (keep-alive),
        a third trickling their head (ARM: a TLS record header, byte by byte)."""
        host, port = host_port(self.ep[name])
        crowd, trickling = [], []
        for i in range(CROWD):
            s = socket.create_connection((host, port), timeout=10)
            kind = i % 3
            if kind == 1:
                if name == "arm":
                    context = ssl.create_default_context(cafile=self.ep["ca_cert"])
                    s = context.wrap_socket(s, server_hostname=host)
                s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
                self.assertIn(b" 200 ", s.recv(4096))
            elif kind == 2:
                s.sendall(b"\x16" if name == "arm" else b"GET /health HTTP/1.1\r\n")
                trickling.append(s)
            crowd.append(s)
        return crowd, trickling

    def test_a_crowd_of_slow_and_idle_clients_delays_no_normal_request(self):
        report = []
        for name in ("arm", "blob", "file", "batch"):
            before = self.latencies(name)
            crowd, trickling = self.open_crowd(name)
            try:
                during = []
                for _ in range(20):
                    for s in trickling[:50]:  # keep some of them trickling meanwhile
                        try:
                            s.send(b"\x03" if name == "arm" else b"X")
                        except OSError:
                            pass
                    during.append(self.normal_request(name))
            finally:
                for s in crowd:
                    s.close()
            report.append(f"{name}: {CROWD} slow or idle connections; normal request median "
                          f"{statistics.median(before) * 1000:.1f} ms before, "
                          f"{statistics.median(during) * 1000:.1f} ms (max {max(during) * 1000:.1f}) among them")
        print("\n" + "\n".join(report))

    def test_a_head_that_trickles_is_dropped(self):
        socks = {}
        for name in ("arm", "blob", "file", "batch"):
            host, port = host_port(self.ep[name])
            s = socket.create_connection((host, port), timeout=30)
            s.sendall(b"\x16" if name == "arm" else b"GET /health HTTP/1.1\r\n")
            socks[name] = s
        started = time.monotonic()
        closed = {}
        while len(closed) < len(socks) and time.monotonic() - started < 40:
            for name, s in socks.items():
                if name in closed:
                    continue
                try:
                    s.settimeout(0.5)
                    s.send(b"\x03" if name == "arm" else b"X-Slow: 1\r\n")
                    if s.recv(4096) == b"":
                        closed[name] = time.monotonic() - started
                except socket.timeout:
                    pass
                except OSError:
                    closed[name] = time.monotonic() - started
        for s in socks.values():
            s.close()
        print("\n" + ", ".join(f"{name} dropped after {t:.1f} s" for name, t in closed.items()))
        self.assertEqual(set(closed), set(socks), "a client that never finishes its head is dropped")

    def test_oversized_heads_and_bodies_are_refused_before_they_are_read(self):
        for name in ("arm", "batch", "blob"):
            host, port = host_port(self.ep[name])
            s = socket.create_connection((host, port), timeout=10)
            if name == "arm":
                s = ssl.create_default_context(cafile=self.ep["ca_cert"]).wrap_socket(s, server_hostname=host)
            head = b"GET /health HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-%d: y\r\n" % i for i in range(20000)) + b"\r\n"
            try:
                s.sendall(head)
            except OSError:
                pass  # the server may close before it has all of it
            answer = s.recv(4096)
            self.assertTrue(answer.startswith(b"HTTP/1.1 431"), (name, answer[:100]))
            s.close()
        # A body over the endpoint's limit: the answer comes before the body is sent, and the
        # connection is closed instead of drained.
        for name, limit in (("arm", 64 << 20), ("batch", 4 << 20)):
            host, port = host_port(self.ep[name])
            s = socket.create_connection((host, port), timeout=10)
            if name == "arm":
                s = ssl.create_default_context(cafile=self.ep["ca_cert"]).wrap_socket(s, server_hostname=host)
            s.sendall(b"PUT /x HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t\r\nContent-Type: application/json\r\n"
                      b"Content-Length: %d\r\n\r\n" % (limit + 1) + b"{" * 65536)
            answer = s.recv(4096)
            self.assertTrue(answer.startswith(b"HTTP/1.1 413"), (name, answer[:200]))
            self.assertIn(b"Connection: close", answer)
            s.close()
        # A Blob operation's XML body (a block list) over 4 MiB, likewise, with the service's error.
        host, port = host_port(self.ep["blob"])
        client = RawClient(self.ep["blob"])
        headers = {"x-ms-version": client.version, "Content-Length": str((4 << 20) + 1),
                   "x-ms-date": time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime())}
        headers["Authorization"] = client.sign("PUT", "/devstoreaccount1/slow/b", [("comp", "blocklist")], headers)
        s = socket.create_connection((host, port), timeout=10)
        s.sendall(b"PUT /devstoreaccount1/slow/b?comp=blocklist HTTP/1.1\r\n" +
                  "".join(f"{k}: {v}\r\n" for k, v in headers.items()).encode() + b"\r\n<BlockList>")
        answer = s.recv(4096)
        self.assertTrue(answer.startswith(b"HTTP/1.1 413"), answer[:200])
        self.assertIn(b"RequestBodyTooLarge", answer)
        self.assertIn(b"Connection: close", answer)
        s.close()
        # Streamed bodies over their operation's limit (Put Blob 5000 MiB, Put Block 4000 MiB, Put
        # Range 4 MiB): refused by their Content-Length, nothing of them read.
        for service, path, query, extra, length in (
                ("blob", "/devstoreaccount1/slow/huge", [], {"x-ms-blob-type": "BlockBlob"}, (5000 << 20) + 1),
                ("blob", "/devstoreaccount1/slow/huge", [("comp", "block"), ("blockid", "YQ==")], {}, (4000 << 20) + 1),
                ("file", "/devstoreaccount1/slowshare/f", [("comp", "range")],
                 {"x-ms-range": "bytes=0-4194304", "x-ms-write": "update"}, (4 << 20) + 1)):
            host, port = host_port(self.ep[service])
            client = RawClient(self.ep[service])
            headers = {"x-ms-version": client.version, "Content-Length": str(length),
                       "x-ms-date": time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime()), **extra}
            headers["Authorization"] = client.sign("PUT", path, query, headers)
            target = path + ("?" + "&".join(f"{k}={v}" for k, v in query) if query else "")
            s = socket.create_connection((host, port), timeout=10)
            s.sendall(f"PUT {target} HTTP/1.1\r\n".encode() +
                      "".join(f"{k}: {v}\r\n" for k, v in headers.items()).encode() + b"\r\n" + b"x" * 65536)
            answer = s.recv(4096)
            self.assertTrue(answer.startswith(b"HTTP/1.1 413"), (path, query, answer[:300]))
            self.assertIn(b"RequestBodyTooLarge", answer)
            s.close()
        # The emulator still answers.
        for name in ("arm", "blob", "file", "batch"):
            self.normal_request(name)


if __name__ == "__main__":
    unittest.main()
