#!/bin/sh
# Builds the libipt reference harness into build/libipt-harness/ (gitignored).
# Needs gcc and libipt-dev (apt-get install -y libipt-dev).
set -e
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/../../build/libipt-harness}
mkdir -p "$out"
for t in pt-enc pt-pkts; do
	gcc -O2 -Wall -Wextra -o "$out/$t.$$.tmp" "$here/$t.c" -lipt
	mv -f "$out/$t.$$.tmp" "$out/$t"  # atomic: test files may build at the same time
done
echo "$out"
