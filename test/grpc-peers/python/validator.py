"""A toolgate.v1.Validator server on grpcio (gRPC C-core), for the validator
client's interoperability tests: a third HTTP/2 and HPACK implementation
beside node:http2's nghttp2 and grpc-go. It is written without generated
code: messages are read and written by the field numbers of
proto/toolgate/v1/validator.proto. What it answers depends on the request's
`validator` field, as the grpc-go peer does.

Usage: python validator.py [--max-streams N]. It prints its port and serves
until stdin closes.
"""

import argparse
import sys
import time
from concurrent import futures

import grpc


def varint(data, at):
    value, shift = 0, 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at
        shift += 7


def fields(message):
    """The length-delimited fields of a message, by number (last one wins)."""
    out, at = {}, 0
    while at < len(message):
        tag, at = varint(message, at)
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            _, at = varint(message, at)
        elif wire == 2:
            length, at = varint(message, at)
            out[number] = message[at : at + length]
            at += length
        elif wire == 1:
            at += 8
        elif wire == 5:
            at += 4
        else:
            raise ValueError("unsupported wire type")
    return out


def encode_varint(value):
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def response(valid, severity=0, code=""):
    """A ValidateResponse: valid (1), severity (2), code (4)."""
    out = b""
    if valid:
        out += b"\x08\x01"
    if severity:
        out += b"\x10" + encode_varint(severity)
    if code:
        raw = code.encode()
        out += b"\x22" + encode_varint(len(raw)) + raw
    return out


def validate(request, context):
    f = fields(request)
    case = f.get(8, b"").decode()
    if case == "valid":
        return response(True)
    if case == "block":
        return response(False, 3, "secret_found")
    if case == "size":
        return response(False, 1, "size_%d" % len(f.get(3, b"")))
    if case == "later":
        time.sleep(0.02)
        return response(True)
    if case == "denied":
        context.abort(grpc.StatusCode.PERMISSION_DENIED, "denied")
    if case == "deadline":
        context.abort(grpc.StatusCode.DEADLINE_EXCEEDED, "too late")
    context.abort(grpc.StatusCode.UNIMPLEMENTED, "no such case")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-streams", type=int, default=0)
    args = parser.parse_args()
    options = [("grpc.max_concurrent_streams", args.max_streams)] if args.max_streams else []
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=16), options=options)
    handler = grpc.unary_unary_rpc_method_handler(validate)
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("toolgate.v1.Validator", {"Validate": handler}),))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    print(port, flush=True)
    sys.stdin.read()
    server.stop(0)


if __name__ == "__main__":
    main()
