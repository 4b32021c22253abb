#!/bin/sh
# The message type registry of common/bas_msg.c, from protoc-c's header:
# one "&basalt__v1__<name>__descriptor," line per message, in the order of
# proto/basalt.proto. Run by the build (CMakeLists.txt) after protoc-c, so
# a message added to the .proto is registered with nothing else to edit.
# Usage: msgtypes.sh basalt.pb-c.h > bas_msgtypes.inc
set -eu
sed -n 's/^extern const ProtobufCMessageDescriptor \([a-z0-9_]*__descriptor\);$/    \&\1,/p' "$1"
