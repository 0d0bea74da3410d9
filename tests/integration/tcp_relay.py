"""A TCP relay for the tests: what a site's proxy in front of the emulator's loopback endpoints does
for the hosts of a cluster (--slurm-blob-endpoint, --slurm-file-endpoint). Counts its connections."""
import socket
import threading


class TcpRelay:
    def __init__(self, listen_host, target=None):
        self.server = socket.create_server((listen_host, 0))
        self.port = self.server.getsockname()[1]
        self.target = target  # (host, port); may be set after the relay is made
        self.connections = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:
                return  # closed
            self.connections += 1
            try:
                upstream = socket.create_connection(self.target, timeout=10)
                upstream.settimeout(None)
            except OSError:
                client.close()
                continue
            done = threading.Barrier(2, action=lambda c=client, u=upstream: (c.close(), u.close()))
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, sink, done), daemon=True).start()

    @staticmethod
    def _pump(source, sink, done):
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                sink.sendall(data)
        except OSError:
            pass
        try:
            sink.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        try:
            done.wait(timeout=60)
        except threading.BrokenBarrierError:
            pass

    def close(self):
        self.server.close()
