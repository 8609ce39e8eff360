// Crash Test's only activity, built by build.sh with the Android SDK (javac and d8).
// MainActivity.smali is the same class in Dalvik assembly, for machines without the SDK; keep the
// two in step. Every text the app logs or throws comes from res/values/strings.xml by name, so the
// behaviour that the emulator test checks has one source of truth.
package dev.phonelogs.crashtest;

import android.app.Activity;
import android.os.Bundle;
import android.os.SystemClock;
import android.util.Log;
import android.view.View;

public class MainActivity extends Activity {
    @Override
    protected void onCreate(Bundle savedInstanceState) {
        super.onCreate(savedInstanceState);
        setContentView(getResources().getIdentifier("main", "layout", getPackageName()));
        Log.i(text("log_tag"), text("start_line"));
    }

    /** The Crash button: an uncaught exception on the main thread, a Java crash. */
    public void crash(View button) {
        throw new IllegalStateException(text("crash_message"));
    }

    /** The Hang button: the main thread never returns, so Android reports an ANR. */
    public void hang(View button) {
        Log.i(text("log_tag"), text("hang_line"));
        while (true) {
            SystemClock.sleep(60_000L);
        }
    }

    private String text(String name) {
        return getString(getResources().getIdentifier(name, "string", getPackageName()));
    }
}
