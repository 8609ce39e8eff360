#!/usr/bin/env bash
# Builds Crash Test's obfuscated JVM program: javac, then Debian's ProGuard 6.2.2, which
# shrinks, inlines and renames it and writes a real mapping.txt.
#
#   crashtest/obfuscated/build.sh OUT_DIR
#
# Leaves OUT_DIR/crashtest-obfuscated.jar and OUT_DIR/mapping.txt. Run the crash with
#   java -cp OUT_DIR/crashtest-obfuscated.jar dev.phonelogs.crashtest.jvm.CrashMain [button|total]
# and map its trace back with ProGuard's own retrace:
#   java -jar /usr/share/java/retrace.jar OUT_DIR/mapping.txt trace.txt
# Needs: apt-get install -y --no-install-recommends default-jdk-headless proguard-cli
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=${1:?usage: build.sh OUT_DIR}
mkdir -p "$out"
rm -rf "$out/classes"
mkdir -p "$out/classes"
# --release 8: ProGuard 6.2.2 reads class files up to Java 13.
javac --release 8 -d "$out/classes" $(find "$here/src" -name '*.java')
proguard -injars "$out/classes" -outjars "$out/crashtest-obfuscated.jar" \
    -printmapping "$out/mapping.txt" @"$here/proguard.pro" >"$out/proguard.log" 2>&1 || {
    cat "$out/proguard.log" >&2
    exit 1
}
