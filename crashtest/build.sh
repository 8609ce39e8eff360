#!/usr/bin/env bash
# Builds the Crash Test APK without Gradle.
#
#   crashtest/build.sh true|false <out.apk>
#
# "true" builds a debuggable APK (aapt's --debug-mode writes android:debuggable="true" into the
# manifest), "false" a release APK without it. Both are signed with the same throwaway key, kept
# next to the output as crashtest-debug.keystore (or $CRASHTEST_KEYSTORE), so that one build can be
# installed over the other.
#
# Two toolchains, one app:
# - With the Android SDK (ANDROID_HOME or ANDROID_SDK_ROOT holding build-tools/ and platforms/):
#   javac compiles src/ against the platform's android.jar and d8 makes classes.dex.
# - Otherwise from Debian packages alone (Debian 12 has no android.jar and no d8): smali assembles
#   smali/ straight to classes.dex, and aapt links against /usr/share/android-framework-res.
#   apt-get install -y --no-install-recommends aapt zipalign apksigner android-framework-res \
#     libsmali-java default-jre-headless
# Set CRASHTEST_TOOLCHAIN=sdk or =debian to force one of them.
#
# The texts the app logs and throws live in res/values/strings.xml; both code files read them by
# name, so both toolchains build the same behaviour.
set -euo pipefail

usage() {
    echo "usage: $0 true|false <out.apk>" >&2
    exit 2
}

[[ $# -eq 2 ]] || usage
debuggable=$1
out=$2
case "$debuggable" in
true | false) ;;
*) usage ;;
esac

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out_dir=$(cd "$(dirname "$out")" 2>/dev/null && pwd) || {
    echo "build.sh: the output folder $(dirname "$out") does not exist" >&2
    exit 1
}
out="$out_dir/$(basename "$out")"
keystore=${CRASHTEST_KEYSTORE:-$out_dir/crashtest-debug.keystore}

step() { echo "build.sh: $*" >&2; }
die() {
    echo "build.sh: $*" >&2
    exit 1
}
need() {
    command -v "$1" >/dev/null 2>&1 || die "$1 is missing. $2"
}

debian_hint="On Debian 12: apt-get install -y --no-install-recommends aapt zipalign apksigner android-framework-res libsmali-java default-jre-headless"

# The newest entry of a folder by version order, or nothing.
newest() {
    # shellcheck disable=SC2012 # Folder names under the SDK are plain version numbers.
    ls -1 "$1" 2>/dev/null | sort -V | tail -n 1
}

# Picks the toolchain: the SDK when it has everything this script uses, else Debian's packages.
sdk=${ANDROID_HOME:-${ANDROID_SDK_ROOT:-}}
toolchain=${CRASHTEST_TOOLCHAIN:-}
if [[ -z "$toolchain" ]]; then
    toolchain=debian
    if [[ -n "$sdk" && -d "$sdk/build-tools" && -d "$sdk/platforms" ]]; then
        bt="$sdk/build-tools/$(newest "$sdk/build-tools")"
        platform="$sdk/platforms/$(newest "$sdk/platforms")"
        if [[ -x "$bt/aapt" && -x "$bt/d8" && -x "$bt/zipalign" && -x "$bt/apksigner" && -f "$platform/android.jar" ]]; then
            toolchain=sdk
        fi
    fi
fi

case "$toolchain" in
sdk)
    [[ -n "$sdk" ]] || die "CRASHTEST_TOOLCHAIN=sdk needs ANDROID_HOME"
    bt="$sdk/build-tools/$(newest "$sdk/build-tools")"
    platform="$sdk/platforms/$(newest "$sdk/platforms")"
    aapt="$bt/aapt"
    zipalign="$bt/zipalign"
    apksigner="$bt/apksigner"
    d8="$bt/d8"
    framework="$platform/android.jar"
    for tool in "$aapt" "$zipalign" "$apksigner" "$d8"; do
        [[ -x "$tool" ]] || die "$tool is missing from the Android SDK"
    done
    [[ -f "$framework" ]] || die "$framework is missing from the Android SDK"
    need javac "Install a JDK (17 or later)."
    ;;
debian)
    need aapt "$debian_hint"
    need zipalign "$debian_hint"
    need apksigner "$debian_hint"
    need smali "$debian_hint"
    need java "$debian_hint"
    aapt=aapt
    zipalign=zipalign
    apksigner=apksigner
    framework=/usr/share/android-framework-res/framework-res.apk
    [[ -f "$framework" ]] || die "$framework is missing. $debian_hint"
    ;;
*) die "CRASHTEST_TOOLCHAIN must be sdk or debian, not $toolchain" ;;
esac
need keytool "Install a Java runtime (default-jre-headless)."

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

step "building $(basename "$out") (debuggable=$debuggable) with the $toolchain toolchain"

# Resources and manifest. --debug-mode is the only difference between the two builds.
debug_flag=()
[[ "$debuggable" == true ]] && debug_flag=(--debug-mode)
"$aapt" package -f ${debug_flag[@]+"${debug_flag[@]}"} \
    -M "$here/AndroidManifest.xml" -S "$here/res" -I "$framework" \
    -F "$work/unsigned.apk"

# Code: classes.dex from the Java source (SDK) or from the Dalvik assembly (Debian).
mkdir -p "$work/dex"
if [[ "$toolchain" == sdk ]]; then
    mkdir -p "$work/classes"
    javac --release 8 -Xlint:-options -classpath "$framework" -d "$work/classes" \
        "$here/src/dev/phonelogs/crashtest/MainActivity.java"
    mapfile -t class_files < <(find "$work/classes" -name '*.class')
    "$d8" --min-api 21 --lib "$framework" --output "$work/dex" "${class_files[@]}"
else
    smali assemble --api 21 -o "$work/dex/classes.dex" "$here/smali"
fi
# aapt stores the path as given, so it has to run from the folder that holds classes.dex.
(cd "$work/dex" && "$aapt" add -f "$work/unsigned.apk" classes.dex >/dev/null)

# Align before signing: signing (v2 and later) covers the aligned bytes.
"$zipalign" -f -p 4 "$work/unsigned.apk" "$work/aligned.apk"

if [[ ! -f "$keystore" ]]; then
    step "creating the throwaway signing key $keystore"
    keytool -genkeypair -noprompt -keystore "$keystore" -storepass android -keypass android \
        -alias androiddebugkey -keyalg RSA -keysize 2048 -validity 10000 \
        -dname "CN=Crash Test Debug,O=phonelogs,C=US" >/dev/null 2>&1
fi
"$apksigner" sign --ks "$keystore" --ks-pass pass:android --key-pass pass:android \
    --ks-key-alias androiddebugkey --out "$out" "$work/aligned.apk"
rm -f "$out.idsig"

step "wrote $out"
