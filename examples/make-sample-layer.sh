#!/bin/bash
# SPDX-License-Identifier: MIT
# Write a small OCI-style image layer (gzip-compressed pax tar) to try the
# tools on: an application with its configuration, documentation, data, a
# symlink, a hard link, an extended attribute, a whiteout deleting a file
# of a lower layer and an opaque directory.
#
# usage: examples/make-sample-layer.sh [OUTPUT]   (default sample-layer.tar.gz)
# Needs bash, coreutils, bsdtar (libarchive-tools) and, for the xattr,
# setfattr (attr); root is not required.
set -euo pipefail

out=${1:-sample-layer.tar.gz}
stage=$(mktemp -d "${TMPDIR:-/tmp}/sample-layer.XXXXXX")
trap 'rm -rf "$stage"' EXIT

chmod 0755 "$stage"
cd "$stage"
mkdir -p etc/sample usr/bin usr/lib/sample usr/share/doc/sample \
	var/cache/sample var/log

cat >etc/sample/sample.conf <<'CONF'
# sample configuration
listen = 0.0.0.0:8080
cache = /var/cache/sample
CONF
chmod 0640 etc/sample/sample.conf

cat >usr/bin/sample <<'SCRIPT'
#!/bin/sh
echo "sample application"
SCRIPT
chmod 0755 usr/bin/sample
ln -s sample usr/bin/sample-alias
ln usr/bin/sample usr/lib/sample/sample.hardlink

printf 'Sample application\n\nA file to read back from the image.\n' \
	>usr/share/doc/sample/README
# 300 KiB of data that is not a multiple of the block size
i=0
while [ $i -lt 5000 ]; do
	printf 'record %06d: the quick brown fox jumps over the lazy dog....\n' $i
	i=$((i + 1))
done >usr/lib/sample/data.bin
truncate -s 307201 usr/lib/sample/data.bin
: >usr/lib/sample/empty

# Delete /etc/old.conf from the layer below; hide whatever the lower layers
# kept in /var/cache/sample.
: >etc/.wh.old.conf
: >var/cache/sample/.wh..wh..opq
printf 'fresh cache\n' >var/cache/sample/index

if command -v setfattr >/dev/null 2>&1; then
	setfattr -n user.sample.origin -v "make-sample-layer" usr/bin/sample ||
		echo "note: this filesystem does not take user xattrs" >&2
fi

find . -exec touch -h -d @1700000000.123456789 {} +

cd - >/dev/null
bsdtar -C "$stage" --format=pax --uid 0 --gid 0 --uname root --gname root \
	-czf "$out" .
echo "wrote $out ($(stat -c %s "$out") bytes)"
