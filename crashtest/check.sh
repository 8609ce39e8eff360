#!/usr/bin/env bash
# Builds Crash Test twice (debuggable and release) and checks what phonelogs relies on:
# the package, the launcher activity, android:debuggable in the debug build only, a valid
# signature, and that the Java and smali sources look up the same resources.
#
#   crashtest/check.sh [out-dir]
#
# The APKs stay in out-dir (a temporary folder, removed afterwards, when none is given).
# Exits non-zero on any mismatch and closes with a "crashtest: N passed, N failed" line.
# Needs on Debian 12 (CI installs them):
#   apt-get install -y --no-install-recommends aapt zipalign apksigner android-framework-res \
#     libsmali-java default-jre-headless
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
package=dev.phonelogs.crashtest
activity=dev.phonelogs.crashtest.MainActivity

if [[ $# -ge 1 ]]; then
    out_dir=$1
    mkdir -p "$out_dir"
else
    out_dir=$(mktemp -d)
    trap 'rm -rf "$out_dir"' EXIT
fi

passed=0
failed=0
pass() {
    passed=$((passed + 1))
    echo "ok   $*"
}
fail() {
    failed=$((failed + 1))
    echo "FAIL $*"
}
# check NAME COMMAND...: one named check, passed when the command succeeds.
check() {
    local name=$1
    shift
    if "$@"; then pass "$name"; else fail "$name"; fi
}

# The verifying tools: the SDK's when build.sh would use the SDK, else those on PATH.
sdk=${ANDROID_HOME:-${ANDROID_SDK_ROOT:-}}
aapt=aapt
apksigner=apksigner
if ! command -v aapt >/dev/null 2>&1 && [[ -n "$sdk" && -d "$sdk/build-tools" ]]; then
    bt="$sdk/build-tools/$(find "$sdk/build-tools" -mindepth 1 -maxdepth 1 -printf '%f\n' | sort -V | tail -n 1)"
    aapt="$bt/aapt"
    apksigner="$bt/apksigner"
fi

build() {
    "$here/build.sh" "$1" "$2" 2>"$2.log" || {
        cat "$2.log" >&2
        return 1
    }
}

has_line() { grep -qxF -- "$2" <<<"$1"; }
lacks_pattern() { ! grep -q -- "$2" <<<"$1"; }
has_pattern() { grep -q -- "$2" <<<"$1"; }

for variant in debug release; do
    apk="$out_dir/crashtest-$variant.apk"
    debuggable=false
    [[ $variant == debug ]] && debuggable=true
    if ! build "$debuggable" "$apk"; then
        fail "$variant: build.sh $debuggable"
        continue
    fi
    pass "$variant: build.sh $debuggable"

    badging=$("$aapt" dump badging "$apk" 2>&1 || true)
    manifest=$("$aapt" dump xmltree "$apk" AndroidManifest.xml 2>&1 || true)
    check "$variant: package is $package" has_pattern "$badging" "^package: name='$package' "
    check "$variant: launcher activity is $activity" \
        has_pattern "$badging" "^launchable-activity: name='$activity' "
    # aapt writes a true boolean as (type 0x12)0xffffffff.
    debuggable_attr='A: android:debuggable(0x0101000f)=(type 0x12)0xffffffff'
    if [[ $variant == debug ]]; then
        check "$variant: badging says application-debuggable" has_line "$badging" "application-debuggable"
        check "$variant: manifest has android:debuggable=true" has_pattern "$manifest" "$debuggable_attr"
    else
        check "$variant: badging has no application-debuggable" lacks_pattern "$badging" "application-debuggable"
        check "$variant: manifest has no android:debuggable" lacks_pattern "$manifest" "android:debuggable"
    fi
    check "$variant: apksigner verify" "$apksigner" verify "$apk"
    if command -v dexdump >/dev/null 2>&1; then
        dex=$(dexdump "$apk" 2>&1 || true)
        for method in onCreate crash hang; do
            check "$variant: classes.dex has MainActivity.$method" \
                has_pattern "$dex" "name          : '$method'"
        done
    fi
done

# One source of truth: both code files look up the same resources by name, every one of them
# exists, and the layout's onClick handlers exist in both.
# Comment lines are left out: only the code's string literals count.
names_in() { grep -vE '^\s*(#|//|/?\*)' "$1" | grep -oE '"[a-z_]+"' | tr -d '"' | sort -u; }
java_names=$(names_in "$here/src/dev/phonelogs/crashtest/MainActivity.java")
smali_names=$(names_in "$here/smali/dev/phonelogs/crashtest/MainActivity.smali")
check "sources: Java and smali look up the same names" [ "$java_names" = "$smali_names" ]
for name in log_tag start_line hang_line crash_message; do
    check "sources: string $name is defined and used" \
        bash -c 'grep -q "name=\"$1\"" "$2" && grep -qw "$1" <<<"$3"' _ "$name" "$here/res/values/strings.xml" "$java_names"
done
for handler in crash hang; do
    check "sources: onClick=\"$handler\" is in the layout and both code files" bash -c \
        'grep -q "android:onClick=\"$1\"" "$2" && grep -q "public void $1(View" "$3" && grep -q "^.method public $1(Landroid/view/View;)V" "$4"' \
        _ "$handler" "$here/res/layout/main.xml" "$here/src/dev/phonelogs/crashtest/MainActivity.java" \
        "$here/smali/dev/phonelogs/crashtest/MainActivity.smali"
done
check "sources: the crash message is the spec's" \
    grep -qF '<string name="crash_message">Crash button tapped</string>' "$here/res/values/strings.xml"

echo "crashtest: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
