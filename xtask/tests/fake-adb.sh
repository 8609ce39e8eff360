#!/usr/bin/env bash
# A stand-in for the adb program, for xtask's emulator-test tests: it plays one emulator running
# Crash Test well enough for the run's orchestration (install, launch, screen dumps, taps, the
# drop box, the crash and ANR dialogs) and records every call in $FAKE_ADB_STATE/calls.
# Screen dumps are the fixtures in xtask/testdata ($FAKE_ADB_TESTDATA).
set -u
state=$FAKE_ADB_STATE
echo "$*" >>"$state/calls"
count() { cat "$state/$1" 2>/dev/null || echo 0; }
bump() { echo $(($(count "$1") + 1)) >"$state/$1"; }

serial=""
while [[ $# -gt 0 ]]; do
    case "$1" in
    -P) shift 2 ;;
    -s) serial=$2; shift 2 ;;
    *) break ;;
    esac
done
command=${1:-}
shift || true

case "$command" in
devices)
    printf 'List of devices attached\nemulator-5554\tdevice\n\n'
    ;;
get-state)
    [[ $serial == emulator-5554 ]] || { echo "error: device '$serial' not found" >&2; exit 1; }
    echo device
    ;;
uninstall)
    echo Success
    ;;
install)
    if [[ -n ${FAKE_ADB_INSTALL_FAILS:-} ]]; then
        echo "adb: failed to install $2: Failure [INSTALL_FAILED_INSUFFICIENT_STORAGE]" >&2
        exit 1
    fi
    printf 'Performing Streamed Install\nSuccess\n'
    ;;
shell)
    line="$*"
    case "$line" in
    "date +%s") echo 1790000000 ;;
    "am force-stop dev.phonelogs.crashtest" | "am clear-debug-app" | "rm -f "*) ;;
    "am start -W -n dev.phonelogs.crashtest/.MainActivity")
        printf 'Starting: Intent { cmp=dev.phonelogs.crashtest/.MainActivity }\nStatus: ok\nLaunchState: COLD\nActivity: dev.phonelogs.crashtest/.MainActivity\nTotalTime: 412\nWaitTime: 415\nComplete\n'
        ;;
    "uiautomator dump "*) echo "UI hierchary dumped to: ${line#uiautomator dump }" ;;
    "cat /data/local/tmp/phonelogs-ui.xml")
        if [[ $(count dialog) -gt 0 ]]; then
            cat "$FAKE_ADB_TESTDATA/crash-dialog.xml"
        else
            cat "$FAKE_ADB_TESTDATA/crashtest-screen.xml"
        fi
        ;;
    "input tap 540 516") bump crashes; echo 1 >"$state/dialog" ;;
    "input tap 540 705")
        bump hang_taps
        if [[ $(($(count hang_taps) % 2)) -eq 0 ]]; then bump anrs; echo 1 >"$state/dialog"; fi
        ;;
    "input tap 540 1093") echo 0 >"$state/dialog" ;;
    "dumpsys dropbox --print data_app_crash")
        for _ in $(seq "$(count crashes)"); do printf 'Process: dev.phonelogs.crashtest\nPID: 4242\n'; done
        ;;
    "dumpsys dropbox --print data_app_anr")
        for _ in $(seq "$(count anrs)"); do printf 'Process: dev.phonelogs.crashtest\nPID: 4243\n'; done
        ;;
    *) echo "/system/bin/sh: $line: inaccessible or not found" >&2; exit 127 ;;
    esac
    ;;
*)
    echo "fake adb: unknown command $command" >&2
    exit 1
    ;;
esac
