"""OTLP/HTTP trace export bodies → the OTLP JSON shape the file importer reads.

Protobuf (``application/x-protobuf``, decoded with the ``opentelemetry-proto`` classes and
mapped to JSON by protobuf's own ``json_format``: ids come out base64, which
``core/importers/otel_spans.py:otlp_id`` reads) and JSON (``application/json``), either
gzip-compressed. Every refusal is an ``OtlpError`` carrying the HTTP status the OTLP/HTTP
specification asks for.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass
from typing import Any

PROTOBUF = "application/x-protobuf"
JSON = "application/json"


class OtlpError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class Request:
    content_type: str
    doc: dict[str, Any]


def media_type(header: str | None) -> str:
    return (header or "").split(";", 1)[0].strip().lower()


def inflate(body: bytes, encoding: str | None, limit: int) -> bytes:
    """The body without its ``Content-Encoding`` (gzip), never more than ``limit`` bytes."""
    enc = (encoding or "identity").strip().lower()
    if enc == "identity":
        return body
    if enc != "gzip":
        raise OtlpError(415, f"unsupported Content-Encoding {encoding!r} (gzip or none)")
    d = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    try:
        out = d.decompress(body, limit + 1)
    except zlib.error as exc:
        raise OtlpError(400, f"body is not valid gzip: {exc}") from None
    if len(out) > limit or d.unconsumed_tail:
        raise OtlpError(413, f"body is larger than {limit} bytes once decompressed")
    if not d.eof:
        raise OtlpError(400, "gzip body is truncated")
    return out


def decode(body: bytes, content_type: str | None, encoding: str | None, limit: int) -> Request:
    kind = media_type(content_type)
    if kind not in (PROTOBUF, JSON):
        raise OtlpError(415, f"unsupported Content-Type {content_type!r} ({PROTOBUF} or {JSON})")
    raw = inflate(body, encoding, limit)
    return Request(kind, _protobuf(raw) if kind == PROTOBUF else _json(raw))


def _protobuf(raw: bytes) -> dict[str, Any]:
    from google.protobuf.json_format import MessageToDict
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    try:
        req = ExportTraceServiceRequest.FromString(raw)
    except DecodeError as exc:
        raise OtlpError(400, f"not an ExportTraceServiceRequest: {exc}") from None
    doc: dict[str, Any] = MessageToDict(req)
    return doc


def _json(raw: bytes) -> dict[str, Any]:
    try:
        doc = json.loads(raw or b"{}")
    except (ValueError, UnicodeDecodeError) as exc:
        raise OtlpError(400, f"invalid JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise OtlpError(400, "expected an ExportTraceServiceRequest object")
    if not isinstance(doc.get("resourceSpans", []), list):
        raise OtlpError(400, "'resourceSpans' must be a list")
    return doc


def response(content_type: str, rejected: int = 0, message: str = "") -> bytes:
    """An ``ExportTraceServiceResponse`` (``partial_success`` when spans were rejected)."""
    if content_type == JSON:
        if not rejected and not message:
            return b"{}"
        part = {"rejectedSpans": str(rejected), "errorMessage": message}
        return json.dumps({"partialSuccess": part}).encode()
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTracePartialSuccess,
        ExportTraceServiceResponse,
    )

    out = ExportTraceServiceResponse()
    if rejected or message:
        out.partial_success.CopyFrom(
            ExportTracePartialSuccess(rejected_spans=rejected, error_message=message)
        )
    return bytes(out.SerializeToString())


#: google.rpc.Code for each HTTP status we answer with.
RPC_CODES = {400: 3, 404: 5, 405: 12, 411: 3, 413: 8, 415: 3, 503: 14}


def status_body(content_type: str, http_status: int, message: str) -> bytes:
    """A ``google.rpc.Status`` (the body OTLP/HTTP asks for on 4xx and 5xx)."""
    code = RPC_CODES.get(http_status, 2)
    if content_type == JSON:
        return json.dumps({"code": code, "message": message}).encode()
    text = message.encode()
    return b"\x08" + _varint(code) + b"\x12" + _varint(len(text)) + text


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)
