#!/bin/sh
# ringo with -R appended: ab.sh BIN for buffers in host windows
exec "$(dirname "$0")/../../../bin/ringo" "$@" -R
