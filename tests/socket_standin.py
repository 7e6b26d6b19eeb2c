"""A local stand-in for Slack's Socket Mode WebSocket (RFC 6455, text frames, ping/pong).

The Web API stand-in answers `apps.connections.open` with this server's ws:// URL; the test
then pushes envelopes (slash commands, events, interactions) the way Slack does and reads the
acknowledgements the app sends back (api.slack.com/apis/socket-mode).
"""

from __future__ import annotations

import base64
import hashlib
import json
import queue
import socket
import struct
import threading
from typing import Any

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"  # RFC 6455, section 1.3


class SocketModeStandIn:
    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.acks: queue.Queue[dict[str, Any]] = queue.Queue()
        self.connected = threading.Event()
        self.conn: socket.socket | None = None
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.server.getsockname()[1]}/link"

    def __enter__(self) -> SocketModeStandIn:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.close()
        if self.conn:
            self.conn.close()

    def send(self, envelope: dict[str, Any]) -> None:
        """Push one envelope to the connected app."""
        if not self.connected.wait(20):
            raise TimeoutError("the app never connected")
        self._send_frame(0x1, json.dumps(envelope).encode())

    def ack_for(self, envelope_id: str, timeout: float = 15.0) -> dict[str, Any]:
        """The app's acknowledgement of an envelope (other acks are kept for later calls)."""
        pending = []
        try:
            while True:
                ack = self.acks.get(timeout=timeout)
                if ack.get("envelope_id") == envelope_id:
                    return ack
                pending.append(ack)
        finally:
            for ack in pending:
                self.acks.put(ack)

    # --- the server side of the protocol ----------------------------------------------------

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            try:
                self._handshake(conn)
            except OSError:
                conn.close()
                continue
            self.conn = conn
            self._send_frame(
                0x1, json.dumps({"type": "hello", "num_connections": 1, "debug_info": {"host": "standin"}}).encode()
            )
            self.connected.set()
            self._read_frames(conn)

    def _handshake(self, conn: socket.socket) -> None:
        request = b""
        while b"\r\n\r\n" not in request:
            chunk = conn.recv(4096)
            if not chunk:
                raise OSError("closed during handshake")
            request += chunk
        headers = {}
        for line in request.decode("latin-1").split("\r\n")[1:]:
            if ":" in line:
                key, value = line.split(":", 1)
                headers[key.strip().lower()] = value.strip()
        accept = base64.b64encode(hashlib.sha1((headers["sec-websocket-key"] + GUID).encode()).digest()).decode()
        conn.sendall(
            (
                "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                f"Sec-WebSocket-Accept: {accept}\r\n\r\n"
            ).encode()
        )

    def _send_frame(self, opcode: int, payload: bytes) -> None:
        header = bytes([0x80 | opcode])
        if len(payload) < 126:
            header += bytes([len(payload)])
        elif len(payload) < 1 << 16:
            header += bytes([126]) + struct.pack(">H", len(payload))
        else:
            header += bytes([127]) + struct.pack(">Q", len(payload))
        with self.lock:
            if self.conn:
                self.conn.sendall(header + payload)

    def _read_frames(self, conn: socket.socket) -> None:
        buffer = b""
        message = b""

        def need(n: int) -> bytes:
            nonlocal buffer
            while len(buffer) < n:
                chunk = conn.recv(65536)
                if not chunk:
                    raise OSError("closed")
                buffer += chunk
            out, buffer = buffer[:n], buffer[n:]
            return out

        try:
            while True:
                first, second = need(2)
                opcode, length = first & 0x0F, second & 0x7F
                if length == 126:
                    length = struct.unpack(">H", need(2))[0]
                elif length == 127:
                    length = struct.unpack(">Q", need(8))[0]
                mask = need(4) if second & 0x80 else b"\0\0\0\0"
                data = bytes(b ^ mask[i % 4] for i, b in enumerate(need(length)))
                if opcode == 0x9:  # ping: answer with pong
                    self._send_frame(0xA, data)
                elif opcode == 0x8:  # close
                    return
                elif opcode in (0x1, 0x0):
                    message += data
                    if first & 0x80:
                        self.acks.put(json.loads(message))
                        message = b""
        except (OSError, ValueError):
            return
