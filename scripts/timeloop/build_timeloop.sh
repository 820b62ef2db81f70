#!/usr/bin/env bash
# Builds Timeloop v3.0.3's timeloop-model and timeloop-mapper from a source checkout, for the
# differential check scripts/timeloop_diff.py (Timeloop is not a dependency of the project).
#
#   bash scripts/timeloop/build_timeloop.sh TIMELOOP_SOURCE PREFIX
#
# TIMELOOP_SOURCE: a checkout of github.com/NVlabs/timeloop at tag v3.0.3 (with its pat-public
# folder). PREFIX gets lib/ (the built libraries), libexec/ (the binaries) and bin/timeloop-model
# and bin/timeloop-mapper: wrappers that convert Timeloop v0.4 input files (the format of
# data/oracles/timeloop, which v3.0.3's C++ front end does not read: "key not found: data-spaces")
# to its v0.3 format with tl04to03.py beside this script, merge them into one file and run the
# binary there (TL_RAW=1 passes the arguments unchanged; TL_KEEP_CONVERTED=FILE keeps the
# converted input). Built on Debian 12 with gcc 12 on 2026-12-08, no source change, about 11
# minutes on two cores; without ISL and without Accelergy (the ERT is an input file).
set -euo pipefail
src=$(cd "${1:?usage: build_timeloop.sh TIMELOOP_SOURCE PREFIX}" && pwd)
prefix=${2:?usage: build_timeloop.sh TIMELOOP_SOURCE PREFIX}
here=$(cd "$(dirname "$0")" && pwd)
apt-get install -y scons libconfig++-dev libyaml-cpp-dev libncurses-dev libboost-dev \
  libboost-iostreams-dev libboost-serialization-dev libgpm-dev python3-yaml >/dev/null
(cd "$src/src" && { [ -e pat ] || ln -s ../pat-public/src/pat .; })
(cd "$src" && scons -j"$(nproc)")
mkdir -p "$prefix/bin" "$prefix/lib" "$prefix/libexec"
prefix=$(cd "$prefix" && pwd)
cp "$src"/lib/*.so* "$prefix/lib/"
cp "$src/bin/timeloop-model" "$src/bin/timeloop-mapper" "$prefix/libexec/"
cp "$here/tl04to03.py" "$prefix/bin/"
for tool in timeloop-model timeloop-mapper; do
  # timeloop-model drops the architecture's per-component constraints: v3.0.3 checks them
  # against a given mapping strictly (unit loops included) and refuses mappings the newer
  # Timeloop front end accepts; the mapper keeps them.
  flag=""
  [ "$tool" = timeloop-model ] && flag="--no-arch-constraints"
  cat > "$prefix/bin/$tool" <<EOF
#!/bin/bash
# Timeloop v3.0.3 $tool on Timeloop v0.4 input files (converted by tl04to03.py).
export LD_LIBRARY_PATH=$prefix/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}
BIN=$prefix/libexec/$tool
if [ -n "\$TL_RAW" ]; then exec "\$BIN" "\$@"; fi
yamls=(); others=()
for a in "\$@"; do
  case "\$a" in *.yaml|*.yml) yamls+=("\$a");; *) others+=("\$a");; esac
done
if [ \${#yamls[@]} -eq 0 ]; then exec "\$BIN" "\$@"; fi
tmp=\$(mktemp -d) || exit 1
trap 'rm -rf "\$tmp"' EXIT
/usr/bin/python3 $prefix/bin/tl04to03.py $flag "\$tmp/input.yaml" "\${yamls[@]}" || exit 1
[ -n "\$TL_KEEP_CONVERTED" ] && cp "\$tmp/input.yaml" "\$TL_KEEP_CONVERTED"
"\$BIN" "\$tmp/input.yaml" "\${others[@]}"
EOF
  chmod +x "$prefix/bin/$tool"
done
echo "built: $prefix/bin/timeloop-model, $prefix/bin/timeloop-mapper"
